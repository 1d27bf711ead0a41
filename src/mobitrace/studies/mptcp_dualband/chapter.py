"""The mptcp-dualband chapter (notebooks/mptcp-dualband.py): everything it
shows, one `Chapter` method per code cell, in the order the chapter reads.

The figures (seaborn, the book's theme) are drawn from tables made by
mobitrace.studies.mptcp_dualband.analysis; the methods save the results
tables, show them with their provenance and glue the numbers the prose uses.
Later sections use what earlier ones computed (the runs, the sweep, the optima).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from IPython.display import Markdown, display

from mobitrace.book.build import with_interval
from mobitrace.book.chapter import ChapterOutputs, NotebookChapter, paper_text, reference_first, shown_interval, site_href
from mobitrace.book.figures import PALETTE, legend_outside
from mobitrace.book.robustness import show as show_robustness
from mobitrace.core import capture_reader
from mobitrace.core import claims as cl
from mobitrace.core import numbers
from mobitrace.core.io import write_metrics
from mobitrace.core.published import Values
from mobitrace.energy import robustness
from mobitrace.stats import resampling as rs
from mobitrace.stats.resampling import SEED
from mobitrace.studies.mptcp_dualband import analysis as mda
from mobitrace.studies.mptcp_dualband import ratios as ratio_sweep
from mobitrace.studies.mptcp_dualband import energy as energy_per_bit
from mobitrace.studies.mptcp_dualband.schema import DIRECTIONS

STAGE = "analyze_mptcp_dualband"
# The paper's energy claims first: the throughput claims after them are testbed
# checks (the landing card shows the first).
HEADLINE = ["dl_energy_cost", "dl_500_energy_opt", "ul_power_excess", "mptcp_sum_downlink", "tput_opt_ratio_dl",
            "dl_tput_gain"]

COLORS = {"a": PALETTE[0], "b": PALETTE[1], "total": PALETTE[5]}  # not green/vermilion: verdict colours


def fig1_bars(mp_ref: pd.DataFrame, r: pd.DataFrame, colors: dict = COLORS, n_boot: int = rs.N_BOOT,
              seed: int = SEED):
    """Figure 1: backlogged MPTCP throughput per direction, bars for path a,
    path b and the total (means over the runs `mp_ref`, 95% bootstrap CI),
    and a dashed line at each direction's sum of path rates (`r`, indexed by
    direction in DIRECTIONS order, column "sum of path rates")."""
    long1 = (mp_ref
             .melt(id_vars=["direction"], value_vars=["tput_a_eq_mbps", "tput_b_eq_mbps", "tput_eq_mbps"],
                   var_name="series", value_name="throughput (Mbps)")
             .replace({"series": {"tput_a_eq_mbps": "path a (802.11ad analog)",
                                  "tput_b_eq_mbps": "path b (802.11ac analog)", "tput_eq_mbps": "MPTCP total"}}))
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    sns.barplot(data=long1, x="direction", y="throughput (Mbps)", hue="series", order=list(DIRECTIONS),
                palette=[colors["a"], colors["b"], colors["total"]],
                errorbar=rs.mean_ci_errorbar(0.95, n_boot, seed),
                capsize=0.1, err_kws={"linewidth": 1}, ax=ax)
    ax.hlines(r["sum of path rates"], np.arange(len(r)) - 0.4, np.arange(len(r)) + 0.4, colors="k",
              linestyles="--", linewidth=1, label="sum of path rates")
    ax.legend()
    ax.set(xlabel="direction", ylabel="throughput (Mbps)")
    legend_outside(ax)
    return fig


def cdf_lines(dl_ref: pd.DataFrame, medians: list[tuple[float, str, str]]):
    """Figure 2: ECDFs of downlink MPTCP throughput (Gbps, column tput_gbps)
    per configuration, and a vertical line per (value, label, linestyle) in
    `medians` (the paper's medians)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    sns.ecdfplot(data=dl_ref, x="tput_gbps", hue="configuration",
                 hue_order=sorted(dl_ref["configuration"].unique()), ax=ax)
    handles, labels = ax.get_legend().legend_handles, [t.get_text() for t in ax.get_legend().get_texts()]
    for value, label, ls in medians:
        handles.append(ax.axvline(value, ls=ls, color="k", lw=1))
        labels.append(label)
    ax.legend(handles, labels, title="configuration")
    ax.set(xlabel="downlink MPTCP throughput (Gbps)", ylabel="share of runs (ECDF)")
    legend_outside(ax)
    return fig


def ratio_dots(ratios: pd.DataFrame):
    """The paper's comparisons as ratios with their intervals
    (mobitrace.stats.resampling.ratio_points), legend outside."""
    ax = rs.ratio_points(ratios, xlabel="ratio (1 = the same; throughput measured, nJ/bit and power modeled)")
    legend_outside(ax)
    return ax.figure


def optima_dots(long_o: pd.DataFrame, cases: list[str], colors: dict = COLORS):
    """Throughput-optimal, energy-optimal and the paper's energy-optimal
    ratio per case (direction and demand, rows `cases`), with interval lines
    (`long_o`: analysis.optima_long)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    sns.scatterplot(data=long_o, x="ratio", y="case", hue="optimum", style="optimum", s=70,
                    palette=[colors["total"], "k", PALETTE[3]], markers=["o", "s", "X"], ax=ax)
    for (name, g), dy in zip(long_o.groupby("optimum", sort=False), (-0.12, 0.12, 0.0)):
        y = np.array([cases.index(c) for c in g["case"]]) + dy
        ax.hlines(y, g["low"], g["high"], colors=["k" if "energy" in name else colors["total"]], lw=1.5)
    ax.set(xlabel="packets on path a (%)", ylabel="", xlim=(-5, 105))
    legend_outside(ax)
    return fig


def backup_lines(bk: pd.DataFrame, colors: dict = COLORS, n_boot: int = rs.N_BOOT, seed: int = SEED):
    """Figure 8: modeled power against the demand for the runs `bk`
    (analysis.backup_runs), one hue per path, one style per mode."""
    bk_plot = bk.assign(path=lambda f: "path " + f["on path"])
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    sns.lineplot(data=bk_plot, x="demand_mbps", y="power_mw", hue="path", style="mode", markers=True, dashes=True,
                 palette=[colors["a"], colors["b"]], hue_order=["path a", "path b"],
                 errorbar=rs.mean_ci_errorbar(0.95, n_boot, seed), ax=ax)
    ax.set(xlabel="source data rate (Mbps)", ylabel="modeled power above base (mW)")
    legend_outside(ax)
    return fig


SERIES_TPUT = {"tput_eq_mbps": "total", "tput_a_eq_mbps": "path a", "tput_b_eq_mbps": "path b"}
SERIES_NJ = {"nj_per_bit": "radio + CPU", "radio_nj_per_bit": "radio only"}


def sweep_figure(runs: pd.DataFrame, opt: pd.DataFrame, demand: dict[str, float], title: str,
                 colors: dict[str, object], n_boot: int = rs.N_BOOT, seed: int = SEED):
    """Throughput (top) and modeled nJ/bit (bottom) against the share of
    packets on path a, per direction (columns), at one demand per direction
    (0 = backlogged): means over runs with 95% bootstrap CI bands (seaborn),
    the demand, and vertical lines at the throughput-optimal and the
    energy-optimal ratio of `opt` (optima). Returns
    the figure."""
    fig, axes = plt.subplots(2, 2, figsize=(9, 5.6), sharex=True)
    o = opt.set_index(["direction", "demand"])
    palette_t = {"total": colors["total"], "path a": colors["a"], "path b": colors["b"]}
    for j, direction in enumerate(("downlink", "uplink")):
        g = runs[(runs["direction"] == direction) & (runs["demand"] == demand[direction])]
        best = o.loc[(direction, demand[direction])]
        long_t = g.melt(id_vars=["ratio_a_pct"], value_vars=list(SERIES_TPUT), var_name="series",
                        value_name="y").replace({"series": SERIES_TPUT})
        long_e = g.melt(id_vars=["ratio_a_pct"], value_vars=list(SERIES_NJ), var_name="series",
                        value_name="y").replace({"series": SERIES_NJ})
        top, bottom = axes[0, j], axes[1, j]
        sns.lineplot(data=long_t, x="ratio_a_pct", y="y", hue="series", palette=palette_t, marker="o",
                     markersize=4, errorbar=rs.mean_ci_errorbar(0.95, n_boot, seed), ax=top)
        sns.lineplot(data=long_e, x="ratio_a_pct", y="y", style="series", color="k", marker="o", markersize=4,
                     errorbar=rs.mean_ci_errorbar(0.95, n_boot, seed), ax=bottom)
        if demand[direction] > 0:
            top.axhline(demand[direction], ls=":", color="grey", lw=1, label="demand")
        e_ratio = best["energy_opt_satisfying_ratio"]
        for ax in (top, bottom):
            ax.axvline(best["tput_opt_ratio"], color=colors["total"], ls="--", lw=1, label="throughput-optimal ratio")
            ax.axvline(e_ratio, color="k", ls="-.", lw=1, label="energy-optimal ratio")
        d_label = "backlogged" if demand[direction] == 0 else f"demand {demand[direction]:g} Mbps"
        top.set(title=f"{direction}, {d_label}", xlabel="", ylabel="throughput (Mbps)")
        bottom.set(xlabel="packets on path a (%)", ylabel="modeled energy (nJ/bit)")
        for ax in (top, bottom):
            if j == 0:
                ax.get_legend().remove()
            else:
                ax.legend()
                legend_outside(ax)
    fig.suptitle(title)
    return fig


class Chapter(NotebookChapter):
    """The chapter's state: the notebook's parameters, the power models, the
    runs and what later sections reuse (throughput, sweep, optima, claims)."""

    def __init__(self, *, study: str, devices: list[str], reference_device: str, published_dir: str, interim_dir: str,
                 results_dir: str,
                 radio_models: dict, cpu_model: str, radio_floor_fracs: list[float], satisfied_frac: float,
                 rel_tol_equal: float, rel_tol_approx: float, ratio_tol: float, power_models: dict,
                 robustness: dict):
        self.study, self.devices, self.interim_dir = study, reference_first(devices, reference_device), interim_dir
        self.radio_floor_fracs, self.satisfied_frac = radio_floor_fracs, satisfied_frac
        self.out = ChapterOutputs(results_dir, STAGE)
        self.v = Values(published_dir)
        self.radio_all, self.cpu, self.radio = energy_per_bit.chapter_models(power_models, radio_models, cpu_model)
        self.tol = mda.Tolerances(rel_tol_equal, rel_tol_approx, ratio_tol, satisfied_frac)
        self.robustness_settings = robustness

    def _glue(self, numbers: dict) -> None:
        for k, x in numbers.items():
            self.out.put(k, x)

    def load_runs(self) -> None:
        self.R = mda.load_runs(self.interim_dir, self.devices, self.radio, self.cpu)
        self.ref = self.R.ref
        self.m = mda.modeled_at(self.R, self.v, self.tol)
        facts = mda.capture_facts(self.R)
        self.out.put_text("ref_device", facts.pop("ref_device"))  # a name: text, not a number
        self._glue(facts)

    def captures(self) -> None:
        out = self.out
        out.table(mda.captures_table(self.R, self.devices), "captures", "Captures behind the measured results")
        out.provenance("measured: data/raw/mptcp-dualband/<device>/<session>/ (manifest.yaml with host, link and "
                       "configuration; runs.jsonl.gz with every run's tool output).")
        self._glue(mda.load_facts(self.R))

    def set_aside(self) -> None:
        out = self.out
        ea = mda.set_aside_table(self.R.early)
        if len(ea):
            out.table(ea, "mptcp_runs_set_aside",
                      "MPTCP runs of the first session (set aside): runs that used both paths",
                      shown=ea.rename(columns={"both_paths": "runs on both paths",
                                               "median_mbps": "median throughput (Mbps)"}))
            out.provenance("measured: per-path bytes from the phone's interface counters.")
        else:
            display(Markdown("*No MPTCP runs were set aside.*"))
        self._glue(mda.set_aside_facts(self.R))

    def fig1(self) -> None:
        out, ref = self.out, self.ref
        self.mp = mp = self.m["mp"]
        fig1 = mda.fig1_table(mp, self.R.rates_paper)
        out.table(fig1, "fig1_mptcp_throughput", "Backlogged MPTCP throughput: mean [95% CI], and SD, over runs",
                  shown=fig1_shown(fig1))
        out.provenance("measured: receiver payload over first-to-last byte; per path by the phone's interface byte "
                       "counters.")
        self.r = r = mda.fig1_ref(fig1, ref)
        out.figure(lambda: fig1_bars(mp[mp["device"] == ref], r), "fig1_mptcp_throughput",
                   alt="Bar chart of backlogged MPTCP throughput in Mbps per direction: path a, path b and the MPTCP "
                       "total, with 95% confidence intervals and a dashed line at the sum of the two paths' rates.",
                   caption="Mean throughput over the backlogged MPTCP runs (measured), bars: 95% bootstrap CI over "
                           "runs. Look at how close the brown total bar comes to the dashed sum of the path rates.")
        self._glue(mda.fig1_facts(r, self.v))

    def fig2_cdf(self) -> None:
        out, v = self.out, self.v
        self.dl_ref = dl_ref = mda.downlink_ref(mda.downlink_mptcp(self.R), self.ref)
        self.cdf = cdf = mda.cdf_table(dl_ref, self.R.rates_paper, v("cdf_below_threshold"))
        out.figure(lambda: cdf_lines(dl_ref, [(v("cdf_default_median"), "paper median, default", ":"),
                                              (v("cdf_affinity_median"), "paper median, SIRQ on big cores", "--")]),
                   "fig2_throughput_cdf",
                   alt="Empirical CDFs of downlink MPTCP throughput in Gbps, one curve per GRO or SoftIRQ "
                       "configuration, with vertical lines at the paper's two published medians.",
                   caption="Throughput CDFs per configuration (measured, reference host); black lines: the paper's "
                           "medians (published, §3.4). Look at whether the curves separate: on this host the medians "
                           f"differ by at most {mda.cdf_spread_pct(cdf):.1f}%.")
        out.table(cdf, "fig2_cdf_summary", "Downlink MPTCP throughput per configuration",
                  shown=cdf.rename(columns=mda.CDF_SHOWN))
        out.provenance("measured: throughput and the per-process CPU time (getrusage) of the phone and AP processes.")
        self._glue(mda.cdf_facts(cdf, dl_ref))

    def cpu_sources(self) -> None:
        out = self.out
        cpu_cmp = mda.cpu_sources_table(self.R.ref_energy())
        out.table(cpu_cmp, "cpu_sources",
                  "CPU seconds per run: per-process (precise) vs /proc/stat (whole host, tick-sampled)",
                  shown=cpu_cmp.rename(columns=mda.CPU_SHOWN))
        out.provenance("measured: getrusage of each mtmp_xfer process; /proc/stat of the whole (shared) host.")

    def power(self) -> None:
        out, mp, ref = self.out, self.mp, self.ref
        out.table(mda.power_models_table(self.radio_all, self.cpu), "power_models",
                  "Power models used (params.yaml power-models)")
        out.provenance("published radio powers (§4.1) and rates (§3.2); the CPU coefficients are assumed (modeled).")
        pw = self.m["pw"]
        out.table(pw, "fig3_power", "Modeled power of backlogged MPTCP (above base)",
                  shown=pw.rename(columns=mda.POWER_SHOWN))
        out.provenance("modeled from measured per-path throughput and CPU time.")
        self.ul_excess, self.ul_excess_ci = mda.uplink_power_excess(pw, mp[mp["device"] == ref], ref)
        self._glue(mda.power_facts(self.ul_excess, self.ul_excess_ci, self.v))

    def backlogged_sweep(self) -> None:
        out, satisfied_frac = self.out, self.satisfied_frac
        self.summary = out.save_table(self.m["summary"], "ratio_sweep")
        self.opt = opt = self.m["opt"]
        self.sweep = ratio_sweep.sweep_runs(self.R.ref_energy())
        self.draws = ratio_sweep.boot(self.sweep)
        self.oci = oci = ratio_sweep.optima_ci(self.draws, satisfied_frac)
        out.save_table(mda.optima_table(opt, oci), "optima")
        same = mda.coincide(opt)
        out.figure(lambda: sweep_figure(self.sweep, opt, {"downlink": 0.0, "uplink": 0.0}, "Backlogged traffic",
                                       COLORS),
                   "fig4_backlogged",
                   alt="Four panels against the share of packets on path a (%): throughput in Mbps (top) and "
                       "modeled energy per bit in nJ/bit (bottom), downlink (left) and uplink (right), with 95% "
                       "confidence bands and vertical lines at the throughput-optimal and energy-optimal ratios.",
                   caption="Backlogged traffic: throughput (measured) and energy per bit (modeled), means over runs "
                           "with 95% bootstrap CI bands. Look at the dashed line (throughput peak, near the rate "
                           "ratio) against the dash-dotted line (lowest nJ/bit): under this model they "
                           f"{same['downlink']} in the downlink and {same['uplink']} in the uplink.")
        out.provenance("measured throughput (runs of the ratio sweep); modeled nJ/bit from it and the measured CPU "
                       "time.")
        out.show(optima_shown(opt[opt["demand"] == 0], oci), "Throughput- and energy-optimal ratios, backlogged "
                 "(95% bootstrap interval over runs)", csv_href=out.href("optima"))
        out.provenance("measured throughput; modeled nJ/bit; intervals: bootstrap over the runs of each ratio.")

    def ratios_vs_paper(self) -> None:
        out, v = self.out, self.v
        self.cmp = cmp = self.m["cmp"]
        self._glue(mda.comparison_facts(cmp, self.opt, self.radio, v))
        self.cmp_ci = mda.comparison_cis(self.draws, cmp, self.ul_excess_ci)
        ratios = mda.ratios_table(cmp, self.ul_excess, self.cmp_ci, v)
        out.figure(lambda: ratio_dots(ratios), "ratios_vs_paper",
                   alt="Dot plot of five ratios with 95% bootstrap intervals and a dashed reference line at 1: "
                       "downlink and uplink throughput and energy per bit of the paper's ratio comparisons, and "
                       "uplink over downlink power; the paper's ratios are crosses.",
                   caption=f"The paper's comparisons as ratios (points: this artifact, lines: 95% bootstrap CI over "
                           f"runs; crosses: the paper). Right of the dashed line at 1 means more. The paper's ratio "
                           f"lies outside our interval in {mda.n_outside(ratios)} of {len(ratios)} rows.")
        out.save_table(ratios.drop(columns=["key"]), "ratios_vs_paper")
        out.provenance("measured throughput and modeled nJ/bit and power of the ratio sweep and the backlogged MPTCP "
                       "runs; published ratios (§4.1, §4.2); intervals: bootstrap over runs.")

    def demand_sweeps(self) -> None:
        out, opt = self.out, self.opt
        for k, dem in enumerate(mda.demands(self.summary)):
            title = f"Demand: {dem['downlink']:g} Mbps downlink, {dem['uplink']:g} Mbps uplink"
            out.figure(lambda dem=dem, title=title: sweep_figure(self.sweep, opt, dem, title, COLORS),
                       f"fig{5 + k}_demand",
                       alt=f"Four panels against the share of packets on path a (%) for a demand of "
                           f"{dem['downlink']:g} Mbps downlink and {dem['uplink']:g} Mbps uplink: throughput in Mbps "
                           "(top) and modeled nJ/bit (bottom), with 95% confidence bands and the throughput- and "
                           "energy-optimal ratios.",
                       caption=f"Paced demand of {dem['downlink']:g} Mbps downlink and {dem['uplink']:g} Mbps "
                               "uplink: throughput (measured) and energy per bit (modeled), means over runs "
                               "with 95% bootstrap CI bands; dotted: the demand. Look at which ratios reach the "
                               "demand, and where among them the nJ/bit curve is lowest (dash-dotted line).")
            out.provenance("measured throughput (runs of the ratio sweep); modeled nJ/bit.")
        out.show(optima_shown(opt[opt["demand"] > 0], self.oci), "Throughput- and energy-optimal ratios per "
                 f"demand (energy over the ratios meeting at least {self.satisfied_frac:.0%} of the demand; 95% "
                 "bootstrap interval over runs)", csv_href=out.href("optima"))
        out.provenance("measured throughput; modeled nJ/bit; intervals: bootstrap over the runs of each ratio.")

    def optima_compared(self) -> None:
        out = self.out
        long_o, cases = mda.optima_long(self.opt, self.oci, mda.paper_energy_optima(self.v))
        out.figure(lambda: optima_dots(long_o, cases), "optima_compared",
                   alt="Dot plot, one row per direction and demand, of the throughput-optimal and the energy-optimal "
                       "share of packets on path a (%), with 95% bootstrap intervals, and the paper's "
                       "energy-optimal ratios as crosses.",
                   caption="Throughput-optimal ratio (measured) and energy-optimal ratio (modeled) with 95% bootstrap "
                           "intervals over runs (lines; absent when every resample agrees), and the paper's "
                           "energy-optimal ratio (published). Look at the rows where the paper's cross sits far from "
                           "the black square.")
        out.provenance("measured throughput; modeled nJ/bit; published energy-optimal ratios (§4.2).")

    def guideline(self) -> None:
        out = self.out
        self.gl = gl = self.m["gl"]
        out.table(gl, "guideline_vs_search", "Figure 9 guideline vs exhaustive search", shown=mda.guideline_shown(gl))
        out.provenance("measured throughput; modeled nJ/bit; the guideline from the paper's published rules (§4.2).")
        self._glue(mda.guideline_facts(gl))

    def floor_sensitivity(self) -> None:
        out = self.out
        sens_wide = mda.floor_table(self.summary, self.radio, self.radio_floor_fracs, self.satisfied_frac)
        out.table(sens_wide, "floor_sensitivity",
                  "Energy-optimal ratio (% on path a) against the assumed wake-up floor f",
                  shown=sens_wide.rename(columns={"demand": "demand (Mbps, 0 = backlogged)"}))
        out.provenance("modeled (floor assumed) from measured throughput and CPU time.")

    def backup(self) -> None:
        out = self.out
        bk = mda.backup_runs(self.R.ref_energy())
        bk_sum = self.m["bk_sum"]
        out.table(bk_sum, "fig8_backup", "Backup mode vs 0 packets (downlink)",
                  shown=bk_sum.rename(columns=mda.BACKUP_SHOWN))
        self.bk_diff = bk_diff = self.m["bk_diff"]
        out.figure(lambda: backup_lines(bk), "fig8_backup",
                   alt="Line chart of modeled power above base (mW) against the source data rate (Mbps), for "
                       "traffic on path a or path b, with MPTCP backup mode and with 0 packets on the other path; "
                       "the two modes' lines overlap.",
                   caption="Modeled power from measured per-path throughput and CPU time, means over runs with 95% "
                           "bootstrap CI. Look at whether the backup-mode line and the 0-packet line of the same "
                           f"path separate: they differ by at most {bk_diff:.1f}%.")
        out.provenance("measured throughput and per-path bytes; modeled power from them and the measured CPU time "
                       "(table and figure).")
        out.put("backup_leak_max", mda.backup_leak_max(bk_sum))

    def claims(self) -> None:
        """The claims table, its verdicts and the key findings."""
        out = self.out
        intervals = mda.claim_intervals(self.oci, self.r, self.cmp_ci)
        claims = mda.claims_at(self.m, self.v, self.r, self.cdf, self.tol, intervals)
        self.rob = robustness.study_robustness(self._claims_at, {self.cpu.name: self.cpu}, claims, self.robustness_settings)
        # The radio model's own assumptions (idle 0, linearity) vary with the CPU coefficients.
        floors = mda.floor_labels(self.rob.claims, mda.floor_table(self.summary, self.radio, self.radio_floor_fracs,
                                                                   self.satisfied_frac), self.tol)
        self.rob = robustness.with_labels(self.rob, floors)
        self.claims_table = self.rob.claims
        ref = self.R.manifests[self.R.ref].values()
        if any(capture_reader.background_load(m) is None for m in ref):
            self.claims_table = cl.with_note(self.claims_table,
                                             self.claims_table["provenance"].isin(["measured", "modeled"]), cl.UNGATED)
        cl.write_claims(self.claims_table, out.results_dir / "claims.csv")
        out.show(claims_shown(self.claims_table, intervals),
                 "Claims of the mptcp-dualband paper and their verdicts",
                 csv_href=site_href(out.results_dir / "claims.csv"))
        out.provenance("published paper values against measured throughput and modeled energy (the provenance "
                       "column says which); intervals: bootstrap over runs (seeded) or Student-t for a mean.")
        out.findings(self.claims_table, headline=HEADLINE, intervals=intervals)
        show_robustness(out, self.rob)

    def _claims_at(self, models: dict) -> pd.DataFrame:
        """The claims with the runs' CPU time priced by models[<the CPU model>]."""
        R = self.R
        priced = mda.priced_runs(R.runs, R.manifests, self.devices, self.radio, models[self.cpu.name])
        return mda.claims_at(mda.modeled_at(priced, self.v, self.tol), self.v, self.r, self.cdf, self.tol)

    def metrics(self) -> None:
        self.out.put_counts(cl.verdict_counts(self.claims_table))
        write_metrics(self.out.results_dir / "metrics.json",
                      mda.metrics(self.R, self.r, self.cdf, self.cmp, self.gl, self.claims_table))


OPTIMA_SHOWN = {"tput_opt_ratio": "throughput-optimal (% on a)", "tput_opt_mbps": "throughput there (Mbps)",
                "energy_opt_satisfying_ratio": "energy-optimal (% on a)",
                "energy_opt_satisfying_nj": "energy there (nJ/bit)",
                "energy_opt_both_ratio": "energy-optimal, two paths (% on a)"}


def optima_shown(opt: pd.DataFrame, oci: pd.DataFrame) -> pd.DataFrame:
    """The optima (optima) for people: each optimal
    ratio with its bootstrap interval (`optima_ci`) as "73 [70, 73]", units
    in the headers."""
    f = opt.merge(oci, on=["direction", "demand"])
    for col in ("tput_opt_ratio", "energy_opt_satisfying_ratio", "energy_opt_both_ratio"):
        f = with_interval(f, col, f"{col}_low", f"{col}_high")
    return (f[["direction", "demand", *OPTIMA_SHOWN]]
            .rename(columns={"demand": "demand (Mbps, 0 = backlogged)", **OPTIMA_SHOWN}))


FIG1_SHOWN = {"n": "runs", "total": "MPTCP total (Mbps)", "total_sd": "SD total (Mbps)", "path_a": "path a (Mbps)",
              "path_a_sd": "SD path a (Mbps)", "path_b": "path b (Mbps)", "path_b_sd": "SD path b (Mbps)",
              "sum of path rates": "sum of path rates (Mbps)", "% of sum": "of the sum (%)"}


def fig1_shown(fig1: pd.DataFrame) -> pd.DataFrame:
    """fig1_table for people: the total with its interval, units in headers."""
    return with_interval(fig1, "total", "total_ci_low", "total_ci_high").rename(columns=FIG1_SHOWN)



def claims_shown(claims_table: pd.DataFrame, intervals: dict) -> pd.DataFrame:
    """The claims table for people: paper value with its relation, ours with
    its interval."""
    shown = claims_table.assign(
        paper=[paper_text(rel, val) for rel, val in zip(claims_table["paper_relation"], claims_table["paper_value"])],
        ours=[numbers.interval(a, *shown_interval(row, intervals)) for (_, row), a in
              zip(claims_table.set_index("claim_id").iterrows(), claims_table["artifact_value"])])
    return (shown[["claim", "location", "paper", "ours", "unit", "tolerance", "verdict", "category", "provenance",
                   "robustness"]]
            .rename(columns={"ours": "this artifact [95% CI]"}))
