"""What the quadrature of the hierarchical model (:mod:`bayescomp.models.quadrature`) finds:
the two questions' probabilities and their errors, each dataset's, and the summaries and
densities that results and figures read."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from bayescomp.decisions import THRESHOLD, too_close_to_call

#: an error above this on any probability, or as much mass at a grid's edge, makes the
#: result not reliable
TOLERANCE = 0.005


@dataclass(frozen=True)
class Quadrature:
    """What :func:`~bayescomp.models.quadrature.quadrature_probabilities` found.

    Attributes
    ----------
    population, next_dataset : ndarray (3,)
        P(left / rope / right) of delta0 and of the next dataset.
    population_error, next_dataset_error : ndarray (3,)
        Their errors: the change from half the resolution plus the mass at the edges.
    datasets : ndarray (dataset, 3)
        Each dataset's probabilities; ``datasets_error`` alike.
    datasets_summary : ndarray (dataset, 4)
        Each dataset's delta_i: mean, sd and shortest 95% interval (low, high), in the units
        of the scores (:func:`~bayescomp.models.quadrature_datasets.dataset_readings`).
    delta0_summary, next_dataset_summary : dict
        delta0's and the next dataset's ``mean``, ``sd``, ``hdi_low`` and ``hdi_high`` (the
        shortest interval with 95% of the posterior) in the units of the scores; the next
        dataset's sd is infinite under a Student-t population (nu <= 2 always has mass).
        The next dataset's is None where no summaries were asked
        (:func:`~bayescomp.models.quadrature.quadrature_at_ropes`), as are its density and
        masses.
    delta0_density, next_dataset_density : tuple of ndarray
        (points, density) of each in the scores' units, linear between points; and
        ``next_dataset_masses`` (4000, 3), the next dataset's masses at points of the grid
        drawn by their weights: what figures draw.
    next_dataset_most_probable : ndarray (3,)
        The share of the posterior in which left, rope or right has the next dataset's
        largest mass; ``next_dataset_most_probable_change`` their change from half the
        resolution plus the mass at the grid's edges. The share of a region is that of an
        indicator, which the grid's rules converge to only as fast as its step, and unevenly:
        the change is a guide, not a bound (the "twelve" collection's share of rope, 0.121
        at a lattice step of 0.2 and 0.126 at 0.1, changed by 0.0004 from half the first).
    nu_median, sigma0_median : float
        Posterior medians (sigma0 in the scores' units; nu nan for a normal population).
    grid : dict
        The fine grid's sizes and ranges.
    seconds : float
        The time of the run that found it: the posteriors and ROPEs read from one grid
        (:func:`~bayescomp.models.quadrature.quadrature_at_ropes`,
        :func:`~bayescomp.models.quadrature.quadrature_under_priors`) each report the whole
        run's.
    problems : tuple of str
        Why the result is not reliable; empty when it is.
    """

    population: np.ndarray
    population_error: np.ndarray
    next_dataset: np.ndarray
    next_dataset_error: np.ndarray
    datasets: np.ndarray
    delta0_summary: dict
    next_dataset_summary: dict | None
    next_dataset_most_probable: np.ndarray
    nu_median: float
    sigma0_median: float
    grid: dict
    seconds: float
    problems: tuple = ()
    # None where the quadrature failed or did not form them
    datasets_error: np.ndarray | None = None
    next_dataset_most_probable_change: np.ndarray | None = None
    datasets_summary: np.ndarray | None = None
    delta0_density: tuple | None = None
    next_dataset_density: tuple | None = None
    next_dataset_masses: np.ndarray | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def estimates(self) -> tuple:
        """``((population, its errors), (next dataset, its errors))``, as
        :func:`~bayescomp.models.hierarchical_runs.region_estimates` gives the draws'."""
        return ((self.population, self.population_error),
                (self.next_dataset, self.next_dataset_error))

    def settles(self, threshold: float = THRESHOLD) -> bool:
        """Whether it answers a close call of a fit's draws: within its tolerance, and its own
        errors place every probability clear of ``threshold``
        (:func:`~bayescomp.decisions.too_close_to_call`): the rule of
        :func:`bayescomp.hierarchical` at its ROPE and of a sensitivity analysis at the others."""
        return self.ok and not too_close_to_call(self.estimates, threshold)

    def clear(self, threshold: float = THRESHOLD) -> bool:
        """Whether it :meth:`settles` every decision at ``threshold`` and each dataset's
        probabilities and the next dataset's most probable region's shares too are within
        :data:`TOLERANCE`: where a finer grid would change nothing that is reported or
        decided (the first of :data:`~bayescomp.models.quadrature.REFINEMENTS` is reported
        only then)."""
        return self.settles(threshold) and all(
            errors is None or float(errors.max()) <= TOLERANCE
            for errors in (self.datasets_error, self.next_dataset_most_probable_change))


def from_readings(at_fine: dict, at_half: dict, missing: float, shared: dict, grid_sizes: dict,
                  datasets_error: np.ndarray | None, start: float) -> Quadrature:
    """One posterior's :class:`Quadrature` at one ROPE: its readings on the fine and the
    half grid (:func:`~bayescomp.models.quadrature_summary.rope_readings`), its mass
    ``missing`` at the grid's edges, what its fine grid says whatever the ROPE
    (:func:`~bayescomp.models.quadrature_summary.grid_summary`), the grid's sizes, each
    dataset's errors and when the run started."""
    errors = {key: np.abs(at_fine[key] - at_half[key]) + missing
              for key in ("population", "next_dataset", "next_most_probable")}
    worst = max(float(errors["population"].max()), float(errors["next_dataset"].max()))
    problems = ((f"the quadrature's error {worst:.4f} exceeds {TOLERANCE} (its change "
                 f"from half the resolution, and {missing:.2g} of the posterior at "
                 "the grid's edges)",) if worst > TOLERANCE else ())
    return Quadrature(
        population=at_fine["population"], population_error=errors["population"],
        next_dataset=at_fine["next_dataset"], next_dataset_error=errors["next_dataset"],
        datasets=shared["datasets"], datasets_error=datasets_error,
        datasets_summary=shared["datasets_summary"], delta0_summary=shared["delta0"],
        next_dataset_summary=shared["delta_next"], delta0_density=shared["delta0_density"],
        next_dataset_density=shared["next_density"], next_dataset_masses=at_fine["next_masses"],
        next_dataset_most_probable=at_fine["next_most_probable"],
        next_dataset_most_probable_change=errors["next_most_probable"],
        nu_median=float(shared["nu"]), sigma0_median=float(shared["sigma0"]),
        grid=grid_sizes, seconds=time.perf_counter() - start, problems=problems)
