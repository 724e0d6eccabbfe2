"""The compound-symmetric likelihood of one dataset's differences, and a truncated Gamma.

The n differences of dataset i are ``N(delta_i 1, sigma_i^2 ((1 - rho_i) I + rho_i 11'))``.
The covariance has eigenvalue ``1 + (n - 1) rho`` on the direction of 1, which carries the
mean m, and ``1 - rho`` on the n - 1 contrasts, which carry the sum of squared deviations
S, so the density depends on the data only through (n, rho, m, S).
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
