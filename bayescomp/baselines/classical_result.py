"""The result of a classical test (:class:`ClassicalTestResult`) and the text helpers the
classical tests and :mod:`~bayescomp.baselines.friedman` share: how a statistic, a p-value
and a conclusion at ``alpha`` are written."""
from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np
import pandas as pd


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
