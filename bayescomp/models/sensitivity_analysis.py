"""How the verdict of the hierarchical model moves with the prior and the ROPE.

:func:`sensitivity` reads every ROPE width off the same draws (the posterior does not depend
on the ROPE, only the regions the draws are counted in do), and every prior that differs from
an earlier one only in the prior of nu off that prior's draws, reweighted by Pareto-smoothed
importance sampling (:mod:`bayescomp.models.prior_reweighting`) where the weights allow it;
every other prior gets a fit of its own. For each (prior, ROPE) it reports P(left / rope /
right) of ``delta0`` and of the next dataset, from the per-draw masses
:func:`bayescomp.hierarchical` reports them from (:mod:`bayescomp.models.region_masses`), with
the decision at the threshold. A fit that the quadrature answers (its chains did not mix,
or its probabilities were too close to call; :mod:`bayescomp.models.quadrature`) is read at
every other ROPE by one quadrature of the
same posterior, and no prior is read off its draws; every later prior that differs from it
only in nu's prior is read by quadrature alone, without a fit (its chains would meet the same
modes): on the same grid (only nu's prior changes at its nodes) where its error is within
the tolerance at every ROPE, else on its own grid, else by a fit. A fit read in modes (they
agree at its ROPE) is read at each other ROPE as :func:`bayescomp.hierarchical` at that ROPE
would read it: by its modes where their probabilities agree there too, else by the
quadrature; and so is a fit that passed its diagnostics: by its draws, but by the quadrature
at a ROPE where a probability of the draws lies within four Monte Carlo errors of the
threshold and the quadrature's own error places it clear of it (the tutorial's aode - j48gr
at 0.01 then reads 0.9481 by quadrature, as the fit at that ROPE does, not 0.9462 from draws
of a fit at 0). A prior reweighted off a clean fit is read likewise where its own weighted
estimate is too close to call, by the quadrature of its own posterior.

(The module is not called ``sensitivity``: importing a submodule sets the package attribute
of its name, which would hide the function ``bayescomp.sensitivity``.)
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayescomp.data.scores import Scores
from bayescomp.decisions import THRESHOLD, UNRELIABLE, decide, decide_modes
from bayescomp.models.hierarchical_prior import PRIORS, HierarchicalPrior, resolve_prior
from bayescomp.models.modes import probability_mcse
from bayescomp.models.prior_reweighting import (Reweighting, differs_only_in_nu, reweighting,
                                                weighted_decision, weighted_estimate)
from bayescomp.models.region_masses import next_dataset_masses, population_masses
from bayescomp.models.sensitivity_quadrature import (by_quadrature, close_calls,
                                                     modes_or_quadrature, quadrature_alone,
                                                     quadrature_rows, reweighted_close_calls)
from bayescomp.models.sensitivity_result import QUANTITIES, SensitivityResult
from bayescomp.rope import Rope, region_labels

if TYPE_CHECKING:
    from typing import Mapping, Sequence
    from bayescomp.annotations import RopeLike

# the module, not the function bayescomp.hierarchical that shadows it as a package attribute
_hierarchical = importlib.import_module(".hierarchical", __package__)

#: default ROPE half-widths, for scores given as fractions (0.01 is one point of accuracy);
#: multiplied by 100 for scores given as percentages
DEFAULT_ROPES = (0.0, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05)


def _ropes(ropes) -> list[Rope]:
    if isinstance(ropes, (Rope, int, float, np.number)):
        ropes = [ropes]
    ropes = [Rope.coerce(r) for r in ropes]
    if not ropes:
        raise ValueError("no ROPE given: pass half-widths, e.g. ropes=(0, 0.01, 0.02)")
    return ropes


def default_ropes(scores: Scores, first: str, second: str) -> tuple:
    """:data:`DEFAULT_ROPES` in the units of the two algorithms' scores: as they are for
    scores in [0, 1], times 100 for scores in [0, 100]; any other range has no default."""
    values = np.concatenate([d.values[[scores.algorithm_index(a) for a in (first, second)]]
                             .ravel() for d in scores.datasets])
    low, high = float(values.min()), float(values.max())
    if 0 <= low and high <= 1:
        return DEFAULT_ROPES
    if 0 <= low and high <= 100:
        return tuple(100 * r for r in DEFAULT_ROPES)
    raise ValueError(
        f"the scores of {first} and {second} range over [{low:.4g}, {high:.4g}], neither "
        "fractions nor percentages, so there is no default ROPE: pass ropes= in their units, "
        "e.g. ropes=(0, 0.5, 1, 2) for differences of about one unit")


def _priors(priors) -> dict:
    """Name -> prior (a name of hierarchical_prior.PRIORS or a HierarchicalPrior)."""
    if priors is None:
        # read at call time, so that priors added to PRIORS appear here
        return {name: name for name in PRIORS}
    if isinstance(priors, (str, HierarchicalPrior)):
        priors = [priors]
    if isinstance(priors, dict):
        chosen = dict(priors)
    else:
        chosen = {}
        for i, prior in enumerate(priors):
            chosen[prior if isinstance(prior, str) else f"custom {i + 1}"] = prior
    for prior in chosen.values():
        resolve_prior(prior)
    if not chosen:
        raise ValueError(f"no prior given; choose from {sorted(PRIORS)}")
    return chosen


def sensitivity(scores: Scores, first: str, second: str, *,
                ropes: Sequence[RopeLike] | None = None,
                priors: Sequence | Mapping[str, str | HierarchicalPrior] | None = None,
                seed: int | None = None, threshold: float = THRESHOLD, reweight: bool = True,
                **options) -> SensitivityResult:
    """Read the hierarchical comparison under each prior and at several ROPE widths.

    Parameters
    ----------
    scores : Scores
    first, second : str
        Algorithms; differences are ``first - second``.
    ropes : sequence of float or (float, float), optional
        ROPE half-widths (or intervals), in the units of the scores. None:
        :data:`DEFAULT_ROPES` (0 to 0.05) for scores in [0, 1], the same times 100 for
        scores in [0, 100] (percentages); other scores need explicit ROPEs.
    priors : None, sequence or dict
        Names of :data:`bayescomp.PRIORS`, :class:`~bayescomp.HierarchicalPrior` objects, or
        a dict of name -> either. None: every prior in :data:`bayescomp.PRIORS`.
    seed : int, optional
        Seed of every fit, the same for each prior and used as it is: a fitted prior's
        numbers are those of ``bayescomp.hierarchical(scores, first, second, prior=...,
        seed=seed)`` with the same options (the "paper" prior's are
        :func:`bayescomp.compare_all`'s cell of the pair with this seed). The priors are
        different posteriors, so sharing a seed correlates nothing a reader compares. Drawn
        once and recorded when None.
    threshold : float
        Probability a region needs for a decision.
    reweight : bool
        Read a prior that differs from an earlier fitted one only in the prior of nu ("paper",
        "baycomp", "kruschke" and "juarez_steel" do) off that fit's draws, by Pareto-smoothed
        importance sampling, when that fit passed its diagnostics (in one mode or, weighed
        mode by mode, in several) and the weights' Pareto shape is at most 0.7
        (:mod:`bayescomp.models.prior_reweighting`):
        its numbers then agree with its own fit's within Monte Carlo error, and cost no
        fit. False: fit every prior. (Either way, once a fit is answered by the quadrature,
        every later prior that differs from it only in nu's prior is read by quadrature
        alone where its error allows.)
    **options
        Passed to :func:`bayescomp.hierarchical` (backend, chains, iter_warmup,
        iter_sampling, adapt_delta, retries, ...).

    Returns
    -------
    SensitivityResult
    """
    ropes = _ropes(default_ropes(scores, first, second) if ropes is None else ropes)
    chosen = _priors(priors)
    for name in ("rope", "prior", "seed", "baselines"):
        if name in options:
            raise TypeError(f"sensitivity() sets {name!r} itself; pass ropes=, priors=, seed=")
    from bayescomp.sampling import check_seed

    seed = check_seed(seed)   # drawn here once when None: every prior's fit gets this one
    labels = region_labels(first, second)
    # per fit, per ROPE, per draw, chain by chain: each question's masses (the fit's own
    # estimators), computed once and read by every prior read off that fit
    rows, fits, reweighted, masses, by_grid = [], {}, {}, {}, {}
    # per fit read in modes: the ROPEs where its modes differ, by quadrature; and per
    # (that fit, a later prior of nu) those ROPEs of the later prior on the same grid, for
    # when it is reweighted off that fit
    swapped = {}
    # per later prior that differs only in nu's from a fit the quadrature answered: its
    # quadrature on that fit's grid
    on_grid = {}
    resolved_priors = {name: resolve_prior(prior)[1] for name, prior in chosen.items()}
    for place, (name, prior) in enumerate(chosen.items()):
        resolved = resolved_priors[name]
        weights = _reweighting(resolved, fits) if reweight else None
        grid = None
        if weights is None and name in on_grid:
            # the quadrature answered an earlier prior that differs only in nu's (its chains
            # did not mix, or were too close to call): so it does here (as a fit's draws are
            # reweighted), without a fit whose chains would meet the same modes; on that grid
            # where its error allows, else on its own
            grid = (on_grid[name] if all(q.ok for q in on_grid[name]) else
                    quadrature_alone(scores, first, second, resolved, ropes, threshold))
        if grid is not None:
            by_grid[name] = grid
            masses[name] = [quadrature_rows(q) for q in grid]
        elif weights is None:
            # the fit is given the name, so that it reports it
            fit = _hierarchical.hierarchical(scores, first, second, rope=ropes[0], prior=prior,
                                             seed=seed, baselines=False, **options)
            fits[name] = fit
            posterior = fit.idata.posterior
            later = {other: resolved_priors[other] for other in list(chosen)[place + 1:]
                     if differs_only_in_nu(fit.settings["prior"], resolved_priors[other])}
            if fit.by_quadrature:
                masses[name], found = by_quadrature(
                    fit, scores, ropes, {o: p for o, p in later.items() if o not in on_grid},
                    threshold)
                on_grid.update(found)
            else:
                masses[name] = [(population_masses(posterior, rope),
                                 next_dataset_masses(posterior, rope)) for rope in ropes]
            if options.get("quadrature", True) and not fit.by_quadrature and (
                    fit.modes or fit.diagnostics.ok):
                # at every other ROPE as bayescomp.hierarchical reads it there: modes that
                # differ, or a close call, by quadrature (a fit the quadrature answered, a
                # close call at its own ROPE too, is read by it at every ROPE already)
                swapped[name], found = (
                    modes_or_quadrature(fit, scores, ropes, masses[name], later, threshold)
                    if fit.modes
                    else close_calls(fit, scores, ropes, masses[name], later, threshold))
                swapped.update({(name, other): at_ropes for other, at_ropes in found.items()})
        else:
            reweighted[name] = weights
            fit = fits[weights.base]
            # per ROPE, both questions' weighted (probabilities, errors): its rows and its
            # close calls read them
            estimates = [[weighted_estimate(per_draw, weights.weights) for per_draw in both]
                         for both in masses[weights.base]]
            if options.get("quadrature", True) and not fit.modes:
                # its own close calls, not only the base fit's: as its own fit would read them
                answered = swapped.setdefault((weights.base, name), {})
                answered.update(reweighted_close_calls(scores, first, second, resolved,
                                                       estimates, ropes, answered, threshold))
        base = name if weights is None else weights.base   # whose draws or grid it reads
        swaps = swapped.get(name if weights is None else (base, name), {})
        for k, (rope, both) in enumerate(zip(ropes, masses[base])):
            for j, (quantity, per_draw) in enumerate(zip(QUANTITIES, swaps.get(k, both))):
                by_grid_here = isinstance(per_draw, tuple)
                # a reweighted prior's row by quadrature is its own posterior, not base's draws
                source = ("quadrature" if grid is not None or (by_grid_here and weights is not None)
                          else base)
                if by_grid_here:
                    # the quadrature's answer at this ROPE: the fit's, where its modes
                    # differ here (a reweighted prior's on the same grid), or a prior's by
                    # quadrature alone
                    p, error, reliable = per_draw
                    decision = (decide(p, threshold, labels, mcse=error) if reliable
                                else UNRELIABLE)
                elif weights is None:
                    reliable = fit.reliable
                    # the draws as the fit reports them (modes mixed by their weights)
                    p = per_draw.reshape(-1, 3)[fit.draw_order].mean(axis=0)
                    decision = _decision(fit, p, per_draw, threshold, labels)
                else:
                    reliable = fit.reliable
                    estimate = estimates[k][j]
                    p = estimate[0]
                    decision = weighted_decision(estimate, per_draw, weights.weights,
                                                 [mode.chains for mode in fit.modes],
                                                 threshold, labels)
                rows.append(dict(
                    prior=name, rope=(rope.high - rope.low) / 2, rope_low=rope.low + 0.0,  # not -0
                    rope_high=rope.high, quantity=quantity, p_left=p[0], p_rope=p[1],
                    p_right=p[2], reliable=reliable, decision=decision,
                    read_from=source,
                    pareto_k=(np.nan if weights is None or source == "quadrature"
                              else weights.pareto_k)))
    return SensitivityResult(first, second, pd.DataFrame(rows), fits, threshold, int(seed),
                             reweighted, by_grid)


def _reweighting(prior: HierarchicalPrior, fits: dict) -> Reweighting | None:
    """Weights that read ``prior`` off the first earlier fit they can (one that differs
    from it only in nu's prior and passed its diagnostics, in one mode or in several, not
    one the quadrature answers; weights with a Pareto shape of at most 0.7), or None: the
    prior needs a fit of its own."""
    for base_name, fit in fits.items():
        base = fit.settings["prior"]
        if fit.reliable and not fit.by_quadrature and differs_only_in_nu(base, prior):
            weights = reweighting(fit.idata.posterior["nu"].values, base_name, base, prior,
                                  [mode.chains for mode in fit.modes],
                                  [mode.weight for mode in fit.modes])
            if weights.usable:
                return weights
    return None


def _decision(fit, probabilities, per_draw: np.ndarray, threshold: float, labels) -> str:
    """The fit's own rule (:meth:`~bayescomp.models.estimate.Estimate.decision`) applied to
    the probabilities at another ROPE: with a margin of two Monte Carlo errors from the
    chains as sampled (``per_draw``: chain, draw, 3), and where the chains sit in modes, the
    decision every mode makes from its own chains (so that at the fit's ROPE a row says what
    the fit says)."""
    if not fit.reliable:
        return fit.UNRELIABLE
    if fit.modes:
        chains = [list(mode.chains) for mode in fit.modes]
        return decide_modes([per_draw[c].reshape(-1, 3).mean(axis=0) for c in chains],
                            [probability_mcse(per_draw[c]) for c in chains], threshold, labels)
    return decide(probabilities, threshold, labels, mcse=probability_mcse(per_draw))
