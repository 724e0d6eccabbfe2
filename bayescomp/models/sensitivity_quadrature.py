"""The quadrature's routes through a sensitivity analysis (:func:`bayescomp.sensitivity`):
a fit that the quadrature answers read at every other ROPE by one quadrature of the same
posterior; a fit read in modes, or one that passed its diagnostics, read by the quadrature at
the ROPEs where :func:`bayescomp.hierarchical` would read it so (modes that differ there, a
probability too close to call); a prior reweighted off a clean fit read likewise where its own
weighted estimate is too close to call; and a prior read by quadrature alone, without a fit.
Each quadrature of several ROPEs or priors is one grid
(:func:`~bayescomp.models.quadrature.quadrature_under_priors`: only nu's prior changes at its
nodes). The rows' numbers are both questions' (probabilities, errors, whether reliable) of a
quadrature (:func:`quadrature_rows`)."""
from __future__ import annotations

import warnings

from bayescomp.data.scores import Scores
from bayescomp.decisions import CHECK_MARGIN, too_close_to_call
from bayescomp.models.hierarchical import parts_differ
from bayescomp.models.hierarchical_prior import HierarchicalPrior
from bayescomp.models.hierarchical_program import prepare
from bayescomp.models.hierarchical_runs import region_estimates
from bayescomp.models.quadrature import quadrature_under_priors
from bayescomp.rope import Rope


def by_quadrature(fit, scores: Scores, ropes: list[Rope], later: dict, threshold: float
                  ) -> tuple:
    """For a fit that the quadrature answers: per ROPE, both questions' (probabilities,
    errors, whether reliable), its own at its ROPE and one quadrature of the same posterior
    read at every other; and {name: its quadrature at every ROPE} for the ``later`` priors
    (name -> prior, each differing from the fit's only in nu's), on the same grid
    (:func:`~bayescomp.models.quadrature.quadrature_under_priors`). With one ROPE and no
    later prior, no quadrature beyond the fit's."""
    own = (fit.rope.low, fit.rope.high)
    if not later and all((rope.low, rope.high) == own for rope in ropes):
        return [quadrature_rows(fit.quadrature) for _ in ropes], {}
    found = quadratures(scores, fit.first, fit.second, [fit.settings["prior"], *later.values()],
                        ropes, threshold)
    return ([quadrature_rows(fit.quadrature if (rope.low, rope.high) == own else at_rope)
             for rope, at_rope in zip(ropes, found[0])], dict(zip(later, found[1:])))


def quadratures(scores: Scores, first: str, second: str, priors: list[HierarchicalPrior],
                ropes: list[Rope], threshold: float, close_call: bool = False) -> list[list]:
    """The first of ``priors``' posterior by quadrature at each of ``ropes``, from one grid,
    and on the same grid each later prior's (they differ from the first only in nu's
    prior): :func:`~bayescomp.models.quadrature.quadrature_under_priors`, its coarsest
    grid reported only where clear of the decisions' ``threshold``, and not tried for a
    ``close_call`` of a fit's draws."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the first fit told its warnings about the data
        prepared = [prepare(scores, first, second, prior) for prior in priors]
    (data, scale), others = prepared[0], [other for other, _ in prepared[1:]]
    return quadrature_under_priors(data, others, scale, ropes, threshold, close_call)


def quadrature_rows(found) -> tuple:
    """Both questions' (probabilities, errors, whether reliable) of one quadrature, as the
    table's rows read them."""
    return tuple((probabilities, errors, found.ok) for probabilities, errors in found.estimates)


def modes_or_quadrature(fit, scores: Scores, ropes: list[Rope], masses: list, later: dict,
                        threshold: float) -> tuple[dict, dict]:
    """A fit read in modes (they agree within the quadrature's tolerance at its ROPE), at
    every ROPE as :func:`bayescomp.hierarchical` at that ROPE reads it: its modes where their
    probabilities agree there too, else the quadrature (one grid for those ROPEs), where its
    error is within the tolerance. ``masses`` holds both questions' per-draw masses at each
    ROPE. Returns {ROPE's place: both questions' (probabilities, errors, True)} for the
    ROPEs the quadrature answers, and {name: the same} for each of the ``later`` priors
    (name -> prior, differing from the fit's only in nu's) on the same grid, for a prior
    reweighted off the fit (whose draws are the fit's, in the same modes)."""
    own = (fit.rope.low, fit.rope.high)
    parts = [list(mode.chains) for mode in fit.modes]
    differ = [k for k, (rope, both) in enumerate(zip(ropes, masses))
              if (rope.low, rope.high) != own and parts_differ(
                  *([per_draw[part].reshape(-1, 3).mean(axis=0) for part in parts]
                    for per_draw in both))]
    return _quadrature_at(fit, scores, ropes, differ, later, lambda found: found.ok,
                          (threshold, False))


def close_calls(fit, scores: Scores, ropes: list[Rope], masses: list, later: dict,
                threshold: float) -> tuple[dict, dict]:
    """A fit that passed its diagnostics, at every other ROPE as :func:`bayescomp.hierarchical`
    at that ROPE reads it: where a probability of its draws lies within CHECK_MARGIN Monte
    Carlo errors of ``threshold`` (``too_close_to_call``), the quadrature (one grid for those ROPEs)
    where its own error places every probability clear of it; elsewhere the draws. Returns
    what :func:`modes_or_quadrature` returns, for the ROPEs the quadrature answers."""
    own = (fit.rope.low, fit.rope.high)
    near = [k for k, (rope, both) in enumerate(zip(ropes, masses))
            if (rope.low, rope.high) != own
            and too_close_to_call(region_estimates(*both), threshold, CHECK_MARGIN)]
    return _quadrature_at(fit, scores, ropes, near, later,
                          lambda found: found.settles(threshold), (threshold, True))


def reweighted_close_calls(scores: Scores, first: str, second: str, prior: HierarchicalPrior,
                           estimates: list, ropes: list[Rope], answered: dict,
                           threshold: float) -> dict:
    """A prior read off a clean fit's draws by importance weights: at the ROPEs not
    ``answered`` yet where a probability of its weighted estimates (``estimates``: per ROPE,
    both questions' (probabilities, errors)) lies within CHECK_MARGIN Monte Carlo errors of
    ``threshold``, the quadrature of its own posterior (one grid) where that quadrature's
    error places every probability clear of it: {ROPE's place: both questions'
    (probabilities, errors, True)}. (The base fit's close calls need not be its own: the two
    posteriors' probabilities can differ by more than the draws' errors.)"""
    near = [k for k, both in enumerate(estimates)
            if k not in answered and too_close_to_call(both, threshold, CHECK_MARGIN)]
    if not near:
        return {}
    found = quadratures(scores, first, second, [prior], [ropes[k] for k in near], threshold,
                        close_call=True)[0]
    return {k: quadrature_rows(q) for k, q in zip(near, found) if q.settles(threshold)}


def _quadrature_at(fit, scores: Scores, ropes: list[Rope], places: list[int], later: dict,
                   answers, decided: tuple) -> tuple[dict, dict]:
    """The quadrature of ``fit``'s posterior at the ROPEs in ``places`` (one grid), and on
    the same grid each of the ``later`` priors' (name -> prior, differing from the fit's
    only in nu's): {place: both questions' (probabilities, errors, True)} where ``answers``
    (a Quadrature -> bool) says it answers there, and {name: the same} per later prior.
    ``decided``: the decisions' threshold, and whether the places are close calls of the
    fit's draws (:func:`quadratures`)."""
    if not places:
        return {}, {}
    found = quadratures(scores, fit.first, fit.second, [fit.settings["prior"], *later.values()],
                        [ropes[k] for k in places], *decided)
    answered = [{k: quadrature_rows(q) for k, q in zip(places, at_ropes) if answers(q)}
                for at_ropes in found]
    return answered[0], dict(zip(later, answered[1:]))


def quadrature_alone(scores: Scores, first: str, second: str, prior: HierarchicalPrior,
                     ropes: list[Rope], threshold: float) -> list | None:
    """``prior``'s posterior by quadrature at every ROPE, from one grid and no fit
    (:func:`~bayescomp.models.quadrature.quadrature_at_ropes`), or None where its error
    misses the tolerance at some ROPE: the prior then gets a fit of its own."""
    found = quadratures(scores, first, second, [prior], ropes, threshold)[0]
    return found if all(q.ok for q in found) else None
