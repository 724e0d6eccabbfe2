"""Draws read in strata of the quantity that mixes slowest, where chains cross between modes
too often to be read as separate modes and too slowly to be read one by one.

On real collections with few folds (bbtcomp's 4-fold study: knn against xgboost) nu's
posterior has a main mode near 2 and a second one near 20 holding about a tenth of the
mass. Every chain visits both, but only every few hundred draws: nu's R-hat stays above 1.01
and no chain holds the 100 effective draws of delta0 that :func:`modes.settled_decisions`
asks of a chain read on its own, even after 4,000 draws a chain. What each value of nu
implies is sampled well all the same; only how much mass each region of nu holds is not.

A probability of a region is the mixture, over strata S_1..S_K of the slowest locator, of
its conditional probabilities: P = sum_k P(S_k) P(region | S_k). So when every stratum's
conditional probability makes the same decision with a margin of two Monte Carlo errors,
every mixture of them does, whatever the P(S_k) (the argument of :mod:`modes`, with strata in
place of modes).

Each stratum's conditional probability is the ratio estimate r_k = sum_t m_t 1[t in S_k] /
sum_t 1[t in S_k] of the per-draw masses m_t, and its Monte Carlo error, by the delta method,
sd(y) / sqrt(ESS(y)) / p_k with y_t = (m_t - r_k) 1[t in S_k], ESS the mean's effective size
(:func:`convergence.ess_mean`, over the chains as sampled) and p_k the share of the draws in
S_k. The strata are the quartiles of the locator whose bulk ESS is smallest (delta0, sigma0
or nu) over all draws.
"""
from __future__ import annotations

import numpy as np

from bayescomp.models.convergence import ess_bulk, ess_mean
from bayescomp.models.diagnostics import ESS_PER_CHAIN_MIN
from bayescomp.models.modes import LOCATORS, Mode, parts_decide_alike

#: how many strata (of equal shares of the draws) the slowest locator is cut into
N_STRATA = 4
#: chains that must visit a stratum: a region only one chain has seen is that chain's mode,
#: which :func:`modes.find_modes` reads, not a stratum
MIN_CHAINS = 2


def ratio_estimate(masses: np.ndarray, inside: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                    np.ndarray]:
    """The mean of (chain, draw, m) per-draw ``masses`` over the draws ``inside`` (chain, draw)
    a stratum, its Monte Carlo standard errors and the effective sizes they rest on (the
    delta method for a ratio of means; a constant has as many effective draws as draws)."""
    share = inside.mean()
    estimate = masses[inside].mean(axis=0)
    residual = (masses - estimate) * inside[..., None]
    ess = np.asarray(ess_mean(residual), dtype=float)
    spread = residual.reshape(-1, masses.shape[-1]).std(axis=0)
    # masses equal within the stratum (to rounding: the residuals of equal values are ~1e-16)
    constant = spread < 1e-12
    ess[constant] = inside.size
    mcse = np.where(constant, 0.0, spread / np.sqrt(ess) / share)
    return estimate, mcse, ess


def slowest_locator(posterior) -> str:
    """The locator (:data:`modes.LOCATORS`) with the smallest bulk ESS."""
    present = [name for name in LOCATORS if name in posterior]
    return min(present, key=lambda name: ess_bulk(posterior[name].values))


def strata_parts(posterior, population_masses: np.ndarray,
                 next_masses: np.ndarray) -> tuple[Mode, ...]:
    """The strata of the slowest locator, each as a :class:`modes.Mode` (unweighed; its
    ``stratum`` names the locator and the stratum's bounds); none where a quartile is empty.

    Parameters
    ----------
    posterior : xarray.Dataset
        The draws on the units of the scores.
    population_masses, next_masses : ndarray (chain, draw, 3)
        P(left / rope / right) of delta0 and of the next dataset, per draw.
    """
    name = slowest_locator(posterior)
    locator = posterior[name].values
    # quantiles of all draws; the top edge nudged up so that the largest draw is inside
    edges = np.quantile(locator, np.linspace(0, 1, N_STRATA + 1))
    edges[-1] = np.nextafter(edges[-1], np.inf)
    locators = {key: posterior[key].values for key in LOCATORS if key in posterior}
    parts = []
    for low, high in zip(edges[:-1], edges[1:]):
        inside = (locator >= low) & (locator < high)
        if not inside.any():
            return ()     # quartiles that meet on tied draws: a stuck sampler, no strata
        population, population_mcse, population_ess = ratio_estimate(population_masses,
                                                                     inside)
        next_dataset, next_mcse, next_ess = ratio_estimate(next_masses, inside)
        ess = float(min(population_ess.min(), next_ess.min()))
        parts.append(Mode(
            chains=tuple(int(c) for c in np.flatnonzero(inside.any(axis=1))),
            weight=np.nan, max_rhat=np.nan, min_ess_bulk=ess, min_ess_tail=ess,
            ok=True, location={key: float(np.median(values[inside]))
                               for key, values in locators.items()},
            population=population, next_dataset=next_dataset,
            population_mcse=population_mcse, next_dataset_mcse=next_mcse,
            delta0_ess=ess, stratum=(name, float(low), float(high))))
    return tuple(parts)


def strata_decide(parts: tuple[Mode, ...], n_chains: int, threshold: float) -> bool:
    """Whether the strata settle both questions: each seen by :data:`MIN_CHAINS` chains and
    resting on 100 effective draws per chain, all making the same decisions with a margin of
    two Monte Carlo errors."""
    if not parts or any(len(part.chains) < MIN_CHAINS
                        or part.delta0_ess < ESS_PER_CHAIN_MIN * n_chains for part in parts):
        return False
    return parts_decide_alike(parts, threshold)
