"""What the quadrature of the hierarchical model (:mod:`bayescomp.models.quadrature`) finds:
the two questions' probabilities and their errors, each dataset's, and the summaries and
densities that results and figures read."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayescomp.decisions import THRESHOLD, too_close_to_call


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
        largest mass.
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
