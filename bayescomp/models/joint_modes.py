"""Chains of the joint model that do not mix: their modes' weights, and what can still be
decided, pair by pair.

At K = 2, and whenever every contrast of the K algorithms is near-identical, the joint
model's posterior has the two modes of the pairwise model (:mod:`bayescomp.models.modes`):
a heavy-tailed population (nu near 1) and a near-normal one. The rule is the pairwise
model's, applied to every pair and both questions:

- The chains are clustered by how far they agree on the variables that locate a mode (nu,
  sigma0 and every pair's delta0; :func:`bayescomp.models.modes.cluster_chains`). When
  there are several clusters and each passes the diagnostics on its own chains, they are
  separate modes; a pair's decision is then the one every mode makes, else "undecided (the
  modes disagree)" (:func:`bayescomp.decisions.decide_modes`): a mixture's probability of a
  region lies between its modes', whatever the weights.
- Separate modes are weighed as the pairwise model weighs its own: each mode's posterior
  mass by bridge sampling (:func:`bayescomp.models.modes.weigh_modes`) on the program's
  log density in numpy (:mod:`bayescomp.models.joint_density`). With the weights,
  :func:`bayescomp.compare_many` mixes the modes' draws by them
  (:func:`bayescomp.models.modes.mixture_indices`), so the summary numbers, P(best), the
  ranks and the pair table's probabilities are the posterior's; where bridge sampling
  fails its own checks (a mode's draws straying into another's region, halves that
  disagree, a weight's error above 0.05), the chains count alike, as sampled, and
  :attr:`JointModes.weights_note` says why.
- Otherwise each chain is a part of its own, and the fit decides only when, for every
  pair and question, each chain makes the same decision by a margin of two Monte Carlo
  errors (:func:`bayescomp.models.modes.decide_alike`), with 100 effective draws of every
  pair's delta0 in every chain (what :func:`bayescomp.models.modes.settled_decisions` asks
  of chains in one group). Such parts are not weighed: chains that cross between modes
  slowly hold an unknown mixture of them each.

:func:`bayescomp.compare_many` stops retrying when the chains form several groups (modes,
which more draws rarely join); chains in one group only mix slowly, so they are retried
with more draws first and read one by one only when the retries are spent.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from bayescomp.models.convergence import ess_bulk, ess_tail
from bayescomp.models.diagnostics import ESS_PER_CHAIN_MIN, diagnose
from bayescomp.models.modes import cluster_chains, decide_alike, probability_mcse, weigh_modes


@dataclass(frozen=True)
class JointModes:
    """Where the joint model's chains settled, and what every part of them reads.

    Attributes
    ----------
    parts : tuple of tuple of int
        The chains (0-based) of each mode when ``separate``, else one chain per part.
    separate : bool
        The chains form separate modes that each pass their diagnostics.
    groups : int
        How many groups the chains form: more than one is evidence of modes, where more
        draws rarely help; one is a fit that only mixes slowly, where they do.
    probabilities, mcse : dict
        ``(scope, pair index) -> tuple`` of each part's P(left), P(rope), P(right) and their
        Monte Carlo standard errors (scope "population" or "next_dataset").
    weights, weight_errors : ndarray
        Each part's estimated posterior mass (summing to 1) and its standard error, for
        separate modes (:func:`bayescomp.models.modes.weigh_modes`); NaN where not
        estimated (the errors may still say how far off they were).
    weights_note : str or None
        Why separate modes have no weights (None where they have, or where the parts are
        chains, which are not weighed).
    """

    parts: tuple
    separate: bool
    groups: int
    probabilities: dict
    mcse: dict
    weights: np.ndarray = field(default_factory=lambda: np.array([]))
    weight_errors: np.ndarray = field(default_factory=lambda: np.array([]))
    weights_note: str | None = None

    @property
    def weighed(self) -> bool:
        """Whether the parts are separate modes with estimated weights."""
        return self.separate and self.weights.size > 0 and bool(np.all(np.isfinite(self.weights)))

    def settled(self, threshold: float) -> bool:
        """Whether the decisions can stand: always for separate modes (where they disagree
        the decision says so), else only when every chain decides every pair alike."""
        return self.separate or all(decide_alike(parts, self.mcse[key], threshold)
                                    for key, parts in self.probabilities.items())


def find_joint_modes(idata, population: np.ndarray, next_masses: np.ndarray, *, var_names,
                     max_treedepth: int, unconstrained: np.ndarray | None = None,
                     log_density: Callable[[np.ndarray], np.ndarray] | None = None,
                     rng: np.random.Generator | None = None) -> JointModes | None:
    """The parts of a fit whose chains do not mix (module notes), or None when the chains
    hold too few effective draws of some pair's delta0 to read them chain by chain.

    Parameters
    ----------
    idata : arviz.InferenceData
        The fit in score units (:func:`bayescomp.models.joint_posterior.pair_posterior`).
    population, next_masses : ndarray (chain, draw, pair, 3)
        Every draw's probabilities of the regions of the ROPE, of delta0
        (:func:`bayescomp.models.joint_posterior.population_masses`) and of the next dataset.
    var_names, max_treedepth
        What each mode's diagnostics check, as for the whole fit.
    unconstrained : ndarray (chain, draw, dimension), optional
        The sampled parameters on Stan's unconstrained scale
        (:func:`bayescomp.models.joint_density.unconstrained`).
    log_density : callable, optional
        The posterior's unnormalised log density at points (n, dimension) of that scale.
    rng : numpy.random.Generator, optional
        Draws bridge sampling's proposals. Without these three, separate modes are not
        weighed.
    """
    post = idata.posterior
    delta0 = post["delta0"].values                              # chain, draw, pair
    n_chains, n_pairs = delta0.shape[0], delta0.shape[-1]
    locators = {"sigma0": post["sigma0"].values, "nu": post["nu"].values,
                **{f"delta0 {p}": delta0[..., p] for p in range(n_pairs)}}
    groups = cluster_chains(locators)
    separate = len(groups) > 1 and all(
        diagnose(idata.isel(chain=list(group)), var_names=var_names,
                 max_treedepth=max_treedepth).ok for group in groups)
    parts = tuple(groups) if separate else tuple((chain,) for chain in range(n_chains))
    missing = np.full(len(parts), np.nan)
    weights, weight_errors, note = missing, missing, None
    if separate:
        if log_density is None or unconstrained is None or rng is None:
            note = "not weighed (no log density given)"
        else:
            weights, weight_errors, note = weigh_modes(list(groups), unconstrained,
                                                       log_density, rng)
    else:
        # a chain too short to have found its way must not decide by agreeing
        per_chain = min(min(ess_bulk(delta0[[c], :, p]), ess_tail(delta0[[c], :, p]))
                        for c in range(n_chains) for p in range(n_pairs))
        if not per_chain >= ESS_PER_CHAIN_MIN:
            return None
    probabilities, mcse = part_probabilities(population, next_masses, parts)
    return JointModes(parts=parts, separate=separate, groups=len(groups),
                      probabilities=probabilities, mcse=mcse, weights=weights,
                      weight_errors=weight_errors, weights_note=note)


def part_probabilities(population: np.ndarray, next_masses: np.ndarray,
                       parts) -> tuple[dict, dict]:
    """Each part's P(left), P(rope), P(right) of every pair's delta0 and next dataset, from
    every draw's probabilities of the regions (``population``, ``next_masses``: chain, draw,
    pair, 3), and their Monte Carlo errors: ``(scope, pair index) -> tuple`` over the parts
    (tuples of chains)."""
    probabilities, mcse = {}, {}
    for p in range(population.shape[-2]):
        for scope, per_draw in (("population", population[:, :, p]),
                                ("next_dataset", next_masses[:, :, p])):
            probabilities[(scope, p)] = tuple(per_draw[list(part)].reshape(-1, 3).mean(axis=0)
                                              for part in parts)
            mcse[(scope, p)] = tuple(probability_mcse(per_draw[list(part)]) for part in parts)
    return probabilities, mcse
