"""Each dataset's posterior of delta_i from :mod:`bayescomp.models.quadrature`'s grid.

Given delta0, l = log(sigma0^2 / lambda_i) and sigma_i, delta_i is normal (the mean m_i
shrunk towards delta0 by the population's share of its variance), so its posterior is a
mixture of normals over (delta0, l, sigma_i). The quadrature's pass over nu accumulates,
per dataset, the weight G_i(delta0, l) that its posterior gives each point of its table
H_i(delta0, l) (:class:`Accumulated`): the hyper-parameters' weights over the grid divided
by I_i, summed along the lattice with log(lambda)'s masses, one matrix product per nu
whatever is asked of delta_i afterwards. G_i times the table is the mass of (delta0, l)
in delta_i's posterior; the components are those masses spread over the sigma_i nodes.

Only the heavier points are kept: those left out weigh at most ``NEGLECTED`` together (a
probability moves by at most that), so the normal's distribution function is taken at their
components alone, and only where it is above 5.2e-17.
"""
from __future__ import annotations

import numpy as np
from scipy import special

#: the (delta0, l) points left out of a dataset's mixture weigh at most this together
NEGLECTED = 1e-10
#: below this z the normal's distribution function is under 5.2e-17: taken as 0
TAIL_Z = -8.3


class Accumulated:
    """Per dataset, G_i(delta0, l) up to a factor e^(log_scale_i) (single precision, its
    largest term at most 1 when added; the factors kept in double precision).

    Parameters
    ----------
    datasets, n_delta0, lattice_size : int
        The table's shape: (datasets x delta0, lattice).
    """

    def __init__(self, datasets: int, n_delta0: int, lattice_size: int):
        self.weight = np.zeros((datasets * n_delta0, lattice_size), dtype=np.float32)
        self.log_scale = np.full(datasets, -np.inf)
        self.n_delta0 = n_delta0

    def add(self, log_ratio: np.ndarray, masses: np.ndarray) -> None:
        """Adds one nu's term: ``log_ratio`` (dataset, delta0, sigma0) is the log of the
        hyper-parameters' weight over I_i (-inf where I_i underflows), ``masses`` (lattice,
        sigma0) log(lambda)'s cells at each sigma0 (single precision)."""
        largest = log_ratio.max(axis=(1, 2))
        scale = np.maximum(self.log_scale, largest)
        grown = np.isfinite(scale) & (scale > self.log_scale)
        if grown.any():
            # earlier terms, rescaled to the new factor (from -inf: the table is still 0)
            factor = np.exp(np.where(np.isfinite(self.log_scale), self.log_scale - scale, 0.0))
            blocks = self.weight.reshape(len(scale), self.n_delta0, -1)
            blocks[grown] *= factor[grown, None, None].astype(np.float32)
            self.log_scale = np.where(grown, scale, self.log_scale)
        live = np.isfinite(scale)
        ratio = np.zeros(log_ratio.shape, dtype=np.float32)
        ratio[live] = np.exp(log_ratio[live] - scale[live, None, None])
        self.weight += ratio.reshape(-1, log_ratio.shape[2]) @ masses.T


def dataset_mixtures(accumulated: Accumulated, scaled: np.ndarray, peak: np.ndarray,
                     log_total: float, parts: dict):
    """Yields, per dataset, its posterior's normal components: (weight, centre, spread),
    each (point, sigma_i node) over the points kept, the weights summing to 1 up to the
    neglected points.

    ``scaled`` and ``peak`` are the quadrature's tables (dataset x delta0, lattice) and
    their logs' offsets (dataset, delta0); ``log_total`` the log of the hyper-parameters'
    weights' sum; ``parts`` the grid's ``delta0``, ``added`` (e^l on the lattice), and per
    dataset ``mean``, ``noise`` (sigma_i^2 v_i at its nodes) and ``log_weight`` (the nodes'
    log weights)."""
    delta0, added = parts["delta0"], parts["added"]
    n_delta0 = len(delta0)
    for i in range(len(peak)):
        rows = slice(i * n_delta0, (i + 1) * n_delta0)
        factor = np.exp(accumulated.log_scale[i] - log_total)
        weight = accumulated.weight[rows].astype(float)
        mass = (weight * scaled[rows]).ravel() * factor
        # the points that weigh less than NEGLECTED over their number each: at most
        # NEGLECTED together
        kept = np.nonzero(mass > NEGLECTED / mass.size)[0]
        d, l = np.unravel_index(kept, (n_delta0, len(added)))
        noise, offset = parts["noise"][i][None, :], (parts["mean"][i] - delta0[d])[:, None]
        total = noise + added[l][:, None]                         # (point, sigma node)
        # the table's terms at these points (as the quadrature formed them), relative to
        # their delta0's peak: summed over the nodes they are the scaled table
        terms = (parts["log_weight"][i][None, :] - 0.5 * np.log(2 * np.pi * total)
                 - 0.5 * offset ** 2 / total - peak[i, d][:, None])
        share = added[l][:, None] / total
        yield (weight.ravel()[kept][:, None] * factor * np.exp(terms),
               delta0[d][:, None] + offset * share, np.sqrt(noise * share))


def dataset_sides(mixtures, low: float, high: float) -> np.ndarray:
    """(dataset, 2): each dataset's P(delta_i < low) and P(delta_i > high) from
    :func:`dataset_mixtures`."""
    return np.array([[normal_tail(weight, (low - centre) / spread),
                      normal_tail(weight, (centre - high) / spread)]
                     for weight, centre, spread in mixtures])


def normal_tail(weight: np.ndarray, z: np.ndarray) -> float:
    """sum(weight * Phi(z)), Phi taken only where z > TAIL_Z (below, it is under 5.2e-17:
    near-identical pairs' conditionals lie far inside the ROPE, and most z are there) and
    in single precision (z in double): each value to about 1e-7 relative, in half the
    time."""
    counted = z > TAIL_Z
    return float(weight[counted] @ special.ndtr(z[counted].astype(np.float32)))
