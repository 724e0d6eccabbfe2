"""Many algorithms, one posterior: a joint hierarchical model of K algorithms on fold scores.

On dataset i the K - 1 contrasts of every split (coordinates of the sum-zero subspace,
:mod:`bayescomp.models.joint_program`) are multivariate normal with mean delta_i and
covariance Sigma_i, correlated between splits by rho_i as in the pairwise model; delta_i ~
MVt(nu, delta0, Sigma0) across datasets. Every prior is invariant under orthogonal changes
of the contrasts' basis, so nothing depends on the order of the algorithms or a reference
one, and at K = 2 the model is the paper's (``stan/joint.stan`` states it; Sigma_i is
integrated out in closed form). Every pair's delta0, its next-dataset difference and every
dataset's shrunken pair effect are linear functions of the same draws, and so are the
ranks: the pair table, ``p_best`` and ``rank_probabilities`` cannot contradict each other
as K(K-1)/2 separate fits can.

Copies of delta0. Given the sampled parameters delta0 is normal (``stan/joint.stan``,
device 4), and every posterior draw carries 16 draws of delta0 from that conditional
(:func:`~bayescomp.models.joint_program.delta0_copies`). The pair table, P(best), the ranks
and :attr:`JointResult.population_draws` are shares of these copies: still shares of one
set of draws, so they cannot contradict each other, but with most of delta0's conditional
noise averaged away (on the AutoML benchmark's pairs near 0.95, a Monte Carlo error of
P(equivalent) of 0.0014 instead of 0.0034 with one draw; benchmarks/results/joint.md). The
program's own draw of delta0 (``delta0`` of :attr:`JointResult.idata`) is what the
diagnostics check and the modes are found by.

Ranks with the ROPE. Per draw, the algorithms' population means (relative to their
average, :attr:`JointResult.population_draws`) are sorted best first and grouped as the
Plackett-Luce ranking groups mean scores (:func:`bayescomp.models.ranking.tie_places`): an
algorithm joins the current group when it is within the ROPE's upper bound of the group's
best, else it leads the next group. A group of g algorithms holding places r..r+g-1 gives
each of them 1/g of each of these ranks. So rows and columns of ``rank_probabilities`` sum
to 1, and at K = 2, ``p_best`` of the first is P(first better) + P(equivalent) / 2.
"""
from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import arviz as az
import numpy as np
import pandas as pd

from bayescomp import sampling
from bayescomp.arguments import check_count
from bayescomp.data.scores import Scores
from bayescomp.decisions import THRESHOLD
from bayescomp.models.diagnostics import diagnose, variable_convergence, warn_if_problems
from bayescomp.models.estimate import Estimate
from bayescomp.models.hierarchical_prior import HierarchicalPrior, resolve_prior
from bayescomp.models.hierarchical_result import region_summaries
from bayescomp.models.hierarchical_runs import (Assessment, energy_explained, reported_ess,
                                                run_fits, steps_failed)
from bayescomp.models.joint_density import log_density, unconstrained
from bayescomp.models.joint_modes import find_joint_modes
from bayescomp.models.joint_posterior import (dataset_probabilities, next_dataset_masses,
                                              pair_estimates, pair_posterior, population_masses)
from bayescomp.models.joint_program import (DELTA0_COPIES, PROGRAM, algorithm_effects,
                                            continuation_inits, initial_values, pair_vectors,
                                            prepare, rotate, sampling_rotation, stan_data)
from bayescomp.models.joint_ranks import p_best_mcse, rank_probabilities
from bayescomp.models.joint_result import JointResult
from bayescomp.models.modes import mixture_indices
from bayescomp.rope import Rope, region_labels

if TYPE_CHECKING:
    from bayescomp.annotations import RopeLike

#: the quantities whose R-hat and ESS decide whether a fit is reliable
CHECKED = ["delta0", "delta", "sigma0", "nu"]
#: the quantities whose bulk and tail ESS the ``ess`` target is of: the checked ones and
#: every pair's population scale, which the next-dataset question reads
REPORTED = CHECKED + ["population_sd"]


def select_algorithms(scores: Scores, algorithms) -> Scores:
    """The scores of ``algorithms`` (default all), in that order; a ValueError names what is
    unknown or repeated, or says that fewer than 2 are left, and a TypeError what is not a
    sequence of names (a ROPE given in its place, or one name: its letters are no names)."""
    if algorithms is None:
        chosen = tuple(scores.algorithms)
    else:
        if isinstance(algorithms, str) or not hasattr(algorithms, "__iter__"):
            raise TypeError(f"algorithms must be a sequence of names of "
                            f"{list(scores.algorithms)}, got {algorithms!r} (the ROPE and the "
                            "seed are rope= and seed=)")
        chosen = tuple(algorithms)
        unknown = [a for a in chosen if a not in scores.algorithms]
        if unknown or len(set(chosen)) != len(chosen):
            raise ValueError(f"algorithms must be distinct names of {list(scores.algorithms)}, "
                             f"got {list(chosen)}")
    if len(chosen) < 2:
        raise ValueError(f"compare_many needs at least 2 algorithms, got {list(chosen)}")
    return scores if chosen == tuple(scores.algorithms) else scores.subset(algorithms=chosen)


def compare_many(scores: Scores, algorithms=None, *, rope: RopeLike = 0.01,
                 seed: int | None = None, prior: str | HierarchicalPrior = "paper",
                 backend: str = "auto",
                 chains: int = 4, iter_warmup: int = 500, iter_sampling: int = 1000,
                 adapt_delta: float = 0.95, max_treedepth: int = 10, retries: int = 2,
                 ess: int = 1000, show_progress: bool = False) -> JointResult:
    """Compare K algorithms across datasets with one joint hierarchical model.

    Parameters
    ----------
    scores : Scores
        Paired fold scores; every dataset needs at least 3 splits.
    algorithms : sequence of str, optional
        The algorithms compared, in the order of the pair table (default: all of them).
    rope : float or (float, float)
        Region of practical equivalence in the units of the scores.
    seed : int, optional
        As :func:`bayescomp.hierarchical`'s: Stan's seed of each attempt and the initial
        values are spawned from it (recorded in ``settings``).
    prior : str or HierarchicalPrior
        The pairwise model's priors (:data:`bayescomp.PRIORS`) of nu and of the bounds of
        delta0 and sigma0; the population must be Student-t ("gaussian" is refused).
    backend, chains, iter_warmup, iter_sampling, adapt_delta, max_treedepth, show_progress
        NUTS settings, as :func:`bayescomp.hierarchical`'s (a warm-up of 500 decided as
        1000 did on three real collections and four hard simulated ones, but for two pairs
        at the threshold that differ between seeds at either, in 0.62-0.80 of the time on
        the real ones; benchmarks/results/joint.md).
    retries : int
        How many times a fit that fails its diagnostics is sampled again, by the pairwise
        model's rules (:func:`hierarchical_runs.safer_run`): a fit that only mixed slowly
        goes on from where its chains are, with their step size and metric, for
        ``iter_sampling`` more draws (twice that at the second retry), pooled with the
        earlier ones; after divergences the chains go on at half their step and new draws
        replace the divergent ones; a fit that diverges again, or saturates the tree depth,
        starts afresh with twice the warm-up and draws. ``settings["attempts"]`` records
        every fit, ``settings["iter_sampling"]`` the draws per chain of the result.
    ess : int
        Target of the smallest bulk and tail ESS of the reported quantities (:data:`REPORTED`:
        every pair's delta0, delta_i and population scale, sigma0, nu), as
        :func:`bayescomp.hierarchical`'s: a fit that passes its diagnostics below it is
        extended in chunks from where its chains are, up to
        :data:`~bayescomp.models.hierarchical_runs.MAX_DRAWS_FACTOR` times
        ``iter_sampling`` draws per chain or until a chunk brings no effective draws. (On
        the AutoML benchmark's 7 frameworks a default fit had 626-748 of nu and 640-889 of
        delta_i's tail.) It is not extended when a probability is near the threshold, unlike
        the pairwise model: with K(K-1)/2 pairs and two questions some probability usually
        is, and on the tutorial every fit then ran to 8 times its draws, 4.4-5.3 times as
        long, deciding the same (benchmarks/results/joint.md); such a probability is
        reported undecided, and a larger ``iter_sampling`` narrows that band. The ESS
        achieved is in ``settings["ess"]`` and the summary.

    Returns
    -------
    JointResult

    Warns
    -----
    ConstantDifferencesWarning
        Naming every pair whose differences are constant on some datasets, and those
        datasets (the model then bounds their noise below by the scores' resolution).
    """
    rope = Rope.coerce(rope)
    retries, ess = check_count(retries, "retries", 0), check_count(ess, "ess", 1)
    scores = select_algorithms(scores, algorithms)
    prior_name, prior = resolve_prior(prior)
    if prior.population != "student":
        raise ValueError("the joint model has a Student-t population; the 'gaussian' prior "
                         "is not available")
    if len(scores) < 2:
        raise ValueError(f"the joint model needs at least 2 datasets, got {len(scores)}")
    seeds = sampling.Seeds(seed)
    names = tuple(scores.algorithms)
    k = len(names)
    data, scale = prepare(scores, prior)
    # sampled along the population's principal directions, turned back in pair_posterior
    rotation = sampling_rotation(data)
    sampled = rotate(data, rotation)
    start = initial_values(sampled, chains, seeds.generator("initial_values"))
    index_pairs, vectors = pair_vectors(k)
    pair_names = [f"{names[a]} - {names[b]}" for a, b in index_pairs]

    def sample(fit, run, adapted, stan_seed):
        # a continued chain goes on from its last draw (hierarchical_runs.continuation)
        inits = continuation_inits(fit, sampled) if run["continued"] else start
        return sampling.sample(PROGRAM, stan_data(sampled), backend=backend, chains=chains,
                               inits=inits, **adapted, iter_sampling=run["iter_sampling"],
                               seed=stan_seed, adapt_delta=run["adapt_delta"],
                               max_treedepth=max_treedepth, show_progress=show_progress)

    def assess(fit, spent: bool) -> Assessment:
        idata = pair_posterior(fit, data, scale, scores.dataset_names, pair_names, rotation,
                               seeds.generator("post_draws"))
        # R-hat and ESS of the checked and the reported quantities, computed once
        statistics = variable_convergence(idata.posterior, REPORTED)
        diagnostics = diagnose(idata, var_names=CHECKED, max_treedepth=max_treedepth,
                               statistics=statistics)
        masses = (population_masses(idata.posterior, rope),
                  next_dataset_masses(idata.posterior, rope))
        modes = None
        if not diagnostics.ok and not steps_failed(diagnostics):
            # chains in separate modes, or crossing slowly: retries rarely make them agree,
            # but their decisions may (bayescomp.models.joint_modes)
            modes = find_joint_modes(idata, *masses, var_names=CHECKED,
                                     max_treedepth=max_treedepth,
                                     unconstrained=unconstrained(fit, sampled),
                                     log_density=partial(log_density, sampled),
                                     rng=seeds.generator("mode_mass"))
        # chains in one group only mix slowly, and more draws help: they are read one by one
        # only when the retries are spent
        settled = (modes is not None and (modes.groups > 1 or spent)
                   and energy_explained(diagnostics, modes.groups) and modes.settled(THRESHOLD))
        # not extended for a probability near the threshold (ess's notes)
        return Assessment(diagnostics, reported_ess(statistics, REPORTED), settled=settled,
                          separate=settled and modes.separate,
                          reading=(idata, masses, modes if settled else None))

    runs = run_fits(sample, assess, seeds, adapt_delta=adapt_delta, iter_warmup=iter_warmup,
                    iter_sampling=iter_sampling, retries=retries, ess=ess)
    fit, attempts, diagnostics = runs.fit, runs.attempts, runs.assessment.diagnostics
    idata, masses, modes = runs.assessment.reading
    settled, post = runs.assessment.settled, idata.posterior
    if not settled:
        warn_if_problems(diagnostics, f"joint model of {k} algorithms")
    reliable = diagnostics.ok or settled
    n_chains, n_draws = post.sizes["chain"], post.sizes["draw"]
    # every draw once as sampled, or separate modes mixed by their estimated weights
    order = (mixture_indices(modes.parts, modes.weights, n_chains, n_draws)
             if modes and modes.weighed else np.arange(n_chains * n_draws))

    def mixed(values: np.ndarray) -> np.ndarray:
        """(chain, draw, ...) -> the draws of ``order`` (draw, ...)."""
        return values.reshape((n_chains * n_draws,) + values.shape[2:])[order]

    # every draw's copies of delta0 (contrast coordinates), one row each, and nu and the
    # population's scale repeated alongside them
    contrast = mixed(post["delta0_copies"].values).reshape(-1, k - 1)
    delta0 = contrast @ vectors.T                       # draw x copy, pair
    estimates = pair_estimates(*masses, order)
    rows, population, next_dataset = [], {}, {}
    # its own stream: "post_draws" gave delta_i and the copies of delta0 their numbers
    next_rng = seeds.generator("next_draws")
    nu = np.repeat(mixed(post["nu"].values), DELTA0_COPIES)
    spread = np.repeat(mixed(post["population_sd"].values), DELTA0_COPIES, axis=0)
    for p, ((a, b), label) in enumerate(zip(index_pairs, pair_names)):
        first, second = names[a], names[b]
        per_mode = {scope: dict(mode_probabilities=modes.probabilities[(scope, p)],
                                mode_mcse=modes.mcse[(scope, p)]) if modes else {}
                    for scope in ("population", "next_dataset")}
        (pop_p, pop_e), (next_p, next_e) = estimates[p]
        low, high = az.hdi(delta0[:, p], hdi_prob=0.95)
        next_draws = delta0[:, p] + spread[:, p] * next_rng.standard_t(nu)
        nlow, nhigh = az.hdi(next_draws, hdi_prob=0.95)
        labels = region_labels(first, second)
        population[(first, second)] = Estimate(
            "population", "delta0", float(delta0[:, p].mean()), float(delta0[:, p].std(ddof=1)),
            float(low), float(high), pop_p, labels, pop_e, reliable, **per_mode["population"])
        # its sd: none, as the pairwise model's (nu's posterior always has mass at nu <= 2,
        # where the Student-t has no variance)
        next_dataset[(first, second)] = Estimate(
            "next_dataset", "delta_next", float(next_draws.mean()), np.inf,
            float(nlow), float(nhigh), next_p, labels, next_e, reliable,
            **per_mode["next_dataset"])
        row = dict(first=first, second=second, delta0_mean=float(delta0[:, p].mean()),
                   delta0_hdi_low=float(low), delta0_hdi_high=float(high))
        for scope, estimate in (("population", population[(first, second)]),
                                ("next_dataset", next_dataset[(first, second)])):
            row.update({f"{scope}_{key}": float(v) for key, v in
                        zip(("p_left", "p_rope", "p_right"), estimate.probabilities)})
            row[f"{scope}_decision"] = estimate.decision(THRESHOLD)
        row["reliable"] = reliable
        rows.append(row)
    table = pd.DataFrame(rows)
    effects = algorithm_effects(contrast, k)
    ranks = rank_probabilities(effects, rope, names)
    copies = post["delta0_copies"].values                # chain, draw, copy, pair (as sampled)
    best_errors, gap_errors = p_best_mcse(
        algorithm_effects(copies.reshape(-1, k - 1), k).reshape(copies.shape[:3] + (k,)),
        rope, int(np.argmax(ranks[1].to_numpy())),
        *((modes.parts, modes.weights, modes.weight_errors)
          if modes and modes.weighed else ()))
    delta = mixed(post["delta"].values)                  # draw, dataset, pair
    # each dataset's probabilities from delta_i's conditional, draw by draw, every draw
    # counted as often as the reported posterior holds it
    probabilities = dataset_probabilities(fit, data, scale, rotation, rope,
                                          np.bincount(order, minlength=n_chains * n_draws))
    # delta (draw, dataset, pair) read dataset by dataset, pair by pair within each
    summaries = iter(region_summaries(delta.reshape(delta.shape[0], -1),
                                      probabilities.reshape(-1, 3)))
    per_dataset = []
    for i, ds in enumerate(scores.datasets):
        for p, (a, b) in enumerate(index_pairs):
            per_dataset.append(dict(dataset=ds.name, first=names[a], second=names[b],
                                    floored=bool(data["floored"][i, p]),
                                    mean=float((ds.values[a] - ds.values[b]).mean()),
                                    **{f"delta_{key}" if key in ("mean", "sd", "hdi_low", "hdi_high")
                                       else key: value
                                       for key, value in next(summaries).items()}))
    settings = dict(seed=seeds.seed, stan_seeds=tuple(a["stan_seed"] for a in attempts),
                    prior=prior_name, backend=fit.attrs.get("backend", backend), chains=chains,
                    iter_warmup=runs.fresh["iter_warmup"], iter_sampling=n_draws,
                    adapt_delta=runs.last["adapt_delta"], max_treedepth=max_treedepth,
                    datasets=len(scores), scale=scale, attempts=tuple(attempts),
                    seconds=float(sum(a["seconds"] for a in attempts)),
                    ess=dict(target=ess, **dict(zip(("bulk", "tail"),
                                                    runs.assessment.achieved))),
                    nu_median=float(np.median(nu)))
    return JointResult(
        algorithms=names, rope=rope, idata=idata, table=table, population=population,
        next_dataset=next_dataset, population_draws=effects,
        p_best=ranks[1].rename("p_best"),
        p_best_mcse=pd.Series(best_errors, index=ranks.index, name="p_best_mcse"),
        p_best_gap_mcse=pd.Series(gap_errors, index=ranks.index, name="p_best_gap_mcse"),
        rank_probabilities=ranks,
        datasets=pd.DataFrame(per_dataset), diagnostics=diagnostics, settings=settings,
        draw_order=order, modes=modes.parts if modes else (),
        modes_separate=bool(modes and modes.separate),
        mode_weights=tuple(modes.weights) if modes else (),
        mode_weight_errors=tuple(modes.weight_errors) if modes else (),
        weights_note=modes.weights_note if modes else None)
