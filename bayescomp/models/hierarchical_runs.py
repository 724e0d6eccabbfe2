"""How a fit is run again: retries with safer settings after its diagnostics fail, and
extensions from where its chains are while its effective draws are below the target or its
probabilities too close to the threshold to decide. :func:`run_fits` is the loop that the
pairwise model (:func:`bayescomp.hierarchical`), the joint model (:func:`bayescomp.compare_many`,
which does not extend for the threshold) and the ranking (:func:`bayescomp.rank_algorithms`)
run their fits by; what each reads off its draws in between is its own (an :class:`Assessment`)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import arviz as az
import numpy as np
import xarray as xr

from bayescomp.models.diagnostics import BFMI_MIN, Diagnostics
from bayescomp.models.modes import probability_mcse


#: warm-up of a continued chain on an engine route that cannot keep the adapted step size
#: and metric (pystan's public API), which then adapts them again from its last draw (at
#: most the first fit's own warm-up). On the example's naive_bayes - logistic, whose
#: population has two modes, 150 left too few effective draws and 300 enough
#: (benchmarks/results/hard_collections.md). Elsewhere a continued chain has no warm-up.
CONTINUATION_WARMUP = 300

#: the quantities whose bulk and tail ESS the ``ess`` target is of: what the results report
REPORTED = ("delta0", "delta_next", "sigma0", "nu", "delta")

#: the step size of chains continued after divergences, as a share of their adapted one. A
#: divergence says the step was too large somewhere the chains went; raising adapt_delta from
#: 0.95 to 0.99 shrinks the step by about (0.01 / 0.05)^(1/4) = 0.67 (the leapfrog's energy
#: error grows as the fourth power of the step), and half is a little safer than that
DIVERGENCE_STEP_SCALE = 0.5

#: the retries :func:`safer_run` defines; a larger ``retries`` allows no more
MAX_RETRIES = 2
#: the cap of extensions towards the ``ess`` target: this many times the first fit's draws
MAX_DRAWS_FACTOR = 4
#: the cap of extensions of a fit whose probabilities are within two Monte Carlo errors of
#: the threshold, where the quadrature does not answer it (``quadrature=False``, or its
#: error too large to place the probabilities). The tutorial's aode - j48gr, P(equivalent)
#: 0.944-0.949, took up to 4 attempts (benchmarks/results/real_pairs.md, sections 13, 30).
MAX_CLOSE_FACTOR = 8


def steps_failed(diagnostics: Diagnostics) -> bool:
    """Whether the sampler's steps failed (divergences, saturated tree depth): its chains
    are then not read as modes."""
    return bool(diagnostics.divergences or diagnostics.treedepth_saturated)


def struggles(diagnostics: Diagnostics) -> bool:
    """Whether the sampler itself struggled (divergences, saturated tree depth, low E-BFMI),
    rather than only mixed slowly or between modes (R-hat, ESS)."""
    return steps_failed(diagnostics) or diagnostics.min_bfmi < BFMI_MIN


def energy_explained(diagnostics: Diagnostics, groups: int) -> bool:
    """Whether a fit's E-BFMI leaves its chains to be read as modes.

    A chain that crosses between modes whose energies differ shows a low E-BFMI over the
    whole chain, though it explores each mode well: on the near-identical pair of 1,000
    datasets (``benchmarks/results/warmup.md``) one chain moved once from the near-normal
    mode to the heavy-tailed one, whose energies are about 350 apart, and had an E-BFMI of
    0.07 over the chain and 0.44 within each mode, and fresh fits with twice and four times
    the warm-up failed the same way. So a low E-BFMI allows reading the chains as modes when
    they form several groups (evidence of modes); in one group it is the sampler's trouble.
    """
    return diagnostics.min_bfmi >= BFMI_MIN or groups > 1


def reported_ess(statistics: dict, names=REPORTED) -> tuple[float, float]:
    """Smallest bulk and smallest tail ESS (Vehtari et al. 2021) over the quantities
    ``names`` of a fit's :func:`~bayescomp.models.diagnostics.variable_convergence` (which
    holds them all; those it lacks, as nu of a normal population, are left out). The
    default is the pairwise model's reported quantities (:data:`REPORTED`: delta0,
    delta_next, sigma0, nu, every delta_i)."""
    reported = [statistics[name] for name in names if name in statistics]
    bulk, tail = (np.concatenate([values[k] for values in reported]) for k in (1, 2))
    return float(np.nanmin(bulk)), float(np.nanmin(tail))


def region_estimates(population_masses: np.ndarray, next_masses: np.ndarray) -> tuple:
    """P(left / rope / right) and their Monte Carlo standard errors, from the chains as
    sampled: ``((population, its errors), (next dataset, its errors))`` from each question's
    per-draw masses (chain, draw, 3; :mod:`bayescomp.models.region_masses`)."""
    return tuple((values.reshape(-1, 3).mean(axis=0), probability_mcse(values))
                 for values in (population_masses, next_masses))


def extension(run: dict, draws: int, achieved: float, ess: int, cap: int, *,
              previous: float | None = None, close: bool = False,
              close_cap: int = 0) -> dict | None:
    """Settings of a chunk that extends a fit from where its chains are (a continuation),
    or None when it has enough.

    A fit whose reported ESS ``achieved`` is below the target ``ess`` gets the draws the
    ESS per draw so far says are missing, a tenth more, at least a tenth of the fit's
    draws, up to ``cap`` draws per chain, unless the last chunk brought none: with
    ``previous`` the ESS of the fit it went on from, an ``achieved`` no larger says that the
    chains visit some region rarely and the ESS per draw so far was too hopeful: the
    premise of the chunks, ESS growing with the draws, has failed, and the ESS so far is
    reported as it is (a near-identical pair's 626 fell to 437 and then 417). A fit with
    enough ESS whose probabilities are ``close`` to the threshold
    (:func:`~bayescomp.decisions.too_close_to_call`) doubles its draws, up to
    ``close_cap``: the Monte Carlo error falls as one over the square root of the draws.
    """
    stalled = previous is not None and achieved <= previous
    if achieved >= ess or draws >= cap or stalled:
        if not close or draws >= close_cap:
            return None
        return continuation(run, iter_sampling=int(min(draws, close_cap - draws)))
    missing = draws * (ess / max(achieved, 1.0) - 1) * 1.1
    chunk = int(min(max(np.ceil(missing), draws / 10), cap - draws))
    return continuation(run, iter_sampling=chunk)


def first_run(adapt_delta: float, iter_warmup: int, iter_sampling: int) -> dict:
    """Settings of an analysis's first fit, afresh: what :func:`continuation`,
    :func:`adaptation`, :func:`joined_draws` and :func:`safer_run` read and change."""
    return dict(adapt_delta=adapt_delta, iter_warmup=iter_warmup, iter_sampling=iter_sampling,
                continued=False, redraw=False, step_scale=1.0)


def continuation(run: dict, **changes) -> dict:
    """Settings of a fit that goes on from the last draws of the fit before it, with that
    fit's step size and metric and no warm-up where the engine can keep them (else a
    warm-up of at most :data:`CONTINUATION_WARMUP`): its draws are pooled with the earlier
    ones unless ``redraw`` (:func:`joined_draws`), and its step is the kept one times
    ``step_scale``."""
    return {**run, "continued": True, "redraw": False, "step_scale": 1.0,
            "iter_warmup": min(CONTINUATION_WARMUP, run["iter_warmup"]), **changes}


def adaptation(fit, run: dict) -> dict:
    """The warm-up, step size and metric of a fit made with the settings ``run``
    (arguments of :func:`bayescomp.sampling.sample`): a continued fit keeps the step size
    (times ``run["step_scale"]``) and metric of ``fit``, the engine's draws of the fit it
    goes on from, and has no warm-up; a fit afresh, or one from an engine route that does
    not report them, adapts for ``run["iter_warmup"]`` iterations."""
    if not run["continued"] or "inv_metric" not in fit.attrs:
        return dict(iter_warmup=run["iter_warmup"])
    return dict(iter_warmup=0, inv_metric=fit.attrs["inv_metric"],
                step_size=[step * run["step_scale"] for step in fit.attrs["step_size"]])


def joined_draws(earlier, new, run: dict) -> az.InferenceData:
    """The draws of a fit made with the settings ``run``, as the engine returned them
    (``new``): a continuation's appended, chain by chain, to those of the fit it continues
    (``earlier``); a fit afresh's, or a redraw's (which replace the draws of a fit that
    diverged), alone. Every group of draws both have (posterior, sampler statistics, the
    engine's log-likelihood); the attrs are ``new``'s."""
    if not run["continued"] or run["redraw"]:
        return new
    offset = earlier.posterior.sizes["draw"]
    groups = {}
    for group in new.groups():
        if group not in earlier.groups():
            continue
        before, after = getattr(earlier, group), getattr(new, group)
        after = after.assign_coords(draw=after["draw"].values + offset)
        groups[group] = xr.concat([before, after], dim="draw")
        groups[group].attrs = dict(after.attrs)
    pooled = az.InferenceData(**groups)
    pooled.attrs.update(new.attrs)
    return pooled


def redraw_draws(iter_sampling: int) -> int:
    """Draws per chain of a redraw after divergences: :data:`DIVERGENCE_STEP_SCALE` times
    the divergent fit's, rounded up."""
    return int(np.ceil(DIVERGENCE_STEP_SCALE * iter_sampling))


def safer_run(run: dict, retry: int, diagnostics: Diagnostics) -> dict | None:
    """Settings of retry number ``retry`` (from 1), or None when there is no safer one.

    ``run`` holds the settings of the last fit started afresh. A fit that only mixes
    slowly (R-hat or ESS; the package's naive_bayes - logistic, whose population has two
    clusters, does that without diverging) is continued (:func:`continuation`) for
    ``retry`` times ``iter_sampling`` more draws, pooled with the draws so far (after two
    retries four times the first fit's, as two doublings would give). After divergences the
    step, not the length, must change: the first retry goes on from the chains' last draws
    with the metric kept and :data:`DIVERGENCE_STEP_SCALE` times the step, and draws
    :func:`redraw_draws` new draws, which replace the divergent fit's (they may be biased):
    a sampling phase of as many leapfrog steps as the first fit's, not a whole fit (on a
    real near-identical pair a refit afresh at adapt_delta 0.99 cost 3 to 4.8 times an easy
    pair, a redraw of as many draws as the first fit's 2.35 to 3.06 times). The second
    retry after divergences, and any retry after saturated tree depth or a low E-BFMI (the
    sampler itself struggles), starts afresh with twice the warm-up and draws (adapt_delta
    at least 0.99 after divergences).
    """
    if not 1 <= retry <= MAX_RETRIES:
        return None
    if not struggles(diagnostics):
        return continuation(run, iter_sampling=retry * run["iter_sampling"])
    if diagnostics.divergences:
        if retry == 1:
            # as many leapfrog steps as the divergent fit's draws took: a draw at the smaller
            # step takes about 1 / DIVERGENCE_STEP_SCALE times as many
            return continuation(run, redraw=True, step_scale=DIVERGENCE_STEP_SCALE,
                                adapt_delta=max(0.99, run["adapt_delta"]),
                                iter_sampling=redraw_draws(run["iter_sampling"]))
        return dict(run, continued=False, adapt_delta=max(0.99, run["adapt_delta"]),
                    iter_warmup=2 * run["iter_warmup"],
                    iter_sampling=2 * run["iter_sampling"])
    return dict(run, continued=False,
                iter_warmup=2 * run["iter_warmup"], iter_sampling=2 * run["iter_sampling"])


@dataclass
class Retries:
    """The retries of one analysis: what :func:`safer_run` is given, and how many are left.

    Attributes
    ----------
    fresh : dict
        The settings of the last fit started afresh (the first fit's, at first).
    budget : int
        How many retries the analysis may make.
    made : int
        How many it has made.
    """

    fresh: dict
    budget: int
    made: int = 0

    @property
    def spent(self) -> bool:
        """Whether no retry is left: the budget, or the :data:`MAX_RETRIES` that
        :func:`safer_run` defines, is used (the joint model reads chains in one group as
        modes only then)."""
        return self.made >= min(self.budget, MAX_RETRIES)

    def upcoming(self, diagnostics: Diagnostics) -> dict | None:
        """The next retry's settings (:func:`safer_run`), not yet counted, or None."""
        return None if self.spent else safer_run(self.fresh, self.made + 1, diagnostics)

    def take(self, run: dict) -> dict:
        """Counts the retry ``run`` (of :meth:`upcoming`) as made; returns it."""
        self.made += 1
        if not run["continued"]:
            self.fresh = run
        return run


@dataclass
class Assessment:
    """What a model read off the draws of one fit, for :func:`run_fits`.

    Attributes
    ----------
    diagnostics : Diagnostics
        The fit's sampler diagnostics.
    achieved : tuple of float
        The smallest bulk and tail ESS of the reported quantities (:func:`reported_ess`).
    close : bool
        A probability lies too close to the threshold to decide
        (:func:`~bayescomp.decisions.too_close_to_call`): unless answered, the fit is
        extended up to :data:`MAX_CLOSE_FACTOR` times its draws.
    settled : bool
        The chains, read as modes, decide though the diagnostics failed: no retry.
    answered : str
        The route that answers what the draws cannot ("quadrature", the pairwise model's):
        no retry or extension, and the attempt's verdict says so; "" where none does.
    separate : bool
        The chains that settled it sit in separate modes (else they agree, crossing slowly):
        the attempt's verdict says which.
    record : dict
        Further fields of the attempt's record (the pairwise model's count of modes).
    reading : object
        Whatever else the model read off the draws, handed back with the last fit.
    """

    diagnostics: Diagnostics
    achieved: tuple[float, float]
    close: bool = False
    settled: bool = False
    answered: str = ""
    separate: bool = False
    record: dict = field(default_factory=dict)
    reading: Any = None


@dataclass
class Runs:
    """The outcome of :func:`run_fits`.

    Attributes
    ----------
    fit : arviz.InferenceData
        The engine's draws of the last fit, joined to those it went on from.
    assessment : Assessment
        What the model read off them.
    attempts : list of dict
        One record per fit, in order (the results' ``settings["attempts"]``).
    fresh : dict
        The settings of the last fit started afresh (its warm-up is the one reported).
    last : dict
        The settings of the last fit.
    """

    fit: Any
    assessment: Assessment
    attempts: list
    fresh: dict
    last: dict


def run_fits(sample: Callable, assess: Callable, seeds, *, adapt_delta: float,
             iter_warmup: int, iter_sampling: int, retries: int, ess: int,
             on_retry: Callable | None = None, instead_of_retry: Callable | None = None
             ) -> Runs:
    """Fit, then retry and extend by this module's rules until the fit has enough.

    Each fit gets a Stan seed of its own (``seeds.stan_seed``: no random number of Stan's is
    used twice) and the warm-up, step size and metric of :func:`adaptation`; its draws are
    joined to those it went on from (:func:`joined_draws`). A fit that passes its
    diagnostics is extended (:func:`extension`) while its ESS is below ``ess`` (up to
    :data:`MAX_DRAWS_FACTOR` times ``iter_sampling`` draws per chain) or, with enough, while
    the assessment finds a probability too close to the threshold (up to
    :data:`MAX_CLOSE_FACTOR` times), unless another route answered it. Not after modes
    settled a fit: its chains do not mix, and more draws rarely make them (on a near-identical
    pair they ran to the cap, 2-3 times as long). A fit that fails them, is not settled and
    is not answered otherwise (:attr:`Assessment.answered`) is retried (:class:`Retries`, at
    most ``retries`` times), except that a retry that draws more than the first fit (one
    afresh, with twice the warm-up and the draws, or the second continuation, with twice
    the draws) is not made where ``instead_of_retry`` answers.

    Parameters
    ----------
    sample : callable
        ``sample(fit, run, adapted, stan_seed)``: the engine's draws of one fit with the
        settings ``run`` (:func:`first_run`, :func:`continuation`, :func:`safer_run`), the
        warm-up, step size and metric ``adapted`` and ``stan_seed``; ``fit`` is the draws so
        far (None at first), whose last draws a continued chain starts from.
    assess : callable
        ``assess(fit, spent)``: the :class:`Assessment` of the joined draws ``fit``;
        ``spent`` says whether no retry is left.
    seeds : bayescomp.sampling.Seeds
    adapt_delta, iter_warmup, iter_sampling : the first fit's settings.
    retries, ess : int
    on_retry : callable, optional
        ``on_retry(run, diagnostics)`` before each retry, with its settings and the
        diagnostics that called for it.
    instead_of_retry : callable, optional
        ``instead_of_retry()``: the route that answers instead of such a retry (the
        pairwise model's "quadrature", whose grid does not depend on how the chains moved),
        or "" where none does. Asked only when the next retry would be one.
    """
    run = first_run(adapt_delta, iter_warmup, iter_sampling)
    retry, attempts, fit = Retries(run, retries), [], None
    extended_from = None   # the reported ESS of the fit the last extension went on from
    while True:
        started = time.perf_counter()
        stan_seed = seeds.stan_seed(len(attempts) + 1)
        adapted = adaptation(fit, run)
        fit = joined_draws(fit, sample(fit, run, adapted, stan_seed), run)
        assessment = assess(fit, retry.spent)
        diagnostics = assessment.diagnostics
        achieved, draws = min(assessment.achieved), int(fit.posterior.sizes["draw"])
        if diagnostics.ok:
            more = None if assessment.answered else extension(
                run, draws, achieved, ess, MAX_DRAWS_FACTOR * iter_sampling,
                previous=extended_from, close=assessment.close,
                close_cap=MAX_CLOSE_FACTOR * iter_sampling)
        else:
            more = (None if assessment.settled or assessment.answered
                    else retry.upcoming(diagnostics))
            costly = more is not None and (not more["continued"]
                                           or more["iter_sampling"] > iter_sampling)
            answered = instead_of_retry() if costly and instead_of_retry is not None else ""
            if answered:
                more, assessment = None, replace(assessment, answered=answered)
            elif more is not None:
                retry.take(more)
        attempts.append(dict(
            attempt=len(attempts) + 1, stan_seed=stan_seed, continued=run["continued"],
            redraw=run["redraw"], step_scale=run["step_scale"], adapt_delta=run["adapt_delta"],
            iter_warmup=adapted["iter_warmup"], iter_sampling=run["iter_sampling"],
            draws=draws, ok=bool(diagnostics.ok or assessment.settled),
            verdict=(("separate modes" if assessment.separate else "chains agree")
                     if assessment.settled else f"{diagnostics.verdict}; by {assessment.answered}, "
                     f"no {'extension' if diagnostics.ok else 'retry'}" if assessment.answered
                     else diagnostics.verdict), **assessment.record,
            problems=list(diagnostics.problems), seconds=time.perf_counter() - started))
        if more is None:
            break
        if not diagnostics.ok and on_retry is not None:
            on_retry(more, diagnostics)
        run, extended_from = more, (achieved if diagnostics.ok else None)
    return Runs(fit, assessment, attempts, retry.fresh, run)
