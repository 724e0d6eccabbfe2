"""The per-draw region masses of the pairwise hierarchical model (Rao-Blackwellised
probabilities) against closed forms, numpy's conditional and the shares of draws."""
import numpy as np
import pytest
import xarray as xr
from scipy import stats

import bayescomp as bc
from bayescomp.models.modes import probability_mcse
from bayescomp.models.region_masses import population_masses
from bayescomp.validation.simulate import collection as simulate_collection


def _posterior(centre, sd, bound):
    dims = ("chain", "draw")
    return xr.Dataset({"delta0_centre": (dims, np.asarray(centre, float)),
                       "delta0_sd": (dims, np.asarray(sd, float))},
                      attrs={"delta0_bound": bound})


def test_population_masses_are_the_truncated_normals():
    """Closed forms: N(0, 1) truncated to (-1, 1) puts (Phi(.5) - Phi(-.5)) / (Phi(1) -
    Phi(-1)) inside (-0.5, 0.5); a bound 10^4 sds away is no truncation; a ROPE beyond the
    bound holds everything."""
    rope = bc.Rope(-0.5, 0.5)
    masses = population_masses(_posterior([[0.0, 0.3]], [[1.0, 0.01]], 1.0), rope)
    inside = (stats.norm.cdf(0.5) - stats.norm.cdf(-0.5)) / (stats.norm.cdf(1) - stats.norm.cdf(-1))
    left = (stats.norm.cdf(-0.5) - stats.norm.cdf(-1)) / (stats.norm.cdf(1) - stats.norm.cdf(-1))
    np.testing.assert_allclose(masses[0, 0], [left, inside, left], rtol=1e-12)
    np.testing.assert_allclose(masses[0, 1], [0.0, stats.norm.cdf(20), stats.norm.sf(20)],
                               atol=1e-15)
    far = population_masses(_posterior([[0.2]], [[0.1]], 1e3), bc.Rope(-0.01, 0.01))
    np.testing.assert_allclose(far[0, 0], [stats.norm.cdf(-2.1),
                                           stats.norm.cdf(-1.9) - stats.norm.cdf(-2.1),
                                           stats.norm.sf(-1.9)], rtol=1e-10)
    everything = population_masses(_posterior([[0.0]], [[5.0]], 1.0), bc.Rope(-2.0, 2.0))
    np.testing.assert_allclose(everything[0, 0], [0.0, 1.0, 0.0], atol=1e-15)


@pytest.mark.stan
def test_population_probabilities_from_the_conditional_agree_with_the_draws():
    """Two routes to delta0's conditional: the program's (written with every draw) and
    numpy's from the draws of sigma0 and sigma_i (the "gaussian" population, where
    T_i = sigma_i^2 v_i + sigma0^2 involves no latent lambda_i). Then the fit's population
    probabilities, the means of the masses, agree with the shares of its delta0 draws
    within Monte Carlo error, and have the smaller error."""
    sim = simulate_collection(12, 30, delta0=0.004, sigma0=0.006, sigma=0.03, rho=0.1, seed=8)
    rope = bc.Rope(-0.005, 0.005)
    result = bc.hierarchical(sim.scores, "a", "b", rope=rope, prior="gaussian", seed=3,
                             baselines=False)
    post = result.idata.posterior
    differences = sim.scores.differences("a", "b")
    means = np.array([d.mean() for d in differences])
    n = np.array([d.size for d in differences])
    share = 0.1 + 0.9 / n                                          # v_i, rho 0.1
    variance = post["sigma"].values ** 2 * share + post["sigma0"].values[..., None] ** 2
    precision = (1 / variance).sum(axis=-1)
    np.testing.assert_allclose(post["delta0_centre"].values,
                               (means / variance).sum(axis=-1) / precision, rtol=1e-6)
    np.testing.assert_allclose(post["delta0_sd"].values, precision ** -0.5, rtol=1e-6)

    masses = population_masses(post, rope)
    np.testing.assert_allclose(result.population.probabilities,
                               masses.reshape(-1, 3).mean(axis=0), rtol=1e-12)
    indicators = rope.indicators(post["delta0"].values)
    shares_error = probability_mcse(indicators)
    assert np.all(np.abs(result.population.probabilities - indicators.reshape(-1, 3).mean(axis=0))
                  <= 4 * shares_error + 1e-12)
    # P(rope), the probability in the middle of (0, 1) here, from the conditional
    assert 0.2 < result.population.probabilities[1] < 0.8
    assert result.population.mcse[1] < 0.8 * shares_error[1]
