"""Robustness of modeled verdicts (mobitrace.energy.robustness) on synthetic
claims whose flips can be computed by hand."""

import pytest

from mobitrace.book import robustness as robustness_view
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
    fig = robustness_view.tornado_figure(result, "synthetic energy", "mJ", bound=8.0)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["k_0", "k_f"]  # widest (k_f) on top
    assert len(ax.patches) == 4


# --------------------------------------------------------------------------- #
# A study's claims as one function of its power models (synthetic models)

from dataclasses import replace  # noqa: E402

import pandas as pd  # noqa: E402

from mobitrace.core import claims as cl  # noqa: E402
from mobitrace.energy.power_models import CpuPowerModel, RadioPowerModel  # noqa: E402

CPU = CpuPowerModel("cpu-x", mw_per_ghz=100.0, mw_at_zero_ghz=0.0, idle_mw=150.0, nominal_ghz=2.0,
                    provenance="assumed", source="synthetic")
RADIO = RadioPowerModel("radio-y", idle_mw=0.0, tx_active_mw=900.0, rx_active_mw=900.0, max_rate_mbps=10.0,
                        provenance="published", source="synthetic")


def synthetic_claims_at(models):
    # A modeled energy of 1 CPU-second (mJ) against a bound of 150 mJ: at the
    # assumed coefficients 100 x 2 = 200 > 150 (reproduced); halving either
    # mw_per_ghz or nominal_ghz gives 100 (not reproduced); x1.5 gives 300.
    # The radio is published: never varied. A measured claim rides along.
    energy = float(models["cpu-x"].busy_core_mw())
    c = cl.Claims("synthetic", alpha=0.05)
    c.add("energy_above", "energy above 150 mJ", location="-", relation=">", paper=150.0, artifact=energy, unit="mJ",
          basis="synthetic", provenance="modeled", section="s")
    c.add("far_above", "energy above 10 mJ", location="-", relation=">", paper=10.0, artifact=energy, unit="mJ",
          basis="synthetic", provenance="modeled", section="s")
    c.add("rate", "a measured rate", location="-", relation=">", paper=1.0, artifact=2.0, unit="x",
          basis="synthetic", provenance="measured", section="s")
    return c.frame()


def test_assumed_coefficients_are_the_nonzero_pricing_fields_of_assumed_models_synthetic():
    # idle_mw does not price energy above idle; mw_at_zero_ghz is 0; the radio is published
    assert robustness.assumed_coefficients({"cpu-x": CPU, "radio-y": RADIO}) == {
        "cpu-x.mw_per_ghz": 100.0, "cpu-x.nominal_ghz": 2.0}


def test_with_coefficients_replaces_only_the_named_fields_synthetic():
    out = robustness.with_coefficients({"cpu-x": CPU, "radio-y": RADIO}, {"cpu-x.nominal_ghz": 1.0})
    assert out["cpu-x"] == replace(CPU, nominal_ghz=1.0) and out["radio-y"] is RADIO


def test_claims_sensitivity_flags_the_claim_near_its_bound_synthetic():
    models = {"cpu-x": CPU, "radio-y": RADIO}
    rob = robustness.study_robustness(synthetic_claims_at, models, synthetic_claims_at(models),
                                      {"lhs_size": 16, "seed": 3})
    labels = dict(zip(rob.claims["claim_id"], rob.claims["robustness"]))
    assert labels == {"energy_above": "depends on cpu-x.mw_per_ghz, cpu-x.nominal_ghz", "far_above": "robust",
                      "rate": ""}
    row = rob.table.set_index("claim_id").loc["energy_above"]
    # the box is [0.5, 1.5]^2 of (k_f, f): energy from 50 to 450 mJ
    assert row["value"] == 200.0 and row["lowest"] >= 50.0 and row["highest"] <= 450.0 and row["value_moves"]
    assert 0 < row["hypercube_kept_pct"] < 100
    assert rob.coefficients == ["cpu-x.mw_per_ghz", "cpu-x.nominal_ghz"]


def test_a_claim_whose_value_does_not_move_is_left_out_of_the_tornado_synthetic():
    def claims_at(models):  # a ratio of two energies priced by the same model: the coefficients cancel
        c = cl.Claims("synthetic", alpha=0.05)
        e = float(models["cpu-x"].busy_core_mw())
        c.add("ratio", "a ratio", location="-", relation="<", paper=1.0, artifact=(0.5 * e) / e, unit="x",
              basis="synthetic", provenance="modeled", section="s")
        return c.frame()
    models = {"cpu-x": CPU}
    rob = robustness.study_robustness(claims_at, models, claims_at(models), {"lhs_size": 4, "seed": 1})
    assert rob.table["robustness"].tolist() == ["robust"] and not rob.table["value_moves"].iloc[0]
    assert robustness_view.tornado_grid(rob.results, rob.claims) is None
    text = robustness.summary_text(rob.table, 4, rob.coefficients)
    assert "cpu-x.mw_per_ghz, cpu-x.nominal_ghz" in text and "1 of the 1 modeled verdicts" in text
    assert "no value moves" in text


def test_the_robustness_column_accepts_only_its_labels():
    frame = synthetic_claims_at({"cpu-x": CPU})
    assert cl.with_robustness(frame, {"far_above": "robust"})["robustness"].tolist() == ["", "robust", ""]
    with pytest.raises(ValueError, match="not in the table"):
        cl.with_robustness(frame, {"nope": "robust"})
    with pytest.raises(Exception, match="robust, depends on"):
        cl.with_robustness(frame, {"far_above": "fragile"})


def test_claims_written_with_robustness_read_back_equal(tmp_path):
    frame = cl.with_robustness(synthetic_claims_at({"cpu-x": CPU}), {"energy_above": "depends on cpu-x.nominal_ghz"})
    cl.write_claims(frame, tmp_path / "claims.csv")
    pd.testing.assert_frame_equal(cl.read_claims(tmp_path / "claims.csv"), frame)
