"""Classical tests for comparing classifiers on one dataset.

On one test set, from which examples each classifier gets right:

* :func:`mcnemar_test` (McNemar 1947), from the two discordant counts, or
  :func:`mcnemar_from_correct` from two correctness vectors;
* :func:`cochran_q_test` (Cochran 1950) and :func:`looney_f_test` (Looney 1988) for
  k classifiers, from an (n_examples x k) correctness matrix (see :func:`correctness`);
* :func:`two_proportion_test`, the z-test of two accuracies.

On the scores of repeated train/test splits:

* :func:`resampled_paired_ttest` and :func:`kfold_paired_ttest` (Dietterich 1998): the
  plain paired t-test of the per-split differences. Both are known to reject too often
  because the training sets overlap; :func:`bayescomp.correlated_ttest` corrects for that.
* :func:`paired_ttest_5x2cv` (Dietterich 1998) and :func:`combined_ftest_5x2cv`
  (Alpaydin 1999) on five replications of 2-fold cross-validation.

Every function returns a :class:`ClassicalTestResult` with the statistic, its degrees
of freedom, the p-value and a one-line conclusion at the chosen ``alpha``. The tests
across datasets (Friedman, Nemenyi) are in :mod:`bayescomp.friedman`.

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

E. Alpaydin (1999). Combined 5 x 2 cv F test for comparing supervised classification
learning algorithms. Neural Computation 11(8):1885-1892.

L. I. Kuncheva (2004). Combining Pattern Classifiers. Wiley, chapter 2 (McNemar's test,
Cochran's Q and Looney's F-test).

S. Raschka (2018). Model evaluation, model selection, and algorithm selection in machine
learning. arXiv:1811.12808, section 4.
"""
from __future__ import annotations

import string
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import stats

from bayescomp.baselines.across_datasets import paired_ttest

__all__ = [
    "ClassicalTestResult", "correctness", "mcnemar_table", "mcnemar_test",
    "mcnemar_from_correct", "cochran_q_test", "looney_f_test", "two_proportion_test",
    "resampled_paired_ttest", "kfold_paired_ttest", "paired_ttest_5x2cv",
    "combined_ftest_5x2cv",
]

ALTERNATIVES = ("two-sided", "greater", "less")


# --------------------------------------------------------------------------- result

@dataclass(frozen=True)
class ClassicalTestResult:
    """Outcome of a classical test.

    Attributes
    ----------
    name : str
        Name of the test.
    algorithms : tuple of str
        The classifiers compared (for two, differences are ``first - second``).
    statistic_name : str
        What ``statistic`` is: "chi2", "b", "Q", "F", "z" or "t".
    statistic : float
        The test statistic (NaN when the data leave nothing to test; see ``notes``).
    p_value : float
        The p-value against ``alternative``.
    df : None, int or (int, int)
        Degrees of freedom of the reference distribution (None for the z and exact tests).
    alpha : float
        Significance level of ``conclusion``.
    n : int
        Number of observations, in ``unit`` (test examples, discordant examples, splits).
    unit : str
    conclusion : str
        One plain-language line, e.g. "At alpha=0.05 the error rates of A and B differ
        (McNemar chi2 = 8.33, p = 0.0039)".
    alternative : str
        "two-sided", or "greater" / "less" (the first algorithm better / worse).
    details : tuple of (str, object) pairs
        Intermediate quantities (counts, accuracies, sums of squares...).
    notes : tuple of str
        Remarks on degenerate data.
    """

    name: str
    algorithms: tuple
    statistic_name: str
    statistic: float
    p_value: float
    df: object
    alpha: float
    n: int
    unit: str
    conclusion: str
    alternative: str = "two-sided"
    details: tuple = ()
    notes: tuple = ()

    @property
    def significant(self) -> bool:
        """Whether ``p_value < alpha``."""
        return bool(self.p_value < self.alpha)

    def summary(self) -> str:
        lines = [f"{self.name}: {', '.join(self.algorithms)} on {self.n} {self.unit}",
                 f"  {self.statistic_name} = {self.statistic:.6g}{_df_text(self.df)}, "
                 f"{'' if self.alternative == 'two-sided' else 'one-sided '}"
                 f"p = {self.p_value:.4g}"]
        lines += [f"  {key} = {_plain(value)}" for key, value in self.details]
        lines.append(f"  {self.conclusion}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row: test, algorithms, n, statistic, df1, df2, p-value, alpha, conclusion."""
        df = self.df if isinstance(self.df, tuple) else (self.df, None)
        return pd.DataFrame([{
            "test": self.name, "algorithms": ", ".join(self.algorithms), "n": self.n,
            "unit": self.unit, "statistic_name": self.statistic_name,
            "statistic": self.statistic,
            "df1": np.nan if df[0] is None else df[0], "df2": np.nan if df[1] is None else df[1],
            "p_value": self.p_value, "alternative": self.alternative, "alpha": self.alpha,
            "significant": self.significant, "conclusion": self.conclusion,
            "details": "; ".join(f"{k}={_plain(v)}" for k, v in self.details),
            "notes": "; ".join(self.notes),
        }])


def _plain(value):
    if isinstance(value, (tuple, list, np.ndarray)):
        return "(" + ", ".join(_plain(v) for v in value) + ")"
    if isinstance(value, (float, np.floating)):
        return f"{value:.6g}"
    return str(value)


def _df_text(df) -> str:
    if df is None:
        return ""
    if isinstance(df, tuple):
        return f", df = ({df[0]:g}, {df[1]:g})"
    return f", df = {df:g}"


def format_statistic(x: float) -> str:
    """Two decimals for ordinary values, three significant digits for tiny or huge ones."""
    if not np.isfinite(x):
        return str(x)
    return f"{x:.2f}" if 0.01 <= abs(x) < 1e4 or x == 0 else f"{x:.3g}"


def format_p(p: float) -> str:
    return f"{p:.4f}" if p >= 1e-4 or p == 0 else f"{p:.2e}"


def names_text(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def conclusion_line(alpha, p_value, what, label, alternative="two-sided",
                    quantity="mean score", names=("first", "second")) -> str:
    """'At alpha=0.05 the <what> differ (<label>, p = ...)' or '... do not differ ...'.

    For a one-sided alternative: 'At alpha=0.05 the <quantity> of <first> is (not)
    significantly higher ("greater") / lower ("less") than that of <second> (...)'.
    """
    evidence = f"({label}, p = {format_p(p_value)})"
    significant = p_value < alpha
    if alternative == "two-sided":
        verdict = "differ" if significant else "do not differ significantly"
        return f"At alpha={alpha:g} the {what} {verdict} {evidence}"
    direction = "higher" if alternative == "greater" else "lower"
    verdict = "is" if significant else "is not"
    return (f"At alpha={alpha:g} the {quantity} of {names[0]} {verdict} significantly "
            f"{direction} than that of {names[1]} {evidence}")


# --------------------------------------------------------------------------- validation

def check_alpha(alpha) -> float:
    alpha = float(alpha)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    return alpha


def _check_alternative(alternative):
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {list(ALTERNATIVES)}, got {alternative!r}")


def _check_count(value, what) -> int:
    try:
        valid = not isinstance(value, bool) and int(value) == value and value >= 0
    except (TypeError, ValueError, OverflowError):
        valid = False
    if not valid:
        raise ValueError(f"{what} must be a non-negative integer count, got {value!r}")
    return int(value)


def default_names(k: int) -> tuple[str, ...]:
    """"A", "B", ... for up to 26 algorithms, then "1", "2", ..."""
    return tuple(string.ascii_uppercase[:k]) if k <= 26 else tuple(str(j + 1) for j in range(k))


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
    b, c = _check_count(b, "b"), _check_count(c, "c")
    alpha = check_alpha(alpha)
    n = b + c
    details = (("b (only first right)", b), ("c (only second right)", c))
    notes = () if n else ("the classifiers never disagree (b + c = 0): nothing to test, "
                          "p-value reported as 1",)
    what = f"error rates of {first} and {second}"
    if exact:
        p = float(stats.binomtest(b, n, 0.5).pvalue) if n else 1.0
        label = f"McNemar exact binomial test, b = {b} of {n}"
        return ClassicalTestResult("McNemar exact test", (first, second), "b", float(b), p,
                                   None, alpha, n, "discordant examples",
                                   conclusion_line(alpha, p, what, label), "two-sided", details,
                                   notes)
    if n:
        numerator = max(abs(b - c) - 1, 0) ** 2 if correction else (b - c) ** 2
        chi2 = numerator / n
        p = float(stats.chi2.sf(chi2, 1))
    else:
        chi2, p = np.nan, 1.0
    name = "McNemar test" + (" (continuity-corrected)" if correction else "")
    label = f"McNemar chi2 = {format_statistic(chi2)}"
    return ClassicalTestResult(name, (first, second), "chi2", float(chi2), p, 1, alpha, n,
                               "discordant examples", conclusion_line(alpha, p, what, label),
                               "two-sided", details, notes)


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
    label = f"Cochran's Q = {format_statistic(q)}, df = {k - 1}"
    return ClassicalTestResult(
        "Cochran's Q test", names, "Q", float(q), p, k - 1, alpha, n, "test examples",
        conclusion_line(alpha, p, f"accuracies of {names_text(names)}", label), "two-sided",
        (("accuracies", tuple(g / n)),), notes)


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
    label = f"Looney's F = {format_statistic(f)}, df = ({df1}, {df2})"
    details = (("accuracies", tuple(columns)), ("SSA", ssa), ("SSB", ssb), ("SSAB", ssab),
               ("SST", sst), ("MSA", msa), ("MSAB", msab))
    return ClassicalTestResult(
        "Looney's F-test", names, "F", float(f), p, (df1, df2), alpha, n, "test examples",
        conclusion_line(alpha, p, f"accuracies of {names_text(names)}", label), "two-sided",
        details, notes)


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
    n1 = _check_count(n, "n")
    n2 = n1 if n_2 is None else _check_count(n_2, "n_2")
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
    label = f"z = {format_statistic(z)}"
    unit = "test examples each" if n1 == n2 else f"test examples ({n1} + {n2})"
    return ClassicalTestResult(
        "Two-proportion z-test", (first, second), "z", float(z), float(p), None, alpha,
        n1 if n1 == n2 else n1 + n2, unit,
        conclusion_line(alpha, p, f"accuracies of {first} and {second}", label, alternative,
                   "accuracy", (first, second)),
        alternative, (("accuracies", tuple(acc)), ("pooled accuracy", pooled)), notes)


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
    label = f"t = {format_statistic(res.statistic)}, df = {d.size - 1}"
    return ClassicalTestResult(
        name, (first, second), "t", res.statistic, p, d.size - 1, alpha, d.size, "splits",
        conclusion_line(alpha, p, f"mean scores of {first} and {second}", label, alternative,
                   "mean score", (first, second)),
        alternative, (("mean difference", float(d.mean())),
                      ("std of differences", float(d.std(ddof=1)))), res.notes)


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
    label = f"5x2cv paired t = {format_statistic(t)}, df = {r}"
    return ClassicalTestResult(
        "5x2cv paired t-test", (first, second), "t", float(t), float(p), r, alpha, 2 * r,
        "splits", conclusion_line(alpha, p, f"mean scores of {first} and {second}", label,
                             alternative, "mean score", (first, second)),
        alternative, (("p_1^(1)", float(d[0, 0])), ("s_i^2", tuple(variances))), notes)


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
    label = f"5x2cv F = {format_statistic(f)}, df = ({2 * r}, {r})"
    return ClassicalTestResult(
        "Combined 5x2cv F-test", (first, second), "F", float(f), p, (2 * r, r), alpha, 2 * r,
        "splits", conclusion_line(alpha, p, f"mean scores of {first} and {second}", label),
        "two-sided", (("sum of squared differences", float(np.sum(d ** 2))),
                      ("s_i^2", tuple(variances))), notes)
