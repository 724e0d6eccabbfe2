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


def p_best_mcse(effects: np.ndarray, rope: Rope, parts=(), weights=(),
                weight_errors=()) -> np.ndarray:
    """Monte Carlo standard error of every algorithm's P(best).

    ``effects`` (chain, draw, copies, K) are the population means at every draw as sampled,
    each draw's copies of delta0 (:data:`~bayescomp.models.joint_program.DELTA0_COPIES`) one
    row each. A draw's share of the first rank, averaged over its copies, is one value per
    draw; its mean's error is :func:`~bayescomp.models.modes.probability_mcse`'s. Chains in
    separate modes mixed by their estimated ``weights`` (``parts``: each mode's chains; none:
    every draw counts as sampled) give
    P(best) = sum_m w_m p_m: the error adds the modes' own errors, times their weights, and
    the weights' errors (``weight_errors``), bounded so: as the weights sum to 1,
    sum_m w_m p_m = c + sum_m w_m (p_m - c) for any c, so with c midway between the modes'
    smallest and largest P(best) its sd is at most half their range times sum_m err(w_m)
    (Cauchy-Schwarz), and is that for two modes, whose weights move together.
    """
    chains, draws, copies, k = effects.shape
    places = tie_places(effects.reshape(-1, k), True, max(rope.high, 0.0))
    first = rank_shares(places, 0).reshape(chains, draws, copies, k).mean(axis=2)
    weights = np.asarray(weights, dtype=float)
    if not len(parts):      # every draw as sampled
        return probability_mcse(first)
    weights = weights / weights.sum()
    probabilities = np.array([first[list(part)].mean(axis=(0, 1)) for part in parts])
    errors = np.array([probability_mcse(first[list(part)]) for part in parts])
    spread = ((probabilities.max(axis=0) - probabilities.min(axis=0)) / 2
              * np.sum(np.asarray(weight_errors, dtype=float)))
    return np.sqrt((weights ** 2) @ (errors ** 2) + spread ** 2)
