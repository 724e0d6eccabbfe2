"""The one-dimensional rules of :mod:`bayescomp.models.quadrature`: each dataset's sigma_i
by Gauss-Legendre in log(sigma) over where its fold variance puts it, delta0 on
Gauss-Legendre panels split at the ROPE's ends, and the masses of log(lambda)'s cells under
lambda's Gamma(nu / 2, nu / 2) prior, and where they meet sigma0 on the lattice of l. Each is
checked on its own in ``tests/test_quadrature.py`` (scipy's quad, the Gamma's moments, the
whole lattice)."""
from __future__ import annotations

import numpy as np
from scipy import special


def sigma_rule(n: np.ndarray, S: np.ndarray, floor: np.ndarray, sigma_upper: float,
               nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per dataset, Gauss-Legendre nodes in x = log(sigma) and their log weights for
    p_i(sigma) dsigma = sigma^-(n_i - 2) exp(-S_i e^(-2x) / 2) dx on (floor_i, sigma_bar),
    over the part of the interval where the density is within e^-40 of its largest."""
    points, weights = np.polynomial.legendre.leggauss(nodes)
    low, high = np.log(floor), np.full_like(floor, np.log(sigma_upper))
    fine = low[:, None] + (high - low)[:, None] * np.linspace(0, 1, 4001)[None, :]
    density = -(n[:, None] - 2) * fine - 0.5 * S[:, None] * np.exp(-2 * fine)
    inside = density > density.max(axis=1, keepdims=True) - 40
    first = np.clip(inside.argmax(axis=1) - 1, 0, 4000)
    last = np.clip(4000 - inside[:, ::-1].argmax(axis=1) + 1, 0, 4000)
    rows = np.arange(len(n))
    start, end = fine[rows, first], fine[rows, last]
    x = 0.5 * (start + end)[:, None] + 0.5 * (end - start)[:, None] * points[None, :]
    log_weight = (-(n[:, None] - 2) * x - 0.5 * S[:, None] * np.exp(-2 * x)
                  + np.log(0.5 * (end - start))[:, None] + np.log(weights)[None, :])
    return x, log_weight


def delta0_panels(low: float, high: float, cuts, panels: int, nodes: int):
    """Gauss-Legendre nodes and weights of delta0 on (low, high): ``panels`` equal panels,
    each also split at the ``cuts`` (the ROPE's ends) inside it."""
    points, weights = np.polynomial.legendre.leggauss(nodes)
    edges = np.unique(np.concatenate([np.linspace(low, high, panels + 1),
                                      [c for c in cuts if low < c < high]]))
    half = 0.5 * np.diff(edges)
    centre = 0.5 * (edges[1:] + edges[:-1])
    return ((centre[:, None] + half[:, None] * points[None, :]).ravel(),
            (half[:, None] * weights[None, :]).ravel())


def lambda_cells(nu: float, log_lambda: np.ndarray, step: float) -> np.ndarray:
    """The masses of log(lambda) ~ log Gamma(nu / 2, rate nu / 2) in the cells of width
    ``step`` around ``log_lambda`` (the tails added to the end cells)."""
    half = 0.5 * nu
    edges = np.concatenate([log_lambda - 0.5 * step, [log_lambda[-1] + 0.5 * step]])
    cumulative = special.gammainc(half, half * np.exp(edges))
    cumulative[0], cumulative[-1] = 0.0, 1.0
    return np.diff(cumulative)


def lattice_band(cells: np.ndarray, n_sigma0: int, floor: float) -> tuple[slice, np.ndarray]:
    """log(lambda)'s cells (``cells``, increasing log(lambda), one step apart) on the lattice
    of l = log(sigma0^2) - log(lambda) that ``n_sigma0`` values of log(sigma0^2) at the same
    step make: the rows of the lattice that the cells heavier than ``floor`` times the
    heaviest reach (with every cell between them), and (those rows, sigma0) the mass of the
    cell that meets each sigma0 at each row, 0 where none does."""
    live = np.nonzero(cells >= floor * cells.max())[0]
    kept = np.arange(live[0], live[-1] + 1)
    # sigma0_k and lambda_j meet at row k + (number of cells - 1) - j
    rows = slice(len(cells) - 1 - kept[-1], n_sigma0 + len(cells) - 1 - kept[0])
    masses = np.zeros((rows.stop - rows.start, n_sigma0))
    sigma0 = np.arange(n_sigma0)[:, None]
    masses[sigma0 + kept[-1] - kept[None, :], sigma0] = cells[kept]
    return rows, masses
