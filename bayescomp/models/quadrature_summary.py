"""What :mod:`bayescomp.models.quadrature` reports of one grid's posterior: at each ROPE,
the two questions' probabilities and the share of the posterior in which each region has the
next dataset's largest mass (:func:`rope_readings`); whatever the ROPE, delta0's and the next
dataset's means, sds and shortest 95% intervals, the medians of nu and sigma0, and the masses
at the grid's ends (its error) (:func:`grid_summary`)."""
from __future__ import annotations

from concurrent.futures import Executor

import numpy as np
from scipy import special

from bayescomp.models.region_masses import Symmetric
from bayescomp.rope import Rope, most_probable_shares

#: the interval reported, and the points the next dataset's cumulative is taken at: its
#: mean plus its scale times sinh of a uniform grid, so that they are dense at the centre
#: and reach 10^4 scales out into a tail as heavy as nu = 1's
INTERVAL = 0.95
NEXT_POINTS = 3001
NEXT_REACH = 1e4
#: the points whose cumulative is taken together in one thread (fewer where 2^22 pairs of a
#: point and a component would be more): a block far out lies FAR from all but the widest
#: components
NEXT_BLOCK = 100
#: Phi(z) is 1 in double precision from z = 8.3, and under 5.2e-17 below -8.3
FAR = 8.3
#: what a mixture of normals read from the grid may leave out: the smallest of the next
#: dataset's components, the lightest (delta0, l) points of a dataset's
#: (:mod:`bayescomp.models.quadrature_datasets`), together at most this
NEGLECTED = 1e-10
#: the grid's points whose next dataset's masses are taken together in one thread (stdtr
#: at a few hundred thousand points took 54 ms a call)
MASSES_BLOCK = 2**15
#: the grid's points drawn by their weights for figures of the next dataset's masses, and
#: their generator's seed
SCATTER_POINTS = 4000
SCATTER_SEED = 2017


def marginals(found: dict) -> tuple:
    """The posterior's masses on each axis: u, log(sigma0), delta0."""
    weights = found["weights"]
    return weights.sum(axis=(1, 2)), weights.sum(axis=(0, 2)), weights.sum(axis=(0, 1))


def shortest_interval(points: np.ndarray, cumulative: np.ndarray, mass: float = INTERVAL
                      ) -> tuple[float, float]:
    """The shortest interval holding ``mass`` of a distribution whose cumulative at the
    increasing ``points`` is ``cumulative`` (linear between them)."""
    targets = cumulative + mass
    starts = np.nonzero(targets <= cumulative[-1])[0]
    ends = np.interp(targets[starts], cumulative, points)
    shortest = np.argmin(ends - points[starts])
    return float(points[starts[shortest]]), float(ends[shortest])


def next_dataset_summary(delta0: np.ndarray, lattice: np.ndarray, mixture: np.ndarray,
                         student: bool, pool: Executor) -> dict:
    """The next dataset's mean, sd and shortest 95% interval, in the grid's units.

    Given delta0, sigma0 and lambda its difference is N(delta0, e^l), l = log(sigma0^2 /
    lambda) on the quadrature's lattice, so its posterior is the mixture of these normals
    with the weights ``mixture`` (lattice x delta0): lambda integrates a Student-t, so the
    interval is that of the Student-t's up to the lattice's step. Its sd is infinite for a
    Student-t population: nu's posterior always has mass at nu <= 2, where the Student-t
    has no variance. Its distribution function's blocks of points are taken in the threads
    of ``pool``, the same blocks whatever their number (the same digits).
    """
    weights = mixture / mixture.sum()
    variance = np.exp(lattice)[:, None]
    mean = float((weights * delta0[None, :]).sum())
    sd = (np.inf if student else
          float(np.sqrt(max((weights * (delta0[None, :] ** 2 + variance)).sum() - mean ** 2, 0))))
    # the components that weigh anything, heaviest first
    order = np.argsort(weights, axis=None)[::-1]
    kept = order[:np.searchsorted(np.cumsum(weights.ravel()[order]), 1 - NEGLECTED) + 1]
    rows, columns = np.unravel_index(kept, weights.shape)
    spread, centre, share = np.sqrt(variance[rows, 0]), delta0[columns], weights.ravel()[kept]
    # the points' unit: the larger of e^(l / 2)'s median and delta0's sd
    typical = np.exp(0.5 * lattice[np.searchsorted(np.cumsum(weights.sum(axis=1)), 0.5)])
    unit = max(float(typical), float(np.sqrt(weights.sum(axis=0) @ (delta0 - mean) ** 2)))
    reach = np.arcsinh(NEXT_REACH)
    points = mean + unit * np.sinh(np.linspace(-reach, reach, NEXT_POINTS))

    # where each component's distribution function is 0 below and 1 above (FAR sds out)
    reach_low, reach_high = centre - FAR * spread, centre + FAR * spread

    def distribution(block: np.ndarray) -> np.ndarray:
        # the points reach far out: most lie FAR or more from most components, whose
        # normal's distribution function is then 1 or 0 there (phi_within_far's values), so
        # the block's whole share of the components below it is added as one sum
        below = reach_high <= block[0]
        near = ~below & (reach_low < block[-1])
        z = (block[:, None] - centre[None, near]) / spread[None, near]
        return share[below].sum() + phi_within_far(z) @ share[near]

    cumulative = np.concatenate(list(pool.map(
        distribution, np.array_split(points, max(1, len(points) // min(
            NEXT_BLOCK, max(1, 2**22 // len(kept))))))))
    cumulative = np.maximum.accumulate(cumulative)
    low, high = shortest_interval(points, cumulative)
    # the density between the points, for figures: the cumulative's slope at their midpoints
    density = (points[:-1] + points[1:]) / 2, np.diff(cumulative) / np.diff(points)
    return dict(mean=mean, sd=sd, hdi_low=low, hdi_high=high, density=density)


def phi_within_far(z: np.ndarray) -> np.ndarray:
    """The normal's distribution function at ``z``, taken only where |z| < :data:`FAR`:
    beyond, it is 1 in double precision, or under 5.2e-17 (0 here). A mixture's readings
    (the datasets' tails, the next dataset's distribution function) have most of their z
    there."""
    values = (z >= FAR).astype(float)
    near = np.abs(z) < FAR
    values[near] = special.ndtr(z[near])
    return values


def drawn_by_weight(weight: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` indices of ``weight`` (not normalised), each drawn with probability its
    weight, in increasing order: uniforms sorted first find their places in one sweep
    through the cumulative weights (a grid's points, a mixture's components)."""
    cumulative = np.cumsum(weight)
    return np.minimum(np.searchsorted(cumulative, np.sort(rng.random(count)) * cumulative[-1]),
                      len(weight) - 1)


def in_units(density: tuple, scale: float) -> tuple:
    """(points, density) in the grid's units to the scores' units."""
    points, values = density
    return scale * points, values / scale


def rope_readings(founds: list[dict], grid: dict, rope: Rope, pool: Executor,
                  scatter: np.ndarray | None = None) -> list[dict]:
    """The two questions' probabilities at ``rope`` on one grid's posteriors
    (:func:`bayescomp.models.quadrature._posterior`'s ``found``, and the same grid's under
    other priors of nu), the share of each posterior in which each region has the next
    dataset's largest mass, and the next dataset's masses at the grid's points ``scatter``
    (:func:`grid_summary`'s, drawn by the first posterior's weights, for its figures; else
    None): what changes with the ROPE, so that one grid is read at several (its delta0
    panels split at their ends). The next dataset's masses are taken at the points that
    weigh in some posterior: those that weigh less than :data:`NEGLECTED` over the grid's
    size in every one, together less than NEGLECTED, are left out (40-65% of a real pair's
    grid; its Student-t masses are most of the time), and the rest taken in blocks in the
    threads of ``pool`` (the same digits from any number of threads: each mass is computed
    alone)."""
    delta0 = grid["delta0"]
    least = NEGLECTED / founds[0]["weights"].size
    heaviest = np.maximum.reduce([found["weights"] for found in founds]).ravel()
    points = np.flatnonzero(heaviest > least)
    all_masses = np.concatenate(list(pool.map(
        lambda block: _next_masses(founds[0], delta0, rope, block),
        np.array_split(points, max(1, len(points) // MASSES_BLOCK)))))
    readings = []
    for found in founds:
        # each posterior over its own points: the same sums as were it read alone
        weights = found["weights"].ravel()[points]
        own = weights > least
        weights, masses = weights[own], all_masses[own]
        readings.append(dict(population=marginals(found)[2] @ rope.indicators(delta0),
                             next_dataset=weights @ masses,
                             next_most_probable=most_probable_shares(masses, weights),
                             next_masses=None))
    if scatter is not None:   # drawn by the first posterior's weights: its figures
        readings[0]["next_masses"] = _next_masses(founds[0], delta0, rope, scatter)
    return readings


def _next_masses(found: dict, delta0: np.ndarray, rope: Rope, points: np.ndarray
                 ) -> np.ndarray:
    """(point, 3): the next dataset's Student-t (normal) masses at ``rope`` at the grid's
    ``points`` (indices into its weights, flattened)."""
    nu, sigma0, location = np.unravel_index(points, found["weights"].shape)
    nus = found["nus"]
    scale = np.exp(found["log_sigma0"])[sigma0]
    population_t = (Symmetric.student_t(nus[nu], delta0[location], scale)
                    if np.isfinite(nus[0]) else Symmetric.normal(delta0[location], scale))
    return rope.probabilities(population_t)


def dataset_probabilities(found: dict) -> np.ndarray | None:
    """Each dataset's P(left / rope / right) (dataset, 3) from one grid's posterior, where
    ``found`` holds their sides (else None)."""
    sides = found.get("datasets_sides")
    return (None if sides is None else
            np.column_stack([sides[:, 0], 1 - sides.sum(axis=1), sides[:, 1]]))


def grid_summary(found: dict, grid: dict, scale: float, pool: Executor) -> dict:
    """What one grid's posterior says whatever the ROPE: delta0's and (where ``found``
    holds its mixture, else None) the next dataset's summaries and densities, each dataset's
    probabilities at the ROPE its posterior was formed with and summaries (where
    ``found`` holds them, else None), the medians, the edge masses and, with the next
    dataset's mixture, :data:`SCATTER_POINTS` of the grid's points drawn by their weights
    under a fixed seed (for figures of the next dataset's masses at each ROPE,
    :func:`rope_readings`); the next dataset's summary in the threads of ``pool``."""
    nus = found["nus"]
    delta0 = grid["delta0"]
    on_u, on_sigma0, on_delta0 = marginals(found)
    student = np.isfinite(nus[0])
    datasets_summary = found.get("datasets_summary")

    # delta0's mean, sd and shortest interval, its density linear between the nodes
    mean = float(on_delta0 @ delta0)
    points = np.linspace(delta0[0], delta0[-1], 20001)
    cumulative = np.cumsum(np.interp(points, delta0, on_delta0 / grid["delta0_weight"]))
    low, high = shortest_interval(points, cumulative / cumulative[-1])
    population_summary = dict(mean=mean, sd=float(np.sqrt(on_delta0 @ (delta0 - mean) ** 2)),
                              hdi_low=low, hdi_high=high)
    # the density at the nodes (linear between them, as above), for figures
    population_density = delta0, on_delta0 / grid["delta0_weight"]
    next_summary = (None if found["next_mixture"] is None else
                    next_dataset_summary(delta0, found["lattice"], found["next_mixture"], student,
                                         pool))

    def median(values, masses):
        return float(np.interp(0.5, np.cumsum(masses) - 0.5 * masses, values))

    return dict(datasets=dataset_probabilities(found),
                datasets_summary=(None if datasets_summary is None else scale * datasets_summary),
                delta0={key: scale * value for key, value in population_summary.items()},
                delta0_density=in_units(population_density, scale),
                delta_next=(None if next_summary is None else
                            {key: scale * value for key, value in next_summary.items()
                             if key != "density"}),
                next_density=(None if next_summary is None else
                              in_units(next_summary["density"], scale)),
                nu=1 + np.exp(median(grid["u"], on_u)) if grid["u"] is not None else np.nan,
                sigma0=scale * np.exp(median(found["log_sigma0"], on_sigma0)),
                scatter=(None if next_summary is None else
                         drawn_by_weight(found["weights"].ravel(), SCATTER_POINTS,
                                         np.random.default_rng(SCATTER_SEED))),
                edges=dict(log_sigma0_sq=(on_sigma0[0], on_sigma0[-1]),
                           delta0=(on_delta0[:grid["nodes_per_panel"]].sum(),
                                   on_delta0[-grid["nodes_per_panel"]:].sum()),
                           **({"u": (on_u[0], on_u[-1])} if grid["u"] is not None else {})))
