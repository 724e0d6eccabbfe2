"""The prior of nu in the hierarchical model, with its hyper-parameters integrated out.

In Corani et al. (2017) ``nu - 1 ~ Gamma(alpha, beta)`` with ``alpha ~ U(alpha_lower,
alpha_upper)`` and ``beta ~ U(beta_lower, beta_upper)``. Nothing else depends on alpha and
beta, so the Stan program samples ``u = log(nu - 1)`` under the marginal prior

    p(u) = x E[Gamma(x | alpha, beta)],  x = exp(u),

with the integral over beta in closed form (an incomplete gamma function) and the one over
alpha by Gauss-Legendre quadrature. The program reads it from a table of values and
derivatives on a grid of u (cubic Hermite interpolation). Sampling alpha, beta and
``log(nu - 1)`` jointly cost NUTS a third more leapfrog steps: alpha sets the width of the
log-gamma draw, a funnel. alpha and beta are then drawn from their exact conditional given
nu, after sampling (:func:`draw_alpha_beta`), so the posterior is the paper's.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special

from bayescomp.models.likelihood import truncated_gamma

GRID_START = -40.0       # p(u) ~ exp(alpha_lower u) below: linear extrapolation of log p
GRID_STEP = 0.05         # Hermite error ~ step^4 / 384 |d^4 log p|: below 1e-7
QUADRATURE_NODES = 64    # per 4 units of alpha's range: agrees with dblquad to 1e-9 (tested)
ALPHA_GRID = 257         # grid of alpha for drawing alpha given nu


def _grid_end(beta) -> float:
    # beyond, log p falls below -600: the program extrapolates linearly (a steep wall)
    return float(np.log(600.0 / beta[0]))


def _log_beta_integral(x, alpha, beta):
    """log(alpha D), D = P(alpha + 1, beta_high x) - P(alpha + 1, beta_low x), and the logs
    of alpha times the two terms of dD/du (u = log x); P the regularized lower incomplete
    gamma function. x broadcasts against alpha."""
    shape = alpha + 1
    low, high = beta[0] * x, beta[1] * x
    p_high = special.gammainc(shape, high)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # the difference of whichever tails is small, so that it does not cancel
        from_p = np.log(p_high) + np.log1p(-special.gammainc(shape, low) / p_high)
        q_low = special.gammaincc(shape, low)
        from_q = np.log(q_low) + np.log1p(-special.gammaincc(shape, high) / q_low)
        # P underflows far in the lower tail (large alpha, tiny x): there P(a, y) ~ y^a e^-y /
        # Gamma(a + 1), so P(a, low) / P(a, high) ~ (beta_low / beta_high)^a e^(high - low)
        tiny = (shape * np.log(high) - high - special.gammaln(shape + 1)
                + np.log1p(-np.exp(shape * np.log(beta[0] / beta[1]) + high - low)))
    log_d = np.log(alpha) + np.where(p_high == 0, tiny, np.where(p_high < 0.5, from_p, from_q))
    log_slope_high = np.log(alpha) + shape * np.log(high) - high - special.gammaln(shape)
    log_slope_low = np.log(alpha) + shape * np.log(low) - low - special.gammaln(shape)
    return log_d, log_slope_high, log_slope_low


def log_density(u, alpha=(0.5, 5.0), beta=(0.05, 0.15)):
    """Log prior density of ``u = log(nu - 1)`` (up to a constant) and its derivative.

    Parameters
    ----------
    u : array_like
    alpha, beta : (float, float)
        Bounds of the uniform priors on the shape and rate of ``nu - 1 ~ Gamma(alpha, beta)``.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``log p(u)`` and ``d log p(u) / du``.
    """
    u = np.atleast_1d(np.asarray(u, dtype=float))
    # far in the left tail the integrand gathers at alpha_lower: more nodes for wider ranges
    nodes, weights = np.polynomial.legendre.leggauss(
        QUADRATURE_NODES * max(1, int(np.ceil((alpha[1] - alpha[0]) / 4))))
    alphas = 0.5 * (alpha[1] - alpha[0]) * nodes + 0.5 * (alpha[1] + alpha[0])
    log_d, log_high, log_low = _log_beta_integral(np.exp(u)[:, None], alphas[None, :], beta)
    log_w = np.log(weights)[None, :]
    top = np.max(log_w + log_d, axis=1, keepdims=True)
    integral = np.sum(np.exp(log_w + log_d - top), axis=1)
    derivative = np.sum(np.exp(log_w + log_high - top) - np.exp(log_w + log_low - top), axis=1)
    # p(u) = x p(x) = x x^-2 (integral over alpha of alpha D): log x - 2 log x = -u
    return np.log(integral) + top[:, 0] - u, derivative / integral - 1


@lru_cache(maxsize=8)
def density_table(alpha: tuple, beta: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The log density of ``u = log(nu)`` on its grid: ``(u, log density - its max, slope)``,
    cached per prior (the bounds of alpha and beta)."""
    size = int(np.ceil((_grid_end(beta) - GRID_START) / GRID_STEP)) + 1
    u = GRID_START + GRID_STEP * np.arange(size)
    value, slope = log_density(u, alpha, beta)
    return u, value - value.max(), slope


def stan_data(alpha, beta) -> dict:
    """The table the Stan program interpolates: grid start, step, size, log p(u), slope."""
    _, value, slope = density_table(tuple(map(float, alpha)), tuple(map(float, beta)))
    return dict(nu_prior_start=GRID_START, nu_prior_step=GRID_STEP, nu_prior_size=len(value),
                nu_prior_log_density=value.tolist(), nu_prior_slope=slope.tolist())


@lru_cache(maxsize=8)
def _alpha_table(alpha: tuple, beta: tuple):
    """p(alpha | u) on the u grid x a grid of alpha, normalised per row as the piecewise-linear
    density between the alpha nodes, with its distribution function at the nodes:
    ``(u, alphas, density, cumulative)``."""
    u = density_table(alpha, beta)[0]
    alphas = np.linspace(alpha[0], alpha[1], ALPHA_GRID)
    log_d, _, _ = _log_beta_integral(np.exp(u)[:, None], alphas[None, :], beta)
    density = np.exp(log_d - log_d.max(axis=1, keepdims=True))
    cells = 0.5 * (alphas[1] - alphas[0]) * (density[:, 1:] + density[:, :-1])
    cumulative = np.concatenate([np.zeros((len(u), 1)), np.cumsum(cells, axis=1)], axis=1)
    total = cumulative[:, -1:]
    return u, alphas, density / total, cumulative / total


def draw_alpha_beta(nu, alpha=(0.5, 5.0), beta=(0.05, 0.15), rng=None):
    """Draw alpha and beta from their conditional distribution given nu.

    ``p(alpha | nu)`` is proportional to ``alpha D(alpha, nu - 1)`` (see the module), drawn by
    inverting its cumulative distribution, linear between grid points of alpha (257),
    tabulated on the grid of log(nu - 1) (step 0.05) and mixed between its two nearest rows
    (whose distribution functions differ by at most 0.02, median 0.001). Given alpha, beta is a
    Gamma(alpha + 1, rate nu - 1) truncated to the prior's interval, drawn exactly by its
    inverse distribution function.

    Parameters
    ----------
    nu : array_like
        Draws of nu (> 1).
    alpha, beta : (float, float)
        Bounds of their uniform priors.
    rng : numpy.random.Generator, optional

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        alpha and beta, shaped like ``nu``.
    """
    rng = np.random.default_rng(rng)
    nu = np.asarray(nu, dtype=float)
    x = (nu - 1).reshape(-1)
    alpha, beta = tuple(map(float, alpha)), tuple(map(float, beta))
    grid_u, alphas, density, cumulative = _alpha_table(alpha, beta)
    # between the two nearest rows of the table, the mixture of their conditionals weighted
    # by nearness: each draw takes the lower row with the weight of its distance to the upper
    position = np.clip((np.log(x) - grid_u[0]) / GRID_STEP, 0, len(grid_u) - 1 - 1e-9)
    row = position.astype(int)
    row = row + (rng.uniform(size=len(x)) < position - row)
    target = rng.uniform(size=len(x))
    cell = np.clip((cumulative[row, 1:] < target[:, None]).sum(axis=1), 0, ALPHA_GRID - 2)
    left, right = density[row, cell], density[row, cell + 1]
    rest = target - cumulative[row, cell]
    width = alphas[1] - alphas[0]
    # the density is linear within the cell: solve left t + (right - left) t^2 / (2 width) = rest
    slope = (right - left) / width
    with np.errstate(divide="ignore", invalid="ignore"):
        offset = np.where(np.abs(slope) > 1e-12 * np.maximum(left, 1e-300),
                          (np.sqrt(np.maximum(left ** 2 + 2 * slope * rest, 0)) - left) / slope,
                          rest / np.maximum(left, 1e-300))
    drawn_alpha = alphas[cell] + np.clip(offset, 0, width)

    # beta x ~ Gamma(alpha + 1, 1) truncated to (beta_low x, beta_high x)
    drawn_beta = truncated_gamma(drawn_alpha + 1, beta[0] * x, beta[1] * x,
                                 rng.uniform(size=len(x))) / x
    drawn_beta = np.clip(drawn_beta, *beta)
    return drawn_alpha.reshape(nu.shape), drawn_beta.reshape(nu.shape)


# Priors of nu the authors' code also offers, in closed form on u = log(nu - 1): the
# log density (constants dropped) and its derivative, with x = nu - 1 = exp(u).
# Kruschke (2013): nu - 1 ~ Exponential(rate 1/29), mean 30. Juarez & Steel (2010):
# nu ~ Gamma(2, rate 0.1), here restricted to nu > 1 like every prior of the program.
_CLOSED_FORMS = {
    "kruschke": (1 / 29, lambda u, x: (u - x / 29, 1 - x / 29)),
    "juarez_steel": (0.1, lambda u, x: (u + np.log1p(x) - 0.1 * x, 1 + x / (1 + x) - 0.1 * x)),
}
NU_PRIORS = ("gamma", *_CLOSED_FORMS)


def stan_data_for(nu: str, alpha=(0.5, 5.0), beta=(0.05, 0.15)) -> dict:
    """The table of the prior of ``log(nu - 1)`` named ``nu`` (one of :data:`NU_PRIORS`):
    "gamma" is the paper's (``nu - 1 ~ Gamma(alpha, beta)``, uniform alpha and beta)."""
    if nu == "gamma":
        return stan_data(alpha, beta)
    if nu not in _CLOSED_FORMS:
        raise ValueError(f"unknown prior of nu {nu!r}; choose from {NU_PRIORS}")
    rate, form = _CLOSED_FORMS[nu]
    # the same grid as the paper's prior, up to where the exponential tail is e^-600
    size = int(np.ceil((np.log(600 / rate) - GRID_START) / GRID_STEP)) + 1
    u = GRID_START + GRID_STEP * np.arange(size)
    value, slope = form(u, np.exp(u))
    return dict(nu_prior_start=GRID_START, nu_prior_step=GRID_STEP, nu_prior_size=size,
                nu_prior_log_density=(value - value.max()).tolist(),
                nu_prior_slope=slope.tolist())
