"""The hierarchical model's probabilities by quadrature over its hyper-parameters.

Given delta0, sigma0 and nu the datasets are independent, and dataset i contributes one
integral over its sigma_i and lambda_i (delta_i integrated out in closed form, device 3 of
``stan/hierarchical.stan``):

    I_i(delta0, sigma0, nu) = E[ N(m_i | delta0, sigma_i^2 v_i + sigma0^2 / lambda_i) ],

sigma_i over p_i(sigma) ~ sigma^-(n_i - 1) exp(-S_i / (2 sigma^2)) on (floor_i, sigma_bar)
(device 1 and its uniform prior), lambda_i ~ Gamma(nu / 2, nu / 2) (device 2). The posterior
of (delta0, sigma0, nu) is p(nu) prod_i I_i on a grid, and every probability is a sum over
it: no chains, no seed, the same answer where nu's two modes are crossed too rarely to weigh.

I_i depends on sigma0 and lambda through l = log(sigma0^2 / lambda) only, so H_i(delta0, l)
= E_sigma[N(m_i | delta0, sigma^2 v_i + e^l)] is tabulated once on a lattice of l (sigma_i by
Gauss-Legendre where p_i holds its mass) and the average over lambda is a sum along it with
the masses of log(lambda)'s cells as weights: one matrix product per nu. log sigma0 lies on
the lattice, delta0 on Gauss-Legendre panels split at the ROPE's ends, nu on a grid uniform
in log(nu - 1 + 0.1) whose nodes weigh the prior's mass in their cells; a coarse grid from the
priors' bounds is narrowed to the posterior's mass.
Each dataset's probabilities come from delta_i's normal conditional given sigma_i, l and
delta0, weighed by what the pass over nu accumulates for its table
(:mod:`bayescomp.models.quadrature_datasets`); the next dataset's from the Student-t's
masses. The error is the change from half the resolution in every direction plus the mass
at the grid's edges; the fine grid is the coarsest of ``REFINEMENTS`` whose error is within
``TOLERANCE`` (:mod:`~bayescomp.models.quadrature_result`), the first only where no
probability is near the decisions' threshold either, and tried only where coarser than the
next (``COARSER``). One grid is read at several ROPEs, and
under other priors of nu (only nu's prior at its nodes changes): what a sensitivity
analysis asks. Blocks of datasets are each done alone in threads (``WORKERS`` of
:mod:`~bayescomp.models.quadrature_datasets`): the same digits on any number of cores.
"""
from __future__ import annotations

import time
from concurrent.futures import Executor

import numpy as np
from scipy import special
from threadpoolctl import threadpool_limits

from bayescomp.decisions import THRESHOLD
from bayescomp.models.hierarchical_density import squared_standard_errors
from bayescomp.models.quadrature_datasets import (BLOCK, Accumulated, dataset_readings,
                                                  table_terms, workers)
from bayescomp.models.quadrature_grid import (closed_end, grid_nodes, halved, kept_range,
                                              log_prior_cells, statistics)
from bayescomp.models.quadrature_result import Quadrature, from_readings
from bayescomp.models.quadrature_rules import lambda_cells, lattice_band, sigma_rule
from bayescomp.models.quadrature_summary import (dataset_probabilities, grid_summary,
                                                 marginals, rope_readings)
from bayescomp.rope import Rope

#: Gauss-Legendre nodes of log(sigma_i) per dataset, and of delta0 per panel, at the fine
#: resolution (the check at half resolution takes half the sigma_i nodes and half the panels)
SIGMA_NODES = 48
DELTA0_NODES = 6
#: the fine resolution's lattice step (of l = log(sigma0^2 / lambda)) and delta0's panels,
#: tried in turn: the first is reported where it is clear (:meth:`Quadrature.clear`), each
#: later one where its error is within TOLERANCE, the last whatever it is. The lattice step is
#: what the error and the time follow most: against a step of 0.1 with 24 panels, the
#: probabilities of 65 hard and real collections moved by at most 1.8e-3 at 0.3 and 8.1e-4
#: at 0.2, where 0.3 took 0.71 of 0.2's time (median; 0.56-1.29); from 0.1 to 0.2 the hard
#: grid's moved by at most 6.6e-4, in 0.47 of the time. The last is finer in both
#: directions that data make hard: bbtcomp's lgbm - rf at a ROPE of 0.0025 had an error of
#: 0.0052 with 12 panels (delta0 pinned near the ROPE's end by constant datasets) at either
#: step, 2.5e-4 with 24 (benchmarks/results/quadrature.md)
REFINEMENTS = (dict(step=0.3, panels=12, clear=True), dict(step=0.2, panels=12),
               dict(step=0.1, panels=24))
#: a grid reported only where clear is tried only where its lattice step is at least this
#: many times the next grid's (their delta0 panels the same): where sigma0's range is narrow
#: it sets both steps (at most the range over FINE's ``least``), and the first, as fine as
#: the next, would answer less often for the same time (bbtcomp's lgbm - lr: 0.2125, 0.2)
COARSER = 1.25
#: step of log(nu - 1 + NU_SHIFT) at the fine resolution (quadrature_grid.NU_SHIFT)
NU_STEP = 0.25
#: log(lambda)'s cells lighter than this share of the heaviest at a nu are left out at the
#: lattice's ends (:func:`~bayescomp.models.quadrature_rules.lattice_band`): what they add to
#: an I_i is below 1e-15 of it wherever the table there is within e^-87 of its largest
#: (below that, the tables weigh it as nothing already). A large nu's cells lie within a few
#: of lambda = 1: 58% of the cells are kept on bbtcomp's lr - ridge and knn - xgb, and the
#: products of the pass over nu are that much narrower (the same digits on 14 collections)
CELL_FLOOR = 1e-55
#: log(lambda) is summed over at most this range (below it the contribution falls as
#: lambda^(1/2 + nu/2), at most e^-25 of the rest at nu = 1)
LOG_LAMBDA = (-25.0, 5.0)
#: delta0's panels are also split this many of the smallest standard errors either side of
#: the means' centre
PEAK_WIDTH = 6.0
#: log(nu - 1) searched over this range first (nu to 2.2e4; the lowest cell reaches nu = 1)
U_RANGE = (-10.0, 10.0)


def _posterior(stats: dict, grid: dict, rope: Rope, datasets: bool, intervals: bool,
               pool: Executor) -> dict:
    """The posterior's weights over one grid
    (:func:`~bayescomp.models.quadrature_grid.grid_nodes`), its blocks of datasets worked on
    in the threads of ``pool``; with ``datasets``, each dataset's posterior probabilities of
    delta_i left and right of the ROPE
    (:mod:`bayescomp.models.quadrature_datasets`); with ``intervals`` (the fine grid's), the
    next dataset's mixture on the lattice and, with ``datasets``, each dataset's mean, sd
    and interval."""
    m, v = stats["mean"], stats["mean_share"]
    step, delta0, log_sigma0_sq, u = grid["step"], grid["delta0"], grid["log_sigma0_sq"], grid["u"]
    x, log_weight = sigma_rule(stats["n"], stats["S"], stats["floor"], stats["sigma_upper"],
                               grid["sigma_nodes"])
    noise = np.exp(2 * x) * v[:, None]                       # sigma_i^2 v_i at the nodes
    student = u is not None
    # below -30 / (nu / 2 + 1 / 2) at the smallest nu, log(lambda) adds e^-30 of the rest
    lowest = max(LOG_LAMBDA[0], -30 / (0.5 * (1 + np.exp(u.min())) + 0.5)) if student else 0.0
    log_lambda = np.arange(lowest, LOG_LAMBDA[1] + step / 2, step) if student else np.zeros(1)
    n_sigma0, n_lambda, n_delta0, q = len(log_sigma0_sq), len(log_lambda), len(delta0), len(m)
    # lattice of l = log(sigma0^2) - log(lambda), where sigma0's and lambda's steps meet
    lattice = log_sigma0_sq[0] - log_lambda[-1] + step * np.arange(n_sigma0 + n_lambda - 1)
    added = np.exp(lattice)
    # per dataset, H_i(delta0, l) scaled by its largest value over l (peak), kept in single
    # precision (half the memory): each I_i to about 1e-7 relative where it is within e^-87
    # of the largest over l; below, the posterior weighs it as nothing. Its products with the
    # masses are taken in double: in single, products of small factors fall below e^-87 into
    # subnormal numbers, which took x86 processors 50-80 times as long (quadrature.md)
    scaled = np.empty((q * n_delta0, len(lattice)), dtype=np.float32)
    peak = np.empty((q, n_delta0))

    def tabulate(i: int) -> None:
        terms, _ = table_terms(log_weight[i], noise[i], added, m[i] - delta0)
        # (delta0, sigma node, lattice), exponentiated once, relative to each delta0's
        # largest term: what underflows is below e^-745 of it, nothing the sums below weigh
        largest = terms.max(axis=(1, 2))
        terms -= largest[:, None, None]
        table = np.exp(terms, out=terms).sum(axis=1)         # (delta0, lattice)
        top = table.max(axis=1)
        peak[i] = largest + np.log(top)
        scaled[i * n_delta0:(i + 1) * n_delta0] = table / top[:, None]

    log_prior = log_prior_cells(stats, grid["u_edges"]) if student else np.zeros(1)
    nus = 1 + np.exp(u) if student else np.array([np.inf])
    # quadrature weights: nu's prior's mass in each node's cell (in log_prior); log(sigma0)
    # uniform, times sigma0 (its prior is uniform in sigma0); delta0 Gauss-Legendre
    log_sigma0 = 0.5 * log_sigma0_sq
    log_rule = (np.log(step / 2) + log_sigma0)[:, None] + np.log(grid["delta0_weight"])[None, :]
    log_post = np.empty((len(nus), n_sigma0, n_delta0))
    accumulated = Accumulated(q, n_delta0, len(lattice)) if datasets else None

    def mixing(nu: float) -> tuple[slice, np.ndarray]:
        """log(lambda)'s cells at nu on the lattice (:func:`lattice_band`)."""
        return lattice_band(lambda_cells(nu, log_lambda, step) if student else np.ones(1),
                            n_sigma0, CELL_FLOOR)

    def integrate(block: slice, band: tuple) -> np.ndarray:
        """log I_i (dataset, delta0, sigma0) of a block of datasets at one nu's ``band``."""
        rows, masses = band
        integral = scaled[block.start * n_delta0:block.stop * n_delta0, rows].astype(float) @ masses
        with np.errstate(divide="ignore"):
            # an integral that underflows (delta0 far out at a small sigma0) is a point the
            # posterior weighs as nothing: log 0 = -inf is its weight
            return np.log(integral).reshape(-1, n_delta0, n_sigma0)

    def accumulate(block: slice, log_integral: np.ndarray, log_post_t: np.ndarray,
                   band: tuple) -> None:
        """Each dataset's weight of its table's points: the posterior's over I_i."""
        with np.errstate(invalid="ignore"):
            log_ratio = np.where(np.isfinite(log_integral[block]),
                                 log_post_t.T[None] - log_integral[block], -np.inf)
        accumulated.add(log_ratio, *band, block)

    # blocks of datasets (and each dataset's table), each worked on alone in the same way
    # by whichever thread (numpy releases the GIL in its array work): the same digits from
    # any number of threads
    blocks = [slice(start, min(start + BLOCK, q)) for start in range(0, q, BLOCK)]
    list(pool.map(tabulate, range(q)))
    bands = [mixing(nu) for nu in nus]
    for t, band in enumerate(bands):
        log_integral = np.concatenate(list(pool.map(integrate, blocks,
                                                    [band] * len(blocks))))
        log_post[t] = (log_prior[t] + (log_integral + peak[:, :, None]).sum(axis=0).T
                       + log_rule)
        if datasets:
            list(pool.map(accumulate, blocks, [log_integral] * len(blocks),
                          [log_post[t]] * len(blocks), [band] * len(blocks)))
    total, weights = _normalised(log_post, "")
    # the next dataset's N(delta0, e^l) components, weighed on the lattice of l
    next_mixture = None
    if intervals:
        next_mixture = np.zeros((len(lattice), n_delta0))
        for (rows, masses), weight in zip(bands, weights):
            next_mixture[rows] += masses @ weight
    result = dict(log_post=log_post, log_prior=log_prior, weights=weights, nus=nus,
                  log_sigma0=log_sigma0, lattice=lattice, next_mixture=next_mixture)
    if datasets:
        parts = dict(delta0=delta0, added=added, mean=m, noise=noise, log_weight=log_weight)
        result["datasets_sides"], result["datasets_summary"] = dataset_readings(
            (accumulated, scaled, peak, total, parts), rope.low, rope.high,
            summaries=intervals, pool=pool)
    return result


#: the resolutions: the first, wide grids that find the posterior, and the fine one reported
#: (its lattice step and panels one of REFINEMENTS), whose error is its change from half
#: of it (:func:`~bayescomp.models.quadrature_grid.halved`)
COARSE = dict(step=0.4, nu_step=0.5, least=4, sigma_nodes=16, panels=16, nodes=3)
FINE = dict(nu_step=NU_STEP, least=32, sigma_nodes=SIGMA_NODES, nodes=DELTA0_NODES)


def quadrature_probabilities(data: dict, scale: float, rope, *, summaries: bool = True,
                             threshold: float = THRESHOLD, close_call: bool = False
                             ) -> Quadrature:
    """The hierarchical model's probabilities by quadrature (module docstring).

    Parameters
    ----------
    data : dict
        The Stan data of :func:`bayescomp.models.hierarchical_program.prepare` (unit scale).
    scale : float
        The unit in the scores' units.
    rope : Rope
        In the units of the scores.
    summaries : bool
        Also each dataset's probabilities and summaries and the next dataset's summary,
        density and masses for figures (what a fit reports; more than half the time).
    threshold : float
        The decisions' threshold, which the first of :data:`REFINEMENTS` must be clear of.
    close_call : bool
        A probability is known to lie near ``threshold`` (a close call of a fit's draws):
        the grids reported only where clear of it are not tried.

    Returns
    -------
    Quadrature
    """
    return _timed(data, scale, [rope], summaries, [], (threshold, close_call))[0][0]


def quadrature_at_ropes(data: dict, scale: float, ropes, threshold: float = THRESHOLD,
                        close_call: bool = False) -> list[Quadrature]:
    """The two questions' probabilities at each of ``ropes`` (in the scores' units), read
    from one grid whose delta0 panels are split at every ROPE's ends: what a sensitivity
    analysis asks, for about 1.5 times the price of one ROPE (its delta0 has more panels),
    not one per ROPE. Neither the datasets' nor the next dataset's summaries; delta0's,
    which does not depend on the ROPE, is the same in every element. Each ROPE's error is
    its own (the change from half the resolution at that ROPE); ``threshold`` and
    ``close_call`` as in :func:`quadrature_probabilities`."""
    return quadrature_under_priors(data, [], scale, ropes, threshold, close_call)[0]


def quadrature_under_priors(data: dict, others: list[dict], scale: float, ropes,
                            threshold: float = THRESHOLD, close_call: bool = False
                            ) -> list[list[Quadrature]]:
    """:func:`quadrature_at_ropes` of ``data``'s posterior and, on the same grid, of the
    posteriors of ``others``: the Stan data of priors that differ from ``data``'s only in
    nu's (the likelihood and the quadrature's rule at every node are the same; only the
    prior of nu there changes, as a fit's draws are reweighted). The grid and its
    resolution are found for ``data``'s posterior alone, so its numbers are those of
    :func:`quadrature_at_ropes`; each other posterior's error is its own change from half
    the resolution plus its own mass at the grid's edges (where the two posteriors differ
    much in nu, the latter shows it). Returns one list per ROPE for ``data``, then one for
    each of ``others``."""
    if others and not data["population"]:
        raise ValueError("other priors of nu need a Student-t population; this prior's "
                         "population is normal (no nu)")
    return _timed(data, scale, list(ropes), False, others, (threshold, close_call))


def _timed(data: dict, scale: float, ropes: list, summaries: bool, others: list,
           decided: tuple) -> list[list[Quadrature]]:
    start = time.perf_counter()
    try:
        # one BLAS thread: the sums of its matrix products, and so the last digits of every
        # probability, would otherwise depend on how many threads it has (a dask worker has
        # one; a process on two cores gave other digits)
        with threadpool_limits(limits=1, user_api="blas"), workers() as pool:
            return _quadrature(data, scale, ropes, summaries, others, decided, start, pool)
    except FloatingPointError as error:    # a grid with no mass: nothing to report
        nothing = np.full(3, np.nan)
        return [[Quadrature(nothing, nothing, nothing, nothing,
                            np.full((len(data["mean_diff"]), 3), np.nan), {}, {}, nothing,
                            np.nan, np.nan, dict(delta0=0, sigma0=0, nu=0),
                            time.perf_counter() - start, (f"the quadrature failed: {error}",))
                 for _ in ropes] for _ in range(1 + len(others))]


def _quadrature(data: dict, scale: float, ropes: list, summaries: bool, others: list,
                decided: tuple, start: float, pool: Executor) -> list[list[Quadrature]]:
    stats = statistics(data)
    student = stats["student"]
    ropes = [Rope(rope.low / scale, rope.high / scale) for rope in ropes]
    se = np.sqrt(squared_standard_errors(data["ss"], data["n_scores"], data["rho"],
                                         data["sigma_lower"]))
    bound, sigma0_upper = float(data["delta0_bound"]), float(data["sigma0_upper"])
    # hard bounds: the priors' (delta0, sigma0), or where the search stops (sigma0 below,
    # u): mass at the latter is missing from the grid and counts as error (at 1e-4 of the
    # median standard error, bbtcomp's lgbm - rf, with 6 constant datasets, had 0.009 of
    # its mass below sigma0's)
    bounds = dict(delta0=(-bound, bound),
                  log_sigma0_sq=(2 * np.log(1e-6 * np.median(se)), 2 * np.log(sigma0_upper)),
                  u=U_RANGE)
    ranges = dict(bounds)
    # delta0's panels split at the ROPEs' ends and around the means' centre, within a few
    # of the smallest standard errors: where datasets with constant differences pin delta0
    # at a small sigma0, a peak narrower than any panel that its nodes would step over
    centre, width = float(data["mean_centre"]), PEAK_WIDTH * float(se.min())
    cuts = (*(end for rope in ropes for end in (rope.low, rope.high)),
            centre - width, centre + width)
    for _ in range(16):
        grid = grid_nodes(ranges, COARSE, cuts, student)
        found = _posterior(stats, grid, ropes[0], datasets=False, intervals=False, pool=pool)
        on_u, on_sigma0, on_delta0 = marginals(found)
        axes = dict(delta0=(grid["delta0"], on_delta0), u=(grid["u"], on_u),
                    log_sigma0_sq=(grid["log_sigma0_sq"], on_sigma0))
        narrowed = {key: (kept_range(*axes[key], ranges[key], bounds[key])
                          if key != "u" or student else U_RANGE) for key in ranges}
        # stop once no range narrows by half or grows
        settled = all(new[0] >= old[0] and new[1] <= old[1]
                      and (old[1] - old[0]) < 2 * (new[1] - new[0])
                      for old, new in zip(ranges.values(), narrowed.values()))
        ranges = narrowed
        if settled:
            break
    search = dict(ranges=ranges, bounds=bounds, cuts=cuts)
    asked = dict(ropes=ropes, summaries=summaries, scale=scale, start=start,
                 others=[statistics(other) for other in others])
    threshold, close_call = decided
    low, high = ranges["log_sigma0_sq"]
    steps = [min(r["step"], (high - low) / FINE["least"]) for r in REFINEMENTS] + [0.0]
    for refinement in [r for r, step, after in zip(REFINEMENTS, steps, steps[1:])
                       if not (r.get("clear") and (close_call or step < COARSER * after))]:
        results = _read_grids(stats, search, refinement, asked, pool)
        # the first grid that answers stands, else the next, finer one, checked against
        # half its resolution in turn; the finest stands, ok or not. Chosen by data's own
        # posterior: its numbers do not depend on the others asked with it
        if all(found.clear(threshold) if refinement.get("clear") else found.ok
               for found in results[0]):
            break
    return results


def _normalised(log_post: np.ndarray, under: str) -> tuple[float, np.ndarray]:
    """The log of the grid's total weight and its weights summing to 1; a grid where every
    point underflows (``under`` says which prior's) has nothing to report."""
    total = special.logsumexp(log_post)
    if not np.isfinite(total):
        raise FloatingPointError(f"every point of the grid underflows{under}")
    return total, np.exp(log_post - total)


def _under_prior(found: dict, log_prior: np.ndarray) -> dict:
    """One grid's posterior (:func:`_posterior`'s ``found``) under another prior of nu,
    whose log density at each node of u is ``log_prior``: that prior's quadrature on the
    same nodes, without the next dataset's mixture or the datasets' readings."""
    log_post = found["log_post"] + (log_prior - found["log_prior"])[:, None, None]
    return dict(log_post=log_post, log_prior=log_prior,
                weights=_normalised(log_post, " under another prior of nu")[1],
                nus=found["nus"], log_sigma0=found["log_sigma0"], lattice=found["lattice"],
                next_mixture=None)


def _read_grids(stats: dict, search: dict, refinement: dict, asked: dict, pool: Executor
                ) -> list[list[Quadrature]]:
    """The fine grid at ``refinement`` (one of :data:`REFINEMENTS`), checked against half
    its resolution, on what the coarse search found (``search``: its ``ranges`` within their
    ``bounds``, and delta0's ``cuts``): a :class:`Quadrature` per ROPE of ``asked``, for
    ``stats``' posterior and then each of the ``others`` asked (their priors of nu)."""
    ranges, bounds, student = search["ranges"], search["bounds"], stats["student"]
    ropes, summaries, scale = asked["ropes"], asked["summaries"], asked["scale"]
    fine_resolution = dict(FINE, **refinement)
    grid, half_grid = (dict(grid_nodes(ranges, resolution, search["cuts"], student),
                            nodes_per_panel=resolution["nodes"])
                       for resolution in (fine_resolution, halved(fine_resolution)))
    # the datasets at the first ROPE (the only one asked of them); intervals on the fine grid
    fine = [_posterior(stats, grid, ropes[0], summaries, intervals=summaries, pool=pool)]
    half = [_posterior(stats, half_grid, ropes[0], summaries, intervals=False, pool=pool)]
    for other in asked["others"]:
        fine.append(_under_prior(fine[0], log_prior_cells(other, grid["u_edges"])))
        half.append(_under_prior(half[0], log_prior_cells(other, half_grid["u_edges"])))
    # of the half grid only its datasets' probabilities are read (their error)
    shared = [grid_summary(found, grid, scale, pool) for found in fine]
    # mass at an end of the grid that is not a bound of the posterior's is missing
    missing = [sum(float(mass) for key, masses in summary["edges"].items()
                   for end, mass in enumerate(masses)
                   if not closed_end(grid, ranges, bounds, key, end))
               for summary in shared]
    grid_sizes = dict(delta0=len(grid["delta0"]), sigma0=len(grid["log_sigma0_sq"]),
                      nu=0 if grid["u"] is None else len(grid["u"]), lattice_step=grid["step"],
                      delta0_panels=refinement["panels"],
                      delta0_range=tuple(scale * np.array(ranges["delta0"])),
                      sigma0_range=tuple(scale * np.exp(0.5 * np.array(ranges["log_sigma0_sq"]))),
                      nu_range=tuple(1 + np.exp(np.array(ranges["u"]))) if student else None)
    datasets_error = (np.abs(shared[0]["datasets"] - dataset_probabilities(half[0])) + missing[0]
                      if summaries else None)
    # per ROPE, the readings of every posterior: the next dataset's masses at the grid's
    # points, which do not depend on nu's prior, computed once for all of them
    at_fine = [rope_readings(fine, grid, rope, pool, shared[0]["scatter"]) for rope in ropes]
    at_half = [rope_readings(half, half_grid, rope, pool) for rope in ropes]
    results = [[] for _ in fine]
    for k, summary in enumerate(shared):
        for fine_reading, half_reading in zip(at_fine, at_half):
            results[k].append(from_readings(fine_reading[k], half_reading[k], missing[k],
                                            summary, grid_sizes,
                                            datasets_error if k == 0 else None, asked["start"]))
    return results
