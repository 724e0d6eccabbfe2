"""The log density of ``stan/hierarchical.stan`` in numpy, at any points of its unconstrained
scale.

Stan records the log density only at its draws (``lp__``). Weighing the modes of a posterior
by bridge sampling (:mod:`bayescomp.models.mode_mass`) needs it at points drawn from an
approximation too. Both engines can evaluate it (CmdStan's ``log_prob`` method, pystan's
``log_prob``), one process or one HTTP request per batch or point; this is the program's
model block line by line, vectorised over points, and agrees with ``lp__`` at every draw to
the rounding of the draws (``tests/test_mode_mass.py``). Device numbers are the program's.
"""
from __future__ import annotations

import numpy as np
from scipy import special, stats


def log_gamma_moments(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and sd of log(lambda), lambda ~ Gamma(a, a), and the constant a log(a) - a -
    lgamma(a) of its log density (device 6: Stirling's series above 10, as the program)."""
    a = np.asarray(a, dtype=float)
    inv = 1 / a
    inv2 = inv ** 2
    series = a > 10
    mean = np.where(series, -inv * (0.5 + inv * (1 / 12 - inv2 * (1 / 120 - inv2 / 252))),
                    special.digamma(a) - np.log(a))
    constant = np.where(series, 0.5 * np.log(a) - 0.5 * np.log(2 * np.pi)
                        - inv * (1 / 12 - inv2 * (1 / 360 - inv2 / 1260)),
                        a * np.log(a) - a - special.gammaln(a))
    return mean, np.sqrt(stan_trigamma(a)), constant


def stan_trigamma(a: np.ndarray) -> np.ndarray:
    """Stan's ``trigamma`` for a > 0 (Stan Math's algorithm: 1/a^2 below 1e-4, else the
    recurrence up to 5 and the asymptotic series to the Bernoulli number B8), not scipy's:
    at 5 the series is off by about 1e-9, and so are the program's z-score scales; the same
    function makes the log density Stan's to rounding rather than to 1e-8."""
    a = np.asarray(a, dtype=float)
    z, value = a.copy(), np.zeros_like(a)
    below = z < 5.0
    while np.any(below):
        value = value + np.where(below, 1 / np.where(below, z, 1.0) ** 2, 0.0)
        z = np.where(below, z + 1.0, z)
        below = z < 5.0
    y = 1 / z ** 2
    value = value + 0.5 * y + (1 + y * (1 / 6 + y * (-1 / 30 + y * (1 / 42 - y / 30)))) / z
    return np.where(a <= 1e-4, 1 / a ** 2, value)


def tabulated(u: np.ndarray, start: float, step: float, value, slope) -> np.ndarray:
    """The program's ``tabulated``: cubic Hermite interpolation of a function given with its
    derivative on a uniform grid, linear beyond it (device 8)."""
    value, slope = np.asarray(value, dtype=float), np.asarray(slope, dtype=float)
    u = np.asarray(u, dtype=float)
    end = start + (value.size - 1) * step
    low = np.clip(np.floor((u - start) / step).astype(int), 0, value.size - 2)
    t = (u - (start + low * step)) / step
    inside = ((2 * t ** 3 - 3 * t ** 2 + 1) * value[low] + (t ** 3 - 2 * t ** 2 + t) * step * slope[low]
              + (3 * t ** 2 - 2 * t ** 3) * value[low + 1]
              + (t ** 3 - t ** 2) * step * slope[low + 1])
    return np.where(u <= start, value[0] + slope[0] * (u - start),
                    np.where(u >= end, value[-1] + slope[-1] * (u - end), inside))


def within(u: np.ndarray, lower, upper) -> np.ndarray:
    """Stan's lower-upper bound transform of ``u``."""
    width = np.asarray(upper, dtype=float) - np.asarray(lower, dtype=float)
    return lower + width * special.expit(u)


def bounded(u: np.ndarray, lower, upper) -> tuple[np.ndarray, np.ndarray]:
    """Stan's lower-upper bound transform of ``u`` (:func:`within`) and the log of its
    Jacobian."""
    width = np.asarray(upper, dtype=float) - np.asarray(lower, dtype=float)
    return (within(u, lower, upper),
            np.log(width) - np.logaddexp(0, u) - np.logaddexp(0, -u))


def unbounded(value, lower, upper) -> np.ndarray:
    """The inverse of :func:`bounded`: the log-odds of ``value``'s place in (lower, upper)."""
    share = (value - lower) / (upper - lower)
    # a draw next to a bound can equal it in double precision
    share = np.clip(share, 1e-12, 1 - 1e-12)
    return np.log(share) - np.log1p(-share)


def data_terms(data: dict) -> dict:
    """The program's data as float arrays (``mean_diff``, ``ss``, ``n_scores``, ``rho``,
    ``sigma_lower``) and what its transformed data derive from them, by the program's names:
    ``exponent`` n_i - 1, ``mean_share`` v_i, ``contrasts`` S_i = ss_i / (1 - rho_i) (the
    program's ss_contrasts), the data's ``mean_centre``
    (:func:`bayescomp.models.hierarchical_program.mean_centre`), the means' ``deviation``
    from it and its square ``offset2``, and ``se2``, the squared standard errors of the
    means (the fold variance held at least at the floor)."""
    terms = {k: np.asarray(data[k], dtype=float)
             for k in ("mean_diff", "ss", "n_scores", "rho", "sigma_lower")}
    terms["exponent"] = terms["n_scores"] - 1
    terms["mean_share"] = terms["rho"] + (1 - terms["rho"]) / terms["n_scores"]
    terms["contrasts"] = terms["ss"] / (1 - terms["rho"])
    terms["mean_centre"] = float(data["mean_centre"])
    terms["deviation"] = terms["mean_diff"] - terms["mean_centre"]
    terms["offset2"] = terms["deviation"] ** 2
    terms["se2"] = squared_standard_errors(terms["ss"], terms["n_scores"], terms["rho"],
                                           terms["sigma_lower"])
    return terms


def squared_standard_errors(ss, n_scores, rho, floor) -> np.ndarray:
    """se_i^2, the squared standard error of each dataset's mean: the fold variance
    ss_i / ((n_i - 1) (1 - rho_i)), held at least at the resolution floor's square (identical
    scores still carry the rounding of one step), times v_i = rho_i + (1 - rho_i) / n_i;
    rounded as the program's transformed data rounds it."""
    ss, n_scores, rho = (np.asarray(v, dtype=float) for v in (ss, n_scores, rho))
    return (np.maximum(ss / ((n_scores - 1) * (1 - rho)), np.asarray(floor, dtype=float) ** 2)
            * (rho + (1 - rho) / n_scores))


def sigma_coordinates(data: dict) -> tuple[np.ndarray, np.ndarray]:
    """The offset and scale of u_i, the log-odds of sigma_i in (floor_i, sigma_bar) that the
    program samples (device 10): u_i at the mode that ss_i alone gives sigma_i (at most
    halfway up the interval), and the approximate posterior sd there."""
    terms = data_terms(data)
    exponent, lower, upper = terms["exponent"], terms["sigma_lower"], data["sigma_upper"]
    width = upper - lower
    spread = np.sqrt(terms["contrasts"] / exponent)
    spread_known = spread > 2 * lower
    mode = np.where(spread_known, np.minimum(spread, 0.5 * (lower + upper)), 2 * lower)
    offset = np.where(spread_known, special.logit((mode - lower) / width),
                      special.logit(lower / (exponent * width)))
    scale = np.where(spread_known, width * mode / ((mode - lower) * (upper - mode)
                                                  * np.sqrt(2 * exponent)), 1.0)
    return offset, scale


#: sigma0's coordinate is scaled by this many times the sd of log(sigma0) that the datasets'
#: information gives (:func:`sigma0_coordinates`): the posterior's sd was 1.2-1.4 times that
#: on simulated collections of 20-400 datasets, 2.2-3.2 times on the tutorial's pairs and 3-18
#: times on bbtcomp's near-identical ones, where a coordinate scaled too narrowly at the
#: start cost no more warm-up than the unit scale (benchmarks/results/warmup.md)
SIGMA0_SPREAD = 2.0


def sigma0_coordinates(data: dict, spread: float) -> dict:
    """``sigma0_offset`` and ``sigma0_scale``, the coordinate of sigma0's log-odds in (0,
    sigma0_bar) that the program samples (device 11): the log-odds of ``spread`` (an estimate
    of sigma0), and :data:`SIGMA0_SPREAD` times the sd of log(sigma0) that the means'
    information gives there, in log-odds units, at most 1.

    The information is Fisher's for log(sigma0) in m_i ~ N(delta0, sigma0^2 + se_i^2),
    2 sum w_i^2 with w_i = sigma0^2 / (sigma0^2 + se_i^2): near 2 q where the datasets'
    means spread far beyond their standard errors, near 0 where they do not (the scale is
    then 1, Stan's own)."""
    upper = float(data["sigma0_upper"])
    spread = min(max(float(spread), 1e-12 * upper), 0.5 * upper)
    se2 = squared_standard_errors(data["ss"], data["n_scores"], data["rho"],
                                  data["sigma_lower"])
    informed = spread ** 2 / (spread ** 2 + se2)
    sd = 1 / np.sqrt(2 * np.sum(informed ** 2)) / (1 - spread / upper)
    return dict(sigma0_offset=float(special.logit(spread / upper)),
                sigma0_scale=float(min(1.0, SIGMA0_SPREAD * sd)))


def sigma_given(data: dict, sigma_log_odds: np.ndarray) -> np.ndarray:
    """sigma_i from the program's u_i (``sigma_log_odds`` as drawn, (..., dataset)), its
    log-odds in (floor_i, sigma_bar) (device 10)."""
    # without bounded's log Jacobian (two logaddexp per draw and dataset: 0.15 s at 1,000
    # datasets and 4 x 1000 draws)
    return within(np.asarray(sigma_log_odds, dtype=float),
                  np.asarray(data["sigma_lower"], dtype=float), data["sigma_upper"])


def lambda_coordinates(data: dict, sigma0: np.ndarray, nu: np.ndarray):
    """The centre c_i and scale s_i of log(lambda_i) = c_i + s_i z_i (device 5) at draws of
    sigma0 and nu (...), each (..., dataset), and the constant a log(a) - a - lgamma(a) of
    log(lambda_i)'s prior density at a = nu / 2 (...)."""
    terms = data_terms(data)
    offset2, se2 = terms["offset2"], terms["se2"]
    sigma0_sq = np.asarray(sigma0, dtype=float)[..., None] ** 2
    nu = np.asarray(nu, dtype=float)[..., None]
    prior, updated = log_gamma_moments(0.5 * nu), log_gamma_moments(0.5 * nu + 0.5)
    total = sigma0_sq + se2
    informed = sigma0_sq / total                                # w_i
    scale = (updated[1] - prior[1]) * informed + prior[1]
    centre = ((updated[0] - prior[0]) * informed + prior[0]
              - np.log((informed * offset2 / total + nu) / (nu + informed)))
    return centre, scale, prior[2][..., 0]


def log_lambda_given(data: dict, sigma0: np.ndarray, nu: np.ndarray,
                     lambda_z: np.ndarray) -> np.ndarray:
    """log(lambda_i) from draws of sigma0, nu (...) and the z-scores ``lambda_z`` (...,
    dataset) (device 5)."""
    centre, scale, _ = lambda_coordinates(data, sigma0, nu)
    return centre + scale * np.asarray(lambda_z, dtype=float)


def log_density(data: dict, points: np.ndarray) -> np.ndarray:
    """The program's log density (Jacobians included, constants as Stan drops them) at
    ``points`` (..., dimension), laid out as
    :func:`bayescomp.models.hierarchical_program.unconstrained` lays out the draws."""
    points = np.asarray(points, dtype=float)
    terms = data_terms(data)
    lower, exponent, mean_share = terms["sigma_lower"], terms["exponent"], terms["mean_share"]
    deviation, offset2 = terms["deviation"], terms["offset2"]
    q = lower.size

    # sigma0 by its log-odds, offset and scaled (device 11), the constant log(sigma0_bar)
    # dropped as the program drops it
    sigma0, target = bounded(data["sigma0_offset"] + data["sigma0_scale"] * points[..., 0],
                             0.0, data["sigma0_upper"])
    target = target + np.log(data["sigma0_scale"] / data["sigma0_upper"])
    # u_i = offset_i + scale_i x, sigma_i in (floor_i, sigma_bar) by its log-odds u_i; the
    # Jacobian's constant log(sigma_bar - floor_i) dropped as the program does (device 10)
    offset, scale = sigma_coordinates(data)
    sigma, jacobian = bounded(offset + scale * points[..., 1:1 + q], lower, data["sigma_upper"])
    target = target + (jacobian - np.log(data["sigma_upper"] - lower)
                       + np.log(scale)).sum(axis=-1)
    if data["population"]:
        log_nu_minus_one = points[..., 1 + q]
        nu = 1 + np.exp(log_nu_minus_one)
        lambda_centre, lambda_scale, constant = lambda_coordinates(data, sigma0, nu)
        log_lambda = lambda_centre + lambda_scale * points[..., 2 + q:2 + 2 * q]
        target = target + tabulated(log_nu_minus_one, data["nu_prior_start"],
                                    data["nu_prior_step"], data["nu_prior_log_density"],
                                    data["nu_prior_slope"])
        target = target + (q * constant + np.log(lambda_scale).sum(axis=-1)
                           - 0.5 * nu * (np.expm1(log_lambda) - log_lambda).sum(axis=-1))
        variance = sigma ** 2 * mean_share + np.exp(2 * np.log(sigma0[..., None]) - log_lambda)
    else:
        variance = sigma ** 2 * mean_share + sigma0[..., None] ** 2
    # ss_i given sigma_i (device 1)
    target = target - (exponent * np.log(sigma)).sum(axis=-1) \
        - 0.5 * (terms["contrasts"] / sigma ** 2).sum(axis=-1)
    # the means with delta_i and delta0 integrated out (devices 3, 4)
    weight = 1 / variance
    precision = weight.sum(axis=-1)
    shift = (weight * deviation).sum(axis=-1) / precision
    centre, sd, bound = terms["mean_centre"] + shift, 1 / np.sqrt(precision), data["delta0_bound"]
    inside = _log_diff_exp(stats.norm.logcdf((bound - centre) / sd),
                           stats.norm.logcdf((-bound - centre) / sd))
    return target + (-0.5 * (np.log(variance).sum(axis=-1) + np.log(precision))
                     - 0.5 * ((weight * offset2).sum(axis=-1) - precision * shift ** 2) + inside)


def _log_diff_exp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log(exp(a) - exp(b)) for a > b."""
    return a + np.log(-np.expm1(b - a))
