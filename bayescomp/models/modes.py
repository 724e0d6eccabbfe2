"""Chains that settle in different modes of a posterior, each mode's mass, and what can still
be decided.

On near-identical algorithms the hierarchical model's posterior has two modes: a
heavy-tailed population (nu near 1, a tiny sigma0) and a near-normal one (nu in the bulk of
its prior). The plain reference program splits its chains between them too, so no
parameterisation removes it, and continuing chains that sit in separate modes does not make
them cross. What can be done, and is done here:

1. **Detect** the modes: chains are clustered by how far they agree. The distance of two
   chains is the largest rank-normalised split R-hat (Vehtari et al. 2021) of the two
   together over the variables that locate a mode (delta0, sigma0, nu); complete linkage,
   cut at :data:`LINK_RHAT`. A mode is a cluster of chains that agree with each other and
   not with the rest.
2. **Check** every mode on its own, as one would a fit: R-hat at most 1.01 and 100
   effective draws per chain over every reported variable of its chains.
3. **Weigh** the modes: each mode's posterior mass by bridge sampling against a normal
   fitted to its draws, the space partitioned between the modes
   (:mod:`bayescomp.models.mode_mass`). Where a weight is not good to
   :data:`WEIGHT_ERROR_MAX` (too few draws for the dimension, modes that are not
   separate, halves of the draws that disagree), the weights are not reported (NaN).
4. **Decide** without the weights: a mixture's probability of a region lies between the
   smallest and the largest of its modes'. So when every mode reaches the threshold for the
   same region, every mixture of the modes does, whatever the weights; when the modes
   disagree, no decision is made.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.special import logsumexp

from bayescomp.decisions import decide, too_close
from bayescomp.models.convergence import ess_bulk, ess_tail, rank_rhat
from bayescomp.models.diagnostics import ESS_PER_CHAIN_MIN, diagnose
from bayescomp.models.mode_mass import log_masses

#: the variables whose draws say which mode a chain is in
LOCATORS = ("delta0", "sigma0", "nu")
#: two chains belong to one mode when the largest R-hat of the pair over the variables that
#: locate a mode stays at most this. Chains of one mode with a few hundred effective draws
#: give pair R-hats below 1.02; chains in the two modes of a near-identical pair 1.1-2.
LINK_RHAT = 1.05
#: the largest standard error of a mode's weight for which the modes' weights are reported
#: (from the errors of the log masses, to first order; see benchmarks/results/mode_mass.md)
WEIGHT_ERROR_MAX = 0.05


def chain_distances(locators: dict[str, np.ndarray]) -> np.ndarray:
    """Largest pair R-hat minus 1 of every two chains over the ``locators`` (chain, draw)."""
    n_chains = next(iter(locators.values())).shape[0]
    pairs = [(a, b) for a in range(n_chains) for b in range(a + 1, n_chains)]
    distance = np.zeros((n_chains, n_chains))
    if not pairs:
        return distance
    # every pair's locators as the quantities of one two-chain array
    together = np.stack([values[[a, b]] for a, b in pairs for values in locators.values()],
                        axis=-1)
    # a locator constant over both chains (R-hat NaN) does not tell them apart
    rhat = np.nan_to_num(rank_rhat(together), nan=1.0).reshape(len(pairs), len(locators))
    for (a, b), largest in zip(pairs, rhat.max(axis=1)):
        # R-hat falls a little below 1 by chance; a distance cannot
        distance[a, b] = distance[b, a] = max(0.0, largest - 1)
    return distance


def cluster_chains(locators: dict[str, np.ndarray], link: float = LINK_RHAT) -> list[tuple]:
    """Chains grouped into modes (complete linkage of :func:`chain_distances` cut at ``link``),
    largest group first, chains in order within a group."""
    distance = chain_distances(locators)
    n_chains = distance.shape[0]
    if n_chains < 2:
        return [tuple(range(n_chains))]
    condensed = distance[np.triu_indices(n_chains, 1)]
    labels = fcluster(linkage(condensed, method="complete"), t=link - 1, criterion="distance")
    groups = [tuple(int(c) for c in np.flatnonzero(labels == k)) for k in np.unique(labels)]
    return sorted(groups, key=lambda g: (-len(g), g))


def weigh_modes(groups: list[tuple], unconstrained: np.ndarray,
                log_density: Callable[[np.ndarray], np.ndarray],
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, str | None]:
    """Estimated posterior mass of each mode (summing to 1), the standard errors of these
    weights, and why they are not reported (None when they are).

    ``unconstrained`` is (chain, draw, dimension), ``log_density`` the posterior's
    unnormalised log density at points (n, dimension) of that scale, ``rng`` draws the
    proposals (:func:`bayescomp.models.mode_mass.log_masses`). The weights are all NaN
    where any mode's log mass cannot be estimated (its errors NaN too) or any weight has a
    standard error above :data:`WEIGHT_ERROR_MAX` (the errors then say how far).
    """
    logs, errors = log_masses(groups, unconstrained, log_density, rng)
    missing = np.full(len(groups), np.nan)
    if not np.all(np.isfinite(logs)):
        return missing, missing, (
            "bridge sampling could not estimate a mode's mass (too few draws for the "
            "dimension, or more than 5% of a mode's draws in another mode's region)")
    weights = np.exp(logs - logsumexp(logs))
    # d w_k / d log Z_j = w_k (1[k = j] - w_j), the log masses' errors independent
    jacobian = weights[:, None] * (np.eye(weights.size) - weights[None, :])
    weight_errors = np.sqrt((jacobian ** 2) @ errors ** 2)
    if weight_errors.max() > WEIGHT_ERROR_MAX:
        return missing, weight_errors, (
            f"bridge sampling's weights have a standard error of {weight_errors.max():.2g}, "
            f"above {WEIGHT_ERROR_MAX} (the halves of the draws disagree, or the normal "
            "proposal misses a mode's tails)")
    return weights, weight_errors, None


def mode_weights(groups: list[tuple], unconstrained: np.ndarray,
                 log_density: Callable[[np.ndarray], np.ndarray],
                 rng: np.random.Generator) -> np.ndarray:
    """The weights of :func:`weigh_modes` alone: estimated posterior mass of each mode
    (summing to 1), all NaN where they cannot be had to :data:`WEIGHT_ERROR_MAX`."""
    return weigh_modes(groups, unconstrained, log_density, rng)[0]


@dataclass(frozen=True)
class Mode:
    """One mode of the posterior (or, where chains cross between modes, one chain), as the
    chains in it see it.

    Attributes
    ----------
    chains : tuple of int
        The chains (0-based) in this mode.
    weight : float
        Estimated posterior mass (:func:`mode_weights`); NaN when not estimated.
    max_rhat, min_ess_bulk, min_ess_tail : float
        Diagnostics over the mode's own chains and every reported variable.
    ok : bool
        The mode passes them (R-hat at most 1.01, 100 effective draws per chain).
    location : dict
        Posterior medians of the variables that locate the mode (delta0, sigma0, nu).
    population, next_dataset : ndarray
        P(left), P(rope), P(right) of delta0 and of the next dataset within the mode.
    population_mcse, next_dataset_mcse : ndarray
        Their Monte Carlo standard errors, from the effective draws of the mode's chains.
    delta0_ess : float
        The smaller of delta0's bulk and tail effective sizes in the mode's chains.
    stratum : tuple
        For a stratum of draws (:mod:`bayescomp.models.strata`) rather than a mode: the
        locator it is a stratum of and its bounds, (name, low, high); else empty.
    """

    chains: tuple
    weight: float
    max_rhat: float
    min_ess_bulk: float
    min_ess_tail: float
    ok: bool
    location: dict
    population: np.ndarray
    next_dataset: np.ndarray
    population_mcse: np.ndarray
    next_dataset_mcse: np.ndarray
    delta0_ess: float
    stratum: tuple = ()


def decide_alike(probabilities, mcse, threshold: float) -> bool:
    """Whether every part (a mode or a chain) with these P(left / rope / right) and Monte
    Carlo errors makes the same decision, none of them within two errors of the threshold:
    then so does every mixture of the parts."""
    pairs = list(zip(probabilities, mcse))
    return (len({decide(p, threshold, mcse=e) for p, e in pairs}) == 1
            and not any(too_close(p, threshold, e) for p, e in pairs))


def parts_decide_alike(parts: tuple, threshold: float) -> bool:
    """Whether the parts (:class:`Mode`: modes, chains or strata) all make the same decisions
    on delta0 and on the next dataset, each with a margin of two Monte Carlo errors
    (:func:`decide_alike`)."""
    return all(decide_alike([getattr(part, scope) for part in parts],
                            [getattr(part, f"{scope}_mcse") for part in parts], threshold)
               for scope in ("population", "next_dataset"))


def agreed_decision(decisions: list[str]) -> str | None:
    """The decision every mode makes, or None when they differ."""
    return decisions[0] if len(set(decisions)) == 1 else None


def probability_mcse(per_draw: np.ndarray) -> np.ndarray:
    """Monte Carlo standard errors of the means of (chain, draw, m) per-draw probabilities
    (region indicators, each draw's masses of the three regions, or every algorithm's share
    of the first rank): their standard deviations over the square roots of their bulk
    effective sizes (a constant has as many effective draws as draws, and no error)."""
    return per_draw.reshape(-1, per_draw.shape[-1]).std(axis=0) / np.sqrt(ess_bulk(per_draw))


def _mode(idata, chains: tuple, weight: float, locators: dict, population_draws, next_draws,
          *, var_names, max_treedepth) -> Mode:
    subset = idata.isel(chain=list(chains))
    check = diagnose(subset, var_names=var_names, max_treedepth=max_treedepth)
    rows = list(chains)
    delta0 = subset.posterior["delta0"].values
    return Mode(chains=chains, weight=float(weight), max_rhat=check.max_rhat,
                min_ess_bulk=check.min_ess_bulk, min_ess_tail=check.min_ess_tail, ok=check.ok,
                location={name: float(np.median(values[rows])) for name, values in locators.items()},
                population=population_draws[rows].reshape(-1, 3).mean(axis=0),
                next_dataset=next_draws[rows].reshape(-1, 3).mean(axis=0),
                population_mcse=probability_mcse(population_draws[rows]),
                next_dataset_mcse=probability_mcse(next_draws[rows]),
                delta0_ess=min(ess_bulk(delta0), ess_tail(delta0)))


def find_modes(idata, unconstrained: np.ndarray, log_density: Callable,
               population_masses: np.ndarray, next_masses: np.ndarray, *,
               rng: np.random.Generator, var_names, max_treedepth: int) -> tuple[tuple, bool, int]:
    """The modes the chains of ``idata`` sit in, whether they are separate, and how many
    groups the chains form (:func:`cluster_chains`).

    Chains are clustered (:func:`cluster_chains`). When there are several clusters and each
    passes the diagnostics on its own chains, they are separate modes, weighed by
    :func:`mode_weights`. Otherwise (chains that move between modes, slowly) every chain is
    a part of its own, unweighed: ``(modes, False, groups)``.

    Parameters
    ----------
    idata : arviz.InferenceData
        The fit on the units of the scores.
    unconstrained : ndarray (chain, draw, dimension)
        The sampled parameters on Stan's unconstrained scale.
    log_density : callable
        The posterior's unnormalised log density at points (n, dimension) of that scale.
    population_masses, next_masses : ndarray (chain, draw, 3)
        P(left / rope / right) of delta0 and of the next dataset, per draw
        (:mod:`bayescomp.models.region_masses`).
    rng : numpy.random.Generator
        Draws the proposals that weigh separate modes (:func:`mode_weights`).
    var_names, max_treedepth
        What each mode's diagnostics check, as for the whole fit.
    """
    posterior = idata.posterior
    n_chains, n_draws = posterior.sizes["chain"], posterior.sizes["draw"]
    locators = {name: posterior[name].values for name in LOCATORS if name in posterior}
    population = population_masses.reshape(n_chains, n_draws, 3)
    masses = next_masses.reshape(n_chains, n_draws, 3)
    options = dict(var_names=var_names, max_treedepth=max_treedepth)
    groups = cluster_chains(locators)
    if len(groups) > 1:
        modes = tuple(_mode(idata, group, np.nan, locators, population, masses, **options)
                      for group in groups)
        if all(m.ok for m in modes):
            weights = mode_weights(groups, unconstrained, log_density, rng)
            return (tuple(replace(m, weight=float(w)) for m, w in zip(modes, weights)), True,
                    len(groups))
    return tuple(_mode(idata, (chain,), np.nan, locators, population, masses, **options)
                 for chain in range(n_chains)), False, len(groups)


def settled_decisions(modes: tuple, separate: bool, threshold: float, groups: int = 1) -> bool:
    """Whether a fit whose chains do not mix can still decide.

    Separate modes that each pass their diagnostics always can (where they disagree, the
    decision is that they do). Chains that move slowly between modes can when each chain
    makes the same decision on delta0 and on the next dataset with a margin of two Monte
    Carlo standard errors: each chain's draws come from a mixture of the modes, and when
    every such mixture reaches the threshold for one region (or none does), so does the
    posterior. A fit too short to have found its way must not decide by agreeing, so the
    chains must hold 100 effective draws of delta0 (bulk and tail) per chain, each counted
    within its own chain; and unless the chains form several groups (``groups``, evidence of
    modes rather than of too few draws), every chain must hold them. (A chain that crosses
    between modes where delta0 sits slightly differently has few effective draws of delta0;
    its margin, computed from them, already says how far its decision can be trusted.)
    """
    if separate:
        return True
    return found_their_way(modes, groups) and parts_decide_alike(modes, threshold)


def found_their_way(modes: tuple, groups: int = 1) -> bool:
    """Whether chains read one by one (``modes``) hold enough effective draws of delta0 to
    be trusted where they are: :data:`ESS_PER_CHAIN_MIN` per chain, each counted within its
    own chain, on average and, unless the chains form several ``groups`` (evidence of
    modes rather than of too few draws), in every chain (:func:`settled_decisions`)."""
    ess = [m.delta0_ess / len(m.chains) for m in modes]
    return bool(ess and np.mean(ess) >= ESS_PER_CHAIN_MIN
                and (groups > 1 or min(ess) >= ESS_PER_CHAIN_MIN))


def mixture_indices(parts, weights, n_chains: int, n_draws: int) -> np.ndarray:
    """Indices of chain-major flattened draws that mix the ``parts`` (tuples of chains) by
    their ``weights``.

    Each part contributes ``weight x`` all draws, taken evenly (systematic resampling, no
    randomness) from its own draws; where the weights are not estimated (any NaN) every
    chain counts alike, as sampled.
    """
    weights = np.asarray(weights, dtype=float)
    if not np.all(np.isfinite(weights)):
        weights = np.array([len(chains) for chains in parts], dtype=float)
    weights = weights / weights.sum()
    total = n_chains * n_draws
    counts = np.floor(weights * total).astype(int)
    counts[np.argmax(weights)] += total - counts.sum()
    chunks = []
    for chains, count in zip(parts, counts):
        own = (np.asarray(chains)[:, None] * n_draws + np.arange(n_draws)).ravel()
        chunks.append(own[(np.arange(count) * own.size) // max(count, 1)])
    return np.concatenate(chunks)
