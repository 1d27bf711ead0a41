"""The cpu-gbps chapter (notebooks/cpu-gbps.py): what it shows from the
paper's own numbers, one `Chapter` method per code cell, in the order the
chapter reads. The numbers come from mobitrace.studies.cpu_gbps.analysis.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from mobitrace.book.chapter import ChapterOutputs, NotebookChapter, paper_text, site_href
from mobitrace.book.figures import legend_outside
from mobitrace.core import claims as cl
from mobitrace.core.published import Values
from mobitrace.studies.cpu_gbps import analysis as an
from mobitrace.studies.cpu_gbps.analysis import line_frame
from mobitrace.core.io import write_metrics

STAGE = "analyze_cpu_gbps"
HEADLINE = ["pixel2_1p6gbps_under_50pct", "rog_1p7gbps_under_15pct", "affinity_4x", "eas_big_drop_400"]


def lines_figure(lines: dict, points: pd.DataFrame, targets: list[float], threshold: float):
    """The implied lines (seaborn lineplot) with the stated points (filled:
    define a line; crosses: checked against it), the CPU threshold (dashed)
    and the target rates (dotted)."""
    frame = line_frame(lines, max(targets) * 1.05)
    fig, ax = plt.subplots()
    sns.lineplot(data=frame, x="throughput_gbps", y="cpu_pct", hue="device", ax=ax)
    sns.scatterplot(data=points, x="throughput_gbps", y="value", hue="device", style="role", s=70, ax=ax,
                    markers={"defines the line": "o", "checked against it": "X"}, legend="brief")
    ax.axhline(threshold, color="grey", lw=0.8, ls="--")
    for rate in targets:
        ax.axvline(rate, color="grey", lw=0.5, ls=":")
    ax.set(xlabel="TCP downlink throughput (Gbps)", ylabel="Total CPU utilization (%)",
           xlim=(0, frame["throughput_gbps"].max()), ylim=(0, 100))
    legend_outside(ax)
    return fig


class Chapter(NotebookChapter):
    """The chapter's state: the notebook's parameters, the paper's numbers and
    what later sections reuse (the implied lines, the derived ratios, the claims)."""

    def __init__(self, *, study: str, published_dir: str, results_dir: str, target_rates_gbps: list[float],
                 cpu_threshold_pct: float, line_points: dict, rel_tol_equal: float, rel_tol_approx: float):
        self.study, self.line_points = study, line_points
        self.target_rates_gbps, self.cpu_threshold_pct = target_rates_gbps, cpu_threshold_pct
        self.rel_tol_equal, self.rel_tol_approx = rel_tol_equal, rel_tol_approx
        self.results = Path(results_dir)
        self.out = ChapterOutputs(self.results, STAGE)
        self.v = Values(published_dir)
        self.text_tables = pd.read_parquet(Path(published_dir) / "text_tables.parquet")

    def table1(self) -> None:
        self.out.table(an.text_table(self.text_tables, "table1"), "table1_phones", "Table 1: Phone Specifications")

    def stated(self) -> None:
        stated = an.stated_values(self.v.frame)
        self.out.table(stated, "stated_cpu_throughput", "CPU and throughput as the paper states them",
                       shown=stated.rename(columns={"throughput_gbps": "throughput (Gbps)"}))

    def implied_lines(self) -> None:
        out = self.out
        self.lines, implied, glued = an.implied_lines(self.v, self.line_points, self.target_rates_gbps,
                                                      self.cpu_threshold_pct)
        out.save_table(implied, "implied_lines")
        out.put_all(glued)
        out.show(implied.set_index("device").T.rename_axis("quantity"),
                 "The lines implied by two stated points per phone", index=True, csv_href=out.href("implied_lines"))

    def implied_lines_figure(self) -> None:
        self.out.figure(lines_figure(self.lines, an.line_points_frame(self.v.frame, self.line_points),
                                     self.target_rates_gbps, self.cpu_threshold_pct),
                        "implied_lines",
                        alt="Two straight lines of total CPU utilization (%) against throughput (Gbps), one per "
                            "phone, with the paper's stated points; the Pixel 2's line is the steeper.",
                        caption="The lines the paper's extrapolations imply (modeled, through the round points) "
                                "with the points it states (published). Look at how far each line is from 100% CPU "
                                "at the dotted target rates, and whether the crosses lie on the lines.")

    def table2(self) -> None:
        self.out.table(an.table2(self.v), "table2_gro_off_mbps", "Table 2: Throughput (Mbps) with GRO off")

    def derived_ratios(self) -> None:
        v = self.v
        derived_table, self.derived = an.derived_ratios(v)
        self.out.table(derived_table, "derived_ratios", "Ratios the prose states, re-derived")
        for name, value in [*self.derived.items(), ("battery_minutes", v("battery_test_duration")),
                            ("battery_drop_low", v("battery_drop_low")), ("battery_drop_high", v("battery_drop_high"))]:
            self.out.put(name, value)

    def battery(self) -> None:
        self.out.table(an.battery_drain(self.v), "battery_drain", "What the battery drop bounds")
        self.out.put("rel_tol_equal", self.rel_tol_equal)
        self.out.put("rel_tol_approx", self.rel_tol_approx)

    def claims(self) -> None:
        """The claims table, its verdicts and the key findings."""
        out, results = self.out, self.results
        self.claims_table = claims_table = an.chapter_claims("cpu-gbps", self.v, self.lines, self.derived,
                                                             self.rel_tol_equal, self.rel_tol_approx)
        cl.write_claims(claims_table, results / "claims.csv")
        shown = claims_table.assign(paper=[paper_text(r, p) for r, p in
                                           zip(claims_table["paper_relation"], claims_table["paper_value"])])
        out.show(shown[["claim", "location", "paper", "artifact_value", "unit", "tolerance", "verdict", "category"]]
                 .rename(columns={"artifact_value": "artifact"}), "Claims of the paper and their verdicts",
                 csv_href=site_href(results / "claims.csv"))
        out.findings(claims_table, headline=HEADLINE)

    def metrics(self) -> None:
        counts = cl.verdict_counts(self.claims_table)
        self.out.put_counts(counts)
        metrics = an.chapter_metrics(self.lines, self.cpu_threshold_pct, self.target_rates_gbps,
                                     self.derived["affinity_gain"], counts)
        write_metrics(self.results / "metrics.json", metrics)
