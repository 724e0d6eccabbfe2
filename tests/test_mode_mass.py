"""Each mode's posterior mass by bridge sampling (bayescomp.models.mode_mass), where the mass
is known: exact normal modes, a Stan mixture with known weights (test_modes.py), and the
program's own log density against Stan's lp__ at its draws."""
import numpy as np
import pytest
from scipy import stats

import bayescomp as bc
from bayescomp.models.hierarchical_density import log_density
from bayescomp.models.hierarchical_program import initial_values, prepare, unconstrained
from bayescomp.models.mode_mass import bridge, fit_normal, log_masses, normal_logpdf
from bayescomp.models.modes import WEIGHT_ERROR_MAX, mode_weights
from bayescomp.validation.simulate import benchmark_collection, near_identical_collection


def two_modes(rng, weight, n_chains=(3, 3), n_draws=1000, dimension=4):
    """Exact draws from each component of weight N(-3, 1) + (1 - weight) N(3, 0.5^2) in
    ``dimension`` coordinates, and the mixture's log density shifted by a constant."""
    def density(x):
        return np.logaddexp(np.log(weight) + stats.norm(-3, 1).logpdf(x).sum(-1),
                            np.log(1 - weight) + stats.norm(3, 0.5).logpdf(x).sum(-1)) + 123.4

    first = rng.normal(-3, 1, (n_chains[0], n_draws, dimension))
    second = rng.normal(3, 0.5, (n_chains[1], n_draws, dimension))
    return np.concatenate([first, second]), density


@pytest.mark.parametrize("weight", [0.5, 0.8, 0.95])
@pytest.mark.parametrize("dimension", [4, 60])
def test_masses_of_known_modes(weight, dimension):
    x, density = two_modes(np.random.default_rng(int(weight * 100)), weight, dimension=dimension)
    logs, errors = log_masses([(0, 1, 2), (3, 4, 5)], x, density, np.random.default_rng(0))
    # the constant 123.4 and the mixture weights are the masses' logs, each within its error
    truth = 123.4 + np.log([weight, 1 - weight])
    assert np.all(errors < 0.01)
    np.testing.assert_allclose(logs, truth, atol=4 * errors.max())
    np.testing.assert_allclose(mode_weights([(0, 1, 2), (3, 4, 5)], x, density,
                                            np.random.default_rng(0)),
                               [weight, 1 - weight], atol=0.01)


def test_bridge_is_exact_when_the_proposal_is_the_posterior():
    rng = np.random.default_rng(3)
    chol = np.diag([1.0, 2.0, 0.5])
    posterior = rng.standard_normal((2000, 3)) @ chol.T
    proposal = rng.standard_normal((2000, 3)) @ chol.T
    # p = 7 x the normal: every ratio is log 7, and so is the estimate, with no error
    log_z, error = bridge(np.full(2000, np.log(7.0)), np.full(2000, np.log(7.0)), 2000.0)
    assert log_z == pytest.approx(np.log(7.0), abs=1e-9) and error == pytest.approx(0, abs=1e-9)
    # the fitted normal of those draws is the normal that made them (to Monte Carlo error)
    centre, factor = fit_normal(posterior)
    np.testing.assert_allclose(factor @ factor.T, chol @ chol.T, atol=0.15)
    np.testing.assert_allclose(normal_logpdf(proposal, centre, factor),
                               stats.multivariate_normal(centre, factor @ factor.T).logpdf(proposal))


def test_too_few_draws_or_modes_that_are_not_separate_are_not_weighed():
    x, density = two_modes(np.random.default_rng(2), 0.7, n_draws=30, dimension=30)
    assert np.isnan(mode_weights([(0, 1, 2), (3, 4, 5)], x, density,
                                 np.random.default_rng(0))).all()
    # two groups of chains from one normal: the draws of each fall in the other's region
    same = np.random.default_rng(4).normal(size=(4, 1000, 2))
    logs, _ = log_masses([(0, 1), (2, 3)], same, lambda p: stats.norm.logpdf(p).sum(-1),
                         np.random.default_rng(0))
    assert np.isnan(logs).all()


@pytest.mark.parametrize("nu, weighed", [(1.2, False), (5.0, True)])
def test_a_mode_the_normal_cannot_stand_for_is_not_weighed(nu, weighed):
    """Modes 0.6 Student-t(nu) and 0.4 normal in 10 coordinates: with 5 degrees of freedom
    the weights come back within 0.02; with 1.2 the proposal misses the tails, the
    estimate's error says so (the log mass is off by 0.8), and the weights are refused."""
    rng = np.random.default_rng(0)

    def density(x):
        return np.logaddexp(np.log(0.6) + stats.t(nu, -30, 1).logpdf(x).sum(-1),
                            np.log(0.4) + stats.norm(30, 1).logpdf(x).sum(-1))

    x = np.concatenate([stats.t(nu, -30, 1).rvs((2, 500, 10), random_state=rng),
                        rng.normal(30, 1, (2, 500, 10))])
    weights = mode_weights([(0, 1), (2, 3)], x, density, np.random.default_rng(1))
    if weighed:
        np.testing.assert_allclose(weights, [0.6, 0.4], atol=0.02)
    else:
        assert np.isnan(weights).all() and WEIGHT_ERROR_MAX == 0.05


@pytest.mark.stan
@pytest.mark.parametrize("collection, prior", [
    (lambda: near_identical_collection(20, seed=2), "paper"),
    (lambda: benchmark_collection(15, seed=1), "paper"),
    (lambda: benchmark_collection(15, seed=1), "gaussian")])
def test_log_density_is_the_programs(stan_backend, collection, prior):
    """The numpy log density at the draws differs from Stan's lp__ by one constant, to the
    precision of the draws, with a Student-t and with a normal population."""
    data, _ = prepare(collection().scores, "a", "b", bc.PRIORS[prior])
    fit = bc.sampling.sample("hierarchical", data, backend=stan_backend, chains=2,
                             iter_warmup=200, iter_sampling=200, seed=3,
                             inits=initial_values(data, 2, np.random.default_rng(1)))
    lp = fit.sample_stats["lp"].values
    difference = log_density(data, unconstrained(fit, data)) - lp
    assert lp.std() > 1
    assert np.abs(difference - difference.mean()).max() < 1e-6
