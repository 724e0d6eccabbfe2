"""Classical tests on one test set, from which examples each classifier gets right:
McNemar (from counts or correctness vectors), Cochran's Q, Looney's F and the z-test of two
accuracies. The t-tests on repeated splits are in :mod:`~bayescomp.baselines.resampled_ttests`.

References
----------
Q. McNemar (1947). Note on the sampling error of the difference between correlated
proportions or percentages. Psychometrika 12(2):153-157.

A. L. Edwards (1948). Note on the "correction for continuity" in testing the significance
of the difference between correlated proportions. Psychometrika 13(3):185-187.

W. G. Cochran (1950). The comparison of percentages in matched samples. Biometrika
37(3/4):256-266.

S. W. Looney (1988). A statistical technique for comparing the accuracies of several
classifiers. Pattern Recognition Letters 8(1):5-9.

T. G. Dietterich (1998). Approximate statistical tests for comparing supervised
classification learning algorithms. Neural Computation 10(7):1895-1923.

L. I. Kuncheva (2004). Combining Pattern Classifiers. Wiley, chapter 2.

S. Raschka (2018). Model evaluation, model selection, and algorithm selection in machine
learning. arXiv:1811.12808, section 4.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
from scipy import stats

from bayescomp.arguments import check_count
from bayescomp.formatting import names_text
from bayescomp.baselines.classical_result import (ClassicalTestResult, _check_alternative,
                                                  check_alpha, conclusion_line,
                                                  default_names, statistic_text)


def _check_correct(correct, algorithms) -> tuple[np.ndarray, tuple]:
    """An (n, k) 0/1 matrix (bool, 0/1 numbers or a DataFrame whose columns name the models)."""
    if algorithms is None and isinstance(correct, pd.DataFrame):
        algorithms = [str(c) for c in correct.columns]
    x = np.asarray(correct)
    if x.ndim != 2 or x.shape[1] < 2 or x.shape[0] < 1:
        raise ValueError("correct must be a 2-D array with one row per test example and one "
                         f"column per classifier (at least 2), got shape {x.shape}")
    if x.dtype != bool:
        try:
            numeric = x.astype(float)
        except (TypeError, ValueError):
            raise ValueError("correct must hold booleans or 0/1") from None
        if not np.all((numeric == 0) | (numeric == 1)):
            raise ValueError("correct must hold booleans or 0/1 (1 = the classifier is right "
                             "on the example)")
        x = numeric.astype(bool)
    names = default_names(x.shape[1]) if algorithms is None else tuple(str(a) for a in algorithms)
    if len(names) != x.shape[1]:
        raise ValueError(f"{len(names)} algorithm names for {x.shape[1]} columns")
    return x, names


def correctness(y_true, *predictions) -> np.ndarray:
    """The (n_examples x k) boolean matrix ``predictions[j][i] == y_true[i]``.

    Parameters
    ----------
    y_true : array-like, shape (n,)
        True labels of the test examples.
    *predictions : array-like, shape (n,)
        Predicted labels of each classifier, in the same order as ``y_true``.

    Returns
    -------
    numpy.ndarray of bool, shape (n, k)
    """
    y_true = np.asarray(y_true)
    if y_true.ndim != 1:
        raise ValueError(f"y_true must be 1-D, got shape {y_true.shape}")
    if not predictions:
        raise ValueError("give the predictions of at least one classifier")
    columns = []
    for j, prediction in enumerate(predictions):
        prediction = np.asarray(prediction)
        if prediction.shape != y_true.shape:
            raise ValueError(f"predictions {j} have shape {prediction.shape}; y_true has "
                             f"{y_true.shape}")
        columns.append(prediction == y_true)
    return np.column_stack(columns)


# --------------------------------------------------------------------------- McNemar

def mcnemar_table(first_correct, second_correct) -> np.ndarray:
    """2x2 table ``[[both right, only first right], [only second right, both wrong]]``.

    ``table[0, 1]`` is McNemar's b and ``table[1, 0]`` his c.
    """
    first_correct = np.asarray(first_correct).ravel()
    second_correct = np.asarray(second_correct).ravel()
    if first_correct.size != second_correct.size:
        raise ValueError(f"the correctness vectors have {first_correct.size} and "
                         f"{second_correct.size} examples; they must be paired")
    x, _ = _check_correct(np.column_stack([first_correct, second_correct]), None)
    a, b = x[:, 0], x[:, 1]
    return np.array([[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]])


def mcnemar_test(b, c, *, correction: bool = True, exact: bool = False, alpha: float = 0.05,
                 first: str = "first", second: str = "second") -> ClassicalTestResult:
    """McNemar's test (1947) of equal error rates of two classifiers on one test set.

    Only the examples on which the classifiers disagree carry information: ``b``, where
    ``first`` is right and ``second`` wrong, and ``c``, the converse. Under the null
    hypothesis of equal error rates, b ~ Binomial(b + c, 1/2).

    Parameters
    ----------
    b, c : int
        The discordant counts (see :func:`mcnemar_table`).
    correction : bool
        Edwards' (1948) continuity correction: ``(|b - c| - 1)^2 / (b + c)`` instead of
        ``(b - c)^2 / (b + c)`` (the corrected numerator is 0 when b = c). Dietterich (1998)
        and Raschka (2018) use it; it is the default. Ignored when ``exact``.
    exact : bool
        Two-sided exact binomial test, ``scipy.stats.binomtest(b, b + c, 0.5)``, advised
        when b + c is small (say below 25).
    alpha : float
        Significance level of the conclusion.
    first, second : str
        Names of the classifiers.

    Returns
    -------
    ClassicalTestResult
        ``statistic`` is chi-square with 1 degree of freedom, or b itself for the exact
        test (``df`` None); ``n`` is b + c.

    Notes
    -----
    With b + c = 0 the classifiers never disagree: there is nothing to test, so the
    p-value is 1 (and the chi-square statistic NaN).

    References
    ----------
    McNemar (1947); Edwards (1948); Dietterich (1998), section 3.1.
    """
    b, c = check_count(b, "b"), check_count(c, "c")
    alpha = check_alpha(alpha)
    n = b + c
    details = (("b (only first right)", b), ("c (only second right)", c))
    notes = () if n else ("the classifiers never disagree (b + c = 0): nothing to test, "
                          "p-value reported as 1",)
    what = f"error rates of {first} and {second}"
    if exact:
        p = float(stats.binomtest(b, n, 0.5).pvalue) if n else 1.0
        label = f"McNemar exact binomial test, b = {b} of {n}"
        return ClassicalTestResult("McNemar exact test", (first, second), "b", float(b), p, n,
                                   "discordant examples", alpha=alpha,
                                   conclusion=conclusion_line(alpha, p, what, label),
                                   details=details, notes=notes)
    if n:
        numerator = max(abs(b - c) - 1, 0) ** 2 if correction else (b - c) ** 2
        chi2 = numerator / n
        p = float(stats.chi2.sf(chi2, 1))
    else:
        chi2, p = np.nan, 1.0
    name = "McNemar test" + (" (continuity-corrected)" if correction else "")
    label = f"McNemar chi2 = {statistic_text(chi2)}"
    return ClassicalTestResult(name, (first, second), "chi2", float(chi2), p, n,
                               "discordant examples", df=1, alpha=alpha,
                               conclusion=conclusion_line(alpha, p, what, label),
                               details=details, notes=notes)


def mcnemar_from_correct(first_correct, second_correct, *, correction: bool = True,
                         exact: bool = False, alpha: float = 0.05, first: str = "first",
                         second: str = "second") -> ClassicalTestResult:
    """:func:`mcnemar_test` from two boolean vectors: is each classifier right on example i.

    ``n`` of the result is then the number of test examples, and the details carry the
    full 2x2 table.
    """
    table = mcnemar_table(first_correct, second_correct)
    result = mcnemar_test(int(table[0, 1]), int(table[1, 0]), correction=correction,
                          exact=exact, alpha=alpha, first=first, second=second)
    details = result.details + (("both right", int(table[0, 0])),
                                ("both wrong", int(table[1, 1])))
    return replace(result, n=int(table.sum()), unit="test examples", details=details)


# --------------------------------------------------------------------------- k classifiers

def cochran_q_test(correct, *, algorithms=None, alpha: float = 0.05) -> ClassicalTestResult:
    """Cochran's Q test (1950) of equal accuracies of k classifiers on one test set.

    With ``G_j`` the number of examples classifier j gets right, ``L_i`` the number of
    classifiers right on example i and ``T = sum G_j``::

        Q = (k - 1) (k sum_j G_j^2 - T^2) / (k T - sum_i L_i^2)

    which is approximately chi-square with k - 1 degrees of freedom under the null
    hypothesis. For k = 2 it equals McNemar's uncorrected chi-square.

    Parameters
    ----------
    correct : array-like of bool or 0/1, shape (n_examples, k)
        ``correct[i, j]``: classifier j is right on example i (see :func:`correctness`).
        A DataFrame's columns name the classifiers.
    algorithms : sequence of str, optional
        Names of the k classifiers; default "A", "B", ...
    alpha : float
        Significance level of the conclusion.

    Returns
    -------
    ClassicalTestResult
        ``statistic`` is Q with ``df = k - 1``; the details hold the accuracies.

    Notes
    -----
    If every example is classified alike by all classifiers (all right or all wrong),
    the denominator is 0: Q is NaN and the p-value 1.

    References
    ----------
    Cochran (1950); Kuncheva (2004); Raschka (2018), section 4.
    """
    x, names = _check_correct(correct, algorithms)
    alpha = check_alpha(alpha)
    n, k = x.shape
    g, row = x.sum(axis=0).astype(float), x.sum(axis=1).astype(float)
    total = g.sum()
    denominator = k * total - np.sum(row ** 2)
    notes = ()
    if denominator > 0:
        q = (k - 1) * (k * np.sum(g ** 2) - total ** 2) / denominator
        p = float(stats.chi2.sf(q, k - 1))
    else:
        q, p = np.nan, 1.0
        notes = ("on every example the classifiers are all right or all wrong: nothing to "
                 "test, p-value reported as 1",)
    label = f"Cochran's Q = {statistic_text(q)}, df = {k - 1}"
    return ClassicalTestResult(
        "Cochran's Q test", names, "Q", float(q), p, n, "test examples", df=k - 1, alpha=alpha,
        conclusion=conclusion_line(alpha, p, f"accuracies of {names_text(names)}", label),
        details=(("accuracies", tuple(g / n)),), notes=notes)


def looney_f_test(correct, *, algorithms=None, alpha: float = 0.05) -> ClassicalTestResult:
    """Looney's (1988) F-test of equal accuracies of k classifiers on one test set.

    The 0/1 correctness matrix is analysed as a two-way layout without replication
    (classifiers x examples). With accuracies ``acc_j``, their mean ``acc`` and ``L_i``
    the number of classifiers right on example i::

        SSA  = n sum_j acc_j^2 - n k acc^2          (classifiers)
        SSB  = (1/k) sum_i L_i^2 - n k acc^2        (examples)
        SST  = n k acc (1 - acc)
        SSAB = SST - SSA - SSB                      (interaction)
        F    = [SSA / (k - 1)] / [SSAB / ((k - 1)(n - 1))]

    with (k - 1, (k - 1)(n - 1)) degrees of freedom.

    Parameters
    ----------
    correct : array-like of bool or 0/1, shape (n_examples, k)
        ``correct[i, j]``: classifier j is right on example i (see :func:`correctness`).
    algorithms : sequence of str, optional
        Names of the k classifiers; default "A", "B", ...
    alpha : float
        Significance level of the conclusion.

    Returns
    -------
    ClassicalTestResult
        ``statistic`` is F, ``df = (k - 1, (k - 1)(n - 1))``; the details hold the
        accuracies and the sums and mean squares.

    Notes
    -----
    ``mlxtend.evaluate.ftest`` computes the same F but takes ``(k - 1) n`` as the second
    degrees of freedom, which changes the p-value only slightly for large n. SSAB is
    computed here directly as the sum of squared interaction residuals, which is the
    same quantity without cancellation error. If SSAB is 0 (the classifiers' results
    are additive, e.g. one is always right and another always wrong) F is infinite when
    SSA > 0 (p = 0) and NaN when SSA = 0 too (p = 1).

    References
    ----------
    Looney (1988); Kuncheva (2004); Raschka (2018), section 4.
    """
    x, names = _check_correct(correct, algorithms)
    alpha = check_alpha(alpha)
    n, k = x.shape
    if n < 2:
        raise ValueError("Looney's F-test needs at least 2 test examples")
    x = x.astype(float)
    grand, columns, rows = x.mean(), x.mean(axis=0), x.mean(axis=1)
    ssa = n * np.sum((columns - grand) ** 2)
    ssb = k * np.sum((rows - grand) ** 2)
    sst = np.sum((x - grand) ** 2)
    ssab = np.sum((x - rows[:, None] - columns[None, :] + grand) ** 2)
    df1, df2 = k - 1, (k - 1) * (n - 1)
    msa, msab = ssa / df1, ssab / df2
    tiny = 1e-12 * max(sst, 1.0)
    notes = ()
    if ssab > tiny:
        f = msa / msab
        p = float(stats.f.sf(f, df1, df2))
    elif ssa > tiny:
        f, p = np.inf, 0.0
        notes = ("no classifier-by-example interaction (SSAB = 0): F is infinite",)
    else:
        f, p = np.nan, 1.0
        notes = ("SSA = SSAB = 0: nothing to test, p-value reported as 1",)
    label = f"Looney's F = {statistic_text(f)}, df = ({df1}, {df2})"
    details = (("accuracies", tuple(columns)), ("SSA", ssa), ("SSB", ssb), ("SSAB", ssab),
               ("SST", sst), ("MSA", msa), ("MSAB", msab))
    return ClassicalTestResult(
        "Looney's F-test", names, "F", float(f), p, n, "test examples", df=(df1, df2),
        alpha=alpha,
        conclusion=conclusion_line(alpha, p, f"accuracies of {names_text(names)}", label),
        details=details, notes=notes)


def two_proportion_test(accuracy_1, accuracy_2, n, n_2=None, *, alternative="two-sided",
                        alpha: float = 0.05, first: str = "first",
                        second: str = "second") -> ClassicalTestResult:
    """z-test of the difference of two accuracies, with the pooled proportion.

    With ``p = (n acc_1 + n_2 acc_2) / (n + n_2)``::

        z = (acc_1 - acc_2) / sqrt(p (1 - p) (1/n + 1/n_2))

    which for equal test sizes is ``(acc_1 - acc_2) / sqrt(2 p (1 - p) / n)`` (Raschka
    2018, section 4), approximately standard normal under the null hypothesis.

    Parameters
    ----------
    accuracy_1, accuracy_2 : float
        Accuracies (fractions in [0, 1]) of the two classifiers.
    n : int
        Size of the test set of the first (and, by default, of the second) classifier.
    n_2 : int, optional
        Size of the second test set, if different.
    alternative : {"two-sided", "greater", "less"}
        "greater": the first classifier is more accurate.
    alpha : float
        Significance level of the conclusion.
    first, second : str
        Names of the classifiers.

    Returns
    -------
    ClassicalTestResult
        ``statistic`` is z (``df`` None).

    Notes
    -----
    The test treats the two accuracies as independent. When both classifiers are
    evaluated on the same test set they are not (they share the hard examples), and
    McNemar's test (:func:`mcnemar_test`) is the appropriate one (Dietterich 1998).
    If the pooled proportion is 0 or 1 (both classifiers always wrong, or always right),
    z is NaN and the p-value 1.
    """
    acc = np.array([accuracy_1, accuracy_2], dtype=float)
    if not np.all((acc >= 0) & (acc <= 1)):
        raise ValueError(f"accuracies must be fractions in [0, 1], got {acc.tolist()}")
    n1 = check_count(n, "n")
    n2 = n1 if n_2 is None else check_count(n_2, "n_2")
    if n1 == 0 or n2 == 0:
        raise ValueError("the test sets must not be empty")
    _check_alternative(alternative)
    alpha = check_alpha(alpha)
    pooled = (n1 * acc[0] + n2 * acc[1]) / (n1 + n2)
    se = np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    notes = ()
    if se > 0:
        z = (acc[0] - acc[1]) / se
        p = {"two-sided": 2 * stats.norm.sf(abs(z)), "greater": stats.norm.sf(z),
             "less": stats.norm.cdf(z)}[alternative]
    else:
        z, p = np.nan, 1.0
        notes = ("the pooled accuracy is 0 or 1: nothing to test, p-value reported as 1",)
    label = f"z = {statistic_text(z)}"
    unit = "test examples each" if n1 == n2 else f"test examples ({n1} + {n2})"
    return ClassicalTestResult(
        "Two-proportion z-test", (first, second), "z", float(z), float(p),
        n1 if n1 == n2 else n1 + n2, unit, alternative=alternative, alpha=alpha,
        conclusion=conclusion_line(alpha, p, f"accuracies of {first} and {second}", label,
                                   alternative, "accuracy", (first, second)),
        details=(("accuracies", tuple(acc)), ("pooled accuracy", pooled)), notes=notes)

