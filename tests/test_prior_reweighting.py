"""Another prior of nu read off draws by Pareto-smoothed importance sampling: known answers.

The weights' log ratio is the two priors' log densities as the Stan programs compute them
(checked against the closed forms and the quadrature of bayescomp.models.nu_prior); the
weighted estimates and their errors reduce to the plain ones with equal weights; on draws of
a known normal, the weights give another normal's probabilities within their stated error;
the weighted HDI is ArviZ's with equal weights.
"""
import arviz as az
import numpy as np
import pytest
from scipy import stats

import bayescomp as bc
from bayescomp.models import nu_prior
from bayescomp.models.modes import probability_mcse
from bayescomp.models.prior_reweighting import (MAX_PARETO_K, differs_only_in_nu,
                                                importance_weights, log_nu_prior, reweighting,
                                                weighted_estimate, weighted_hdi,
                                                weights_in_modes)


def test_only_priors_of_nu_are_reweighted():
    priors = bc.PRIORS
    for a in ("paper", "baycomp", "kruschke", "juarez_steel"):
        for b in ("paper", "baycomp", "kruschke", "juarez_steel"):
            assert differs_only_in_nu(priors[a], priors[b])
        assert not differs_only_in_nu(priors[a], priors["gaussian"])
    wider = bc.HierarchicalPrior(sigma0_upper=2.0)
    assert not differs_only_in_nu(priors["paper"], wider)
    with pytest.raises(ValueError, match="more than the prior of nu"):
        reweighting(np.full((2, 3), 5.0), "paper", priors["paper"], wider)


def test_log_prior_of_nu_is_the_closed_form_or_the_quadrature():
    nu = 1 + np.exp(np.linspace(-4, 6, 200))
    u, x = np.log(nu - 1), nu - 1
    # each up to a constant: compare differences from the first point
    kruschke = log_nu_prior(bc.PRIORS["kruschke"], nu)
    np.testing.assert_allclose(kruschke - kruschke[0], (u - x / 29) - (u[0] - x[0] / 29),
                               atol=1e-6)
    juarez = log_nu_prior(bc.PRIORS["juarez_steel"], nu)
    exact = u + np.log1p(x) - 0.1 * x
    np.testing.assert_allclose(juarez - juarez[0], exact - exact[0], atol=1e-6)
    paper = log_nu_prior(bc.PRIORS["paper"], nu)
    direct = nu_prior.log_density(u)[0]
    np.testing.assert_allclose(paper - paper[0], direct - direct[0], atol=1e-6)


def test_equal_weights_are_the_plain_estimates():
    rng = np.random.default_rng(1)
    masses = rng.dirichlet(np.ones(3), size=(4, 500))
    masses[1] = masses[0] * 0.5 + masses[1] * 0.5   # some autocorrelation between chains
    weights = np.full((4, 500), 1 / 2000)
    estimate, error = weighted_estimate(masses, weights)
    np.testing.assert_allclose(estimate, masses.reshape(-1, 3).mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(error, probability_mcse(masses), rtol=1e-9)
    flat = importance_weights(np.zeros((4, 500)))
    np.testing.assert_allclose(flat.weights, weights, rtol=1e-12)
    assert flat.ess == pytest.approx(2000)


def test_weights_give_another_normal_within_their_error():
    """Draws of N(0, 1) reweighted to N(0.5, 1): P(x < -0.5), P(-0.5 < x < 0.5), P(x > 0.5)
    within four of their stated errors of the closed form, over 20 seeds the error's scale
    right (the standardised errors' root mean square between 0.5 and 1.6)."""
    target = stats.norm(0.5, 1)
    exact = np.array([target.cdf(-0.5), target.cdf(0.5) - target.cdf(-0.5), target.sf(0.5)])
    z = []
    for seed in range(20):
        x = np.random.default_rng(seed).normal(size=(4, 1000))
        weights = importance_weights(target.logpdf(x) - stats.norm.logpdf(x))
        assert weights.usable and weights.pareto_k < MAX_PARETO_K
        regions = np.stack([x < -0.5, np.abs(x) <= 0.5, x > 0.5], axis=-1).astype(float)
        estimate, error = weighted_estimate(regions, weights.weights)
        z.append((estimate - exact) / error)
    z = np.array(z)
    assert np.all(np.abs(z) < 4)
    assert 0.5 < np.sqrt(np.mean(z ** 2)) < 1.6


def test_heavy_tailed_weights_are_not_usable():
    """From N(0, 1) to N(0, 3^2) the weights' tail is heavy (Pareto shape near 0.9)."""
    x = np.random.default_rng(3).normal(size=(4, 1000))
    weights = importance_weights(stats.norm(0, 3).logpdf(x) - stats.norm.logpdf(x))
    assert weights.pareto_k > MAX_PARETO_K and not weights.usable


@pytest.mark.parametrize("size", [37, 1001, 4000])
def test_weighted_hdi_is_arviz_hdi_with_equal_weights(size):
    x = np.random.default_rng(size).standard_t(3, size=size)
    np.testing.assert_allclose(weighted_hdi(x, np.full(size, 1 / size)),
                               az.hdi(x, hdi_prob=0.95), rtol=1e-12)
    # a weighted one: the draws of N(0, 1) reweighted to N(1, 1) hold N(1, 1)'s HDI
    y = np.random.default_rng(size + 1).normal(size=20000)
    weights = importance_weights(stats.norm(1, 1).logpdf(y) - stats.norm.logpdf(y)).weights
    low, high = weighted_hdi(y, weights)
    assert low == pytest.approx(1 - 1.96, abs=0.1) and high == pytest.approx(1 + 1.96, abs=0.1)


def test_modes_move_by_their_mean_ratio():
    """Two modes, N(-2, 1) in chains 0-1 with mass 0.3 and N(2, 1) in chains 2-3 with mass
    0.7, tilted by exp(x / 2): each mode becomes N(mu + 1/2, 1) and its mass moves by
    exp(mu / 2 + 1 / 8), so P(x > 0) is known in closed form; the weights give it within
    four of their errors, and the modes' new masses within 2%."""
    rng = np.random.default_rng(5)
    means = np.array([-2.0, -2.0, 2.0, 2.0])
    x = means[:, None] + rng.normal(size=(4, 2000))
    masses = np.array([0.3, 0.7]) * np.exp(np.array([-2.0, 2.0]) / 2 + 1 / 8)
    masses /= masses.sum()
    exact = masses @ stats.norm.sf(0, loc=np.array([-1.5, 2.5]))
    weights = weights_in_modes(x / 2, [(0, 1), (2, 3)], [0.3, 0.7])
    assert weights.usable and weights.weights.sum() == pytest.approx(1)
    np.testing.assert_allclose([weights.weights[:2].sum(), weights.weights[2:].sum()], masses,
                               rtol=0.02)
    above = (x > 0).astype(float)[..., None]
    estimate, error = weighted_estimate(np.concatenate([1 - above, above, 0 * above], axis=-1),
                                        weights.weights)
    assert abs(estimate[1] - exact) < 4 * error[1]
    # modes whose masses were not estimated count as their chains
    alike = weights_in_modes(np.zeros((4, 10)), [(0,), (1, 2, 3)], [np.nan, np.nan])
    np.testing.assert_allclose(alike.weights, 1 / 40)
