"""The probabilities integrated over nu (bayescomp.models.nu_integration): the score against
scipy's Gamma density, the rule and its errors on a posterior of u known in closed form, and,
with Stan, the integral against an ordinary fit on a collection whose chains mix, and on a
real pair whose chains cross nu's two modes too slowly."""
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

import bayescomp as bc
from bayescomp import sampling
from bayescomp.exceptions import ConstantDifferencesWarning, InputWarning
from bayescomp.models import nu_integration as ni
from bayescomp.models.convergence import ess_mean
from bayescomp.models.hierarchical_density import tabulated
from bayescomp.models.hierarchical_program import PROGRAM, prepare

KNN_XGB = Path(__file__).parent / "data" / "bbtcomp_knn_xgb.csv"


def test_score_is_the_derivative_of_the_gamma_log_density_averaged_over_lambda():
    """The Rao-Blackwellised score against a second route: scipy's quadrature, over lambda's
    conditional Gamma((nu + 1) / 2, rate (nu + r^2) / 2), of a central difference in u of
    scipy's Gamma(nu / 2, rate nu / 2) log density."""
    for u in (-3.0, 0.0, 1.7, 4.0):
        nu = 1 + np.exp(u)
        for r2 in (0.0, 0.3, 4.0, 50.0):
            def derivative(lam, h=1e-5):
                up, down = 1 + np.exp(u + h), 1 + np.exp(u - h)
                return (stats.gamma.logpdf(lam, a=up / 2, scale=2 / up)
                        - stats.gamma.logpdf(lam, a=down / 2, scale=2 / down)) / (2 * h)
            conditional = stats.gamma(a=(nu + 1) / 2, scale=2 / (nu + r2))
            expected = integrate.quad(lambda lam: derivative(lam) * conditional.pdf(lam), 0,
                                      np.inf, limit=200)[0]
            np.testing.assert_allclose(ni.score_draws(nu, np.array([[r2]]))[0], expected,
                                       rtol=1e-5, atol=1e-6)


def normal_posterior(step, centre=0.8, sd=0.9, prior_slope=0.3):
    """Nodes, scores and log prior of p(u) = N(centre, sd): the prior's log density linear in
    u, the score the rest of the normal's derivative."""
    u = np.arange(centre - 7 * sd, centre + 7 * sd, step)
    log_prior = prior_slope * u
    score = -(u - centre) / sd ** 2 - prior_slope
    return u, score, log_prior


def test_the_rule_integrates_a_known_posterior_of_u():
    for step in (0.5, 0.25):
        u, score, log_prior = normal_posterior(step)
        values = np.stack([stats.norm.cdf(u - 1), u, u ** 2], axis=1)
        exact = [stats.norm.cdf((0.8 - 1) / np.sqrt(1 + 0.81)), 0.8, 0.8 ** 2 + 0.81]
        np.testing.assert_allclose(ni.integrate(u, score, log_prior, values), exact,
                                   atol=0.5 * step ** 2 * 0.1)
        # the rule's error estimate bounds its actual error (Monte Carlo errors zero)
        error = ni.integral_error(u, score, np.zeros_like(u), log_prior, values[:, :1],
                                  np.zeros((u.size, 1)), np.random.default_rng(0))
        actual = abs(ni.integrate(u, score, log_prior, values[:, :1])[0] - exact[0])
        assert actual <= error[0] + 1e-12


def test_the_monte_carlo_error_matches_its_spread_over_replications():
    """Node estimates with independent normal noise of known size: the bootstrap's standard
    error against the spread of the integral over 300 replications of the noise."""
    u, score, log_prior = normal_posterior(0.5)
    truth = stats.norm.cdf(u - 1)[:, None]
    score_mcse, value_mcse = np.full(u.size, 0.2), np.full((u.size, 1), 0.01)
    rng = np.random.default_rng(3)
    replicas = [ni.integrate(u, score + score_mcse * rng.standard_normal(u.size), log_prior,
                             truth + value_mcse * rng.standard_normal(truth.shape))[0]
                for _ in range(300)]
    # the Monte Carlo part alone: the rule's and the tails' are far smaller here
    error = ni.integral_error(u, score, score_mcse, log_prior, truth, value_mcse,
                              np.random.default_rng(4))[0]
    assert 0.8 < error / np.std(replicas) < 1.25


def fitter(scores, first, second, seed, backend, prior="paper"):
    """integrate_nu's fit_node and log prior, as bc.hierarchical makes them."""
    data, scale = prepare(scores, first, second, bc.PRIORS[prior])
    fit_node = ni.node_fitter(
        lambda held, inits, stan_seed, warmup, draws, adapt_delta: sampling.sample(
            PROGRAM, held, backend=backend, chains=4, inits=inits, iter_warmup=warmup,
            iter_sampling=draws, seed=stan_seed, adapt_delta=adapt_delta),
        data, scale, scores.dataset_names, bc.PRIORS[prior], bc.Rope.coerce(0.01),
        sampling.Seeds(seed).sequence("nu_integration"), chains=4, iter_warmup=500,
        iter_sampling=1000, adapt_delta=0.95, max_treedepth=10)
    table = [data[key] for key in ("nu_prior_start", "nu_prior_step", "nu_prior_log_density",
                                   "nu_prior_slope")]
    return fit_node, (lambda u: tabulated(u, *table))


@pytest.mark.stan
def test_the_integral_agrees_with_a_fit_whose_chains_mix(stan_backend):
    """Two routes to one posterior: on a simulated collection of 12 datasets whose chains mix
    (nu's posterior wide, much of it near the prior), the ordinary fit's P(delta0 in each
    region), P(next dataset) and the posterior mean of log(nu - 1), against the integral
    over nu from fits at fixed nu, within three combined errors."""
    scores = bc.simulate.benchmark_collection(12, seed=5, delta0=0.01, sigma0=0.015).scores
    first, second = "a", "b"
    fit = bc.hierarchical(scores, first, second, seed=2, baselines=False, backend=stan_backend)
    assert fit.diagnostics.ok
    nu = fit.idata.posterior["nu"].values
    fit_node, log_prior = fitter(scores, first, second, seed=3, backend=stan_backend)
    integral = ni.integrate_nu(fit_node, tuple(np.log(np.quantile(nu - 1, [0.005, 0.995]))),
                               log_prior, np.random.default_rng(0))
    assert integral.ok
    for estimate, probabilities, mcse in (
            (fit.population, integral.population, integral.population_mcse),
            (fit.next_dataset, integral.next_dataset, integral.next_dataset_mcse)):
        combined = np.sqrt(estimate.mcse ** 2 + mcse ** 2)
        assert np.all(np.abs(estimate.probabilities - probabilities) <= 3 * combined + 1e-9)
    u = np.log(nu - 1)
    u_mcse = u.std() / np.sqrt(ess_mean(u))
    nodes = integral.nodes
    u_integral = float((nodes["weight"] * nodes["log_nu_minus_one"]).sum())
    # the rule's error on a mean of u: a third of the change on every other node
    coarse = float(ni.integrate(nodes["log_nu_minus_one"].to_numpy()[::2],
                                nodes["score"].to_numpy()[::2],
                                log_prior(nodes["log_nu_minus_one"].to_numpy()[::2]),
                                nodes["log_nu_minus_one"].to_numpy()[::2]))
    assert abs(u_integral - u.mean()) <= 3 * u_mcse + abs(coarse - u_integral) / 3 + 0.05


@pytest.mark.stan
@pytest.mark.slow
def test_a_pair_whose_chains_cross_slowly_agrees_with_the_quadrature(stan_backend):
    """bbtcomp's knn - xgb (tests/data/README.md): the chains cross nu's two modes every few
    hundred draws. Integrated over nu on two seeds, P(xgb better) for the population agrees
    with the quadrature of the same posterior (0.997, benchmarks/results/real_pairs.md section
    23) within three of its errors (which count the spread of the chains of the fits at nu
    between the two modes, which do not mix at a fixed nu either, so the integral is not
    reported as reliable there), and the two seeds agree within three errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)     # 4 scores per dataset
        scores = bc.read_csv(KNN_XGB)
    estimates = []
    for seed in (1, 2):
        with warnings.catch_warnings():
            # appendicitis's constant differences, already told
            warnings.simplefilter("ignore", ConstantDifferencesWarning)
            fit_node, log_prior = fitter(scores, "knn", "xgb", seed=seed, backend=stan_backend)
        integral = ni.integrate_nu(fit_node, (-2.0, 4.0), log_prior, np.random.default_rng(seed))
        assert integral.population[0] == pytest.approx(0.997, abs=3 * integral.population_mcse[0])
        # nu's two modes: most mass below 5, a tenth or so above 10
        nodes = integral.nodes
        assert nodes.loc[nodes["nu"] < 5, "weight"].sum() > 0.6
        assert nodes.loc[nodes["nu"] > 10, "weight"].sum() > 0.02
        estimates.append((integral.population, integral.population_mcse))
    (p1, e1), (p2, e2) = estimates
    assert np.all(np.abs(p1 - p2) <= 3 * np.sqrt(e1 ** 2 + e2 ** 2) + 1e-9)
