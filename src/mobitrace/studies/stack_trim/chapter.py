"""The stack-trim chapter (notebooks/stack-trim.py), one method per code cell.

The notebook narrates; each method here computes with
:mod:`mobitrace.studies.stack_trim.analysis`, draws its figures
(the functions below), writes the results tables
(validated against :mod:`mobitrace.studies.stack_trim.schema`), and shows and
glues what the prose of its section uses, in the order the chapter reads.
The methods are called in the order of the chapter: later sections use what
earlier ones computed (the one-copy and UDP-vs-TCP tables, the key numbers,
the claims).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.ticker import FuncFormatter, NullFormatter

from mobitrace.book.chapter import ChapterOutputs, NotebookChapter, paper_text, site_href
from mobitrace.book.figures import legend_outside
from mobitrace.core import claims as cl, numbers
from mobitrace.core.published import Values
from mobitrace.book.robustness import robustness_shown, show as show_robustness
from mobitrace.energy import robustness
from mobitrace.energy.power_models import cpu_models
from mobitrace.studies import registry
from mobitrace.studies.stack_trim import analysis as sta
from mobitrace.studies.stack_trim import shown
from mobitrace.studies.stack_trim.shown import interval_extent, interval_long, series_label
from mobitrace.core.io import write_metrics

STAGE = "analyze_stack_trim"
STUDY = "stack-trim"
HEADLINE = ["onecopy_wifi_small", "onecopy_loopback_max", "onecopy_power_100", "udp_crossover",
            "udp20_more_efficient"]


SUSTAINED = {True: "yes", False: "no"}


def plain_ticks() -> FuncFormatter:
    """Tick labels as plain numbers (1, 10, 100), not powers of ten."""
    return FuncFormatter(lambda x, _: f"{x:g}")


def _intervals(data: pd.DataFrame, hue: str, ax, legend="auto") -> None:
    sns.lineplot(data=data, x="rate_mbps", y="value", hue=hue, style="rate sustained", style_order=["yes", "no"],
                 markers={"yes": "o", "no": "X"}, dashes=False, estimator="median", errorbar=interval_extent,
                 err_style="bars", err_kws={"capsize": 3}, ax=ax, legend=legend)


def onecopy_figure(table: pd.DataFrame, cpu_basis: str) -> plt.Figure:
    """Two panels against the rate (log scale): the normalized CPU energy
    saving of one-copy (%) and the modeled CPU power saving (mW), one curve
    per link and direction, crosses at rates not sustained; `table` is
    analysis.onecopy_table, drawn for the CPU-time basis `cpu_basis`."""
    t = table[table["basis"] == cpu_basis].assign(**{
        "link, direction": lambda f: [series_label(k, d) for k, d in zip(f["link"], f["direction"])],
        "rate sustained": lambda f: f["sustained"].map(SUSTAINED)})
    keep = ["link, direction", "rate_mbps", "rate sustained"]
    fig, axes = plt.subplots(2, 1, figsize=(7.5, 7.0), sharex=True)
    for ax, (est, lo, hi, scale, ylabel) in zip(axes, (
            ("saving", "saving_lo", "saving_hi", 100, "CPU energy saving (%)"),
            ("power_saving_mw", "power_saving_lo_mw", "power_saving_hi_mw", 1, "CPU power saving (mW, modeled)"))):
        _intervals(interval_long(t, est, lo, hi, keep, scale), "link, direction", ax, legend=ax is axes[0])
        ax.axhline(0, color="grey", lw=0.8)
        ax.set(xscale="log", xlabel="CBR rate (Mbps, log scale)", ylabel=ylabel)
    axes[0].set_ylabel("CPU energy saving (%)\n1 − E(one-copy)/E(two-copy)")
    axes[1].xaxis.set_major_formatter(plain_ticks())
    legend_outside(axes[0])
    return fig


def transport_figure(table: pd.DataFrame) -> plt.Figure:
    """E(UDP)/E(TCP) against the rate (log-log), one curve per link and UDP
    datagram size, a dashed line at 1; `table` is analysis.transport_table."""
    t = table.assign(**{
        "link, datagram": lambda f: [series_label(k, udp_size=z) for k, z in zip(f["link"], f["udp_size"])],
        "rate sustained": lambda f: f["sustained"].map(SUSTAINED)})
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    _intervals(interval_long(t, "ratio", "ratio_lo", "ratio_hi", ["link, datagram", "rate_mbps", "rate sustained"]),
               "link, datagram", ax)
    ax.axhline(1, color="grey", lw=0.8, ls="--")
    ax.set(xscale="log", yscale="log", xlabel="CBR rate (Mbps, log scale)",
           ylabel="CPU energy ratio E(UDP)/E(TCP) (log scale)")
    ax.xaxis.set_major_formatter(plain_ticks())
    ax.set_yticks([0.5, 1, 2, 5, 10])
    ax.yaxis.set_major_formatter(plain_ticks())
    ax.yaxis.set_minor_formatter(NullFormatter())
    legend_outside(ax)
    return fig


class Chapter(NotebookChapter):
    """The chapter's state: the notebook's parameters, the priced runs of
    each device, and the tables and numbers each section adds."""

    def __init__(self, *, study: str, published_dir: str, interim_dir: str, results_dir: str, devices: list[str],
                 power_model: str, power_models: dict, cpu_basis: str, alpha: float, n_resamples: int, seed: int,
                 min_delivered: float, wifi_max_mbps: float, wifi_link: str, rel_tol_approx: float,
                 robustness: dict, superseded: dict | None = None):
        self.study, self.cpu_basis, self.n_resamples = study, cpu_basis, n_resamples
        self.alpha = alpha  # every interval is 100(1 - alpha)%
        self.seed, self.min_delivered, self.rel_tol_approx = seed, min_delivered, rel_tol_approx
        self.wifi_max_mbps, self.wifi_link = wifi_max_mbps, wifi_link
        self.superseded_sessions = superseded or {}
        self.robustness_settings = robustness
        self.results = Path(results_dir)
        self.out = ChapterOutputs(self.results, STAGE, registry.by_slug()[STUDY].device_sources_stage)
        self.values = Values(published_dir)
        self.text_tables = pd.read_parquet(Path(published_dir) / "text_tables.parquet")
        self.model = cpu_models(power_models)[power_model]
        self.measured = sta.load_measured(interim_dir, devices, self.model)
        self.ref = devices[0] if devices else None
        # The reference device's path to its claims, at the assumed coefficients.
        self.analysis = self._analysis_at(self.model) if self.ref else {}
        self.onecopy: dict[str, pd.DataFrame] = {}
        self.transport: dict[str, pd.DataFrame] = {}
        self.crossover = pd.DataFrame()
        self.nums: dict = {}
        self.claims = pd.DataFrame()
        self.out.put("ref_device", self.ref or "none")

    def _analysis_at(self, model, claims_only: bool = False) -> dict:
        """sta.analysis_at of the reference device with its CPU time priced by `model`."""
        return sta.analysis_at(self.measured[self.ref][0], model, self.values, study=self.study, device=self.ref,
                               cpu_basis=self.cpu_basis, alpha=self.alpha, n_resamples=self.n_resamples,
                               seed=self.seed, min_delivered=self.min_delivered, wifi_link=self.wifi_link,
                               wifi_max_mbps=self.wifi_max_mbps, rel_tol_approx=self.rel_tol_approx,
                               claims_only=claims_only)

    def _glue(self, numbers: dict) -> None:
        for key, x in numbers.items():
            self.out.put(key, x)

    def captures(self) -> None:
        """The capture sessions and the conditions captured, per device."""
        out = self.out
        for device, (runs, sessions) in self.measured.items():
            out.show(shown.sessions_shown(sessions), f"Capture sessions of {device}")
            out.device_provenance(f"measured: session manifests of data/raw/stack-trim/{device}/; "
                                  f"{sessions['shared_host_note'].iloc[0]}.", device)
            conds = sta.conditions(runs)
            out.table(conds, f"conditions_{device}", f"Conditions captured on {device}",
                      shown=shown.conditions_shown(conds))
            out.device_provenance("measured: the conditions found in the ingested runs.", device)
        out.superseded(self.superseded_sessions, "data/raw/stack-trim")

    def power_model(self) -> None:
        """The CPU power model's coefficients, and the numbers about the host."""
        self.out.table(sta.power_model_table(self.model), "power_model",
                       "CPU power model coefficients (params.yaml power-models.cpu)")
        self.out.provenance("modeled: coefficients assumed (see source); idle value published (§2.1), subtracted.")
        if self.ref:
            self._glue(sta.host_numbers(*self.measured[self.ref], self.model))
            self._glue(sta.gate_numbers(self.measured[self.ref][1]))

    def _onecopy_tables(self) -> None:
        """The one-copy table of each device, written once."""
        if self.onecopy:
            return
        for device, (runs, _) in self.measured.items():
            table = self.analysis["onecopy"] if device == self.ref else sta.onecopy_table(
                runs, self.alpha, self.n_resamples, self.seed, self.min_delivered)
            self.onecopy[device] = self.out.save_table(table, f"onecopy_{device}")

    def onecopy_section(self) -> None:
        """One-copy against two-copy: each device's figure and its provenance
        (its table is on the methods page, onecopy_tables)."""
        out = self.out
        out.put("ci_pct", 100 * (1 - self.alpha))
        out.put("n_boot", self.n_resamples)
        out.put("min_deliv_pct", 100 * self.min_delivered)
        self._onecopy_tables()
        for device, table in self.onecopy.items():
            out.figure(onecopy_figure(table, self.cpu_basis), f"onecopy_{device}",
                       alt=f"Two panels against the constant bit rate in Mbps on {device}: the normalized CPU energy "
                           "saving of one-copy over two-copy in % (left) and the modeled CPU power saving in mW "
                           f"(right), with {numbers.level(self.alpha)} intervals, for loopback and veth, uplink and downlink.",
                       caption=f"One-copy against two-copy, CPU time of both endpoints, with {numbers.level(self.alpha)} intervals "
                               "over the repetitions. Look at where the intervals lie against the zero line (no "
                               "saving); crosses mark rates the host did not sustain.")
            out.device_provenance(f"measured CPU time on {device}; energies and powers modeled "
                                  f"({self.model.name}, assumed coefficients); intervals over repetitions: t below 30 runs, percentile bootstrap from 30, none below 3 (of the log ratio; Welch for a power difference).",
                                  device, published=True)

    def onecopy_tables(self) -> None:
        """Each device's one-copy table, with its CSV (the methods page)."""
        self._onecopy_tables()
        for device, table in self.onecopy.items():
            self.out.show(shown.onecopy_shown(table, self.alpha),
                          f"One-copy vs two-copy on {device} (energies above idle, modeled)",
                          csv_href=self.out.href(f"onecopy_{device}"))
            self.out.device_provenance("measured CPU time and goodput; energies, savings and intervals modeled "
                                       "from it.", device, published=True)

    def onecopy_summary(self) -> None:
        """The numbers of the text under the one-copy figure."""
        if self.ref:
            self._glue(sta.onecopy_summary(self.onecopy[self.ref], self.cpu_basis))
            self._glue(sta.sequential_summary(self.measured[self.ref][1]))

    def _transport_tables(self) -> None:
        """The UDP-vs-TCP table of each device and the crossover table, written once."""
        if self.transport:
            return
        for device, (runs, _) in self.measured.items():
            table = self.analysis["transport"] if device == self.ref else sta.transport_table(
                runs, self.cpu_basis, self.alpha, self.n_resamples, self.seed, self.min_delivered)
            self.transport[device] = self.out.save_table(table, f"transport_{device}")
        self.crossover = self.out.save_table(sta.crossover_table(self.transport), "crossover")

    def transport_section(self) -> None:
        """UDP against TCP: each device's figure, the crossover table, and
        the numbers of the text under them (the ratio tables are on the
        methods page, transport_tables)."""
        out = self.out
        self._transport_tables()
        for device, table in self.transport.items():
            out.figure(transport_figure(table), f"transport_{device}",
                       alt=f"The ratio of UDP's to TCP's CPU energy for uplink streaming on {device} against the "
                           "constant bit rate in Mbps, for 1472-byte and 20000-byte datagrams over loopback and veth, "
                           f"with {numbers.level(self.alpha)} intervals and a dashed reference line at 1.",
                       caption=f"UDP against TCP, uplink, CPU time of both endpoints, with {numbers.level(self.alpha)} intervals over "
                               "the repetitions. Above the dashed line UDP costs more CPU energy than TCP; crosses "
                               "mark rates the host did not sustain.")
            out.device_provenance(f"measured CPU time on {device}; energies modeled ({self.model.name}); "
                                  "intervals over repetitions: t below 30 runs, percentile bootstrap from 30, none below 3 (of the log ratio).", device, published=True)
        out.show(shown.crossover_shown(self.crossover),
                 "Rate from which UDP costs more CPU energy than TCP at every higher rate (empty: none)",
                 csv_href=out.href("crossover"))
        out.provenance("measured CPU time; energy ratios modeled; crossover read from the ratio table.")
        if self.ref:
            self._glue(sta.transport_numbers(self.measured[self.ref][0], self.transport[self.ref], self.crossover,
                                             self.ref, self.values("udp_crossover")))

    def transport_tables(self) -> None:
        """Each device's UDP-vs-TCP ratio table, with its CSV (the methods page)."""
        self._transport_tables()
        for device, table in self.transport.items():
            self.out.show(shown.transport_shown(table, self.alpha),
                          f"UDP vs TCP on {device}: energy ratio E(UDP)/E(TCP) with its interval",
                          csv_href=self.out.href(f"transport_{device}"))
            self.out.device_provenance("measured CPU time and goodput; energies, ratios and intervals modeled "
                                       "from it.", device, published=True)

    def breakdown(self) -> None:
        """The CPU-time breakdown per device, and the paper's Table 1."""
        out = self.out
        for device, (runs, _) in self.measured.items():
            b = sta.tcp_uplink_breakdown(runs)
            out.table(b, f"breakdown_{device}", f"CPU utilization (% of one core) of TCP two-copy uplink on {device}",
                      shown=shown.breakdown_shown(b))
            out.device_provenance("measured: endpoint times precise (getrusage); softirq, busy and other "
                                  "tick-sampled (/proc/stat).", device)
        out.show(shown.table1_shown(self.text_tables),
                 "Table 1 of the paper: CPU utilization during WiFi CBR streaming (Galaxy S3)")
        out.provenance("published (Table 1).")

    def key_numbers(self) -> None:
        """The key numbers on the reference device and the paper's values
        the prose quotes."""
        if self.ref:
            self.nums = self.analysis["nums"]
        self._glue(self.nums)
        self.out.put_text("oc_lo_max_phrase", sta.saving_phrase(self.nums.get("oc_lo_max_lo"),
                                                                self.nums.get("oc_lo_max_hi")))
        self.out.put("wifi_max", self.wifi_max_mbps)
        self._glue(sta.paper_numbers(self.values))

    def published(self) -> None:
        """Every value the chapter compares with, as printed."""
        self.out.show(self.values.frame[["id", "quantity", "device", "relation", "value", "unit", "location"]],
                      "Values stated by Zhu et al. (data/published/stack-trim.yaml)")
        self.out.provenance("published: transcribed from the paper, location per row.")

    def claims_section(self) -> None:
        """The claims table: written to claims.csv and shown."""
        self.out.put("tol_pct", 100 * self.rel_tol_approx)
        claims = self.analysis["claims"] if self.ref else sta.chapter_claims(
            self.nums, self.values, study=self.study, device=self.ref, wifi_link=self.wifi_link,
            wifi_max_mbps=self.wifi_max_mbps, rel_tol_approx=self.rel_tol_approx, alpha=self.alpha)
        name = self.model.name
        self.rob = robustness.study_robustness(
            lambda models: self._analysis_at(models[name], claims_only=True)["claims"], {name: self.model},
            claims, self.robustness_settings) if self.ref else None
        self.claims = pd.concat([self.rob.claims if self.rob else claims, *self._other_device_claims()],
                                ignore_index=True)
        cl.write_claims(self.claims, self.results / "claims.csv")
        self.out.show(claims_shown(self.claims), "Claims of the stack-trim paper",
                      csv_href=site_href(self.results / "claims.csv"))
        if not self.rob:
            self.out.put_text("robustness_text", "No capture: no modeled verdict to vary.")

    def _other_device_claims(self) -> list[pd.DataFrame]:
        """The claims of every device after the reference, at the assumed
        coefficients: the same claims, ids prefixed with the device."""
        return [device_claims(sta.analysis_at(
            runs, self.model, self.values, study=self.study, device=device, cpu_basis=self.cpu_basis,
            alpha=self.alpha, n_resamples=self.n_resamples, seed=self.seed, min_delivered=self.min_delivered,
            wifi_link=self.wifi_link, wifi_max_mbps=self.wifi_max_mbps,
            rel_tol_approx=self.rel_tol_approx)["claims"], device)
            for device, (runs, _) in self.measured.items() if device != self.ref]

    def robustness(self) -> None:
        """The robustness analysis: written (and its summary glued) by the
        chapter in a hidden cell; the methods page shows its files
        (robustness_shown)."""
        if self.rob:
            show_robustness(self.out, self.rob)

    def robustness_shown(self) -> None:
        """The chapter's robustness table and figure, from its files."""
        table = self.out.tables_dir / "robustness.csv"
        if not table.is_file():
            return
        self.out.show(robustness_shown(pd.read_csv(table)), "Modeled verdicts with the assumed power coefficients "
                      "varied (each at ×0.5 and ×1.5, and all together over a Latin hypercube)",
                      csv_href=self.out.href("robustness"))
        self.out.provenance("modeled: the chapter's claims recomputed from the measured data at each set of "
                            "coefficients (params.yaml power-models, provenance assumed; robustness section).")
        figure = self.out.figures_dir / "robustness.svg"
        if figure.is_file():
            self.out.figure(figure, "robustness", alt="Tornado plots, one panel per modeled claim whose value "
                            "moves: for each assumed coefficient a bar from the claim's value with that coefficient "
                            "halved to its value with it at 1.5 times, a solid line at the value with the assumed "
                            "coefficients and a dashed line at the paper's value.",
                            caption="How far each modeled value (that moves at all) shifts when one assumed "
                                    "coefficient is halved (blue) or raised by half (orange); solid line: the assumed "
                                    "coefficients; dashed: the paper's value. Look for a bar that crosses the dashed "
                                    "line: that verdict depends on the coefficient.")
            self.out.provenance("modeled from measured data at varied assumed coefficients.")

    def findings(self) -> None:
        """The key findings (moved to the top of the page by the book)."""
        intervals = {}
        if self.ref:
            intervals = sta.findings_intervals(self.nums)
        self.out.findings(self.claims, headline=HEADLINE, intervals=intervals)

    def metrics(self) -> None:
        """The verdict counts for the prose, and metrics.json."""
        self.out.put_counts(cl.verdict_counts(self.claims))
        write_metrics(self.results / "metrics.json", sta.metrics(self.ref, self.model, self.nums, self.claims))


def device_claims(claims_table: pd.DataFrame, device: str) -> pd.DataFrame:
    """A non-reference device's claims: ids `<device>_<id>` and the device
    named in the claim (the reference device's claims keep their ids)."""
    return claims_table.assign(claim_id=[f"{device}_{c}" for c in claims_table["claim_id"]],
                               claim=[f"{c} ({device})" for c in claims_table["claim"]])


def claims_shown(claims_table: pd.DataFrame) -> pd.DataFrame:
    """The claims table for people: the paper's value with its relation."""
    shown = claims_table.assign(paper=[paper_text(r, p) for r, p in
                                       zip(claims_table["paper_relation"], claims_table["paper_value"])])
    return shown[["claim", "location", "paper", "artifact_value", "unit", "verdict", "category", "provenance",
                  "robustness"]].rename(columns={"artifact_value": "this artifact"})
