"""Power-trace parsers (power-meter, monitor, android-battery): good fixtures
of every format with hand-computable values, and the malformed corpus with
the exact error each file must give."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from mobitrace.energy import integrals as energy
from mobitrace.energy import power_traces as pt
from mobitrace.core.errors import InputError
from tests import ROOT

FIX = ROOT / "tests" / "fixtures"
GOOD = FIX / "power_traces" / "good"
BAD = FIX / "malformed" / "power-traces"
CORPUS = yaml.safe_load((BAD / "corpus.yaml").read_text())


def spec(**kw):
    return pt.spec_from_manifest(kw)


def test_power_meter_watts_seconds():
    tr = pt.read_trace(GOOD / "meter_10hz_W.csv", spec(format="power-meter", units={"time": "s", "power": "W"}))
    assert len(tr.t_s) == 31 and tr.dropped == 0
    assert tr.t_s[10] == pytest.approx(1.0) and tr.power_w[10] == 3.0 and tr.power_w[0] == 1.0
    # base 1 W from [0, 0.9]; 3 W on [1.0, 2.0] with 0.1 s ramps either side: E_d over [0.9, 2.1] = 2.2 J
    base = energy.base_power(tr.t_s, tr.power_w, 0.0, 0.9)
    assert base == pytest.approx(1.0)
    assert energy.dynamic_energy(tr.t_s, tr.power_w, base, 0.9, 2.1) == pytest.approx(2.2)


def test_power_meter_declared_milli_units_give_the_same_trace():
    a = pt.read_trace(GOOD / "meter_10hz_W.csv", spec(format="power-meter", units={"time": "s", "power": "W"}))
    b = pt.read_trace(GOOD / "meter_10hz_mW_ms.csv", spec(format="power-meter", units={"time": "ms", "power": "mW"}))
    np.testing.assert_allclose(a.t_s, b.t_s)
    np.testing.assert_allclose(a.power_w, b.power_w)


def test_monitor_current_times_voltage():
    tr = pt.read_trace(GOOD / "monitor_1khz_mA_V.csv",
                       spec(format="monitor", units={"time": "s", "current": "mA", "voltage": "V"}))
    np.testing.assert_allclose(tr.power_w, 1.0)  # 250 mA x 4 V
    assert energy.window_integral(tr.t_s, tr.power_w, 0.0, 0.1) == pytest.approx(0.1)


def test_android_battery_as_the_adb_kit_writes_it():
    tr = pt.read_trace(GOOD / "battery.csv.gz",
                       spec(format="android-battery", units={"time": "ns", "voltage": "uV", "current": "uA"},
                            current_sign="discharge-negative", max_gap_s=0.3))
    # -250000 uA discharge-negative x 4000000 uV = 1.0 W; the empty current is dropped and counted
    assert tr.dropped == 1 and len(tr.t_s) == 10
    np.testing.assert_allclose(tr.power_w, 1.0)
    assert tr.t_s[0] == pytest.approx(1000.0)


def test_android_battery_reads_the_adb_kits_output(tmp_path):
    """The exact text scripts/capture/android/adb_capture.py writes (split_samples)."""
    import importlib.util
    kit = ROOT / "scripts/capture/android/adb_capture.py"
    mod_spec = importlib.util.spec_from_file_location("adb_capture", kit)
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    text = "".join(f"T {1000 + i / 10:.2f} 0.00\nB 4000000 -500000\n" for i in range(5))
    _, _, batt = mod.split_samples(text)
    f = tmp_path / "battery.csv"
    f.write_text(batt)
    tr = pt.read_trace(f, spec(format="android-battery", units={"time": "ns", "voltage": "uV", "current": "uA"},
                               current_sign="discharge-negative"))
    np.testing.assert_allclose(tr.power_w, 2.0)
    np.testing.assert_allclose(np.diff(tr.t_s), 0.1)


def test_chunked_read_equals_whole_read_and_checks_across_chunks(tmp_path):
    s = spec(format="power-meter", units={"time": "s", "power": "W"}, max_gap_s=0.3)
    whole = pt.read_trace(GOOD / "meter_10hz_W.csv", s)
    chunked = pt.read_trace(GOOD / "meter_10hz_W.csv", s, chunk_rows=4)
    np.testing.assert_array_equal(whole.t_s, chunked.t_s)
    np.testing.assert_array_equal(whole.power_w, chunked.power_w)
    # the arrays are sized from the file (rows ~ size / bytes per row, +5%), not grossly over-allocated
    for tr in (whole, chunked):
        buf = tr.t_s.base if tr.t_s.base is not None else tr.t_s
        assert len(tr.t_s) <= buf.size <= 1.5 * len(tr.t_s) + 1024
    f = tmp_path / "dup_at_chunk_edge.csv"
    f.write_text("time,power\n0.0,1\n0.1,1\n0.2,1\n0.3,1\n0.3,1\n")
    with pytest.raises(InputError, match="line 6: field 'time'.*duplicate timestamp"):
        pt.read_trace(f, s, chunk_rows=4)


@pytest.mark.parametrize("case", CORPUS["cases"], ids=[c["file"] for c in CORPUS["cases"]])
def test_malformed_trace_gives_its_exact_error(case):
    path = BAD / case["file"]
    s = pt.spec_from_manifest(CORPUS["specs"][case["spec"]])
    with pytest.raises(InputError) as exc:
        pt.read_trace(path, s)
    assert str(exc.value) == case["error"].replace("<file>", str(path))


def test_every_malformed_file_is_in_the_corpus():
    assert {c["file"] for c in CORPUS["cases"]} == {p.name for p in BAD.glob("*.csv")}


@pytest.mark.parametrize("entry, field, found", [
    ({"format": "power-meter", "units": {"time": "s"}}, "units.power", "nothing (units are never guessed)"),
    ({"format": "power-meter", "units": {"time": "s", "power": "kW"}}, "units.power", "kW"),
    ({"format": "android-battery", "units": {"time": "ns", "voltage": "uV", "current": "uA"},
      "current_sign": "unknown"}, "current_sign", "unknown"),
    ({"format": "monsoon", "units": {}}, "format", "monsoon"),
    ({"format": "power-meter", "units": {"time": "s", "power": "W"}, "max_gap_s": -1}, "max_gap_s", -1),
])
def test_manifest_spec_errors(entry, field, found):
    with pytest.raises(InputError) as exc:
        pt.spec_from_manifest(entry, path="m.yaml")
    assert exc.value.field == field and exc.value.found == found


def test_a_header_without_samples_is_an_input_error(tmp_path):
    f = tmp_path / "empty.csv"
    f.write_text("time,power\n")
    with pytest.raises(InputError, match="no samples"):
        pt.read_trace(f, spec(format="power-meter", units={"time": "s", "power": "W"}))


def test_minmax_thinner_hand_computed():
    # 10 samples, at most 6 points: the first, the last, and 2 bins of 8 samples (the second holds
    # samples 8 and 9) with their lowest and highest
    th = pt.MinMaxThinner(6)
    th.feed(np.arange(10.0), [1, 5, 2, 0, 3, 3, 9, 1, 4, 2])
    t, p = th.result()
    assert t.tolist() == [0, 3, 6, 8, 9] and p.tolist() == [1, 0, 9, 4, 2]
    short = pt.MinMaxThinner(4)  # at most max_points samples: kept whole
    short.feed([0.0, 1.0, 2.0], [3.0, 1.0, 2.0])
    short.feed([3.0], [7.0])
    assert short.result()[0].tolist() == [0, 1, 2, 3] and short.result()[1].tolist() == [3, 1, 2, 7]


def test_synthetic_minmax_thinner_keeps_spikes_whatever_the_chunks():
    rng = np.random.default_rng(1)
    t = np.arange(100_003) * 0.001
    p = 1 + rng.random(len(t))
    p[5000], p[77_000] = 10.0, 0.0
    results = []
    for chunk in (len(t), 7, 999, 40_000):
        th = pt.MinMaxThinner(1000)
        for i in range(0, len(t), chunk):
            th.feed(t[i:i + chunk], p[i:i + chunk])
        results.append(th.result())
    for tt, pp in results[1:]:
        assert np.array_equal(tt, results[0][0]) and np.array_equal(pp, results[0][1])
    tt, pp = results[0]
    assert len(tt) <= 1000 and np.all(np.diff(tt) > 0)
    assert pp.max() == 10.0 and tt[pp.argmax()] == t[5000] and pp.min() == 0.0


@pytest.mark.parametrize("chunk_rows", [2, 1000])
def test_synthetic_rows_one_field_wider_than_the_header_are_refused_not_shifted(tmp_path, chunk_rows):
    """Every row one field wider than the header: pandas would take the first
    field for an index and shift the values (time 1.0 read as power); the
    trace is refused at its first wide row, in the first chunk or a later one."""
    s = spec(format="power-meter", units={"time": "s", "power": "W"})
    f = tmp_path / "wide.csv"
    f.write_text("time,power\n0.0,1.0,9\n0.1,1.0,9\n0.2,1.0,9\n")
    with pytest.raises(InputError) as exc:
        pt.read_trace(f, s, chunk_rows=chunk_rows)
    assert (exc.value.where, exc.value.found) == ("line 2", "3 fields")
    g = tmp_path / "wide_later.csv"
    g.write_text("time,power\n0.0,1.0\n0.1,1.0\n0.2,1.0\n0.3,1.0,9\n")
    with pytest.raises(InputError) as exc:
        pt.read_trace(g, s, chunk_rows=chunk_rows)
    assert exc.value.where in ("line 5", "line 4") and "fields" in str(exc.value)
