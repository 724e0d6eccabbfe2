"""The hierarchical model's probabilities integrated over nu, from fits at fixed values of nu.

Where nu's posterior has two modes (a heavy-tailed population, nu near 1-2, and a near-normal
one, nu near 20) that every chain visits only every few hundred draws, the draws say well
what each value of nu implies but not how much mass each value holds; when the modes make
different decisions (:mod:`bayescomp.models.strata` finds that they do), no number of draws
within reach decides, and the verdict depends on the seed. nu is one number, so its
posterior can be had by quadrature instead. With u = log(nu - 1):

    P(region) = int P(region | u) p(u | data) du,

- **P(region | u)** from a fit of the model with u held fixed (``nu_fixed`` in
  ``stan/hierarchical.stan``): one mode, which NUTS samples as it samples any other fit.
- **log p(u | data)** = log p(u) + int_0^u E[s(u') | u', data] du' + constant, with s the
  derivative in u of the only other term of the joint density that holds u, the
  lambda_i's Gamma(nu / 2, nu / 2) prior: s = (nu - 1) / 2 sum_i (log(nu / 2) + 1 -
  digamma(nu / 2) + log(lambda_i) - lambda_i), averaged over each lambda_i's conditional
  given delta_i, delta0 and sigma0 (Fisher's identity: the derivative of a log
  marginal density is the posterior mean of the derivative of the log joint density; the
  "thermodynamic integration" of Gelman & Meng 1998). Its mean at each node comes from the
  same fit.

Both integrals are trapezoid rules on nodes ``STEP`` apart, from where the fit's draws of nu
lie, extended at each end until the end's weight is below ``TAIL`` of the largest. Errors:
the Monte Carlo error by a parametric bootstrap of every node's estimates (the score errors
accumulate along the integral), the rule's error by Richardson's estimate (the rule on every
other node), and the mass beyond the ends; the three add in quadrature. A fit at a fixed nu
whose chains disagree twice (R-hat: between nu's two modes, or near nu = 1) is read as
separate modes are (:mod:`bayescomp.models.modes`): whatever mixture of its chains the
posterior is lies between their estimates, so the errors of its score and probabilities span
them. Where fits that cannot be read so twice (a sampler that struggled: divergences, tree
depth, E-BFMI, draws that may be biased; or a chain with fewer than 100 effective draws of its
own) hold more
than :data:`UNREAD_MAX` of the posterior of nu, the integral is not reported as reliable.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
import xarray as xr
from scipy import special

from bayescomp.models import region_masses
from bayescomp.models.diagnostics import ESS_PER_CHAIN_MIN, diagnose
from bayescomp.models.hierarchical_density import tabulated
from bayescomp.models.hierarchical_program import initial_values, to_user_scale
from bayescomp.models.convergence import ess_bulk, ess_tail
from bayescomp.models.hierarchical_runs import region_estimates, struggles
from bayescomp.models.modes import probability_mcse
from bayescomp.sampling.seeds import stan_seed

#: distance of the nodes in u = log(nu - 1). On bbtcomp's knn - gbm, where P(gbm better) is
#: 0.962 by a direct quadrature, nodes 0.5 apart gave 0.961-0.966 on 3 seeds, 0.25 apart 0.962
STEP = 0.5
#: the grid is extended while an end node's weight is above this share of the largest (the
#: mass beyond is estimated and counted as error)
TAIL = 1e-2
#: u is not integrated beyond these (nu from 1 + 4.5e-5 to 2.2e4)
U_LIMITS = (-10.0, 10.0)
#: a fit at a fixed nu takes these shares of the warm-up and the draws asked of the fit (300
#: and 500 of the default 500 and 1000); one that fails its diagnostics is run again with
#: twice both, at :data:`SAFER_ADAPT_DELTA`
NODE_SHARES = (0.6, 0.5)
#: adapt_delta of the longer fits at a node (as hierarchical_runs' safer runs after
#: divergences)
SAFER_ADAPT_DELTA = 0.99
#: bootstrap replications of the Monte Carlo error
REPLICATIONS = 400
#: the largest share of the posterior of nu that fits which cannot be read (a sampler that
#: struggled, or a chain with too few effective draws of its own: what no spread of chains
#: bounds) may hold for the integral to stand
UNREAD_MAX = 0.05
#: what a fit at fixed nu must sample well (R-hat, ESS), beside the sampler's own checks
CHECKED = ("delta0", "delta_next", "nu_score")


@dataclass(frozen=True)
class Node:
    """What a fit at u = log(nu - 1) gives: the score's mean and its Monte Carlo error, each
    question's probabilities and errors (population, next dataset: (3,); datasets: (q, 3)),
    the fit's problems (none when it passed its diagnostics) and whether it can be read with
    them: its sampler did not struggle (divergences, saturated tree depth, low E-BFMI: draws
    that may be biased) and every chain on its own holds 100 effective draws, so that the
    spread of the chains bounds what they disagree on."""

    log_nu_minus_one: float
    score: float
    score_mcse: float
    population: np.ndarray
    population_mcse: np.ndarray
    next_dataset: np.ndarray
    next_dataset_mcse: np.ndarray
    datasets: np.ndarray
    problems: tuple = ()
    readable: bool = True
    seconds: float = 0.0


@dataclass(frozen=True)
class NuIntegration:
    """The probabilities integrated over nu (:mod:`bayescomp.models.nu_integration`).

    Attributes
    ----------
    population, next_dataset : ndarray (3,)
        P(left / rope / right) of delta0 and of the next dataset.
    population_mcse, next_dataset_mcse : ndarray (3,)
        Their errors: Monte Carlo, the rule's and the tails', in quadrature.
    datasets : ndarray (dataset, 3)
        Each dataset's probabilities.
    nodes : pandas.DataFrame
        Per node: ``log_nu_minus_one``, ``nu``, ``weight`` (its share of the posterior of
        nu), ``score`` and ``score_mcse``, the population's probabilities, ``problems`` and
        ``seconds``.
    problems : tuple of str
        Why the integral is not reliable (fits at fixed nu that cannot be read, holding more
        than :data:`UNREAD_MAX` of nu's posterior; a grid that reached its limits); empty
        when it is.
    """

    population: np.ndarray
    population_mcse: np.ndarray
    next_dataset: np.ndarray
    next_dataset_mcse: np.ndarray
    datasets: np.ndarray = field(repr=False)
    nodes: pd.DataFrame = field(repr=False)
    problems: tuple = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def score_draws(nu: float, standardised2: np.ndarray) -> np.ndarray:
    """Per draw (..., from the squared standardised deviations r_i^2 = ((delta_i - delta0) /
    sigma0)^2, (..., dataset)), the derivative in u = log(nu - 1) of sum_i log Gamma(lambda_i |
    nu / 2, rate nu / 2), averaged over each lambda_i's exact conditional given r_i,
    Gamma((nu + 1) / 2, rate (nu + r_i^2) / 2) (Rao-Blackwellised: the score of the drawn
    lambda_i varies far more, its derivative being multiplied by (nu - 1) / 2)."""
    half = 0.5 * nu
    shape, rate = half + 0.5, 0.5 * (nu + standardised2)
    # E[log(lambda)] = digamma(shape) - log(rate), E[lambda] = shape / rate
    per_dataset = (np.log(half) + 1 - special.digamma(half) + special.digamma(shape)
                   - np.log(rate) - shape / rate)
    return 0.5 * (nu - 1) * per_dataset.sum(axis=-1)


def chain_spread(values: np.ndarray) -> np.ndarray:
    """Half the range of the chains' means of (chain, draw, m) ``values`` (m,)."""
    means = values.mean(axis=1)
    return 0.5 * (means.max(axis=0) - means.min(axis=0))


def log_density(u: np.ndarray, score: np.ndarray, log_prior: np.ndarray) -> np.ndarray:
    """log p(u | data) at the nodes ``u`` (increasing), normalised so that the trapezoid rule
    integrates it to 1: the log prior plus the trapezoid integral of the score."""
    steps = 0.5 * np.diff(u) * (score[1:] + score[:-1])
    logs = log_prior + np.concatenate([[0.0], np.cumsum(steps)])
    return logs - special.logsumexp(logs + np.log(rule_weights(u)))


def rule_weights(u: np.ndarray) -> np.ndarray:
    """The trapezoid rule's weights at the nodes ``u``: half a step at each end."""
    step = np.diff(u)
    rule = np.zeros_like(u, dtype=float)
    rule[:-1] += 0.5 * step
    rule[1:] += 0.5 * step
    return rule


def log_weights(u: np.ndarray, score: np.ndarray, log_prior: np.ndarray) -> np.ndarray:
    """Normalised log weights of the nodes in the trapezoid rule over p(u | data)."""
    return log_density(u, score, log_prior) + np.log(rule_weights(u))


def integrate(u, score, log_prior, values) -> np.ndarray:
    """The integral of ``values`` (node, ...) over p(u | data)."""
    weights = np.exp(log_weights(u, score, log_prior))
    return np.tensordot(weights, values, axes=1)


def integral_error(u, score, score_mcse, log_prior, values, errors,
                   rng: np.random.Generator) -> np.ndarray:
    """Standard error of :func:`integrate` of ``values``: Monte Carlo (a parametric bootstrap
    of every node's score and values), the rule's (Richardson: a third of the change from the
    rule on every other node, an O(step^2) rule) and the mass beyond the ends (the end
    weights over their decay rate, where a probability could be anything), in quadrature;
    the errors of nodes whose fits failed their diagnostics already span their chains'
    estimates (:func:`node_fitter`)."""
    estimate = integrate(u, score, log_prior, values)
    replicas = [integrate(u, score + score_mcse * rng.standard_normal(score.shape), log_prior,
                          np.clip(values + errors * rng.standard_normal(values.shape), 0, 1))
                for _ in range(REPLICATIONS)]
    monte_carlo = np.std(replicas, axis=0)
    rule = np.zeros_like(estimate)
    if u.size >= 5:
        coarse = [integrate(u[start::2], score[start::2], log_prior[start::2],
                            values[start::2]) for start in (0, 1)]
        rule = np.max([np.abs(c - estimate) for c in coarse], axis=0) / 3
    density = log_density(u, score, log_prior)
    tails = 0.0
    for end, inward in ((0, 1), (-1, -2)):
        # the mass beyond an end: its density over the rate at which the log density falls
        # towards it (at least 0.1 per unit of u: a flatter tail counts as ten units long)
        rate = (density[inward] - density[end]) / abs(u[end] - u[inward])
        tails += np.exp(density[end]) / max(rate, 0.1)
    return np.sqrt(monte_carlo ** 2 + rule ** 2 + tails ** 2)


def integrate_nu(fit_node: Callable[[float, int], Node], u_range: tuple[float, float],
                 log_prior: Callable[[np.ndarray], np.ndarray],
                 rng: np.random.Generator) -> NuIntegration:
    """Fit the model at nodes of u = log(nu - 1) covering ``u_range`` and integrate.

    Parameters
    ----------
    fit_node : callable
        ``fit_node(u, length)`` fits the model with u held and returns a :class:`Node`
        (:func:`node_fitter`): length 1, then 2 after a fit that failed its diagnostics.
    u_range : (float, float)
        Where the fit's draws of u lie; the nodes start one step beyond and grow outwards
        while an end holds more than :data:`TAIL` of the largest weight.
    log_prior : callable
        The prior's log density of u at an array of nodes.
    rng : numpy.random.Generator
        Draws the bootstrap of the Monte Carlo error.
    """
    low, high = (np.clip(value, *U_LIMITS) for value in u_range)
    grid = np.clip(STEP * np.arange(np.floor(low / STEP) - 1, np.ceil(high / STEP) + 2),
                   *U_LIMITS)
    nodes: dict[float, Node] = {}

    def fitted(u: float) -> Node:
        node = fit_node(u, 1)
        return fit_node(u, 2) if node.problems else node

    problems = []
    while True:
        for u in grid:
            if float(u) not in nodes:
                nodes[float(u)] = fitted(float(u))
        u = np.array(sorted(nodes))
        score = np.array([nodes[x].score for x in u])
        weights = np.exp(log_weights(u, score, log_prior(u)))
        grow = [end for end, weight in ((u[0] - STEP, weights[0]), (u[-1] + STEP, weights[-1]))
                if weight > TAIL * weights.max()]
        inside = [end for end in grow if U_LIMITS[0] <= end <= U_LIMITS[1]]
        if not inside:
            if grow:
                problems.append(f"the posterior of nu still holds {weights[[0, -1]].max():.2g} "
                                f"of its mass at log(nu - 1) = {U_LIMITS}, the grid's limits")
            break
        grid = np.array(inside)
    ordered = [nodes[x] for x in u]
    unread = np.array([not node.readable for node in ordered])
    if weights[unread].sum() > UNREAD_MAX:
        problems.append(f"fits at fixed nu that cannot be read (a sampler that struggled, or "
                        f"a chain with fewer than {ESS_PER_CHAIN_MIN} effective draws) hold "
                        f"{weights[unread].sum():.2g} of the posterior of nu (at most "
                        f"{UNREAD_MAX}): " + "; ".join(
                            f"nu = {1 + np.exp(node.log_nu_minus_one):.3g}: "
                            + "; ".join(node.problems) for node in ordered if not node.readable))
    score_mcse = np.array([node.score_mcse for node in ordered])
    prior = log_prior(u)

    def question(name):
        values = np.array([getattr(node, name) for node in ordered])
        errors = np.array([getattr(node, f"{name}_mcse") for node in ordered])
        return (integrate(u, score, prior, values),
                integral_error(u, score, score_mcse, prior, values, errors, rng))

    population, population_mcse = question("population")
    next_dataset, next_mcse = question("next_dataset")
    table = pd.DataFrame({
        "log_nu_minus_one": u, "nu": 1 + np.exp(u), "weight": weights,
        "score": score, "score_mcse": score_mcse,
        **{f"population_{region}": [node.population[k] for node in ordered]
           for k, region in enumerate(("left", "rope", "right"))},
        "problems": ["; ".join(node.problems) for node in ordered],
        "seconds": [node.seconds for node in ordered]})
    return NuIntegration(population=population, population_mcse=population_mcse,
                         next_dataset=next_dataset, next_dataset_mcse=next_mcse,
                         datasets=integrate(u, score, prior,
                                            np.array([node.datasets for node in ordered])),
                         nodes=table, problems=tuple(problems))


def integrate_over_nu(fit_node: Callable[[float, int], Node], data: dict, nu: np.ndarray,
                      rng: np.random.Generator) -> NuIntegration:
    """:func:`integrate_nu` from where a fit's draws of ``nu`` lie (their 0.5% and 99.5%
    quantiles), under the prior of nu tabulated in the Stan ``data``."""
    table = [data[key] for key in ("nu_prior_start", "nu_prior_step", "nu_prior_log_density",
                                   "nu_prior_slope")]
    with np.errstate(divide="ignore"):     # nu = 1 exactly: log(0), clipped to the limits
        u_range = tuple(np.log(np.quantile(np.asarray(nu) - 1, [0.005, 0.995])))
    return integrate_nu(fit_node, u_range, lambda u: tabulated(u, *table), rng)


def node_fitter(sample: Callable, data: dict, scale: float, datasets, prior, rope, sequence,
                *, chains: int, iter_warmup: int, iter_sampling: int, adapt_delta: float,
                max_treedepth: int) -> Callable[[float, int], Node]:
    """``fit_node(u, length)`` for :func:`integrate_nu`: the hierarchical model fitted with
    log(nu - 1) held at u and read as :func:`bayescomp.hierarchical` reads a fit.

    ``sample(data, inits, seed, iter_warmup, iter_sampling, adapt_delta)`` runs the program
    (``length`` times the warm-up and draws; longer fits at adapt_delta at least
    :data:`SAFER_ADAPT_DELTA`: near nu = 1 the fits diverge as a funnel does); ``data`` and
    ``scale`` are :func:`~bayescomp.models.hierarchical_program.prepare`'s; each node's seeds
    are spawned from ``sequence`` by its place on the grid and the length, so that a node has
    the same draws whatever order the nodes are fitted in.
    """
    warmup, draws = (max(1, int(share * count)) for share, count in
                     zip(NODE_SHARES, (iter_warmup, iter_sampling)))

    def fit_node(u: float, length: int) -> Node:
        place = int(round((u - U_LIMITS[0]) / STEP))
        inits_sequence, post_sequence, stan_sequence = np.random.SeedSequence(
            sequence.entropy, spawn_key=sequence.spawn_key + (place, length)).spawn(3)
        held = dict(data, nu_fixed=1, log_nu_fixed=float(u))
        inits = initial_values(held, chains, np.random.default_rng(inits_sequence))
        for init in inits:
            init.pop("log_nu_minus_one")
        start = time.perf_counter()
        fit = sample(held, inits, stan_seed(stan_sequence), length * warmup, length * draws,
                     adapt_delta if length == 1 else max(SAFER_ADAPT_DELTA, adapt_delta))
        posterior = fit.posterior
        # the constant that hierarchical_program's readers take for the sampled log(nu - 1)
        posterior["log_nu_minus_one"] = xr.DataArray(
            np.full(posterior["sigma0"].shape + (1,), float(u)),
            dims=("chain", "draw", "log_nu_minus_one_dim_0"))
        idata = to_user_scale(fit, held, scale, datasets, np.random.default_rng(post_sequence),
                              False, prior)
        user = idata.posterior
        score = score_draws(1 + np.exp(float(u)), ((user["delta"].values
                                                   - user["delta0"].values[..., None])
                                                  / user["sigma0"].values[..., None]) ** 2)
        # checked: what the integral reads (the score, and the draws whose conditionals give
        # the probabilities) and the sampler; a dataset's sigma_i mixing slowly at one value
        # of nu moves none of these
        idata.posterior["nu_score"] = idata.posterior["delta0"].copy(data=score)
        diagnostics = diagnose(idata, var_names=CHECKED, max_treedepth=max_treedepth)
        population_masses = region_masses.population_masses(idata.posterior, rope)
        next_masses = region_masses.next_dataset_masses(idata.posterior, rope)
        (population, population_mcse), (next_dataset, next_mcse) = region_estimates(
            population_masses, next_masses)
        score_mean = float(score.mean())
        score_mcse = float(probability_mcse(score[..., None])[0])
        # as modes reads chains one by one: each with 100 effective draws of what is read
        readable = diagnostics.ok or not struggles(diagnostics) and min(
            min(ess_bulk(values[[chain]]), ess_tail(values[[chain]]))
            for values in (idata.posterior[name].values for name in CHECKED)
            for chain in range(values.shape[0])) >= ESS_PER_CHAIN_MIN
        if not diagnostics.ok:
            # chains that disagree: whatever mixture of them the posterior is lies between
            # their estimates (the argument of bayescomp.models.modes), so the error spans them
            score_mcse, population_mcse, next_mcse = (
                np.maximum(error, chain_spread(values)) for values, error in (
                    (score[..., None], score_mcse), (population_masses, population_mcse),
                    (next_masses, next_mcse)))
            score_mcse = float(score_mcse[0])
        counts = np.ones(score.size, dtype=int)
        return Node(float(u), score_mean, score_mcse, population, population_mcse, next_dataset,
                    next_mcse, region_masses.dataset_probabilities(idata.posterior, rope, counts),
                    tuple(diagnostics.problems), readable, time.perf_counter() - start)

    return fit_node
