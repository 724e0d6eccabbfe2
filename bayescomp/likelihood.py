"""The compound-symmetric likelihood of one dataset's differences, and sigma_i in and out of it.

The n differences of dataset i are ``N(delta_i 1, sigma_i^2 ((1 - rho_i) I + rho_i 11'))``.
The covariance has eigenvalue ``1 + (n - 1) rho`` on the direction of 1, which carries the
mean m, and ``1 - rho`` on the n - 1 contrasts, which carry the sum of squared deviations
S, so the density depends on the data only through (n, rho, m, S).

With ``sigma_i ~ U(L, U)``, ``sigma_i`` integrates out of the likelihood in closed form
(see ``stan/hierarchical.stan``): the sampler then never sees it, and :func:`draw_sigma`
draws it afterwards from its exact conditional given ``delta_i``, so the joint posterior
of (delta, sigma) is the model's. :func:`sigma_sampled` says where the closed form would
lose its floating-point precision, so that sigma_i stays a parameter there.
"""
from __future__ import annotations

import numpy as np
from scipy import special


def _contrast_and_mean_terms(mean, ss, n, rho, delta):
    """``S / (1 - rho)`` and ``n (m - delta)^2 / (1 + (n - 1) rho)``, the two quadratic parts."""
    return ss / (1 - rho), n * (mean - delta) ** 2 / (1 + (n - 1) * rho)


def compound_symmetric_logpdf(mean, ss, n, rho, delta, sigma):
    """Log density of a dataset's differences from its sufficient statistics.

    Parameters
    ----------
    mean, ss : array_like
        Mean of the n differences and sum of their squared deviations from it.
    n, rho : array_like
        Number of differences and their correlation, ``0 <= rho < 1``.
    delta, sigma : array_like
        Mean and standard deviation of one difference. All arguments broadcast.

    Returns
    -------
    ndarray
        ``log N(x | delta 1, sigma^2 ((1 - rho) I + rho 11'))``, equal to
        ``scipy.stats.multivariate_normal.logpdf`` of the differences themselves.
    """
    mean, ss, n, rho, delta, sigma = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (mean, ss, n, rho, delta, sigma)))
    contrasts, mean_term = _contrast_and_mean_terms(mean, ss, n, rho, delta)
    log_det = (n - 1) * np.log1p(-rho) + np.log1p((n - 1) * rho)
    return (-0.5 * n * np.log(2 * np.pi) - n * np.log(sigma) - 0.5 * log_det
            - (contrasts + mean_term) / (2 * sigma ** 2))


def sigma_sampled(n, ss, rho, sigma_lower) -> np.ndarray:
    """Where sigma_i must stay a parameter of the sampler rather than be integrated out.

    The integrated likelihood needs n >= 3 (a Student-t with n - 2 degrees of freedom) and
    S > 0, and its truncation term ``Q(a, A / 2U^2) - Q(a, A / 2L^2)`` cancels badly when
    the floor L is near the data's own spread, i.e. when ``Q(a, S / (2 (1 - rho) L^2))``,
    the largest the second term can be, is not small.
    """
    n, ss, rho, sigma_lower = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (n, ss, rho, sigma_lower)))
    keep = (n < 3) | (ss <= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        floor_share = special.gammaincc((n - 1) / 2, ss / (1 - rho) / (2 * sigma_lower ** 2))
    return keep | ~(floor_share <= 0.5)


def truncated_gamma(shape, low, high, uniform) -> np.ndarray:
    """Gamma(shape, 1) truncated to (low, high), by inverting its distribution function at
    ``uniform`` (in (0, 1)): through the lower tail P where the interval lies below the
    median, through the upper tail Q elsewhere, whichever keeps its precision."""
    p_low, p_high = special.gammainc(shape, low), special.gammainc(shape, high)
    q_low, q_high = special.gammaincc(shape, low), special.gammaincc(shape, high)
    with np.errstate(divide="ignore", invalid="ignore"):
        from_p = special.gammaincinv(shape, p_low + uniform * (p_high - p_low))
        from_q = special.gammainccinv(shape, q_low - uniform * (q_low - q_high))
    return np.where(p_high < 0.5, from_p, from_q)


def draw_sigma(delta, mean, ss, n, rho, sigma_lower, sigma_upper, rng) -> np.ndarray:
    """Draws of sigma_i from its conditional posterior given delta_i (the integrated model).

    ``p(sigma | delta, x) ∝ sigma^-n exp(-A / (2 sigma^2))`` on ``(L, U)``, so
    ``t = A / (2 sigma^2)`` is Gamma((n - 1) / 2, 1) truncated to ``(A / 2U^2, A / 2L^2)``.
    t is drawn from the untruncated Gamma and kept when inside the bounds (nearly always);
    the rest are drawn by inverting the truncated distribution function, which is exact but
    costs a thousand times more. Arguments broadcast against ``delta`` (e.g. draws x
    datasets); ``rng`` is a numpy Generator.
    """
    delta = np.asarray(delta, dtype=float)
    mean, ss, n, rho, sigma_lower = (np.broadcast_to(np.asarray(v, dtype=float), delta.shape)
                                     for v in (mean, ss, n, rho, sigma_lower))
    contrasts, mean_term = _contrast_and_mean_terms(mean, ss, n, rho, delta)
    quad = contrasts + mean_term
    shape = (n - 1) / 2
    t_low, t_high = quad / (2 * sigma_upper ** 2), quad / (2 * sigma_lower ** 2)
    t = rng.standard_gamma(shape)
    outside = (t <= t_low) | (t >= t_high)
    if outside.any():
        t[outside] = truncated_gamma(shape[outside], t_low[outside], t_high[outside],
                                     rng.uniform(size=int(outside.sum())))
    # the clip only undoes rounding of the inversion at the bounds
    return np.clip(np.sqrt(quad / (2 * t)), sigma_lower, sigma_upper)
