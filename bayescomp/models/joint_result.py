"""The result of :func:`bayescomp.compare_many`: one posterior of K algorithms, read as a
pair table, as ranks and per dataset (its text is written by
:mod:`bayescomp.presentation.results.joint`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pandas as pd

from bayescomp.decisions import THRESHOLD, leaders
from bayescomp.models.diagnostics import Diagnostics, SamplerChecked
from bayescomp.reportable import Reportable
from bayescomp.rope import Rope


@dataclass(frozen=True, eq=False)
class JointResult(SamplerChecked, Reportable):
    """Posterior of the joint hierarchical model of several algorithms.

    Attributes
    ----------
    algorithms : tuple of str
        In the order of the pairs: pair (algorithms[i], algorithms[j]), i < j, is the
        difference ``algorithms[i] - algorithms[j]``.
    rope : Rope
    idata : arviz.InferenceData
        Draws in score units: ``delta0`` and ``population_sd`` (the population's location and
        Student-t scale) of every pair, ``delta0_centre`` (the centre of delta0's normal
        conditional, per pair), ``delta`` (dataset, pair), ``sigma0``, ``nu``, and
        in the contrast coordinates ``delta0_contrast``, ``B`` (the population scale's
        Cholesky factor) and ``delta0_copies`` (copy, contrast: the draws of delta0 from its
        conditional that the pair table and the ranks read; :mod:`bayescomp.models.joint`).
    table : pandas.DataFrame
        One row per pair, the columns of :meth:`to_frame`.
    population, next_dataset : dict
        ``(first, second) -> Estimate`` of delta0 and of the next dataset's difference.
    population_draws : ndarray (draws x copies, K)
        Each algorithm's population mean relative to the mean of all K, in score units
        (rows sum to 0), one row per copy of delta0 of every draw (``delta0_copies``); pair
        (a, b)'s delta0 is column a minus column b.
    p_best : pandas.Series
        P(rank 1) of every algorithm (:attr:`rank_probabilities`' first column).
    p_best_mcse : pandas.Series
        Its Monte Carlo standard errors (:func:`bayescomp.models.joint_ranks.p_best_mcse`):
        an algorithm is named best only where its P(best) clears the threshold by two of
        them, as every decision of the package (:data:`bayescomp.decisions.MC_MARGIN`).
    p_best_gap_mcse : pandas.Series
        Monte Carlo standard errors of the gap between the largest P(best) and each, taken
        on the same draws (0 for the largest): algorithms within two of them share the lead
        (:func:`bayescomp.decisions.leaders`).
    rank_probabilities : pandas.DataFrame
        Algorithms x ranks 1..K of the population means, algorithms within the ROPE of the
        best of their group sharing their places (:mod:`bayescomp.models.joint`).
    datasets : pandas.DataFrame
        One row per dataset and pair: ``dataset``, ``first``, ``second``, ``floored``
        (whether the scores' resolution, not the splits, sets the noise of the pair's
        differences there: the datasets its
        :class:`~bayescomp.ConstantDifferencesWarning` names), the raw ``mean``
        difference, the shrunken delta_i (``delta_mean``, ``delta_sd``, ``delta_hdi_low``,
        ``delta_hdi_high`` of its draws) and its ``p_left``, ``p_rope``, ``p_right`` (the
        means of its normal conditional's masses,
        :func:`~bayescomp.models.joint_posterior.dataset_probabilities`).
    diagnostics : Diagnostics
    settings : dict
    modes : tuple of tuple of int
        Where the chains did not mix but the decisions settled: the chains of each separate
        mode (``modes_separate``) or one chain per part (chains crossing slowly between
        modes); empty otherwise. Each pair's estimates then hold every part's probabilities,
        and a pair decides only what every part decides (:mod:`bayescomp.models.joint_modes`).
    modes_separate : bool
    draw_order : ndarray
        Indices of the chain-major flattened draws of ``idata`` that every summary number,
        the pair table, ``population_draws``, ``p_best`` and the ranks are of (each with
        its copies of delta0): every draw once as sampled, or separate modes mixed by
        their weights.
    mode_weights, mode_weight_errors : tuple of float
        Each separate mode's estimated posterior mass and its standard error (bridge
        sampling, :func:`bayescomp.models.modes.weigh_modes`); NaN where not estimated.
    weights_note : str or None
        Why separate modes have no weights (the chains then count alike, as sampled).
    """

    algorithms: tuple
    rope: Rope
    idata: az.InferenceData = field(repr=False)
    table: pd.DataFrame = field(repr=False)
    population: dict = field(repr=False)
    next_dataset: dict = field(repr=False)
    population_draws: np.ndarray = field(repr=False)
    p_best: pd.Series = field(repr=False)
    p_best_mcse: pd.Series = field(repr=False)
    p_best_gap_mcse: pd.Series = field(repr=False)
    rank_probabilities: pd.DataFrame = field(repr=False)
    datasets: pd.DataFrame = field(repr=False)
    diagnostics: Diagnostics = field(repr=False)
    settings: dict = field(repr=False)
    threshold: float = THRESHOLD
    modes: tuple = ()
    modes_separate: bool = False
    draw_order: np.ndarray | None = field(default=None, repr=False)
    mode_weights: tuple = ()
    mode_weight_errors: tuple = ()
    weights_note: str | None = None

    @property
    def modes_weighed(self) -> bool:
        """Whether the chains sit in separate modes whose weights were estimated, so that
        the summary numbers, P(best) and the ranks mix the modes by them."""
        return (self.modes_separate and len(self.mode_weights) > 0
                and bool(np.all(np.isfinite(self.mode_weights))))

    @property
    def reliable(self) -> bool:
        """Whether the fit passed its sampler diagnostics or, where its chains did not mix,
        its decisions settled (:mod:`bayescomp.models.joint_modes`)."""
        return self.diagnostics.ok or bool(self.modes)

    @property
    def best(self) -> str:
        """The algorithm most probably ranked first (the first of those that share the
        largest P(best), :func:`bayescomp.decisions.leaders`)."""
        return leaders(self.p_best, self.p_best_gap_mcse)[0]

    @property
    def attempts(self) -> tuple:
        """Every fit made, in order: settings, diagnostics verdict, problems and seconds."""
        return tuple(self.settings.get("attempts", ()))

    def to_frame(self) -> pd.DataFrame:
        """One row per pair: ``first``, ``second``, ``delta0_mean``, ``delta0_hdi_low``,
        ``delta0_hdi_high``, ``population_p_left``, ``population_p_rope``,
        ``population_p_right``, ``population_decision``, the same four of
        ``next_dataset``, and ``reliable`` ("left": the second better)."""
        return self.table.copy()

    def probability_matrix(self, kind: str = "better", scope: str = "population") -> pd.DataFrame:
        """Algorithms x algorithms: P(row better than column by more than the ROPE)
        (``kind="better"``) or P(equivalent) (``"rope"``), as
        :meth:`bayescomp.AllPairsResult.probability_matrix`."""
        if kind not in ("better", "rope"):
            raise ValueError(f"kind must be 'better' or 'rope', got {kind!r}")
        names = list(self.algorithms)
        matrix = pd.DataFrame(np.nan, index=pd.Index(names), columns=pd.Index(names))
        for _, row in self.table.iterrows():
            a, b = row["first"], row["second"]
            if kind == "better":
                matrix.loc[a, b] = row[f"{scope}_p_right"]
                matrix.loc[b, a] = row[f"{scope}_p_left"]
            else:
                matrix.loc[a, b] = matrix.loc[b, a] = row[f"{scope}_p_rope"]
        return matrix

    def verdicts(self, threshold: float | None = None) -> list[str]:
        """One sentence per pair and question, and one on the best algorithm."""
        from bayescomp.presentation.results.joint import verdicts
        return verdicts(self, self.threshold if threshold is None else threshold)

    def to_dict(self) -> dict:
        """Every number the summary shows, JSON-ready."""
        from bayescomp.presentation.results.joint import to_dict
        return to_dict(self)

    def summary(self) -> str:
        """The fit in text: verdicts, pair table, ranks and the sampler's diagnostics."""
        from bayescomp.presentation.results.joint import summary
        return summary(self)

    def _report(self):
        from bayescomp.presentation.results.joint import report
        return report(self)
