"""The priority-boost chapter's numbers: what the Welch tests of the
published tables and the measured re-run give, as the values the prose
states, with the words that follow from the tests (slower, faster, not
distinguishable). mobitrace.studies.priority_boost.chapter shows them and
turns them into claims."""

from __future__ import annotations

import json
import math

import pandas as pd

from mobitrace.core import claims as cl
from mobitrace.core.numbers import MISSING
from mobitrace.core.published import mean_sd_table
from mobitrace.studies.priority_boost.analysis import POLICY_NAMES, audio_change, missing_cells

TABLES = ("cpu", "net", "audio")


def policy_rows(audit: pd.DataFrame, policy: str) -> pd.DataFrame:
    return audit[audit["policy"] == policy]


def at_procs(frame: pd.DataFrame, column: str, procs: int) -> float:
    return frame.loc[frame["cpu_procs"] == procs, column].iloc[0]


def tested_word(diff: float, significant: bool, up: str, down: str, neither: str) -> str:
    """A direction word from a test, not from the point estimate: `up` or
    `down` by the sign of `diff` only when the test rejects no difference
    (`significant`), else `neither`; an en dash when there is no difference."""
    if diff is None or math.isnan(float(diff)):
        return MISSING
    if not significant:
        return neither
    return up if float(diff) > 0 else down


def mean_change_interval(diff: pd.Series, se: pd.Series, df: pd.Series, alpha: float) -> tuple[float, float, float]:
    """The mean of per-column mean differences (independent columns) and its
    100(1 - alpha)% t interval: standard error sqrt(sum se_i^2) / k, degrees of
    freedom the smallest of the columns' Welch df (conservative)."""
    from scipy import stats as st
    k = len(diff)
    mean, se_mean = float(diff.mean()), float((se ** 2).sum() ** 0.5 / k)
    half = float(st.t.ppf(1 - alpha / 2, float(df.min()))) * se_mean
    return mean, mean - half, mean + half


def _welch_se(sd_a, sd_b, n) -> pd.Series:
    return ((sd_a ** 2 + sd_b ** 2) / n) ** 0.5


FASTER = {"up": "slower than", "down": "faster than", "neither": "not distinguishable from"}


def audit_numbers(audit_cpu: pd.DataFrame, alpha: float) -> dict:
    """What the audit of the CPU-load table finds: published p-values outside
    their attainable range (at table precision and as printed), significance
    without and with Holm (recomputed and published p), and INCR's p, g and
    gain with 0 and 30 competing processes."""
    in_table = audit_cpu["in_range_table"].astype(bool)
    flagged = audit_cpu[~in_table]
    holm_rec = audit_cpu[audit_cpu["reject_holm"]]
    incr, decr = policy_rows(audit_cpu, "incr"), policy_rows(audit_cpu, "decr")
    faster0, faster30 = -at_procs(incr, "diff", 0), -at_procs(incr, "diff", 30)
    # The change of INCR's gain from 0 to 30 processes, with its interval (two independent Welch differences).
    ends = incr[incr["cpu_procs"].isin([0, 30])]
    _, trend_lo, trend_hi = mean_change_interval(pd.Series([faster30 - faster0]),
                                                 pd.Series([float((_welch_se(ends["sd"], ends["sd_base"], ends["n"])
                                                                   ** 2).sum() ** 0.5)]), ends["df"], alpha)
    word = {c: tested_word(-at_procs(incr, "diff", c), bool(at_procs(incr, "reject_unadjusted", c)),
                           "faster than", "slower than", FASTER["neither"]) for c in (0, 30)}
    return {
        "n_published_p": int(audit_cpu["p_published"].notna().sum()),
        "n_cpu_tests": len(audit_cpu),
        "n_flag_table": int((~in_table).sum()),
        "n_flag_printed": int((~audit_cpu["in_range_printed"].astype(bool)).sum()),
        "flag_p_lo": float(flagged["p_lo_table"].min()) if len(flagged) else float("nan"),
        "flag_p_hi": float(flagged["p_hi_printed"].max()) if len(flagged) else float("nan"),
        "flag_procs": ", ".join(str(int(x)) for x in sorted(flagged["cpu_procs"])),
        "n_unadj_sig": int(audit_cpu["reject_unadjusted"].sum()),
        "n_holm_sig": int(audit_cpu["reject_holm"].sum()),
        "holm_sig_list": ", ".join(f"{POLICY_NAMES[r.policy]} at {r.cpu_procs} processes"
                                   for r in holm_rec.itertuples()),
        "n_holm_pub_sig": int(audit_cpu["reject_published_holm"].sum()),
        "incr_p_max": float(incr["p"].max()),
        "incr_p0": float(at_procs(incr, "p", 0)),
        "incr_g0": float(at_procs(incr, "g", 0)),
        "incr_g0_lo": float(at_procs(incr, "g_lo", 0)),
        "incr_g0_hi": float(at_procs(incr, "g_hi", 0)),
        "incr_faster0": float(faster0),
        "incr_faster30": float(faster30),
        "incr_gain_trend": cl.interval_direction(trend_lo, trend_hi, up="grows", down="shrinks",
                                                 neither="changes indistinguishably"),
        "incr_faster0_word": word[0],
        "incr_faster30_word": word[30],
        "incr_diff0": float(-faster0),
        "incr_diff30": float(-faster30),
        "incr_p30": float(at_procs(incr, "p", 30)),
        "incr_faster0_abs": abs(float(faster0)),
        "incr_faster30_abs": abs(float(faster30)),
        "decr_p_min": float(decr["p"].min()),
    }


def decr_minus_incr(stats: pd.DataFrame) -> pd.Series:
    """DECR's mean minus INCR's per column of the network-load table (s)."""
    wide = mean_sd_table(stats, "transfer_net").pivot(index="column", columns="policy", values="mean")
    return wide["decr"] - wide["incr"]


def decr_minus_original(stats: pd.DataFrame) -> pd.Series:
    """DECR's mean minus the original's per column of the network-load table
    (s): the paper's "DECR is marginally better" is against the original,
    the baseline of all its comparisons."""
    wide = mean_sd_table(stats, "transfer_net").pivot(index="column", columns="policy", values="mean")
    return wide["decr"] - wide["original"]


def net_numbers(audit_net: pd.DataFrame, stats: pd.DataFrame, alpha: float) -> dict:
    """What the audit of the network-load table finds: Holm-significant
    comparisons, INCR's largest gain in % of the original, and how DECR's
    means compare with INCR's and the original's: the mean over columns with
    its 100(1 - alpha)% interval, whose position against zero gives the words."""
    incr, decr = policy_rows(audit_net, "incr"), policy_rows(audit_net, "decr")
    d, do = decr_minus_incr(stats), decr_minus_original(stats)
    wide = mean_sd_table(stats, "transfer_net").pivot(index="column", columns="policy", values=["sd", "n"])
    se_di = _welch_se(wide["sd"]["decr"], wide["sd"]["incr"], wide["n"]["decr"])
    se_do = _welch_se(wide["sd"]["decr"], wide["sd"]["original"], wide["n"]["decr"])
    _, di_lo, di_hi = mean_change_interval(d, se_di, decr["df"], alpha)
    _, do_lo, do_hi = mean_change_interval(do, se_do, decr["df"], alpha)
    words = {"up": FASTER["up"], "down": FASTER["down"], "neither": FASTER["neither"]}
    return {
        "net_n_holm_sig": int(audit_net["reject_holm"].sum()),
        "net_n_incr_holm_sig": int(incr["reject_holm"].sum()),
        "net_n_decr_holm_sig": int(decr["reject_holm"].sum()),
        "net_p_min": float(audit_net["p"].min()),
        "net_incr_rel_max": float((-incr["diff"] / incr["mean_base"]).max() * 100),
        "net_decr_better_cols": int((d < 0).sum()),
        "net_cols": int(len(d)),
        "net_decr_minus_incr_abs": abs(float(d.mean())),
        "net_decr_minus_incr": float(d.mean()), "net_decr_minus_incr_lo": di_lo, "net_decr_minus_incr_hi": di_hi,
        "net_decr_vs_incr": cl.interval_direction(di_lo, di_hi, **words),
        "net_decr_lower_cols": int((do < 0).sum()),
        "net_decr_minus_orig_abs": abs(float(do.mean())),
        "net_decr_minus_orig": float(do.mean()), "net_decr_minus_orig_lo": do_lo, "net_decr_minus_orig_hi": do_hi,
        "net_decr_vs_orig": cl.interval_direction(do_lo, do_hi, **words),
        "net_decr_better_verdict": cl.interval_direction(do_lo, do_hi, up="does not hold", down="holds",
                                                         neither="is not settled by the table"),
        "net_incr_faster_cols": int((incr["diff"] < 0).sum()),
        "net_incr_cols": len(incr),
    }


def cpu_max_gain_pct(stats: pd.DataFrame) -> float:
    """The largest gain of the better boosted policy over the original in the
    CPU-load table, 100 (original - min(INCR, DECR)) / original, over columns."""
    wide = mean_sd_table(stats, "transfer_cpu").pivot(index="cpu_procs", columns="policy", values="mean")
    return float(((wide["original"] - wide[["incr", "decr"]].min(axis=1)) / wide["original"]).max() * 100)


def abstract_mb(values) -> float:
    """What the abstract's connection can carry: rate (Mbps) x window (s) / 8, in MB."""
    return values("abstract_rate") * values("abstract_window") / 8


def conclusion_numbers(stats: pd.DataFrame, values) -> dict:
    """The numbers that check the paper's prose against its tables: the audio
    changes, the abstract's and the audio sender's arithmetic, the largest
    CPU-load gain. `values` is a `Values` of the study's published numbers."""
    inc = audio_change(stats)[["incr", "decr"]]
    procs = mean_sd_table(stats, "transfer_cpu")["cpu_procs"]
    return {
        "audio_inc_min": float(inc.min().min()),
        "audio_inc_max": float(inc.max().max()),
        "audio_incr_min": float(inc["incr"].min()),
        "audio_incr_max": float(inc["incr"].max()),
        "audio_n_improved": int((inc < 0).sum().sum()),
        "audio_n_boosted": int(inc.size),
        "audio_best_drop": float(-inc.min().min()),
        "abstract_mb": abstract_mb(values),
        "abstract_window_s": values("abstract_window"),
        "abstract_rate_mbps": values("abstract_rate"),
        "paper_file_mb": values("file_size"),
        "abstract_mb_paper": values("abstract_bytes"),
        "abstract_rtts": values("abstract_window") * 1000 / values("abstract_rtt"),
        "audio_kbps": values("audio_bytes") * 8 / values("audio_period"),
        "cpu_max_gain_pct": cpu_max_gain_pct(stats),
        "cpu_max_procs": int(procs.max()),
    }


def device_numbers(runs: pd.DataFrame, sessions: pd.DataFrame, comp: pd.DataFrame, paired: pd.DataFrame,
                   stats: pd.DataFrame) -> dict:
    """What one device's re-run finds, per table and policy: comparisons,
    Holm-significant ones (lower, higher), p and gain extremes, INCR/DECR at 0
    and at the most competing processes, paired tests; then the capture's
    file size, audio duration, unloaded transfer time, link-up minimum and the
    paper's cells it has no runs for."""
    out = {"runs_ok": int((runs["status"] == "ok").sum()), "timeouts": int((runs["status"] == "timeout").sum())}
    for table in TABLES:
        c = comp[comp["table"] == table] if not comp.empty else comp
        out[f"{table}_comparisons"] = int(c["p"].notna().sum()) if len(c) else 0
        out[f"{table}_holm_sig"] = int(c["reject_holm"].sum()) if len(c) else 0
        for pol in ("incr", "decr"):
            cp = c[c["policy"] == pol] if len(c) else c
            out[f"{table}_{pol}_p_max"] = float(cp["p"].max()) if len(cp) else float("nan")
            out[f"{table}_{pol}_p_min"] = float(cp["p"].min()) if len(cp) else float("nan")
            out[f"{table}_{pol}_gain_max_pct"] = float((-cp["rel_diff"]).max() * 100) if len(cp) else float("nan")
            out[f"{table}_{pol}_holm_sig"] = int(cp["reject_holm"].sum()) if len(cp) else 0
            out[f"{table}_{pol}_holm_lower"] = int((cp["reject_holm"] & (cp["diff"] < 0)).sum()) if len(cp) else 0
            out[f"{table}_{pol}_holm_higher"] = int((cp["reject_holm"] & (cp["diff"] > 0)).sum()) if len(cp) else 0
            c0 = cp[cp["cpu_procs"] == 0] if len(cp) else cp
            if table == "cpu" and len(c0):
                out[f"cpu_{pol}_p0"] = float(c0["p"].iloc[0])
                out[f"cpu_{pol}_gain0_pct"] = float(-c0["rel_diff"].iloc[0] * 100)
            c30 = cp[cp["cpu_procs"] == cp["cpu_procs"].max()] if len(cp) else cp
            if table == "cpu" and len(c30):
                out[f"cpu_{pol}_gain_top_pct"] = float(-c30["rel_diff"].iloc[0] * 100)
                out[f"cpu_{pol}_top_sig"] = bool(c30["reject_unadjusted"].iloc[0])
                out["cpu_top_procs"] = int(c30["cpu_procs"].iloc[0])
    for table in TABLES:
        c = paired[paired["table"] == table] if len(paired) else paired
        out[f"{table}_paired_holm_sig"] = int(c["reject_holm"].sum()) if len(c) else 0
        out[f"{table}_paired_comparisons"] = int(c["p_wilcoxon"].notna().sum()) if len(c) else 0
        out[f"{table}_paired_faster_sig"] = int((c["reject_holm"] & (c["median_ratio"] < 1)).sum()) if len(c) else 0
    if len(comp):
        cpu_rows = comp[comp["table"] == "cpu"]
        out["cpu_gain_max_pct"] = float((-cpu_rows["rel_diff"]).max() * 100) if len(cpu_rows) else float("nan")
    conf = json.loads(sessions["configuration"].iloc[0])
    out["file_mb"] = float(sessions["file_bytes"].iloc[0]) / 1e6
    out["audio_s"] = float(conf["audio"]["duration_s"])
    t0 = runs[(runs["table"] == "cpu") & (runs["cpu_procs"] == 0)]["transfer_s"]
    out["t_unloaded_s"] = float(t0.median()) if len(t0) else float("nan")
    out["link_up_min"] = float(runs["link_up_fraction"].min())
    out["missing_cells"] = ", ".join(missing_cells(runs, stats)) or "none"
    out["n_cells"] = len(set(zip(runs["table"], runs["cpu_procs"], runs["cross_pct"])))
    return out


REFERENCE_KEYS = ("cpu_incr_p0", "cpu_incr_gain0_pct", "cpu_incr_gain_top_pct", "cpu_decr_gain_top_pct",
                  "cpu_top_procs", "cpu_gain_max_pct")


def reference_numbers(device: str, m: dict) -> dict:
    """The reference host's numbers (`device_numbers`) under the names the
    prose cites (m_<key>), NaN for the CPU-load keys a capture without those
    cells lacks, and whether INCR/DECR save or cost time at the top load:
    a word only where Welch's test rejects no difference (cpu_<pol>_top_sig)."""
    out = {"ref_device": device, **{f"m_{k}": x for k, x in m.items()}}
    out.update({f"m_{k}": float("nan") for k in REFERENCE_KEYS if k not in m})
    for pol in ("incr", "decr"):
        gain = m.get(f"cpu_{pol}_gain_top_pct", float("nan"))
        out[f"m_cpu_{pol}_top_verb"] = tested_word(gain, m.get(f"cpu_{pol}_top_sig", False), "saves", "costs",
                                                   "changes it, not significantly, by")
        out[f"m_cpu_{pol}_gain_top_abs_pct"] = abs(gain)
    return out
