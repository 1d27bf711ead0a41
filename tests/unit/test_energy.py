"""Energy functions on hand-computable traces."""

import numpy as np
import pytest

from mobitrace.energy import integrals as energy


def test_window_integral_of_a_constant():
    t = np.arange(0, 11.0)
    assert energy.window_integral(t, np.full(11, 2.0), 2.0, 5.0) == pytest.approx(6.0)


def test_window_integral_interpolates_window_edges():
    # samples (0,0) (1,2) (2,0): P(0.5)=1, P(1)=2, P(1.5)=1 -> 0.5*(1+2)/2 + 0.5*(2+1)/2 = 1.5
    assert energy.window_integral([0, 1, 2], [0, 2, 0], 0.5, 1.5) == pytest.approx(1.5)


def test_ramp():
    t = np.linspace(0, 2, 3)
    assert energy.window_integral(t, t, 0, 2) == pytest.approx(2.0)  # int_0^2 t dt


def test_window_outside_the_trace_is_refused():
    with pytest.raises(ValueError, match="does not cover"):
        energy.window_integral([0, 1], [1, 1], 0.5, 2.0)


def test_base_power_is_the_time_weighted_mean():
    # 1 W for 1 s then 3 W for 1 s (step at 1.0-1.0001) -> about 2 W
    t = [0.0, 1.0, 1.0001, 2.0001]
    p = [1.0, 1.0, 3.0, 3.0]
    assert energy.base_power(t, p, 0.0, 2.0001) == pytest.approx((1.0 + 0.0002 + 3.0) / 2.0001, rel=1e-6)


def test_dynamic_energy_is_eq2():
    # 1 W base; 4 W from 2 s to 5 s (exact steps) -> E_d = 3 W x 3 s = 9 J
    t = [0, 1.999999, 2, 5, 5.000001, 8]
    p = [1, 1, 4, 4, 1, 1]
    base = energy.base_power(t, p, 0, 1.999999)
    assert base == pytest.approx(1.0)
    assert energy.dynamic_energy(t, p, base, 2, 5) == pytest.approx(9.0)


def test_energy_per_100mb():
    assert energy.energy_per_100mb(5.0, 50_000_000) == pytest.approx(10.0)
    with pytest.raises(ValueError):
        energy.energy_per_100mb(1.0, 0)


def test_tail_energy_until_power_returns_to_base():
    # base 1 W; last byte at t=2; 3 W until t=3, linear down to 1 W at t=4:
    # tail = 2 W x 1 s + triangle 0.5 x 1 s x 2 W = 3 J over 2 s
    t = [0, 1, 2, 3, 4, 5]
    p = [1, 3, 3, 3, 1, 1]
    tail = energy.tail_energy(t, p, 1.0, 2.0)
    assert tail.ended and tail.duration_s == pytest.approx(2.0) and tail.energy_j == pytest.approx(3.0)


def test_tail_with_tolerance_and_interpolated_crossing():
    # falls from 3 W at t=3 to 1 W at t=4; with 0.5 W tolerance it ends when P = 1.5 W, at t=3.75:
    # int_2^3.75 (P-1) = 2 + int_3^3.75 (2 - 2(t-3)) dt = 2 + 1.5 - 0.5625 = 2.9375
    tail = energy.tail_energy([0, 1, 2, 3, 4, 5], [1, 3, 3, 3, 1, 1], 1.0, 2.0, tolerance_w=0.5)
    assert tail.duration_s == pytest.approx(1.75) and tail.energy_j == pytest.approx(2.9375)


def test_tail_that_does_not_end_in_the_trace():
    tail = energy.tail_energy([0, 1, 2, 3], [1, 3, 3, 3], 1.0, 1.0)
    assert not tail.ended and tail.duration_s == pytest.approx(2.0) and tail.energy_j == pytest.approx(4.0)


def test_no_tail_when_power_is_already_at_base():
    assert energy.tail_energy([0, 1, 2], [1, 1, 1], 1.0, 1.0) == energy.Tail(0.0, 0.0, True)


def test_streaming_windows_equal_the_whole_trace_integrals():
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.uniform(0.05, 0.15, 500))
    p = rng.uniform(0.5, 3.0, 500)
    windows = [(t[3] + 0.01, t[40]), (t[100], t[499] - 0.02), (t[0], t[1])]
    sw = energy.StreamingWindows(windows)
    for i in range(0, 500, 37):
        sw.feed(t[i:i + 37], p[i:i + 37])
    for k, (a, b) in enumerate(windows):
        assert sw.integral(k) == pytest.approx(energy.window_integral(t, p, a, b), rel=1e-12)


def _whole(t, p, start, end, tol):
    base = energy.base_power(t, p, t[0], start)
    return base, energy.dynamic_energy(t, p, base, start, end), energy.tail_energy(t, p, base, end, tol)


@pytest.mark.parametrize("tail_until", [62.0, 200.0])  # the tail ends at 62 s; never ends before the trace does
def test_synthetic_streaming_run_energy_equals_the_whole_trace_functions(tail_until):
    # 100 s at 100 Hz: chunk 1 puts a boundary at every sample (more samples add no new boundary case)
    t = np.arange(10_003) * 0.01
    p = np.where((t > 20) & (t < 59), 3.0, 1.0) + 0.01 * np.sin(t)
    p[(t >= 59) & (t < tail_until)] = 2.0
    start, end, tol = 20.005, 58.995, 0.5
    want = _whole(t, p, start, end, tol)
    assert want[2].ended == (tail_until < 100)
    for chunk in (len(t), 1, 3, 100, 7_777):
        se = energy.StreamingRunEnergy(start, end, tol)
        for i in range(0, len(t), chunk):
            se.feed(t[i:i + chunk], p[i:i + chunk])
        base, e_d, tail = se.result()
        if chunk in (len(t), 7_777):  # the same sums of the same terms: exactly equal
            assert (base, e_d, tail) == want
        assert base == pytest.approx(want[0], rel=1e-12) and e_d == pytest.approx(want[1], rel=1e-12)
        assert tail.energy_j == pytest.approx(want[2].energy_j, rel=1e-12)
        assert (tail.duration_s, tail.ended) == (want[2].duration_s, want[2].ended)


def test_streaming_run_energy_hand_computed_and_refusals():
    # samples (0, 1 W) (1, 3 W) (2, 3 W) (2.5, 1 W) (3, 1 W): base over [0, 1] = the ramp's mean, 2 W;
    # E_d over [1, 2] = 3 J - 2 J = 1 J; the tail falls from 3 W at 2 s to the base (2 W) at 2.25 s:
    # 0.25 s x 1 W / 2 = 0.125 J
    se = energy.StreamingRunEnergy(1.0, 2.0)
    for t, p in (([0.0, 1.0], [1.0, 3.0]), ([2.0], [3.0]), ([2.5, 3.0], [1.0, 1.0])):
        se.feed(t, p)
    base, e_d, tail = se.result()
    assert base == pytest.approx(2.0)  # the ramp 1 -> 3 W over [0, 1] averages 2 W
    assert e_d == pytest.approx(1.0) and tail == energy.Tail(pytest.approx(0.125), pytest.approx(0.25), True)
    short = energy.StreamingRunEnergy(1.0, 5.0)
    short.feed([0.0, 1.0, 2.0], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="does not cover"):
        short.result()
