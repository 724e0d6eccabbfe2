"""Bayesian ranking of many algorithms: the Plackett-Luce model of Calvo et al. (2018, 2019).

Each dataset ranks the algorithms by their mean score over its splits (best first). The
rankings are modelled as Plackett-Luce draws with worths ``w`` on the simplex and a
Dirichlet prior, as in scmamp's ``bPlackettLuceModel``: an algorithm with worth ``w_k`` is
ranked first on a new dataset with probability ``w_k``, and the order of the worths is the
order of the algorithms. Stan samples the worths (``stan/plackett_luce.stan``); everything
else is computed from the draws.

Ties and the ROPE. A win by 1e-5 accuracy is no win: as with the local ROPE of Wainer's
Bayesian Bradley-Terry model (JMLR 2023), algorithms whose mean scores on a dataset differ by
at most ``rope`` (units of the scores; 0.01 as in the pairwise comparisons) tie there. Being
within the ROPE is not transitive (A ~ B, B ~ C, not A ~ C), so groups are formed one way:
sorted best first, an algorithm joins the current group when within the ROPE of the group's
*best* mean, else it starts the next group (A, B tie; C leads the next group). A group never
spans more than the ROPE, as chaining neighbours would. ``rope=0`` ties equal means only
(within 1e-9 relative, floating-point noise). ``ties="average"`` (default) treats a tied
ranking as the coarsened observation it is: its likelihood is the probability of that tied
ranking, the sum of the Plackett-Luce probabilities of the strict orders consistent with it
(every order of each tied group), computed exactly over the subsets of each group
(``stan/plackett_luce.stan``; up to :data:`MAX_TIED` algorithms tied on one dataset).
``ties="random"`` breaks each tie by one random order drawn with the seed, as scmamp does.

What a rank is. Rank 1 is the largest *worth* (the algorithm most likely first on a new
dataset); ``expected_rank`` is the posterior mean rank of an algorithm's worth, which
settles on one integer as datasets accrue. It is not the algorithm's mean rank on the datasets
(``observed_ranks.mean()``), which stays as spread as the data: the outputs name both.
"""
from __future__ import annotations

import arviz as az
import numpy as np
import pandas as pd

from bayescomp import sampling
from bayescomp.arguments import check_count
from bayescomp.data.scores import Scores
from bayescomp.decisions import THRESHOLD, best_algorithm
from bayescomp.models.diagnostics import diagnose, variable_convergence, warn_if_problems
from bayescomp.models.hierarchical_runs import Assessment, Runs, reported_ess, run_fits
from bayescomp.models.modes import probability_mcse
from bayescomp.models.ranking_result import RankingResult
from bayescomp.rope import Rope


TIES = ("average", "random")

#: The most algorithms tied on one dataset that ``ties="average"`` takes: the likelihood of a
#: group of g tied algorithms sums over its 2^g subsets (``benchmarks/results/ranking.md``: 30
#: datasets, 15 of them one group of 15, ranked in 2.2 s).
MAX_TIED = 15

#: what the ``ess`` target is of: the worths, from which every rank probability is read
REPORTED = ("worth",)


def mean_scores(scores: Scores) -> pd.DataFrame:
    """Datasets x algorithms: each algorithm's mean score over the dataset's splits."""
    return pd.DataFrame([d.values.mean(axis=1) for d in scores.datasets],
                        index=pd.Index(scores.dataset_names, name="dataset"),
                        columns=pd.Index(scores.algorithms, name="algorithm"))


def tie_places(values, higher_is_better: bool = True, rope: float = 0.0,
               rtol: float = 1e-9) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tie groups of many rows at once (rows x algorithms: each row one dataset's means,
    or one draw's population means).

    Sorted best first, an algorithm joins the current group when its value is within ``rope``
    of the group's best, else it starts a new group (see the module notes). A gap that
    exceeds ``rope`` by less than ``rtol`` times the row's largest absolute value (at least
    1) is floating-point rounding (the same scores summed in another order; 0.9 - 0.89 >
    0.01).

    Returns
    -------
    order, start, end : ndarray of int (rows x algorithms)
        Per row, the algorithms best first; for each place, the first place of its group and
        the place after the group's last.
    """
    values = np.atleast_2d(np.asarray(values, dtype=float))
    key = -values if higher_is_better else values
    order = np.argsort(key, axis=1, kind="stable")
    ranked = np.take_along_axis(key, order, axis=1)
    tolerance = float(rope) + rtol * np.maximum(1.0, np.abs(values).max(axis=1))
    rows, k = values.shape
    start = np.zeros((rows, k), dtype=int)
    best = ranked[:, 0]                      # each row's current group's best
    for place in range(1, k):
        leads = ranked[:, place] - best > tolerance      # the gap to the group's best
        start[:, place] = np.where(leads, place, start[:, place - 1])
        best = np.where(leads, ranked[:, place], best)
    end = np.full((rows, k), k)
    for place in range(k - 2, -1, -1):
        end[:, place] = np.where(start[:, place + 1] == start[:, place], end[:, place + 1],
                                 place + 1)
    return order, start, end


def tie_groups(means, higher_is_better: bool = True, rope: float = 0.0,
               rtol: float = 1e-9) -> list[np.ndarray]:
    """Indices of the algorithms grouped as tied on one dataset (``means``), best first, as
    :func:`tie_places` groups them."""
    order, start, end = (row[0] for row in tie_places(means, higher_is_better, rope, rtol))
    return [order[first:end[first]] for first in np.unique(start)]


def tie_layout(groups, ties: str = "average",
               rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A ranking given as tie groups, laid out for ``stan/plackett_luce.stan``.

    Parameters
    ----------
    groups : list of array of int
        Tie groups, best first (see :func:`tie_groups`).
    ties : "average" or "random"
        "average": the groups as they are (the program sums over their orders). "random":
        each group put in one random order, its algorithms then untied.
    rng : numpy.random.Generator
        For the random orders.

    Returns
    -------
    order, group_size : ndarray of int (algorithms)
        The algorithms best first, each group's together; the size of the group that starts
        at each place, 0 at the other places.
    """
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    if ties == "random":
        rng = np.random.default_rng() if rng is None else rng
        groups = [[k] for group in groups for k in rng.permutation(group)]
    order = np.concatenate([np.asarray(g, dtype=int) for g in groups])
    group_size = np.zeros(len(order), dtype=int)
    starts = np.cumsum([0] + [len(g) for g in groups[:-1]])
    group_size[starts] = [len(g) for g in groups]
    return order, group_size


def observed_ranks(means: pd.DataFrame, higher_is_better: bool = True,
                   rope: float = 0.0) -> pd.DataFrame:
    """Rank of every algorithm on every dataset (1 best), ties (:func:`tie_groups` with
    ``rope``) sharing their average rank."""
    ranks = np.empty(means.shape)
    for row, values in enumerate(means.to_numpy()):
        place = 1
        for group in tie_groups(values, higher_is_better, rope):
            ranks[row, group] = place + (len(group) - 1) / 2
            place += len(group)
    return pd.DataFrame(ranks, index=means.index, columns=means.columns)


def ranks_of_draws(worths: np.ndarray) -> np.ndarray:
    """Per draw (row), the rank of every algorithm by worth, 1 for the largest."""
    return np.argsort(np.argsort(-worths, axis=1), axis=1) + 1


def _half_width(rope) -> float:
    rope = Rope.coerce(rope)
    if rope.low != -rope.high:  # a tie has no direction
        raise ValueError(f"the ranking's ROPE must be symmetric, a half-width, got {rope}")
    return float(rope.high)


def _dirichlet(prior, algorithms) -> np.ndarray:
    alpha = np.broadcast_to(np.asarray(prior, dtype=float), (len(algorithms),)).copy()
    if not np.all(np.isfinite(alpha)) or np.any(alpha <= 0):
        raise ValueError(f"the Dirichlet prior must be positive and finite for every "
                         f"algorithm {list(algorithms)}, got {alpha.tolist()}")
    return alpha


def rank_algorithms(scores: Scores, *, rope: float = 0.01, seed: int | None = None,
                    ties: str = "average", prior: float = 1.0, higher_is_better: bool = True,
                    interval: float = 0.95, backend: str = "auto", chains: int = 4,
                    iter_warmup: int = 500, iter_sampling: int = 500, adapt_delta: float = 0.8,
                    retries: int = 2, ess: int = 1000,
                    show_progress: bool = False) -> RankingResult:
    """Rank several algorithms across datasets with a Bayesian Plackett-Luce model.

    Parameters
    ----------
    scores : Scores
        Paired scores of at least two algorithms on one or more datasets; each dataset ranks
        the algorithms by their mean score over its splits.
    rope : float or symmetric Rope
        Half-width of the ROPE, in the units of the scores (default 0.01, as the pairwise
        comparisons): on a dataset, algorithms within it of the best of their group are
        tied (see the module notes). 0 ties equal means only.
    seed : int, optional
        Seeds Stan and the random tie orders, each from its own stream
        (:mod:`bayescomp.sampling.seeds`); drawn when None. Recorded in ``settings["seed"]``,
        Stan's in ``settings["stan_seeds"]``. The same seed gives the same draws on the same
        backend.
    ties : "average" or "random"
        How a tie is modelled (see the module notes): the probability of the tied ranking,
        the sum over the orders of the tied algorithms (default; at most :data:`MAX_TIED`
        tied on one dataset), or one random order per dataset (scmamp's choice).
    prior : float or sequence of float
        Dirichlet concentration of the worths, one number for all algorithms or one each.
        1 (default, as scmamp) is uniform on the simplex: the posterior mode is then the
        maximum-likelihood estimate.
    higher_is_better : bool
        False for losses (error rates): the smallest mean then ranks first.
    interval : float
        Probability of the credible intervals (expected rank and worth HDI).
    backend, chains, iter_warmup, iter_sampling, adapt_delta, show_progress
        Stan settings (see :func:`bayescomp.sampling.sample`).
    retries : int
        Fits after the first that fail their diagnostics, run by the hierarchical model's
        rules (:func:`bayescomp.models.hierarchical_runs.safer_run`).
    ess : int
        Target bulk and tail ESS of every worth: a clean fit below it is extended from where
        its chains are, with their step size and metric, by the draws its ESS per draw says
        are missing (at most 4 times ``iter_sampling`` in all). A fit whose largest P(best)
        lies within two Monte Carlo errors of the verdict's threshold (0.95) doubles its
        draws, up to 8 times ``iter_sampling``, so that the verdict does not turn on the
        seed. The ESS achieved is in ``settings["ess"]``, every fit in
        ``settings["attempts"]``.

    Returns
    -------
    RankingResult
        A fit that fails its diagnostics raises a :class:`SamplingWarning` and gives no verdict.
    """
    if len(scores.algorithms) < 2:
        raise ValueError(f"ranking needs at least 2 algorithms, the scores hold "
                         f"{list(scores.algorithms)}")
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    if not 0 < interval < 1:
        raise ValueError(f"interval must lie in (0, 1), got {interval}")
    retries, ess = check_count(retries, "retries", 0), check_count(ess, "ess", 1)
    alpha = _dirichlet(prior, scores.algorithms)
    rope = _half_width(rope)
    seeds = sampling.Seeds(seed)
    rng = seeds.generator("tie_orders")
    means = mean_scores(scores)
    orders, group_sizes, tied = [], [], 0
    for name, values in zip(scores.dataset_names, means.to_numpy()):
        groups = tie_groups(values, higher_is_better, rope)
        largest = max(len(g) for g in groups)
        tied += largest > 1
        if ties == "average" and largest > MAX_TIED:
            raise ValueError(
                f"dataset {name!r}: {largest} algorithms tie within the ROPE ({rope:g}), more "
                f"than the {MAX_TIED} ties='average' sums over (2^{largest} subsets); use a "
                "smaller rope or ties='random'")
        order, group_size = tie_layout(groups, ties, rng)
        orders.append(order + 1)   # Stan counts from 1
        group_sizes.append(group_size)
    data = dict(K=len(scores.algorithms), D=len(scores), order=np.array(orders),
                group_size=np.array(group_sizes), alpha=alpha)
    algorithms = tuple(scores.algorithms)
    runs = _sample(data, algorithms, seeds, backend, chains, iter_warmup, iter_sampling,
                   adapt_delta, retries, ess, show_progress)
    fit, attempts, diagnostics = runs.fit, runs.attempts, runs.assessment.diagnostics
    (p_best, p_best_mcse, p_best_gap_mcse), ranks = runs.assessment.reading
    names = pd.Index(algorithms, name="algorithm")
    worth_var = fit.posterior["worth"]
    fit.posterior = fit.posterior.assign_coords(
        {worth_var.dims[-1]: list(algorithms)}).rename({worth_var.dims[-1]: "algorithm"})
    warn_if_problems(diagnostics, "Plackett-Luce ranking")

    k = len(algorithms)
    draws = closed_worths(fit).reshape(-1, k)
    worths = pd.DataFrame(draws, columns=names)
    ranks = ranks.reshape(-1, k)             # the last assessment's, of these draws
    rank_probabilities = pd.DataFrame(
        [[np.mean(ranks[:, a] == r) for r in range(1, k + 1)] for a in range(k)],
        index=names, columns=pd.Index(range(1, k + 1), name="rank"))
    tail = (1 - interval) / 2
    expected_rank = pd.DataFrame({
        "mean": ranks.mean(axis=0), "low": np.quantile(ranks, tail, axis=0, method="lower"),
        "high": np.quantile(ranks, 1 - tail, axis=0, method="higher")}, index=names)
    hdi = np.array([az.hdi(draws[:, a], hdi_prob=interval) for a in range(k)])
    worth = pd.DataFrame({"mean": draws.mean(axis=0), "sd": draws.std(axis=0, ddof=1),
                          "hdi_low": hdi[:, 0], "hdi_high": hdi[:, 1]}, index=names)
    prior_text = (f"alpha = {alpha[0]:g}" if np.all(alpha == alpha[0])
                  else "alpha = (" + ", ".join(f"{a:g}" for a in alpha) + ")")
    settings = dict(seed=seeds.seed, stan_seeds=tuple(a["stan_seed"] for a in attempts),
                    rope=rope, ties=ties, prior=alpha, prior_text=prior_text,
                    higher_is_better=higher_is_better,
                    direction="higher is better" if higher_is_better else "lower is better",
                    interval=interval,
                    backend=fit.attrs.get("backend", backend), chains=chains,
                    iter_warmup=runs.fresh["iter_warmup"],
                    iter_sampling=int(fit.posterior.sizes["draw"]),
                    adapt_delta=runs.last["adapt_delta"], datasets=len(scores),
                    tied_datasets=int(tied),
                    attempts=tuple(attempts),
                    seconds=float(sum(a["seconds"] for a in attempts)),
                    ess=dict(target=ess, **dict(zip(("bulk", "tail"),
                                                    runs.assessment.achieved))))
    return RankingResult(algorithms, worths, p_best, p_best_mcse, p_best_gap_mcse,
                         rank_probabilities, expected_rank, worth,
                         observed_ranks(means, higher_is_better, rope), fit, diagnostics,
                         settings)


def closed_worths(fit) -> np.ndarray:
    """The worths' draws (chain, draw, algorithm), each draw divided by its sum: a simplex
    sums to 1 only to rounding (and to the digits the engine writes), so close it, that the
    worths are probabilities."""
    draws = fit.posterior["worth"].values
    return draws / draws.sum(axis=-1, keepdims=True)


def fit_ranks(fit) -> np.ndarray:
    """The ranks of every draw of a fit (chain, draw, algorithm): :func:`ranks_of_draws` of
    its :func:`closed_worths`."""
    worths = closed_worths(fit)
    return ranks_of_draws(worths.reshape(-1, worths.shape[-1])).reshape(worths.shape)


def p_best_estimates(ranks: np.ndarray, algorithms) -> tuple[pd.Series, pd.Series, pd.Series]:
    """From the ranks of every draw (chain, draw, algorithm; :func:`fit_ranks`), each
    algorithm's P(best), the share of draws in which its worth is the largest; its
    Monte Carlo standard error (:func:`~bayescomp.models.modes.probability_mcse` of the
    indicator; 0 for one that never changes); and the error of the gap between the largest
    P(best) and each, from the difference of the two indicators on the same draws (one
    algorithm's first rank is another's loss: :func:`bayescomp.decisions.leaders`)."""
    first = (ranks == 1).astype(float)
    names = pd.Index(algorithms, name="algorithm")
    # shares of counts: exact, whatever the order of the sum
    p_best = first.mean(axis=(0, 1))
    gaps = first[..., [int(np.argmax(p_best))]] - first
    return (pd.Series(p_best, index=names, name="p_best"),
            pd.Series(probability_mcse(first), index=names, name="p_best_mcse"),
            pd.Series(probability_mcse(gaps), index=names, name="p_best_gap_mcse"))


def _sample(data: dict, algorithms, seeds, backend, chains, iter_warmup, iter_sampling,
            adapt_delta, retries, ess, show_progress) -> Runs:
    """The fit of ``stan/plackett_luce.stan``, run by the hierarchical model's rules
    (:func:`~bayescomp.models.hierarchical_runs.run_fits`): retried after failed
    diagnostics, extended from where the chains are towards the ESS target or while the
    largest P(best) is too close to the threshold to call. The last assessment's ``reading``
    is :func:`p_best_estimates` and the :func:`fit_ranks` they were read from."""

    def sample(fit, run, adapted, stan_seed):
        # a continued chain starts at its last draw (closed: Stan checks a simplex to 1e-8)
        inits = ([dict(worth=last.tolist()) for last in closed_worths(fit)[:, -1]]
                 if run["continued"] else None)
        return sampling.sample("plackett_luce", data, backend=backend, chains=chains,
                               inits=inits, **adapted, iter_sampling=run["iter_sampling"],
                               seed=stan_seed, adapt_delta=run["adapt_delta"],
                               show_progress=show_progress)

    def assess(fit, spent: bool) -> Assessment:
        statistics = variable_convergence(fit.posterior, REPORTED)
        # the verdict's own rule: is the leader's P(best) within two errors of the threshold
        ranks = fit_ranks(fit)
        estimates = p_best_estimates(ranks, algorithms)
        _, close = best_algorithm(*estimates, THRESHOLD)
        return Assessment(diagnose(fit, var_names=list(REPORTED), statistics=statistics),
                          reported_ess(statistics, REPORTED), close=close,
                          reading=(estimates, ranks))

    return run_fits(sample, assess, seeds, adapt_delta=adapt_delta, iter_warmup=iter_warmup,
                    iter_sampling=iter_sampling, retries=retries, ess=ess)
