"""The per-draw region masses of the pairwise hierarchical model (Rao-Blackwellised
probabilities) against closed forms, numpy's conditional and the shares of draws; the
next dataset's, averaged over antithetic draws of delta0, in both models."""
import numpy as np
import pytest
import xarray as xr
from scipy import stats

import bayescomp as bc
from bayescomp.models.modes import probability_mcse
from bayescomp.models import joint_posterior
from bayescomp.models.region_masses import (Symmetric, antithetic_delta0,
                                            next_dataset_masses, population_masses)
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


@pytest.fixture(scope="module")
def gaussian_fit():
    """A pairwise fit of the "gaussian" population, whose conditionals involve no latent
    lambda_i, and the simulated collection."""
    sim = simulate_collection(12, 30, delta0=0.004, sigma0=0.006, sigma=0.03, rho=0.1, seed=8)
    result = bc.hierarchical(sim.scores, "a", "b", rope=bc.Rope(-0.005, 0.005),
                             prior="gaussian", seed=3, baselines=False)
    return sim, result


@pytest.mark.stan
def test_population_probabilities_from_the_conditional_agree_with_the_draws(gaussian_fit):
    """Two routes to delta0's conditional: the program's (written with every draw) and
    numpy's from the draws of sigma0 and sigma_i (the "gaussian" population, where
    T_i = sigma_i^2 v_i + sigma0^2 involves no latent lambda_i). Then the fit's population
    probabilities, the means of the masses, agree with the shares of its delta0 draws
    within Monte Carlo error, and have the smaller error."""
    sim, result = gaussian_fit
    rope = result.rope
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


def _conditional_draws(centre, sd, bound, size, seed):
    """A posterior whose every draw has delta0's conditional N(centre, sd) truncated to
    (-bound, bound), with delta0 drawn from it (one chain)."""
    draws = stats.truncnorm((-bound - centre) / sd, (bound - centre) / sd, loc=centre,
                            scale=sd).rvs(size=(1, size), random_state=seed)
    post = _posterior(np.full_like(draws, centre), np.full_like(draws, sd), bound)
    post["delta0"] = (("chain", "draw"), draws)
    return post


@pytest.mark.parametrize("centre, sd, bound", [(0.0, 1.0, 1e9), (0.3, 1.0, 1.0),
                                               (0.9, 0.2, 1.0), (-5.0, 1.0, 0.5)])
def test_antithetic_delta0_is_a_draw_of_the_same_conditional(centre, sd, bound):
    """The partner sits at the mirrored quantile of the truncated normal (F(d) + F(d') = 1,
    to rounding, also 5 sds out in a tail) and is distributed as the draws are
    (Kolmogorov-Smirnov against scipy's truncnorm); without truncation it is 2 centre - d."""
    post = _conditional_draws(centre, sd, bound, 20_000, seed=1)
    partner = antithetic_delta0(post)
    conditional = stats.truncnorm((-bound - centre) / sd, (bound - centre) / sd, loc=centre,
                                  scale=sd)
    np.testing.assert_allclose(conditional.cdf(partner) + conditional.cdf(post["delta0"].values),
                               1.0, atol=1e-10)
    assert stats.kstest(partner.ravel(), conditional.cdf).pvalue > 1e-3
    if bound > 1e6:
        np.testing.assert_allclose(partner, 2 * centre - post["delta0"].values, atol=1e-12)


@pytest.mark.parametrize("nu", [3.0, None])
def test_next_dataset_masses_average_over_delta0s_conditional(nu):
    """Known answers: given sigma0 and nu, the next dataset's P(left / rope / right) is
    the Student-t masses integrated over delta0's truncated normal conditional (numerical
    quadrature; normal population: a normal with variance sigma0^2 + sd^2 where the bound is
    far). The antithetic masses' mean over simulated conditional draws agrees within 4
    Monte Carlo errors; and where sd is small beside sigma0 the masses are nearly linear in
    delta0 over its conditional, so the pairs cancel all but a second-order remainder: the
    left mass varies 400 times less than one draw's."""
    from scipy import integrate

    rope = bc.Rope(-0.01, 0.01)
    for centre, sd, sigma0, bound in [(0.004, 0.006, 0.01, 0.02), (0.004, 0.0005, 0.02, 1e3)]:
        post = _conditional_draws(centre, sd, bound, 4000, seed=2)
        post["sigma0"] = (("chain", "draw"), np.full_like(post["delta0"].values, sigma0))
        if nu is not None:
            post["nu"] = (("chain", "draw"), np.full_like(post["delta0"].values, nu))
        masses = next_dataset_masses(post, rope).reshape(-1, 3)
        single = rope.probabilities(stats.t(nu, loc=post["delta0"].values, scale=sigma0)
                                    if nu else stats.norm(post["delta0"].values, sigma0))
        single = single.reshape(-1, 3)
        conditional = stats.truncnorm((-bound - centre) / sd, (bound - centre) / sd,
                                      loc=centre, scale=sd)
        given = (lambda d: stats.t(nu, loc=d, scale=sigma0)) if nu else (
            lambda d: stats.norm(d, sigma0))
        # over the conditional's support, or 12 sds about its centre where that is wider
        limits = max(-bound, centre - 12 * sd), min(bound, centre + 12 * sd)
        truth = [integrate.quad(lambda d: conditional.pdf(d) * given(d).cdf(rope.low),
                                *limits, epsabs=1e-12)[0],
                 integrate.quad(lambda d: conditional.pdf(d) * given(d).sf(rope.high),
                                *limits, epsabs=1e-12)[0]]
        truth.insert(1, 1 - sum(truth))
        if nu is None and bound > 1e2:
            spread = np.hypot(sigma0, sd)
            np.testing.assert_allclose(truth, [stats.norm.cdf(rope.low, centre, spread),
                                               np.diff(stats.norm.cdf([rope.low, rope.high],
                                                                      centre, spread))[0],
                                               stats.norm.sf(rope.high, centre, spread)],
                                       atol=1e-9)
        error = masses.std(axis=0, ddof=1) / np.sqrt(len(masses))
        assert np.all(np.abs(masses.mean(axis=0) - truth) <= 4 * error + 1e-12)
        if sd < 0.1 * sigma0:
            assert masses[:, 0].var() < single[:, 0].var() / 400


def test_joint_next_dataset_masses_average_over_the_mirrored_delta0():
    """The joint model's: delta0's conditional is a normal about delta0_centre, so the
    mirror 2 centre - delta0 is a draw of it too. With nu large the next dataset's
    difference given the centre is normal with variance population_sd^2 + sd^2, and the
    masses' mean agrees with that closed form within 4 Monte Carlo errors, per pair."""
    rng = np.random.default_rng(3)
    centre, sd, spread = np.array([0.004, -0.012]), np.array([0.006, 0.002]), np.array([0.01, 0.02])
    delta0 = centre + sd * rng.standard_normal((1, 4000, 2))
    dims = ("chain", "draw", "pair")
    post = xr.Dataset({"delta0": (dims, delta0),
                       "delta0_centre": (dims, np.broadcast_to(centre, delta0.shape)),
                       "population_sd": (dims, np.broadcast_to(spread, delta0.shape)),
                       "nu": (("chain", "draw"), np.full((1, 4000), 1e8))})
    rope = bc.Rope(-0.01, 0.01)
    masses = joint_posterior.next_dataset_masses(post, rope).reshape(-1, 2, 3)
    total = np.hypot(spread, sd)
    left, right = stats.norm.cdf(rope.low, centre, total), stats.norm.sf(rope.high, centre, total)
    truth = np.stack([left, 1 - left - right, right], axis=-1)
    error = masses.std(axis=0, ddof=1) / np.sqrt(len(masses))
    assert np.all(np.abs(masses.mean(axis=0) - truth) <= 4 * error + 1e-12)


@pytest.mark.stan
def test_dataset_probabilities_from_the_conditional_agree_with_the_draws(gaussian_fit):
    """Two routes to delta_i's normal conditional: the fit's (``delta_centre``,
    ``delta_spread``) and numpy's from the draws of delta0, sigma0 and sigma_i (precision
    1 / (sigma_i^2 v_i) + 1 / sigma0^2 for a normal population). Each dataset's P(left /
    rope / right) in ``result.datasets``, the means of the conditional's masses, agrees with
    the shares of its delta_i draws within 4 Monte Carlo errors, and P(rope) has the smaller
    error on every dataset where the shares' is above 0.001."""
    from bayescomp.models.region_masses import dataset_masses

    sim, result = gaussian_fit
    post, rope = result.idata.posterior, result.rope
    differences = sim.scores.differences("a", "b")
    means = np.array([d.mean() for d in differences])
    share = 0.1 + 0.9 / np.array([d.size for d in differences])          # v_i, rho 0.1
    noise = 1 / (post["sigma"].values ** 2 * share)
    prior = 1 / post["sigma0"].values[..., None] ** 2
    precision = noise + prior
    np.testing.assert_allclose(post["delta_centre"].values,
                               (noise * means + prior * post["delta0"].values[..., None])
                               / precision, rtol=1e-9)
    np.testing.assert_allclose(post["delta_spread"].values, precision ** -0.5, rtol=1e-9)

    masses = dataset_masses(post, rope)                        # chain, draw, dataset, 3
    table = result.datasets[["p_left", "p_rope", "p_right"]].to_numpy()
    np.testing.assert_allclose(table, masses.reshape(-1, len(means), 3).mean(axis=0),
                               rtol=1e-12)
    indicators = rope.indicators(post["delta"].values)
    draws = indicators.shape[0] * indicators.shape[1]
    for i in range(len(means)):
        shares_error = probability_mcse(indicators[:, :, i])
        # (and 3 / draws where no draw fell in a region: its probability is below that at 95%)
        assert np.all(np.abs(table[i] - indicators[:, :, i].reshape(-1, 3).mean(axis=0))
                      <= 4 * shares_error + 3 / draws)
        if shares_error[1] > 1e-3:
            assert probability_mcse(masses[:, :, i])[1] < shares_error[1]


def test_symmetric_families_are_scipys():
    """The masses of the fast normal and Student-t are scipy.stats' to rounding, arrays of
    locations, scales and degrees of freedom alike, 100 scales out in a tail too."""
    rng = np.random.default_rng(0)
    loc, scale = rng.normal(0, 0.02, (4, 500)), rng.uniform(0.001, 0.05, (4, 500))
    nu = rng.uniform(1.01, 50, (4, 500))
    loc[0, 0], scale[0, 0] = 1.0, 0.01            # the ROPE 100 scales below the location
    rope = bc.Rope(-0.01, 0.02)
    np.testing.assert_allclose(rope.probabilities(Symmetric.normal(loc, scale)),
                               rope.probabilities(stats.norm(loc, scale)), rtol=1e-12, atol=0)
    np.testing.assert_allclose(rope.probabilities(Symmetric.student_t(nu, loc, scale)),
                               rope.probabilities(stats.t(nu, loc=loc, scale=scale)),
                               rtol=1e-12, atol=0)


def test_a_rope_of_width_zero_holds_no_mass():
    """A point ROPE holds nothing of a continuous distribution: exactly 0, where 1 - cdf - sf
    left 2e-17 (the population's truncated normal, a dataset's normal, the next dataset's
    Student-t); the two sides then sum to 1 up to rounding."""
    point = bc.Rope(0.0, 0.0)
    population = population_masses(_posterior([[0.01, -0.3]], [[0.02, 0.1]], 1.0), point)
    dataset = point.probabilities(Symmetric.normal(np.array([0.003, 0.0]), np.array([0.01, 1.0])))
    student = point.probabilities(Symmetric.student_t(3.0, np.array([0.02]), np.array([0.05])))
    for masses in (population.reshape(-1, 3), dataset, student):
        assert np.all(masses[..., 1] == 0.0)
        np.testing.assert_allclose(masses[..., 0] + masses[..., 2], 1.0, atol=1e-15)
    np.testing.assert_allclose(dataset[1], [0.5, 0.0, 0.5], atol=1e-15)
