"""Decisions from the posterior probabilities of (left, rope, right)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayescomp.rope import REGIONS
from bayescomp.summarised import Summarised

if TYPE_CHECKING:
    from typing import Sequence
    from bayescomp.annotations import ArrayLike


#: The default probability a region needs for a decision.
THRESHOLD = 0.95
#: The questions a comparison answers, by method, as result attributes and the prefixes of
#: columns and JSON keys: the hierarchical model's population (delta0) and next dataset, the
#: correlated t-test's one dataset.
SCOPES = {"hierarchical": ("population", "next_dataset"), "correlated": ("dataset",)}
#: How tables and sentences name them.
SCOPE_NAMES = {"population": "population (delta0)", "next_dataset": "next dataset",
               "dataset": "the dataset"}
#: The decision of a fit that failed its sampler diagnostics.
UNRELIABLE = "unreliable (sampling problems)"
#: The decision of a posterior whose chains sit in several modes that decide differently.
MODES_DISAGREE = "undecided (the modes disagree)"
#: Monte Carlo standard errors a sampled probability must clear the threshold by before it
#: decides: a probability within this margin of the threshold would decide one way on one
#: seed and the other way on the next, so it decides nothing.
MC_MARGIN = 2.0
#: Monte Carlo standard errors within which a sampled probability is checked by another
#: route where one answers (the pairwise model's quadrature): a decision by MC_MARGIN errors
#: is on the wrong side of the threshold with probability up to 2.3% where the truth lies
#: at it (AutoML's tunedrandomforest - autoweka, P(equivalent) 0.9477 by quadrature: one of
#: 30 seeds decided "equivalent" at 0.9568 +- 0.0028, its Monte Carlo errors calibrated
#: over the 30), and at four errors 3e-5
CHECK_MARGIN = 4.0


def _as_probabilities(probabilities) -> np.ndarray:
    probabilities = np.asarray(probabilities, dtype=float)
    if probabilities.shape != (3,) or np.any(probabilities < 0) or \
            not np.isclose(probabilities.sum(), 1.0, atol=1e-6):
        raise ValueError("probabilities must be three non-negative numbers (left, rope, right) "
                         f"summing to 1, got {probabilities.tolist()}")
    return probabilities


def decide(probabilities: ArrayLike, threshold: float = THRESHOLD,
           labels: Sequence[str] = REGIONS, mcse: ArrayLike | None = None) -> str:
    """The region whose posterior probability reaches ``threshold``, else ``"undecided"``.

    A probability estimated from draws (``mcse`` given) reaches the threshold only when it
    does by :data:`MC_MARGIN` Monte Carlo standard errors (:func:`too_close` says when the
    margin, not the probability, left a result undecided).

    Parameters
    ----------
    probabilities : array-like of 3 floats
        P(left), P(rope), P(right).
    threshold : float
        In (0.5, 1]; above 0.5 at most one region can reach it.
    labels : sequence of 3 str
        Names returned for left, rope and right.
    mcse : array-like of 3 floats, optional
        Monte Carlo standard errors of the probabilities (none: exact probabilities).
    """
    if not 0.5 < threshold <= 1:
        raise ValueError(f"threshold must be in (0.5, 1], got {threshold}")
    probabilities = _as_probabilities(probabilities)
    margin = 0.0 if mcse is None else MC_MARGIN * np.asarray(mcse, dtype=float)
    reached = np.flatnonzero(probabilities - margin >= threshold)
    return labels[reached[0]] if reached.size else "undecided"


def decide_modes(mode_probabilities: Sequence[ArrayLike], mode_mcse: Sequence[ArrayLike],
                 threshold: float = THRESHOLD, labels: Sequence[str] = REGIONS) -> str:
    """The decision every mode makes (each by :func:`decide` with its own Monte Carlo
    errors), else :data:`MODES_DISAGREE`: a mixture's probability of a region lies between
    its modes', so when every mode decides the same, so does every mixture of them."""
    decided = {decide(p, threshold, labels=labels, mcse=e)
               for p, e in zip(mode_probabilities, mode_mcse)}
    return decided.pop() if len(decided) == 1 else MODES_DISAGREE


def too_close(probabilities: ArrayLike, threshold: float, mcse: ArrayLike | None,
              margin: float = MC_MARGIN) -> bool:
    """Whether a region's probability lies within ``margin`` Monte Carlo standard errors
    of ``threshold``: at :data:`MC_MARGIN`, the draws cannot tell on which side it is."""
    if mcse is None:
        return False
    return bool(np.any(within_margin(_as_probabilities(probabilities), threshold, mcse,
                                     margin)))


def too_close_to_call(estimates, threshold: float = THRESHOLD,
                      margin: float = MC_MARGIN) -> bool:
    """Whether a probability of ``estimates``, ``((probabilities, errors), ...)`` (a fit's
    :func:`~bayescomp.models.hierarchical_runs.region_estimates`, a quadrature's
    ``estimates``), lies within ``margin`` of its errors of ``threshold``
    (:func:`too_close`): at :data:`MC_MARGIN` the close call that a fit's draws are doubled
    for, at :data:`CHECK_MARGIN` where the quadrature is asked."""
    return any(too_close(probabilities, threshold, errors, margin)
               for probabilities, errors in estimates)


def within_margin(probabilities: ArrayLike, threshold: float, mcse: ArrayLike,
                  margin: float = MC_MARGIN) -> np.ndarray:
    """Elementwise, whether a sampled probability neither clears ``threshold`` by
    ``margin`` Monte Carlo standard errors nor falls short of it by more: at
    :data:`MC_MARGIN`, on which side of the threshold it lies the draws cannot tell (any
    number of probabilities, e.g. a ranking's P(best) of every algorithm)."""
    probabilities = np.asarray(probabilities, dtype=float)
    band = margin * np.asarray(mcse, dtype=float)
    return (probabilities - band < threshold) & (probabilities + band >= threshold)


#: P(best) values closer than this are one value: algorithms tied within the ROPE at every
#: draw share the first rank equally, and their shares' sums round differently
P_BEST_TIE = 1e-9


def leaders(p_best: pd.Series, gap_mcse: pd.Series | None = None) -> list[str]:
    """The algorithms that share the largest P(best), in the order of ``p_best``: one name,
    or several that tie. Sampled P(best) tie where the draws cannot tell them from the
    largest: within :data:`MC_MARGIN` times ``gap_mcse``, the Monte Carlo errors of the
    differences between the largest P(best) and each (taken on the same draws, as
    :func:`bayescomp.models.joint_ranks.p_best_mcse` and the ranking estimate them: one
    algorithm's first rank is another's loss, and on the Plackett-Luce rankings of the
    tutorial and the thesis's trees the difference's error was up to 1.4 times what the
    two errors give taken as independent). On the thesis's decision trees four inducers tie
    within the ROPE at almost every draw, and their P(best), 0.24985-0.24997, differ by
    about that error: which of them came first changed with the seed. Exact values
    (``gap_mcse`` None) tie to :data:`P_BEST_TIE`."""
    top = p_best.idxmax()
    tolerance = pd.Series(P_BEST_TIE, index=p_best.index)
    if gap_mcse is not None:
        tolerance += MC_MARGIN * gap_mcse.reindex(p_best.index)
    ahead = p_best >= float(p_best[top]) - tolerance
    return [str(name) for name in p_best.index[ahead.to_numpy()]]


def best_algorithm(p_best: pd.Series, mcse: pd.Series, gap_mcse: pd.Series,
                   threshold: float = THRESHOLD) -> tuple[str | None, bool]:
    """The algorithm named best from every algorithm's sampled P(best), its Monte Carlo
    error ``mcse`` and the errors of the gaps to the largest (``gap_mcse``, see
    :func:`leaders`): the most probably best (the first of :func:`leaders`) where its
    P(best) clears ``threshold`` by :data:`MC_MARGIN` errors, else None; and whether the
    draws cannot tell on which side of the threshold it lies (:func:`within_margin`), so
    that the sentence can say why."""
    if not 0.5 < threshold <= 1:
        raise ValueError(f"threshold must be in (0.5, 1], got {threshold}")
    best = leaders(p_best, gap_mcse)[0]
    probability, error = float(p_best[best]), float(mcse[best])
    named = str(best) if probability - MC_MARGIN * error >= threshold else None
    return named, bool(within_margin(probability, threshold, error))


@dataclass(frozen=True)
class CostDecision(Summarised):
    """Expected cost of each decision under the posterior, and the cheapest decision."""

    decisions: tuple[str, ...]
    expected_costs: np.ndarray
    probabilities: np.ndarray

    @property
    def best(self) -> str:
        return self.decisions[int(np.argmin(self.expected_costs))]

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"decision": self.decisions, "expected_cost": self.expected_costs})

    def summary(self) -> str:
        rows = [f"  {d:<24} {c: .4f}" for d, c in zip(self.decisions, self.expected_costs)]
        return "\n".join(["Expected cost of each decision:", *rows, f"Best decision: {self.best}"])


def expected_cost_decision(probabilities: ArrayLike, costs: ArrayLike,
                           decisions: Sequence[str] | None = None) -> CostDecision:
    """Expected costs of decisions under P(left), P(rope), P(right), and the best decision.

    Parameters
    ----------
    probabilities : array-like of 3 floats
    costs : array-like, shape (n_decisions, 3)
        ``costs[d, r]`` is the cost of taking decision d when the truth is in region r
        (left, rope, right). Negative costs are gains.
    decisions : sequence of str, optional
        Names of the decisions; default "decision 0", "decision 1", ...

    Examples
    --------
    >>> expected_cost_decision([0.1183, 0.6162, 0.2655], [[0, -5, 2], [7, 5, 0]]).expected_costs
    array([-2.55  ,  3.9091])
    """
    probabilities = _as_probabilities(probabilities)
    costs = np.asarray(costs, dtype=float)
    if costs.ndim != 2 or costs.shape[1] != 3 or not np.all(np.isfinite(costs)):
        raise ValueError("costs must be a finite matrix of shape (n_decisions, 3) with columns "
                         f"left, rope, right; got shape {costs.shape}")
    if decisions is None:
        decisions = [f"decision {d}" for d in range(costs.shape[0])]
    if len(decisions) != costs.shape[0]:
        raise ValueError(f"{len(decisions)} decision names for {costs.shape[0]} rows of costs")
    return CostDecision(tuple(decisions), costs @ probabilities, probabilities)
