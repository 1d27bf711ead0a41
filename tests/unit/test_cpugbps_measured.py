"""The cpu-gbps-measured chapter's comparisons and figures, on hand-made runs
(not measurements)."""

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mobitrace.studies.cpu_gbps import figures as cpu_figures
from mobitrace.studies.cpu_gbps import measured_analysis
from mobitrace.studies.cpu_gbps.device_analysis import fit_table

from .test_cpugbps_device import synthetic_runs


def two_devices():
    """Device a reaches 10, 12, 14 Gbps at the unlimited rate, device b 5, 6, 7."""
    a = synthetic_runs("dev-a", slope=2.0)
    b = synthetic_runs("dev-b", slope=3.0, seed=2)
    for frame, values in ((a, [10.0, 12.0, 14.0]), (b, [5.0, 6.0, 7.0])):
        for direction in ("down", "up"):
            at_max = (frame["target_rate_bps"] == 0) & (frame["direction"] == direction)
            frame.loc[at_max, "throughput_gbps"] = values
    runs = pd.concat([a, b], ignore_index=True)
    fits, _ = fit_table(runs, 0.05, [1.6], 50)
    return runs, fits


def test_compare_hand_case():
    runs, fits = two_devices()
    c = measured_analysis.compare(runs, fits, "dev-a", "dev-b", "b vs a", alpha=0.05)
    assert list(c["direction"]) == ["down", "up"]
    d = c.set_index("direction").loc["down"]
    assert d["a_max_gbps"] == pytest.approx(12.0) and d["b_max_gbps"] == pytest.approx(6.0)
    assert d["ratio_b_over_a"] == pytest.approx(0.5)
    # t interval of 10, 12, 14: 12 +- t(0.975, 2) * 2 / sqrt(3)
    half = stats.t.ppf(0.975, 2) * 2 / math.sqrt(3)
    assert (d["a_lo"], d["a_hi"]) == pytest.approx((12 - half, 12 + half))
    # log-scale delta method: both samples have CV 1/6 of the mean's sd: v = (1/6)^2 / 3 each,
    # Welch df = 4 (equal v, k = 3): 0.5 * exp(+-t(0.975, 4) * sqrt(2 v))
    se = math.sqrt(2 * (1 / 6) ** 2 / 3)
    t4 = stats.t.ppf(0.975, 4)
    assert (d["ratio_lo"], d["ratio_hi"]) == pytest.approx((0.5 * math.exp(-t4 * se), 0.5 * math.exp(t4 * se)))
    assert d["welch_p"] == pytest.approx(stats.ttest_ind([5, 6, 7], [10, 12, 14], equal_var=False).pvalue)
    assert d["a_stat_slope"] == pytest.approx(measured_analysis.fit_of(fits, "dev-a", "down", "stat_total")["slope"])
    # The CSV keeps its columns and gains the ratio interval at the end.
    assert list(c.columns[-2:]) == ["ratio_lo", "ratio_hi"]


def test_comparison_shown_for_people():
    runs, fits = two_devices()
    family = measured_analysis.holm_family({"x": measured_analysis.compare(runs, fits, "dev-a", "dev-b", "b vs a", alpha=0.05)}, alpha=0.05)["x"]
    shown = measured_analysis.comparison_shown(family, "on", "off", 0.05)
    assert shown.loc[0, "direction"] == "downlink"
    assert shown.loc[0, "on (Gbps) [95% CI]"] == "12.0 [7.0, 17.0]"
    assert shown.loc[0, "ratio b / a [95% CI]"].startswith("0.50")
    assert "p (Welch)" in shown.columns
    # one family of both directions' tests: Holm multiplies the smaller p by 2
    holm_col = f"p (Holm over the 2 tests of the {measured_analysis.FAMILY})"
    assert shown[holm_col].min() == pytest.approx(min(1.0, 2 * shown["p (Welch)"].min()))


def test_helpers():
    assert measured_analysis.anchor_of("measured_gro_off_ratio") == "cpu-gbps-measured-offloads"
    assert measured_analysis.anchor_of("something_else") == "cpu-gbps-measured-claims"
    assert measured_analysis.claim_key("vm-veth-default") == "vm_veth_default"
    assert measured_analysis.r6(float("nan")) is None and measured_analysis.r6(1.23456789) == 1.234568
    with pytest.raises(KeyError):
        measured_analysis.fit_of(two_devices()[1], "nope", "down", "stat_total")


def test_figures_have_units_and_legends_outside():
    runs, fits = two_devices()
    phones = pd.DataFrame([{"device": "Phone", "slope_pct_per_gbps": 10.0, "intercept_pct": 2.0}])
    for fig in (cpu_figures.throughput_figure(runs, ["dev-a", "dev-b"], alpha=0.05), cpu_figures.procstat_figure(runs, ["dev-a", "dev-b"]),
                cpu_figures.lines_figure(runs, phones, ["dev-a", "dev-b"], [1.6, 4.0], 50, alpha=0.05)):
        axes = fig.get_axes()
        for ax in axes:
            assert "(" in ax.get_xlabel(), ax.get_xlabel()
        legend = axes[-1].get_legend()
        assert legend is not None
        # Anchored right of the axes (x > 1 in axes coordinates): it covers no data.
        anchor = legend.get_bbox_to_anchor().transformed(axes[-1].transAxes.inverted())
        assert anchor.x0 >= 1.0
        plt.close(fig)


def test_throughput_figure_error_bars_are_the_t_interval():
    runs, _ = two_devices()
    fig = cpu_figures.throughput_figure(runs, ["dev-a", "dev-b"], alpha=0.05)
    ax = fig.get_axes()[0]
    spans = [tuple(np.round([np.nanmin(line.get_xdata()), np.nanmax(line.get_xdata())], 6))
             for line in ax.get_lines() if np.isnan(line.get_xdata()).any()]
    half = stats.t.ppf(0.975, 2) * 2 / math.sqrt(3)
    assert tuple(np.round([12 - half, 12 + half], 6)) in spans
    plt.close(fig)


def test_holm_family_over_all_device_comparisons_hand_case_synthetic():
    # Holm by hand: p 0.01, 0.03, 0.04 (m = 3) -> 0.03, max(0.03, 2 * 0.03) = 0.06, max(0.06, 1 * 0.04) = 0.06
    from mobitrace.studies.cpu_gbps import measured_analysis
    frames = {"gro": pd.DataFrame({"direction": ["down", "up"], "welch_p": [0.01, 0.04]}),
              "rps": pd.DataFrame(), "slow": pd.DataFrame({"direction": ["down"], "welch_p": [0.03]})}
    out = measured_analysis.holm_family(frames, alpha=0.05)
    assert out["rps"].empty
    assert out["gro"]["welch_p_holm"].tolist() == pytest.approx([0.03, 0.06])
    assert out["slow"]["welch_p_holm"].tolist() == pytest.approx([0.06])
    assert set(out["gro"]["family_size"]) == {3} and set(out["slow"]["family"]) == {measured_analysis.FAMILY}


def _legend_fits(fig) -> None:
    """No colour repeats among the devices, and the legend is no taller than the plot."""
    fig.canvas.draw()
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None:
            assert legend.get_window_extent().height <= ax.get_window_extent().height


@pytest.mark.parametrize("n", [5, 40])
def test_synthetic_cross_device_figures_never_repeat_a_colour(n):
    from matplotlib.colors import to_hex

    from mobitrace.book.figures import MOST_COLOURED, OTHERS
    devices = [f"synthetic-{i:02d}" for i in range(n)]
    runs = pd.concat([synthetic_runs(d, slope=2.0 + 0.05 * i, seed=i) for i, d in enumerate(devices)],
                     ignore_index=True)
    phones = pd.DataFrame({"device": ["phone"], "intercept_pct": [5.0], "slope_pct_per_gbps": [10.0]})
    highlight = devices[-3:]
    fig = cpu_figures.lines_figure(runs, phones, devices, [1.6, 4.0], 50, 0.05, highlight=highlight)
    _legend_fits(fig)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    colours = [to_hex(h.get_color()) for h in fig.axes[0].get_legend().legend_handles
               if hasattr(h, "get_color") and h.get_label().endswith("(measured)")]
    coloured = [c for c in colours if c != to_hex(OTHERS)]
    assert len(set(coloured)) == len(coloured) == (n if n <= MOST_COLOURED else len(highlight))
    if n > MOST_COLOURED:
        assert [f"{d} (measured)" for d in highlight] == labels[:3]
        assert f"{n - 3} other devices (measured)" in labels
    plt.close(fig)
    fig = cpu_figures.procstat_figure(runs, devices, highlight)
    _legend_fits(fig)
    entries = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert len(entries) == (n if n <= MOST_COLOURED else len(highlight) + 1)
    plt.close(fig)
