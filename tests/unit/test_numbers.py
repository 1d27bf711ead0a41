"""The book's number formatter against hand-worked cases (the book's style rules:
separators, no scientific notation in [0.001, 10**15), p-values,
intervals)."""

import math

import pytest

from mobitrace.core import numbers as n


@pytest.mark.parametrize("x, text", [
    (2000.0, "2,000"), (80.0, "80.0"), (0.0125, "0.0125"), (1234567.0, "1,234,567"),
    (-3.14159, "−3.14"), (12, "12"), (0.0, "0"), (0.001, "0.00100"), (999.96, "1,000"),
    (1.5e-4, "1.50 × 10⁻⁴"), (-2.5e-7, "−2.50 × 10⁻⁷"), (float("nan"), "–"), (None, "–"),
    (math.inf, "∞"), (-0.0001 * 0, "0"),
])
def test_number_for_people(x, text):
    assert n.number(x) == text


def test_a_column_shares_one_number_of_decimals():
    places = n.column_decimals([1234.5, 20.1, 0.5])  # median magnitude 20.1: 3 s.f. -> 1 place
    assert places == 1
    assert [n.number(x, decimals=places) for x in (1234.5, 20.1, 0.5)] == ["1,234.5", "20.1", "0.5"]


@pytest.mark.parametrize("p, text", [(0.0125, "0.0125"), (0.5, "0.5000"), (1e-4, "0.0001"),
                                     (9.9e-5, "< 0.0001"), (3e-12, "< 0.0001"), (None, "–")])
def test_p_values(p, text):
    assert n.p_value(p) == text


def test_intervals_share_the_estimate_and_bounds_decimals():
    assert n.interval(3.1234, 2.41, 3.9234) == "3.12 [2.41, 3.92]"
    assert n.interval(1500.0, 1234.0, 1766.0) == "1,500 [1,234, 1,766]"
    assert n.interval(0.5, None, None) == "0.500"
    assert n.interval(-0.25, -0.5, 0.1) == "−0.250 [−0.500, 0.100]"
    # an estimate near zero does not give its bounds more digits than they carry
    assert n.interval(2.7510, -0.0542, 5.4947) == "2.75 [−0.05, 5.49]"
    assert n.interval(-0.02, -26.2566, 22.9999) == "0.0 [−26.3, 23.0]"
    # a narrow interval keeps the digits that tell its bounds apart
    assert n.interval(1234.5, 1234.1, 1234.9) == "1,234.5 [1,234.1, 1,234.9]"


def test_numbers_as_papers_print_them_and_units():
    assert [n.as_printed(x) for x in (50.0, 1.7, 0.0125, 1560.0)] == ["50", "1.7", "0.0125", "1,560"]
    assert n.with_unit("36.0", "%") == "36.0%" and n.with_unit("3.36", "x") == "3.36×"
    assert n.with_unit("374", "Mbps") == "374 Mbps" and n.with_unit("–", "Mbps") == "–"


@pytest.mark.parametrize("args, kwargs, expected", [
    ((1e-4, "p", "<"), {}, "p < 0.0001"),           # priority-boost: the paper prints p < 1e-4
    ((0.05, "p", ">"), {}, "p > 0.05"),             # a paper's threshold as printed
    ((0.0125, "p"), {}, "p = 0.0125"),
    ((3e-6, "p"), {}, "p < 0.0001"),
    ((0.9, "R^2", ">="), {}, "R² ≥ 0.9"),
    ((0.746997, "R^2"), {}, "R² = 0.747"),
    ((50, "%", "<"), {}, "< 50%"),
    ((36.04, "%"), {}, "36.0%"),
    ((73.0, "%", "="), {}, "73%"),                  # a paper's 73:27 as printed
    ((2200.0, "Mbps", "~"), {}, "~ 2,200 Mbps"),
    ((4, "x", "~"), {}, "~ 4×"),
    ((3.36, "x"), {"low": 3.1, "high": 3.6}, "3.36 [3.10, 3.60]×"),
    ((1.0, "true=1"), {}, "yes"),
    ((0.0, "true=1", "="), {}, "no"),
    ((12.5, "us"), {}, "12.5 µs"),
    ((float("nan"), "%"), {}, "–"),
])
def test_claim_value_reads_as_a_person_writes_it(args, kwargs, expected):
    assert n.claim_value(*args, **kwargs) == expected


@pytest.mark.parametrize("n, text", [(1500, "1.5 kB"), (16384, "16.4 kB"), (1 << 30, "1.07 GB"), (1e8, "100 MB"),
                                     (999_950, "1 MB"), (512, "512 B"), (64 * 1024, "65.5 kB"), (None, "–")])
def test_sizes_in_one_unit_system_si(n, text):
    from mobitrace.core.numbers import data_size
    assert data_size(n) == text
