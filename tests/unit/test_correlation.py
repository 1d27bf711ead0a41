import math

import numpy as np
import pytest
from scipy import stats

from mobitrace.stats.correlation import spearman_ci


def test_spearman_ci_is_the_fisher_z_interval_with_bonett_wright_se_synthetic():
    x = np.arange(12.0)
    y = np.array([1, 3, 2, 5, 4, 7, 6, 9, 8, 12, 10, 11], float)
    rho, p, lo, hi = spearman_ci(x, y, 0.05)
    ref = stats.spearmanr(x, y)
    assert (rho, p) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue))
    half = 1.959963984540054 * math.sqrt((1 + rho ** 2 / 2) / 9)
    assert (lo, hi) == (pytest.approx(math.tanh(math.atanh(rho) - half)),
                        pytest.approx(math.tanh(math.atanh(rho) + half)))
    assert lo < rho < hi


def test_spearman_ci_flips_with_the_data_and_needs_four_points_synthetic():
    x = np.arange(12.0)
    y = np.array([1, 3, 2, 5, 4, 7, 6, 9, 8, 12, 10, 11], float)
    rho, _, lo, hi = spearman_ci(x, -y, 0.05)
    assert rho < 0 and hi < 0
    assert all(math.isnan(v) for v in spearman_ci([1, 2, 3], [1, 3, 2], 0.05)[2:])
