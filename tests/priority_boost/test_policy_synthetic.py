"""Boosting policies and the on/off schedule of the capture kit (pure functions)."""

import pytest

from policy import DECR_STEP_BYTES, onoff_schedule, target_nice


def test_original_never_renices():
    assert target_nice("original", True, 100, 10**6) is None
    assert target_nice("original", False, 0, 0) is None


def test_reset_when_link_down_or_before_first_event():
    for policy in ("static", "incr", "decr"):
        assert target_nice(policy, False, 50, 10**6) == 0
        assert target_nice(policy, True, 0, 0) == 0


def test_static():
    assert target_nice("static", True, 1, 10) == -20


def test_incr_one_step_per_event_clamped():
    assert [target_nice("incr", True, e, 0) for e in (1, 2, 19, 20, 21, 500)] == [-1, -2, -19, -20, -20, -20]


def test_decr_one_step_per_60kb_clamped():
    s = DECR_STEP_BYTES
    assert s == 61440
    got = [target_nice("decr", True, 1, b) for b in (0, s - 1, s, 2 * s, 19 * s, 100 * s)]
    assert got == [-20, -20, -19, -18, -1, -1]


def test_unknown_policy():
    with pytest.raises(ValueError):
        target_nice("boost", True, 1, 1)


def test_schedule_is_seeded_and_alternates_synthetic():
    a, b = onoff_schedule(7, 5.0, 300), onoff_schedule(7, 5.0, 300)
    assert a == b and a[0] == (0.0, True)
    assert all(x[1] != y[1] for x, y in zip(a, a[1:]))
    assert all(y[0] > x[0] for x, y in zip(a, a[1:]))
    gaps = [y[0] - x[0] for x, y in zip(a, a[1:])]
    assert 3.0 < sum(gaps) / len(gaps) < 7.5  # mean 5 s (about 60 draws)
    assert onoff_schedule(8, 5.0, 300) != a
