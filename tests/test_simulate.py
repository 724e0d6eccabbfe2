import numpy as np
import pytest
from scipy import stats

from bayescomp import simulate


def test_compound_symmetric_covariance_matches_the_model():
    sim = simulate.collection(3000, 20, delta0=0.01, sigma0=0.02, sigma=0.03, rho=0.2, seed=1)
    residuals = np.array(sim.scores.differences("a", "b")) - sim.delta[:, None]
    covariance = np.cov(residuals.T)
    expected = 0.03 ** 2 * (0.8 * np.eye(20) + 0.2)
    # sampling error of a covariance from 3000 draws is about 0.03^2 * sqrt(2/3000)
    np.testing.assert_allclose(covariance, expected, atol=5 * 0.03 ** 2 * np.sqrt(2 / 3000))
    assert np.mean(sim.delta) == pytest.approx(0.01, abs=4 * 0.02 / np.sqrt(3000))
    assert np.std(sim.delta) == pytest.approx(0.02, rel=0.05)


def test_ragged_seeded_and_distributions():
    a = simulate.collection(4, [5, 10, 20, 40], rho=[0.1, 0.2, 0.3, 0.4], seed=3)
    b = simulate.collection(4, [5, 10, 20, 40], rho=[0.1, 0.2, 0.3, 0.4], seed=3)
    np.testing.assert_array_equal(a.scores.n_scores, [5, 10, 20, 40])
    np.testing.assert_array_equal(a.scores.rho, [0.1, 0.2, 0.3, 0.4])
    for x, y in zip(a.scores.differences("a", "b"), b.scores.differences("a", "b")):
        np.testing.assert_array_equal(x, y)
    rng = np.random.default_rng(0)
    mixture = simulate.draw_deltas(20000, 0.0, 0.1, "mixture", rng)
    assert np.mean(np.abs(mixture)) == pytest.approx(0.1, rel=0.05)
    cauchy = simulate.draw_deltas(20000, 0.0, 0.1, "cauchy", rng)
    # the Cauchy's interquartile range is twice its scale
    assert np.subtract(*np.percentile(cauchy, [75, 25])) == pytest.approx(0.2, rel=0.05)
    student = simulate.draw_deltas(20000, 0.02, 0.1, "student", rng)
    assert stats.kstest((student - 0.02) / 0.1, stats.t(2).cdf).pvalue > 0.01
    # a fifth shifted by an exponential of mean 10 sigma0: mean delta0 + 2 sigma0, and the
    # share beyond delta0 + 10 sigma0 about 0.2 e^-1 (the normal part adds little)
    skewed = simulate.draw_deltas(20000, 0.02, 0.01, "skewed", rng)
    assert skewed.mean() == pytest.approx(0.04, abs=0.002)
    assert np.mean(skewed > 0.12) == pytest.approx(0.2 * np.exp(-1), abs=0.01)
    with pytest.raises(ValueError, match="distribution"):
        simulate.draw_deltas(3, 0, 1, "uniform")


def test_a_four_fold_study_with_a_heavy_tailed_population():
    """The design of bbtcomp's study (one 4-fold cross-validation, rho 1/4) with Student-t
    delta_i: 4 scores per dataset, every difference a whole number of test cases, and the
    delta_i the generator drew (the normal population's draws are the same as before)."""
    made = simulate.benchmark_collection(200, design="4-fold", distribution="student",
                                         sigma0=0.03, delta0=0.02, test_cases=(12, 500),
                                         seed=5)
    np.testing.assert_array_equal(made.scores.n_scores, 4)
    np.testing.assert_allclose(made.scores.rho, 0.25)
    # heavy tails: beyond 4 scales of delta0 about 2 * P(t_2 > 4) = 1.6% of the datasets
    far = np.mean(np.abs(made.delta - 0.02) > 4 * 0.03)
    assert far == pytest.approx(2 * stats.t(2).sf(4), abs=0.025)
    # the normal population is drawn from the generator's stream as before: test cases per
    # fold, accuracies, then the delta_i
    normal = simulate.benchmark_collection(30, sigma0=0.01, seed=5)
    rng = np.random.default_rng(5)
    rng.integers(30, 151, 30)
    rng.uniform(0.65, 0.9, 30)
    np.testing.assert_array_equal(normal.delta, rng.normal(0.0, 0.01, 30))
