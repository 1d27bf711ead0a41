"""Per-device cpu-gbps analysis on synthetic runs (not measurements)."""

import json

import numpy as np
import pandas as pd
import pytest

from mobitrace.studies.cpu_gbps import device_analysis as cpugbps_device
from tests import ROOT


def synthetic_runs(device="synthetic-host", slope=2.0, noise=0.3, seed=1):
    rng = np.random.default_rng(seed)
    rows = []
    for direction in ("down", "up"):
        for rate in (100e6, 1e9, 5e9, 0):
            for rep in (1, 2, 3):
                x = (rate or 20e9) / 1e9 * (1 - 0.01 * rng.random())
                total = 1 + slope * x + rng.normal(0, noise)
                row = {"device": device, "session": "s1", "config": "default", "run_id": f"{direction}-{rate}-r{rep}",
                       "direction": direction, "target_rate_bps": int(rate), "repetition": rep,
                       "throughput_gbps": x, "stat_all_total_pct": total,
                       "stat_all_softirq_pct": 0.4 * total, "precise_total_pct": total * 1.1,
                       "iperf3_total_pct": total * 1.05, "stat_cpu0_total_pct": total, "stat_cpu0_softirq_pct": 0.1,
                       "precise_device_pct": total / 2, "precise_peer_pct": total / 2,
                       "precise_ksoftirqd_pct": 0.01, "retransmits": 0}
                rows.append(row)
    return pd.DataFrame(rows)


def test_analyze_synthetic_outputs_and_determinism(tmp_path):
    interim = tmp_path / "interim"
    interim.mkdir()
    synthetic_runs().to_parquet(interim / "runs.parquet", index=False)
    out1, out2 = tmp_path / "a", tmp_path / "b"
    for out in (out1, out2):
        cpugbps_device.analyze(interim, out, {"alpha": 0.05, "target_rates_gbps": [1.6, 4.0, 12.8], "cpu_threshold_pct": 50,
                                               "background_max_pp": 5})
    names = sorted(p.name for p in out1.iterdir())
    assert names == ["extrapolations.csv", "figure1-narrow.svg", "figure1.svg", "fits.csv", "metrics.json", "rate_summary.csv"]
    for name in names:
        assert (out1 / name).read_bytes() == (out2 / name).read_bytes(), name
    fits = pd.read_csv(out1 / "fits.csv")
    f = fits[(fits["direction"] == "down") & (fits["source"] == "stat_total")].iloc[0]
    assert f["slope"] == pytest.approx(2.0, abs=0.05)
    # 50% at (50 - 1) / 2 = 24.5 Gbps, inside its interval
    assert f["gbps_at_threshold"] == pytest.approx(24.5, rel=0.03)
    assert f["gbps_at_threshold_lo"] < f["gbps_at_threshold"] < f["gbps_at_threshold_hi"]
    assert f["gbps_at_threshold_pred_lo"] < f["gbps_at_threshold_lo"]
    extra = pd.read_csv(out1 / "extrapolations.csv")
    assert set(extra["target_gbps"]) == {1.6, 4.0, 12.8}
    assert not extra["extrapolated"].any()  # synthetic runs reach 20 Gbps
    summary = pd.read_csv(out1 / "rate_summary.csv")
    assert list(summary.loc[summary["direction"] == "down", "target_rate"]) == ["100M", "1000M", "5000M", "max"]
    metrics = json.loads((out1 / "metrics.json").read_text())
    assert "down.stat_total" in metrics["synthetic-host"]


def test_line_with_bands_exact_line_hand_case():
    # y = 1 + 2x exactly: both bands collapse onto the line.
    b = cpugbps_device.line_with_bands([0, 1, 2, 3], [1, 3, 5, 7], [1.6, 4.0], alpha=0.05)
    np.testing.assert_allclose(b["mean"], [4.2, 9.0])
    np.testing.assert_allclose(b["mean_ci_lower"], b["mean"], atol=1e-9)
    np.testing.assert_allclose(b["obs_ci_upper"], b["mean"], atol=1e-9)


def test_line_with_bands_prediction_band_contains_confidence_band_synthetic():
    rng = np.random.default_rng(5)
    x = np.linspace(0.1, 10, 24)
    y = 2 + 3 * x + rng.normal(0, 1.0, x.size)
    b = cpugbps_device.line_with_bands(x, y, np.linspace(0, 20, 9), alpha=0.05)
    assert (b["obs_ci_lower"] < b["mean_ci_lower"]).all() and (b["mean_ci_upper"] < b["obs_ci_upper"]).all()
    # The confidence band is narrowest at the mean of x and widens away from it.
    width = b["mean_ci_upper"] - b["mean_ci_lower"]
    assert width.iloc[-1] > width.iloc[2]


@pytest.mark.parametrize("ratio,word", [(2.13, "higher"), (1 / 2.13, "lower"), (1.0, "the same"),
                                        (14.7, "higher"), (0.38, "lower")])
def test_direction_word_from_the_sign_of_log_ratio(ratio, word):
    assert cpugbps_device.direction_word(ratio) == word


def test_direction_word_flipped_data_flips_the_word():
    # The same readings with the two sources swapped read the other way.
    stat, precise = np.array([3.0, 4.0, 5.0]), np.array([1.0, 2.0, 2.5])
    assert cpugbps_device.direction_word(np.median(stat / precise)) == "higher"
    assert cpugbps_device.direction_word(np.median(precise / stat)) == "lower"
    assert cpugbps_device.direction_word(1.05, rel_tol=0.1) == "the same"
    with pytest.raises(ValueError):
        cpugbps_device.direction_word(float("nan"))


def test_saturation_is_the_highest_mean_rate_synthetic():
    # Hand-computable: paced 1 Gbps reaches 1.0; unlimited runs 9, 10, 11 -> mean 10; the single 11 is not sustained.
    g = pd.DataFrame({"target_rate_bps": [int(1e9)] * 3 + [0] * 3, "throughput_gbps": [1.0, 1.0, 1.0, 9.0, 10.0, 11.0]})
    assert cpugbps_device.saturation_gbps(g) == 10.0
    assert cpugbps_device.beyond_range(10.5, 10.0) and not cpugbps_device.beyond_range(9.5, 10.0)
    assert not cpugbps_device.beyond_range(float("nan"), 10.0)
    # One wording, which the single faster run (11) and the mean at one rate cannot contradict.
    assert cpugbps_device.beyond_text(10.0) == ("beyond the measured range (its fastest mean over its target rates "
                                                "is 10.0 Gbps)")
    assert "saturation point, its fastest mean throughput" in cpugbps_device.MEASURED_RANGE


def test_inverse_prediction_beyond_saturation_is_flagged_synthetic():
    # Synthetic CPU = 1 + 2x reaches 50% at 24.5 Gbps; the unlimited runs sustain only ~20 Gbps.
    runs = synthetic_runs()
    fits, _ = cpugbps_device.fit_table(runs, 0.05, [1.6], 50.0)
    f = fits[(fits["direction"] == "down") & (fits["source"] == "stat_total")].iloc[0]
    assert f["saturation_gbps"] == pytest.approx(20.0, rel=0.01)
    assert f["gbps_at_threshold"] == pytest.approx(24.5, rel=0.03)
    assert bool(f["gbps_at_threshold_beyond_range"])
    # A steeper line (slope 4: 50% at 12.25 Gbps) stays inside the measured range.
    fits, _ = cpugbps_device.fit_table(synthetic_runs(slope=4.0), 0.05, [1.6], 50.0)
    f = fits[(fits["direction"] == "down") & (fits["source"] == "stat_total")].iloc[0]
    assert f["gbps_at_threshold"] == pytest.approx(12.25, rel=0.03)
    assert not bool(f["gbps_at_threshold_beyond_range"])


def test_committed_capture_rps_cpu1_known_values(tmp_path):
    # The first committed rps-cpu1 session (20261122T041306Z, superseded in the pipeline by a
    # re-capture but kept in data/raw): downlink unlimited runs average 11.692 Gbps (fastest single
    # run 13.57), while the precise line reaches 50% CPU at 13.34 Gbps: beyond the measured range.
    from pathlib import Path
    from mobitrace.core import capture_reader
    from mobitrace.studies.cpu_gbps import ingest
    raw = ROOT / "data/raw/cpu-gbps/vm-veth-rps-cpu1"
    with capture_reader.superseding({"vm-veth-rps-cpu1/20261123T195013Z": "this test reads the first session"}):
        ingest.ingest(raw, tmp_path)
    fits, _ = cpugbps_device.fit_table(pd.read_parquet(tmp_path / "runs.parquet"), 0.05, [1.6], 50.0)
    f = fits[(fits["direction"] == "down") & (fits["source"] == "precise_total")].iloc[0]
    assert f["saturation_gbps"] == pytest.approx(11.692063, abs=1e-5)
    assert f["x_max"] == pytest.approx(13.5722, abs=1e-3)
    assert f["gbps_at_threshold"] == pytest.approx(13.3352, abs=1e-3)
    assert bool(f["gbps_at_threshold_beyond_range"])
    stat = fits[(fits["direction"] == "down") & (fits["source"] == "stat_total")].iloc[0]
    assert not bool(stat["gbps_at_threshold_beyond_range"])  # 1.93 Gbps, well inside


def test_clean_runs_leaves_out_runs_above_the_background_limit_synthetic():
    import pandas as pd
    runs = pd.DataFrame({"host_precise_total_pct": [10.0, 30.0, float("nan"), 15.0],
                         "precise_total_pct": [9.0, 8.0, 5.0, 10.0]})
    kept, out = cpugbps_device.clean_runs(runs, 5.0)
    # backgrounds 1, 22, unknown, 5 pp: only the 22 pp run is above the limit; unknown is kept
    assert out.index.tolist() == [1] and kept.index.tolist() == [0, 2, 3]
    kept, out = cpugbps_device.clean_runs(runs.drop(columns="host_precise_total_pct"), 5.0)
    assert out.empty and len(kept) == 4
