"""The Friedman test across datasets, its post-hoc tests and the critical-difference diagram.

Following Demšar (2006), k algorithms are ranked on each of N datasets by their mean
score (rank 1 = best; ties share the average rank) and compared by their average ranks:

* :func:`friedman_test` runs the Friedman test (``scipy.stats.friedmanchisquare``) and
  the Iman-Davenport F correction of it, and two post-hoc tests of every pair:
  the Nemenyi test, significant when two average ranks differ by more than the critical
  difference ``CD = q_alpha sqrt(k (k + 1) / (6 N))``, and Wilcoxon signed-rank tests of
  the per-dataset mean differences (:func:`bayescomp.wilcoxon_test`) with Holm's
  step-down correction (:func:`~bayescomp.baselines.multiple_testing.adjust_p_values`),
  as advised by Benavoli, Corani & Mangili (2016);
* :func:`bayescomp.presentation.plots.plot_critical_difference` draws Demšar's
  critical-difference diagram from its result.

References
----------
M. Friedman (1937). The use of ranks to avoid the assumption of normality implicit in the
analysis of variance. JASA 32(200):675-701.

R. L. Iman, J. M. Davenport (1980). Approximations of the critical region of the Friedman
statistic. Communications in Statistics - Theory and Methods 9(6):571-595.

P. B. Nemenyi (1963). Distribution-free multiple comparisons. PhD thesis, Princeton.

S. Holm (1979). A simple sequentially rejective multiple test procedure. Scandinavian
Journal of Statistics 6(2):65-70.

J. Demšar (2006). Statistical comparisons of classifiers over multiple data sets. JMLR
7:1-30.

A. Benavoli, G. Corani, F. Mangili (2016). Should we really use post-hoc tests based on
mean-ranks? JMLR 17(5):1-10.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from bayescomp.baselines.across_datasets import ZERO_METHODS, wilcoxon_test
from bayescomp.baselines.classical_result import (check_alpha, conclusion_line, default_names,
                                                  statistic_text)
from bayescomp.baselines.multiple_testing import adjust_p_values
from bayescomp.data.scores import Scores
from bayescomp.formatting import format_number, names_text
from bayescomp.summarised import Summarised

if TYPE_CHECKING:
    from typing import Sequence

__all__ = ["FriedmanResult", "friedman_test", "nemenyi_q", "critical_difference"]


# --------------------------------------------------------------------------- helpers

def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Critical value ``q_alpha`` of the Nemenyi test for k algorithms.

    The studentized range quantile with infinite degrees of freedom divided by sqrt(2):
    ``studentized_range.ppf(1 - alpha, k, inf) / sqrt(2)``; for alpha = 0.05 and
    k = 2..6 it is 1.960, 2.343, 2.569, 2.728, 2.850 (Demšar 2006, Table 5).
    """
    if int(k) != k or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k}")
    alpha = check_alpha(alpha)
    return float(stats.studentized_range.ppf(1 - alpha, int(k), np.inf) / np.sqrt(2))


def critical_difference(k: int, n_datasets: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks, ``q_alpha sqrt(k (k + 1) / (6 N))``."""
    if int(n_datasets) != n_datasets or n_datasets < 1:
        raise ValueError(f"n_datasets must be a positive integer, got {n_datasets}")
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n_datasets)))


def _mean_scores(scores, algorithms, datasets):
    """(N x k) matrix of per-dataset scores, algorithm names and dataset names."""
    if isinstance(scores, Scores):
        values = np.array([d.values.mean(axis=1) for d in scores.datasets])
        algorithms = scores.algorithms if algorithms is None else algorithms
        datasets = scores.dataset_names if datasets is None else datasets
    else:
        if isinstance(scores, pd.DataFrame):
            algorithms = [str(c) for c in scores.columns] if algorithms is None else algorithms
            datasets = [str(i) for i in scores.index] if datasets is None else datasets
        values = np.array(scores, dtype=float)  # a copy: it is made read-only below
        if values.ndim != 2:
            raise ValueError("scores must be a Scores object or a 2-D array (datasets x "
                             f"algorithms), got shape {values.shape}")
    n, k = values.shape
    if not np.all(np.isfinite(values)):
        raise ValueError("the scores hold NaN or infinite values")
    if k < 3:
        raise ValueError(f"the Friedman test needs at least 3 algorithms, got {k}; for two, "
                         "use bayescomp.wilcoxon_test or bayescomp.sign_test")
    if n < 2:
        raise ValueError(f"the Friedman test needs at least 2 datasets, got {n}")
    algorithms = default_names(k) if algorithms is None else tuple(str(a) for a in algorithms)
    datasets = tuple(str(i) for i in range(n)) if datasets is None else tuple(map(str, datasets))
    if len(algorithms) != k or len(datasets) != n:
        raise ValueError(f"{len(algorithms)} algorithm and {len(datasets)} dataset names for "
                         f"scores of shape {values.shape} (datasets x algorithms)")
    return values, tuple(algorithms), datasets


def _groups(average_ranks, cd) -> tuple:
    """Maximal runs of algorithms (sorted by rank) whose ranks span at most the CD."""
    order = np.argsort(average_ranks, kind="stable")
    ranks = average_ranks[order]
    ends = [int(np.searchsorted(ranks, r + cd * (1 + 1e-12), side="right")) - 1 for r in ranks]
    groups, last_end = [], -1
    for start, end in enumerate(ends):
        if end > start and end > last_end:
            groups.append(tuple(int(i) for i in order[start:end + 1]))
        last_end = max(last_end, end)
    return tuple(groups)


# --------------------------------------------------------------------------- result

@dataclass(frozen=True, eq=False)
class FriedmanResult(Summarised):
    """Friedman test, Nemenyi and Holm-Wilcoxon post-hoc tests of k algorithms on N datasets.

    Attributes
    ----------
    algorithms, dataset_names : tuple of str
    mean_scores : numpy.ndarray, shape (N, k)
        Score of each algorithm on each dataset (its mean over the splits); read-only.
    ranks : numpy.ndarray, shape (N, k)
        Rank of each algorithm on each dataset, 1 = best, ties averaged; read-only.
    average_ranks : numpy.ndarray, shape (k,)
    higher_is_better : bool
    statistic, p_value : float
        Friedman's chi-square (scipy's, with the correction for ties) and its p-value.
    df : int
        k - 1.
    iman_davenport, iman_davenport_p : float
        ``F_F = (N - 1) chi2 / (N (k - 1) - chi2)`` and its p-value.
    iman_davenport_df : (int, int)
        (k - 1, (k - 1)(N - 1)).
    alpha : float
    q_alpha, critical_difference : float
        Nemenyi's critical value and critical difference of average ranks.
    groups : tuple of tuple of str
        Maximal sets of algorithms (in rank order) whose average ranks span at most the
        critical difference: not significantly different by the Nemenyi test.
    pairwise : pandas.DataFrame
        One row per pair: ``first``, ``second``, ``rank_difference`` (first - second),
        ``nemenyi_p``, ``nemenyi_significant`` (|rank difference| > CD), ``wilcoxon_W``,
        ``wilcoxon_p``, ``holm_p`` (Holm-adjusted) and ``holm_significant``.
    conclusion : str
    notes : tuple of str
    """

    algorithms: tuple
    dataset_names: tuple
    mean_scores: np.ndarray = field(repr=False)
    ranks: np.ndarray = field(repr=False)
    average_ranks: np.ndarray
    higher_is_better: bool
    statistic: float
    p_value: float
    df: int
    iman_davenport: float
    iman_davenport_p: float
    iman_davenport_df: tuple
    alpha: float
    q_alpha: float
    critical_difference: float
    groups: tuple
    pairwise: pd.DataFrame = field(repr=False)
    conclusion: str
    notes: tuple = ()

    @property
    def significant(self) -> bool:
        """Whether the Friedman test rejects equal average ranks at ``alpha``."""
        return bool(self.p_value < self.alpha)

    @property
    def n_datasets(self) -> int:
        return len(self.dataset_names)

    def summary(self) -> str:
        """The Friedman and Iman-Davenport tests, the average ranks, Nemenyi's critical
        difference and groups, the pairwise post-hoc tests and the conclusion."""
        from bayescomp.presentation.results.classical import friedman_summary
        return friedman_summary(self)

    def to_frame(self) -> pd.DataFrame:
        """One row per algorithm, best first: average rank, mean score, and the Friedman test."""
        order = np.argsort(self.average_ranks, kind="stable")
        return pd.DataFrame({
            "algorithm": [self.algorithms[j] for j in order],
            "average_rank": self.average_ranks[order],
            "mean_score": self.mean_scores.mean(axis=0)[order],
            "friedman_chi2": self.statistic, "friedman_p": self.p_value,
            "critical_difference": self.critical_difference, "alpha": self.alpha,
        })


# --------------------------------------------------------------------------- test

def friedman_test(scores: Scores, *, algorithms: Sequence[str] | None = None,
                  datasets: Sequence[str] | None = None, alpha: float = 0.05,
                  higher_is_better: bool = True, zero_method: str = "wilcox") -> FriedmanResult:
    """Friedman test of k algorithms across N datasets, with post-hoc tests (Demšar 2006).

    Parameters
    ----------
    scores : Scores, pandas.DataFrame or array-like of shape (N, k)
        A :class:`bayescomp.Scores` (each dataset is represented by each algorithm's mean
        score over its splits), or a datasets x algorithms table of scores.
    algorithms, datasets : sequence of str, optional
        Names, when ``scores`` is an array (a DataFrame's columns and index are used).
    alpha : float
        Significance level of the conclusion and of both post-hoc tests.
    higher_is_better : bool
        Rank 1 goes to the highest score (accuracy, AUC); False for errors or losses.
    zero_method : {"wilcox", "pratt", "zsplit"}
        Treatment of zero differences in the pairwise Wilcoxon tests.

    Returns
    -------
    FriedmanResult

    Notes
    -----
    ``statistic`` is ``scipy.stats.friedmanchisquare`` on the per-dataset scores, which
    divides Friedman's ``12 N / (k (k + 1)) [sum_j R_j^2 - k (k + 1)^2 / 4]`` by a
    correction for ties; without ties the two are equal. If every dataset ties all the
    algorithms, there is nothing to test: the statistic is NaN and the p-value 1.

    The post-hoc tests are run whatever the Friedman test says; Demšar (2006) reads them
    only when it rejects. The Nemenyi test compares mean ranks, so its outcome for two
    algorithms depends on the others in the comparison (Benavoli et al. 2016); the
    Wilcoxon tests do not.
    """
    values, names, dataset_names = _mean_scores(scores, algorithms, datasets)
    alpha = check_alpha(alpha)
    if zero_method not in ZERO_METHODS:
        raise ValueError(f"zero_method must be one of {list(ZERO_METHODS)}, got {zero_method!r}")
    n, k = values.shape
    ranks = stats.rankdata(-values if higher_is_better else values, axis=1)
    average_ranks = ranks.mean(axis=0)
    notes = []
    if np.all(np.ptp(values, axis=1) == 0):
        chi2, p = np.nan, 1.0
        notes.append("every dataset ties all the algorithms: nothing to test, p-value "
                     "reported as 1")
    else:
        result = stats.friedmanchisquare(*values.T)
        chi2, p = float(result.statistic), float(result.pvalue)
    df_id = (k - 1, (k - 1) * (n - 1))
    denominator = n * (k - 1) - chi2
    if np.isnan(chi2):
        f_id, p_id = np.nan, 1.0
    elif denominator > 0:
        f_id = (n - 1) * chi2 / denominator
        p_id = float(stats.f.sf(f_id, *df_id))
    else:  # the same ranking on every dataset
        f_id, p_id = np.inf, 0.0

    q = nemenyi_q(k, alpha)
    cd = critical_difference(k, n, alpha)
    se = np.sqrt(k * (k + 1) / (6.0 * n))
    rows = []
    for i, j in combinations(range(k), 2):
        gap = average_ranks[i] - average_ranks[j]
        wilcoxon = wilcoxon_test(values[:, i] - values[:, j], first=names[i], second=names[j],
                                 zero_method=zero_method)
        notes += [f"Wilcoxon {names[i]} vs {names[j]}: {note}" for note in wilcoxon.notes]
        rows.append({
            "first": names[i], "second": names[j], "rank_difference": gap,
            "nemenyi_p": float(stats.studentized_range.sf(abs(gap) / se * np.sqrt(2), k,
                                                          np.inf)),
            "nemenyi_significant": bool(abs(gap) > cd * (1 + 1e-12)),
            "wilcoxon_W": wilcoxon.statistic, "wilcoxon_p": wilcoxon.p_value,
        })
    pairwise = pd.DataFrame(rows)
    pairwise["holm_p"] = adjust_p_values(pairwise["wilcoxon_p"], "holm")
    pairwise["holm_significant"] = pairwise["holm_p"] < alpha

    for array in (values, ranks, average_ranks):
        array.setflags(write=False)
    label = f"Friedman chi2 = {statistic_text(chi2)}, df = {k - 1}"
    text = conclusion_line(alpha, p, f"average ranks of {names_text(names)}", label)
    text += f"; Nemenyi CD = {format_number(cd)}"
    return FriedmanResult(
        names, dataset_names, values, ranks, average_ranks, bool(higher_is_better), chi2, p,
        k - 1, float(f_id), p_id, df_id, alpha, q, cd,
        tuple(tuple(names[i] for i in g) for g in _groups(average_ranks, cd)), pairwise,
        text, tuple(dict.fromkeys(notes)))
