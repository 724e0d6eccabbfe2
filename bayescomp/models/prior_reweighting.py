"""Another prior of nu, read off a fit's draws by Pareto-smoothed importance sampling.

The Student-t priors of :data:`bayescomp.PRIORS` ("paper", "baycomp", "kruschke",
"juarez_steel") differ only in the prior of nu: both Stan programs take the log density of
``u = log(nu - 1)`` as a table (:mod:`bayescomp.models.nu_prior`) and nothing else of the
posterior depends on it. The posterior under prior B is therefore the posterior under A times
``p_B(u) / p_A(u)`` (up to a constant), and a fit under A gives B's probabilities as weighted
means of its draws, with weights proportional to that ratio, smoothed as Vehtari, Simpson,
Gelman, Yao & Gabry (2024, "Pareto smoothed importance sampling", JMLR 25) do
(:func:`arviz.psislw`). Their estimated Pareto shape ``k`` says whether that works: above
:data:`MAX_PARETO_K` the weights' tail is too heavy for the estimate to be trusted, and the
caller fits the model under B instead. The ratio is of one variable, so it is cheap and,
where the posterior of nu sits where both priors have mass, near 1. Where a fit's chains sit
in separate modes, each mode is reweighted among its own draws and its mass moves by its
mean ratio (:func:`weights_in_modes`).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from bayescomp.decisions import decide, decide_modes
from bayescomp.models import nu_prior
from bayescomp.models.convergence import ess_bulk
from bayescomp.models.hierarchical_density import tabulated

if TYPE_CHECKING:
    from bayescomp.models.hierarchical_prior import HierarchicalPrior

#: above this estimated Pareto shape the importance weights are not trusted (Vehtari et al.
#: 2024, section 3: beyond 0.7 the estimate's error falls too slowly with the draws)
MAX_PARETO_K = 0.7


def differs_only_in_nu(base: HierarchicalPrior, prior: HierarchicalPrior) -> bool:
    """Whether two priors are the same Student-t model but for the prior of nu (its family
    and the bounds of alpha and beta), so that one's draws can be reweighted to the other."""
    return (base.population == prior.population == "student"
            and replace(base, nu=prior.nu, alpha=prior.alpha, beta=prior.beta) == prior)


def log_nu_prior(prior: HierarchicalPrior, nu: np.ndarray) -> np.ndarray:
    """The log prior density of ``log(nu - 1)`` as the Stan programs compute it (the same
    table, the same interpolation), up to a constant."""
    table = nu_prior.stan_data_for(prior.nu, prior.alpha, prior.beta)
    return tabulated(np.log(np.asarray(nu, dtype=float) - 1), table["nu_prior_start"],
                     table["nu_prior_step"], table["nu_prior_log_density"],
                     table["nu_prior_slope"])


@dataclass(frozen=True)
class Reweighting:
    """Importance weights that turn draws under the prior ``base`` into draws under another.

    Attributes
    ----------
    base : str
        The prior the draws were made under.
    weights : numpy.ndarray
        (chain, draw), Pareto-smoothed, summing to 1.
    pareto_k : float
        The estimated shape of the weights' tail; at most :data:`MAX_PARETO_K` to be used.
    ess : float
        ``1 / sum(weights^2)``: the draws' worth as independent draws of the other posterior,
        before their autocorrelation is counted.
    """

    base: str
    weights: np.ndarray
    pareto_k: float
    ess: float

    @property
    def usable(self) -> bool:
        """Whether the weights can stand in for a fit (``pareto_k`` at most 0.7)."""
        return bool(self.pareto_k <= MAX_PARETO_K)


def importance_weights(log_ratio: np.ndarray, base: str = "") -> Reweighting:
    """Pareto-smoothed, normalised weights from the log density ratios of (chain, draw)
    draws."""
    log_ratio = np.asarray(log_ratio, dtype=float)
    with warnings.catch_warnings():
        # arviz warns when k is above 0.7: the caller reads pareto_k and refits instead
        warnings.simplefilter("ignore")
        from arviz import psislw

        smoothed, pareto_k = psislw(log_ratio.reshape(-1) - log_ratio.max())
    weights = np.exp(smoothed - smoothed.max())
    weights = (weights / weights.sum()).reshape(log_ratio.shape)
    return Reweighting(base, weights, float(pareto_k), float(1 / np.sum(weights ** 2)))


def weights_in_modes(log_ratio: np.ndarray, parts, masses, base: str = "") -> Reweighting:
    """Importance weights for draws whose chains sit in separate modes (``parts``: tuples of
    chains) of estimated ``masses`` (NaN: not estimated, every chain counts alike).

    Each mode's draws are weighted among themselves (Pareto-smoothed), and its mass moves
    by the mean ratio over its draws: under the other prior a mode's mass is its mass times
    that mean. The weights sum to 1 over all draws; ``pareto_k`` is the largest of the
    modes'."""
    log_ratio = np.asarray(log_ratio, dtype=float)
    masses = np.asarray(masses, dtype=float)
    if not np.all(np.isfinite(masses)):
        masses = np.array([len(chains) for chains in parts], dtype=float)
    within = [importance_weights(log_ratio[list(chains)]) for chains in parts]
    shift = log_ratio.max()
    log_masses = np.array([np.log(mass) + np.log(np.mean(np.exp(log_ratio[list(chains)] - shift)))
                           for chains, mass in zip(parts, masses)])
    moved = np.exp(log_masses - log_masses.max())
    moved /= moved.sum()
    weights = np.zeros_like(log_ratio)
    for chains, mode, mass in zip(parts, within, moved):
        weights[list(chains)] = mass * mode.weights
    return Reweighting(base, weights, max(mode.pareto_k for mode in within),
                       float(1 / np.sum(weights ** 2)))


def reweighting(nu: np.ndarray, base_name: str, base: HierarchicalPrior,
                prior: HierarchicalPrior, parts=(), masses=()) -> Reweighting:
    """The weights that turn (chain, draw) draws of ``nu`` under ``base`` into ones under
    ``prior``; the two must differ only in nu's prior (:func:`differs_only_in_nu`). Where
    the fit's chains sit in modes (``parts``: tuples of chains, of estimated ``masses``),
    the weights of :func:`weights_in_modes`."""
    if not differs_only_in_nu(base, prior):
        raise ValueError(f"{prior} differs from the prior {base_name!r} in more than the prior "
                         "of nu: its posterior cannot be read off that fit's draws")
    log_ratio = log_nu_prior(prior, nu) - log_nu_prior(base, nu)
    if len(parts):
        return weights_in_modes(log_ratio, parts, masses, base_name)
    return importance_weights(log_ratio, base_name)


def weighted_estimate(per_draw: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The weighted means of (chain, draw, 3) per-draw probabilities and their Monte Carlo
    errors.

    The error is the delta method's for a self-normalised importance estimate from Markov
    chains: the estimate's error is about the mean of ``g = S w (m - p)`` (``S`` draws,
    ``w`` the normalised weights, ``m`` a draw's value, ``p`` the estimate), whose standard
    error is its root mean square over the square root of its bulk effective size. With equal
    weights this is :func:`bayescomp.models.modes.probability_mcse`.
    """
    values = np.asarray(per_draw, dtype=float)
    size = weights.size
    plain = values.reshape(-1, values.shape[-1]).mean(axis=0)
    # as a correction of the plain mean: a region every draw holds gets exactly 1
    estimate = plain + np.einsum("cd,cdr->r", weights, values - plain)
    spread = size * weights[..., None] * (values - estimate)
    return estimate, np.sqrt(np.mean(spread ** 2, axis=(0, 1)) / ess_bulk(spread))


def weighted_decision(estimate: tuple, per_draw: np.ndarray, weights: np.ndarray, parts,
                      threshold: float, labels) -> str:
    """The decision of weighted draws by the rule of a fit: ``estimate`` (the probabilities
    and errors of :func:`weighted_estimate`) two errors past ``threshold``; where the chains
    sit in modes (``parts``: tuples of chains), the decision every mode makes from its own
    draws (``per_draw``: chain, draw, 3) and weights."""
    if not len(parts):
        return decide(estimate[0], threshold, labels, mcse=estimate[1])
    modes = [weighted_estimate(per_draw[list(part)], weights[list(part)] / weights[list(part)].sum())
             for part in parts]
    return decide_modes([p for p, _ in modes], [e for _, e in modes], threshold, labels)


def weighted_hdi(values: np.ndarray, weights: np.ndarray, probability: float = 0.95
                 ) -> tuple[float, float]:
    """The shortest interval from one draw to another that holds more than ``probability``
    of the weighted draws' mass (with equal weights, :func:`arviz.hdi`'s interval)."""
    order = np.argsort(values.reshape(-1))
    sorted_values, cumulative = values.reshape(-1)[order], np.cumsum(weights.reshape(-1)[order])
    starts = np.concatenate([[0.0], cumulative[:-1]])
    # for each draw as the lower end, the first draw at which the mass exceeds `probability`
    ends = np.searchsorted(cumulative, starts + probability + 1e-12)
    inside = ends < len(sorted_values)
    widths = np.where(inside, sorted_values[np.minimum(ends, len(sorted_values) - 1)]
                      - sorted_values, np.inf)
    low = int(np.argmin(widths))
    return float(sorted_values[low]), float(sorted_values[ends[low]])
