"""The hierarchical program's log density, and the truncated Gamma of nu_prior.

Known answers: scipy's multivariate normal density of the raw differences, integrated over
delta_i by quadrature (the program integrates delta_i out in closed form), scipy's Gamma
density of the mixing weights lambda_i and the paper's prior of nu by dblquad, against the
log density of ``stan/hierarchical.stan`` itself; and scipy's truncated Gamma.
"""
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, special, stats

from bayescomp.models import nu_prior
from bayescomp.models.hierarchical_program import coordinates
from bayescomp import sampling


def mvn_logpdf(x, rho, delta, sigma):
    cov = sigma ** 2 * ((1 - rho) * np.eye(x.size) + rho)
    return stats.multivariate_normal.logpdf(x, np.full(x.size, delta), cov)


def marginal_loglik(xs, rho, sigma, tau, bound):
    """log of the integral over delta0 in (-bound, bound) of prod_i MVN(x_i | delta0 1,
    sigma_i^2 C_i + tau_i^2 11'): delta_i ~ N(delta0, tau_i^2) integrated out as a rank-one
    term of the raw differences' covariance, delta0 by quadrature."""
    def log_integrand(d):
        return sum(stats.multivariate_normal.logpdf(
            x, np.full(x.size, d), s ** 2 * ((1 - r) * np.eye(x.size) + r) + t ** 2)
            for x, r, s, t in zip(xs, rho, sigma, tau))
    grid = np.linspace(-bound, bound, 401)
    values = np.array([log_integrand(d) for d in grid])
    peak_at, peak = grid[np.argmax(values)], values.max()
    value, _ = integrate.quad(lambda d: np.exp(log_integrand(d) - peak), -bound, bound,
                              points=[peak_at], limit=500, epsabs=0, epsrel=1e-12)
    return peak + np.log(value)


@pytest.mark.stan
@pytest.mark.parametrize("population", [1, 0])
def test_stan_log_density_equals_scipy(cmdstanpy_backend, population):
    """log p(data, theta) of the program at several points theta, differenced (Stan drops
    constants), against scipy: the raw differences' normal density with delta_i integrated
    out as a rank-one covariance term and delta0 by quadrature, lambda_i's Gamma(nu/2, nu/2)
    density on the log scale, standardised by the approximate conditional of log_mixing
    (nu/2 below and above 10, where the program switches to Stirling's series), the
    paper's prior of nu, and the Jacobian of sigma_i's log-odds u_i, which the program writes
    in its model block."""
    import cmdstanpy

    rng = np.random.default_rng(11)
    n = np.array([2, 3, 5, 30, 12, 10])
    rho = np.array([0.0, 0.5, 0.1, 0.2, 0.3, 0.1])
    sds = np.array([0.5, 0.4, 0.6, 0.5, 0.7, 0.3])
    xs = [rng.normal(0.2 * i, s, k) for i, (k, s) in enumerate(zip(n, sds))]
    means = np.array([x.mean() for x in xs])
    ss = np.array([np.sum((x - x.mean()) ** 2) for x in xs])
    lower, upper, bound = np.full(6, 0.05), 1.5, 3.0
    data = dict(n_datasets=len(n), n_scores=n.tolist(), rho=rho.tolist(),
                mean_diff=means.tolist(), ss=ss.tolist(), delta0_bound=bound, sigma0_upper=3.0,
                sigma_lower=lower.tolist(), sigma_upper=upper, population=population,
                **nu_prior.stan_data((0.5, 5.0), (0.05, 0.15)))
    data.update(coordinates(data))
    # CmdStan's log_prob with the executable the package's engine built into its cache
    # (pystan's public route would compile the program once more, a minute and a half, for
    # this test alone)
    _, code = sampling.program_code("hierarchical")
    sampling.engine("cmdstanpy").compile("hierarchical", code)
    [entry] = [Path(e["path"]) for e in sampling.cache_info()["entries"]
               if e["engine"] == "cmdstanpy" and e["program"] == "hierarchical"
               and e["status"] == "ok"
               and (Path(e["path"]) / "hierarchical.stan").read_text() == code]
    model = cmdstanpy.CmdStanModel(exe_file=entry / "hierarchical")

    def point(sigma0, sigma, nu, lambda_z):
        share = (sigma - lower) / (upper - lower)
        values = dict(sigma0_log_odds=float(special.logit(sigma0 / data["sigma0_upper"])),
                      sigma_log_odds=list(np.log(share / (1 - share))))
        if population:
            values.update(log_nu_minus_one=[float(np.log(nu - 1))], lambda_z=list(lambda_z))
        return values

    def log_prior_nu(nu):
        density = integrate.dblquad(lambda b, a: stats.gamma.pdf(nu - 1, a, scale=1 / b),
                                    0.5, 5.0, 0.05, 0.15, epsabs=0, epsrel=1e-11)[0]
        return np.log(density * (nu - 1))

    def scipy_log_density(sigma0, sigma, nu, lambda_z):
        total = 0.0
        tau = np.full(6, sigma0)
        if population:
            half = nu / 2
            # z-scores of log(lambda) under Gamma((nu + w) / 2, (nu + w r^2) / 2): r the mean's
            # deviation from the means' centre (the data's mean_centre) over sqrt(sigma0^2 +
            # se^2), w = sigma0^2 / (sigma0^2 + se^2); digamma(a) - log(a) and
            # sqrt(trigamma(a)) linear in w between a = nu / 2 and a = (nu + 1) / 2
            fold_variance = np.maximum(ss / (n - 1) / (1 - rho), lower ** 2)
            total_variance = sigma0 ** 2 + fold_variance * (rho + (1 - rho) / n)
            r2 = (means - data["mean_centre"]) ** 2 / total_variance
            w = sigma0 ** 2 / total_variance
            shapes = np.array([nu / 2, (nu + 1) / 2])
            centres = special.digamma(shapes) - np.log(shapes)
            scales = np.sqrt(special.polygamma(1, shapes))
            mean_log = ((1 - w) * centres[0] + w * centres[1]
                        - np.log((nu + w * r2) / (nu + w)))
            sd_log = (1 - w) * scales[0] + w * scales[1]
            log_lambda = mean_log + sd_log * np.asarray(lambda_z)
            weight = np.exp(log_lambda)
            # density of log(lambda) = Gamma density x lambda, times d log(lambda) / dz
            total += np.sum(stats.gamma.logpdf(weight, half, scale=1 / half) + log_lambda
                            + np.log(sd_log)) + log_prior_nu(nu)
            tau = sigma0 / np.sqrt(weight)
        # the program samples sigma0's and sigma_i's log-odds and writes their Jacobians in
        # the model block, so the density is of (their log-odds, ...) even without
        # adjust_transform
        total += np.sum(np.log(sigma - lower) + np.log(upper - sigma))
        total += np.log(sigma0) + np.log(data["sigma0_upper"] - sigma0)
        return total + marginal_loglik(xs, rho, sigma, tau, bound)

    z = np.array([0.3, -1.2, 0.8, 2.0, -0.4, 0.1])
    points = [(0.8, sds, 21.0, z), (0.2, sds * 1.3, 21.0, z), (0.05, sds, 21.0, -z),
              (2.0, sds * 0.8, 21.0, z), (0.8, sds, 1.4, z), (0.8, sds, 3.7, 2 * z),
              (0.8, sds, 160.0, z)]
    if not population:
        points = [p for p in points if p[2] == 21.0]
    # the log density without the Jacobian of the constraining transforms, to all digits
    stan_lp = [float(model.log_prob(point(*p), data, jacobian=False, sig_figs=18)["lp__"].iloc[0])
               for p in points]
    expected = [scipy_log_density(*p) for p in points]
    for k in range(1, len(points)):
        # the prior of nu is interpolated (cubic Hermite, error ~1e-8)
        tolerance = 1e-8 if points[k][2] == 21.0 else 1e-6
        assert stan_lp[k] - stan_lp[0] == pytest.approx(expected[k] - expected[0], abs=tolerance)


@pytest.mark.stan
def test_program_approximations_have_the_errors_stated_in_its_header(cmdstanpy_backend):
    """The program's own functions, run by Stan, against their stated error bounds (devices 6
    and 8 of stan/hierarchical.stan's header).

    Stirling's series (a > 10): its error in the constant a log(a) - a - lgamma(a) is the first
    term left out, -1/(1680 a^7), to within the next, 1/(1188 a^9) (the series alternates), so
    at most 5.96e-11 per dataset; in the mean digamma(a) - log(a) it is 1/(240 a^8) to within
    1/(132 a^10). The direct forms Stan compares with (lgamma, digamma) are exact to about
    1e-14 for a below 16. The Hermite table: the program's interpolant equals scipy's
    CubicHermiteSpline of the same table, so its largest error against the exact prior of
    log(nu - 1) is the 9.6e-7 of tests/test_nu_prior.py. The errors are computed inside Stan:
    a difference of the values written out would lose to cancellation the digits it measures."""
    from scipy.interpolate import CubicHermiteSpline

    _, code = sampling.program_code("hierarchical")
    functions = code[code.index("functions {"):code.index("\ndata {")]
    probe = functions + """
data {
  int n;
  vector[n] a;
  int m;
  vector[m] u;
  vector[m] exact;
  real start;
  real step;
  int size;
  vector[size] value;
  vector[size] slope;
}
parameters {
  real unused;   // the package's engines run NUTS, which needs a parameter
}
model {
  unused ~ std_normal();
}
generated quantities {
  vector[n] constant_error;
  vector[n] mean_error;
  vector[m] table_error;
  for (i in 1:n) {
    vector[3] moments = log_gamma_moments(a[i]);
    constant_error[i] = moments[3] - (a[i] * log(a[i]) - a[i] - lgamma(a[i]));
    mean_error[i] = moments[1] - (digamma(a[i]) - log(a[i]));
  }
  for (j in 1:m) {
    table_error[j] = tabulated(u[j], start, step, value, slope) - exact[j];
  }
}
"""
    a = np.array([10.000001, 10.5, 11.0, 12.0, 13.5, 15.0])
    table = nu_prior.stan_data((0.5, 5.0), (0.05, 0.15))
    nodes = table["nu_prior_start"] + table["nu_prior_step"] * np.arange(table["nu_prior_size"])
    # 20 points per cell over the bulk of the prior (u from -10 to 8)
    u = np.linspace(-10, 8, 18 * 20 * 20 + 1)
    exact = nu_prior.log_density(u, (0.5, 5.0), (0.05, 0.15))[0] \
        - nu_prior.log_density(nodes, (0.5, 5.0), (0.05, 0.15))[0].max()
    data = dict(n=len(a), a=a, m=len(u), u=u, exact=exact, start=table["nu_prior_start"],
                step=table["nu_prior_step"], size=table["nu_prior_size"],
                value=table["nu_prior_log_density"], slope=table["nu_prior_slope"])
    draws = sampling.sample(probe, data, backend=cmdstanpy_backend, chains=2, iter_warmup=10,
                            iter_sampling=1, seed=1).posterior
    constant_error = draws["constant_error"].values[0, 0]
    mean_error = draws["mean_error"].values[0, 0]
    np.testing.assert_allclose(constant_error, -1 / (1680 * a ** 7),
                               atol=1 / (1188 * 10 ** 9) + 2e-14)
    assert np.abs(constant_error).max() <= 5.96e-11
    np.testing.assert_allclose(mean_error, -1 / (240 * a ** 8), atol=1 / (132 * 10 ** 10) + 2e-14)
    table_error = draws["table_error"].values[0, 0]
    spline = CubicHermiteSpline(nodes, table["nu_prior_log_density"], table["nu_prior_slope"])
    np.testing.assert_allclose(table_error, spline(u) - exact, rtol=1e-5, atol=1e-12)
    # where the prior is within e^-50 of its peak (u = 8 is beyond: log density -135)
    assert np.abs(table_error[exact > -50]).max() == pytest.approx(9.6e-7, rel=0.01)


def test_delta_draws_follow_their_conditional():
    """delta_conditional's centre and sd, and draw_delta's draws, against the product of the
    normal prior N(delta0, sigma0^2 / lambda) and the mean's likelihood N(m | delta,
    sigma^2 v), integrated numerically."""
    from bayescomp.models.hierarchical_program import delta_conditional, draw_delta

    data = dict(mean_diff=[0.4, -1.0], ss=[1.0, 2.0], n_scores=[10, 4], rho=[0.1, 0.25],
                sigma_lower=[0.01, 0.01], mean_centre=-0.3)   # read by data_terms, unused here
    size = 200_000
    delta0, sigma0 = np.full((1, size), 0.1), np.full((1, size), 0.5)
    sigma = np.broadcast_to([0.6, 1.2], (1, size, 2))
    weight = np.array([1.3, 0.4])
    log_lambda = np.broadcast_to(np.log(weight), (1, size, 2))
    centre, spread = delta_conditional(delta0, sigma0, sigma, log_lambda, data)
    draws = draw_delta(centre, spread, np.random.default_rng(1))
    for i in range(2):
        se = np.sqrt(sigma[0, 0, i] ** 2 * (data["rho"][i] + (1 - data["rho"][i]) / data["n_scores"][i]))
        tau = 0.5 / np.sqrt(weight[i])
        density = lambda d: (stats.norm.pdf(data["mean_diff"][i], d, se)  # noqa: E731
                             * stats.norm.pdf(d, 0.1, tau))
        total = integrate.quad(density, -10, 10)[0]
        mean = integrate.quad(lambda d: d * density(d), -10, 10)[0] / total
        sd = np.sqrt(integrate.quad(lambda d: (d - mean) ** 2 * density(d), -10, 10)[0] / total)
        np.testing.assert_allclose(centre[..., i], mean, rtol=1e-7)
        np.testing.assert_allclose(spread[..., i], sd, rtol=1e-7)
        assert draws[..., i].mean() == pytest.approx(mean, abs=4 * sd / np.sqrt(size))
        assert draws[..., i].std() == pytest.approx(sd, rel=0.01)


@pytest.mark.parametrize("shape, low, high", [(3.0, 0.2, 1.0),     # below the median: P
                                              (3.0, 9.0, 40.0),    # far in the upper tail: Q
                                              (50.0, 30.0, 60.0)])  # across the median
def test_truncated_gamma_draws_follow_scipys_truncated_distribution(shape, low, high):
    from bayescomp.models.likelihood import truncated_gamma

    rng = np.random.default_rng(9)
    draws = truncated_gamma(np.full(20_000, shape), low, high, rng.uniform(size=20_000))
    assert draws.min() >= low and draws.max() <= high
    gamma = stats.gamma(shape)
    mass = gamma.sf(low) - gamma.sf(high)   # upper tails: precise far out
    cdf = lambda t: (gamma.sf(low) - gamma.sf(t)) / mass  # noqa: E731
    assert stats.kstest(draws, cdf).pvalue > 0.001
