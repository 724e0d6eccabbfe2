"""Per draw, the masses left of, inside and right of a ROPE of the pairwise hierarchical
model's two questions, the population's mean difference delta0 and the next dataset's, and
of every dataset's shrunken difference delta_i.

All are Rao-Blackwellised: each draw contributes the probabilities of the regions under the
exact conditional distribution of the quantity given that draw's other parameters, not a 0/1
indicator of where one draw of the quantity fell. Their means estimate the same posterior
probabilities as the shares of draws in each region, with a smaller Monte Carlo error.

* delta0 given the rest is a normal truncated to the prior's bound (delta0 is integrated out
  in ``stan/hierarchical.stan``, device 4, and the program writes the conditional's centre
  and sd with every draw). On the tutorial's real pairs nearest the 0.95 threshold this
  halves the Monte Carlo error of P(equivalent), as 3.6 times the draws would
  (``benchmarks/results/real_pairs.md``).
* The next dataset's delta given the rest is Student-t(nu, delta0, sigma0), normal without nu,
  averaged over the draw of delta0 and its antithetic partner: the draw reflected in
  delta0's conditional (its quantile u taken to 1 - u), itself an exact draw of that
  conditional. The average estimates the same probabilities; a region's mass is monotone in
  delta0 left and right of the ROPE, so the two are negatively correlated there, and no
  average of two such draws has a larger variance than one draw. On real pairs this takes
  nearly all of what integrating delta0 out exactly would gain: the Monte Carlo error of
  the next dataset's P(left) and P(right) 0.38-1.0 times one draw's, of P(equivalent)
  0.32-1.0 times (``benchmarks/bench_conditional_masses.py``, ``results/real_pairs.md``).
* delta_i given the rest (delta0 among it) is normal
  (``hierarchical_program.delta_conditional``; the program integrates it out and the caller
  draws it afterwards).

Every part of the package that reads a pairwise fit's probabilities (its estimates and their
errors, its modes, the ROPE sensitivity) calls these functions, so that one question gets
one estimator everywhere. The joint model (:func:`bayescomp.compare_many`) reads delta0 as
the shares of its draws instead: its pair table, P(best) and rank probabilities come from
the same draws of all pairs at once, and only then is P(a best) never above P(a better than
or equivalent to b), draw for draw. It draws 16 copies of delta0 from the same kind of
conditional per posterior draw, which takes most of what Rao-Blackwellising gains
(:mod:`bayescomp.models.joint`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy import special, stats

if TYPE_CHECKING:
    from bayescomp.rope import Rope

#: draws whose masses are held at once by :func:`average_over_draws`
CHUNK = 500


class Symmetric:
    """The distribution functions that :meth:`bayescomp.rope.Rope.probabilities` reads
    (``cdf``, ``sf``) of a location-scale family symmetric about its location, from its
    standard distribution function ``standard``: without scipy.stats' checks of every
    argument, which took two thirds of a frozen normal's time on 4,000 draws of 54 datasets
    (21 ms against 7.5 ms, beside a test run)."""

    def __init__(self, standard, loc, scale):
        self.standard, self.loc, self.scale = standard, np.asarray(loc), np.asarray(scale)

    @classmethod
    def normal(cls, loc, scale) -> Symmetric:
        return cls(special.ndtr, loc, scale)

    @classmethod
    def student_t(cls, nu, loc, scale) -> Symmetric:
        nu = np.asarray(nu, dtype=float)
        return cls(lambda z: special.stdtr(nu, z), loc, scale)

    def cdf(self, x):
        return self.standard((x - self.loc) / self.scale)

    def sf(self, x):
        return self.standard((self.loc - x) / self.scale)


def population_masses(posterior, rope: Rope) -> np.ndarray:
    """Per draw (chain, draw, 3), P(delta0 left of / inside / right of ``rope``) given the
    draw's other parameters.

    ``posterior`` holds ``delta0_centre`` and ``delta0_sd`` (chain, draw): the normal
    conditional of delta0 before truncation, and ``attrs["delta0_bound"]``: delta0's prior
    is uniform on (-bound, bound), so the conditional is truncated there.
    """
    centre = np.asarray(posterior["delta0_centre"].values, dtype=float)
    sd = np.asarray(posterior["delta0_sd"].values, dtype=float)
    bound = float(posterior.attrs["delta0_bound"])
    # scipy's truncnorm computes the tails in logs: a bound a hundred sds out is exact, not 0/0
    return rope.probabilities(stats.truncnorm((-bound - centre) / sd, (bound - centre) / sd,
                                              loc=centre, scale=sd))


def antithetic_delta0(posterior) -> np.ndarray:
    """Per draw (chain, draw), the antithetic partner of the draw of delta0: the value at
    the mirrored quantile 1 - u of delta0's conditional, N(centre, sd) truncated to
    (-bound, bound) (:func:`population_masses`), where u is the drawn delta0's quantile. It is
    an exact draw of the same conditional."""
    centre = np.asarray(posterior["delta0_centre"].values, dtype=float)
    sd = np.asarray(posterior["delta0_sd"].values, dtype=float)
    bound = float(posterior.attrs["delta0_bound"])
    standard = (np.asarray(posterior["delta0"].values, dtype=float) - centre) / sd
    low, high = (-bound - centre) / sd, (bound - centre) / sd
    # The partner z' has Phi(z') - Phi(low) = Phi(high) - Phi(z). Written for a draw in the
    # lower half (z <= 0; one in the upper half is negated first, with the bounds), z' lies
    # in the upper half and is taken from its upper tail, 1 - Phi(z') = Phi(-high) + Phi(z) -
    # Phi(low), a sum of small numbers that keeps its digits where 1 - (...) would not.
    upper = standard > 0
    z = np.where(upper, -standard, standard)
    near, far = np.where(upper, -high, low), np.where(upper, -low, high)
    mirrored = -special.ndtri(special.ndtr(-far) + (special.ndtr(z) - special.ndtr(near)))
    return centre + sd * np.where(upper, -mirrored, mirrored)


def next_dataset_masses(posterior, rope: Rope) -> np.ndarray:
    """Per draw (chain, draw, 3), P(the next dataset's delta left of / inside / right of
    ``rope``): :func:`next_dataset_member_masses` averaged over the draw's two delta0."""
    return members_average(next_dataset_member_masses(posterior, rope))


def members_average(members: np.ndarray) -> np.ndarray:
    """(chain, draw, 3): :func:`next_dataset_member_masses` averaged over each draw's
    two delta0."""
    # element by element, not a reduction, whose rounding can depend on the memory's
    # alignment (a dask worker's fit differed from the same fit in the main process)
    return 0.5 * members[:, :, 0] + 0.5 * members[:, :, 1]


def next_dataset_member_masses(posterior, rope: Rope) -> np.ndarray:
    """Per draw (chain, draw, 2, 3), P(the next dataset's delta left of / inside / right of
    ``rope``): Student-t(nu, delta0, sigma0), normal when the posterior has no ``nu``, at
    the draw of delta0 and at its antithetic partner (:func:`antithetic_delta0`), each an
    exact draw of the posterior (what a share of draws counts: the share of the averages
    in which a region is largest is another, smaller number)."""
    sigma0 = posterior["sigma0"].values
    members = []
    for delta0 in (posterior["delta0"].values, antithetic_delta0(posterior)):
        distribution = (Symmetric.student_t(posterior["nu"].values, delta0, sigma0)
                        if "nu" in posterior else Symmetric.normal(delta0, sigma0))
        members.append(rope.probabilities(distribution))
    return np.stack(members, axis=2)


def dataset_masses(posterior, rope: Rope) -> np.ndarray:
    """Per draw and dataset (chain, draw, dataset, 3), P(delta_i left of / inside / right
    of ``rope``) under its normal conditional, N(``delta_centre``, ``delta_spread``)."""
    return _conditional_masses(posterior["delta_centre"].values,
                               posterior["delta_spread"].values, rope)


def _conditional_masses(centre, spread, rope: Rope) -> np.ndarray:
    """P(left / rope / right) of delta_i's normal conditional N(``centre``, ``spread``), the
    masses that :func:`dataset_masses` and :func:`dataset_probabilities` read."""
    return rope.probabilities(Symmetric.normal(centre, spread))


def dataset_probabilities(posterior, rope: Rope, counts: np.ndarray) -> np.ndarray:
    """Every dataset's P(left / rope / right) (dataset, 3): :func:`dataset_masses` averaged
    over the draws (chain-major), each counted ``counts`` times (every draw once, or the
    modes mixed by their weights), a chunk of draws at a time (:func:`average_over_draws`)."""
    centre, spread = (posterior[name].values.reshape(len(counts), -1)
                      for name in ("delta_centre", "delta_spread"))
    return average_over_draws(
        lambda part: _conditional_masses(centre[part], spread[part], rope), counts)


def average_over_draws(masses_of, counts: np.ndarray, chunk: int = CHUNK) -> np.ndarray:
    """The average of per-draw masses over the draws, each counted ``counts`` times;
    ``masses_of(part)`` gives the masses (draw, ..., 3) of the draws of the slice ``part``.
    A chunk of draws at a time: all at once would hold draws x datasets (x pairs) x 3
    doubles several times over (about 1 GB for the pairwise model at 1,000 datasets and 8 x
    4,000 draws, 100 MB an array for the joint model on the AutoML benchmark)."""
    total = 0.0
    for start in range(0, len(counts), chunk):
        part = slice(start, start + chunk)
        total = total + np.tensordot(counts[part], masses_of(part), axes=1)
    return total / counts.sum()
