"""The mptcp-dualband chapter (notebooks/mptcp-dualband.py): everything it
shows, one `Chapter` method per code cell, in the order the chapter reads.

The figures (seaborn, the book's theme) are drawn from tables made by
mobitrace.studies.mptcp_dualband.analysis; the methods save the results
tables, show them with their provenance and glue the numbers the prose uses.
Later sections use what earlier ones computed (the runs, the sweep, the optima).
"""

from __future__ import annotations

import copy
import html
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from IPython.display import Markdown, display

from mobitrace.book.build import with_interval
from mobitrace.book.chapter import (ChapterOutputs, DevicePage, NotebookChapter, paper_text, reference_first,
                                    shown_interval, site_href)
from mobitrace.book.figures import PALETTE, legend_outside
from mobitrace.book.robustness import robustness_shown
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
from mobitrace.studies.mptcp_dualband import claims as mdc
from mobitrace.studies.mptcp_dualband import ratios as ratio_sweep
from mobitrace.studies.mptcp_dualband import energy as energy_per_bit
from mobitrace.studies import registry
from mobitrace.studies.mptcp_dualband.schema import DIRECTIONS

STAGE = "analyze_mptcp_dualband"
# The paper's energy claims first: the throughput claims after them are testbed
# checks (the landing card shows the first).
HEADLINE = ["dl_energy_cost", "dl_500_energy_opt", "ul_power_excess", "mptcp_sum_downlink", "tput_opt_ratio_dl",
            "dl_tput_gain"]

COLORS = {"a": PALETTE[0], "b": PALETTE[1], "total": PALETTE[5]}  # not green/vermilion: verdict colours


def fig1_bars(mp_ref: pd.DataFrame, r: pd.DataFrame, colors: dict = COLORS, n_boot: int = rs.N_BOOT,
              seed: int = SEED, *, alpha: float):
    """Figure 1: backlogged MPTCP throughput per direction, bars for path a,
    path b and the total (means over the runs `mp_ref`, 100(1 - alpha)% CI: `rs.mean_ci_errorbar`),
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
                errorbar=rs.mean_ci_errorbar(alpha, n_boot, seed),
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


# Short row labels (a phone's narrow layout has room for about 22 characters); the caption names the ratios.
RATIO_LABELS = {"dl_tput_gain": "downlink throughput", "dl_energy_cost": "downlink nJ/bit",
                "ul_tput_gain": "uplink throughput", "ul_energy_cost": "uplink nJ/bit",
                "ul_power_excess": "power, up / down"}


def ratio_dots(ratios: pd.DataFrame, alpha: float):
    """The paper's comparisons as ratios with their intervals
    (mobitrace.stats.resampling.ratio_points), legend outside."""
    ax = rs.ratio_points(ratios.assign(comparison=ratios["key"].map(RATIO_LABELS)),
                         xlabel="ratio (1 = the same; throughput measured, nJ/bit and power modeled)", alpha=alpha)
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


def backup_lines(bk: pd.DataFrame, colors: dict = COLORS, n_boot: int = rs.N_BOOT, seed: int = SEED, *, alpha: float):
    """Figure 8: modeled power against the demand for the runs `bk`
    (analysis.backup_runs), one hue per path, one style per mode."""
    bk_plot = bk.assign(path=lambda f: "path " + f["on path"])
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    sns.lineplot(data=bk_plot, x="demand_mbps", y="power_mw", hue="path", style="mode", markers=True, dashes=True,
                 palette=[colors["a"], colors["b"]], hue_order=["path a", "path b"],
                 errorbar=rs.mean_ci_errorbar(alpha, n_boot, seed), ax=ax)
    ax.set(xlabel="source data rate (Mbps)", ylabel="modeled power above base (mW)")
    legend_outside(ax)
    return fig


SERIES_TPUT = {"tput_eq_mbps": "total", "tput_a_eq_mbps": "path a", "tput_b_eq_mbps": "path b"}
SERIES_NJ = {"nj_per_bit": "radio + CPU", "radio_nj_per_bit": "radio only"}


def sweep_figure(runs: pd.DataFrame, opt: pd.DataFrame, demand: dict[str, float], title: str,
                 colors: dict[str, object], n_boot: int = rs.N_BOOT, seed: int = SEED, *, alpha: float):
    """Throughput (top) and modeled nJ/bit (bottom) against the share of
    packets on path a, per direction (columns), at one demand per direction
    (0 = backlogged): means over runs with 100(1 - alpha)% CI bands (seaborn, `rs.mean_ci_errorbar`),
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
                     markersize=4, errorbar=rs.mean_ci_errorbar(alpha, n_boot, seed), ax=top)
        sns.lineplot(data=long_e, x="ratio_a_pct", y="y", style="series", color="k", marker="o", markersize=4,
                     errorbar=rs.mean_ci_errorbar(alpha, n_boot, seed), ax=bottom)
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


def facets_figure(runs: pd.DataFrame, opt: pd.DataFrame, summary: pd.DataFrame, cases: list[dict[str, float]],
                  satisfied_frac: float, colors: dict = COLORS, n_boot: int = rs.N_BOOT, seed: int = SEED, *, alpha: float):
    """Figures 4 to 7 as one faceted figure: modeled nJ/bit (radio + CPU)
    against the share of packets on path a, one row per demand case
    (`cases`: {direction: demand}, 0 = backlogged), one column per direction;
    means over runs with 100(1 - alpha)% CI bands, hollow marks at the ratios
    that miss `satisfied_frac` of the demand, and vertical lines at the
    throughput-optimal and energy-optimal ratios."""
    fig, axes = plt.subplots(len(cases), 2, figsize=(8, 2.1 * len(cases)), sharex=True, squeeze=False)
    o = opt.set_index(["direction", "demand"])
    for i, case in enumerate(cases):
        for j, direction in enumerate(DIRECTIONS):
            ax, demand = axes[i, j], case[direction]
            g = runs[(runs["direction"] == direction) & (runs["demand"] == demand)]
            sns.lineplot(data=g, x="ratio_a_pct", y="nj_per_bit", color="k", errorbar=rs.mean_ci_errorbar(alpha, n_boot, seed),
                         ax=ax, label="energy per bit (modeled)" if i == j == 0 else None)
            s = summary[(summary["direction"] == direction) & (summary["demand"] == demand)]
            meets = s["tput_mbps"] >= satisfied_frac * demand if demand > 0 else s["tput_mbps"] > -1
            ax.scatter(s.loc[meets, "ratio_a_pct"], s.loc[meets, "nj_per_bit"], color="k", s=14, zorder=3,
                       label="meets the demand" if i == j == 0 else None)
            ax.scatter(s.loc[~meets, "ratio_a_pct"], s.loc[~meets, "nj_per_bit"], facecolors="white",
                       edgecolors="k", s=14, zorder=3, label="misses the demand" if i == j == 0 else None)
            best = o.loc[(direction, demand)]
            ax.axvline(best["tput_opt_ratio"], color=colors["total"], ls="--", lw=1.2,
                       label="throughput-optimal ratio" if i == j == 0 else None)
            ax.axvline(best["energy_opt_satisfying_ratio"], color="k", ls="-.", lw=1.2,
                       label="energy-optimal ratio" if i == j == 0 else None)
            ax.set(title=f"{direction}, {'backlogged' if demand == 0 else f'{demand:g} Mbps'}",
                   xlabel="packets on path a (%)" if i == len(cases) - 1 else "",
                   ylabel="nJ/bit" if j == 0 else "")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    axes[0, 0].get_legend().remove()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, frameon=False)
    fig.set_layout_engine("constrained")
    return fig


def demand_caption(dem: dict[str, float], opt: pd.DataFrame, paper: dict, ci: str) -> str:
    """A demand figure's caption: what it shows and what this demand's optima are (each caption its own)."""
    o = opt.set_index(["direction", "demand"])
    found = "; ".join(
        f"{d} {dem[d]:g} Mbps: throughput-optimal {o.loc[(d, dem[d]), 'tput_opt_ratio']:g}%, energy-optimal "
        f"{o.loc[(d, dem[d]), 'energy_opt_satisfying_ratio']:g}%"
        + (f" (paper {paper[(d, dem[d])]:g}%)" if (d, dem[d]) in paper else "") for d in DIRECTIONS)
    return (f"Paced demand of {dem['downlink']:g} Mbps downlink and {dem['uplink']:g} Mbps uplink: throughput "
            f"(measured) and energy per bit (modeled), {ci} CI bands; dotted: the demand. Packets on path "
            f"a at the optima: {found}.")


class PageOutputs(ChapterOutputs):
    """One device's outputs for its generated page (registry.Chapter.
    device_pages): files under tables/<device>/ and figures/<device>/ of
    the chapter's results, each shown on the device's DevicePage with a
    provenance box naming only that device's stage (and the published
    numbers where the text names them); nothing is glued or shown in the
    notebook. `reuse`: a folder of figures already drawn for this device
    (the chapter's own, for the reference device), copied, not drawn again."""

    def __init__(self, results_dir: str | Path, stage: str, device_stage, device: str, page: DevicePage,
                 reuse: Path | None = None):
        super().__init__(results_dir, stage, device_stage)
        self.tables_dir, self.figures_dir = self.tables_dir / device, self.figures_dir / device
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        self.figures_dir.mkdir(parents=True, exist_ok=True)
        self.device, self.page, self.reuse = device, page, reuse
        self._csv: dict[str, Path] = {}

    def put(self, name, value) -> None:  # noqa: D102 - the chapter's prose is the reference device's
        pass

    put_text = put

    def put_counts(self, counts) -> None:
        pass

    def put_all(self, values) -> None:
        pass

    def href(self, name: str) -> str:
        href = super().href(name)
        self._csv[href] = self.tables_dir / f"{name}.csv"
        return href

    def table(self, frame, name, caption, shown=None, index=False, digits=3):
        self.save_table(frame, name)
        self.show(frame if shown is None else shown, caption, digits=digits, index=index, csv_href=self.href(name))
        return frame

    def show(self, frame, caption, digits=3, index=False, csv_href=None, html_columns=()) -> None:
        self.page.table(frame, caption, csv=self._csv.get(csv_href), index=index, html_columns=html_columns)

    def provenance(self, text: str, stage: str | None = None) -> None:
        self.page.provenance(text, [self.device_stage(self.device),
                                    *(["ingest_published"] if "published" in text.lower() else [])])

    def device_provenance(self, text: str, device: str, published: bool = False) -> None:
        self.provenance(text)

    def figure(self, fig, name, alt, caption, folded=None) -> None:
        path = self.figures_dir / f"{name}.svg"
        drawn = self.reuse / f"{name}.svg" if self.reuse else None
        if drawn is not None and drawn.is_file():
            self._copy_svg(drawn, name)
        else:
            fig = fig() if callable(fig) else fig
            self._save_svg(fig, name)
            plt.close(fig)
        self.page.figure(path, f"{name}-{self.device}", alt, caption)

    def findings(self, *args, **kwargs) -> None:
        pass


STUDY = "mptcp-dualband"


class Chapter(NotebookChapter):
    """The chapter's state: the notebook's parameters, the power models, the
    runs and what later sections reuse (throughput, sweep, optima, claims).
    Its sections work on one device, `ref` (the runs `R`); the chapter
    itself is the reference device's, and `device_sections` runs every
    section again for each device (`on_device`) onto that device's page."""

    def __init__(self, *, study: str, devices: list[str], reference_device: str, reference_reason: str,
                 published_dir: str, interim_dir: str, results_dir: str,
                 radio_models: dict, cpu_model: str, radio_floor_fracs: list[float], satisfied_frac: float,
                 rel_tol_equal: float, rel_tol_approx: float, ratio_tol: float, alpha: float, power_models: dict,
                 robustness: dict):
        self.study, self.devices, self.interim_dir = study, reference_first(devices, reference_device), interim_dir
        self.reference_reason = reference_reason
        self.radio_floor_fracs, self.satisfied_frac = radio_floor_fracs, satisfied_frac
        self.out = ChapterOutputs(results_dir, STAGE, registry.by_slug()[STUDY].device_sources_stage)
        self.v = Values(published_dir)
        self.radio_all, self.cpu, self.radio = energy_per_bit.chapter_models(power_models, radio_models, cpu_model)
        self.tol = mdc.Tolerances(rel_tol_equal, rel_tol_approx, ratio_tol, satisfied_frac, alpha)
        self.robustness_settings = robustness
        self.memo: dict = {}  # shared with the per-device copies: what is computed once per device
        self.dev: dict[str, Chapter] = {}

    @property
    def ci(self) -> str:
        """The intervals' level, for captions: "95%" at alpha 0.05."""
        return numbers.level(self.tol.alpha)

    def _once(self, key, make):
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]

    def _glue(self, numbers: dict) -> None:
        for k, x in numbers.items():
            self.out.put(k, x)

    def _prov(self, text: str) -> None:
        """A provenance box of a figure or table of this device alone: its capture, and the published numbers
        where the text names them."""
        self.out.device_provenance(text, self.ref, published="published" in text.lower())

    def load_runs(self) -> None:
        self.R_all = mda.load_runs(self.interim_dir, self.devices, self.radio, self.cpu)
        self._use(self.devices[0])
        facts = mda.capture_facts(self.R)
        self.out.put_text("ref_device", facts.pop("ref_device"))  # a name: text, not a number
        self.out.put_text("ref_reason", self.reference_reason)
        self.out.put_text("devices_text", f"each of the {len(self.devices)} devices" if len(self.devices) > 1
                          else "the one device captured so far")
        self._glue(facts)

    def capture(self) -> None:
        """The capture's sections in one step, for the findings page, which writes their tables and facts
        without showing them (the methods page shows each)."""
        self.load_runs()
        self.captures()
        self.set_aside()

    def model_inputs(self) -> None:
        """The per-configuration table, CPU sources, power model and sweeps in one step, for the findings page,
        which needs their outputs and facts but shows them on the methods page."""
        self.cdf_table()
        self.cpu_sources()
        self.power()
        self.backlogged_sweep()
        self.ratios_vs_paper()
        self.demand_sweeps()

    def _use(self, device: str) -> None:
        self.ref = device
        self.R = self.R_all.on(device)
        self.m = self._once(("m", device), lambda: mdc.modeled_at(self.R, self.v, self.tol))

    def on_device(self, device: str, out: ChapterOutputs) -> "Chapter":
        """A copy of the chapter for `device` alone, writing to `out`."""
        dev = copy.copy(self)
        dev.out, dev.devices, dev.R_all = out, [device], self.R_all.on(device)
        dev._use(device)
        return dev

    def captures(self) -> None:
        out = self.out
        out.table(mda.captures_table(self.R_all, self.devices), "captures", "Captures behind the measured results")
        out.provenance("measured: data/raw/mptcp-dualband/<device>/<session>/ (manifest.yaml with host, link and "
                       "configuration; runs.jsonl.gz with every run's tool output).")
        self._glue(mda.load_facts(self.R))

    def set_aside(self) -> None:
        out = self.out
        ea = mda.set_aside_table(self.R_all.early)
        if len(ea):
            out.table(ea, "mptcp_runs_set_aside",
                      "MPTCP runs of the first session (set aside): runs that used both paths",
                      shown=ea.rename(columns={"both_paths": "runs on both paths",
                                               "median_mbps": "median throughput (Mbps)"}))
            out.provenance("measured: per-path bytes from the phone's interface counters.")
        elif isinstance(out, PageOutputs):
            out.page.text("*No MPTCP runs were set aside.*")
        else:
            display(Markdown("*No MPTCP runs were set aside.*"))
        self._glue(mda.set_aside_facts(self.R_all))

    def fig1(self) -> None:
        out, ref = self.out, self.ref
        self.mp = mp = self.m["mp"]
        self.fig1_frame = mda.fig1_table(mp, self.R.rates_paper, self.tol.alpha)
        out.put("ci_pct", 100 * (1 - self.tol.alpha))
        self.r = r = mda.fig1_ref(self.fig1_frame, ref)
        out.figure(lambda: fig1_bars(mp, r, alpha=self.tol.alpha), "fig1_mptcp_throughput",
                   alt="Bar chart of backlogged MPTCP throughput in Mbps per direction: path a, path b and the MPTCP "
                       f"total, with {self.ci} confidence intervals and a dashed line at the sum of the two paths' rates.",
                   caption=f"Mean throughput over the backlogged MPTCP runs (measured), bars: {self.ci} CI over "
                           "runs. Look at how close the brown total bar comes to the dashed sum of the path rates.")
        self._prov("measured: receiver payload over first-to-last byte; per path by the phone's interface byte "
                   "counters.")
        self._glue(mda.fig1_facts(r, self.v))

    def fig1_table(self) -> None:
        fig1 = self.fig1_frame
        self.out.table(fig1, "fig1_mptcp_throughput", f"Backlogged MPTCP throughput: mean [{self.ci} CI], and SD, over runs",
                       shown=fig1_shown(fig1))
        self._prov("measured: receiver payload over first-to-last byte; per path by the phone's interface byte "
                   "counters.")

    def fig2_cdf(self) -> None:
        out, v = self.out, self.v
        self.dl_ref = dl_ref = mda.downlink_ref(mda.downlink_mptcp(self.R), self.ref)
        self.cdf = cdf = mda.cdf_table(dl_ref, self.R.rates_paper, v("cdf_below_threshold"))
        self.gro_ci = self._once(("gro_ci", self.ref), lambda: mda.gro_gain_ci(dl_ref, self.tol.alpha))
        out.figure(lambda: cdf_lines(dl_ref, [(v("cdf_default_median"), "paper median, default", ":"),
                                              (v("cdf_affinity_median"), "paper median, SIRQ on big cores", "--")]),
                   "fig2_throughput_cdf",
                   alt="Empirical CDFs of downlink MPTCP throughput in Gbps, one curve per GRO or SoftIRQ "
                       "configuration, with vertical lines at the paper's two published medians.",
                   caption="Throughput CDFs per configuration (measured); black lines: the paper's "
                           "medians (published, §3.4). Look at whether the curves separate: here the medians "
                           f"differ by at most {mda.cdf_spread_pct(cdf):.1f}%.")
        self._prov("measured: throughput of each run; published: the paper's medians.")
        self._glue(mda.cdf_facts(cdf, dl_ref, self.gro_ci, self.tol.alpha))

    def cdf_table(self) -> None:
        cdf = self.cdf
        self.out.table(cdf, "fig2_cdf_summary", "Downlink MPTCP throughput per configuration",
                       shown=cdf.rename(columns=mda.CDF_SHOWN))
        self._prov("measured: throughput and the per-process CPU time (getrusage) of the phone and AP processes.")

    def cpu_sources(self) -> None:
        out = self.out
        cpu_cmp = mda.cpu_sources_table(self.R.ref_energy())
        out.table(cpu_cmp, "cpu_sources",
                  "CPU seconds per run: per-process (precise) vs /proc/stat (whole host, tick-sampled)",
                  shown=cpu_cmp.rename(columns=mda.CPU_SHOWN))
        self._prov("measured: getrusage of each mtmp_xfer process; /proc/stat of the whole (shared) host.")

    def power(self) -> None:
        out, mp, ref = self.out, self.mp, self.ref
        out.table(mda.power_models_table(self.radio_all, self.cpu), "power_models",
                  "Power models used (params.yaml power-models)")
        out.provenance("published radio powers (§4.1) and rates (§3.2); the CPU coefficients are assumed (modeled).",
                       "ingest_published")
        pw = self.m["pw"]
        out.table(pw, "fig3_power", "Modeled power of backlogged MPTCP (above base)",
                  shown=pw.rename(columns=mda.POWER_SHOWN))
        self._prov("modeled from measured per-path throughput and CPU time.")
        self.ul_excess, self.ul_excess_ci = self._once(("ul_excess", ref),
                                                       lambda: mda.uplink_power_excess(pw, mp, ref, self.tol.alpha))
        self._glue(mda.power_facts(self.ul_excess, self.ul_excess_ci, self.v))

    def backlogged_sweep(self) -> None:
        out, satisfied_frac = self.out, self.satisfied_frac
        self.summary = out.save_table(self.m["summary"], "ratio_sweep")
        self.opt = opt = self.m["opt"]
        self.sweep = ratio_sweep.sweep_runs(self.R.ref_energy())
        self.draws = self._once(("draws", self.ref), lambda: ratio_sweep.boot(self.sweep))
        self.oci = oci = self._once(("oci", self.ref), lambda: ratio_sweep.optima_ci(self.draws, satisfied_frac, self.tol.alpha))
        out.save_table(mda.optima_table(opt, oci), "optima")
        same = mda.coincide(opt)
        out.figure(lambda: sweep_figure(self.sweep, opt, {"downlink": 0.0, "uplink": 0.0}, "Backlogged traffic",
                                       COLORS, alpha=self.tol.alpha),
                   "fig4_backlogged",
                   alt="Four panels against the share of packets on path a (%): throughput in Mbps (top) and "
                       f"modeled energy per bit in nJ/bit (bottom), downlink (left) and uplink (right), with {self.ci} "
                       "confidence bands and vertical lines at the throughput-optimal and energy-optimal ratios.",
                   caption="Backlogged traffic: throughput (measured) and energy per bit (modeled), means over runs "
                           f"with {self.ci} CI bands. Look at the dashed line (throughput peak, near the rate "
                           "ratio) against the dash-dotted line (lowest nJ/bit): under this model they "
                           f"{same['downlink']} in the downlink and {same['uplink']} in the uplink.")
        self._prov("measured throughput (runs of the ratio sweep); modeled nJ/bit from it and the measured CPU "
                   "time.")

    def optima(self) -> None:
        """The optima of every case, backlogged and per demand, with their intervals (one table)."""
        self.out.show(optima_shown(self.opt, self.oci), "Throughput- and energy-optimal ratios, backlogged and "
                      f"per demand (energy over the ratios meeting at least {self.satisfied_frac:.0%} of the "
                      f"demand; {self.ci} percentile bootstrap interval over runs, from 30 runs per ratio)", csv_href=self.out.href("optima"))
        self._prov("measured throughput; modeled nJ/bit; intervals over the runs of each ratio: percentile bootstrap from 30 runs per ratio, none below.")

    def sweep_facets(self) -> None:
        """Figures 4 to 7 in one faceted figure (energy per bit per demand case)."""
        cases = [{"downlink": 0.0, "uplink": 0.0}, *mda.demands(self.summary)]
        self.out.figure(lambda: facets_figure(self.sweep, self.opt, self.summary, cases, self.satisfied_frac,
                                              alpha=self.tol.alpha),
                        "fig4_7_energy_facets",
                        alt="Small multiples, one row per demand (backlogged, then each paced demand) and one column "
                            "per direction: modeled energy per bit (nJ/bit) against the share of packets on path a "
                            f"(%), with {self.ci} confidence bands, hollow marks where a ratio misses the demand, and "
                            "vertical lines at the throughput-optimal and energy-optimal ratios.",
                        caption="Figures 4 to 7 in one: modeled energy per bit against the packet ratio for each "
                                f"demand, means over runs with {self.ci} CI bands. Look at where the dash-dotted "
                                "line (lowest nJ/bit among the filled marks, which meet the demand) sits against "
                                "the dashed one (most throughput). Throughput per ratio: the four-panel Figures 4 "
                                "to 7 of each device's page.")
        self._prov("measured throughput (runs of the ratio sweep); modeled nJ/bit from it and the measured CPU time.")

    def ratios_vs_paper(self) -> None:
        out, v = self.out, self.v
        self.cmp = cmp = self.m["cmp"]
        self._glue(mda.comparison_facts(cmp, self.opt, self.radio, v))
        self.cmp_ci = {**mda.comparison_cis(self.sweep, cmp, self.ul_excess_ci, self.tol.alpha), "gro_gain": self.gro_ci}
        self._glue(mda.comparison_phrases(cmp, self.cmp_ci, self.tol.alpha))
        ratios = mda.ratios_table(cmp, self.ul_excess, self.cmp_ci, v)
        out.figure(lambda: ratio_dots(ratios, self.tol.alpha), "ratios_vs_paper",
                   alt=f"Dot plot of five ratios with {self.ci} intervals and a dashed reference line at 1: "
                       "downlink and uplink throughput and energy per bit of the paper's ratio comparisons, and "
                       "uplink over downlink power; the paper's ratios are crosses.",
                   caption=f"The paper's comparisons as ratios (points: this artifact, lines: {self.ci} CI over "
                           f"runs; crosses: the paper): downlink {mda.pair(cmp.dl_t)} over {mda.pair(cmp.dl_against)}, "
                           f"uplink {mda.pair(cmp.ul_a)} over {mda.pair(cmp.ul_b)}, and uplink over downlink power of "
                           f"backlogged MPTCP. Right of the dashed line at 1 means more. The paper's ratio "
                           f"lies outside our interval in {mda.n_outside(ratios)} of {len(ratios)} rows.")
        out.save_table(ratios.drop(columns=["key"]), "ratios_vs_paper")
        self._prov("measured throughput and modeled nJ/bit and power of the ratio sweep and the backlogged MPTCP "
                   "runs; published ratios (§4.1, §4.2); intervals over runs: t of the log ratio, none below 3 runs.")

    def demand_sweeps(self) -> None:
        out, opt = self.out, self.opt
        paper = mda.paper_energy_optima(self.v)
        for k, dem in enumerate(mda.demands(self.summary)):
            title = f"Demand: {dem['downlink']:g} Mbps downlink, {dem['uplink']:g} Mbps uplink"
            out.figure(lambda dem=dem, title=title: sweep_figure(self.sweep, opt, dem, title, COLORS, alpha=self.tol.alpha),
                       f"fig{5 + k}_demand",
                       alt=f"Four panels against the share of packets on path a (%) for a demand of "
                           f"{dem['downlink']:g} Mbps downlink and {dem['uplink']:g} Mbps uplink: throughput in Mbps "
                           f"(top) and modeled nJ/bit (bottom), with {self.ci} confidence bands and the throughput- and "
                           "energy-optimal ratios.",
                       caption=demand_caption(dem, opt, paper, self.ci))
            self._prov("measured throughput (runs of the ratio sweep); modeled nJ/bit; published energy-optimal "
                       "ratios (§4.2).")

    def optima_compared(self) -> None:
        out = self.out
        long_o, cases = mda.optima_long(self.opt, self.oci, mda.paper_energy_optima(self.v))
        out.figure(lambda: optima_dots(long_o, cases), "optima_compared",
                   alt="Dot plot, one row per direction and demand, of the throughput-optimal and the energy-optimal "
                       f"share of packets on path a (%), with {self.ci} intervals, and the paper's "
                       "energy-optimal ratios as crosses.",
                   caption=f"Throughput-optimal ratio (measured) and energy-optimal ratio (modeled) with {self.ci} percentile bootstrap "
                           "intervals over runs (lines; absent below 30 runs per ratio or when every resample agrees), and the paper's "
                           "energy-optimal ratio (published). Look at the rows where the paper's cross sits far from "
                           "the black square.")
        self._prov("measured throughput; modeled nJ/bit; published energy-optimal ratios (§4.2).")

    def guideline(self) -> None:
        out = self.out
        self.gl = gl = self.m["gl"]
        out.table(gl, "guideline_vs_search", "Figure 9 guideline vs exhaustive search", shown=mda.guideline_shown(gl))
        self._prov("measured throughput; modeled nJ/bit; the guideline from the paper's published rules (§4.2).")
        self._glue(mda.guideline_facts(gl))

    def floor_sensitivity(self) -> None:
        out = self.out
        self.floor_wide = sens_wide = mda.floor_table(self.summary, self.radio, self.radio_floor_fracs,
                                                      self.satisfied_frac)
        out.table(sens_wide, "floor_sensitivity",
                  "Energy-optimal ratio (% on path a) against the assumed wake-up floor f",
                  shown=sens_wide.rename(columns={"demand": "demand (Mbps, 0 = backlogged)"}))
        self._prov("modeled (floor assumed) from measured throughput and CPU time.")

    def backup(self) -> None:
        out = self.out
        bk = mda.backup_runs(self.R.ref_energy())
        bk_sum = self.m["bk_sum"]
        out.table(bk_sum, "fig8_backup", "Backup mode vs 0 packets (downlink)",
                  shown=bk_sum.rename(columns=mda.BACKUP_SHOWN))
        self.bk_diff = bk_diff = self.m["bk_diff"]
        out.figure(lambda: backup_lines(bk, alpha=self.tol.alpha), "fig8_backup",
                   alt="Line chart of modeled power above base (mW) against the source data rate (Mbps), for "
                       "traffic on path a or path b, with MPTCP backup mode and with 0 packets on the other path; "
                       "the two modes' lines overlap.",
                   caption=f"Modeled power from measured per-path throughput and CPU time, means over runs with {self.ci} "
                           "CI. Look at whether the backup-mode line and the 0-packet line of the same "
                           f"path separate: they differ by at most {bk_diff:.1f}%.")
        self._prov("measured throughput and per-path bytes; modeled power from them and the measured CPU time "
                   "(table and figure).")
        out.put("backup_leak_max", mda.backup_leak_max(bk_sum))

    # Every section of one device, in the order its page reads: (heading, methods).
    SECTIONS = (("Capture", ("captures", "set_aside")),
                ("Figure 1: MPTCP throughput per path and in total", ("fig1", "fig1_table")),
                ("Figure 2: throughput CDFs, GRO and SoftIRQ steering", ("fig2_cdf", "cdf_table")),
                ("CPU sources", ("cpu_sources",)),
                ("Figure 3 analog: modeled power", ("power",)),
                ("Figure 4: the packet ratio, backlogged", ("backlogged_sweep", "ratios_vs_paper")),
                ("Figures 5 to 7: paced demands", ("demand_sweeps", "sweep_facets", "optima", "optima_compared")),
                ("The Figure 9 guideline against exhaustive search", ("guideline", "floor_sensitivity")),
                ("Figure 8: backup mode vs a 0-packet ratio", ("backup",)))

    def device_sections(self) -> None:
        """Every section again for each device, onto its page
        (registry.Chapter.device_pages; written by device_pages once the
        claims are made): the same figures and tables as the reference
        device's, each box naming only that device's capture."""
        reuse = self.out.figures_dir
        for device in self.devices:
            page = DevicePage(CHAPTER, device, "MPTCP over two emulated paths",
                              "Its figures and tables, the same as the reference device's, and its claims. How each "
                              f"is made: {{doc}}`../{CHAPTER}-methods`.")
            dev = self.on_device(device, PageOutputs(self.out.results_dir, STAGE, self.out.device_stage, device, page,
                                                     reuse if device == self.ref else None))
            for heading, methods in self.SECTIONS:
                page.heading(heading)
                for method in methods:
                    getattr(dev, method)()
            self.dev[device] = dev

    def claims(self) -> None:
        """The claims of every device (ids ending with the device) and the
        shared ones; the table shows the reference device's and the shared
        ones (each other device's are on its page)."""
        out, tol = self.out, self.tol
        intervals = {k: v for d in self.dev.values() for k, v in mdc.claim_intervals(d.oci, d.r, d.cmp_ci, d.ref).items()}
        claims = mdc.claims_at({d: x.m for d, x in self.dev.items()}, self.v,
                               {d: mdc.Measured(x.r, x.cdf) for d, x in self.dev.items()}, tol, intervals)
        self.rob = robustness.study_robustness(self._claims_at, {self.cpu.name: self.cpu}, claims,
                                               self.robustness_settings)
        # The radio model's own assumptions (idle 0, linearity) vary with the CPU coefficients.
        floors = {k: v for d, x in self.dev.items() for k, v in mdc.floor_labels(self.rob.claims, x.floor_wide, tol,
                                                                                 d).items()}
        self.rob = robustness.with_labels(self.rob, floors)
        self.claims_table = self.rob.claims
        ungated = [d for d in self.devices
                   if any(capture_reader.background_load(m) is None for m in self.R_all.manifests[d].values())]
        mine = self.claims_table["claim_id"].isin([c for d in ungated for c in self._ids(d)])
        if mine.any():
            self.claims_table = cl.with_note(self.claims_table,
                                             mine & self.claims_table["provenance"].isin(["measured", "modeled"]),
                                             cl.UNGATED)
        cl.write_claims(self.claims_table, out.results_dir / "claims.csv")
        self.claims_people = claims_shown(self.claims_table, intervals, self.ci)
        self.intervals = intervals
        elsewhere = self.claims_table["claim_id"].isin([c for d in self.devices if d != self.ref
                                                        for c in self._ids(d)]).to_numpy()
        out.show(self.claims_people[~elsewhere],
                 f"Claims of the mptcp-dualband paper and their verdicts on {self.ref} (each other device's on its "
                 f"page; all {len(self.claims_table)} in the CSV)",
                 csv_href=site_href(out.results_dir / "claims.csv"))
        out.provenance("published paper values against measured throughput and modeled energy (the provenance "
                       "column says which); intervals: Student-t of a mean or a log ratio, none below 3 runs.")
        out.findings(self.claims_table, headline=[mdc.claim_id(c, self.ref) for c in HEADLINE], intervals=intervals)

    def robustness(self) -> None:
        """The modeled verdicts at other assumed coefficients (every device's claims): saved, and glued as text."""
        show_robustness(self.out, self.rob)

    def robustness_saved(self) -> None:
        """The robustness table and figure as the chapter saved them (the methods page shows them)."""
        out = self.out
        table = pd.read_csv(out.tables_dir / "robustness.csv")
        out.show(robustness_shown(table), "Modeled verdicts with the assumed power coefficients varied (each at "
                 "×0.5 and ×1.5, and all together over a Latin hypercube), every device's claims",
                 csv_href=out.href("robustness"))
        out.provenance("modeled: the chapter's claims recomputed from the measured data at each set of coefficients "
                       "(params.yaml power-models, provenance assumed; robustness section).")
        figure = out.figures_dir / "robustness.svg"
        if figure.is_file():
            out.figure(figure, "robustness",
                       alt="Tornado plots, one panel per modeled claim whose value moves: for each assumed "
                           "coefficient a bar from the claim's value with that coefficient halved to its value with "
                           "it at 1.5 times, a solid line at the value with the assumed coefficients and a dashed "
                           "line at the paper's value.",
                       caption="How far each modeled value (that moves at all) shifts when one assumed coefficient "
                               "is halved or raised by half; solid line: the assumed coefficients; dashed: the "
                               "paper's value. Look for a bar that crosses the dashed line: that verdict depends on "
                               "the coefficient.")
            out.provenance("modeled from measured data at varied assumed coefficients.")

    def _ids(self, device: str) -> list[str]:
        key = "_" + mdc.device_key(device)
        return [c for c in self.claims_table["claim_id"] if c.endswith(key)]

    def _claims_at(self, models: dict) -> pd.DataFrame:
        """Every device's claims with the runs' CPU time priced by models[<the CPU model>]."""
        R = self.R_all
        priced = mda.priced_runs(R.runs, R.manifests, self.devices, self.radio, models[self.cpu.name])
        return mdc.claims_at({d: mdc.modeled_at(priced.on(d), self.v, self.tol) for d in self.devices}, self.v,
                             {d: mdc.Measured(x.r, x.cdf) for d, x in self.dev.items()}, self.tol)

    def comparison(self) -> None:
        """One row per device, each linking to its page."""
        rows = {d: {"runs": len(x.R.ref_runs), "r1": x.r, "opt": x.opt, "oci": x.oci, "cmp": x.cmp, "cis": x.cmp_ci,
                    "claims": self.claims_table[self.claims_table["claim_id"].isin(self._ids(d))]}
                for d, x in self.dev.items()}
        table = self.out.save_table(mdc.comparison_table(rows), "device_comparison")
        shown = comparison_shown(table)
        shown["device"] = [link(d, DevicePage.href(CHAPTER, d)) for d in table["device"]]
        self.out.show(shown, "Every device: backlogged MPTCP, the downlink throughput-optimal ratio and its gain "
                      "over path a alone with the energy-per-bit cost, and its claims (each device links to its "
                      "page)", csv_href=self.out.href("device_comparison"), html_columns=("device",))
        self.out.provenance("measured throughput and modeled nJ/bit of every device; intervals over runs: t of the log "
                            "ratio for a gain or a cost, Student-t for the MPTCP means, none below 3 runs.")

    def device_pages(self) -> None:
        """Write each device's page, its claims last."""
        folder = next(c for c in registry.chapters() if c.name == CHAPTER).device_pages
        for device, dev in self.dev.items():
            page = dev.out.page
            page.heading("Claims")
            mine = self.claims_table["claim_id"].isin(self._ids(device)).to_numpy()
            page.table(self.claims_people[mine], f"The paper's claims checked on {device}",
                       csv=self.out.results_dir / "claims.csv")
            page.provenance("published (paper values); measured or modeled (artifact values).",
                            [registry.by_slug()[STUDY].device_sources_stage(device), "ingest_published"])
            page.write(folder)

    def metrics(self) -> None:
        self.out.put_counts(cl.verdict_counts(self.claims_table))
        per = {d: mdc.device_metrics(x.R, x.r, x.cdf, x.cmp, x.gl) for d, x in self.dev.items()}
        write_metrics(self.out.results_dir / "metrics.json", mdc.metrics(self.ref, per, self.claims_table))


CHAPTER = "mptcp-dualband"


def link(text: str, href: str) -> str:
    """An escaped HTML link (a table cell shown as HTML)."""
    return f'<a href="{html.escape(href)}">{html.escape(text, quote=False)}</a>'


def comparison_shown(table: pd.DataFrame) -> pd.DataFrame:
    """The cross-device comparison for people: intervals joined, units in headers."""
    f = with_interval(table, "dl_tput_opt_ratio", "dl_tput_opt_ratio_low", "dl_tput_opt_ratio_high")
    f = with_interval(f, "dl_tput_gain_pct", "dl_tput_gain_low", "dl_tput_gain_high")
    f = with_interval(f, "dl_energy_cost_pct", "dl_energy_cost_low", "dl_energy_cost_high")
    f["claims"] = [f"{r} reproduced, {n} not, {i} inconclusive" for r, n, i in
                   zip(table["claims_reproduced"], table["claims_not_reproduced"], table["claims_inconclusive"])]
    return f[["device", "dl_tput_opt_ratio", "dl_tput_gain_pct", "dl_energy_cost_pct", "dl_mptcp_mbps",
              "ul_mptcp_mbps", "runs", "claims"]].rename(columns={
        "dl_tput_opt_ratio": "downlink throughput-optimal (% on a)", "dl_tput_gain_pct": "throughput gain (%)",
        "dl_energy_cost_pct": "nJ/bit change (%)", "dl_mptcp_mbps": "MPTCP downlink (Mbps)",
        "ul_mptcp_mbps": "MPTCP uplink (Mbps)"})


OPTIMA_SHOWN = {"tput_opt_ratio": "throughput-optimal (% on a)", "tput_opt_mbps": "throughput there (Mbps)",
                "energy_opt_satisfying_ratio": "energy-optimal (% on a)",
                "energy_opt_satisfying_nj": "energy there (nJ/bit)",
                "energy_opt_both_ratio": "energy-optimal, two paths (% on a)"}


def optima_shown(opt: pd.DataFrame, oci: pd.DataFrame) -> pd.DataFrame:
    """The optima (optima) for people: each optimal
    ratio with its percentile bootstrap interval (`optima_ci`) as "73 [70, 73]", units
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



def claims_shown(claims_table: pd.DataFrame, intervals: dict, ci: str) -> pd.DataFrame:
    """The claims table for people: paper value with its relation, ours with
    its interval."""
    shown = claims_table.assign(
        paper=[paper_text(rel, val) for rel, val in zip(claims_table["paper_relation"], claims_table["paper_value"])],
        ours=[numbers.interval(a, *shown_interval(row, intervals)) for (_, row), a in
              zip(claims_table.set_index("claim_id").iterrows(), claims_table["artifact_value"])])
    return (shown[["claim", "location", "paper", "ours", "unit", "tolerance", "verdict", "category", "provenance",
                   "robustness"]]
            .rename(columns={"ours": f"this artifact [{ci} CI]"}))
