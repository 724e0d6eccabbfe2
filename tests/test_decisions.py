import numpy as np
import pytest

import bayescomp as bc


def test_expected_cost_known_answer():
    result = bc.expected_cost_decision([0.1183, 0.6162, 0.2655], [[0, -5, 2], [7, 5, 0]],
                                       decisions=["deploy new", "keep old"])
    np.testing.assert_allclose(result.expected_costs, [-2.55, 3.9091], atol=1e-10)
    assert result.best == "deploy new"
    assert "deploy new" in result.summary()


def test_threshold_decision():
    assert bc.decide([0.01, 0.03, 0.96]) == "right"
    assert bc.decide([0.01, 0.03, 0.96], threshold=0.97) == "undecided"
    assert bc.decide([0.95, 0.05, 0.0], labels=("b better", "equivalent", "a better")) == "b better"


@pytest.mark.parametrize("probabilities", [[0.5, 0.5], [0.5, 0.6, 0.1], [-0.1, 0.6, 0.5]])
def test_bad_probabilities(probabilities):
    with pytest.raises(ValueError, match="probabilities"):
        bc.decide(probabilities)


def test_bad_costs_and_threshold():
    with pytest.raises(ValueError, match="costs"):
        bc.expected_cost_decision([0.2, 0.3, 0.5], [[1, 2]])
    with pytest.raises(ValueError, match="threshold"):
        bc.decide([0.2, 0.3, 0.5], threshold=0.4)


def test_correlated_result_cost_decision_uses_its_probabilities():
    rng = np.random.default_rng(0)
    a = rng.normal(0.8, 0.02, 100)
    scores = bc.from_arrays({"a": a, "b": a - 0.004 + rng.normal(0, 0.01, 100)}, n_folds=10)
    result = bc.correlated_ttest(scores, "a", "b", rope=0.01)
    costs = np.array([[0, -5, 2], [7, 5, 0]])
    np.testing.assert_allclose(result.expected_costs(costs).expected_costs,
                               costs @ result.probabilities)


def test_decision_needs_two_monte_carlo_errors_of_margin():
    p, e = [0.0, 0.952, 0.048], [0.0, 0.005, 0.005]
    assert bc.decide(p) == "rope"                     # without errors: exact probabilities
    assert bc.decide(p, mcse=e) == "undecided"       # 0.952 - 2 x 0.005 < 0.95
    assert bc.decide([0.0, 0.962, 0.038], mcse=e) == "rope"
    from bayescomp.decisions import too_close
    assert too_close(p, 0.95, e) and too_close([0.0, 0.944, 0.056], 0.95, e)
    assert not too_close([0.0, 0.935, 0.065], 0.95, e) and not too_close(p, 0.95, None)


def test_the_check_margin_widens_the_band_around_the_threshold():
    """Closed form: 0.962 +- 0.005 clears 0.95 by 2.4 errors (decided, no close call) but
    lies within CHECK_MARGIN = 4 of it (checked); 0.972 (4.4 errors) is neither; from below
    the same (0.938, 0.928); the band is 0.95 -+ 4 x 0.005 = 0.93 to 0.97."""
    from bayescomp.decisions import CHECK_MARGIN, MC_MARGIN, too_close_to_call, within_margin
    assert (MC_MARGIN, CHECK_MARGIN) == (2.0, 4.0)
    e = [0.0, 0.005, 0.005]
    for near in ([0.0, 0.962, 0.038], [0.0, 0.938, 0.062]):
        assert not too_close_to_call([(near, e)]) and too_close_to_call([(near, e)],
                                                                        margin=CHECK_MARGIN)
    for far in ([0.0, 0.972, 0.028], [0.0, 0.928, 0.072]):
        assert not too_close_to_call([(far, e)], margin=CHECK_MARGIN)
    np.testing.assert_array_equal(
        within_margin([0.9699, 0.9701, 0.9301, 0.9299], 0.95, 0.005, margin=4.0),
        [True, False, True, False])


def test_margin_keeps_a_near_threshold_probability_from_flipping_between_seeds():
    """Known answer (binomial): with true P(rope) = 0.948 and 2,000 independent draws per
    'seed', P_hat >= 0.95 on about 34% of seeds; with the margin, P_hat - 2 se >= 0.95 on
    about 2.5% (P_hat >= 0.9577, z = 1.96). Each draw's region is known, so the Monte Carlo
    error of a share is sqrt(p (1 - p) / n) and :func:`probability_mcse` must find it."""
    from bayescomp.models.modes import probability_mcse
    rng = np.random.default_rng(5)
    rope = bc.Rope(-0.01, 0.01)
    plain, margin, errors = 0, 0, []
    for _ in range(300):
        inside = rng.random((4, 500)) < 0.948
        draws = np.where(inside, 0.0, 0.05)           # inside the ROPE or right of it
        per_draw = rope.indicators(draws)
        p, e = per_draw.reshape(-1, 3).mean(axis=0), probability_mcse(per_draw)
        errors.append(e[1])
        plain += bc.decide(p) == "rope"
        margin += bc.decide(p, mcse=e) == "rope"
    expected = np.sqrt(0.948 * 0.052 / 2000)
    assert abs(np.median(errors) / expected - 1) < 0.1
    assert 0.25 < plain / 300 < 0.45 and margin / 300 < 0.06
