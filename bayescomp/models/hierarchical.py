"""The hierarchical model of Corani, Benavoli, Demsar, Mangili & Zaffalon (2017).

The differences ``first - second`` on the n_i splits of dataset i are normal with mean
``delta_i`` and compound-symmetric covariance ``sigma_i^2 ((1 - rho_i) I + rho_i 11')``;
``delta_i ~ Student-t(nu, delta0, sigma0)``; ``delta0`` and ``sigma0`` are uniform,
``sigma_i`` uniform, and ``nu - 1 ~ Gamma(alpha, beta)`` with uniform ``alpha`` and ``beta``.
Stan's NUTS samples it (``stan/hierarchical.stan``) on the datasets' sufficient statistics,
with every ``delta_i`` integrated out through the Student-t's normal scale mixture; the
``delta_i`` are then drawn from their exact conditionals, and ``alpha`` and ``beta`` given
``nu`` (:mod:`bayescomp.models.hierarchical_program`, :mod:`bayescomp.models.nu_prior`).
Other priors of ``nu`` and a normal population are in
:data:`~bayescomp.models.hierarchical_prior.PRIORS` too. Where the chains fail their
diagnostics and their modes differ (:func:`modes_differ`), the probabilities are taken by
quadrature instead (:mod:`bayescomp.models.quadrature`).

Constant differences on a dataset (zero variance) would make the posterior improper
(``sigma_i -> 0`` unbounded), so every ``sigma_i`` has a floor: the sd ``q / sqrt(12)`` of a
rounding error of one step ``q`` of the dataset's resolution (one test case of an accuracy;
:mod:`bayescomp.data.resolution`), below which the data cannot tell variances apart. Where
the differences vary from fold to fold it lies far below ``sigma_i``; where two algorithms
differ on a fold or two of a hundred it sets ``sigma_i`` (a
:class:`ConstantDifferencesWarning` names those datasets, with the constant ones): on 2 of
the tutorial's 54 datasets for aode - j48gr, which moves its P(equivalent) of delta0 from
0.954, what their folds alone say, to 0.948 (``benchmarks/results/real_pairs.md``, 31).
"""
from __future__ import annotations

import warnings
from functools import cache, partial
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayescomp import sampling
from bayescomp.arguments import check_count
from bayescomp.baselines.across_datasets import baselines as run_baselines
from bayescomp.data.resolution import floored_masks
from bayescomp.data.scores import Scores
from bayescomp.exceptions import ConstantDifferencesWarning, InputWarning, RetryWarning
from bayescomp.models import region_masses
from bayescomp.models.conditional_summaries import next_dataset_summary, population_summary
from bayescomp.models.correlated import correlated_ttests
from bayescomp.models.diagnostics import diagnose, variable_convergence, warn_if_problems
from bayescomp.models.estimate import Estimate
from bayescomp.models.hierarchical_density import log_density
from bayescomp.models.hierarchical_prior import HierarchicalPrior, resolve_prior
from bayescomp.models.hierarchical_program import (PROGRAM, continuation_inits, initial_values,
                                                   prepare, size_adapt_delta, to_user_scale,
                                                   unconstrained)
from bayescomp.models.hierarchical_result import HierarchicalResult, region_summaries
from bayescomp.models.hierarchical_runs import (REPORTED, Assessment, energy_explained,
                                                region_estimates, reported_ess, run_fits,
                                                steps_failed)
from bayescomp.models.modes import (find_modes, found_their_way, mixture_indices,
                                    settled_decisions)
from bayescomp.models.quadrature import quadrature_probabilities
from bayescomp.models.quadrature_result import TOLERANCE
from bayescomp.models.strata import strata_decide, strata_parts
from bayescomp.decisions import CHECK_MARGIN, THRESHOLD, too_close_to_call
from bayescomp.rope import Rope, check_rope, region_labels

if TYPE_CHECKING:
    from bayescomp.annotations import RopeLike


#: below this many datasets the population's spread is the prior's. Measured on the built-in
#: example (forest - tree, seed 1), as sigma0's bound goes from 10 to 1000 times the spread of
#: the dataset means: on 2 datasets sigma0's median moves from 0.10 to 0.17 and P(forest
#: better) on the next dataset from 0.60 to 0.57, on delta0 from 0.66 to 0.60; on 3, 5, 10 and
#: 17 datasets sigma0's median moves by at most 10% and both probabilities by at most 0.02.
#: Over the five priors of PRIORS (nu's), on 2 datasets 0.56-0.57, on 17 0.84-0.85.
FEW_DATASETS = 3


def modes_differ(modes) -> bool:
    """Whether the modes' (or strata's) probabilities of some region, on either question,
    differ by more than the quadrature's tolerance: only then can their weights, which
    move from seed to seed, move the result by more than the quadrature's own error (on a
    simulated near-identical pair every mode has P(equivalent) = 1.0000, and the quadrature
    would take 5-9 times the fit)."""
    return bool(modes) and parts_differ(*([getattr(mode, scope) for mode in modes]
                                          for scope in ("population", "next_dataset")))


def parts_differ(*questions) -> bool:
    """Whether parts' (modes', strata's) P(left / rope / right) differ by more than the
    quadrature's tolerance on any of the ``questions``, each a sequence with one (3,) array
    per part (:func:`modes_differ`; a sensitivity analysis asks it at each ROPE)."""
    return any(np.ptp(parts, axis=0).max() > TOLERANCE for parts in questions)


def hierarchical(scores: Scores, first: str, second: str, *, rope: RopeLike = 0.01,
                 prior: str | HierarchicalPrior = "paper",
                 backend: str = "auto", route: str = "auto", chains: int = 4,
                 iter_warmup: int = 500, iter_sampling: int = 1000, seed: int | None = None,
                 adapt_delta: float | None = None, max_treedepth: int = 10, baselines: bool = True,
                 log_likelihood: bool = False, show_progress: bool = False,
                 retries: int = 2, ess: int = 1000, quadrature: bool = True
                 ) -> HierarchicalResult:
    """Compare two algorithms across datasets with the hierarchical model.

    Parameters
    ----------
    scores : Scores
        Paired scores on several datasets (numbers of scores and rho may differ).
    first, second : str
        Algorithms; differences are ``first - second``.
    rope : float or (float, float)
        Region of practical equivalence in the units of the scores.
    prior : str or HierarchicalPrior
        A name in :data:`~bayescomp.models.hierarchical_prior.PRIORS` ("paper", "baycomp",
        "kruschke", "juarez_steel", "gaussian") or a prior.
    backend : "auto", "cmdstanpy" or "pystan"
    route : str
        How the engine reaches Stan (:func:`bayescomp.sampling.sample`); "auto" is its fastest.
    chains, iter_warmup, iter_sampling, adapt_delta, max_treedepth
        NUTS settings. ``adapt_delta`` None (the default) is 0.95 up to 54 datasets, not
        Stan's 0.8 (at 0.8 the chains of near-identical pairs cross between the two modes
        of (nu, sigma0) far less often); above, it keeps the step 0.95 gives at 54 (0.864
        at 400; :func:`~bayescomp.models.hierarchical_program.size_adapt_delta`). The
        warm-up of 500 is Stan's adaptation windows whole; against 1000 it decided the same
        on the hard grid, 400 and 1,000 datasets and the tutorial's real pairs
        (``benchmarks/results/warmup.md``).
    seed : int, optional
        In ``[0, 2**31 - 1]``; drawn when None. Recorded as given (``settings["seed"]``); it
        makes the fit reproducible. Every random step draws from its own stream spawned from
        ``numpy.random.SeedSequence(seed)`` (:mod:`bayescomp.sampling.seeds`): Stan's seed
        of each attempt (recorded in ``settings["stan_seeds"]`` and in each attempt), the
        initial values, the post-draws and the baselines.
    baselines : bool
        Also run the frequentist and Bayesian signed-rank and sign tests on the dataset means.
    log_likelihood : bool
        Add the pointwise log-likelihood of every dataset's differences given the draws
        of delta_i and sigma_i (a ``log_likelihood`` group, e.g. for ``arviz.loo``).
    retries : int
        How many times a fit that fails its diagnostics is sampled again (0 disables; at
        most 2 are defined). A fit that only mixes slowly (R-hat, ESS) is continued: every
        chain restarts from its last draw, keeping its step size and metric, for
        ``iter_sampling`` more draws (twice that at the second retry) pooled with the
        earlier ones. After divergences the chains go on from their last draws at half
        their step size, and half as many new draws (as many leapfrog steps) replace the
        divergent ones; the ``ess`` target extends them if they are too few. A fit that
        diverges again, or has saturated tree depth or a low E-BFMI, starts afresh from
        the same initial values with twice the warm-up and draws (adapt_delta at least 0.99
        after divergences) (:func:`~bayescomp.models.hierarchical_runs.safer_run`); this
        and a second continuation are not made where the quadrature answers
        (``quadrature``). A low E-BFMI with the chains in several groups is read as modes first
        (:func:`~bayescomp.models.hierarchical_runs.energy_explained`). Sampling stops
        at the first fit that passes. Each retry is announced by a :class:`RetryWarning`;
        ``settings["attempts"]`` records every fit, and ``settings["iter_sampling"]`` the
        draws per chain of the result.
    ess : int
        Target of the smallest bulk and tail effective sample size of the reported
        quantities (delta0, delta_next, sigma0, nu, every delta_i; 1000 puts a probability
        within about +-0.015). A fit that passes its diagnostics below it is extended in
        chunks from where its chains are, with their adapted step size and metric, until
        the target or :data:`~bayescomp.models.hierarchical_runs.MAX_DRAWS_FACTOR` times
        ``iter_sampling`` draws per chain, or until a chunk brings no effective draws
        (chains that visit a region rarely: more draws at that rate would not reach the
        target within the cap).
        The ESS achieved is in ``settings["ess"]`` and the summary.
    quadrature : bool
        Where the last fit fails its diagnostics (its chains do not mix: nu's two modes on
        real pairs of near-identical algorithms, crossed too rarely to weigh, or not at
        all) and its modes or strata, where it has them, differ in a probability by more
        than 0.005 (:func:`modes_differ`), take every probability by quadrature over
        delta0, sigma0 and nu instead (:mod:`bayescomp.models.quadrature`: deterministic, a
        few seconds at 100 datasets), so that the numbers do not depend on how the seed
        weighed the modes; if the quadrature's own error is at
        most 0.005 the result is reliable and every mean, sd and interval is the
        quadrature's too. Chains that each hold 100 effective draws of delta0 but neither
        mix nor decide alike are not retried first: the quadrature answers at once
        (retries had ended the same way on real near-identical pairs, after 2-3 times the
        first fit's time), nor is a fit whose next retry would draw more than the first fit
        (afresh, or a second continuation). Else, and with
        ``False``, the chains' modes decide where they can, and nothing decides where not
        (UNRELIABLE). A fit that passes its diagnostics but leaves a probability within
        four Monte Carlo errors of the threshold (:data:`~bayescomp.decisions.CHECK_MARGIN`)
        is answered by the quadrature too where the quadrature's error places every
        probability clear of it; else (and with ``False``) where within two its draws are
        doubled, up to 8 times.

    Returns
    -------
    HierarchicalResult
        Problems of the final fit are raised as a :class:`SamplingWarning` with advice; such
        a result is not :attr:`~HierarchicalResult.reliable` and makes no decision, unless
        its modes or the quadrature (``quadrature``) decide for it.
    """
    rope = Rope.coerce(rope)
    if len(scores) < 2:
        raise ValueError(f"the hierarchical model needs at least 2 datasets, got {len(scores)}; "
                         "for one dataset use correlated_ttest")
    if len(scores) < FEW_DATASETS:
        warnings.warn(
            f"only {len(scores)} datasets: the spread of the population (sigma0) and its "
            "tails (nu) are then mostly the prior's (on the built-in example's first 2 "
            "datasets sigma0's median moves from 0.10 to 0.17 with its prior's bound); check "
            "how the probabilities move with the prior (bc.sensitivity, "
            "HierarchicalPrior(sigma_factor=...)) before reporting them", InputWarning,
            stacklevel=2)
    prior_name, prior = resolve_prior(prior)
    retries, ess = check_count(retries, "retries", 0), check_count(ess, "ess", 1)
    seeds = sampling.Seeds(seed)
    what = f"hierarchical model {first} - {second}"
    check_rope(rope, scores, first, second)
    data, scale = prepare(scores, first, second, prior)
    var_names = ["delta0", "sigma0", "delta", "sigma"] + (["nu"] if data["population"] else [])

    def sample(fit, run, adapted, stan_seed):
        inits = (continuation_inits(fit, data) if run["continued"] else
                 initial_values(data, chains, seeds.generator("initial_values")))
        return sampling.sample(PROGRAM, data, backend=backend, route=route, chains=chains,
                               inits=inits, **adapted, iter_sampling=run["iter_sampling"],
                               seed=stan_seed, adapt_delta=run["adapt_delta"],
                               max_treedepth=max_treedepth, show_progress=show_progress)

    @cache   # the quadrature, once per route (a close call or not): it reads the data
    def by_quadrature_once(close_call: bool):
        return quadrature_probabilities(data, scale, rope, close_call=close_call)

    def assess(fit, spent: bool) -> Assessment:
        idata = to_user_scale(fit, data, scale, scores.dataset_names,
                              seeds.generator("post_draws"), log_likelihood, prior)
        # R-hat and ESS of the checked and the reported quantities (REPORTED), computed once
        statistics = variable_convergence(idata.posterior, var_names + [
            name for name in REPORTED if name not in var_names and name in idata.posterior])
        diagnostics = diagnose(idata, var_names=var_names, max_treedepth=max_treedepth,
                               statistics=statistics)
        # per draw, chain by chain: what the modes read and, for the last fit, the result
        members = region_masses.next_dataset_member_masses(idata.posterior, rope)
        masses = (region_masses.population_masses(idata.posterior, rope),
                  region_masses.members_average(members))
        modes, separate, groups = (), False, 1
        if not diagnostics.ok and not steps_failed(diagnostics):
            # chains in separate modes, or moving slowly between them: more draws rarely
            # make them agree, but their decisions may
            modes, separate, groups = find_modes(
                idata, unconstrained(fit, data), partial(log_density, data), *masses,
                rng=seeds.generator("mode_mass"), var_names=var_names,
                max_treedepth=max_treedepth)
        settled = False
        if modes and energy_explained(diagnostics, groups):
            settled = settled_decisions(modes, separate, THRESHOLD, groups)
            if not settled and not separate:
                # chains crossing too slowly to be read one by one: what each stratum of the
                # slowest locator implies may still decide, whatever mass the strata hold
                strata = strata_parts(idata.posterior, *masses)
                if strata_decide(strata, idata.posterior.sizes["chain"], THRESHOLD):
                    modes, settled = strata, True
        # chains read as modes that neither mix nor decide alike: on real near-identical
        # pairs (bbtcomp's lr - ridge, knn - gbm) the two retries ended the same way and
        # the quadrature answered, after 2-3 times the first fit's time
        answered = ("quadrature" if quadrature and modes and not settled
                    and energy_explained(diagnostics, groups)
                    and found_their_way(modes, groups) and by_quadrature_once(False).ok else "")
        # both questions' probabilities and Monte Carlo errors, from the chains as sampled
        estimates = region_estimates(*masses)
        close = too_close_to_call(estimates)
        # a clean fit with a probability within CHECK_MARGIN Monte Carlo errors of the
        # threshold: the quadrature answers where its own error places every probability
        # clear of it (the tutorial's aode - j48gr: 2.1-2.3 s, where doubling the draws took
        # up to 4 attempts, 9.4-10.0 s; real_pairs.md, sections 30, 35); else the draws are
        # doubled where within two (at 17 datasets their error can fall below the grid's)
        if quadrature and diagnostics.ok and not answered and too_close_to_call(
                estimates, margin=CHECK_MARGIN) and by_quadrature_once(True).settles():
            answered = "quadrature"
        return Assessment(diagnostics, reported_ess(statistics), close=close, settled=settled,
                          answered=answered, separate=separate,
                          record=dict(modes=len(modes)),
                          reading=(idata, masses, members, modes if settled else (),
                                   estimates))

    def warn_retry(run, diagnostics):
        how = (f"continued every chain from its last draw at {run['step_scale']:g} times "
               f"its step size, {run['iter_sampling']} new draws in place of the earlier ones"
               if run["redraw"] else
               f"continued every chain from its last draw, {run['iter_sampling']} more "
               "draws" if run["continued"] else
               f"retried with adapt_delta {run['adapt_delta']}, {run['iter_warmup']} + "
               f"{run['iter_sampling']} iterations")
        # stacklevel: this function, run_fits, hierarchical, then the caller's line
        warnings.warn(f"{what}: {how} after: " + "; ".join(diagnostics.problems),
                      RetryWarning, stacklevel=4)

    adapt_delta = size_adapt_delta(data["n_datasets"]) if adapt_delta is None else adapt_delta
    # the quadrature, which does not depend on how chains moved, answers for a costly retry
    runs = run_fits(sample, assess, seeds, adapt_delta=adapt_delta, iter_warmup=iter_warmup,
                    iter_sampling=iter_sampling, retries=retries, ess=ess, on_retry=warn_retry,
                    instead_of_retry=lambda: "quadrature" if quadrature
                    and by_quadrature_once(False).ok else "")
    fit, attempts, diagnostics = runs.fit, runs.attempts, runs.assessment.diagnostics
    idata, (population_masses, next_masses), members, modes, estimates = (
        runs.assessment.reading)
    separate = runs.assessment.separate
    post = idata.posterior
    # what chains that do not mix weigh differently on every seed (nu's modes on real
    # near-identical pairs, crossed rarely or not at all), a sum over a grid weighs once
    by_quadrature = (by_quadrature_once(bool(diagnostics.ok))
                     if quadrature and (runs.assessment.answered == "quadrature" or (
                         not diagnostics.ok and (not runs.assessment.settled
                                                 or modes_differ(modes)))) else None)
    quadrature_ok = by_quadrature is not None and by_quadrature.ok
    if quadrature_ok or not runs.assessment.settled:
        # modes of which one still fails its diagnostics decide nothing; the quadrature
        # decides
        warn_if_problems(diagnostics, what + (f" (after {len(attempts)} attempts)"
                                              if len(attempts) > 1 else ""),
                         then=("every probability, mean and interval is by quadrature "
                               "instead (result.quadrature)" if quadrature_ok else ""))

    n_chains, n_draws = post.sizes["chain"], post.sizes["draw"]
    # the last fit's Monte Carlo errors (modes carry their own)
    (_, population_mcse), (_, next_mcse) = estimates
    # every draw once as sampled (chains or strata read alike), or separate modes mixed by
    # their weights
    order = (mixture_indices([m.chains for m in modes], [m.weight for m in modes],
                             n_chains, n_draws) if modes and separate
             else np.arange(n_chains * n_draws))
    delta = post["delta"].values.reshape(n_chains * n_draws, -1)[order]
    population_masses, next_masses = (masses.reshape(-1, 3)[order]
                                      for masses in (population_masses, next_masses))
    counts = np.bincount(order, minlength=n_chains * n_draws)
    # the next dataset's masses at both delta0 of every draw, each a draw (what shares count)
    next_members = members.reshape(n_chains * n_draws, 2, 3)[order].reshape(-1, 3)
    labels = region_labels(first, second)
    if quadrature_ok:
        # the grid answers: every probability and summary; the draws are kept as sampled
        modes, separate = (), False
        (population_probabilities, population_mcse), (next_probabilities, next_mcse) = (
            by_quadrature.estimates)
        delta0_summary, next_summary = (by_quadrature.delta0_summary,
                                        by_quadrature.next_dataset_summary)
    else:
        population_probabilities, next_probabilities = (
            masses.mean(axis=0) for masses in (population_masses, next_masses))
        # the means, sds and intervals from each draw's conditionals, as the
        # probabilities are (a Student-t population's nu always has mass at or below 2,
        # where delta_next has no variance: its sd is infinite)
        delta0_summary, next_summary = (summary(post, counts) for summary in (
            population_summary, next_dataset_summary))
    reliable = diagnostics.ok or bool(modes) or quadrature_ok

    def estimate(scope: str, quantity: str, summary: dict, probabilities, mcse) -> Estimate:
        return Estimate(scope=scope, quantity=quantity, mean=summary["mean"], sd=summary["sd"],
                        hdi_low=summary["hdi_low"], hdi_high=summary["hdi_high"],
                        probabilities=np.asarray(probabilities, dtype=float), labels=labels,
                        mcse=mcse, reliable=reliable,
                        mode_probabilities=tuple(getattr(m, scope) for m in modes),
                        mode_mcse=tuple(getattr(m, f"{scope}_mcse") for m in modes))

    with warnings.catch_warnings():
        # constant datasets and the ROPE were already reported above
        warnings.simplefilter("ignore", ConstantDifferencesWarning)
        warnings.simplefilter("ignore", InputWarning)
        ttests = correlated_ttests(scores, first, second, rope=rope)
    if quadrature_ok:
        shrunken = [dict(zip(("mean", "sd", "hdi_low", "hdi_high", "p_left", "p_rope",
                              "p_right"), [*summary, *probabilities]))
                    for summary, probabilities in zip(by_quadrature.datasets_summary.tolist(),
                                                      by_quadrature.datasets.tolist())]
    else:
        # each dataset's probabilities from delta_i's conditional, draw by draw, as the two
        # questions' are
        dataset_probabilities = region_masses.dataset_probabilities(post, rope, counts)
        shrunken = region_summaries(delta, dataset_probabilities)
    rows = []
    floored = np.logical_or(*floored_masks(data["ss"], data["n_scores"], data["rho"],
                                           data["sigma_lower"]))     # the warning's datasets
    for name, test, shrunk, set_by_floor in zip(scores.dataset_names, ttests, shrunken, floored):
        rows.append({"dataset": name, "n": test.posterior.n, "rho": test.posterior.rho,
                     "floored": bool(set_by_floor),
                     "mean": test.posterior.mean, "p_left_ttest": test.probabilities[0],
                     "p_rope_ttest": test.probabilities[1], "p_right_ttest": test.probabilities[2],
                     **dict(zip(("ttest_hdi_low", "ttest_hdi_high"), test.interval())),
                     **{f"delta_{k}" if k in ("mean", "sd", "hdi_low", "hdi_high") else k: v
                        for k, v in shrunk.items()}})
    settings = dict(prior_name=prior_name, prior=prior,
                    backend=fit.attrs.get("backend", backend), seed=seeds.seed,
                    stan_seeds=tuple(a["stan_seed"] for a in attempts), scale=scale,
                    **{key: fit.attrs.get(key) for key in ("engine_version", "route", "stan_version")},
                    chains=chains, iter_warmup=runs.fresh["iter_warmup"],
                    iter_sampling=attempts[-1]["draws"], adapt_delta=runs.last["adapt_delta"],
                    max_treedepth=max_treedepth, retries=retries, attempts=tuple(attempts),
                    ess=dict(target=ess, **dict(zip(("bulk", "tail"),
                                                    runs.assessment.achieved))))
    return HierarchicalResult(
        first=first, second=second, rope=rope, idata=idata, next_masses=next_members,
        draw_order=order,
        population=estimate("population", "delta0", delta0_summary, population_probabilities,
                            population_mcse),
        next_dataset=estimate("next_dataset", "delta_next", next_summary, next_probabilities,
                              next_mcse),
        datasets=pd.DataFrame(rows).set_index("dataset"),
        baselines=(run_baselines(scores, first, second, rope=rope,
                                 seed=seeds.sequence("baselines")) if baselines
                   else None),
        diagnostics=diagnostics, settings=settings, modes=modes, modes_separate=separate,
        quadrature=by_quadrature)
