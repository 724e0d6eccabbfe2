"""Holm's step-down and Bonferroni corrections (bayescomp.baselines.multiple_testing), by hand
and by their defining properties."""
import numpy as np
import pytest

from bayescomp.baselines.multiple_testing import adjust_p_values


def test_adjust_p_values_by_hand():
    p = [0.01, 0.04, 0.03, 0.2]
    # Holm: sorted 0.01, 0.03, 0.04, 0.2 times 4, 3, 2, 1 = 0.04, 0.09, 0.08, 0.2, then running max
    np.testing.assert_allclose(adjust_p_values(p, "holm"), [0.04, 0.09, 0.09, 0.2])
    np.testing.assert_allclose(adjust_p_values(p, "bonferroni"), [0.04, 0.16, 0.12, 0.8])
    np.testing.assert_allclose(adjust_p_values([0.5, 0.3], "holm"), [0.6, 0.6])
    np.testing.assert_allclose(adjust_p_values([0.5, 0.3], "bonferroni"), [1.0, 0.6])
    np.testing.assert_allclose(adjust_p_values([0.02, np.nan, 0.01], "holm"), [0.02, np.nan, 0.02])
    np.testing.assert_allclose(adjust_p_values(p, None), p)
    with pytest.raises(ValueError, match="correction"):
        adjust_p_values(p, "fdr")


def test_holm_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted: 0.005 * 4 = 0.02, 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, 0.04 * 1 -> max(0.06, 0.04)
    np.testing.assert_allclose(adjust_p_values(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(adjust_p_values([0.5, 0.9], "holm"), [1.0, 1.0])
    np.testing.assert_allclose(adjust_p_values([0.2], "holm"), [0.2])


def test_holm_five_hypotheses_by_hand():
    # Holm (1979)'s procedure on m = 5: sorted 0.001, 0.011, 0.02, 0.03, 0.04 times 5..1
    # = 0.005, 0.044, 0.06, 0.06, 0.04; the running maximum makes the last 0.06
    p = [0.03, 0.001, 0.04, 0.011, 0.02]
    np.testing.assert_allclose(adjust_p_values(p, "holm"), [0.06, 0.005, 0.06, 0.044, 0.06])
    # at alpha = 0.05 Holm rejects the two smallest, Bonferroni the smallest only
    np.testing.assert_array_equal(adjust_p_values(p, "holm") <= 0.05,
                                  [False, True, False, True, False])
    np.testing.assert_array_equal(adjust_p_values(p, "bonferroni") <= 0.05,
                                  [False, True, False, False, False])


@pytest.mark.parametrize("seed", range(5))
def test_holm_is_monotone_and_at_most_bonferroni(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 1, 12) ** 3  # some small, some large, as in a family of tests
    holm, bonferroni = adjust_p_values(p, "holm"), adjust_p_values(p, "bonferroni")
    order = np.argsort(p)
    # adjusted p-values keep the order of the raw ones (step-down: never decrease)
    assert np.all(np.diff(holm[order]) >= 0)
    # never below the raw p-value, never above Bonferroni's, never above 1
    assert np.all(p <= holm) and np.all(holm <= bonferroni) and np.all(holm <= 1)
    # the smallest is multiplied by m in both
    assert holm[order[0]] == pytest.approx(bonferroni[order[0]])


@pytest.mark.parametrize("bad", [[0.1, 1.5], [-0.01, 0.2], [0.1, np.inf]])
def test_p_values_outside_0_1_are_refused(bad):
    for method in ("holm", "bonferroni", None):
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            adjust_p_values(bad, method)
