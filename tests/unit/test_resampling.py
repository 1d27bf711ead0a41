"""Bootstrap helpers (mobitrace.stats.resampling) and the mptcp-dualband optima
intervals (mobitrace.studies.mptcp_dualband.analysis) on hand-computable cases."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mobitrace.studies.mptcp_dualband import ratios
from mobitrace.studies.mptcp_dualband import chapter as mdp
from mobitrace.stats import resampling as rs
from mobitrace.stats.intervals import mean_ci, ratio_ci


def test_boot_means_constant_groups_give_degenerate_distributions():
    f = pd.DataFrame({"g": ["a", "a", "b", "b", "b"], "x": [2.0, 2.0, 5.0, 5.0, 5.0], "y": [1.0] * 5})
    d = rs.boot_means(f, ["g"], ["x", "y"], n_boot=50)
    assert list(d["x"].index) == ["a", "b"]
    assert d["x"].shape == (2, 50)
    assert (d["x"].loc["a"] == 2.0).all() and (d["x"].loc["b"] == 5.0).all()
    assert (d["y"] == 1.0).all().all()


def test_boot_means_is_seeded_and_paired():
    f = pd.DataFrame({"g": [1] * 4, "x": [1.0, 2.0, 3.0, 4.0]})
    f["y"] = 10 * f["x"]
    a = rs.boot_means(f, ["g"], ["x", "y"], n_boot=200, seed=7)
    b = rs.boot_means(f, ["g"], ["x", "y"], n_boot=200, seed=7)
    assert a["x"].equals(b["x"])
    np.testing.assert_allclose(a["y"].to_numpy(), 10 * a["x"].to_numpy())  # same draws for both columns
    # every draw is a mean of 4 of the values: between 1 and 4, in steps of 0.25
    x = a["x"].to_numpy()
    assert x.min() >= 1 and x.max() <= 4
    np.testing.assert_allclose(x * 4, np.round(x * 4))


def test_percentile_ci():
    d = np.arange(101, dtype=float)
    assert rs.percentile_ci(d, 0.1) == pytest.approx((5.0, 95.0))
    lo, hi = rs.percentile_ci([70.0] * 30 + [73.0] * 70, 0.05, discrete=True)
    assert (lo, hi) == (70.0, 73.0)
    assert np.isnan(rs.percentile_ci([np.nan, np.nan], 0.05)[0])


def test_change_and_saving_and_mean_ci():
    assert rs.change_pct(1.32, 1.0) == pytest.approx(32.0)
    assert rs.saving_pct(30.0, 100.0) == pytest.approx(70.0)
    m, lo, hi = mean_ci([1.0, 3.0], 0.05, min_n=2)  # mean 2, sd sqrt(2), se 1, t(0.975, 1) = 12.706
    assert m == 2.0 and lo == pytest.approx(2 - 12.7062, abs=1e-3) and hi == pytest.approx(2 + 12.7062, abs=1e-3)
    assert np.isnan(mean_ci([1.0], 0.05)[1])
    assert np.isnan(mean_ci([1.0, 3.0], 0.05)[1])  # two values: no interval by default (MIN_N)


def test_arg_best_with_allowed_rows():
    idx = pd.MultiIndex.from_tuples([("d", 0), ("d", 50), ("d", 100)], names=["direction", "ratio_a_pct"])
    d = pd.DataFrame([[1.0, 5.0], [3.0, 2.0], [2.0, 1.0]], index=idx)
    np.testing.assert_array_equal(rs.arg_best(d, "ratio_a_pct"), [50.0, 0.0])
    np.testing.assert_array_equal(rs.arg_best(d, "ratio_a_pct", maximize=False), [0.0, 100.0])
    allowed = pd.DataFrame([[False, False], [True, False], [True, False]], index=idx)
    out = rs.arg_best(d, "ratio_a_pct", maximize=False, allowed=allowed)
    assert out[0] == 100.0 and np.isnan(out[1])


def _runs(reps: int = 3):
    # backlogged downlink: throughput peaks at 73, nJ/bit falls with the share on path a
    rows = []
    for ratio, tput, nj in ((0, 600, 1.9), (50, 1200, 1.6), (73, 2100, 1.5), (90, 1700, 1.45), (100, 1500, 1.4)):
        for rep in range(reps):
            rows.append({"direction": "downlink", "demand": 0.0, "ratio_a_pct": float(ratio),
                         "tput_eq_mbps": tput + rep % 3, "nj_per_bit": nj})
    return pd.DataFrame(rows)


def test_optima_ci_and_change_ci():
    from mobitrace.stats.intervals import PERCENTILE_MIN_N

    runs = _runs(PERCENTILE_MIN_N)  # an optimum's percentile interval needs that many runs per ratio
    d = ratios.boot(runs, n_boot=100)
    o = ratios.optima_ci(d, 0.95, 0.05).iloc[0]
    assert (o["tput_opt_ratio_low"], o["tput_opt_ratio_high"]) == (73.0, 73.0)
    assert (o["energy_opt_both_ratio_low"], o["energy_opt_both_ratio_high"]) == (90.0, 90.0)
    assert (o["energy_opt_satisfying_ratio_low"], o["energy_opt_satisfying_ratio_high"]) == (100.0, 100.0)
    lo, hi = ratios.change_ci(runs, "nj_per_bit", "downlink", 0.0, 73.0, 100.0, 0.05)  # 1.5 / 1.4: +7.14%
    assert lo == pytest.approx(100 * (1.5 / 1.4 - 1)) and hi == pytest.approx(lo)
    lo, hi = ratios.change_ci(runs, "tput_eq_mbps", "downlink", 0.0, 73.0, 100.0, 0.05)  # (2100..2102) / (1500..1502)
    assert 100 * (2100 / 1502 - 1) <= lo <= hi <= 100 * (2102 / 1500 - 1)
    # three runs per ratio: no percentile interval of an optimum, the t interval of the log ratio for a change
    few = _runs(3)
    o = ratios.optima_ci(ratios.boot(few, n_boot=100), 0.95, 0.05).iloc[0]
    assert o[["tput_opt_ratio_low", "tput_opt_ratio_high", "energy_opt_both_ratio_low"]].isna().all()
    lo, hi = ratios.change_ci(few, "tput_eq_mbps", "downlink", 0.0, 73.0, 100.0, 0.05)
    r, rlo, rhi = ratio_ci([2100, 2101, 2102], [1500, 1501, 1502], 0.05)
    assert (lo, hi) == (pytest.approx(100 * (rlo - 1)), pytest.approx(100 * (rhi - 1)))
    assert all(np.isnan(ratios.change_ci(_runs(2), "tput_eq_mbps", "downlink", 0.0, 73.0, 100.0, 0.05)))  # n = 2: none


def test_sweep_figure_draws_two_rows_per_direction():
    import matplotlib.pyplot as plt

    runs = _runs()
    runs = pd.concat([runs, runs.assign(direction="uplink")], ignore_index=True)
    runs["tput_a_eq_mbps"] = runs["tput_eq_mbps"] * runs["ratio_a_pct"] / 100
    runs["tput_b_eq_mbps"] = runs["tput_eq_mbps"] - runs["tput_a_eq_mbps"]
    runs["radio_nj_per_bit"] = runs["nj_per_bit"] - 0.02
    opt = pd.DataFrame([{"direction": d, "demand": 0.0, "tput_opt_ratio": 73.0, "energy_opt_satisfying_ratio": 100.0}
                        for d in ("downlink", "uplink")])
    fig = mdp.sweep_figure(runs, opt, {"downlink": 0.0, "uplink": 0.0}, "t",
                           {"a": "C0", "b": "C1", "total": "C2"}, n_boot=20, alpha=0.05)
    assert len(fig.axes) == 4
    assert fig.axes[1].get_ylabel() == "throughput (Mbps)"
    assert [x for x in fig.axes[0].lines if list(x.get_xdata()) == [73.0, 73.0]]
    plt.close(fig)


def test_tt_ratio_ci_hand_computed():
    from mobitrace.studies.transfer_tuning import analysis as tta

    # html: level 1 at 10 Mbit/s and 100 J; level 4 at 30 (eight reps: 29, 31, ...) and 40 J: 3x faster,
    # saves 60%. x-fold interval: 3 exp(-+t_{0.975, 7} sd / (30 sqrt 8)), sd = 1.069: [2.90, 3.10].
    rows = [{"device": "d", "dataset": "html", "level": 1, "throughput_mbps": 10.0, "energy_per_100mb_j": 100.0}
            for _ in range(3)]
    rows += [{"device": "d", "dataset": "html", "level": 4, "throughput_mbps": tput, "energy_per_100mb_j": 40.0}
             for tput in (29.0, 31.0) * 4]
    r = tta.ratio_ci(pd.DataFrame(rows), ["device", "dataset"], n_boot=200, alpha=0.05).set_index("level")
    assert r.loc[1, "x_fold"] == 1.0 and r.loc[1, "x_fold_low"] == 1.0 and r.loc[1, "x_fold_high"] == 1.0
    assert r.loc[4, "x_fold"] == pytest.approx(3.0)
    assert 2.9 <= r.loc[4, "x_fold_low"] <= 3.0 <= r.loc[4, "x_fold_high"] <= 3.1
    assert r.loc[4, "energy_ratio"] == pytest.approx(0.4)
    assert r.loc[4, "saving_pct"] == pytest.approx(60.0)
    assert r.loc[4, "saving_pct_low"] == pytest.approx(60.0) and r.loc[4, "saving_pct_high"] == pytest.approx(60.0)
    sd = np.std([29.0, 31.0] * 4, ddof=1)
    half = stats.t.ppf(0.975, 7) * sd / (30 * np.sqrt(8))  # log-ratio t, the baseline has no spread
    assert (r.loc[4, "x_fold_low"], r.loc[4, "x_fold_high"]) == (pytest.approx(3 * np.exp(-half)),
                                                                 pytest.approx(3 * np.exp(half)))
    two = tta.ratio_ci(pd.DataFrame(rows[:3] + rows[3:5]), ["device", "dataset"], alpha=0.05).set_index("level")
    assert np.isnan(two.loc[4, "x_fold_low"]) and np.isnan(two.loc[4, "x_fold_high"])  # two reps: no interval


def test_tt_ratio_ci_explicit_baseline_on_a_grid():
    from mobitrace.studies.transfer_tuning import analysis as tta

    rows = [{"dataset": "v", "concurrency": c, "parallelism": p, "throughput_mbps": 5.0 * c * p,
             "energy_per_100mb_j": 100.0 / (c * p)} for c in (1, 2) for p in (1, 2)]
    r = tta.ratio_ci(pd.DataFrame(rows), ["dataset"], level=["concurrency", "parallelism"],
                     baseline={"concurrency": 1, "parallelism": 1}, n_boot=20, alpha=0.05)
    best = r.sort_values("x_fold").iloc[-1]
    assert (best["concurrency"], best["parallelism"], best["x_fold"]) == (2, 2, 4.0)
    assert best["saving_pct"] == pytest.approx(75.0)


def test_ratio_points_draws_intervals_reference_and_paper():
    import matplotlib.pyplot as plt

    f = pd.DataFrame({"comparison": ["x", "y"], "ratio": [1.3, 0.9], "low": [1.2, 0.8], "high": [1.5, 1.0],
                      "paper": [1.32, np.nan]})
    ax = rs.ratio_points(f, alpha=0.05)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x", "y"]
    assert [list(x.get_xdata()) for x in ax.lines if list(x.get_xdata()) == [1.0, 1.0]]  # reference at 1
    bars = ax.containers[0]  # the error bars: x from low to high
    segs = bars.lines[2][0].get_segments()
    np.testing.assert_allclose([s[:, 0] for s in segs], [[1.2, 1.5], [0.8, 1.0]])
    labels = ax.get_legend_handles_labels()[1]
    assert "paper" in labels
    plt.close(ax.figure)


def test_tt_sweep_and_grid_figures_on_synthetic_runs():
    import matplotlib.pyplot as plt

    from mobitrace.studies.transfer_tuning import analysis as tta
    from mobitrace.studies.transfer_tuning import figures as ttf

    rows = [{"device": "d", "dataset": ds, "kind": "sweep", "concurrency": c, "parallelism": p, "io_kib": 16,
             "rep": rep, "throughput_mbps": 10.0 * c * p + rep, "energy_per_100mb_j": 100.0 / (c * p)}
            for ds in ("html", "video") for c in (1, 2, 4) for p in (1, 2) for rep in (1, 2)]
    table = pd.DataFrame(rows)
    runs = pd.concat([tta.knob_runs(table, "concurrency", {"parallelism": 1, "io_kib": 16}),
                      tta.knob_runs(table, "parallelism", {"concurrency": 1, "io_kib": 16})], ignore_index=True)
    assert sorted(runs.loc[runs["factor"] == "concurrency", "level"].unique()) == [1, 2, 4]
    fig = ttf.sweep_figure(runs, "modeled", 0.05, n_boot=20)
    assert len(fig.axes) == 4
    assert fig.axes[2].get_xlabel() == "concurrency (files at once)"
    assert fig.axes[0].get_ylabel() == "throughput (Mbps), measured"
    plt.close(fig)
    grid = table.groupby(["dataset", "concurrency", "parallelism"])[["throughput_mbps", "energy_per_100mb_j"]].mean()
    fig = ttf.grid_figure(grid.reset_index(), "modeled")
    annotations = [t.get_text() for t in fig.axes[0].texts]
    assert "81.5" in annotations  # html, c=4, p=2: (81 + 82) / 2
    plt.close(fig)


def test_tt_power_panel_shades_transfer_and_tail():
    import matplotlib.pyplot as plt
    from types import SimpleNamespace

    from mobitrace.studies.transfer_tuning import figures as ttf

    row = SimpleNamespace(t_start_s=10.0, t_end_s=12.0, tail_s=1.0, base_w=0.5)
    fig, ax = plt.subplots()
    ttf.power_panel(ax, row, np.array([10.0, 11.0, 12.0, 13.0, 14.0]), np.array([2.0, 2.0, 2.0, 1.0, 0.5]), "t")
    assert len(ax.collections) == 2  # transfer and tail
    assert ax.get_xlabel() == "time from first request (s)"
    plt.close(fig)


def test_mean_ci_errorbar_matches_the_percentile_bootstrap_of_the_mean():
    import numpy as np

    from mobitrace.stats import resampling as rs
    from mobitrace.stats.intervals import PERCENTILE_MIN_N
    v = np.tile([1.0, 2.0, 4.0, 8.0, 16.0], PERCENTILE_MIN_N // 5 + 1)  # enough values for the percentile interval
    lo, hi = rs.mean_ci_errorbar(0.05, 4000, 7)(v)
    idx = np.random.default_rng(7).integers(0, len(v), size=(4000, len(v)))
    assert (lo, hi) == rs.percentile_ci(v[idx].mean(axis=1), 0.05)
    assert 1.0 < lo < v.mean() < hi < 16.0
    assert rs.mean_ci_errorbar(0.05)(np.full(6, 3.0)) == (3.0, 3.0)   # no spread, no interval
    assert all(np.isnan(rs.mean_ci_errorbar(0.05)(np.array([5.0]))))  # one value: no interval
    assert rs.mean_ci_errorbar(0.05, 500, 1)(v) == rs.mean_ci_errorbar(0.05, 500, 1)(v)  # seeded
    few = v[:5]  # below PERCENTILE_MIN_N: the t interval of the mean; two values: none
    assert rs.mean_ci_errorbar(0.05)(few) == mean_ci(few, 0.05)[1:]
    assert all(np.isnan(rs.mean_ci_errorbar(0.05)(few[:2])))
