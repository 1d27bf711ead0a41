"""The transfer-tuning chapter's derivations (mobitrace.studies.transfer_tuning.analysis)
on small synthetic tables with hand-computable results, and the study's schemas."""

import pandas as pd
import pandera.pandas as pa
import pytest

from mobitrace.core.errors import InputError
from mobitrace.energy.power_models import CpuPowerModel, RadioPowerModel
from mobitrace.studies.transfer_tuning import analysis as tta
from mobitrace.studies.transfer_tuning import ingest as tt
from mobitrace.studies.transfer_tuning import schema


class SyntheticValues:
    """A stand-in for mobitrace.core.published.Values with synthetic numbers."""

    def __init__(self, numbers: dict, units: dict | None = None):
        self.numbers, self.units = numbers, units or {}

    def __call__(self, value_id):
        return float(self.numbers[value_id])

    def row(self, value_id):
        return pd.Series({"value": self(value_id), "unit": self.units.get(value_id, "x"), "location": "§0"})


def synthetic_runs(**over) -> pd.DataFrame:
    base = {"device": "d", "kind": "sweep", "dataset": "html", "concurrency": 1, "parallelism": 1, "io_kib": 16,
            "rep": 1, "files": 1, "bytes": 1_000_000, "transfer_s": 1.0, "throughput_mbps": 8.0,
            "client_cpu_s": 0.1, "server_cpu_s": 0.05, "stat_busy_pct": 10.0, "energy_per_100mb_j": 100.0,
            "energy_j": 1.0, "tail_j": 0.0, "tail_s": 0.0}
    n = max(len(v) for v in over.values() if isinstance(v, list)) if over else 1
    return pd.DataFrame({k: over.get(k, v) for k, v in base.items()}, index=range(n))


def test_synthetic_level_value_and_best_level():
    sweep = pd.DataFrame({"dataset": ["video"] * 3 + ["html"], "level": [1, 2, 4, 1],
                          "x_fold": [1.0, 2.5, 1.5, 1.0], "saving_pct": [0.0, 60.0, 33.0, 0.0]})
    assert tta.level_value(sweep, "video", 2, "saving_pct") == 60.0
    assert pd.isna(tta.level_value(sweep, "video", 8, "x_fold"))  # level not swept: NaN
    assert int(tta.best_level(sweep, "video")["level"]) == 2


def test_synthetic_knobs_hold_the_others_at_level_1():
    k = tta.knobs(16)
    assert k["concurrency"] == {"parallelism": 1, "io_kib": 16}
    assert k["io_kib"] == {"concurrency": 1, "parallelism": 1}


def test_synthetic_energy_kind():
    assert tta.energy_kind(pd.DataFrame({"energy_source": ["modeled", "modeled"]})) == "modeled"
    assert tta.energy_kind(pd.DataFrame({"energy_source": ["measured"]})) == "measured"
    assert tta.energy_kind(pd.DataFrame({"energy_source": ["measured", "modeled"]})) == "measured and modeled"


def test_synthetic_grid_summary_xfold_and_saving():
    # c1p1: 2 and 4 Mbit/s, 100 J/100MB; c2p2: 9 Mbit/s, 30 and 50 J -> x 3, saving 60 %.
    runs = synthetic_runs(concurrency=[1, 1, 2, 2], parallelism=[1, 1, 2, 2], rep=[1, 2, 1, 2],
                          throughput_mbps=[2.0, 4.0, 9.0, 9.0], energy_per_100mb_j=[100.0, 100.0, 30.0, 50.0])
    g = tta.grid_summary(tta.grid_runs(runs, [1, 2], 16)).set_index(["concurrency", "parallelism"])
    assert g.loc[(2, 2), "x_fold"] == pytest.approx(3.0)
    assert g.loc[(2, 2), "saving_pct"] == pytest.approx(60.0)
    assert g.loc[(1, 1), "n"] == 2
    assert tta.grid_runs(runs, [1], 16)["concurrency"].tolist() == [1, 1]


def test_synthetic_cpu_table_percent_and_ms_per_mb():
    # 0.1 s client CPU in a 0.5 s transfer of 2 MB: 20 % of one CPU, 50 ms/MB; nginx 0.05 s: 10 %.
    runs = synthetic_runs(transfer_s=[0.5], bytes=[2_000_000])
    c = tta.cpu_table(runs, "d", 16).iloc[0]
    assert c["client_pct"] == pytest.approx(20.0)
    assert c["nginx_pct"] == pytest.approx(10.0)
    assert c["client_ms_per_mb"] == pytest.approx(50.0)
    assert c["runs"] == 1


def test_synthetic_tail_table_share_and_cases():
    # one file: E_d 3 J, tail 1 J -> share 25 %; two files at once: tail 0 -> 0 %.
    runs = synthetic_runs(kind=["tail", "tail"], files=[1, 2], concurrency=[1, 2], energy_j=[3.0, 2.0],
                          tail_j=[1.0, 0.0], tail_s=[2.0, 0.0])
    t = tta.tail_table(tta.tail_runs(runs, "d"), "d").set_index("case")
    assert t.loc["one file", "tail_share_pct"] == pytest.approx(25.0)
    assert t.loc["two files at once", "tail_share_pct"] == 0.0
    assert t["device"].tolist() == ["d", "d"]


def test_synthetic_datasets_table_and_paper_sizes():
    v = SyntheticValues({"html_files": 1500, "html_min": 102, "html_max": 153}, {"html_min": "kB"})
    assert tta.paper_sizes(v, "html") == "102-153 kB"
    runs = synthetic_runs(bytes=[1_234_567, 2_345_678])
    t = tta.datasets_table(v, {"html": {"files": 10, "min_kib": 100, "max_kib": 150}}, runs, "d").iloc[0]
    assert t["paper files"] == 1500 and t["served sizes"] == "102 kB to 154 kB"
    assert t["served total (MB)"] == 2.35  # the largest sweep run, rounded to 2 decimals


def test_synthetic_power_model_table_formats_coefficients():
    cpu = CpuPowerModel("c", mw_per_ghz=400.0, mw_at_zero_ghz=200.0, idle_mw=0.0, nominal_ghz=2.0,
                        provenance="assumed", source="test")
    radio = RadioPowerModel("r", idle_mw=10.0, tx_active_mw=500.0, rx_active_mw=500.0, max_rate_mbps=1.0,
                            provenance="assumed", source="test")
    t = tta.power_model_table(cpu, radio, 0.15)
    assert t["coefficients"].tolist() == ["150 mW", "k_f=400 mW/GHz, k_0=200 mW, f=2 GHz",
                                          "P_active=500 mW, P_idle=10 mW, r_max=1 Mbps"]


def test_synthetic_interval_of_and_claim_intervals():
    ratios = pd.DataFrame({"factor": ["concurrency"] * 3 + ["parallelism"] * 3,
                           "dataset": ["html", "image", "video", "html", "image", "video"], "level": [4] * 3 + [8] * 3,
                           "x_fold_low": [1.0, 2.0, 3.0, 0.5, 0.6, 0.7], "x_fold_high": [1.5, 2.5, 3.5, 0.9, 0.8, 1.2],
                           "saving_pct_low": [10.0, 20.0, 30.0, 0, 0, 0], "saving_pct_high": [15.0, 25.0, 35.0, 0, 0, 0]}
                          ).set_index(["factor", "dataset", "level"])
    grid = pd.DataFrame({"dataset": ["html"], "concurrency": [2], "parallelism": [2], "x_fold_low": [2.0],
                         "x_fold_high": [4.0], "saving_pct_low": [40.0], "saving_pct_high": [70.0]}
                        ).set_index(["dataset", "concurrency", "parallelism"])
    best = pd.Series({"dataset": "html", "concurrency": 2, "parallelism": 2})
    assert tta.interval_of(ratios, ("concurrency", "image", 4), "saving_pct") == (20.0, 25.0)
    assert tta.interval_of(ratios, ("concurrency", "image", 16), "x_fold") is None
    ci = tta.claim_intervals(ratios, grid, 4, 8, 8, best, best)
    assert ci["cc_video_xfold"] == ci["cc_video_helps"] == (3.0, 3.5)
    assert ci["p8_image_reduces"] == (0.6, 0.8) and ci["p_video_xfold"] == (0.7, 1.2)
    assert ci["combined_saving"] == (40.0, 70.0) and ci["combined_xfold"] == (2.0, 4.0)
    assert "p_video_xfold" not in tta.claim_intervals(ratios, grid, 4, 16, 8, best, best)  # no such level


def test_synthetic_results_schemas_refuse_a_wrong_table():
    with pytest.raises(pa.errors.SchemaError):
        tta.sweep_summary(synthetic_runs().assign(dataset="audio"), "concurrency", {})
    assert schema.results_schema("tail_any-device") is schema.TAIL
    assert set(schema.RESULTS) >= {"runs_energy", "grid", "ratios_ci", "gains_vs_paper", "cpu_concurrency"}


def test_synthetic_interim_schema_failure_is_one_input_error(tmp_path):
    runs = pd.DataFrame({c: [] for c in schema.RUN_COLUMNS}).astype(str)  # wrong dtypes
    runs.loc[0] = ["x"] * len(schema.RUN_COLUMNS)
    with pytest.raises(InputError) as err:
        tt._check_interim(runs, "runs", tmp_path)
    assert "runs.parquet" in str(err.value) and "\n" not in str(err.value)


def test_synthetic_achieved_rate_text_by_hand():
    runs = pd.DataFrame({"link_peak_mbit": [39.5, 40.1, 20.0], "achieved_mbit": [35.0, 30.0, 10.0]})
    assert tta.achieved_text(runs, 40.0) == (
        "the link peaked at 40.1 Mbps at the client's interface (configured 40); a run's goodput, HTTP body "
        "bytes from the first request to the last byte, had median 30.0 and maximum 35.0 Mbps")


def test_synthetic_capture_without_achieved_rates_says_not_recorded():
    runs = pd.DataFrame({"link_peak_mbit": [float("nan")], "achieved_mbit": [float("nan")]})
    assert tta.achieved_text(runs, 40.0) == "not recorded by this capture (configured 40 Mbps)"


def test_delay_element_named_from_the_manifest():
    assert tta.delay_element({"rtt_method": "user-space L2 delay bridge (delay_bridge.c, AF_PACKET)"}) == \
        "delay_bridge.c"
    assert tta.delay_element({"rtt_method": "user-space L2 delay bridge (delay_bridge.py, AF_PACKET)"}) == \
        "delay_bridge.py"
    assert tta.delay_element({}) == "not recorded"


def test_synthetic_modeled_power_prices_one_radio_as_the_text_states_it_by_hand():
    """The chapter's model: P = P_base + CPU + ONE radio at the interface's
    rx + tx rate, at most its active power (Zhu et al.: "no more than 900mW").
    By hand, with params.yaml's tt-wifi-active (idle 0, 900 mW, full from
    1 Mbit/s), no client CPU and a 0.1502 W base:
      second 1: 10 Mbit/s in + 0.5 Mbit/s of ACKs out -> u = 1,   P = 0.1502 + 0.900 = 1.0502 W
      second 2: 0.3 in + 0.2 out = 0.5 Mbit/s         -> u = 0.5, P = 0.1502 + 0.450 = 0.6002 W
    (two radios at 900 mW each would price second 1 at 1.9502 W)."""
    from mobitrace.energy.power_models import cpu_models, radio_models
    from mobitrace.studies.transfer_tuning.analysis import modeled_power
    import yaml
    models = yaml.safe_load(open("params.yaml"))["power-models"]
    radio, cpu = radio_models(models)["tt-wifi-active"], cpu_models(models)["tt-phone-cpu"]
    samples = pd.DataFrame({"t_ns": [0, 1e9, 2e9], "client_cpu_ns": [0, 0, 0],
                            "if_rx_bytes": [0, 1_250_000, 1_287_500], "if_tx_bytes": [0, 62_500, 87_500]})
    t, p = modeled_power(samples, cpu, radio, base_w=0.1502)
    assert t.tolist() == [0.0, 1.0, 2.0]
    assert p.tolist() == pytest.approx([0.1502, 1.0502, 0.6002])


def test_synthetic_one_radio_mixes_rx_and_tx_active_powers_by_bytes():
    radio = RadioPowerModel("r", idle_mw=100.0, tx_active_mw=1600.0, rx_active_mw=2200.0, max_rate_mbps=100.0,
                            provenance="assumed", source="test")
    # 30 rx + 10 tx of 100: u = 0.4; mix = 0.75 * 2200 + 0.25 * 1600 = 2050; (2050 - 100) * 0.4 = 780.
    assert radio.one_radio_dynamic_mw(30.0, 10.0) == pytest.approx(780.0)
    assert radio.one_radio_dynamic_mw(0.0, 0.0) == 0.0
    with pytest.raises(ValueError):
        radio.one_radio_dynamic_mw(-1.0, 0.0)


def test_synthetic_runs_the_idle_gate_flagged_are_left_out_and_ungated_runs_kept():
    runs = synthetic_runs(rep=[1, 2, 3, 4]).assign(
        gate_flagged=pd.array([False, True, None, False], dtype="boolean"))
    kept, left_out = tta.clean_runs(runs)
    assert kept["rep"].tolist() == [1, 3, 4]  # the ungated run (no record) is kept
    assert left_out["rep"].tolist() == [2]
    flipped = runs.assign(gate_flagged=pd.array([True, False, None, True], dtype="boolean"))
    assert tta.clean_runs(flipped)[1]["rep"].tolist() == [1, 4]


def test_synthetic_claims_name_their_device():
    assert tta.device_claim_id("cc_html_xfold", "synthetic-a-1") == "cc_html_xfold_synthetic_a_1"
    claims = tta.DeviceClaims("transfer-tuning", "synthetic-a", 0.05)
    claims.add("cc_order", "Concurrency helps html most", location="§4", relation="=", paper=1.0, artifact=1.0,
               unit="true=1", basis="synthetic", provenance="measured", section="transfer-tuning-sweeps")
    row = claims.frame().iloc[0]
    assert row["claim_id"] == "cc_order_synthetic_a" and row["claim"].endswith("(synthetic-a)")
