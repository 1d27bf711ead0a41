"""The mptcp-dualband ratio sweep: ratio summaries, the throughput- and
energy-optimal ratios by exhaustive search, the paper's Figure 9 guideline
against that search, the wake-up floor's sensitivity, and bootstrap
intervals over the sweep's repetitions (mobitrace.stats.resampling)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mobitrace.energy.power_models import RadioPowerModel
from mobitrace.stats import resampling as rs
from mobitrace.stats.intervals import PERCENTILE_MIN_N
from mobitrace.stats.resampling import SEED
from mobitrace.studies.mptcp_dualband import energy as energy_per_bit
from mobitrace.studies.mptcp_dualband.schema import DIRECTIONS


def floor_sensitivity(summary: pd.DataFrame, radio: dict[str, dict[str, RadioPowerModel]],
                      floors, satisfied_frac: float = 0.95) -> pd.DataFrame:
    """Energy-optimal ratio per direction x demand (over the ratios meeting
    the demand; all ratios when backlogged) when the radio part of nJ/bit
    uses a wake-up floor f (:func:`radio_power_floor_mw`) and the CPU part is
    kept as measured and modeled."""
    rows = []
    for f in floors:
        p = energy_per_bit.radio_power_floor_mw
        for (direction, demand), g in summary.groupby(["direction", "demand"], sort=True):
            ok = g[g["tput_mbps"] >= satisfied_frac * demand] if demand > 0 else g
            if ok.empty:
                continue
            radio_mw = p(radio[direction], ok["tput_a_mbps"], ok["tput_b_mbps"], direction, f)
            nj = radio_mw / ok["tput_mbps"].to_numpy() + ok["cpu_nj_per_bit"].to_numpy()
            i = int(np.argmin(nj))
            rows.append({"floor_frac": f, "direction": direction, "demand": demand,
                         "energy_opt_ratio": float(ok["ratio_a_pct"].iloc[i]), "nj_per_bit": float(nj[i])})
    return pd.DataFrame(rows)


SUMMARY_OF = ["tput_eq_mbps", "tput_a_eq_mbps", "tput_b_eq_mbps", "nj_per_bit", "radio_nj_per_bit", "cpu_nj_per_bit",
              "phone_cpu_s"]


def ratio_summary(energy: pd.DataFrame) -> pd.DataFrame:
    """Mean and SD over repetitions per direction x demand x ratio (the
    striped runs of the ratio sweep)."""
    used = ["direction", "demand_mbps", "ratio_a_pct", *SUMMARY_OF]  # not the runs' other columns: no copy of them
    s = energy.loc[(energy["transport"] == "striped") & (energy["part"] == "sweep"), used]
    s["demand"] = s["demand_mbps"].fillna(0.0)  # 0 = backlogged (groupby drops NaN)
    g = s.groupby(["direction", "demand", "ratio_a_pct"])
    # One mean and one SD over the columns (named aggregations cost one pass each).
    mean, sd = g[SUMMARY_OF].mean(), g[["tput_eq_mbps", "nj_per_bit"]].std()
    return pd.DataFrame({"n": g.size(), "tput_mbps": mean["tput_eq_mbps"], "tput_sd": sd["tput_eq_mbps"],
                         "tput_a_mbps": mean["tput_a_eq_mbps"], "tput_b_mbps": mean["tput_b_eq_mbps"],
                         "nj_per_bit": mean["nj_per_bit"], "nj_sd": sd["nj_per_bit"],
                         "radio_nj_per_bit": mean["radio_nj_per_bit"], "cpu_nj_per_bit": mean["cpu_nj_per_bit"],
                         "phone_cpu_s": mean["phone_cpu_s"]}).reset_index()


def optima(summary: pd.DataFrame, satisfied_frac: float = 0.95) -> pd.DataFrame:
    """Per direction x demand: the throughput-optimal ratio (highest mean
    throughput), the energy-optimal ratio over all ratios, over the ratios
    that use both paths (0 < a < 100, the paper's comparison for backlogged
    traffic) and, for a demand, over the ratios that deliver at least
    `satisfied_frac` of it. Ties go to the lowest ratio, NaN means are
    skipped. On plain arrays: the robustness analysis calls it for every set
    of coefficients, and pandas' per-cell selection cost most of its time."""
    s = summary.sort_values(["direction", "demand", "ratio_a_pct"])
    direction, demand = s["direction"].to_numpy(), s["demand"].to_numpy(dtype=float)
    ratio, tput, nj = (s[c].to_numpy(dtype=float) for c in ("ratio_a_pct", "tput_mbps", "nj_per_bit"))
    starts = np.flatnonzero(np.r_[True, (direction[1:] != direction[:-1]) | (demand[1:] != demand[:-1])])
    rows = []
    for a, b in zip(starts, [*starts[1:], len(s)]):
        cell = slice(a, b)
        d, dem = direction[a], demand[a]
        both = (ratio[cell] > 0) & (ratio[cell] < 100)
        ok = tput[cell] >= satisfied_frac * dem if dem > 0 else np.ones(b - a, dtype=bool)
        found = {"tput_opt": a + np.nanargmax(tput[cell]), "energy_opt": a + np.nanargmin(nj[cell])}
        for name, allowed in (("energy_opt_both", both), ("energy_opt_satisfying", ok)):
            found[name] = a + np.flatnonzero(allowed)[np.nanargmin(nj[cell][allowed])] if allowed.any() else None
        row = {"direction": d, "demand": dem}
        for name, fields in (("tput_opt", ("ratio", "mbps", "nj")), ("energy_opt", ("ratio", "nj", "mbps")),
                             ("energy_opt_both", ("ratio", "nj", "mbps")),
                             ("energy_opt_satisfying", ("ratio", "nj", "mbps"))):
            i = found[name]
            for field in fields:
                row[f"{name}_{field}"] = np.nan if i is None else {"ratio": ratio, "mbps": tput, "nj": nj}[field][i]
        rows.append(row)
    return pd.DataFrame(rows)


def guideline_ratio(demand_mbps: float | None, r_ad: float, r_ac: float, direction: str) -> float:
    """The % of packets to the 802.11ad path that the paper's guidelines pick
    (Fig. 9, as its rules are stated in §4.2; the flow chart's image is not in
    the text), for an application demand (None = backlogged) and each
    interface's maximum rate:

    * backlogged, or a demand above R_ad + R_ac: the throughput-optimal ratio
      R_ad : R_ac (§3.2: "given by the ratio of the individual throughputs");
    * downlink (802.11ac cheaper to receive): demand > R_ad -> fill 802.11ac,
      the rest on 802.11ad, ratio (D - R_ac) : R_ac; R_ac < D <= R_ad -> 100:0;
      D <= R_ac -> 0:100;
    * uplink (802.11ad cheaper to transmit): demand > R_ad -> fill 802.11ad,
      ratio R_ad : (D - R_ad); else 100:0.

    E.g. downlink, 1750 Mbps, 1600/600 -> 1150/1750 = 65.7 % (the paper's
    66:34); uplink, 1750, 1450/600 -> 1450/1750 = 82.9 % (83:17).
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, found {direction!r}")
    if r_ad <= 0 or r_ac <= 0:
        raise ValueError("interface rates must be positive")
    if demand_mbps is None or (isinstance(demand_mbps, float) and math.isnan(demand_mbps)) \
            or demand_mbps >= r_ad + r_ac:
        return 100.0 * r_ad / (r_ad + r_ac)
    d = float(demand_mbps)
    if d <= 0:
        raise ValueError("demand must be positive (None = backlogged)")
    if direction == "downlink":
        if d > r_ad:
            return 100.0 * (d - r_ac) / d
        return 100.0 if d > r_ac else 0.0
    if d > r_ad:
        return 100.0 * r_ad / d
    return 100.0


def nearest_ratio(ratio: float, grid) -> float:
    """The grid ratio closest to `ratio` (ties to the larger)."""
    grid = np.asarray(sorted(grid), dtype=float)
    i = np.argmin(np.abs(grid - ratio) - 1e-9 * grid)
    return float(grid[i])


def guideline_vs_search(summary: pd.DataFrame, opt: pd.DataFrame, rates: dict[str, dict[str, float]],
                        satisfied_frac: float = 0.95) -> pd.DataFrame:
    """Per direction x demand: the guideline's ratio (rounded to the measured
    grid), its throughput and nJ/bit, and how far it lands from the
    exhaustive search's best (energy over the ratios meeting the demand;
    throughput for backlogged traffic)."""
    rows = []
    # Plain arrays: a boolean mask over the summary's frame per row would cost more than the rest of the loop.
    direction, demand = summary["direction"].to_numpy(), summary["demand"].to_numpy()
    ratio = summary["ratio_a_pct"].to_numpy()
    tput, nj = summary["tput_mbps"].to_numpy(), summary["nj_per_bit"].to_numpy()
    for r in opt.itertuples():
        cell = np.flatnonzero((direction == r.direction) & (demand == r.demand))
        rate = rates[r.direction]
        want = guideline_ratio(None if r.demand == 0 else r.demand, rate["a"], rate["b"], r.direction)
        on_grid = nearest_ratio(want, ratio[cell])
        i = cell[ratio[cell] == on_grid][0]
        row = {"tput_mbps": tput[i], "nj_per_bit": nj[i]}
        best_nj = r.energy_opt_satisfying_nj
        rows.append({
            "direction": r.direction, "demand": r.demand, "guideline_ratio": want, "grid_ratio": on_grid,
            "guideline_mbps": row["tput_mbps"], "guideline_nj": row["nj_per_bit"],
            "meets_demand": bool(r.demand == 0 or row["tput_mbps"] >= satisfied_frac * r.demand),
            "search_ratio": r.energy_opt_satisfying_ratio, "search_nj": best_nj,
            "search_mbps": r.energy_opt_satisfying_mbps,
            "excess_energy_pct": 100.0 * (row["nj_per_bit"] / best_nj - 1.0),
            "tput_shortfall_pct": 100.0 * (1.0 - row["tput_mbps"] / r.tput_opt_mbps),
        })
    return pd.DataFrame(rows)


def ecdf(values) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF: sorted values and i/n for i = 1..n."""
    x = np.sort(np.asarray(values, dtype=float))
    return x, np.arange(1, len(x) + 1) / len(x)


CELL = ["direction", "demand", "ratio_a_pct"]


def sweep_runs(energy: pd.DataFrame) -> pd.DataFrame:
    """The striped runs of the ratio sweep, one row per run, with `demand`
    (0 = backlogged), as ratio_summary groups them."""
    s = energy[(energy["transport"] == "striped") & (energy["part"] == "sweep")].copy()
    s["demand"] = s["demand_mbps"].fillna(0.0)
    return s.reset_index(drop=True)


def boot(runs: pd.DataFrame, n_boot: int = rs.N_BOOT, seed: int = SEED) -> dict[str, pd.DataFrame]:
    """Bootstrap distributions of the mean throughput and nJ/bit per
    direction x demand x ratio (paired: the same resampled runs); NaN for a
    ratio of fewer than PERCENTILE_MIN_N runs, as an optimum's only
    interval is the percentile one (mobitrace.stats.intervals)."""
    return rs.boot_means(runs, CELL, ["tput_eq_mbps", "nj_per_bit"], n_boot, seed, min_n=PERCENTILE_MIN_N)


def optima_ci(draws: dict[str, pd.DataFrame], satisfied_frac: float, alpha: float) -> pd.DataFrame:
    """Per direction x demand, percentile intervals (on the ratio grid) of
    the throughput-optimal ratio, the energy-optimal ratio among two-path
    ratios and the energy-optimal ratio among the ratios that meet
    `satisfied_frac` of the demand (all ratios when backlogged), with the
    share of draws that agree with the point estimate's choice left to the
    caller. Same definitions as optima."""
    tput, nj = draws["tput_eq_mbps"], draws["nj_per_bit"]
    rows = []
    for (direction, demand), t in tput.groupby(level=["direction", "demand"], sort=True):
        e = nj.loc[t.index]
        ratio = t.index.get_level_values("ratio_a_pct").to_numpy(dtype=float)
        both = pd.DataFrame(np.repeat(((ratio > 0) & (ratio < 100))[:, None], t.shape[1], axis=1), index=t.index)
        ok = t >= satisfied_frac * demand if demand > 0 else pd.DataFrame(True, index=t.index, columns=t.columns)
        row = {"direction": direction, "demand": demand}
        few = t.isna().all(axis=1).any()  # a ratio without a distribution: no interval for the cell's optima
        for name, d, maximize, allowed in (("tput_opt_ratio", t, True, None),
                                           ("energy_opt_both_ratio", e, False, both),
                                           ("energy_opt_satisfying_ratio", e, False, ok)):
            lo, hi = ((np.nan, np.nan) if few else
                      rs.percentile_ci(rs.arg_best(d, "ratio_a_pct", maximize, allowed), alpha, discrete=True))
            row[f"{name}_low"], row[f"{name}_high"] = lo, hi
        rows.append(row)
    return pd.DataFrame(rows)


def change_ci(runs: pd.DataFrame, column: str, direction: str, demand: float,
              ratio: float, against: float, alpha: float) -> tuple[float, float]:
    """Interval of 100 (mean at `ratio` / mean at `against` - 1) for
    `column` (tput_eq_mbps or nj_per_bit) in one direction and demand, over
    the sweep's runs (`sweep_runs`; `rs.ratio_of_means_ci`)."""
    cell = runs[(runs["direction"] == direction) & (runs["demand"] == demand)]
    lo, hi = rs.ratio_of_means_ci(cell.loc[cell["ratio_a_pct"] == ratio, column],
                                  cell.loc[cell["ratio_a_pct"] == against, column], alpha)
    return 100 * (lo - 1), 100 * (hi - 1)
