"""What each figure reads from the object it draws: small protocols, not result classes.

A figure names here the attributes it uses, so that it takes any object that has them (the
package's results do; so does a stand-in built from saved numbers), and the figures never
import the models, baselines or validation modules whose results they draw (those layers sit
beside or below the presentation layer, and their results' ``.plot()`` methods import the
figures).
"""
from __future__ import annotations

from typing import Protocol

import numpy as np
import pandas as pd

from bayescomp.rope import Rope


class HierarchicalLike(Protocol):
    """Read by :func:`~bayescomp.presentation.plots.plot_shrinkage` (a
    :class:`~bayescomp.models.hierarchical_result.HierarchicalResult` has it)."""

    first: str
    second: str
    rope: Rope
    datasets: pd.DataFrame      # per dataset: mean, delta_mean, delta_hdi_low, delta_hdi_high...
    population: object          # an Estimate: its mean is drawn


class AllPairsLike(Protocol):
    """Read by :func:`~bayescomp.presentation.plots.plot_all_pairs` and
    :func:`~bayescomp.presentation.plots.plot_probability_heatmap` (an
    :class:`~bayescomp.models.all_pairs_result.AllPairsResult` has it)."""

    method: str                 # "hierarchical" or "correlated": the scopes of the table
    rope: Rope
    table: pd.DataFrame         # first, second, <scope>_p_left / _p_rope / _p_right, reliable


class FriedmanLike(Protocol):
    """Read by :func:`~bayescomp.presentation.plots.plot_critical_difference` (a
    :class:`~bayescomp.baselines.friedman.FriedmanResult` has it)."""

    algorithms: tuple
    average_ranks: np.ndarray
    critical_difference: float
    groups: tuple               # tuples of the names of algorithms that do not differ significantly


class JointLike(Protocol):
    """Read by :func:`~bayescomp.presentation.plots.plot_bayesian_cd` (the result of
    ``bayescomp.models.joint.compare_many``, the joint hierarchical model of K algorithms, has it)."""

    algorithms: tuple
    rope: Rope
    population_draws: np.ndarray  # draws x K: population means relative to the mean of the K
    reliable: bool

    def to_frame(self) -> pd.DataFrame: ...   # pairs i < j: first, second, <scope>_p_left...


class RankingLike(Protocol):
    """Read by :func:`~bayescomp.presentation.plots.plot_ranking` (a
    :class:`~bayescomp.models.ranking_result.RankingResult` has it)."""

    algorithms: tuple
    rank_probabilities: pd.DataFrame
    expected_rank: pd.DataFrame
    settings: dict
    reliable: bool

    def to_frame(self) -> pd.DataFrame: ...


class SensitivityLike(Protocol):
    """Read by :func:`~bayescomp.presentation.plots.plot_sensitivity` (a
    :class:`~bayescomp.models.sensitivity_result.SensitivityResult` has it)."""

    labels: tuple
    priors: list
    table: pd.DataFrame
    threshold: float


class StudyLike(Protocol):
    """Read by the study's figures (a :class:`~bayescomp.validation.study.StudyResult` has it)."""

    table: pd.DataFrame
    settings: dict


class SBCLike(Protocol):
    """Read by :func:`~bayescomp.presentation.plots.validation.plot_ranks` (a
    :class:`~bayescomp.validation.sbc_ranks.SBCResult` has it)."""

    parameters: list
    n_draws: int

    def rank_test(self, name: str, bins: int | None = None) -> dict: ...
