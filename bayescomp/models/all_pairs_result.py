"""The result of :func:`bayescomp.compare_all`: every pair of several algorithms, one row per
pair and question (the population and the next dataset, or the one dataset), and how it
renders."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayescomp.decisions import MODES_DISAGREE, SCOPE_NAMES, SCOPES
from bayescomp.presentation.reports import Reportable, text_table
from bayescomp.presentation.serialize import modes_dict
from bayescomp.presentation.verdicts import (THRESHOLD, format_number, json_number, rope_dict,
                                             verdict, verdict_dict)
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
        chains decided as :attr:`HierarchicalResult.modes` says), ``attempts`` (fits made,
        retries included), ``modes`` (the modes or chains a fit whose chains do not mix
        decided by, 0 when they mix) and ``seed`` (the seed of the pair's fit: :attr:`seed`,
        the same in every row).
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

    def _n_datasets(self) -> int:
        return len(next(iter(self.results.values())).datasets) \
            if self.method == "hierarchical" else 1

    def _pair_verdicts(self, row, threshold: float) -> list[str]:
        """The verdicts of one row at ``threshold``: population and next dataset, or the one
        dataset."""
        first, second, reliable = row["first"], row["second"], bool(row["reliable"])
        pair = f"{first} vs {second}"
        if not reliable:  # one sentence: neither scope has a verdict
            return [verdict([np.nan] * 3, first, second, scope=pair, reliable=False)]
        result = self.results[(first, second)]
        # where the chains sit in several modes, the decision is theirs (the probabilities
        # mix the modes by estimated weights)
        return [verdict([row[f"{scope}_p_left"], row[f"{scope}_p_rope"], row[f"{scope}_p_right"]],
                        first, second, threshold=threshold,
                        scope=f"{pair}, {SCOPE_NAMES[scope]}" if len(self.scopes) > 1 else pair,
                        rope=self.rope,
                        decision=getattr(result, scope).decision(threshold) if row["modes"]
                        else None,
                        mcse=getattr(result, scope).mcse if self.method == "hierarchical" else None)
                for scope in self.scopes]

    def verdicts(self, threshold: float | None = None) -> list[str]:
        """One sentence per pair and scope (:func:`bayescomp.presentation.verdicts.verdict`) at
        ``threshold`` (default the result's, 0.95): population (delta0) and next dataset for
        the hierarchical model, the dataset for the correlated t-test."""
        threshold = self.threshold if threshold is None else threshold
        return [sentence for _, row in self.table.iterrows()
                for sentence in self._pair_verdicts(row, threshold)]

    def display_table(self) -> pd.DataFrame:
        """The table as the summary and the reports show it: per pair and scope, the
        probabilities under column names that say whose (``P(first better)``,
        ``P(equivalent)``, ``P(second better)``; ``first`` and ``second`` name the
        algorithms of the row) and the decision, the p-values and, for the hierarchical
        model, whether the fit can decide (``UNRELIABLE`` where not)."""
        t = self.table
        shown = pd.DataFrame({"first": t["first"], "second": t["second"]})
        for scope in self.scopes:
            where = f"{SCOPE_NAMES[scope]}: " if len(self.scopes) > 1 else ""
            shown[f"{where}P(first better)"] = t[f"{scope}_p_right"]
            shown[f"{where}P(equivalent)"] = t[f"{scope}_p_rope"]
            shown[f"{where}P(second better)"] = t[f"{scope}_p_left"]
            shown[f"{where}decision"] = t[f"{scope}_decision"]
        shown[f"{t['test'].iloc[0]} p_value"] = t.p_value
        shown["p_value corrected"] = t.p_value_corrected
        if self.method == "hierarchical":
            decisions = zip(*(t[f"{scope}_decision"] for scope in self.scopes))
            shown["fit"] = [("ok" if not modes else f"ok, {modes} modes agree" if
                             MODES_DISAGREE not in chosen else f"{modes} modes disagree")
                            if reliable else "UNRELIABLE" for reliable, modes, chosen in
                            zip(t.reliable.astype(bool), t.modes, decisions)]
            shown["attempts"] = t.attempts
        return shown

    def to_dict(self) -> dict:
        """Every number the summary shows, JSON-ready, each pair's probabilities keyed by
        the algorithms' names (``"<second> better"``, ``"equivalent"``, ``"<first> better"``)."""
        pairs = []
        for _, row in self.table.iterrows():
            first, second = row["first"], row["second"]
            common = dict(threshold=self.threshold, rope=self.rope,
                          reliable=bool(row["reliable"]))
            entry = {"first": first, "second": second, "reliable": bool(row["reliable"]),
                     "attempts": int(row["attempts"]), "seed": int(row["seed"]),
                     "test": row["test"], "p_value": json_number(row["p_value"]),
                     "p_value_corrected": json_number(row["p_value_corrected"]),
                     "reject": bool(row["reject"])}
            for scope in self.scopes:
                entry[scope] = verdict_dict(
                    [row[f"{scope}_p_left"], row[f"{scope}_p_rope"], row[f"{scope}_p_right"]],
                    first, second, scope=f"{first} vs {second}, {SCOPE_NAMES[scope]}",
                    decision=row[f"{scope}_decision"] if row["modes"] else None,
                    mcse=(getattr(self.results[(first, second)], scope).mcse
                          if self.method == "hierarchical" else None), **common)
            if self.method == "hierarchical":
                entry["modes"] = modes_dict(self.results[(first, second)], self.threshold)
                if not row["reliable"]:
                    entry["problems"] = list(self.results[(first, second)].diagnostics.problems)
            pairs.append(entry)
        return {"method": self.method, "algorithms": list(self.algorithms),
                "n_datasets": self._n_datasets(), "rope": rope_dict(self.rope),
                "threshold": self.threshold, "correction": self.correction,
                "alpha": self.alpha, "seed": json_number(self.seed), "reliable": self.reliable,
                "unreliable_pairs": [list(p) for p in self.unreliable_pairs()], "pairs": pairs}

    def _problem_lines(self) -> list[str]:
        return [f"sampling problems, {a} vs {b}: "
                + "; ".join(self.results[(a, b)].diagnostics.problems)
                for a, b in self.unreliable_pairs()]

    def summary(self) -> str:
        test = self.table["test"].iloc[0]
        unreliable = self.unreliable_pairs()
        lines = [] if not unreliable else [
            f"UNRELIABLE: {len(unreliable)} of {len(self.table)} fits failed their sampler "
            "diagnostics after their retries; their probabilities are not a decision: "
            + ", ".join(f"{a} vs {b}" for a, b in unreliable)]
        lines += [
            f"All {len(self.table)} pairwise comparisons of {len(self.algorithms)} algorithms on "
            f"{self._n_datasets()} dataset(s): {self.method} (differences first - second), "
            f"ROPE {self.rope}, seed {self.seed}",
            f"decisions at {format_number(self.threshold)}; p-values: {test}, corrected by "
            f"{self.correction or 'nothing'}, reject at {format_number(self.alpha)}",
            *self.verdicts(),
            text_table(self.display_table(), index=False),
            *self._problem_lines(),
        ]
        if unreliable:
            lines.append("what to do: run longer (iter_warmup, iter_sampling), raise adapt_delta, "
                         "or more retries; see each pair's "
                         "result.summary()")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _report(self):
        facts = [f"{self.method}; differences first - second; ROPE {self.rope}; seed {self.seed}",
                 f"decisions at {format_number(self.threshold)}; p-values: "
                 f"{self.table['test'].iloc[0]}, corrected by {self.correction or 'nothing'}"]
        title = f"All pairwise comparisons of {len(self.algorithms)} algorithms"
        if self.method == "hierarchical":
            unreliable = self.unreliable_pairs()
            named = ": " + ", ".join(f"{a} vs {b}" for a, b in unreliable) if unreliable else ""
            facts.append(f"sampling problems in {len(unreliable)} of {len(self.table)} fits"
                         + named)
            facts += self._problem_lines()
            if unreliable:
                facts.insert(0, f"UNRELIABLE: {len(unreliable)} fit(s) failed their sampler "
                             "diagnostics after their retries, no decision is made for them: "
                             + ", ".join(f"{a} vs {b}" for a, b in unreliable))
                title += f" ({len(unreliable)} UNRELIABLE fit(s))"
        return title, facts, self.display_table()
