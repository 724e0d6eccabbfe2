"""The result of :func:`bayescomp.compare_all`: every pair of several algorithms, one row per
pair and question (the population and the next dataset, or the one dataset); its text is
written by :mod:`bayescomp.presentation.results.all_pairs`."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayescomp.decisions import SCOPES, THRESHOLD
from bayescomp.reportable import Reportable
from bayescomp.rope import Rope

#: family-wise level of the frequentist tests
ALPHA = 0.05


@dataclass(frozen=True, eq=False)
class AllPairsResult(Reportable):
    """Every pairwise comparison of several algorithms.

    Attributes
    ----------
    algorithms : tuple of str
    method : {"hierarchical", "correlated"}
    rope : Rope
    correction : {"holm", "bonferroni", None}
    table : pandas.DataFrame
        One row per pair (differences ``first - second``): ``first``, ``second``, ``method``;
        per scope (:attr:`scopes`: ``population`` and ``next_dataset`` for the hierarchical
        model, the population's delta0 and the next dataset's posterior mean masses;
        ``dataset`` for the correlated t-test on one dataset), ``<scope>_p_left``,
        ``<scope>_p_rope``, ``<scope>_p_right`` and ``<scope>_decision`` (at 0.95, as the
        result's ``decision()`` words it: "unreliable (sampling problems)" for a fit that
        failed its sampler diagnostics); ``test`` and ``p_value`` of the frequentist
        baseline, ``p_value_corrected``, ``reject`` (corrected p-value at most 0.05),
        ``reliable`` (a decision can be made: the final fit passed its diagnostics, or its
        chains decided as :attr:`HierarchicalResult.modes` says, or the quadrature can),
        ``attempts`` (fits made, retries included), ``modes`` (the modes or chains a fit whose
        chains do not mix decided by, 0 when they mix), ``quadrature`` (the probabilities by
        quadrature, :attr:`HierarchicalResult.quadrature`), ``ess_bulk`` and ``ess_tail`` (the
        smallest bulk and tail ESS of the fit's reported quantities, its ``settings["ess"]``;
        NaN for the correlated t-test, which is not sampled) and ``seed`` (the seed of the
        pair's fit: :attr:`seed`, the same in every row).
    results : dict
        ``(first, second) -> HierarchicalResult or CorrelatedTTestResult``.
    seed : int
        The seed of every pair's fit (the one given, or the one drawn for ``seed=None``).
    """

    algorithms: tuple
    method: str
    rope: Rope
    correction: str | None
    table: pd.DataFrame = field(repr=False)
    results: dict = field(repr=False)
    seed: int = 0
    alpha: float = ALPHA
    threshold: float = THRESHOLD

    @property
    def scopes(self) -> tuple[str, ...]:
        """The questions each pair answers, as prefixes of the table's columns."""
        return SCOPES[self.method]

    def probability_matrix(self, kind: str = "better", scope: str | None = None) -> pd.DataFrame:
        """Square matrix of pairwise probabilities, algorithms as index and columns.

        Parameters
        ----------
        kind : {"better", "rope"}
            "better": entry ``[a, b]`` is P(a better than b by more than the ROPE), i.e.
            ``p_right`` of ``a - b`` and ``p_left`` of ``b - a``. "rope": the symmetric
            P(a and b practically equivalent). The diagonal is NaN.
        scope : str, optional
            One of :attr:`scopes`; default the first, the population for the hierarchical
            model.
        """
        if kind not in ("better", "rope"):
            raise ValueError(f"kind must be 'better' or 'rope', got {kind!r}")
        scope = scope or self.scopes[0]
        if scope not in self.scopes:
            raise ValueError(f"scope must be one of {self.scopes}, got {scope!r}")
        names = list(self.algorithms)
        matrix = pd.DataFrame(np.nan, index=pd.Index(names), columns=pd.Index(names))
        for _, row in self.table.iterrows():
            first, second = row["first"], row["second"]
            if kind == "better":
                matrix.loc[first, second] = row[f"{scope}_p_right"]
                matrix.loc[second, first] = row[f"{scope}_p_left"]
            else:
                matrix.loc[first, second] = matrix.loc[second, first] = row[f"{scope}_p_rope"]
        return matrix

    def to_frame(self) -> pd.DataFrame:
        """The table, one row per pair (a copy)."""
        return self.table.copy()

    @property
    def reliable(self) -> bool:
        """Whether every fit passed its sampler diagnostics (after its retries)."""
        return bool(self.table["reliable"].all())

    def unreliable_pairs(self) -> list[tuple[str, str]]:
        """The pairs ``(first, second)`` whose final fit failed its sampler diagnostics."""
        bad = self.table[~self.table["reliable"].astype(bool)]
        return list(zip(bad["first"], bad["second"]))

    @property
    def n_datasets(self) -> int:
        """The number of datasets every pair was compared on."""
        return len(next(iter(self.results.values())).datasets) \
            if self.method == "hierarchical" else 1

    def verdicts(self, threshold: float | None = None) -> list[str]:
        """One sentence per pair and scope (:func:`bayescomp.presentation.verdicts.verdict`) at
        ``threshold`` (default the result's, 0.95): population (delta0) and next dataset for
        the hierarchical model, the dataset for the correlated t-test."""
        from bayescomp.presentation.results.all_pairs import verdicts
        return verdicts(self, self.threshold if threshold is None else threshold)

    def display_table(self) -> pd.DataFrame:
        """The table as the summary and the reports show it
        (:func:`bayescomp.presentation.results.all_pairs.display_table`)."""
        from bayescomp.presentation.results.all_pairs import display_table
        return display_table(self)

    def to_dict(self) -> dict:
        """Every number the summary shows, JSON-ready, each pair's probabilities keyed by
        the algorithms' names (``"<second> better"``, ``"equivalent"``, ``"<first> better"``)."""
        from bayescomp.presentation.results.all_pairs import to_dict
        return to_dict(self)

    def summary(self) -> str:
        """Every pair in text: the verdicts, the table and the fits that failed."""
        from bayescomp.presentation.results.all_pairs import summary
        return summary(self)

    def _report(self):
        from bayescomp.presentation.results.all_pairs import report
        return report(self)
