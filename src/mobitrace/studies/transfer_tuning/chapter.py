"""The transfer-tuning chapter's outputs, section by section
(notebooks/transfer-tuning.py calls one method per code cell, in order).

Each method derives its tables with mobitrace.studies.transfer_tuning.analysis,
saves them (validated against mobitrace.studies.transfer_tuning.schema) and
shows them, the figures, the provenance lines and the numbers the prose
glues, through mobitrace.book.chapter.ChapterOutputs. Paper numbers come
from data/published/transfer-tuning.yaml (mobitrace.core.published.Values);
claims go through mobitrace.core.claims.Claims.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mobitrace.book.build import with_interval
from mobitrace.book.chapter import ChapterOutputs, NotebookChapter, paper_text, reference_first, site_href
from mobitrace.core import capture_reader
from mobitrace.core import claims as cl
from mobitrace.core.numbers import data_size
from mobitrace.core import numbers
from mobitrace.core.published import Values
from mobitrace.energy import power_models as power
from mobitrace.book.robustness import show as show_robustness
from mobitrace.energy import robustness
from mobitrace.studies.transfer_tuning import analysis as tta
from mobitrace.studies.transfer_tuning import figures as ttf
from mobitrace.studies.transfer_tuning import schema
from mobitrace.core.io import write_metrics

STAGE = "analyze_transfer_tuning"
STUDY = "transfer-tuning"
DATASETS = tta.DATASETS
HEADLINE = ["cc_html_xfold", "cc_html_saving", "cc_order", "p8_html_reduces", "combined_saving"]


class Chapter(NotebookChapter):
    """State shared by the chapter's sections: the parameters (params.yaml's
    transfer-tuning section and power-models), the ingested tables, the run
    energy table and what later sections reuse (sweeps, grid, claims)."""

    def __init__(self, study: str, published_dir: str, interim_dir: str, results_dir: str, devices: list[str], *,
                 reference_device: str, power_models: dict, cpu_model: str, radio_model: str, modeled_base_w: float,
                 tail_tolerance_w: float, default_io_kib: int, claim_level: int, rel_tol_approx: float,
                 robustness: dict):
        self.study, self.devices = study, reference_first(devices, reference_device)
        self.results = Path(results_dir)
        self.out = ChapterOutputs(self.results, STAGE)
        self.values = Values(published_dir)
        self.cpu = power.cpu_models(power_models)[cpu_model]
        self.radio = power.radio_models(power_models)[radio_model]
        self.base_w, self.tail_tolerance_w = modeled_base_w, tail_tolerance_w
        self.io_kib, self.claim_level, self.rel_tol = default_io_kib, claim_level, rel_tol_approx
        self.robustness_settings = robustness
        self.interim = tta.load_interim(interim_dir, self.devices)
        self.samples, self.power_paths = self.interim["samples"], tta.power_paths(interim_dir, self.devices)

    # Saving through the schema: every results table is validated when written.
    def _save(self, frame: pd.DataFrame, name: str) -> pd.DataFrame:
        return self.out.save_table(schema.results_schema(name).validate(frame), name)

    def _table(self, frame: pd.DataFrame, name: str, caption: str, shown: pd.DataFrame | None = None):
        return self.out.table(schema.results_schema(name).validate(frame), name, caption, shown=shown)

    def _trace_args(self):
        return self.measured, self.samples, self.cpu, self.radio, self.base_w, self.energy_kind

    def setup(self) -> Chapter:
        """Energy of every run (table runs_energy), the reference device's
        testbed configuration, and the numbers of the testbed section.
        Returns the chapter."""
        put, v = self.out.put, self.values
        i = self.interim
        # measured power logs: one streaming pass (energies, and traces thinned for the figures)
        self.measured = tta.measured_power(i["runs"], self.power_paths, self.tail_tolerance_w)
        self.rates = tta.rates_by_run(i["samples"])  # once: _claims_at prices them again at other coefficients
        self.table = tta.energy_table(i["runs"], self.rates, self.measured, self.cpu, self.radio, self.base_w,
                                      self.tail_tolerance_w)
        self._save(tta.runs_energy(self.table), "runs_energy")
        self.ref_device = self.devices[0]
        self.manifest = tta.session_manifest(i["sessions"], self.ref_device)
        self.conf = conf = self.manifest["configuration"]
        self.energy_kind = tta.energy_kind(self.table)
        put("ref_device", self.ref_device)
        put("n_runs", len(self.table))
        put("n_devices", len(self.devices))
        put("rate_mbit", float(conf["link"]["rate_mbit"]))
        put("rtt_ms", float(conf["rtt_ms"]))
        put("rmem_kib", conf["client_tcp_rmem_max"] / 1024)
        self.out.put_text("rmem_size", data_size(conf["client_tcp_rmem_max"]))
        put("reps", int(conf["repetitions"]))
        put("energy_kind", self.energy_kind)
        put("lock_s", float(sum(inv["lock_held_s"] for inv in self.manifest["invocations"])))
        out = self.out
        out.put_text("background_ref", capture_reader.background_text(capture_reader.background_load(self.manifest)))
        out.put_text("delay_bridge", tta.delay_element(conf))
        out.put_text("achieved_rate", tta.achieved_text(i["runs"][i["runs"]["device"] == self.ref_device],
                                                        float(conf["link"]["rate_mbit"])))
        put("p_rtt_sydney", v("rtt_sydney"))
        self.analysis = self._analysis_at(self.table)
        return self

    def _analysis_at(self, table: pd.DataFrame, intervals: dict | None = None) -> dict:
        """tta.analysis_at of the runs' energies `table`."""
        return tta.analysis_at(table, self.values, study=self.study, ref_device=self.ref_device, io_kib=self.io_kib,
                               grid_levels=self.conf["grid"], claim_level=self.claim_level, rel_tol=self.rel_tol,
                               intervals=intervals)

    def _claims_at(self, models: dict, intervals: dict) -> pd.DataFrame:
        """The claims with the reference device's energies priced by `models`
        (the CPU and radio models by name), the measured intervals given."""
        i, ref = self.interim, self.ref_device
        table = tta.energy_table(i["runs"][i["runs"]["device"] == ref], self.rates, self.measured,
                                 models[self.cpu.name], models[self.radio.name], self.base_w, self.tail_tolerance_w)
        return self._analysis_at(table, intervals)["claims"]

    def datasets(self) -> None:
        """Table 2 beside the served datasets, and the sizes the prose names."""
        out, v = self.out, self.values
        frame = tta.datasets_table(v, self.conf["datasets"], self.table, self.ref_device)
        for name in frame["dataset"]:
            d = self.conf["datasets"][name]
            out.put(f"files_{name}", int(d["files"]))
            out.put(f"paper_files_{name}", int(v(f"{name}_files")))
            out.put_text(f"served_sizes_{name}", f"{data_size(d['min_kib'] * 1024)} to {data_size(d['max_kib'] * 1024)}")
            out.put_text(f"paper_sizes_{name}", tta.paper_sizes(v, name))
        self._table(frame, "datasets", "Table 2 (published) and the datasets the kit served (measured bytes)")
        out.provenance("published (Table 2) and measured (bytes served in the reference capture).")

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

    def sweeps(self) -> None:
        """One knob at a time: the sweep tables and Figure 2 per device."""
        out, kind = self.out, self.energy_kind
        a = self.analysis
        self.knobs, self.sweep, self.knob_runs = a["knobs"], a["sweep"], a["knob_runs"]
        for name, frame in self.sweep.items():
            self._save(frame, f"sweep_{name}")
        for device in self.devices:
            out.figure(ttf.sweep_figure(self.knob_runs[self.knob_runs["device"] == device], kind), f"fig2_{device}",
                       alt=f"Six panels for {device}: throughput in Mbps (top) and energy per 100 MB in joules "
                           "(bottom) against concurrency, parallelism and I/O request size (log scale), one line "
                           "per dataset (html, image, video) with 95% confidence bands.",
                       caption=f"One knob at a time on {device}: throughput (measured) and energy per 100 MB "
                               f"({kind}), means over repetitions, bands: 95% bootstrap CI. Look at how throughput "
                               "rises and energy per 100 MB falls with concurrency, most for the small html files.",
                       folded=self._replicate(device))
            out.device_provenance(f"measured throughput and {kind} energy ({device}): "
                                  f"data/raw/transfer-tuning/{device}/.",
                                  STUDY, device, published=True)

    def _replicate(self, device: str) -> str | None:
        """How a figure of a device after the reference one is folded (the
        same figure, another device): the page stays as long with every
        device added."""
        return None if device == self.ref_device else f"The same figure for {device} (show)"

    def at(self, factor: str, ds: str, level: int, col: str) -> float:
        """Column `col` of the reference device's sweep along `factor` at `ds`, `level`."""
        return tta.level_value(self.ref[factor], ds, level, col)

    def gains(self) -> None:
        """The paper's gains and savings beside ours, with intervals (table and
        ratio figure), and the numbers of the sweeps' prose."""
        out, v, kind, ref_device = self.out, self.values, self.energy_kind, self.ref_device
        a = self.analysis
        self.ref, self.cc_top, self.p_best = a["ref"], a["cc_top"], a["p_best"]
        cc_top, p_best, rci = self.cc_top, self.p_best, a["ratios"]
        self._save(rci, "ratios_ci")
        self.rci = rci.set_index(["factor", "dataset", "level"])
        comp = tta.gains_vs_paper(v, self.ref, rci, cc_top)
        self._table(comp, "gains_vs_paper",
                    f"x-fold throughput and energy saving per 100 MB: paper (Galaxy S5, WiFi, Sydney) vs {ref_device} "
                    "[95% bootstrap CI over repetitions]",
                    shown=with_interval(with_interval(comp, "artifact x-fold", "x_fold_low", "x_fold_high"),
                                        "artifact saving %", "saving_pct_low", "saving_pct_high")
                    [["dataset", "knob", "paper x-fold", "artifact x-fold", "paper saving %", "artifact saving %"]]
                    .rename(columns={"paper saving %": "paper saving (%)",
                                     "artifact saving %": "artifact saving (%)"}))
        out.provenance(f"published (§4, Figure 2 prose) and measured throughput / {kind} energy ({ref_device}); "
                       "intervals: bootstrap over repetitions.")
        out.figure(ttf.ratio_figure(comp, kind), "ratios_vs_paper",
                   alt="Two dot plots, one row per dataset and knob: the throughput ratio (x-fold) and the "
                       "energy-per-100-MB ratio against level 1, with 95% bootstrap intervals, a dashed reference "
                       "line at 1 and the paper's ratios as crosses.",
                   caption=f"Throughput ratio (left, log scale) and energy ratio (right) of each knob against its "
                           f"level 1 on {ref_device} (points, 95% bootstrap CI over repetitions) and in the paper "
                           "(crosses). Right of 1 on the left: faster; left of 1 on the right: less energy. Look at "
                           "the gap between the points and the crosses: the directions agree, the magnitudes do not.")
        out.provenance(f"measured throughput and {kind} energy ({ref_device}); published ratios (§4); "
                       "intervals: bootstrap over repetitions.")
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

    def cpu_time(self) -> None:
        """CPU during the transfer against concurrency (table cpu_concurrency)."""
        ref_device = self.ref_device
        cpu_tab = tta.cpu_table(self.table, ref_device, self.io_kib)
        self._table(cpu_tab, "cpu_concurrency",
                    f"CPU during the transfer vs concurrency ({ref_device}): precise per-process CPU and /proc/stat "
                    "busy (host-wide)",
                    shown=cpu_tab.rename(columns={"client_pct": "client CPU (% of one CPU)",
                                                  "nginx_pct": "nginx CPU (% of one CPU)",
                                                  "client_ms_per_mb": "client CPU (ms/MB)",
                                                  "proc_stat_busy_pct": "/proc/stat busy (% of all CPUs)"}))
        self.out.provenance(f"measured ({ref_device}): getrusage of the client, /proc/<pid>/schedstat of nginx, "
                            "/proc/stat.")

    def grid(self) -> None:
        """Concurrency x parallelism: the table grid, Figure 7 per device, the
        largest saving and x-fold with their intervals."""
        out, v, kind = self.out, self.values, self.energy_kind
        a = self.analysis
        grid = self._save(a["grid"], "grid")
        for device in self.devices:
            out.figure(ttf.grid_figure(grid[grid["device"] == device], kind), f"fig7_{device}",
                       alt=f"Six annotated heat maps for {device}, one column per dataset: mean throughput in Mbps "
                           f"(top) and energy per 100 MB in joules (bottom) over concurrency (x) and parallelism (y).",
                       caption=f"Combined knobs on {device}: mean throughput (measured) and energy per 100 MB "
                               f"({kind}) over repetitions, I/O size {data_size(self.io_kib * 1024)}. Look for the brightest "
                               "throughput cell and the darkest energy cell of each dataset.",
                       folded=self._replicate(device))
            out.device_provenance(f"measured throughput and {kind} energy per 100 MB ({device}), mean "
                                  f"over repetitions.",
                                  STUDY, device, published=True)
        self.gref = gref = a["grid_ref"]
        self.best = best = a["best"]
        out.put("grid_best_saving", float(best["saving_pct"]))
        out.put("grid_best_where", f"{best['dataset']} at concurrency {int(best['concurrency'])}, "
                                   f"parallelism {int(best['parallelism'])}")
        out.put("grid_best_xfold", float(gref["x_fold"].max()))
        out.put("p_combined_saving", v("combined_saving"))
        out.put("p_combined_xfold", v("combined_xfold"))

    def power_over_time(self) -> None:
        """Figures 9 and 8 and the tail table per device, the longest tail."""
        out, kind = self.out, self.energy_kind
        for device in self.devices:
            vids = tta.concurrency_runs(self.table, device, self.io_kib)
            if len(vids):
                out.figure(ttf.concurrency_power_figure(vids, *self._trace_args()), f"fig9_{device}",
                           alt=f"{len(vids)} power traces in watts against time in seconds for the video dataset on "
                               f"{device}, one per concurrency level, with the transfer's energy and the tail shaded.",
                           caption=f"Power over time of one video transfer per concurrency level ({kind}, {device}, "
                                   "repetition 1). Look at how the shaded transfer gets shorter as concurrency rises "
                                   "while its height changes little: under the model, energy follows time.",
                           folded=self._replicate(device))
                out.device_provenance(f"{kind} power ({device}), repetition 1 of each concurrency level; throughput "
                                      "measured.", STUDY, device, published=True)
            tails = tta.tail_runs(self.table, device)
            if len(tails):
                out.figure(ttf.tail_power_figure(tails, *self._trace_args()), f"fig8_{device}",
                           alt=f"Three power traces in watts against time in seconds on {device}: one file, two "
                               "files back to back, two files at once, with the transfer's energy and the tail "
                               "shaded.",
                           caption=f"Transfer (shaded orange) and tail (shaded sky blue) energy of one, two sequential "
                                   f"and two concurrent files ({kind}, {device}). Look at the sky-blue tails: the "
                                   "modeled radio has no tail state.",
                           folded=self._replicate(device))
                tab = self._save(tta.tail_table(tails, device), f"tail_{device}")
                out.show(tab.drop(columns=["device"]).rename(columns={
                    "transfer_s": "transfer (s)", "energy_j": "transfer energy (J)", "tail_j": "tail energy (J)",
                    "tail_s": "tail (s)", "tail_share_pct": "tail share (%)"}),
                    f"Transfer and tail energy ({device}, {kind}; mean over repetitions)",
                    csv_href=out.href(f"tail_{device}"))
                out.device_provenance(f"{kind} energy ({device}); transfer times measured (figure and table).",
                                      STUDY, device, published=True)
        tails_ref = tta.tail_runs(self.table, self.ref_device)
        out.put("tail_max_s", float(tails_ref["tail_s"].max()) if len(tails_ref) else float("nan"))

    def claims(self) -> None:
        """The claims table (claims.csv), shown with intervals, and the key findings."""
        out, kind = self.out, self.energy_kind
        intervals = self.analysis["intervals"]
        claims = self.analysis["claims"]
        measured = tta.measured_intervals(intervals, claims)
        self.rob = robustness.study_robustness(lambda models: self._claims_at(models, measured),
                                       {self.cpu.name: self.cpu, self.radio.name: self.radio}, claims,
                                       self.robustness_settings)
        self.claims_table = table = self.rob.claims
        cl.write_claims(table, self.results / "claims.csv")
        shown = table.assign(
            paper=[paper_text(rel, val) for rel, val in zip(table["paper_relation"], table["paper_value"])],
            ours=[numbers.interval(a, *intervals.get(c, (None, None))) for c, a in
                  zip(table["claim_id"], table["artifact_value"])])
        out.show(shown[["claim", "location", "paper", "ours", "unit", "tolerance", "verdict", "category", "provenance",
                        "robustness"]]
                 .rename(columns={"ours": "this artifact [95% CI]"}),
                 "Claims of the transfer-tuning paper and their verdicts",
                 csv_href=site_href(self.results / "claims.csv"))
        out.provenance(f"published (paper values, locations in the table) against measured throughput and {kind} "
                       f"energy ({self.ref_device}); intervals: bootstrap over repetitions.")
        out.findings(table, headline=HEADLINE, intervals=intervals)
        show_robustness(out, self.rob)

    def metrics(self) -> dict:
        """Verdict counts for the prose, and metrics.json (returned)."""
        counts = cl.verdict_counts(self.claims_table)
        self.out.put_counts(counts)
        m = numbers.metric
        metrics = {
            "reference_device": self.ref_device,
            "energy": self.energy_kind,
            "runs": int(len(self.table)),
            "concurrency_xfold": {ds: m(self.at("concurrency", ds, self.cc_top, "x_fold")) for ds in DATASETS},
            "concurrency_saving_pct": {ds: m(self.at("concurrency", ds, self.cc_top, "saving_pct"))
                                       for ds in DATASETS},
            "parallelism_video_best_xfold": m(self.p_best["x_fold"]),
            "grid_best_saving_pct": m(self.best["saving_pct"]),
            "grid_best_xfold": m(self.gref["x_fold"].max()),
            "claims": cl.keyed(counts),
        }
        write_metrics(self.results / "metrics.json", metrics)
        return metrics
