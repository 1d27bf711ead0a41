"""Intervals of the transfer-tuning chapter: bootstrap over repetitions
(mobitrace.resampling) of the x-fold throughput and the energy ratio of a
knob's level against its level 1, the quantities behind the paper's
"x-fold" and "saves y%" statements.

Kept apart from mobitrace.transfer_tuning (which the ingest stage depends
on) so that changing the chapter's statistics does not re-run the ingest.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import resampling as rs
from .figures import SEED

VALUES = ["throughput_mbps", "energy_per_100mb_j"]


def knob_runs(table: pd.DataFrame, factor: str, fixed: dict) -> pd.DataFrame:
    """The sweep runs along one knob with the others held at `fixed`, one
    row per run, with the knob's value as `level` (the runs
    mobitrace.transfer_tuning.sweep_summary averages)."""
    sel = table[table["kind"] == "sweep"]
    for k, v in fixed.items():
        sel = sel[sel[k] == v]
    return sel.assign(factor=factor, level=sel[factor]).reset_index(drop=True)


def ratio_ci(runs: pd.DataFrame, by: list[str], level: str = "level", baseline: dict | None = None,
             n_boot: int = rs.N_BOOT, seed: int = SEED, ci: float = 0.95) -> pd.DataFrame:
    """Per group of `by` + [`level`]: the throughput ratio to the group's
    baseline (`x_fold`) and the energy ratio (`energy_ratio`, E / E_base,
    below 1 saves energy), each with a percentile bootstrap interval over
    repetitions (`*_low`, `*_high`), and the saving 100 (1 - energy ratio)
    with its interval. The baseline is the row where the columns of
    `baseline` have the given values, or, by default, the lowest `level`.
    Means are resampled per configuration, independently."""
    draws = rs.boot_means(runs, [*by, level] if isinstance(level, str) else [*by, *level], VALUES, n_boot, seed)
    means = runs.groupby([*by, level] if isinstance(level, str) else [*by, *level])[VALUES].mean()
    rows = []
    for key, g in means.groupby(level=list(range(len(by))), sort=True):
        if baseline is None:
            base_key = g.index[0]
        else:
            idx = g.index.to_frame(index=False)
            mask = np.logical_and.reduce([idx[k] == v for k, v in baseline.items()])
            base_key = g.index[np.flatnonzero(mask)[0]]
        for k in g.index:
            t = draws["throughput_mbps"].loc[[k]].to_numpy()[0] / draws["throughput_mbps"].loc[[base_key]].to_numpy()[0]
            e = (draws["energy_per_100mb_j"].loc[[k]].to_numpy()[0]
                 / draws["energy_per_100mb_j"].loc[[base_key]].to_numpy()[0])
            row = dict(zip(means.index.names, k))
            row["x_fold"] = means.loc[k, "throughput_mbps"] / means.loc[base_key, "throughput_mbps"]
            row["x_fold_low"], row["x_fold_high"] = rs.percentile_ci(t, ci)
            row["energy_ratio"] = means.loc[k, "energy_per_100mb_j"] / means.loc[base_key, "energy_per_100mb_j"]
            row["energy_ratio_low"], row["energy_ratio_high"] = rs.percentile_ci(e, ci)
            row["saving_pct"] = 100 * (1 - row["energy_ratio"])
            row["saving_pct_low"], row["saving_pct_high"] = 100 * (1 - row["energy_ratio_high"]), 100 * (1 - row["energy_ratio_low"])
            rows.append(row)
    return pd.DataFrame(rows)
