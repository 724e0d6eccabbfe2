"""The compound-symmetric likelihood, sigma_i integrated out, and its conditional draws.

Known answers: scipy's multivariate normal density of the raw differences, and numerical
integration over sigma of that density (scipy.integrate.quad), against the numpy functions
and against the log density of ``stan/hierarchical.stan`` itself. (The numpy density itself
is checked against scipy in test_backends.py, beside the correlated program's algebra.)
"""
import numpy as np
import pytest
from scipy import integrate, stats

from bayescomp import nu_prior, sampling
from bayescomp.likelihood import draw_sigma, sigma_sampled


def differences_with(n, mean, ss, rng):
    """n numbers with exactly this mean and sum of squared deviations."""
    x = rng.normal(size=n)
    x = (x - x.mean()) / np.sqrt(np.sum((x - x.mean()) ** 2)) * np.sqrt(ss)
    return x + mean


def mvn_logpdf(x, rho, delta, sigma):
    cov = sigma ** 2 * ((1 - rho) * np.eye(x.size) + rho)
    return stats.multivariate_normal.logpdf(x, np.full(x.size, delta), cov)


def integrated_loglik(x, rho, delta, low, high):
    """log of the mean of the normal density over sigma ~ U(low, high), by quadrature."""
    ss = np.sum((x - x.mean()) ** 2)
    mode = np.clip(np.sqrt((ss / (1 - rho) + x.size * (x.mean() - delta) ** 2
                            / (1 + (x.size - 1) * rho)) / x.size), low, high)
    peak = mvn_logpdf(x, rho, delta, mode)
    value, _ = integrate.quad(lambda s: np.exp(mvn_logpdf(x, rho, delta, s) - peak), low, high,
                              points=[mode], limit=500, epsabs=0, epsrel=1e-11)
    return peak + np.log(value / (high - low))


def test_sigma_sampled_where_the_closed_form_would_lose_precision():
    n = np.array([2, 3, 10, 10, 100])
    ss = np.array([1.0, 1.0, 0.0, 9 * 0.9 * 0.01, 99 * 0.9 * 1.0])   # sd 0.1 on dataset 3
    kept = sigma_sampled(n, ss, 0.1, np.array([0.01, 0.01, 0.01, 0.12, 0.01]))
    # 2 scores, constant differences, and a floor above the spread stay parameters
    np.testing.assert_array_equal(kept, [True, False, True, True, False])


def test_sigma_draws_follow_the_conditional_density():
    # p(sigma | delta, x) ∝ N(x | delta, sigma) on (low, high): compare the draws' CDF with
    # the normalised density integrated numerically
    rng = np.random.default_rng(4)
    n, rho, delta, low, high = 12, 0.2, 0.01, 0.02, 0.06
    x = differences_with(n, 0.0, 11 * 0.8 * 0.03 ** 2, rng)
    ss = np.sum((x - x.mean()) ** 2)
    draws = draw_sigma(np.full(40_000, delta), x.mean(), ss, n, rho, low, high, rng)
    assert draws.min() >= low and draws.max() <= high
    peak = mvn_logpdf(x, rho, delta, 0.03)
    density = lambda s: np.exp(mvn_logpdf(x, rho, delta, s) - peak)  # noqa: E731
    total = integrate.quad(density, low, high, epsrel=1e-10)[0]
    for q in (0.025, 0.03, 0.035, 0.045):
        expected = integrate.quad(density, low, q, epsrel=1e-10)[0] / total
        assert np.mean(draws <= q) == pytest.approx(expected, abs=4 * np.sqrt(0.25 / draws.size))


@pytest.mark.stan
def test_stan_log_density_equals_scipy(pystan_backend):
    """log p(data, theta) of the program at two points theta, differenced (Stan drops
    constants), against scipy: the normal density of the raw differences, integrated over
    sigma_i by quadrature where the program integrates sigma_i out, and the Student-t prior."""
    import stan

    rng = np.random.default_rng(11)
    n = np.array([2, 3, 5, 30, 12, 10])
    rho = np.array([0.0, 0.5, 0.1, 0.2, 0.3, 0.1])
    sds = np.array([0.5, 0.4, 0.6, 0.5, 0.7, 0.3])
    xs = [rng.normal(0.2 * i, s, k) for i, (k, s) in enumerate(zip(n, sds))]
    means = np.array([x.mean() for x in xs])
    ss = np.array([np.sum((x - x.mean()) ** 2) for x in xs])
    # dataset 2's floor matters but it is integrated, dataset 5's is near its spread (it stays
    # a parameter), and a low ceiling makes
    # the upper truncation matter for delta far from the mean
    lower = np.array([0.05, 0.05, 0.4, 0.05, 0.05, 0.35])
    upper = 1.5
    sampled = sigma_sampled(n, ss, rho, lower)
    assert sampled.tolist() == [True, False, False, False, False, True]
    data = dict(n_datasets=len(n), n_scores=n.tolist(), rho=rho.tolist(),
                mean_diff=means.tolist(), ss=ss.tolist(), delta0_bound=3.0, sigma0_upper=3.0,
                sigma_lower=lower.tolist(), sigma_upper=upper,
                **nu_prior.stan_data((0.5, 5.0), (0.05, 0.15)), centered=[1] * len(n),
                delta0_logit_center=0.0, delta0_logit_scale=1.0, delta0_logit_slope=0.5,
                delta0_guess=0.1,
                sigma_sampled=sampled.astype(int).tolist())
    _, code = sampling.program_code("hierarchical")
    sampling.engine("pystan").compile("hierarchical", code, route="public")  # not in ./build
    model = stan.build(code, data=data, random_seed=1)

    def point(delta, sigma_param, nu):
        # delta0 = 3 (2 inv_logit(delta0_z + 0.5 (mean(delta) - 0.1)) - 1) = 0.3 at every point
        delta0_z = np.log(0.55 / 0.45) - 0.5 * (np.mean(delta) - 0.1)
        return dict(delta0_z=float(delta0_z), sigma0=0.8, delta_param=list(delta),
                    sigma_param=list(sigma_param), log_nu_minus_one=float(np.log(nu - 1)))

    def log_prior_nu(nu):
        # the prior of u = log(nu - 1): Gamma(nu - 1 | alpha, beta) (nu - 1) averaged over the
        # uniform alpha and beta, by dblquad here, from a table in the program
        density = integrate.dblquad(lambda b, a: stats.gamma.pdf(nu - 1, a, scale=1 / b),
                                    0.5, 5.0, 0.05, 0.15, epsabs=0, epsrel=1e-11)[0]
        return np.log(density * (nu - 1))

    def scipy_log_density(delta, sigma_param, nu):
        total = np.sum(stats.t.logpdf(delta, nu, 0.3, 0.8)) + log_prior_nu(nu)
        sigma = iter(sigma_param)
        for i, x in enumerate(xs):
            if sampled[i]:
                total += mvn_logpdf(x, rho[i], delta[i], next(sigma))
            else:
                total += integrated_loglik(x, rho[i], delta[i], lower[i], upper)
        return total

    near = means + 0.05
    far = means + np.array([0.3, 2.5, -1.8, 0.4, -0.2, 0.1])   # datasets 1, 2: truncation matters
    # dataset 3 at 60 from its mean: Q(a, A / 2U^2) = exp(-3500) underflows a double
    very_far = means + np.array([0.3, 2.5, -1.8, 60.0, -0.2, 0.1])
    points = [(near, [0.6, 0.45], 21.0), (far, [0.9, 0.4], 21.0), (means - 0.1, [0.5, 0.5], 21.0),
              (very_far, [0.9, 0.4], 21.0), (near, [0.6, 0.45], 1.4), (near, [0.6, 0.45], 3.7),
              (near, [0.6, 0.45], 160.0)]
    stan_lp = [model.log_prob(model.unconstrain_pars(point(*p)), adjust_transform=False)
               for p in points]
    expected = [scipy_log_density(*p) for p in points]
    for k in range(1, len(points)):
        # the prior of nu is interpolated (cubic Hermite, error ~1e-8)
        tolerance = 1e-8 if points[k][2] == 21.0 else 1e-6
        assert stan_lp[k] - stan_lp[0] == pytest.approx(expected[k] - expected[0], abs=tolerance)


@pytest.mark.parametrize("shape, low, high", [(3.0, 0.2, 1.0),     # below the median: P
                                              (3.0, 9.0, 40.0),    # far in the upper tail: Q
                                              (50.0, 30.0, 60.0)])  # across the median
def test_truncated_gamma_draws_follow_scipys_truncated_distribution(shape, low, high):
    from bayescomp.likelihood import truncated_gamma

    rng = np.random.default_rng(9)
    draws = truncated_gamma(np.full(20_000, shape), low, high, rng.uniform(size=20_000))
    assert draws.min() >= low and draws.max() <= high
    gamma = stats.gamma(shape)
    mass = gamma.sf(low) - gamma.sf(high)   # upper tails: precise far out
    cdf = lambda t: (gamma.sf(low) - gamma.sf(t)) / mass  # noqa: E731
    assert stats.kstest(draws, cdf).pvalue > 0.001
