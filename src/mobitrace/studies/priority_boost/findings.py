"""The numbers the priority-boost chapter's prose cites, its claims table
and its metrics, computed from the audit (`analysis.audit_published`) and the
measured comparisons (`analysis.compare_measured`, `compare_paired`).

The `*_numbers` functions return {glue name: value} in the order the chapter
glues them; every paper number comes from data/published/priority-boost.yaml
(`mobitrace.core.published.Values`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from mobitrace.core import claims as cl
from mobitrace.core.numbers import metric
from mobitrace.core.published import mean_sd_table
from mobitrace.studies.priority_boost.analysis import POLICY_NAMES, audio_change, gain_pct_ci, missing_cells

TABLES = ("cpu", "net", "audio")


def _policy(audit: pd.DataFrame, policy: str) -> pd.DataFrame:
    return audit[audit["policy"] == policy]


def _at_procs(frame: pd.DataFrame, column: str, procs: int) -> float:
    return frame.loc[frame["cpu_procs"] == procs, column].iloc[0]


def audit_numbers(audit_cpu: pd.DataFrame) -> dict:
    """What the audit of the CPU-load table finds: published p-values outside
    their attainable range (at table precision and as printed), significance
    without and with Holm (recomputed and published p), and INCR's p, g and
    gain with 0 and 30 competing processes."""
    in_table = audit_cpu["in_range_table"].astype(bool)
    flagged = audit_cpu[~in_table]
    holm_rec = audit_cpu[audit_cpu["reject_holm"]]
    incr, decr = _policy(audit_cpu, "incr"), _policy(audit_cpu, "decr")
    faster0, faster30 = -_at_procs(incr, "diff", 0), -_at_procs(incr, "diff", 30)
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
        "incr_p0": float(_at_procs(incr, "p", 0)),
        "incr_g0": float(_at_procs(incr, "g", 0)),
        "incr_faster0": float(faster0),
        "incr_faster30": float(faster30),
        "incr_gain_trend": "grows" if faster30 > faster0 else "does not grow",
        "decr_p_min": float(decr["p"].min()),
    }


def decr_minus_incr(stats: pd.DataFrame) -> pd.Series:
    """DECR's mean minus INCR's per column of the network-load table (s)."""
    wide = mean_sd_table(stats, "transfer_net").pivot(index="column", columns="policy", values="mean")
    return wide["decr"] - wide["incr"]


def net_numbers(audit_net: pd.DataFrame, stats: pd.DataFrame) -> dict:
    """What the audit of the network-load table finds: Holm-significant
    comparisons, INCR's largest gain in % of the original, and how DECR's
    means compare with INCR's."""
    incr, decr = _policy(audit_net, "incr"), _policy(audit_net, "decr")
    d = decr_minus_incr(stats)
    return {
        "net_n_holm_sig": int(audit_net["reject_holm"].sum()),
        "net_n_incr_holm_sig": int(incr["reject_holm"].sum()),
        "net_n_decr_holm_sig": int(decr["reject_holm"].sum()),
        "net_p_min": float(audit_net["p"].min()),
        "net_incr_rel_max": float((-incr["diff"] / incr["mean_base"]).max() * 100),
        "net_decr_better_cols": int((d < 0).sum()),
        "net_cols": int(len(d)),
        "net_decr_minus_incr_abs": abs(float(d.mean())),
        "net_decr_vs_incr": "slower" if d.mean() > 0 else "faster",
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
    cells lacks, and whether INCR/DECR save or cost time at the top load."""
    out = {"ref_device": device, **{f"m_{k}": x for k, x in m.items()}}
    out.update({f"m_{k}": float("nan") for k in REFERENCE_KEYS if k not in m})
    for pol in ("incr", "decr"):
        gain = m.get(f"cpu_{pol}_gain_top_pct", float("nan"))
        out[f"m_cpu_{pol}_top_verb"] = "costs" if gain < 0 else "saves"
        out[f"m_cpu_{pol}_gain_top_abs_pct"] = abs(gain)
    return out


def chapter_claims(study: str, audit_cpu: pd.DataFrame, audit_net: pd.DataFrame, stats: pd.DataFrame, values,
                   device_metrics: dict, alpha: float, marginal_pct: float, rel_tol: float) -> cl.Claims:
    """Every claim of the paper the chapter addresses: the published p-values
    against their attainable ranges, the conclusions checked on the recomputed
    tests, the prose's numbers and arithmetic (from `values`), and per measured
    device the conclusions on its runs."""
    claims = cl.Claims(study)
    add = claims.add
    pub = {"provenance": "published", "section": "priority-boost-conclusions"}
    location = str(stats.loc[stats["table"] == "transfer_cpu_p", "location"].iloc[0])
    for r in audit_cpu.itertuples():
        add(f"p_{r.policy}_{r.cpu_procs}proc",
            f"{POLICY_NAMES[r.policy]} vs original at {r.cpu_procs} competing processes: p "
            + (r.p_published_text if r.p_published_relation != "=" else f"= {r.p_published_text}"),
            location=location, relation=r.p_published_relation, paper=r.p_published, artifact=r.p, unit="p",
            basis=f"Welch from the published mean/SD/n; attainable p {r.p_lo_table:.2g} to {r.p_hi_table:.2g}",
            provenance="published", section="priority-boost-audit",
            verdict=cl.REPRODUCED if r.in_range_table else cl.NOT_REPRODUCED,
            tolerance="paper p within the p range of the rounded statistics (table precision)")
    incr, decr = _policy(audit_cpu, "incr"), _policy(audit_cpu, "decr")
    add("incr_significant", "INCR is statistically different from the original (every CPU load)",
        location="§4", relation="<", paper=alpha, artifact=float(incr["p"].max()), unit="p",
        basis="largest recomputed INCR p (no correction)", **pub)
    add("incr_significant_holm", "INCR is statistically different from the original (every CPU load), after Holm",
        location="§4", relation="<", paper=alpha, artifact=float(incr["p_holm"].max()), unit="p",
        basis="largest Holm-adjusted recomputed INCR p", **pub)
    add("decr_not_significant",
        "DECR is not statistically different from the original (read for the misprinted 2nd 'INCR')",
        location="§4", relation=">", paper=alpha, artifact=float(decr["p"].min()), unit="p",
        basis="smallest recomputed DECR p", **pub)
    add("only_heavy_load", "Boosting helps only under heavy load: no significant gain with 0 competing processes",
        location="Abstract; §5", relation=">", paper=alpha, artifact=float(_at_procs(incr, "p", 0)), unit="p",
        basis="recomputed INCR p at 0 processes", **pub)
    procs = values.row("conclusion_cpu_procs")
    add("more_than_30", f"Boosting is marginally useful with more than {procs['value']:g} competing processes",
        location=procs["location"], relation=procs["relation"], paper=procs["value"], artifact=None,
        unit="processes", basis=f"the tables stop at {int(audit_cpu['cpu_procs'].max())} processes", **pub)
    add("cpu_marginal", "Both boosting approaches improve transfer time only marginally (CPU load)",
        location="§4", relation="<", paper=marginal_pct, artifact=cpu_max_gain_pct(stats), unit="%",
        basis="largest (original - policy)/original in the first table", **pub)
    add("net_same", "Under network load all three policies deliver essentially the same performance",
        location="§4", relation="=", paper=0.0, artifact=float(audit_net["reject_holm"].sum()), unit="tests",
        basis=f"Holm-significant policy-vs-original differences in the second table (of {len(audit_net)})",
        tolerance="no Holm-significant difference", **pub)
    add("net_decr_better", "Under network load DECR is marginally better",
        location="§4", relation="<", paper=0.0, artifact=float(decr_minus_incr(stats).mean()), unit="s",
        basis="mean of DECR - INCR over the second table's columns", **pub)
    inc = audio_change(stats)[["incr", "decr"]]
    add("audio_not_improved", "Boosting does not improve the audio application's jitter",
        location="§4", relation="=", paper=0.0, artifact=float((inc < 0).sum().sum()), unit="cells",
        basis="boosted cells with lower jitter than original", tolerance="no boosted cell lower", **pub)
    _published_prose_claims(add, values, inc, rel_tol, pub)
    for device, m in device_metrics.items():
        _measured_claims(add, device, m, alpha, marginal_pct)
    return claims


def _stated(values, value_id: str) -> dict:
    """The paper's value of a claim: relation, value and location as stated."""
    row = values.row(value_id)
    return {"relation": row["relation"], "paper": float(row["value"]), "location": row["location"]}


def _published_prose_claims(add, values, inc: pd.DataFrame, rel_tol: float, pub: dict) -> None:
    """The numbers the paper's prose states about the audio table and its
    set-up, and the abstract's arithmetic."""
    v = values
    low, high, period_us = v("jitter_increase_low"), v("jitter_increase_high"), 1000 * v("audio_period")
    add("audio_increase_low", f"Jitter increase with boosting: about {low:g} µs (low end)",
        **_stated(v, "jitter_increase_low"), artifact=float(inc.min().min()), unit="us",
        basis="smallest policy - original in the third table", rel_tol=rel_tol, **pub)
    add("audio_increase_high", f"Jitter increase with boosting: about {high:g} µs (high end)",
        **_stated(v, "jitter_increase_high"), artifact=float(inc.max().max()), unit="us",
        basis="largest policy - original in the third table", rel_tol=rel_tol, **pub)
    for end, jitter in (("low", low), ("high", high)):
        add(f"audio_pct_{end}",
            f"{jitter:g} µs is about {v(f'jitter_increase_pct_{end}'):g}% of {period_us:,.0f} µs",
            **_stated(v, f"jitter_increase_pct_{end}"), artifact=100 * jitter / period_us, unit="%",
            basis="arithmetic", rel_tol=rel_tol, **pub)
    add("audio_rate",
        f"{v('audio_bytes'):g} bytes every {v('audio_period'):g} ms is a nominal {v('audio_rate'):g} kbps",
        **_stated(v, "audio_rate"), artifact=v("audio_bytes") * 8 / v("audio_period"), unit="kbps",
        basis="arithmetic", **pub)
    window, rate = v("abstract_window"), v("abstract_rate")
    add("abstract_rtts",
        f"A {window:g} s connection with a {v('abstract_rtt'):g} ms RTT is {v('abstract_rtts'):g} RTTs",
        **_stated(v, "abstract_rtts"), artifact=window * 1000 / v("abstract_rtt"), unit="x", basis="arithmetic",
        **pub)
    add("abstract_bytes", f"A {window:g} s connection at {rate:g} Mbps can transfer up to {v('abstract_bytes'):g} MB",
        **_stated(v, "abstract_bytes"), artifact=abstract_mb(v), unit="MB",
        basis=f"arithmetic: {rate:g} Mbps x {window:g} s / 8", **pub)


def _measured_claims(add, device: str, m: dict, alpha: float, marginal_pct: float) -> None:
    """The paper's conclusions checked on one device's runs (`device_numbers`)."""
    src = f"measured on {device}"
    meas = {"provenance": "measured", "section": "priority-boost-rerun"}
    add(f"{device}_incr_significant", f"INCR differs from the original at every CPU load ({device})",
        location="§4", relation="<", paper=alpha, artifact=m.get("cpu_incr_p_max"), unit="p",
        basis=f"largest INCR p, Welch on runs, {src}", **meas)
    add(f"{device}_decr_not_significant", f"DECR does not differ from the original at any CPU load ({device})",
        location="§4", relation=">", paper=alpha, artifact=m.get("cpu_decr_p_min"), unit="p",
        basis=f"smallest DECR p, Welch on runs, {src}", **meas)
    add(f"{device}_only_heavy_load", f"No significant gain with 0 competing processes ({device})",
        location="Abstract; §5", relation=">", paper=alpha, artifact=m.get("cpu_incr_p0", float("nan")), unit="p",
        basis=f"INCR p at 0 processes, {src}", **meas)
    add(f"{device}_cpu_marginal", f"Boosting improves transfer time only marginally under CPU load ({device})",
        location="§4", relation="<", paper=marginal_pct, artifact=m.get("cpu_gain_max_pct", float("nan")), unit="%",
        basis=f"largest (original - policy)/original, {src}", **meas)
    add(f"{device}_net_same", f"Under network load all policies perform the same ({device})",
        location="§4", relation="=", paper=0.0,
        artifact=float(m["net_holm_sig"]) if m["net_comparisons"] else None, unit="tests",
        basis=f"Holm-significant differences of {m['net_comparisons']}, {src}",
        tolerance="no Holm-significant difference", **meas)
    add(f"{device}_audio_not_improved", f"Boosting does not improve audio jitter ({device})",
        location="§4", relation="=", paper=0.0,
        artifact=float(m["audio_incr_holm_lower"] + m["audio_decr_holm_lower"]) if m["audio_comparisons"] else None,
        unit="cells", basis=f"boosted cells with Holm-significantly lower jitter, {src}",
        tolerance="no cell significantly lower", **meas)


def claims_shown(claims_table: pd.DataFrame) -> pd.DataFrame:
    """The claims table for people: the paper's value as printed with its
    relation, ours, the verdict and the provenance."""
    from mobitrace.book.chapter import paper_text

    shown = claims_table.assign(paper=[paper_text(r, p) for r, p in
                                       zip(claims_table["paper_relation"], claims_table["paper_value"])])
    return (shown[["claim", "location", "paper", "artifact_value", "unit", "verdict", "provenance"]]
            .rename(columns={"artifact_value": "this artifact"}))


def headline(devices) -> list[str]:
    """The claims shown first in the chapter (key findings)."""
    ids = ["p_incr_30proc", "only_heavy_load", "cpu_marginal", "net_decr_better"]
    if devices:
        ids += [f"{devices[0]}_incr_significant", f"{devices[0]}_cpu_marginal"]
    return ids


def headline_intervals(audit_cpu: pd.DataFrame, comparisons: dict, level: float) -> dict:
    """Welch intervals of the largest gain in % of the original's mean
    (`gain_pct_ci`): of the published CPU-load table (from mean/SD/n) and of
    each device's CPU-load runs; {claim id: (low, high)}."""
    top_pub = audit_cpu.loc[(-audit_cpu["diff"] / audit_cpu["mean_base"]).idxmax()]
    intervals = {"cpu_marginal": gain_pct_ci(*top_pub[["mean", "sd", "n", "mean_base", "sd_base", "n"]],
                                             level=level)[1:]}
    for device, comp in comparisons.items():
        cpu_comp = comp[comp["table"] == "cpu"]
        if len(cpu_comp):
            top = cpu_comp.loc[(-cpu_comp["rel_diff"]).idxmax()]
            intervals[f"{device}_cpu_marginal"] = gain_pct_ci(
                *top[["mean", "sd", "n", "mean_base", "sd_base", "n_base"]], level=level)[1:]
    return intervals


def verdict_counts(claims_table: pd.DataFrame) -> dict:
    """{verdict: number of claims} for every verdict (0 included)."""
    counts = claims_table["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in cl.VERDICTS}


def chapter_metrics(audit_cpu: pd.DataFrame, audit_net: pd.DataFrame, device_metrics: dict,
                    counts: dict) -> dict:
    """metrics.json: the audit's counts, INCR's p at 0 processes, every
    device's numbers (floats rounded by `metric`) and the verdict counts."""
    incr = _policy(audit_cpu, "incr")
    return {
        "audit": {
            "published_p_values": int(audit_cpu["p_published"].notna().sum()),
            "outside_range_table_precision": int((~audit_cpu["in_range_table"].astype(bool)).sum()),
            "outside_range_as_printed": int((~audit_cpu["in_range_printed"].astype(bool)).sum()),
            "holm_significant_recomputed_cpu_table": int(audit_cpu["reject_holm"].sum()),
            "holm_significant_published_cpu_table": int(audit_cpu["reject_published_holm"].sum()),
            "holm_significant_recomputed_net_table": int(audit_net["reject_holm"].sum()),
            "incr_p_at_0_procs": metric(_at_procs(incr, "p", 0)),
        },
        "measured": {d: {k: (metric(x) if isinstance(x, float) else x) for k, x in sorted(m.items())}
                     for d, m in device_metrics.items()},
        "claims": {k.replace(" ", "_"): n for k, n in counts.items()},
    }


def write_metrics(path: str | Path, metrics: dict) -> None:
    """Write metrics.json deterministically (sorted keys, indented)."""
    Path(path).write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
