"""delta0's posterior mean, sd and shortest 95% interval from its conditional per draw.

The pairwise program integrates delta0 out and writes, with every draw, its conditional
given the rest: N(``delta0_centre``, ``delta0_sd``) truncated to the prior's bound
(:func:`bayescomp.models.region_masses.population_masses`, which reads the probabilities
from it). delta0's posterior is the mixture of these truncated normals over the draws, so
its mean is the average of their means, its variance their average variance plus the
variance of their means, and its interval the mixture's, found from the mixture's
distribution function: Rao-Blackwellised, as the probabilities are. Most of delta0's
posterior variance is within the conditionals (95% on the simulated easy 54-dataset pair,
where the conditionals' means vary least), which the draws of delta0 would add as noise:
over seeds 1-5 the interval's ends from 4 x 1,000 draws moved by 0.05-0.07 of delta0's sd,
read from the conditionals by 0.004 (benchmarks/results/vs_baycomp.md).
"""
from __future__ import annotations

import numpy as np
from scipy import special, stats

from bayescomp.models.quadrature_summary import INTERVAL, shortest_interval

#: the points delta0's distribution function is first taken at, spread over the mixture's
#: reach (every conditional's mean +- REACH of its sds, within the bound); then a quarter as
#: many again around each end of the interval they give, four of their spacings wide
POINTS = 200
REACH = 8.0
#: conditionals whose distribution functions are held at once (points x CHUNK doubles)
CHUNK = 1000


def population_summary(posterior, counts: np.ndarray | None = None) -> dict:
    """delta0's mean, sd and shortest 95% interval (``mean``, ``sd``, ``hdi_low``,
    ``hdi_high``) from its conditional per draw (module docstring).

    Parameters
    ----------
    posterior : xarray.Dataset
        With ``delta0_centre`` and ``delta0_sd`` (chain, draw) and
        ``attrs["delta0_bound"]``, as :func:`bayescomp.models.hierarchical_program.to_user_scale`
        writes them.
    counts : numpy.ndarray, optional
        How many times each draw (chain-major) counts: the modes mixed by their weights;
        every draw once by default.
    """
    centre = np.asarray(posterior["delta0_centre"].values, dtype=float).reshape(-1)
    sd = np.asarray(posterior["delta0_sd"].values, dtype=float).reshape(-1)
    bound = float(posterior.attrs["delta0_bound"])
    weight = (np.ones(len(centre)) if counts is None else np.asarray(counts, dtype=float))
    used = weight > 0
    centre, sd, weight = centre[used], sd[used], weight[used] / weight[used].sum()
    mean, variance = truncated_moments(centre, sd, bound)
    overall = float(weight @ mean)
    spread = float(np.sqrt(weight @ variance + weight @ (mean - overall) ** 2))
    # each conditional's reach from its own (truncated) mean and sd: a conditional whose
    # centre lies far outside the bound holds its mass in a sliver at the bound
    reach = REACH * np.sqrt(variance)
    low = max(-bound, float((mean - reach).min()))
    high = min(bound, float((mean + reach).max()))
    points = np.linspace(low, high, POINTS)
    cumulative = mixture_cdf(points, centre, sd, bound, weight)
    first, last = shortest_interval(points, cumulative, INTERVAL)
    # the interval's ends to a hundredth of the first points' spacing
    step = (high - low) / (POINTS - 1)
    around = np.concatenate([np.linspace(end - 2 * step, end + 2 * step, POINTS // 4)
                             for end in (first, last)])
    around = around[(around > low) & (around < high)]
    points = np.concatenate([points, around])
    cumulative = np.concatenate([cumulative, mixture_cdf(around, centre, sd, bound, weight)])
    order = np.argsort(points, kind="stable")
    points, cumulative = points[order], np.maximum.accumulate(cumulative[order])
    first, last = shortest_interval(points, cumulative, INTERVAL)
    return dict(mean=overall, sd=spread, hdi_low=first, hdi_high=last)


def truncated_moments(centre: np.ndarray, sd: np.ndarray, bound: float) -> tuple:
    """The mean and variance of each N(``centre``, ``sd``) truncated to (-``bound``,
    ``bound``): the normal's own where both bounds are more than :data:`REACH` sds away
    (the truncation moves them by less than e^-32 of themselves), scipy's truncnorm
    elsewhere (slower, and exact with a bound many sds out, where the closed forms take
    0 / 0)."""
    mean, variance = centre.copy(), sd ** 2
    cut = (bound - np.abs(centre)) < REACH * sd
    if cut.any():
        mean[cut], variance[cut] = stats.truncnorm(
            (-bound - centre[cut]) / sd[cut], (bound - centre[cut]) / sd[cut],
            loc=centre[cut], scale=sd[cut]).stats("mv")
    return mean, variance


def mixture_cdf(points: np.ndarray, centre: np.ndarray, sd: np.ndarray, bound: float,
                weight: np.ndarray) -> np.ndarray:
    """The distribution function at ``points`` of the mixture with weights ``weight`` of
    N(``centre``, ``sd``) each truncated to (-``bound``, ``bound``)."""
    below, above = (-bound - centre) / sd, (bound - centre) / sd
    # a conditional whose centre lies below -bound sits in its normal's upper tail: its
    # masses are taken from the upper tail's distribution function, whose small values keep
    # their digits (1 - Phi would lose them)
    flipped = below > 0
    total = np.where(flipped, special.ndtr(-below) - special.ndtr(-above),
                     special.ndtr(above) - special.ndtr(below))
    base = np.where(flipped, special.ndtr(-below), special.ndtr(below))
    inside = np.clip(points, -bound, bound)
    values = np.zeros(len(points))
    sign = np.where(flipped, -1.0, 1.0)
    for start in range(0, len(centre), CHUNK):
        part = slice(start, start + CHUNK)
        tail = special.ndtr(sign[part] * (inside[:, None] - centre[part]) / sd[part])
        values += (sign[part] * (tail - base[part]) / total[part]) @ weight[part]
    return np.clip(values, 0.0, 1.0)
