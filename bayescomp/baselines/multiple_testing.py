"""Corrections of p-values for multiple comparisons: Holm's step-down and Bonferroni.

One function, :func:`adjust_p_values`, serves every family of tests in the package: the
Wilcoxon post-hoc tests of :func:`~bayescomp.baselines.friedman.friedman_test` and the
frequentist column of :func:`bayescomp.compare_all`.

References
----------
S. Holm (1979). A simple sequentially rejective multiple test procedure. Scandinavian
Journal of Statistics 6(2):65-70.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from bayescomp.annotations import ArrayLike

__all__ = ["CORRECTIONS", "adjust_p_values"]

#: The corrections :func:`adjust_p_values` knows; None leaves the p-values as they are.
CORRECTIONS = ("holm", "bonferroni", None)


def adjust_p_values(p_values: ArrayLike, method: str | None = "holm") -> np.ndarray:
    """P-values adjusted for multiple comparisons (family-wise error rate).

    Parameters
    ----------
    p_values : array-like
        One p-value per hypothesis, in [0, 1]; NaN entries (a test that was not run) stay
        NaN and are not counted in the family.
    method : {"holm", "bonferroni", None}
        Bonferroni: ``min(1, m p)``. Holm's (1979) step-down: with the m p-values sorted
        ascending, ``p_(1) <= ... <= p_(m)``, the i-th becomes
        ``min(1, max_{j <= i} (m - j + 1) p_(j))``. None returns them unchanged.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values in the order given (a new array, flattened to 1-D); reject a
        hypothesis at level alpha where its adjusted p-value is at most alpha.

    Raises
    ------
    ValueError
        For an unknown ``method`` or a p-value outside [0, 1].

    Examples
    --------
    >>> adjust_p_values([0.01, 0.04, 0.03, 0.2], "holm").tolist()
    [0.04, 0.09, 0.09, 0.2]
    """
    if method not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {method!r}")
    p = np.array(p_values, dtype=float).ravel()
    valid = ~np.isnan(p)
    q, m = p[valid], int(valid.sum())
    if np.any(~np.isfinite(q) | (q < 0) | (q > 1)):
        raise ValueError("p-values must be numbers in [0, 1] (or NaN for a test not run)")
    if method == "bonferroni":
        p[valid] = np.minimum(1.0, m * q)
    elif method == "holm":
        order = np.argsort(q, kind="stable")
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * q[order]))
        p[valid] = adjusted
    return p
