"""The priority-boost chapter (notebooks/priority-boost.py): everything it
shows, one `Chapter` method per code cell, in the order the chapter reads.

The figures (seaborn, the book's theme) are drawn from tables the chapter has
already computed with `mobitrace.studies.priority_boost.analysis`; the
`*_numbers` functions return {glue name: value} for the prose in the order the
chapter glues them; the claims table and the metrics come from the audit
(`analysis.audit_published`) and the measured comparisons
(`analysis.compare_measured`, `compare_paired`). Every paper number comes from
data/published/priority-boost.yaml (`mobitrace.core.published.Values`).
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from IPython.display import Markdown, display

from mobitrace.book.chapter import NotebookChapter, paper_text, site_href
from mobitrace.book.checked_outputs import SchemaCheckedOutputs
from mobitrace.book.figures import PALETTE, legend_outside
from mobitrace.stats.resampling import SEED
from mobitrace.core import claims as cl
from mobitrace.core.capture_reader import NOT_MEASURED
from mobitrace.core.escape import md_text
from mobitrace.core.numbers import level, metric
from mobitrace.core.published import Values, table_location
from mobitrace.stats import resampling as rs
from mobitrace.studies import registry
from mobitrace.studies.priority_boost import analysis as pba
from mobitrace.studies.priority_boost.analysis import (POLICY_NAMES, POLICY_ORDER, TABLE_TITLES, UNITS, audio_change,
                                                       condition_label, extent, gain_pct_ci, interval_rows)
from mobitrace.studies.priority_boost.findings import (
    abstract_mb, at_procs, audit_numbers, conclusion_numbers, cpu_max_gain_pct, decr_minus_original,
    device_numbers, net_numbers, policy_rows, reference_numbers,
)
from mobitrace.studies.priority_boost.schema import result_schema
from mobitrace.core.io import write_metrics

STAGE = "analyze_priority_boost"
STUDY = "priority-boost"

CONDITION_AXIS = "competing processes, cross traffic (% of NIC)"


def published_means(pub_means: pd.DataFrame):
    """The paper's means with their t intervals (`published_means_both`), one
    panel per load, one hue per policy."""
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.0), sharey=True, width_ratios=(5, 6))
    for ax, (load, part) in zip(axes, pub_means.groupby("load", sort=False)):
        sns.pointplot(data=interval_rows(part), x="condition", y="value", hue="policy_name",
                      hue_order=[POLICY_NAMES[p] for p in ("original", "incr", "decr")], estimator="median",
                      errorbar=extent, dodge=0.4, linestyle="none", capsize=0.15, err_kws={"linewidth": 1.2},
                      marker="o", markersize=5, ax=ax, legend=ax is axes[1])
        ax.set(title=load, xlabel=CONDITION_AXIS, ylabel="file transfer time (s)")
        ax.tick_params(axis="x", labelrotation=30)
    legend_outside(axes[1], title="policy")
    return fig


def p_ranges(audit: pd.DataFrame, alpha: float):
    """Per comparison of an audit with published p-values (`audit_published`):
    the attainable p ranges (as printed, at table precision) as bars, the
    recomputed p as a tick, the paper's p as a marker (a triangle when it is
    outside the range), on a log scale with a dashed line at `alpha`."""
    ranked = audit.sort_values(["policy", "cpu_procs"], ascending=[False, True], ignore_index=True)
    colors = dict(zip(("printed", "table", "paper", "outside"), (PALETTE[7], PALETTE[0], PALETTE[2], PALETTE[3])))
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    ax.hlines(ranked.index, ranked["p_lo_printed"].clip(lower=1e-6), ranked["p_hi_printed"],
              color=colors["printed"], lw=7, label="attainable p, as printed")
    ax.hlines(ranked.index, ranked["p_lo_table"], ranked["p_hi_table"], color=colors["table"], lw=7,
              label="attainable p, table precision")
    ax.scatter(ranked["p"], ranked.index, marker="|", s=220, color="black", zorder=3, label="recomputed p")
    inside = ranked["in_range_table"].astype(bool)
    ax.scatter(ranked.loc[inside, "p_published"], ranked.index[inside], marker="o", s=45, color=colors["paper"],
               zorder=4, label="paper's p (attainable)")
    ax.scatter(ranked.loc[~inside, "p_published"], ranked.index[~inside], marker="<", s=60,
               color=colors["outside"], zorder=4, label="paper's \"< 0.0001\" (not attainable)")
    ax.axvline(alpha, color="grey", ls="--", lw=0.8)
    ax.set_xscale("log")
    ax.set(xlim=(1e-5, 1.5), xlabel="two-sided Welch p (log scale, dashed: α)")
    ax.set_yticks(ranked.index, [f"{POLICY_NAMES[r.policy]}, {r.cpu_procs} proc" for r in ranked.itertuples()])
    ax.legend()
    legend_outside(ax, below=True)
    return fig


def effect_sizes(audit_cpu: pd.DataFrame, audit_net: pd.DataFrame, alpha: float):
    """Hedges' g with its interval of every comparison of the two audited
    tables, INCR and DECR side by side, with a line at zero."""
    both = pd.concat([audit_cpu.assign(load="CPU load"), audit_net.assign(load="network load")], ignore_index=True)
    both["comparison"] = both["load"] + ": " + [condition_label(c, x)
                                                for c, x in zip(both["cpu_procs"], both["cross_pct"])]
    both["policy_name"] = both["policy"].map(POLICY_NAMES)
    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    sns.pointplot(data=interval_rows(both[["comparison", "policy_name", "g", "g_lo", "g_hi"]], "g", "g_lo", "g_hi"),
                  x="value", y="comparison", hue="policy_name", hue_order=["INCR", "DECR"], estimator="median",
                  errorbar=extent, dodge=0.4, linestyle="none", capsize=0.15, marker="o", markersize=4,
                  err_kws={"linewidth": 1.2}, palette=[PALETTE[1], PALETTE[2]], ax=ax)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set(xlabel=f"Hedges' g, policy − original, with {100 * (1 - alpha):.0f}% interval (negative: faster)", ylabel="")
    legend_outside(ax, title="policy")
    return fig


def measured_runs(runs: pd.DataFrame, alpha: float):
    """Measured runs of one device: per experiment (panel), condition and
    policy, the mean with its interval (`rs.mean_ci_errorbar`) over every run.
    None when no run has a metric."""
    ok = runs.dropna(subset=["metric"]).assign(
        policy_name=lambda f: f["policy"].map(POLICY_NAMES),
        condition=lambda f: [condition_label(c, x) for c, x in zip(f["cpu_procs"], f["cross_pct"])])
    panels = [t for t in ("cpu", "net", "audio") if (ok["table"] == t).any()]
    if not panels:
        return None
    hue_order = [POLICY_NAMES[p] for p in POLICY_ORDER if p in set(ok["policy"])]
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, 3.3 * len(panels)), squeeze=False)
    for ax, table in zip(axes[:, 0], panels):
        t = ok[ok["table"] == table].sort_values(["cpu_procs", "cross_pct"])
        sns.stripplot(data=t, x="condition", y="metric", hue="policy_name", hue_order=hue_order, dodge=True,
                      jitter=False, size=2.5, alpha=0.35, legend=False, ax=ax)
        sns.pointplot(data=t, x="condition", y="metric", hue="policy_name", hue_order=hue_order,
                      errorbar=rs.mean_ci_errorbar(alpha, 2000, SEED), dodge=0.53, linestyle="none",
                      capsize=0.1, marker="D", markersize=5, err_kws={"linewidth": 1.4}, ax=ax,
                      legend=ax is axes[0, 0])
        ax.set(title=TABLE_TITLES[table], xlabel=CONDITION_AXIS,
               ylabel=f"{'jitter SD' if table == 'audio' else 'transfer time'} ({UNITS[table]})",
               yscale="linear" if table == "audio" else "log")
    legend_outside(axes[0, 0], title="policy")
    fig.tight_layout()
    return fig


def half_unit(printed: str) -> float:
    """Half a unit of the last digit of a number as printed ("0.0031" -> 0.00005)."""
    digits = printed.strip().lstrip("<>=~ ").partition(".")[2]
    return 0.5 * 10.0 ** -len(digits)


def chapter_claims(study: str, audit_cpu: pd.DataFrame, audit_net: pd.DataFrame, stats: pd.DataFrame, values,
                   device_metrics: dict, alpha: float, marginal_pct: float, rel_tol: float,
                   margin_pct: float = 5.0, changes: dict | None = None) -> cl.Claims:
    """Every claim of the paper the chapter addresses: the published p-values
    against their attainable ranges, the conclusions checked on the recomputed
    tests, the prose's numbers and arithmetic (from `values`), and per measured
    device the conclusions on its runs."""
    claims = cl.Claims(study, alpha=alpha)
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
            interval=(r.p_lo_table, r.p_hi_table), rule=cl.ATTAINABLE, abs_tol=half_unit(r.p_published_text),
            tolerance="paper p within the p range of the rounded statistics (table precision)")
    incr = policy_rows(audit_cpu, "incr")
    add("incr_significant", "INCR is statistically different from the original (every CPU load)",
        location="§4", relation="<", paper=alpha, artifact=float(incr["p"].max()), unit="p",
        basis="largest recomputed INCR p (no correction)", **pub)
    add("incr_significant_holm", "INCR is statistically different from the original (every CPU load), after Holm",
        location="§4", relation="<", paper=alpha, artifact=float(incr["p_holm"].max()), unit="p",
        basis="largest Holm-adjusted recomputed INCR p", **pub)
    # "No difference" is decided by equivalence (TOST): the (1 - 2 alpha)
    # interval of the change within ±margin_pct of the original.
    tost = {"relation": "=", "paper": 0.0, "unit": "%", "abs_tol": margin_pct, "alpha": 2 * alpha,
            "tolerance": f"equivalence (TOST, alpha {alpha:g}): whole {1 - 2 * alpha:.0%} CI of the change "
                         f"within ±{margin_pct:g}% of the original"}
    cpu_change, net_change = pba.welch_change(audit_cpu, alpha), pba.welch_change(audit_net, alpha)
    for claim_id, text, location, rows, basis in (
            ("decr_not_significant",
             "DECR is not statistically different from the original (read for the misprinted 2nd 'INCR')", "§4",
             cpu_change[cpu_change["policy"] == "decr"], "DECR vs original at every CPU load"),
            ("only_heavy_load", "Boosting helps only under heavy load: no significant gain with 0 competing processes",
             "Abstract; §5", cpu_change[(cpu_change["policy"] == "incr") & (cpu_change["cpu_procs"] == 0)],
             "INCR vs original at 0 processes")):
        change, ci, which = pba.equivalence_of(rows, margin_pct)
        add(claim_id, text, location=location, artifact=change, interval=ci,
            basis=f"{basis}: Welch from the published mean/SD/n, deciding comparison {which}", **tost, **pub)
    procs = values.row("conclusion_cpu_procs")
    add("more_than_30", f"Boosting is marginally useful with more than {procs['value']:g} competing processes",
        location=procs["location"], relation=procs["relation"], paper=procs["value"], artifact=None,
        unit="processes", basis=f"the tables stop at {int(audit_cpu['cpu_procs'].max())} processes", **pub)
    add("cpu_marginal", "Both boosting approaches improve transfer time only marginally (CPU load)",
        location="§4", relation="<", paper=marginal_pct, artifact=cpu_max_gain_pct(stats), unit="%",
        basis="selected: the largest (original - policy)/original in the first table, its Welch interval not "
              "adjusted for the selection", possible=(-math.inf, 100.0), **pub)
    change, ci, which = pba.equivalence_of(net_change, margin_pct)
    add("net_same", "Under network load all three policies deliver essentially the same performance",
        location="§4", artifact=change, interval=ci,
        basis=f"every policy-vs-original comparison of the second table ({len(audit_net)}), Welch from the "
              f"published mean/SD/n, deciding comparison {which}", **tost, **pub)
    add("net_decr_better", "Under network load DECR is marginally better",
        location="§4", relation="<", paper=0.0, artifact=float(decr_minus_original(stats).mean()), unit="s",
        basis="mean of DECR - original over the second table's columns (the paper's baseline)", **pub)
    inc = audio_change(stats)[["incr", "decr"]]
    add("audio_not_improved", "Boosting does not improve the audio application's jitter",
        location="§4", relation="=", paper=0.0, artifact=float((inc < 0).sum().sum()), unit="cells",
        basis="boosted cells with lower jitter than original", tolerance="no boosted cell lower", **pub)
    _published_prose_claims(add, values, inc, rel_tol, pub)
    for device, m in device_metrics.items():
        _measured_claims(add, device, m, alpha, marginal_pct, (changes or {}).get(device, pd.DataFrame()), tost,
                         margin_pct)
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


def _measured_claims(add, device: str, m: dict, alpha: float, marginal_pct: float, change: pd.DataFrame,
                     tost: dict, margin_pct: float) -> None:
    """The paper's conclusions checked on one device's runs (`device_numbers`),
    analysed paired by seed as the re-run was designed (`change`:
    analysis.paired_change)."""
    src = f"measured on {device}, runs paired by seed"
    meas = {"provenance": "measured", "section": "priority-boost-rerun"}
    cpu = change[change["table"] == "cpu"] if len(change) else change
    incr_p = cpu.loc[cpu["policy"] == "incr", "p_paired"] if len(cpu) else pd.Series(dtype=float)
    add(f"{device}_incr_significant", f"INCR differs from the original at every CPU load ({device})",
        location="§4", relation="<", paper=alpha, artifact=float(incr_p.max()) if len(incr_p) else None, unit="p",
        basis=f"largest INCR p, paired t on log ratios, {src}", **meas)
    for claim_id, text, location, rows, what in (
            ("decr_not_significant", f"DECR does not differ from the original at any CPU load ({device})", "§4",
             cpu[cpu["policy"] == "decr"] if len(cpu) else cpu, "DECR vs original at every CPU load"),
            ("only_heavy_load", f"No significant gain with 0 competing processes ({device})", "Abstract; §5",
             cpu[(cpu["policy"] == "incr") & (cpu["cpu_procs"] == 0)] if len(cpu) else cpu,
             "INCR vs original at 0 processes"),
            ("net_same", f"Under network load all policies perform the same ({device})", "§4",
             change[change["table"] == "net"] if len(change) else change, "every policy vs original, network load")):
        value, ci, which = pba.equivalence_of(rows, margin_pct) if len(rows) else (None, None, "none")
        add(f"{device}_{claim_id}", text, location=location, artifact=value, interval=ci,
            basis=f"{what}, {src}; deciding comparison {which}", **tost, **meas)
    add(f"{device}_cpu_marginal", f"Boosting improves transfer time only marginally under CPU load ({device})",
        location="§4", relation="<", paper=marginal_pct, artifact=m.get("cpu_gain_max_pct", float("nan")), unit="%",
        basis=f"selected: the largest (original - policy)/original of the CPU-load comparisons, its Welch interval "
              f"not adjusted for the selection, measured on {device}", possible=(-math.inf, 100.0), **meas)
    add(f"{device}_audio_not_improved", f"Boosting does not improve audio jitter ({device})",
        location="§4", relation="=", paper=0.0,
        artifact=float(m["audio_incr_holm_lower"] + m["audio_decr_holm_lower"]) if m["audio_comparisons"] else None,
        unit="cells", basis=f"boosted cells with Holm-significantly lower jitter, {src}",
        tolerance="no cell significantly lower", **meas)


def claims_shown(claims_table: pd.DataFrame) -> pd.DataFrame:
    """The claims table for people: the paper's value as printed with its
    relation, ours, the verdict and the provenance."""

    shown = claims_table.assign(paper=[paper_text(r, p) for r, p in
                                       zip(claims_table["paper_relation"], claims_table["paper_value"])])
    return (shown[["claim", "location", "paper", "artifact_value", "unit", "verdict", "category", "provenance"]]
            .rename(columns={"artifact_value": "this artifact"}))


def headline(devices) -> list[str]:
    """The claims shown first in the chapter (key findings)."""
    ids = ["p_incr_30proc", "only_heavy_load", "cpu_marginal", "net_decr_better"]
    if devices:
        ids += [f"{devices[0]}_incr_significant", f"{devices[0]}_cpu_marginal"]
    return ids


def headline_intervals(audit_cpu: pd.DataFrame, comparisons: dict, alpha: float) -> dict:
    """Welch intervals of the largest gain in % of the original's mean
    (`gain_pct_ci`): of the published CPU-load table (from mean/SD/n) and of
    each device's CPU-load runs; {claim id: (low, high)}."""
    top_pub = audit_cpu.loc[(-audit_cpu["diff"] / audit_cpu["mean_base"]).idxmax()]
    intervals = {"cpu_marginal": gain_pct_ci(*top_pub[["mean", "sd", "n", "mean_base", "sd_base", "n"]],
                                             alpha=alpha)[1:]}
    for device, comp in comparisons.items():
        cpu_comp = comp[comp["table"] == "cpu"]
        if len(cpu_comp):
            top = cpu_comp.loc[(-cpu_comp["rel_diff"]).idxmax()]
            intervals[f"{device}_cpu_marginal"] = gain_pct_ci(
                *top[["mean", "sd", "n", "mean_base", "sd_base", "n_base"]], alpha=alpha)[1:]
    return intervals


def chapter_metrics(audit_cpu: pd.DataFrame, audit_net: pd.DataFrame, device_metrics: dict,
                    counts: dict) -> dict:
    """metrics.json: the audit's counts, INCR's p at 0 processes, every
    device's numbers (floats rounded by `metric`) and the verdict counts."""
    incr = policy_rows(audit_cpu, "incr")
    return {
        "audit": {
            "published_p_values": int(audit_cpu["p_published"].notna().sum()),
            "outside_range_table_precision": int((~audit_cpu["in_range_table"].astype(bool)).sum()),
            "outside_range_as_printed": int((~audit_cpu["in_range_printed"].astype(bool)).sum()),
            "holm_significant_recomputed_cpu_table": int(audit_cpu["reject_holm"].sum()),
            "holm_significant_published_cpu_table": int(audit_cpu["reject_published_holm"].sum()),
            "holm_significant_recomputed_net_table": int(audit_net["reject_holm"].sum()),
            "incr_p_at_0_procs": metric(at_procs(incr, "p", 0)),
        },
        "measured": {d: {k: (metric(x) if isinstance(x, float) else x) for k, x in sorted(m.items())}
                     for d, m in device_metrics.items()},
        "claims": cl.keyed(counts),
    }


class Chapter(NotebookChapter):
    """The chapter's state: the notebook's parameters, the published tables,
    the audits, the measured runs of each device and what later sections reuse."""

    def __init__(self, *, study: str, published_dir: str, interim_dir: str, results_dir: str, devices: list[str],
                 alpha: float, p_grid: int, rel_tol_approx: float, marginal_pct: float,
                 equivalence_margin_pct: float):
        self.study, self.interim_dir, self.devices = study, interim_dir, devices
        self.alpha, self.p_grid = alpha, p_grid  # every interval is 100(1 - alpha)%
        self.rel_tol_approx, self.marginal_pct = rel_tol_approx, marginal_pct
        self.equivalence_margin_pct = equivalence_margin_pct
        self.results = Path(results_dir)
        self.out = SchemaCheckedOutputs(self.results, STAGE, result_schema, registry.by_slug()[STUDY].device_sources_stage)
        self.values = Values(published_dir)
        self.stats = pd.read_parquet(Path(published_dir) / "stat_tables.parquet")
        self.measured: dict = {}
        self.comparisons: dict = {}
        self.paired: dict = {}
        self.device_metrics: dict = {}

    def _glue(self, numbers: dict) -> None:
        for name, x in numbers.items():
            self.out.put(name, x)

    def published_tables(self) -> None:
        """The paper's four tables as printed."""
        out = self.out
        for table, caption in [("transfer_cpu", "File transfer time (s), mean/SD, against CPU load"),
                               ("transfer_cpu_p", "P values of comparing INCR and DECR to original"),
                               ("transfer_net", "File transfer time (s), mean/SD, against network load"),
                               ("audio_jitter", "Audio send-time jitter SD (µs)")]:
            where = table_location(self.stats, table)
            out.table(pba.printed_grid(self.stats, table), f"published_{table}", f"{caption} ({where})")
            out.provenance(f"published ({where}), rendered from the data file.")

    def published_means_figure(self) -> None:
        """The published means with their t intervals."""
        out = self.out
        pub_means = out.save_table(pba.published_means_both(self.stats, self.alpha), "published_means_ci")
        out.figure(lambda: published_means(pub_means), "published_means_ci",
                   alt=f"Two panels of mean file transfer time in seconds with {level(self.alpha)} confidence intervals, for the "
                       "original scheduler, INCR and DECR, against CPU load (left) and network load (right), from "
                       "the paper's tables.",
                   caption=f"The paper's means with t-based {level(self.alpha)} intervals computed from its reported SD and n. Look "
                           "at how much the intervals of the boosted policies overlap the original's in each column.")
        out.provenance("published means, SDs and n (§4, first and second tables); intervals computed here.")

    def audit(self) -> None:
        """Welch tests, p ranges, effect sizes and Holm from the published
        statistics of both transfer tables (audit_table shows the CPU-load
        audit, on the methods page)."""
        out, stats = self.out, self.stats
        out.put("alpha", self.alpha)
        out.put("ci_pct", 100 * (1 - self.alpha))
        self.audit_cpu = pba.audit_published(stats, "transfer_cpu", "transfer_cpu_p", alpha=self.alpha,
                                             grid=self.p_grid)
        self.audit_net = pba.audit_published(stats, "transfer_net", None, alpha=self.alpha,
                                             grid=self.p_grid)
        out.save_table(self.audit_cpu, "audit_transfer_cpu")
        out.save_table(self.audit_net, "audit_transfer_net")

    def audit_table(self) -> None:
        out = self.out
        out.show(pba.audit_shown(self.audit_cpu, True, self.alpha),
                 "Transfer time vs CPU load: paper p and recomputed Welch p side by side",
                 csv_href=out.href("audit_transfer_cpu"))
        out.provenance("published inputs (§4, first table); tests, ranges, effect sizes and Holm computed here.")

    def audit_numbers(self) -> None:
        self._glue(audit_numbers(self.audit_cpu, self.alpha))

    def p_ranges_figure(self) -> None:
        out = self.out
        out.figure(p_ranges(self.audit_cpu, self.alpha), "p_ranges_published",
                   alt="For each of the ten comparisons of the paper's CPU-load table, horizontal bars of the "
                       "p-values its rounded means and SDs allow, the recomputed p as a tick and the paper's p as a "
                       "marker, on a log scale.",
                   caption="The paper's p-values against the range of p its own rounded statistics allow. Look for "
                           "markers outside their bars: the triangles are \"< 0.0001\" values no rounding of the "
                           "table can give.")
        out.provenance("published p-values (§4, first table); ranges computed here from the published means and SDs.")

    def audit_net_table(self) -> None:
        out = self.out
        out.show(pba.audit_shown(self.audit_net, False, self.alpha),
                 "Transfer time vs network load: Welch tests from the published statistics",
                 csv_href=out.href("audit_transfer_net"))
        out.provenance("published inputs (§4, second table); tests, ranges, effect sizes and Holm computed here.")

    def net_numbers(self) -> None:
        self._glue(net_numbers(self.audit_net, self.stats, self.alpha))

    def effect_sizes_figure(self) -> None:
        out = self.out
        out.figure(lambda: effect_sizes(self.audit_cpu, self.audit_net, self.alpha), "effect_sizes_published",
                   alt=f"Hedges' g of INCR and DECR against the original scheduler with {level(self.alpha)} intervals, for each "
                       "column of the paper's CPU-load and network-load tables, with a vertical line at zero.",
                   caption="Effect sizes (standardized differences of the means) from the paper's tables. Look at "
                           "which intervals exclude zero: left of the line the policy is faster than the original.")
        out.provenance("published means and SDs (§4, first and second tables); Hedges' g and its interval "
                       "computed here.")

    def conclusions(self) -> None:
        self.out.save_table(pba.audio_change(self.stats).reset_index(drop=True), "audit_audio_change_us")
        self._glue(conclusion_numbers(self.stats, self.values))

    def load_measured(self) -> None:
        self.measured = pba.load_measured(self.interim_dir, self.devices)
        self.out.put("n_devices", len(self.measured))
        if not self.measured:
            display(Markdown("**No measured captures are listed in `params.yaml` (`priority-boost.devices`).**"))

    def sessions(self) -> None:
        out = self.out
        for device, (runs, sessions) in self.measured.items():
            out.table(pba.session_view(sessions), f"measured_{device}_sessions",
                      f"Captures behind the measured results: {device}")
            out.device_provenance(f"measured: data/raw/priority-boost/{device}/ (manifest.yaml per session; "
                                  "hash over every file of the capture).", device)

    def measured_tables(self) -> None:
        """Each device's tables as the paper's (mean/SD, n runs) and its Welch tests."""
        out = self.out
        for device, (runs, sessions) in self.measured.items():
            hashes = ", ".join(sessions["capture_sha256"].str[:12])
            for table in ("cpu", "net", "audio"):
                grid = pba.measured_grid(runs, table)
                if grid.empty:
                    display(Markdown(f"*{md_text(device)}: no {table} runs captured.*"))
                    continue
                out.table(grid, f"measured_{device}_{table}", f"{TABLE_TITLES[table]}, {device}: mean/SD (n runs)")
                out.device_provenance(f"measured ({device}, capture {hashes}); mean and SD over runs.", device)
            self.comparisons[device] = out.save_table(
                pba.compare_measured(runs.dropna(subset=["metric"]), alpha=self.alpha),
                f"measured_{device}_welch")

    def welch_tests(self) -> None:
        out = self.out
        for device, comp in self.comparisons.items():
            if comp.empty:
                continue
            out.show(pba.comparisons_shown(comp, UNITS, self.alpha), f"Welch tests on measured runs, {device}",
                     csv_href=out.href(f"measured_{device}_welch"))
            out.device_provenance(f"measured ({device}); Welch tests, Hedges' g and Holm computed here "
                                  f"from per-run values.",
                                  device)

    def paired_tests(self) -> None:
        out = self.out
        for device, (runs, sessions) in self.measured.items():
            pc = self.paired[device] = pba.compare_paired(runs.dropna(subset=["metric"]), alpha=self.alpha)
            if pc.empty:
                continue
            out.table(pc, f"measured_{device}_paired", f"Runs paired by repetition (same link schedule), {device}",
                      shown=pba.paired_view(pc, self.alpha))
            out.device_provenance(f"measured ({device}); Wilcoxon signed-rank tests, Holm within each table and the "
                                  "median ratio's BCa bootstrap interval computed here from per-run values.",
                                  device)

    def measured_figures(self) -> None:
        out = self.out
        for device, (runs, sessions) in self.measured.items():
            fig = measured_runs(runs, self.alpha)
            if fig is None:
                continue
            out.figure(fig, f"measured_{device}",
                       alt=f"Measured on {device}: per policy and condition, mean transfer time (s) or audio jitter "
                           f"SD (µs) with {level(self.alpha)} confidence intervals, over the individual runs, one panel per "
                           "experiment.",
                       caption=f"Means over runs with {level(self.alpha)} intervals (diamonds) and every run (dots). Look "
                               "at whether the boosted policies' intervals overlap the original's in each condition.")
            out.device_provenance(f"measured ({device}); means and their intervals over runs (t below 30 runs, percentile bootstrap from 30, none below 3) computed here.",
                                  device)

    def run_conditions(self) -> None:
        out = self.out
        for device, (runs, sessions) in self.measured.items():
            q, shown = pba.run_conditions(runs)
            out.table(q, f"measured_{device}_conditions", f"Run conditions per cell, {device} (means over runs)",
                      shown=shown)
            out.device_provenance(f"measured ({device}): oracle logs, cross-traffic and cgroup "
                                  f"statistics of every run.",
                                  device)
            if device == self.devices[0]:
                self._glue(pba.refused_sends(runs))

    def device_numbers(self) -> None:
        self.device_metrics = {d: device_numbers(runs, sessions, self.comparisons[d],
                                                 self.paired.get(d, pd.DataFrame()), self.stats)
                               for d, (runs, sessions) in self.measured.items()}
        if self.device_metrics:
            self._glue(reference_numbers(self.devices[0], self.device_metrics[self.devices[0]]))

    def claims(self) -> None:
        out = self.out
        out.put("rel_tol_pct", 100 * self.rel_tol_approx)
        out.put("marginal_pct", self.marginal_pct)
        out.put("equivalence_margin_pct", self.equivalence_margin_pct)
        out.put("tost_ci_pct", 100 * (1 - 2 * self.alpha))
        changes = {d: pba.paired_change(runs.dropna(subset=["metric"]), alpha=self.alpha)
                   for d, (runs, _) in self.measured.items()}
        self.claims_table = chapter_claims(self.study, self.audit_cpu, self.audit_net, self.stats, self.values,
                                           self.device_metrics, alpha=self.alpha, marginal_pct=self.marginal_pct,
                                           rel_tol=self.rel_tol_approx, margin_pct=self.equivalence_margin_pct,
                                           changes=changes).frame(self.intervals())
        for device, (_, sessions) in self.measured.items():
            if (sessions["background_load"] == NOT_MEASURED).any():
                self.claims_table = cl.with_note(self.claims_table,
                                                 self.claims_table["claim_id"].str.startswith(f"{device}_"), cl.UNGATED)
        cl.write_claims(self.claims_table, self.results / "claims.csv")
        out.show(claims_shown(self.claims_table), "Claims of the priority-boost paper",
                 csv_href=site_href(self.results / "claims.csv"))

    def intervals(self) -> dict:
        """Welch 95% CIs of the largest gain, in % of the original's mean
        (published: from mean/SD/n; measured: from the runs)."""
        return headline_intervals(self.audit_cpu, self.comparisons, self.alpha)

    def findings(self) -> None:
        """The key findings, with intervals of the headline values: Welch 95% CIs
        of the largest gain, in % of the original's mean (published: from
        mean/SD/n; measured: from the runs)."""
        self.out.findings(self.claims_table, headline=headline(self.devices),
                          intervals=self.intervals())

    def metrics(self) -> None:
        counts = cl.verdict_counts(self.claims_table)
        self.out.put_counts(counts)
        write_metrics(self.results / "metrics.json",
                      chapter_metrics(self.audit_cpu, self.audit_net, self.device_metrics, counts))
