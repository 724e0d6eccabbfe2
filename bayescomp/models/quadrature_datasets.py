"""Each dataset's posterior of delta_i from :mod:`bayescomp.models.quadrature`'s grid.

Given delta0, l = log(sigma0^2 / lambda_i) and sigma_i, delta_i is normal (the mean m_i
shrunk towards delta0 by the population's share of its variance), so its posterior is a
mixture of normals over (delta0, l, sigma_i). The quadrature's pass over nu accumulates,
per dataset, the weight G_i(delta0, l) that its posterior gives each point of its table
H_i(delta0, l) (:class:`Accumulated`): the hyper-parameters' weights over the grid divided
by I_i, summed along the lattice with log(lambda)'s masses, one matrix product per nu
whatever is asked of delta_i afterwards. G_i times the table is the mass of (delta0, l)
in delta_i's posterior; the components are those masses spread over the sigma_i nodes.

Only the heavier components are kept: those of the lightest (delta0, l) points and the
lightest of the others, at most ``NEGLECTED`` together (a probability moves by at most
that), so the normal's distribution function is taken at the others alone, and only within
8.3 sds of their centres (:func:`~bayescomp.models.quadrature_summary.phi_within_far`).
"""
from __future__ import annotations

from concurrent.futures import Executor, ThreadPoolExecutor

import arviz as az
import numpy as np

# NEGLECTED: the mass left out of a mixture, here the (delta0, l) points of a dataset's,
# as of the next dataset's there
from bayescomp.models.quadrature_summary import NEGLECTED, drawn_by_weight, phi_within_far
from bayescomp.sampling.threads import usable_cores

#: each dataset's interval: its mass, the independent draws from its mixture that find it,
#: and their generator's seed (with the dataset's place)
INTERVAL = 0.95
DRAWS = 50_000
DRAWS_SEED = 20171
#: threads that work on blocks of datasets (each reading a mixture holds up to about 50 MB
#: at 10^6 components), and the datasets per block of the pass over nu
BLOCK = 8
WORKERS = min(8, usable_cores())


def workers() -> ThreadPoolExecutor:
    """The threads of :data:`WORKERS` (read when called, so that a test can set it)."""
    return ThreadPoolExecutor(max_workers=WORKERS)


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

    def add(self, log_ratio: np.ndarray, rows: slice, masses: np.ndarray,
            datasets: slice = slice(None)) -> None:
        """Adds one nu's term to the ``datasets`` (a block of them, whose rows no other
        call touches meanwhile): ``log_ratio`` (dataset, delta0, sigma0) is the log of the
        hyper-parameters' weight over I_i (-inf where I_i underflows), ``masses`` (the
        lattice's ``rows``, sigma0) log(lambda)'s cells at each sigma0, none elsewhere. The
        product is taken in double precision (in single, subnormal numbers slowed it 4.4
        times: :mod:`bayescomp.models.quadrature`) and added in single."""
        known = self.log_scale[datasets]
        weight = self.weight.reshape(len(self.log_scale), self.n_delta0, -1)[datasets]
        scale = np.maximum(known, log_ratio.max(axis=(1, 2)))
        grown = np.isfinite(scale) & (scale > known)
        if grown.any():
            # earlier terms, rescaled to the new factor (from -inf: the table is still 0)
            factor = np.exp(np.where(np.isfinite(known), known - scale, 0.0))
            weight[grown] *= factor[grown, None, None].astype(np.float32)
            self.log_scale[datasets] = np.where(grown, scale, known)
        live = np.isfinite(scale)
        ratio = np.zeros(log_ratio.shape)
        ratio[live] = np.exp(log_ratio[live] - scale[live, None, None])
        weight[..., rows] += (ratio.reshape(-1, log_ratio.shape[2]) @ masses.T).reshape(
            weight[..., rows].shape)


def table_terms(log_weight: np.ndarray, noise: np.ndarray, added: np.ndarray,
                offset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The log of the terms of a dataset's table, (delta0, sigma_i node, lattice): a node's
    weight (``log_weight``, per node) times N(m_i | delta0, total), total = sigma_i^2 v_i
    (``noise``, per node) + e^l (``added``, on the lattice or a part of it), ``offset`` = m_i
    - delta0 (per delta0); and total (node, lattice). The quadrature's tables and each
    dataset's mixture both take their terms from here."""
    total = noise[:, None] + added[None, :]
    # what depends on delta0 formed once per term, the rest once per (node, lattice)
    terms = (-0.5 * offset ** 2)[:, None, None] / total[None]
    terms += (log_weight[:, None] - 0.5 * np.log(2 * np.pi * total))[None]
    return terms, total


def dataset_mixture(i: int, accumulated: Accumulated, scaled: np.ndarray, peak: np.ndarray,
                    log_total: float, parts: dict) -> tuple:
    """Dataset i's posterior of delta_i as normal components: (weight, centre, spread),
    each over the (delta0, sigma_i node, l) kept, the weights summing to 1 up to the
    neglected ones.

    ``scaled`` and ``peak`` are the quadrature's tables (dataset x delta0, lattice) and
    their logs' offsets (dataset, delta0); ``log_total`` the log of the hyper-parameters'
    weights' sum; ``parts`` the grid's ``delta0``, ``added`` (e^l on the lattice), and per
    dataset ``mean``, ``noise`` (sigma_i^2 v_i at its nodes) and ``log_weight`` (the nodes'
    log weights)."""
    delta0, added = parts["delta0"], parts["added"]
    n_delta0 = len(delta0)
    rows = slice(i * n_delta0, (i + 1) * n_delta0)
    factor = np.exp(accumulated.log_scale[i] - log_total)
    weight = accumulated.weight[rows].astype(float)
    mass = weight * scaled[rows] * factor                    # (delta0, lattice)
    # the box of the points that weigh more than half NEGLECTED over their number each
    # (those outside weigh at most half NEGLECTED together)
    heavy = mass > 0.5 * NEGLECTED / mass.size
    on_delta0, on_lattice = (np.nonzero(heavy.any(axis=axis))[0] for axis in (1, 0))
    box = slice(on_delta0[0], on_delta0[-1] + 1)
    lattice = slice(on_lattice[0], on_lattice[-1] + 1)
    offset = parts["mean"][i] - delta0[box]
    # the table's terms in the box (as the quadrature formed them), relative to their
    # delta0's peak: summed over the nodes they are the scaled table
    terms, total = table_terms(parts["log_weight"][i], parts["noise"][i], added[lattice],
                               offset)
    terms -= peak[i, box][:, None, None]
    component = np.exp(terms, out=terms)
    component *= (weight[box, lattice] * factor)[:, None, :]
    # of the box's components, those that weigh less than half NEGLECTED over their
    # number each are left out: a third of a real near-identical pair's (bbtcomp's lr -
    # ridge), where e^l and sigma_i's node are far apart
    kept = component > 0.5 * NEGLECTED / component.size
    share = added[None, lattice] / total                     # (node, lattice)
    centre = delta0[box][:, None, None] + offset[:, None, None] * share[None]
    spread = np.broadcast_to(np.sqrt(parts["noise"][i][:, None] * share)[None], terms.shape)
    return component[kept], centre[kept], spread[kept]


def dataset_readings(tables: tuple, low: float, high: float, summaries: bool,
                     pool: Executor) -> tuple:
    """Each dataset's P(delta_i < low) and P(delta_i > high), (dataset, 2), from its
    mixture (:func:`dataset_mixture`, whose arguments after the dataset's place are
    ``tables``); with ``summaries`` also its mean, sd and shortest 95% interval (dataset,
    4), else None.

    The datasets are read in the threads of ``pool`` (numpy releases the GIL in their
    array work), each dataset alone and in the same way whatever their number, so that
    every digit is the same on any machine.

    The mean and sd are the mixture's; the interval is the HDI of :data:`DRAWS`
    independent draws from it (by the function that reads the sampler's draws), from a
    generator seeded by the dataset's place: the same on every run and seed. Over 20
    generators its ends had an sd of 0.03 (a simulated dataset) and 0.05 (bbtcomp's lr -
    lda, whose mixture has a spike at delta0) of delta_i's sd around the mixture's exact
    HDI, where 4 x 8,000 of the sampler's draws were off by up to 0.1: an HDI is placed
    loosely by draws, as its width changes little as it slides. The exact one needs the
    mixture's distribution function at every point of a search, over up to 10^6
    components per dataset on real pairs: 6-12 s per dataset; these draws cost 6 ms."""
    def read(i: int) -> tuple:
        weight, centre, spread = dataset_mixture(i, *tables)
        sides = [float(weight @ phi_within_far((low - centre) / spread)),
                 float(weight @ phi_within_far((centre - high) / spread))]
        return sides, (mixture_summary(weight.ravel(), centre.ravel(), spread.ravel(),
                                       np.random.default_rng([DRAWS_SEED, i]))
                       if summaries else None)

    found = list(pool.map(read, range(len(tables[2]))))
    return (np.array([sides for sides, _ in found]),
            np.array([summary for _, summary in found]) if summaries else None)


def mixture_summary(weight: np.ndarray, centre: np.ndarray, spread: np.ndarray,
                    rng: np.random.Generator) -> list:
    """Mean, sd, HDI low and high of a mixture of normals with ``weight`` (normalised
    here), ``centre`` and ``spread`` per component (:func:`dataset_readings`)."""
    weight = weight / weight.sum()
    mean = float(weight @ centre)
    sd = float(np.sqrt(max(weight @ (centre ** 2 + spread ** 2) - mean ** 2, 0.0)))
    chosen = drawn_by_weight(weight, DRAWS, rng)
    draws = centre[chosen] + spread[chosen] * rng.standard_normal(DRAWS)
    low, high = az.hdi(draws, hdi_prob=INTERVAL)
    return [mean, sd, float(low), float(high)]
