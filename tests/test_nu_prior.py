"""The marginal prior of nu (alpha and beta integrated out) and the draws of alpha and beta."""
import numpy as np
import pytest
from scipy import integrate, stats

from bayescomp.models import nu_prior

PRIORS = [((0.5, 5.0), (0.05, 0.15)), ((1.0, 2.0), (0.01, 0.1))]   # the paper's, baycomp's
WIDE = ((0.1, 50.0), (0.001, 2.0))   # a custom prior: P(alpha + 1, x) underflows in the table


@pytest.mark.parametrize("alpha, beta", PRIORS + [WIDE])
def test_log_density_equals_double_integral(alpha, beta):
    """log p(u) against scipy's dblquad of the Gamma density over the uniform box."""
    def density(u):
        x = np.exp(u)
        return integrate.dblquad(lambda b, a: stats.gamma.pdf(x, a, scale=1 / b) * x,
                                 *alpha, *beta, epsabs=0, epsrel=1e-11)[0]

    u = np.array([-25.0, -6.0, -1.0, 1.0, 2.5, 4.0, 6.0])
    value, _ = nu_prior.log_density(u, alpha, beta)
    expected = np.log([density(v) for v in u])
    np.testing.assert_allclose(value - value[3], expected - expected[3], atol=1e-7)


def test_table_is_finite_for_a_wide_prior():
    table = nu_prior.stan_data(*WIDE)
    assert np.isfinite(table["nu_prior_log_density"]).all()
    assert np.isfinite(table["nu_prior_slope"]).all()


@pytest.mark.parametrize("alpha, beta", PRIORS)
def test_slope_is_the_derivative(alpha, beta):
    u = np.linspace(-30, nu_prior._grid_end(beta), 41)
    _, slope = nu_prior.log_density(u, alpha, beta)
    step = 1e-5
    numeric = (nu_prior.log_density(u + step, alpha, beta)[0]
               - nu_prior.log_density(u - step, alpha, beta)[0]) / (2 * step)
    np.testing.assert_allclose(slope, numeric, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("alpha, beta", PRIORS)
def test_prior_draws_of_nu_follow_the_density(alpha, beta):
    """nu drawn through alpha, beta and the gamma has the tabulated marginal density."""
    rng = np.random.default_rng(5)
    a, b = rng.uniform(*alpha, 20000), rng.uniform(*beta, 20000)
    u = np.log(rng.gamma(a, 1 / b))
    grid, value, _ = nu_prior.density_table(alpha, beta)
    cdf = integrate.cumulative_trapezoid(np.exp(value), grid, initial=0)
    result = stats.kstest(u, lambda v: np.interp(v, grid, cdf / cdf[-1]))
    assert result.pvalue > 1e-3


@pytest.mark.parametrize("alpha, beta", PRIORS)
def test_alpha_beta_given_nu_recover_their_prior(alpha, beta):
    """Draw (alpha, beta, nu) from the prior, then alpha', beta' given nu: (alpha', beta', nu)
    has the same joint distribution, so alpha' and beta' are uniform on their intervals and
    keep their dependence on nu."""
    rng = np.random.default_rng(7)
    a, b = rng.uniform(*alpha, 20000), rng.uniform(*beta, 20000)
    nu = 1 + rng.gamma(a, 1 / b)
    drawn_a, drawn_b = nu_prior.draw_alpha_beta(nu, alpha, beta, rng)
    assert stats.kstest(drawn_a, stats.uniform(alpha[0], alpha[1] - alpha[0]).cdf).pvalue > 1e-3
    assert stats.kstest(drawn_b, stats.uniform(beta[0], beta[1] - beta[0]).cdf).pvalue > 1e-3
    # the dependence on nu: rank correlations with log(nu) as in the generative draws
    for truth, drawn in ((a, drawn_a), (b, drawn_b)):
        expected = stats.spearmanr(truth, nu)[0]
        assert stats.spearmanr(drawn, nu)[0] == pytest.approx(expected, abs=0.03)


def test_alpha_given_nu_against_quadrature():
    """alpha given one nu against the CDF of alpha D(alpha, nu - 1) integrated by quad."""
    alpha, beta = (0.5, 5.0), (0.05, 0.15)
    rng = np.random.default_rng(3)
    for nu in (1.3, 12.0, 150.0):
        x = nu - 1

        def weight(a):
            return a * (stats.gamma.cdf(beta[1] * x, a + 1) - stats.gamma.cdf(beta[0] * x, a + 1))

        grid = np.linspace(*alpha, 300)
        cdf = np.concatenate([[0], np.cumsum([integrate.quad(weight, lo, hi)[0]
                                             for lo, hi in zip(grid[:-1], grid[1:])])])
        drawn, _ = nu_prior.draw_alpha_beta(np.full(20000, nu), alpha, beta, rng)
        assert stats.kstest(drawn, lambda v: np.interp(v, grid, cdf / cdf[-1])).pvalue > 1e-3
