"""The two questions' posterior means, sds and shortest 95% intervals from each draw's
conditional distributions, as :mod:`bayescomp.models.region_masses` reads their
probabilities: Rao-Blackwellised, not from where one draw fell.

* delta0. The pairwise program integrates delta0 out and writes, with every draw, its
  conditional given the rest: N(``delta0_centre``, ``delta0_sd``) truncated to the prior's
  bound. delta0's posterior is the mixture of these truncated normals over the draws: its
  mean the average of their means, its variance their average variance plus the variance of
  their means, its interval the mixture's. Most of delta0's posterior variance is within the
  conditionals (95% on the simulated easy 54-dataset pair), which the draws of delta0 add as
  noise: over seeds 1-5 the interval's ends from 4 x 1,000 draws moved by up to 0.066 of
  delta0's sd, read from the conditionals by up to 0.006 (on the tutorial's j48 - j48gr
  0.137 and 0.034; benchmarks/results/vs_baycomp.md, last section).
* The next dataset. Given a draw it is Student-t(nu, delta0, sigma0) (normal without nu):
  its posterior is the mixture of these over the draws. Its mean is delta0's (nu > 1
  always), read at the draw of delta0 and at its antithetic partner
  (:func:`~bayescomp.models.region_masses.antithetic_delta0`), as its probabilities are;
  its sd infinite under a Student-t population (nu's posterior always has mass at nu <= 2);
  its interval the mixture's at the draws of delta0 alone, at most 2,000 of them evenly
  spaced (the Student-t's distribution function is costly, and its tails are exact where a
  few draws would have been all there is): over seeds 1-5 the ends moved by at most 0.002
  of the interval's width on the simulated easy pair, 0.009 on the near-identical one and
  0.006 on three of the tutorial's pairs, against up to 0.028, 0.030 and 0.075 read from the
  draws of the next dataset.

Each interval is found from the mixture's distribution function, taken at points over the
mixture's reach and then again around the ends they give (:func:`refined_interval`).
"""
from __future__ import annotations

import numpy as np
from scipy import special, stats

from bayescomp.models.quadrature_summary import INTERVAL, shortest_interval
from bayescomp.models.region_masses import antithetic_delta0

#: delta0's points: this many over the mixture's reach (every conditional's mean +- REACH of
#: its sds, within the bound)
POINTS = 200
REACH = 8.0
#: the next dataset's points: the draws' quantiles at this many probabilities below the
#: largest share that can lie below the interval's start (1 - INTERVAL), and as many above
#: the smallest share above its end (the Student-t's own quantiles, which would place them
#: without draws, cost as much as the distribution function itself)
TAIL_POINTS = 12
#: around each end of a first interval, this many points over four of its points' spacings:
#: delta0's once, and the next dataset's twice (its Student-t distribution function costs
#: ten normal ones, and its far points from reaching are coarse)
REFINED = 48
NEXT_REFINED = 12
#: the next dataset's interval reads the mixture at every k-th draw, k the least that
#: leaves at most this many (scipy's Student-t distribution function took about 270 ns a
#: point and draw on the simulated easy pair: 80 ms a fit at 4,000 draws)
NEXT_COMPONENTS = 2000
#: components whose distribution functions are held at once (points x CHUNK doubles)
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
    centre, sd = (np.asarray(posterior[name].values, dtype=float).reshape(-1)
                  for name in ("delta0_centre", "delta0_sd"))
    bound = float(posterior.attrs["delta0_bound"])
    weight = _weights(counts, len(centre))
    mean, variance = truncated_moments(centre, sd, bound)
    overall = float(weight @ mean)
    # each conditional's reach from its own (truncated) mean and sd: a conditional whose
    # centre lies far outside the bound holds its mass in a sliver at the bound
    reach = REACH * np.sqrt(variance)
    points = np.linspace(max(-bound, float((mean - reach).min())),
                         min(bound, float((mean + reach).max())), POINTS)
    low, high = refined_interval(
        lambda x: truncated_mixture_cdf(x, centre, sd, bound, weight), points)
    return dict(mean=overall, sd=float(np.sqrt(weight @ variance + weight @ (mean - overall) ** 2)),
                hdi_low=low, hdi_high=high)


def next_dataset_summary(posterior, counts: np.ndarray | None = None) -> dict:
    """The next dataset's mean, sd and shortest 95% interval from its Student-t (normal)
    per draw at the draw's delta0 and its antithetic partner (module docstring); ``counts``
    as in :func:`population_summary`."""
    scale = np.asarray(posterior["sigma0"].values, dtype=float).reshape(-1)
    location = np.asarray(posterior["delta0"].values, dtype=float).reshape(-1)
    partner = antithetic_delta0(posterior).reshape(-1)
    weight = _weights(counts, len(scale))
    mean = float(weight @ (0.5 * location + 0.5 * partner))
    if "nu" in posterior:
        sd = np.inf
    else:
        second = weight @ (scale ** 2 + 0.5 * location ** 2 + 0.5 * partner ** 2)
        sd = float(np.sqrt(second - mean ** 2))
    # the interval's components: every k-th draw, weighed as the draws are
    kept = slice(None, None, -(-len(scale) // NEXT_COMPONENTS))
    location, scale, weight = location[kept], scale[kept], weight[kept] / weight[kept].sum()
    if "nu" in posterior:
        nu = np.asarray(posterior["nu"].values, dtype=float).reshape(-1)[kept]
        standard = lambda z, part: special.stdtr(nu[part], z)      # noqa: E731
    else:
        standard = lambda z, part: special.ndtr(z)                  # noqa: E731
    draws = np.asarray(posterior["delta_next"].values, dtype=float).reshape(-1)
    share = 1 - INTERVAL
    points = np.quantile(draws, np.concatenate([np.linspace(0, 1.2 * share, TAIL_POINTS),
                                                np.linspace(1 - 1.2 * share, 1, TAIL_POINTS)]))

    def cdf(x):
        return mixture_cdf(
            lambda part: standard((x[:, None] - location[part]) / scale[part], part), weight)

    low, high = refined_interval(cdf, reaching(cdf, points, share, float(scale.max())),
                                 NEXT_REFINED, rounds=2)
    return dict(mean=mean, sd=sd, hdi_low=low, hdi_high=high)


def reaching(cdf, points: np.ndarray, share: float, unit: float) -> np.ndarray:
    """``points`` and, where the first (last) has more than a thousandth of ``share``
    below (above) it, more points outwards, the first their span (at least ``unit``) out,
    each next twice as far as the last, until one has not: a few draws of a heavy tail (40
    of a Student-t with nu near 1) may span less than the interval."""
    added, step = [], max(points[-1] - points[0], unit)
    # (end, direction, the mass beyond a point): below the first, above the last
    for far, direction, beyond in ((points[0], -1.0, lambda value: value),
                                   (points[-1], 1.0, lambda value: 1 - value)):
        distance = step
        for _ in range(64):
            if beyond(cdf(np.array([far]))[0]) <= 1e-3 * share:
                break
            far += direction * distance
            added.append(far)
            distance *= 2
    return np.concatenate([points, added])


def refined_interval(cdf, points: np.ndarray, refined: int = REFINED, rounds: int = 1
                     ) -> tuple[float, float]:
    """The shortest interval holding :data:`INTERVAL` of the distribution whose
    distribution function is ``cdf`` (of an array of points), taken at the increasing
    ``points`` and then, ``rounds`` times, at ``refined`` more around each end found, over
    two of the local spacings either side."""
    points = np.unique(points)
    cumulative = cdf(points)
    for _ in range(rounds):
        ends = shortest_interval(points, np.maximum.accumulate(cumulative), INTERVAL)
        around = []
        for end in ends:
            place = np.clip(np.searchsorted(points, end), 1, len(points) - 1)
            spacing = points[place] - points[place - 1]
            around.append(np.linspace(end - 2 * spacing, end + 2 * spacing, refined))
        around = np.concatenate(around)
        around = around[(around > points[0]) & (around < points[-1])]
        points = np.concatenate([points, around])
        cumulative = np.concatenate([cumulative, cdf(around)])
        order = np.argsort(points, kind="stable")
        points, cumulative = points[order], cumulative[order]
    return shortest_interval(points, np.maximum.accumulate(cumulative), INTERVAL)


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


def truncated_mixture_cdf(points: np.ndarray, centre: np.ndarray, sd: np.ndarray,
                          bound: float, weight: np.ndarray) -> np.ndarray:
    """The distribution function at ``points`` of the mixture with weights ``weight`` of
    N(``centre``, ``sd``) each truncated to (-``bound``, ``bound``). Written out on the
    normal's distribution function: scipy's truncnorm, which
    :func:`~bayescomp.models.region_masses.population_masses` reads at a ROPE's two ends,
    took 3 ms a point for 4,000 draws, about a second for an interval's 300 points."""
    below, above = (-bound - centre) / sd, (bound - centre) / sd
    # a conditional whose centre lies below -bound sits in its normal's upper tail: its
    # masses are taken from the upper tail's distribution function, whose small values keep
    # their digits (1 - Phi would lose them)
    flipped = below > 0
    total = np.where(flipped, special.ndtr(-below) - special.ndtr(-above),
                     special.ndtr(above) - special.ndtr(below))
    base = np.where(flipped, special.ndtr(-below), special.ndtr(below))
    sign = np.where(flipped, -1.0, 1.0)
    inside = np.clip(points, -bound, bound)

    def components(part):
        tail = special.ndtr(sign[part] * (inside[:, None] - centre[part]) / sd[part])
        return sign[part] * (tail - base[part]) / total[part]

    return mixture_cdf(components, weight)


def mixture_cdf(components, weight: np.ndarray) -> np.ndarray:
    """A mixture's distribution function at some points, the components' taken
    :data:`CHUNK` at a time: ``components(part)`` gives theirs at every point (points x
    components of the slice ``part``), ``weight`` the components' weights."""
    values = 0.0
    for start in range(0, len(weight), CHUNK):
        part = slice(start, start + CHUNK)
        values = values + components(part) @ weight[part]
    return np.clip(values, 0.0, 1.0)


def _weights(counts: np.ndarray | None, size: int) -> np.ndarray:
    """Each draw's weight: its count (every draw once by default) over their sum."""
    weight = np.ones(size) if counts is None else np.asarray(counts, dtype=float)
    return weight / weight.sum()
