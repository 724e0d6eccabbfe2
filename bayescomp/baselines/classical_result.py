"""The result of every frequentist test of the package (:class:`ClassicalTestResult`) and the
text helpers the tests share: how algorithms are named and a conclusion at ``alpha`` is
written. Numbers are written by :func:`bayescomp.formatting.format_number`; the summary and
the JSON document by :mod:`bayescomp.presentation.results.classical`."""
from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayescomp.formatting import equals, format_number, format_value
from bayescomp.summarised import Summarised


ALTERNATIVES = ("two-sided", "greater", "less")


# --------------------------------------------------------------------------- result

@dataclass(frozen=True)
class ClassicalTestResult(Summarised):
    """Outcome of a frequentist (classical) test.

    The tests across datasets (:func:`bayescomp.wilcoxon_test`, :func:`bayescomp.sign_test`,
    :func:`bayescomp.paired_ttest`) report p-values only, both one-sided ones beside the
    two-sided one; the tests on one test set and on resampled splits are run at a level
    ``alpha`` against one ``alternative`` and say their ``conclusion``.

    Attributes
    ----------
    name : str
        Name of the test.
    algorithms : tuple of str
        The algorithms compared (for two, differences are ``first - second``).
    statistic_name : str
        What ``statistic`` is: "W", "wins", "chi2", "b", "Q", "F", "z" or "t".
    statistic : float
        The test statistic (NaN when the data leave nothing to test; see ``notes``).
    p_value : float
        The p-value against ``alternative``.
    n : int
        Number of observations, in ``unit`` (datasets, test examples, discordant examples,
        splits).
    unit : str
    df : None, int or (int, int)
        Degrees of freedom of the reference distribution (None for the z, exact and
        rank tests).
    alternative : str
        "two-sided", or "greater" / "less" (the first algorithm better / worse).
    p_greater, p_less : float or None
        One-sided p-values against the alternatives that the first algorithm is better
        ("greater") or worse ("less"), for the tests that report both; else None.
    n_used : int or None
        Observations the test used, when it drops some (the sign test and the ``"wilcox"``
        zero method drop zero differences); None when it uses all ``n``.
    alpha : float or None
        Significance level of ``conclusion``; None for a test run without one.
    conclusion : str
        One plain-language line, e.g. "At alpha=0.05 the error rates of A and B differ
        (McNemar chi2 = 8.33, p = 0.0039)"; empty without ``alpha``.
    options : tuple of (str, object) pairs
        The settings the test ran with.
    details : tuple of (str, object) pairs
        Intermediate quantities (counts, accuracies, sums of squares...).
    notes : tuple of str
        Warnings raised by scipy and remarks on degenerate data.
    """

    name: str
    algorithms: tuple
    statistic_name: str
    statistic: float
    p_value: float
    n: int
    unit: str
    df: object = None
    alternative: str = "two-sided"
    p_greater: float | None = None
    p_less: float | None = None
    n_used: int | None = None
    alpha: float | None = None
    conclusion: str = ""
    options: tuple = ()
    details: tuple = ()
    notes: tuple = ()

    @property
    def significant(self) -> bool | None:
        """Whether ``p_value < alpha``; None for a test run without ``alpha``."""
        return None if self.alpha is None else bool(self.p_value < self.alpha)

    def summary(self) -> str:
        """The test in a few lines: statistic and p-values, details, conclusion, notes."""
        from bayescomp.presentation.results.classical import summary
        return summary(self)

    def counts(self) -> dict:
        """The number of observations as the table and the JSON key it: ``n_datasets`` for
        the tests across datasets (the JSON schema's key), else ``n`` and ``unit``."""
        return {"n_datasets": self.n} if self.unit == "datasets" else \
            {"n": self.n, "unit": self.unit}

    def to_frame(self) -> pd.DataFrame:
        """One row: test, algorithms, counts, statistic, df, p-values, level and conclusion,
        options, details and notes (NaN where a test has none)."""
        df = self.df if isinstance(self.df, tuple) else (self.df, None)
        names = (dict(zip(("first", "second"), self.algorithms)) if len(self.algorithms) == 2
                 else {"algorithms": ", ".join(self.algorithms)})
        return pd.DataFrame([{
            "test": self.name, **names, **self.counts(),
            "n_used": np.nan if self.n_used is None else self.n_used,
            "statistic_name": self.statistic_name, "statistic": self.statistic,
            "df1": np.nan if df[0] is None else df[0], "df2": np.nan if df[1] is None else df[1],
            "p_value": self.p_value, "alternative": self.alternative,
            "p_greater": np.nan if self.p_greater is None else self.p_greater,
            "p_less": np.nan if self.p_less is None else self.p_less,
            "alpha": np.nan if self.alpha is None else self.alpha,
            "significant": self.significant, "conclusion": self.conclusion,
            "options": ", ".join(f"{k}={v!r}" for k, v in self.options),
            "details": "; ".join(f"{k}={format_value(v)}" for k, v in self.details),
            "notes": "; ".join(self.notes),
        }])

    def to_dict(self) -> dict:
        """The test as JSON-ready data; one-sided p-values keyed by the better algorithm."""
        from bayescomp.presentation.results.classical import to_dict
        return to_dict(self)

def statistic_text(x: float) -> str:
    """A test statistic in a conclusion: two decimals, as published examples print them
    (chi2 = 8.33), three significant digits below 0.01; written by ``format_number``."""
    x = float(x)
    if np.isfinite(x) and abs(x) >= 0.01:
        return format_number(round(x, 2), digits=6)
    return format_number(x, digits=3)


def conclusion_line(alpha, p_value, what, label, alternative="two-sided",
                    quantity="mean score", names=("first", "second")) -> str:
    """'At alpha=0.05 the <what> differ (<label>, p = ...)' or '... do not differ ...'.

    For a one-sided alternative: 'At alpha=0.05 the <quantity> of <first> is (not)
    significantly higher ("greater") / lower ("less") than that of <second> (...)'.
    """
    # a sentence gives p to four decimals, as published examples print it (0.0039, where a
    # table shows 0.003892), and "p < 0.0001" below
    p_value = float(p_value)
    evidence = f"({label}, p {equals(p_value if p_value < 1e-4 else round(p_value, 4))})"
    significant = p_value < alpha
    if alternative == "two-sided":
        verdict = "differ" if significant else "do not differ significantly"
        return f"At alpha={format_number(alpha)} the {what} {verdict} {evidence}"
    direction = "higher" if alternative == "greater" else "lower"
    verdict = "is" if significant else "is not"
    return (f"At alpha={format_number(alpha)} the {quantity} of {names[0]} {verdict} significantly "
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


def default_names(k: int) -> tuple[str, ...]:
    """"A", "B", ... for up to 26 algorithms, then "1", "2", ..."""
    return tuple(string.ascii_uppercase[:k]) if k <= 26 else tuple(str(j + 1) for j in range(k))
