"""Per draw, the masses left of, inside and right of a ROPE of the pairwise hierarchical
model's two questions: the population's mean difference delta0 and the next dataset's.

Both are Rao-Blackwellised: each draw contributes the probabilities of the regions under the
exact conditional distribution of the quantity given that draw's other parameters, not a 0/1
indicator of where one draw of the quantity fell. Their means estimate the same posterior
probabilities as the shares of draws in each region, with a smaller Monte Carlo error.

* delta0 given the rest is a normal truncated to the prior's bound (delta0 is integrated out
  in ``stan/hierarchical.stan``, device 4, and the program writes the conditional's centre
  and sd with every draw). On the tutorial's real pairs nearest the 0.95 threshold this
  halves the Monte Carlo error of P(equivalent), as 3.6 times the draws would
  (``benchmarks/results/real_pairs.md``).
* The next dataset's delta given the rest is Student-t(nu, delta0, sigma0), normal without nu.

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
from scipy import stats

if TYPE_CHECKING:
    from bayescomp.rope import Rope


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


def next_dataset_masses(posterior, rope: Rope) -> np.ndarray:
    """Per draw (chain, draw, 3), P(the next dataset's delta left of / inside / right of
    ``rope``): Student-t(nu, delta0, sigma0), normal when the posterior has no ``nu``."""
    delta0, sigma0 = posterior["delta0"].values, posterior["sigma0"].values
    if "nu" in posterior:
        distribution = stats.t(posterior["nu"].values, loc=delta0, scale=sigma0)
    else:
        distribution = stats.norm(loc=delta0, scale=sigma0)
    return rope.probabilities(distribution)
