"""The joint model's ranks: each algorithm's probability of every rank of the population
means, ties within the ROPE sharing their places (:func:`bayescomp.models.ranking.tie_places`
groups them as the Plackett-Luce ranking groups mean scores), and the Monte Carlo error of
P(best), which the best-algorithm verdicts clear the threshold by, as every decision does."""
from __future__ import annotations

import numpy as np
import pandas as pd

from bayescomp.models.modes import probability_mcse
from bayescomp.models.ranking import tie_places
from bayescomp.rope import Rope


def rank_shares(places: tuple, rank: int) -> np.ndarray:
    """Rows x K: each algorithm's share of rank ``rank`` (0 the first) in every row, from
    the rows' :func:`~bayescomp.models.ranking.tie_places`: an algorithm in a tie group of g
    that holds the rank takes 1/g of it."""
    order, start, end = places
    rows, k = order.shape
    shares = np.zeros((rows, k))
    for place in range(k):
        share = ((start[:, place] <= rank) & (rank < end[:, place])) / (end - start)[:, place]
        shares[np.arange(rows), order[:, place]] += share
    return shares


def rank_probabilities(effects: np.ndarray, rope: Rope, algorithms) -> pd.DataFrame:
    """Algorithms x ranks 1..K: the probability of each rank of the population means
    ``effects`` (draws x K), ties within the ROPE sharing their places."""
    places = tie_places(effects, True, max(rope.high, 0.0))
    k = effects.shape[1]
    shares = np.column_stack([rank_shares(places, rank).mean(axis=0) for rank in range(k)])
    return pd.DataFrame(shares, index=pd.Index(list(algorithms), name="algorithm"),
                        columns=pd.Index(range(1, k + 1), name="rank"))


def p_best_mcse(effects: np.ndarray, rope: Rope, top: int, parts=(), weights=(),
                weight_errors=()) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo standard errors of every algorithm's P(best), and of the gap between the
    P(best) of algorithm ``top`` (the largest) and each (0 for ``top`` itself), the
    errors that :func:`bayescomp.decisions.leaders` ties the lead by.

    ``effects`` (chain, draw, copies, K) are the population means at every draw as sampled,
    each draw's copies of delta0 (:data:`~bayescomp.models.joint_program.DELTA0_COPIES`) one
    row each. A draw's share of the first rank, averaged over its copies, is one value per
    draw, and a gap the difference of two such values on the same draw (where one
    algorithm gains the first rank another loses it, and where they tie both hold it, so
    the two errors do not add as if independent); the error of their means is
    :func:`~bayescomp.models.modes.probability_mcse`'s. Chains in separate modes mixed by
    their estimated ``weights`` (``parts``: each mode's chains; none: every draw counts as
    sampled) give P(best) = sum_m w_m p_m: the error adds the modes' own errors, times
    their weights, and the weights' errors (``weight_errors``), bounded so: as the weights
    sum to 1, sum_m w_m p_m = c + sum_m w_m (p_m - c) for any c, so with c midway between
    the modes' smallest and largest P(best) its sd is at most half their range times
    sum_m err(w_m) (Cauchy-Schwarz), and is that for two modes, whose weights move
    together. A gap's error is formed alike from its per-draw values.
    """
    chains, draws, copies, k = effects.shape
    places = tie_places(effects.reshape(-1, k), True, max(rope.high, 0.0))
    first = rank_shares(places, 0).reshape(chains, draws, copies, k).mean(axis=2)
    gaps = first[..., [top]] - first
    return (_mixture_mcse(first, parts, weights, weight_errors),
            _mixture_mcse(gaps, parts, weights, weight_errors))


def _mixture_mcse(per_draw: np.ndarray, parts, weights, weight_errors) -> np.ndarray:
    """The error of the means of (chain, draw, K) per-draw values, every draw as sampled or
    the modes ``parts`` mixed by ``weights`` (:func:`p_best_mcse`)."""
    if not len(parts):      # every draw as sampled
        return probability_mcse(per_draw)
    weights = np.asarray(weights, dtype=float)
    weights = weights / weights.sum()
    means = np.array([per_draw[list(part)].mean(axis=(0, 1)) for part in parts])
    errors = np.array([probability_mcse(per_draw[list(part)]) for part in parts])
    spread = ((means.max(axis=0) - means.min(axis=0)) / 2
              * np.sum(np.asarray(weight_errors, dtype=float)))
    return np.sqrt((weights ** 2) @ (errors ** 2) + spread ** 2)
