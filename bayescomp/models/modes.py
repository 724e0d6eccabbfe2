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
3. **Weigh** the modes: each mode's posterior mass by reciprocal importance sampling
   (Gelfand & Dey 1994): ``1 / Z_k = E_k[q_k(theta) / p(theta)]``, where ``p`` is the
   unnormalised log density the engine records at every draw (``lp__``, on the unconstrained
   scale, Jacobians included) and ``q_k`` a normal fitted to the mode's unconstrained draws,
   truncated to its 95% ellipsoid so that its tails are lighter than the posterior's (the
   estimator's variance is then finite). The estimate is only as good as the normal
   approximation: where the draws cannot support it (fewer draws than 5 times the
   dimension, importance ratios whose Pareto k exceeds 0.7, or halves of the draws that
   disagree), the weights are not estimated (NaN).
4. **Decide** without the weights: a mixture's probability of a region lies between the
   smallest and the largest of its modes'. So when every mode reaches the threshold for the
   same region, every mixture of the modes does, whatever the weights; when the modes
   disagree, no decision is made.
"""
from __future__ import annotations

from dataclasses import dataclass

import arviz as az
import numpy as np
from scipy import stats
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.special import logsumexp

from bayescomp.decisions import decide, too_close
from bayescomp.models.convergence import ess_bulk, ess_tail, rank_rhat
from bayescomp.models.diagnostics import ESS_PER_CHAIN_MIN, diagnose

#: the variables whose draws say which mode a chain is in
LOCATORS = ("delta0", "sigma0", "nu")
#: two chains belong to one mode when the largest R-hat of the pair over the variables that
#: locate a mode stays at most this. Chains of one mode with a few hundred effective draws
#: give pair R-hats below 1.02; chains in the two modes of a near-identical pair 1.1-2.
LINK_RHAT = 1.05
#: share of a normal's mass kept by the truncation of the importance density
TRUNCATION = 0.95
#: draws needed per dimension of the unconstrained parameter to fit the importance density
DRAWS_PER_DIMENSION = 5
#: the largest Pareto k of a mode's importance ratios for which its mass is estimated (the
#: PSIS paper's threshold, beyond which a mean of the ratios does not converge usefully)
PARETO_K_MAX = 0.7


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


def log_mass(unconstrained: np.ndarray, log_density: np.ndarray) -> float:
    """Log of the unnormalised posterior mass of one mode, by reciprocal importance sampling.

    Parameters
    ----------
    unconstrained : ndarray (draws, dimension)
        The mode's draws on the unconstrained scale.
    log_density : ndarray (draws,)
        The unnormalised log density at those draws on that scale (Stan's ``lp__``).

    Returns
    -------
    float
        ``log Z`` with ``1 / Z = mean(q(theta) / p(theta))``; NaN when there are too few
        draws for the dimension (:data:`DRAWS_PER_DIMENSION`).
    """
    log_ratio = importance_log_ratios(unconstrained, log_density)
    if log_ratio is None:
        return float("nan")
    return float(-(logsumexp(log_ratio) - np.log(log_ratio.size)))


def importance_log_ratios(unconstrained: np.ndarray, log_density: np.ndarray) -> np.ndarray | None:
    """``log q(theta) - log p(theta)`` at each draw of a mode (-inf outside the truncation
    of ``q``), for :func:`log_mass` and :func:`importance_pareto_k`; None when there are too
    few draws for the dimension (:data:`DRAWS_PER_DIMENSION`)."""
    x = np.asarray(unconstrained, dtype=float)
    n, dimension = x.shape
    if n < DRAWS_PER_DIMENSION * dimension:
        return None
    centre = x.mean(axis=0)
    covariance = np.atleast_2d(np.cov(x, rowvar=False))
    # a coordinate the draws do not move (a bound it sits at) would make the normal singular
    covariance += np.eye(dimension) * 1e-12 * max(1.0, float(np.trace(covariance)) / dimension)
    chol = np.linalg.cholesky(covariance)
    z = np.linalg.solve(chol, (x - centre).T)
    radius2 = np.sum(z ** 2, axis=0)
    inside = radius2 <= stats.chi2.ppf(TRUNCATION, dimension)
    log_q = (-0.5 * radius2 - np.sum(np.log(np.diag(chol))) - 0.5 * dimension * np.log(2 * np.pi)
             - np.log(TRUNCATION))
    return np.where(inside, log_q - np.asarray(log_density, dtype=float), -np.inf)


def importance_pareto_k(unconstrained: np.ndarray, log_density: np.ndarray) -> float:
    """Estimated Pareto shape k of the upper tail of a mode's importance ratios ``q / p``
    (Vehtari, Simpson, Gelman, Yao & Gabry 2024, *Pareto smoothed importance sampling*):
    above :data:`PARETO_K_MAX` their mean, and so :func:`log_mass`, has no usable Monte
    Carlo error. NaN with too few draws."""
    log_ratio = importance_log_ratios(unconstrained, log_density)
    if log_ratio is None:
        return float("nan")
    finite = log_ratio[np.isfinite(log_ratio)]
    _, k = az.psislw(finite - finite.max())
    return float(k)


def mode_weights(groups: list[tuple], unconstrained: np.ndarray,
                 log_density: np.ndarray) -> np.ndarray:
    """Estimated posterior mass of each mode (summing to 1), NaN where it cannot be had.

    ``unconstrained`` is (chain, draw, dimension) and ``log_density`` (chain, draw). A mode's
    estimate is trusted only when its importance ratios have a Pareto k of at most
    :data:`PARETO_K_MAX` (:func:`importance_pareto_k`) and each half of its draws (the first
    and second half of every chain, or of the draws of its one chain) gives a log mass within
    0.5 of the other: the normal approximation is then good enough for weights to a few
    percent. (On the real near-identical pair j48 - j48gr, 4 x 10,000 draws, the heavy-tailed
    mode reaches log(nu - 1) = -18 and the near-normal one holds 2-25% of each chain's draws
    where they cross: both modes' k are 1.16 and 1.39, and the estimate gave the heavy one a
    weight of 0.999995 where the chains spent 0.93 of their draws; refused by this rule.)
    """
    logs = []
    for group in groups:
        x, lp = unconstrained[list(group)], log_density[list(group)]
        half = x.shape[1] // 2
        whole = log_mass(x.reshape(-1, x.shape[-1]), lp.reshape(-1))
        parts = [log_mass(x[:, s].reshape(-1, x.shape[-1]), lp[:, s].reshape(-1))
                 for s in (slice(None, half), slice(half, None))]
        stable = (np.all(np.isfinite(parts)) and abs(parts[0] - parts[1]) <= 0.5
                  and importance_pareto_k(x.reshape(-1, x.shape[-1]),
                                          lp.reshape(-1)) <= PARETO_K_MAX)
        logs.append(whole if stable else np.nan)
    logs = np.asarray(logs)
    if not np.all(np.isfinite(logs)):
        return np.full(len(groups), np.nan)
    return np.exp(logs - logsumexp(logs))


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


def agreed_decision(decisions: list[str]) -> str | None:
    """The decision every mode makes, or None when they differ."""
    return decisions[0] if len(set(decisions)) == 1 else None


def probability_mcse(per_draw: np.ndarray) -> np.ndarray:
    """Monte Carlo standard errors of the means of (chain, draw, 3) per-draw probabilities
    (region indicators, or each draw's masses of the regions): their standard deviations
    over the square roots of their bulk effective sizes (a constant has as many effective
    draws as draws, and no error)."""
    return per_draw.reshape(-1, 3).std(axis=0) / np.sqrt(ess_bulk(per_draw))


def _mode(idata, chains: tuple, weight: float, locators: dict, region_draws, next_draws, *,
          var_names, max_treedepth) -> Mode:
    subset = idata.isel(chain=list(chains))
    check = diagnose(subset, var_names=var_names, max_treedepth=max_treedepth)
    rows = list(chains)
    delta0 = subset.posterior["delta0"].values
    return Mode(chains=chains, weight=float(weight), max_rhat=check.max_rhat,
                min_ess_bulk=check.min_ess_bulk, min_ess_tail=check.min_ess_tail, ok=check.ok,
                location={name: float(np.median(values[rows])) for name, values in locators.items()},
                population=region_draws[rows].reshape(-1, 3).mean(axis=0),
                next_dataset=next_draws[rows].reshape(-1, 3).mean(axis=0),
                population_mcse=probability_mcse(region_draws[rows]),
                next_dataset_mcse=probability_mcse(next_draws[rows]),
                delta0_ess=min(ess_bulk(delta0), ess_tail(delta0)))


def find_modes(idata, unconstrained: np.ndarray, next_masses: np.ndarray, rope, *,
               var_names, max_treedepth: int) -> tuple[tuple, bool, int]:
    """The modes the chains of ``idata`` sit in, whether they are separate, and how many
    groups the chains form (:func:`cluster_chains`).

    Chains are clustered (:func:`cluster_chains`). When there are several clusters and each
    passes the diagnostics on its own chains, they are separate modes, weighed by
    :func:`mode_weights`. Otherwise (chains that move between modes, slowly) every chain is
    a part of its own, unweighed: ``(modes, False, groups)``.

    Parameters
    ----------
    idata : arviz.InferenceData
        The fit on the units of the scores, with ``lp`` in its sample statistics.
    unconstrained : ndarray (chain, draw, dimension)
        The sampled parameters on the scale where ``lp`` is their log density.
    next_masses : ndarray (chain * draw, 3)
        Next-dataset P(left / rope / right) of every draw, chain by chain.
    rope : Rope
    var_names, max_treedepth
        What each mode's diagnostics check, as for the whole fit.
    """
    posterior = idata.posterior
    n_chains, n_draws = posterior.sizes["chain"], posterior.sizes["draw"]
    locators = {name: posterior[name].values for name in LOCATORS if name in posterior}
    delta0 = posterior["delta0"].values
    regions = rope.indicators(delta0)
    masses = next_masses.reshape(n_chains, n_draws, 3)
    options = dict(var_names=var_names, max_treedepth=max_treedepth)
    groups = cluster_chains(locators)
    if len(groups) > 1:
        weights = mode_weights(groups, unconstrained, idata.sample_stats["lp"].values)
        modes = tuple(_mode(idata, group, weight, locators, regions, masses, **options)
                      for group, weight in zip(groups, weights))
        if all(m.ok for m in modes):
            return modes, True, len(groups)
    return tuple(_mode(idata, (chain,), np.nan, locators, regions, masses, **options)
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
    ess = [m.delta0_ess / len(m.chains) for m in modes]
    if np.mean(ess) < ESS_PER_CHAIN_MIN or (groups < 2 and min(ess) < ESS_PER_CHAIN_MIN):
        return False
    for scope in ("population", "next_dataset"):
        pairs = [(getattr(m, scope), getattr(m, f"{scope}_mcse")) for m in modes]
        if len({decide(p, threshold, mcse=e) for p, e in pairs}) != 1 or \
                any(too_close(p, threshold, e) for p, e in pairs):
            return False
    return True


def mixture_indices(modes: tuple, n_chains: int, n_draws: int) -> np.ndarray:
    """Indices of chain-major flattened draws that mix the modes by their weights.

    Each mode contributes ``weight x`` all draws, taken evenly (systematic resampling, no
    randomness) from its own draws; where the weights are not estimated every chain counts
    alike, as sampled.
    """
    weights = np.array([m.weight for m in modes])
    if not np.all(np.isfinite(weights)):
        weights = np.array([len(m.chains) for m in modes], dtype=float)
    weights = weights / weights.sum()
    total = n_chains * n_draws
    counts = np.floor(weights * total).astype(int)
    counts[np.argmax(weights)] += total - counts.sum()
    chunks = []
    for mode, count in zip(modes, counts):
        own = (np.asarray(mode.chains)[:, None] * n_draws + np.arange(n_draws)).ravel()
        chunks.append(own[(np.arange(count) * own.size) // max(count, 1)])
    return np.concatenate(chunks)
