"""Classical t-tests on the scores of repeated train/test splits: the resampled and k-fold
paired t-tests (Dietterich 1998), the 5x2cv paired t-test and the combined 5x2cv F-test
(Alpaydin 1999). The plain paired t-tests reject too often because the training sets
overlap; :func:`bayescomp.correlated_ttest` corrects for that. The tests on one test set are
in :mod:`~bayescomp.baselines.one_test_set`.

References
----------
T. G. Dietterich (1998). Approximate statistical tests for comparing supervised
classification learning algorithms. Neural Computation 10(7):1895-1923.

E. Alpaydin (1999). Combined 5 x 2 cv F test for comparing supervised classification
learning algorithms. Neural Computation 11(8):1885-1892.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from bayescomp.baselines.across_datasets import paired_ttest
from bayescomp.baselines.classical_result import (ClassicalTestResult, _check_alternative,
                                                  check_alpha, conclusion_line, statistic_text)


# --------------------------------------------------------------------------- cross-validation

def _differences(x, y, what) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if y is not None:
        y = np.asarray(y, dtype=float)
        if x.shape != y.shape:
            raise ValueError(f"the two score arrays have shapes {x.shape} and {y.shape}")
        x = x - y
    bad = ~np.isfinite(x)
    if bad.any():
        raise ValueError(f"{bad.sum()} NaN or infinite {what}")
    return x


def _split_ttest(name, x, y, alternative, alpha, first, second) -> ClassicalTestResult:
    d = _differences(x, y, "score difference(s)")
    if d.ndim != 1 or d.size < 2:
        raise ValueError(f"the {name} needs a 1-D array of at least 2 per-split differences, "
                         f"got shape {d.shape}")
    _check_alternative(alternative)
    alpha = check_alpha(alpha)
    res = paired_ttest(d, first=first, second=second)
    p = {"two-sided": res.p_value, "greater": res.p_greater, "less": res.p_less}[alternative]
    label = f"t = {statistic_text(res.statistic)}, df = {d.size - 1}"
    return ClassicalTestResult(
        name, (first, second), "t", res.statistic, p, d.size, "splits", df=d.size - 1,
        alternative=alternative, alpha=alpha,
        conclusion=conclusion_line(alpha, p, f"mean scores of {first} and {second}", label,
                                   alternative, "mean score", (first, second)),
        details=(("mean difference", float(d.mean())),
                 ("std of differences", float(d.std(ddof=1)))), notes=res.notes)


def resampled_paired_ttest(x, y=None, *, alternative="two-sided", alpha: float = 0.05,
                           first: str = "first", second: str = "second") -> ClassicalTestResult:
    """Resampled paired t-test over repeated random train/test splits (Dietterich 1998).

    With ``p_i`` the score difference ``first - second`` on split i of n::

        t = mean(p) sqrt(n) / std(p)      (std with n - 1), df = n - 1

    This is the ordinary one-sample t-test of the differences
    (:func:`bayescomp.paired_ttest`); Dietterich (1998) showed that its type I error is
    far above the nominal level, because the training (and test) sets of the splits
    overlap. :func:`bayescomp.correlated_ttest` reports the corrected version of Nadeau
    and Bengio (2003).

    Parameters
    ----------
    x : array-like, shape (n_splits,)
        Scores of ``first`` per split, or, if ``y`` is None, the differences
        ``first - second``.
    y : array-like, shape (n_splits,), optional
        Scores of ``second`` on the same splits.
    alternative : {"two-sided", "greater", "less"}
        "greater": ``first`` scores higher.
    alpha : float
    first, second : str

    Returns
    -------
    ClassicalTestResult
        ``statistic`` is t with ``df = n_splits - 1``.
    """
    return _split_ttest("Resampled paired t-test", x, y, alternative, alpha, first, second)


def kfold_paired_ttest(x, y=None, *, alternative="two-sided", alpha: float = 0.05,
                       first: str = "first", second: str = "second") -> ClassicalTestResult:
    """k-fold cross-validated paired t-test (Dietterich 1998).

    The statistic of :func:`resampled_paired_ttest` on the k per-fold differences, with
    k - 1 degrees of freedom. The training sets of two folds share (k - 2)/(k - 1) of
    their examples, so the test is too liberal (Dietterich 1998).

    Parameters
    ----------
    x : array-like, shape (k,)
        Scores of ``first`` per fold, or the differences ``first - second`` if ``y`` is None.
    y : array-like, shape (k,), optional
        Scores of ``second`` on the same folds.
    alternative, alpha, first, second
        As in :func:`resampled_paired_ttest`.

    Returns
    -------
    ClassicalTestResult
    """
    return _split_ttest("k-fold cross-validated paired t-test", x, y, alternative, alpha,
                        first, second)


def _five_by_two(x, y) -> np.ndarray:
    d = _differences(x, y, "score difference(s)")
    if d.ndim != 2 or d.shape[1] != 2 or d.shape[0] < 1:
        raise ValueError("5x2cv differences must have shape (5, 2): rows are the 5 "
                         "replications, columns the 2 folds of each; got shape "
                         f"{d.shape}" + (" (use .reshape(5, 2))" if d.size == 10 else ""))
    return d


def _ratio(numerator, denominator, what):
    """numerator / denominator, with 0/0 -> NaN and x/0 -> +-inf, and a note for either."""
    if denominator > 0:
        return numerator / denominator, ()
    if numerator == 0:
        return np.nan, (f"{what}: 0/0, nothing to test, p-value reported as 1",)
    return np.copysign(np.inf, numerator), (f"{what}: the variance estimate is 0",)


def paired_ttest_5x2cv(x, y=None, *, alternative="two-sided", alpha: float = 0.05,
                       first: str = "first", second: str = "second") -> ClassicalTestResult:
    """Dietterich's (1998) 5x2cv paired t-test.

    Five replications of 2-fold cross-validation give differences ``p_i^(j)`` (replication
    i, fold j). With ``s_i^2 = (p_i^(1) - pbar_i)^2 + (p_i^(2) - pbar_i)^2``::

        t = p_1^(1) / sqrt((1/5) sum_i s_i^2),   df = 5

    Parameters
    ----------
    x : array-like, shape (5, 2)
        Scores of ``first`` (rows: replications, columns: folds), or the differences
        ``first - second`` if ``y`` is None. Another number r of replications is accepted
        (df = r), but 5 is the design that Dietterich studied.
    y : array-like, shape (5, 2), optional
        Scores of ``second`` on the same splits.
    alternative : {"two-sided", "greater", "less"}
    alpha : float
    first, second : str

    Returns
    -------
    ClassicalTestResult
        ``statistic`` is t with ``df = 5``; the details hold the s_i^2.

    Notes
    -----
    If every s_i^2 is 0, t is infinite (p = 0), or NaN (p = 1) when p_1^(1) = 0 too.
    """
    d = _five_by_two(x, y)
    _check_alternative(alternative)
    alpha = check_alpha(alpha)
    r = d.shape[0]
    variances = np.sum((d - d.mean(axis=1, keepdims=True)) ** 2, axis=1)
    t, notes = _ratio(d[0, 0], np.sqrt(variances.mean()), "t")
    if np.isnan(t):
        p = 1.0
    else:
        p = {"two-sided": 2 * stats.t.sf(abs(t), r), "greater": stats.t.sf(t, r),
             "less": stats.t.cdf(t, r)}[alternative]
    label = f"5x2cv paired t = {statistic_text(t)}, df = {r}"
    return ClassicalTestResult(
        "5x2cv paired t-test", (first, second), "t", float(t), float(p), 2 * r, "splits", df=r,
        alternative=alternative, alpha=alpha,
        conclusion=conclusion_line(alpha, p, f"mean scores of {first} and {second}", label,
                                   alternative, "mean score", (first, second)),
        details=(("p_1^(1)", float(d[0, 0])), ("s_i^2", tuple(variances))), notes=notes)


def combined_ftest_5x2cv(x, y=None, *, alpha: float = 0.05, first: str = "first",
                         second: str = "second") -> ClassicalTestResult:
    """Alpaydin's (1999) combined 5x2cv F-test.

    With the differences ``p_i^(j)`` and variances ``s_i^2`` of :func:`paired_ttest_5x2cv`::

        F = sum_i sum_j (p_i^(j))^2 / (2 sum_i s_i^2),   df = (10, 5)

    It uses all ten differences rather than one, and is more robust than the 5x2cv t-test.

    Parameters
    ----------
    x : array-like, shape (5, 2)
        Scores of ``first`` (rows: replications, columns: folds), or the differences
        ``first - second`` if ``y`` is None. With r replications the df are (2r, r).
    y : array-like, shape (5, 2), optional
        Scores of ``second`` on the same splits.
    alpha : float
    first, second : str

    Returns
    -------
    ClassicalTestResult
        ``statistic`` is F with ``df = (10, 5)``.
    """
    d = _five_by_two(x, y)
    alpha = check_alpha(alpha)
    r = d.shape[0]
    variances = np.sum((d - d.mean(axis=1, keepdims=True)) ** 2, axis=1)
    f, notes = _ratio(np.sum(d ** 2), 2 * variances.sum(), "F")
    p = 1.0 if np.isnan(f) else float(stats.f.sf(f, 2 * r, r))
    label = f"5x2cv F = {statistic_text(f)}, df = ({2 * r}, {r})"
    return ClassicalTestResult(
        "Combined 5x2cv F-test", (first, second), "F", float(f), p, 2 * r, "splits",
        df=(2 * r, r), alpha=alpha,
        conclusion=conclusion_line(alpha, p, f"mean scores of {first} and {second}", label),
        details=(("sum of squared differences", float(np.sum(d ** 2))),
                 ("s_i^2", tuple(variances))), notes=notes)
