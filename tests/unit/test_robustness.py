"""Robustness of modeled verdicts (mobitrace.energy.robustness) on synthetic
claims whose flips can be computed by hand."""

import pytest

from mobitrace.energy import robustness


def synthetic_claim(bound):
    # value = k_f * 1 + k_0 * 1 (a modeled energy); "supported" when value >= bound
    def evaluate(c):
        value = c["k_f"] + c["k_0"]
        return value, "supported" if value >= bound else "not supported"
    return evaluate


COEFS = {"k_f": 10.0, "k_0": 1.0}


def test_synthetic_claim_flipping_at_half_of_one_coefficient_depends_on_it():
    # k_f x0.5: 5 + 1 = 6 < 8 (flips); k_0 x0.5: 10.5; x1.5: 16 and 11.5 (hold)
    result = robustness.sensitivity(synthetic_claim(8.0), COEFS, lhs_size=32, seed=1)
    assert result["base"] == (11.0, "supported")
    oat = result["one_at_a_time"].set_index(["coefficient", "factor"])
    assert oat.loc[("k_f", 0.5), "value"] == 6.0 and oat.loc[("k_f", 0.5), "verdict"] == "not supported"
    assert oat.loc[("k_0", 1.5), "value"] == 11.5
    assert robustness.robustness_label(result) == "depends on k_f"


def test_synthetic_claim_far_from_its_bound_is_robust():
    # the smallest value in the box is 5 + 0.5 = 5.5 >= 2
    result = robustness.sensitivity(synthetic_claim(2.0), COEFS, lhs_size=32, seed=1)
    assert robustness.robustness_label(result) == "robust"
    assert (result["hypercube"]["value"] >= 5.5).all()


def test_a_flip_only_when_all_coefficients_move_together_is_joint():
    # a = b = 10, bound 11: each alone at x0.5 gives 15; both near x0.5 give ~10
    evaluate = lambda c: (c["a"] + c["b"], "yes" if c["a"] + c["b"] >= 11 else "no")  # noqa: E731
    result = robustness.sensitivity(evaluate, {"a": 10.0, "b": 10.0}, lhs_size=64, seed=1)
    assert robustness.robustness_label(result) == "depends on the coefficients jointly"


def test_hypercube_is_seeded_and_inside_the_box():
    a = robustness.sensitivity(synthetic_claim(8.0), COEFS, lhs_size=16, seed=7)["hypercube"]
    b = robustness.sensitivity(synthetic_claim(8.0), COEFS, lhs_size=16, seed=7)["hypercube"]
    assert a.equals(b)
    assert a[["factor_k_f", "factor_k_0"]].stack().between(0.5, 1.5).all()


def test_bad_size_is_a_clear_error():
    with pytest.raises(ValueError, match="lhs_size"):
        robustness.sensitivity(synthetic_claim(8.0), COEFS, lhs_size=0, seed=1)


def test_tornado_figure_draws_one_bar_pair_per_coefficient():
    result = robustness.sensitivity(synthetic_claim(8.0), COEFS, lhs_size=8, seed=1)
    fig = robustness.tornado_figure(result, "synthetic energy", "mJ", bound=8.0)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["k_0", "k_f"]  # widest (k_f) on top
    assert len(ax.patches) == 4
