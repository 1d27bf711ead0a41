"""The transfer-tuning chapter's outputs, section by section
(notebooks/transfer-tuning.py calls one method per code cell, in order).

Each method derives its tables with mobitrace.studies.transfer_tuning.analysis,
saves them (validated against mobitrace.studies.transfer_tuning.schema) and
shows them, the figures, the provenance lines and the numbers the prose
glues, through mobitrace.book.chapter.ChapterOutputs. Every device gets
every figure, table and claim: the main page shows the reference device
(params.yaml `reference_device`) and one row per device in the cross-device
comparison, which links each device's generated page (DevicePage) with all
of its own. Paper numbers come from data/published/transfer-tuning.yaml
(mobitrace.core.published.Values); claims go through mobitrace.core.claims.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from mobitrace.book.build import link, table_html, with_interval
from mobitrace.book.chapter import (ChapterOutputs, DevicePage, NotebookChapter, paper_text, reference_first,
                                    site_href)
from mobitrace.book.figures import save_svg
from mobitrace.book.robustness import robustness_shown, tornado_grid
from mobitrace.core import capture_reader
from mobitrace.core import claims as cl
from mobitrace.core.numbers import data_size
from mobitrace.core import numbers
from mobitrace.core.io import write_metrics
from mobitrace.core.published import Values
from mobitrace.energy import power_models as power
from mobitrace.energy import robustness
from mobitrace.studies import registry
from mobitrace.studies.transfer_tuning import analysis as tta
from mobitrace.studies.transfer_tuning import figures as ttf
from mobitrace.studies.transfer_tuning import schema

STAGE = "analyze_transfer_tuning"
STUDY = "transfer-tuning"
CHAPTER = "transfer-tuning"
DATASETS = tta.DATASETS
# The key findings: these claims of the reference device.
HEADLINE = ["cc_html_xfold", "cc_html_saving", "cc_video_saving", "cc_order", "p8_html_reduces"]
ID = tta.device_claim_id



# How every interval of the chapter is made (stats.intervals), for its provenance lines.
INTERVALS = ("intervals over repetitions: t below 30 runs, percentile bootstrap from 30, none below 3 (of the "
             "log ratio for ratios).")

def captures_shown(frame: pd.DataFrame) -> pd.DataFrame:
    """The captures table for readers: labels, and the receive buffer in SI bytes."""
    return frame.assign(rmem_kib=[data_size(k * 1024) for k in frame["rmem_kib"]]).rename(columns={
        "cpu": "CPU", "rate_mbit": "link (Mbps)", "rtt_ms": "RTT (ms)", "rmem_kib": "client receive buffer",
        "runs": "runs analysed", "left_out": "runs left out (idle gate)",
        "background": "load outside the experiment"})

class Chapter(NotebookChapter):
    """State shared by the chapter's sections: the parameters (params.yaml's
    transfer-tuning section and power-models), the ingested tables, the run
    energy table and what later sections reuse (figures per device, claims)."""

    def __init__(self, study: str, published_dir: str, interim_dir: str, results_dir: str, devices: list[str], *,
                 reference_device: str, power_models: dict, cpu_model: str, radio_model: str, modeled_base_w: float,
                 tail_tolerance_w: float, default_io_kib: int, claim_level: int, rel_tol_approx: float,
                 alpha: float, robustness: dict):
        self.study, self.devices = study, reference_first(devices, reference_device)
        self.results = Path(results_dir)
        self.out = ChapterOutputs(self.results, STAGE, registry.by_slug()[STUDY].device_sources_stage)
        self.values = Values(published_dir)
        self.cpu = power.cpu_models(power_models)[cpu_model]
        self.radio = power.radio_models(power_models)[radio_model]
        self.base_w, self.tail_tolerance_w = modeled_base_w, tail_tolerance_w
        self.io_kib, self.claim_level, self.rel_tol = default_io_kib, claim_level, rel_tol_approx
        self.alpha = alpha  # every interval is 100(1 - alpha)%
        self.ci = numbers.level(alpha)  # its level, for the captions
        self.robustness_settings = robustness
        self.interim = tta.load_interim(interim_dir, self.devices)
        self.samples, self.power_paths = self.interim["samples"], tta.power_paths(interim_dir, self.devices)
        self.figures: dict[str, dict[str, tuple]] = {d: {} for d in self.devices}  # device pages' figures

    # Saving through the schema: every results table is validated when written.
    def _save(self, frame: pd.DataFrame, name: str) -> pd.DataFrame:
        return self.out.save_table(schema.results_schema(name).validate(frame), name)

    def _table(self, frame: pd.DataFrame, name: str, caption: str, shown: pd.DataFrame | None = None,
               html_columns: tuple[str, ...] = ()):
        frame = schema.results_schema(name).validate(frame)
        self.out.save_table(frame, name)
        self.out.show(frame if shown is None else shown, caption, csv_href=self.out.href(name),
                      html_columns=html_columns)
        return frame

    def _trace_args(self):
        return self.measured, self.samples, self.cpu, self.radio, self.base_w, self.energy_kind

    def _page_figure(self, device: str, fig, name: str, alt: str, caption: str, provenance: str) -> None:
        """Save one device's figure `name` for its page only."""
        path = save_svg(fig, self.out.figures_dir / f"{name}.svg")
        plt.close(fig)
        self.figures[device][name] = (path, alt, caption, provenance, False)

    def _figure(self, device: str, fig, name: str, alt: str, caption: str, provenance: str,
                published: bool = False) -> None:
        """Save one device's figure `name` for its page; the reference
        device's is shown here too, with a box naming that device's capture
        (and the paper's numbers if `published`: the figure draws them)."""
        path = self.out.figures_dir / f"{name}.svg"
        self.figures[device][name] = (path, alt, caption, provenance, published)
        if device == self.ref_device:
            self.out.figure(fig, name, alt=alt, caption=caption)
            self.out.device_provenance(provenance, device, published=published)
        else:
            save_svg(fig, path)
            plt.close(fig)

    def setup(self) -> Chapter:
        """Energy of every run (table runs_energy), the runs the idle gate
        flagged left out, the reference device's testbed configuration, and
        the numbers of the testbed section. Returns the chapter."""
        put, v = self.out.put, self.values
        i = self.interim
        # measured power logs: one streaming pass (energies, and traces thinned for the figures)
        self.measured = tta.measured_power(i["runs"], self.power_paths, self.tail_tolerance_w)
        self.rates = tta.rates_by_run(i["samples"])  # once: _claims_at prices them again at other coefficients
        table = tta.energy_table(i["runs"], self.rates, self.measured, self.cpu, self.radio, self.base_w,
                                 self.tail_tolerance_w)
        self._save(tta.runs_energy(table), "runs_energy")  # every run, with the gate's flag
        self.table, self.left_out = tta.clean_runs(table)
        self.kept_runs, _ = tta.clean_runs(i["runs"])
        self.ref_device = self.devices[0]
        self.manifest = tta.session_manifest(i["sessions"], self.ref_device)
        self.conf = conf = self.manifest["configuration"]
        self.energy_kind = tta.energy_kind(self.table)
        put("ref_device", self.ref_device)
        put("n_runs", len(table))
        put("n_left_out", len(self.left_out))
        put("n_devices", len(self.devices))
        put("rate_mbit", float(conf["link"]["rate_mbit"]))
        put("rtt_ms", float(conf["rtt_ms"]))
        put("rmem_kib", conf["client_tcp_rmem_max"] / 1024)
        self.out.put_text("rmem_size", data_size(conf["client_tcp_rmem_max"]))
        put("reps", int(conf["repetitions"]))
        put("energy_kind", self.energy_kind)
        put("lock_s", float(sum(inv["lock_held_s"] for inv in self.manifest["invocations"])))
        out = self.out
        out.put_text("ref_why", self._reference_why())
        out.put_text("background_ref", capture_reader.background_text(capture_reader.background_load(self.manifest)))
        out.put_text("delay_bridge", tta.delay_element(conf))
        out.put_text("achieved_rate", tta.achieved_text(i["runs"][i["runs"]["device"] == self.ref_device],
                                                        float(conf["link"]["rate_mbit"])))
        put("p_rtt_sydney", v("rtt_sydney"))
        return self

    @cached_property
    def analysis(self) -> dict:
        """The analysis at the assumed coefficients (_analysis_at of the runs
        kept), made when a section first needs it: the methods page needs none."""
        return self._analysis_at(self.table)

    def _reference_why(self) -> str:
        """Why the reference device is the one the main page shows, from its
        capture beside the others'."""
        sessions = self.interim["sessions"]
        reps = {d: int(tta.session_manifest(sessions, d)["configuration"]["repetitions"]) for d in self.devices}
        gated = {d: tta.session_manifest(sessions, d).get("idle_gate") is not None for d in self.devices}
        ref = self.ref_device
        why = [f"{reps[ref]} repetitions per configuration"
               + (" (the most of any device)" if len(self.devices) > 1 and reps[ref] == max(reps.values()) else ""),
               "every run checked by the idle gate" if gated[ref] else "captured before the idle gate"]
        return ", ".join(why)

    def _analysis_at(self, table: pd.DataFrame, intervals: dict | None = None) -> dict:
        """tta.analysis_at of the runs' energies `table`."""
        return tta.analysis_at(table, self.values, study=self.study, devices=self.devices, io_kib=self.io_kib,
                               grid_levels=self.conf["grid"], claim_level=self.claim_level, rel_tol=self.rel_tol,
                               alpha=self.alpha,
                               intervals=intervals)

    def _claims_at(self, models: dict, intervals: dict) -> pd.DataFrame:
        """The claims with every device's energies priced by `models` (the
        CPU and radio models by name), the measured intervals given."""
        table = tta.energy_table(self.kept_runs, self.rates, self.measured, models[self.cpu.name],
                                 models[self.radio.name], self.base_w, self.tail_tolerance_w)
        return self._analysis_at(table, intervals)["claims"]

    # -- run conditions and the model (the methods page shows them) -------------

    def datasets(self) -> None:
        """Table 2 beside the datasets each device's capture served, and the
        sizes the prose names (the reference device's)."""
        out, v = self.out, self.values
        sessions = self.interim["sessions"]
        frame = pd.concat([tta.datasets_table(v, tta.session_manifest(sessions, d)["configuration"]["datasets"],
                                              self.table, d) for d in self.devices], ignore_index=True)
        for name in DATASETS:
            d = self.conf["datasets"].get(name)
            if d is None:
                continue
            out.put(f"files_{name}", int(d["files"]))
            out.put(f"paper_files_{name}", int(v(f"{name}_files")))
            out.put_text(f"served_sizes_{name}", f"{data_size(d['min_kib'] * 1024)} to {data_size(d['max_kib'] * 1024)}")
            out.put_text(f"paper_sizes_{name}", tta.paper_sizes(v, name))
        self._table(frame, "datasets", "Table 2 (published) and the datasets each device's capture served "
                    "(measured bytes)")
        out.provenance("published (Table 2) and measured (bytes served in each device's capture).")

    def captures(self) -> None:
        """The run conditions of every device's capture (table captures)."""
        frame = tta.captures_table(self.interim["sessions"], self.table, self.left_out, self.devices)
        self._table(frame, "captures", "Each device's capture: host, link, runs analysed and the load outside "
                    "the experiment (idle gate)", shown=captures_shown(frame))
        self.out.provenance("measured (capture manifests, and the idle gate's record of every run where a capture "
                            "has one).")

    def power_model(self) -> None:
        """The power model's components and coefficients."""
        out = self.out
        out.put("default_io", float(self.io_kib))
        out.put_text("default_io_size", data_size(self.io_kib * 1024))
        out.put("r_max", float(self.radio.max_rate_mbps))
        out.put("tail_tol_mw", self.tail_tolerance_w * 1e3)
        self._table(tta.power_model_table(self.cpu, self.radio, self.base_w), "power_model",
                    "The power model behind every modeled energy (params.yaml power-models)")
        out.provenance("modeled: coefficients from params.yaml with their provenance (published or assumed) and "
                       "source.")

    # -- results, every device ---------------------------------------------------

    def sweeps(self) -> None:
        """One knob at a time: the sweep tables and Figure 2 per device (the
        reference device's shown)."""
        kind = self.energy_kind
        a = self.analysis
        self.knobs, self.sweep, self.knob_runs = a["knobs"], a["sweep"], a["knob_runs"]
        for name, frame in self.sweep.items():
            self._save(frame, f"sweep_{name}")
        for device in self.devices:
            self._figure(device, ttf.sweep_figure(self.knob_runs[self.knob_runs["device"] == device], kind, self.alpha),
                         f"fig2_{device}",
                         alt=f"Six panels for {device}: throughput in Mbps (top) and energy per 100 MB in joules "
                             "(bottom) against concurrency, parallelism and I/O request size (log scale), one line "
                             f"per dataset (html, image, video) with {self.ci} confidence bands.",
                         caption=f"One knob at a time on {device}: throughput (measured) and energy per 100 MB "
                                 f"({kind}), means over repetitions, bands: {self.ci} CI. Look at how "
                                 "throughput rises and energy per 100 MB falls with concurrency, most for the small "
                                 "html files.",
                         provenance=f"measured throughput and {kind} energy ({device}): "
                                    f"data/raw/transfer-tuning/{device}/.")

    def gains(self) -> None:
        """The paper's gains and savings beside each device's, with intervals
        (tables ratios_ci and gains_vs_paper, a ratio figure per device), and
        the numbers of the prose (the reference device's)."""
        out, v, kind = self.out, self.values, self.energy_kind
        a = self.analysis
        self._save(a["ratios"], "ratios_ci")
        comps = []
        for device in self.devices:
            d = a["devices"][device]
            ratios = a["ratios"][a["ratios"]["device"] == device]
            comp = tta.gains_vs_paper(v, d["ref"], ratios, d["cc_top"], device)
            comps.append(comp)
            self._figure(device, ttf.ratio_figure(comp, kind, self.alpha), f"ratios_vs_paper_{device}",
                         alt="Two dot plots, one row per dataset and knob: the throughput ratio (x-fold) and the "
                             f"energy-per-100-MB ratio against level 1, with {self.ci} intervals, a dashed "
                             "reference line at 1 and the paper's ratios as crosses.",
                         caption=f"Throughput ratio (left, log scale) and energy ratio (right) of each knob against "
                                 f"its level 1 on {device} (points, {self.ci} CI over repetitions) and in the "
                                 "paper (crosses). Right of 1 on the left: faster; left of 1 on the right: less "
                                 "energy. Look at the gap between the points and the crosses: the directions agree, "
                                 "the magnitudes do not.",
                         provenance=f"measured throughput and {kind} energy ({device}); published ratios (§4); "
                                    + INTERVALS, published=True)
        self.gains_table = self._save(pd.concat(comps, ignore_index=True), "gains_vs_paper")
        ref = a["devices"][self.ref_device]
        self.ref, self.cc_top, self.p_best = ref["ref"], ref["cc_top"], ref["p_best"]
        cc_top, p_best = self.cc_top, self.p_best
        for ds in DATASETS:
            out.put(f"cc_{ds}_xfold", self.at("concurrency", ds, cc_top, "x_fold"))
            out.put(f"cc_{ds}_saving", self.at("concurrency", ds, cc_top, "saving_pct"))
            out.put(f"p_cc_{ds}_xfold", v(f"cc_{ds}_xfold"))
            out.put(f"p_cc_{ds}_saving", v(f"cc_{ds}_saving"))
        out.put("cc_top", cc_top)
        p8 = int(v("p_reduce_level"))
        out.put("p8_html_xfold", self.at("parallelism", "html", p8, "x_fold"))
        out.put("p8_image_xfold", self.at("parallelism", "image", p8, "x_fold"))
        out.put("p_video_best", int(p_best["level"]))
        out.put("p_video_xfold", float(p_best["x_fold"]))
        out.put("p_p_video_xfold", v("p_video_xfold"))
        io_f = self.ref["io_kib"][self.ref["io_kib"]["dataset"] == "video"].set_index("level")
        out.put_text("io_sizes", f"{data_size(1024)} to {data_size(16 * 1024)}")
        out.put("io_video_16_over_1", float(io_f.loc[16, "throughput_mbps"] / io_f.loc[1, "throughput_mbps"]) if
                {1, 16} <= set(io_f.index) else float("nan"))
        self.xf = xf = [self.at("concurrency", ds, cc_top, "x_fold") for ds in DATASETS]
        out.put_text("cc_word", "multiplied" if min(xf) >= 1 else "changed")
        out.put_text("cc_saving_word", "fell" if all(self.at("concurrency", ds, cc_top, "saving_pct") > 0
                                                     for ds in DATASETS) else "changed")
        out.put_text("order_word", "holds" if xf[0] > xf[1] > xf[2] else "does not hold")
        out.put_text("opening", self._opening())

    def at(self, factor: str, ds: str, level: int, col: str) -> float:
        """Column `col` of the reference device's sweep along `factor` at `ds`, `level`."""
        return tta.level_value(self.ref[factor], ds, level, col)

    def _opening(self) -> str:
        """The chapter's answer in one sentence: the html gain and saving of
        concurrency on the reference device, with their intervals."""
        r = self.analysis["ratios"].set_index(["device", "factor", "dataset", "level"])
        key = (self.ref_device, "concurrency", "html", self.cc_top)
        row = r.loc[key]
        x = numbers.interval(row["x_fold"], row["x_fold_low"], row["x_fold_high"])
        s = numbers.interval(row["saving_pct"], row["saving_pct_low"], row["saving_pct_high"])
        faster = ("faster" if row["x_fold_low"] > 1 else "slower" if row["x_fold_high"] < 1
                  else "as fast, within its interval,")
        cut = "cut" if row["saving_pct_low"] > 0 else "raised" if row["saving_pct_high"] < 0 else "changed"
        rate = float(self.conf["link"]["rate_mbit"])
        ceiling = rate / self.at("concurrency", "html", 1, "throughput_mbps")
        return (f"On this {rate:g} Mbps link, fetching {self.cc_top} small (html) files at once instead of one "
                f"made the transfer {x} times {faster} and {cut} its {self.energy_kind} energy per 100 MB by {s}% "
                f"({self.ci} CIs), the paper's direction but not its {self.values('cc_html_xfold'):g}-fold gain, which "
                f"this link caps at {ceiling:.1f}-fold.")

    def cpu_time(self) -> None:
        """CPU during the transfer against concurrency, per device (table cpu_concurrency)."""
        self.cpu_tab = self._save(pd.concat([tta.cpu_table(self.table, d, self.io_kib) for d in self.devices],
                                            ignore_index=True), "cpu_concurrency")

    def grid(self) -> None:
        """Concurrency x parallelism: the table grid, Figure 7 per device, the
        reference device's largest saving and x-fold."""
        out, v, kind = self.out, self.values, self.energy_kind
        a = self.analysis
        grid = self._save(a["grid"], "grid")
        for device in self.devices:
            self._figure(device, ttf.grid_figure(grid[grid["device"] == device], kind), f"fig7_{device}",
                         alt=f"Six annotated heat maps for {device}, one column per dataset: mean throughput in "
                             f"Mbps (top) and energy per 100 MB in joules (bottom) over concurrency (x) and "
                             f"parallelism (y).",
                         caption=f"Combined knobs on {device}: mean throughput (measured) and energy per 100 MB "
                                 f"({kind}) over repetitions, I/O size {data_size(self.io_kib * 1024)}. Look for the brightest "
                                 "throughput cell and the darkest energy cell of each dataset.",
                         provenance=f"measured throughput and {kind} energy per 100 MB ({device}), mean over "
                                    "repetitions.")
        ref = a["devices"][self.ref_device]
        self.gref, self.best = ref["grid_ref"], ref["best"]
        out.put("grid_best_saving", float(self.best["saving_pct"]))
        out.put("grid_best_where", f"{self.best['dataset']} at concurrency {int(self.best['concurrency'])}, "
                                   f"parallelism {int(self.best['parallelism'])}")
        out.put("grid_best_xfold", float(self.gref["x_fold"].max()))
        out.put("p_combined_saving", v("combined_saving"))
        out.put("p_combined_xfold", v("combined_xfold"))

    def power_over_time(self) -> None:
        """Figures 9 and 8 and the tail table per device; the reference
        device's longest tail."""
        kind = self.energy_kind
        self.tails = {}
        for device in self.devices:
            vids = tta.concurrency_runs(self.table, device, self.io_kib)
            if len(vids):
                self._page_figure(
                    device, ttf.concurrency_power_figure(vids, *self._trace_args()), f"fig9_{device}",
                    f"{len(vids)} power traces in watts against time in seconds for the video dataset on "
                    f"{device}, one per concurrency level, with the transfer's energy and the tail shaded.",
                    f"Power over time of one video transfer per concurrency level ({kind}, {device}, repetition "
                    "1). Look at how the shaded transfer gets shorter as concurrency rises while its height changes "
                    "little: under the model, energy follows time.",
                    f"{kind} power ({device}), repetition 1 of each concurrency level; throughput measured.")
            tails = tta.tail_runs(self.table, device)
            if len(tails):
                self._page_figure(
                    device, ttf.tail_power_figure(tails, *self._trace_args()), f"fig8_{device}",
                    f"Three power traces in watts against time in seconds on {device}: one file, two files "
                    "back to back, two files at once, with the transfer's energy and the tail shaded.",
                    f"Transfer (shaded orange) and tail (shaded sky blue) energy of one, two sequential and two "
                    f"concurrent files ({kind}, {device}). Look at the sky-blue tails: the modeled radio has no tail "
                    "state.",
                    f"{kind} energy ({device}); transfer times measured.")
                self.tails[device] = self._save(tta.tail_table(tails, device), f"tail_{device}")
        tails_ref = tta.tail_runs(self.table, self.ref_device)
        self.out.put("tail_max_s", float(tails_ref["tail_s"].max()) if len(tails_ref) else float("nan"))

    # -- claims, the comparison, the device pages ----------------------------------

    def _device_ids(self, device: str) -> list[str]:
        """The ids of the claims checked on `device`."""
        return list(self.analysis["devices"][device]["claims"]["claim_id"])

    def claims(self) -> None:
        """The claims of every device (claims.csv) with their robustness to
        the assumed coefficients; shown here: the reference device's and the
        study-wide ones, and the key findings."""
        out, kind = self.out, self.energy_kind
        intervals = self.analysis["intervals"]
        claims = self.analysis["claims"]
        measured = tta.measured_intervals(intervals, claims)
        self.rob = robustness.study_robustness(lambda models: self._claims_at(models, measured),
                                               {self.cpu.name: self.cpu, self.radio.name: self.radio}, claims,
                                               self.robustness_settings)
        # A device captured before the idle gate: its claims say so.
        ungated = [c for d in self.devices if tta.session_manifest(self.interim["sessions"], d).get("idle_gate") is None
                   for c in self._device_ids(d)]
        self.claims_table = table = cl.with_note(self.rob.claims, self.rob.claims["claim_id"].isin(ungated),
                                                 cl.UNGATED)
        cl.write_claims(table, self.results / "claims.csv")
        self.claims_shown = table.assign(
            paper=[paper_text(rel, val) for rel, val in zip(table["paper_relation"], table["paper_value"])],
            ours=[numbers.interval(a, *intervals.get(c, (None, None))) for c, a in
                  zip(table["claim_id"], table["artifact_value"])])[
            ["claim", "location", "paper", "ours", "unit", "tolerance", "verdict", "category", "provenance",
             "robustness"]].rename(columns={"ours": f"this artifact [{self.ci} CI]"})
        mine = table["claim_id"].isin([*self._device_ids(self.ref_device), *tta.STUDY_CLAIMS]).to_numpy()
        out.show(self.claims_shown[mine], f"Claims of the transfer-tuning paper checked on {self.ref_device} (each "
                 f"other device's on its page, all {len(table)} in the CSV)",
                 csv_href=site_href(self.results / "claims.csv"))
        out.device_provenance(f"published (paper values, locations in the table) against measured throughput and "
                              f"{kind} energy ({self.ref_device}); " + INTERVALS,
                              self.ref_device, published=True)
        out.findings(table, headline=[ID(c, self.ref_device) for c in HEADLINE], intervals=intervals)
        self._robustness()

    def _robustness(self) -> None:
        """The robustness table (every device's modeled claims, in the CSV);
        shown here: the reference device's rows, with their summary for the
        prose; each device's tornado figure is on its page."""
        rob, out = self.rob, self.out
        if len(rob.table):
            out.save_table(rob.table, "robustness")
        ref_rows = rob.table[rob.table["claim_id"].isin(self._device_ids(self.ref_device))]
        out.put_text("robustness_text", robustness.summary_text(ref_rows, rob.lhs_size, rob.coefficients))
        if len(ref_rows):  # folded, one click away: the summary below says what it holds
            from IPython.display import display
            display(table_html(robustness_shown(ref_rows), f"Modeled verdicts on {self.ref_device} with the "
                               "assumed power coefficients varied (each at ×0.5 and ×1.5, and all together over a "
                               "Latin hypercube)", csv_href=out.href("robustness"), folded=True))
            out.device_provenance("modeled: the claims recomputed from the measured data at each set of "
                                  "coefficients (params.yaml power-models, provenance assumed).", self.ref_device, published=True)
        for device in self.devices:
            ids = self._device_ids(device)
            fig = tornado_grid({c: r for c, r in rob.results.items() if c in ids},
                               rob.claims[rob.claims["claim_id"].isin(ids)])
            if fig is None:
                continue
            path = save_svg(fig, out.figures_dir / f"robustness_{device}.svg")
            plt.close(fig)
            self.figures[device][f"robustness_{device}"] = (
                path, "Tornado plots, one panel per modeled claim whose value moves: for each assumed coefficient a "
                      "bar from the claim's value with that coefficient halved to its value with it at 1.5 times, a "
                      "solid line at the value with the assumed coefficients and a dashed line at the paper's value.",
                f"How far each modeled value on {device} shifts when one assumed coefficient is halved (blue) or "
                "raised by half (orange); solid line: the assumed coefficients; dashed: the paper's value. Look for "
                "a bar that crosses the dashed line: that verdict depends on the coefficient.",
                f"modeled from measured data ({device}) at varied assumed coefficients; the paper's values dashed "
                "(published).", True)

    def comparison(self) -> None:
        """The cross-device comparison: one row per device, each linking to
        its page (table devices)."""
        frame = tta.devices_table(self.analysis, self.table, self.left_out, self.interim["sessions"],
                                  self.ref_device)
        self.devices_frame = frame
        shown = pd.DataFrame({
            "device": [link(d + (" (reference)" if r else ""), DevicePage.href(CHAPTER, d))
                       for d, r in zip(frame["device"], frame["reference"])],
            "runs analysed": frame["runs"],
            "left out (idle gate)": [str(n) if g else "not gated" for n, g in zip(frame["left_out"], frame["gated"])],
            **{f"{ds} x-fold": [numbers.interval(x, lo, hi) for x, lo, hi in
                                zip(frame[f"{ds}_x_fold"], frame[f"{ds}_x_fold_low"], frame[f"{ds}_x_fold_high"])]
               for ds in DATASETS},
            **{f"{ds} saving (%)": [numbers.interval(x, lo, hi) for x, lo, hi in
                                    zip(frame[f"{ds}_saving_pct"], frame[f"{ds}_saving_pct_low"],
                                        frame[f"{ds}_saving_pct_high"])] for ds in DATASETS}})
        self._table(frame, "devices", f"Every device: concurrency 1 to {self.cc_top}, x-fold throughput and "
                    f"{self.energy_kind} energy saving per 100 MB [{self.ci} CI]; each device links to its "
                    "page", shown=shown, html_columns=("device",))
        self.out.provenance(f"measured throughput and {self.energy_kind} energy of every device's capture; "
                            + INTERVALS)

    def metrics(self) -> dict:
        """Verdict counts for the prose, and metrics.json (returned): per
        device its gains, savings and runs left out."""
        counts = cl.verdict_counts(self.claims_table)
        self.out.put_counts(counts)
        ref_counts = cl.verdict_counts(self.claims_table[self.claims_table["claim_id"].isin(
            self._device_ids(self.ref_device))])
        self.out.put_text("ref_tally", cl.tally_text(ref_counts))
        m = numbers.metric
        per = {}
        for device, a in self.analysis["devices"].items():
            at = lambda ds, col: tta.level_value(a["ref"]["concurrency"], ds, a["cc_top"], col)  # noqa: E731
            per[device] = {
                "runs": int((self.table["device"] == device).sum()),
                "left_out_idle_gate": int((self.left_out["device"] == device).sum()),
                "concurrency_xfold": {ds: m(at(ds, "x_fold")) for ds in DATASETS},
                "concurrency_saving_pct": {ds: m(at(ds, "saving_pct")) for ds in DATASETS},
                "parallelism_video_best_xfold": m(a["p_best"]["x_fold"]),
                "grid_best_saving_pct": m(a["best"]["saving_pct"]),
                "grid_best_xfold": m(a["grid_ref"]["x_fold"].max())}
        metrics = {"reference_device": self.ref_device, "energy": self.energy_kind, "runs": int(len(self.table)),
                   "left_out_idle_gate": int(len(self.left_out)), "devices": per, "claims": cl.keyed(counts)}
        write_metrics(self.results / "metrics.json", metrics)
        return metrics

    def device_pages(self) -> None:
        """A page per device (registry.Chapter.device_pages), linked from the
        comparison: its figures, its gains against the paper, CPU, tail and
        capture tables, its claims and their robustness, each box naming
        only that device's stage."""
        folder = next(c for c in registry.chapters() if c.name == CHAPTER).device_pages
        kind, tables = self.energy_kind, self.out.tables_dir
        captures = tta.captures_table(self.interim["sessions"], self.table, self.left_out, self.devices)
        methods = f"{{doc}}`../{CHAPTER}-methods`"
        for device in self.devices:
            stage = registry.by_slug()[STUDY].device_sources_stage(device)
            own, with_paper = [stage], [stage, "ingest_published"]
            figs = self.figures[device]
            page = DevicePage(CHAPTER, device, "transfer tuning, energy and speed",
                              "Its Figures 2, 7, 8 and 9 analogs, its gains against the paper's, its CPU time, tail "
                              f"energy and capture, and its claims with their robustness. How each is made: {methods}.")

            def figure(name):
                if name in figs:
                    path, alt, caption, prov, published = figs[name]
                    page.figure(path, name, alt, caption)
                    page.provenance(prov, with_paper if published else own)

            page.heading("Capture")
            page.table(captures_shown(captures[captures["device"] == device].drop(columns="device")),
                "Capture session, host, link and the runs analysed", csv=tables / "captures.csv")
            page.provenance("measured (capture manifest, and the idle gate's record of every run where the capture "
                            "has one).", own)
            page.heading("One knob at a time (Figure 2 analog)")
            figure(f"fig2_{device}")
            g = self.gains_table[self.gains_table["device"] == device]
            page.table(with_interval(with_interval(g, "artifact x-fold", "x_fold_low", "x_fold_high"),
                                     "artifact saving %", "saving_pct_low", "saving_pct_high")
                       [["dataset", "knob", "paper x-fold", "artifact x-fold", "paper saving %", "artifact saving %"]]
                       .rename(columns={"paper saving %": "paper saving (%)", "artifact saving %": "saving (%)",
                                        "artifact x-fold": "x-fold"}),
                       f"x-fold throughput and energy saving per 100 MB: paper (Galaxy S5, WiFi, Sydney) vs {device} "
                       f"[{self.ci} CI over repetitions]", csv=tables / "gains_vs_paper.csv")
            page.provenance(f"published (§4, Figure 2 prose) and measured throughput / {kind} energy ({device}); "
                            + INTERVALS, with_paper)
            figure(f"ratios_vs_paper_{device}")
            page.table(self.cpu_tab[self.cpu_tab["device"] == device].drop(columns="device").rename(columns={
                "client_pct": "client CPU (% of one CPU)", "nginx_pct": "nginx CPU (% of one CPU)",
                "client_ms_per_mb": "client CPU (ms/MB)", "proc_stat_busy_pct": "/proc/stat busy (% of all CPUs)"}),
                f"CPU during the transfer vs concurrency ({device}): precise per-process CPU and /proc/stat busy "
                "(host-wide)", csv=tables / "cpu_concurrency.csv")
            page.provenance(f"measured ({device}): getrusage of the client, /proc/<pid>/schedstat of nginx, "
                            "/proc/stat.", own)
            page.heading("Concurrency x parallelism (Figure 7 analog)")
            figure(f"fig7_{device}")
            page.heading("Power over time and tail energy (Figures 9 and 8 analogs)")
            figure(f"fig9_{device}")
            figure(f"fig8_{device}")
            if device in self.tails:
                page.table(self.tails[device].drop(columns=["device"]).rename(columns={
                    "transfer_s": "transfer (s)", "energy_j": "transfer energy (J)", "tail_j": "tail energy (J)",
                    "tail_s": "tail (s)", "tail_share_pct": "tail share (%)"}),
                    f"Transfer and tail energy ({device}, {kind}; mean over repetitions)",
                    csv=tables / f"tail_{device}.csv")
                page.provenance(f"{kind} energy ({device}); transfer times measured.", own)
            page.heading("Claims")
            mine = self.claims_table["claim_id"].isin(self._device_ids(device)).to_numpy()
            page.table(self.claims_shown[mine], f"The paper's claims checked on {device}",
                       csv=self.results / "claims.csv")
            page.provenance(f"published (paper values) against measured throughput and {kind} energy ({device}); "
                            + INTERVALS, with_paper)
            rows = self.rob.table[self.rob.table["claim_id"].isin(self._device_ids(device))]
            if len(rows):
                page.table(robustness_shown(rows), f"Modeled verdicts on {device} with the assumed power "
                           "coefficients varied (each at ×0.5 and ×1.5, and all together over a Latin hypercube)",
                           csv=tables / "robustness.csv")
                page.provenance("modeled: the claims recomputed from the measured data at each set of "
                                "coefficients (params.yaml power-models, provenance assumed).", with_paper)
            figure(f"robustness_{device}")
            page.write(folder)
