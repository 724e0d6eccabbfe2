"""The nodes of :mod:`bayescomp.models.quadrature`'s grids: the Stan data as the arrays it
reads, nodes at one resolution on given ranges, half that resolution (the error's check),
and the range of an axis that holds the posterior (the search of those ranges)."""
from __future__ import annotations

import numpy as np

from bayescomp.models.hierarchical_density import tabulated
from bayescomp.models.quadrature_rules import delta0_panels

#: the grid keeps where the posterior's density is within e^-20 of its largest
KEEP = 20.0
#: nu's nodes are uniform in log(nu - 1 + NU_SHIFT): as in log(nu - 1), the prior's
#: coordinate, where nu - 1 is well above NU_SHIFT; below, nu steps by about NU_SHIFT times
#: the step (0.025 at the fine resolution). Uniform in log(nu - 1), the grid spent 31 of
#: its 67 nodes (bbtcomp's lr - ridge) on nu below 1.1, where the datasets' integrals hardly
#: change from node to node; the prior's mass there is summed into the lowest cells instead
#: (:func:`log_prior_cells`). On 9 real and simulated pairs every probability moved by at
#: most 2e-4, within the error the uniform grid reported (each dataset's within the two
#: grids' errors), in 0.74-0.92 of the time (benchmarks/results/quadrature.md)
NU_SHIFT = 0.1
#: the largest step of log(nu - 1) in the sums that give the prior's mass in each cell
CELL_STEP = 0.005


def statistics(data: dict) -> dict:
    """The Stan data's sufficient statistics, floors and prior of nu, as arrays."""
    rho, n = np.asarray(data["rho"], float), np.asarray(data["n_scores"], float)
    return dict(student=bool(data["population"]),
                mean=np.asarray(data["mean_diff"], float), n=n, mean_share=rho + (1 - rho) / n,
                S=np.asarray(data["ss"], float) / (1 - rho), floor=np.asarray(data["sigma_lower"]),
                sigma_upper=float(data["sigma_upper"]),
                **{key: np.asarray(data[key], float) for key in (
                    "nu_prior_start", "nu_prior_step", "nu_prior_log_density", "nu_prior_slope")})


def log_prior_u(stats: dict, u: np.ndarray) -> np.ndarray:
    """The log density of nu's prior in ``stats`` (:func:`statistics`) at the nodes ``u``
    of log(nu - 1), as the Stan program reads its table."""
    return tabulated(u, stats["nu_prior_start"], stats["nu_prior_step"],
                     stats["nu_prior_log_density"], stats["nu_prior_slope"])


def grid_nodes(ranges: dict, resolution: dict, cuts: tuple, student: bool) -> dict:
    """The nodes of one resolution on ``ranges``: the steps of log(sigma0^2) (the lattice's)
    and of t = log(nu - 1 + NU_SHIFT) at most their range over ``least`` (a narrow
    posterior, many datasets); delta0's panels split at the ``cuts``. u = log(nu - 1) at
    the nodes of t, and ``u_edges``, the cells' ends in u halfway between them (the first
    one -inf where its cell reaches nu = 1)."""
    low, high = ranges["log_sigma0_sq"]
    step = min(resolution["step"], (high - low) / resolution["least"])
    delta0, weight = delta0_panels(*ranges["delta0"], cuts, resolution["panels"],
                                   resolution["nodes"])
    u = edges = None
    if student:
        t_low, t_high = np.log(np.exp(np.asarray(ranges["u"], dtype=float)) + NU_SHIFT)
        t_step = min(resolution["nu_step"], (t_high - t_low) / resolution["least"])
        t = np.arange(t_low, t_high + t_step / 2, t_step)
        u = np.log(np.exp(t) - NU_SHIFT)
        ends = np.exp(np.concatenate([t - t_step / 2, [t[-1] + t_step / 2]])) - NU_SHIFT
        with np.errstate(divide="ignore"):
            edges = np.log(np.maximum(ends, 0.0))
    return dict(step=step, log_sigma0_sq=np.arange(low, high + step / 2, step), delta0=delta0,
                delta0_weight=weight, u=u, u_edges=edges, sigma_nodes=resolution["sigma_nodes"])


def log_prior_cells(stats: dict, edges: np.ndarray) -> np.ndarray:
    """The log of the prior's mass in each cell of u = log(nu - 1) between consecutive
    ``edges``: on steps of at most :data:`CELL_STEP`, the integral of the density whose log
    is linear between the values the program's table gives at their ends
    (:func:`log_prior_u`; exact where the log density is, as in the prior's lower tail),
    taken in logs so that a cell far in a tail keeps its digits. Below the table's start
    the prior's mass is under 4e-12 (:mod:`bayescomp.models.nu_prior`): a cell reaching
    below it starts there; a cell that holds nothing has -inf."""
    start = float(stats["nu_prior_start"])
    lows, highs = np.maximum(edges[:-1], start), np.maximum(edges[1:], start)
    steps = np.maximum(8, np.ceil((highs - lows) / CELL_STEP)).astype(int)
    # every cell's steps in one array: step j of cell k from u[j] to u[j] + width[j]
    cell = np.repeat(np.arange(len(lows)), steps)
    first = np.concatenate([[0], np.cumsum(steps)[:-1]])
    width = ((highs - lows) / steps)[cell]
    u = lows[cell] + (np.arange(cell.size) - first[cell]) * width
    at_low, at_high = log_prior_u(stats, u), log_prior_u(stats, u + width)
    rise = np.abs(at_high - at_low)
    # a step's integral over its width and its larger end's density: (1 - e^-rise) / rise,
    # 1 - rise / 2 to rounding where rise is tiny
    share = np.where(rise > 1e-8, -np.expm1(-rise) / np.maximum(rise, 1e-8), 1 - rise / 2)
    with np.errstate(divide="ignore", invalid="ignore"):   # empty cells: width 0
        terms = np.maximum(at_low, at_high) + np.log(share * width)
        largest = np.maximum.reduceat(terms, first)
        return np.where(highs > lows, largest + np.log(np.add.reduceat(
            np.exp(terms - largest[cell]), first)), -np.inf)


def closed_end(grid: dict, ranges: dict, bounds: dict, key: str, end: int) -> bool:
    """Whether the posterior's mass at an ``end`` (0 or 1) of the axis ``key`` of ``grid``
    (on ``ranges`` within ``bounds``) is inside its support: the end is delta0's bound or
    sigma0's upper one, or nu = 1, which the lowest cell of nu reaches where its lower edge
    is -inf. Else the mass beyond it is missing from the grid (it counts as error; the
    mass at the end node is a proxy for it, as every end is where the density is e^-KEEP
    of its largest)."""
    if key == "u":
        return end == 0 and grid["u_edges"][0] == -np.inf
    return ((key, end) != ("log_sigma0_sq", 0)
            and abs(ranges[key][end] - bounds[key][end]) < 1e-12)


def halved(resolution: dict) -> dict:
    """Half the ``resolution`` in every direction: twice its steps, half its sigma_i nodes,
    delta0 panels and fewest steps over a range (the nodes per panel kept)."""
    return dict(resolution, step=2 * resolution["step"], nu_step=2 * resolution["nu_step"],
                least=resolution["least"] // 2, sigma_nodes=resolution["sigma_nodes"] // 2,
                panels=resolution["panels"] // 2)


def kept_range(values: np.ndarray, masses: np.ndarray, current: tuple, bounds: tuple) -> tuple:
    """The range of ``values`` (increasing, on the ``current`` range) whose mass is within
    e^-KEEP of the largest, widened by one node on each side; where an end node holds more,
    the posterior goes on beyond it, and the range is extended there by its own width. Within
    ``bounds``."""
    inside = np.nonzero(masses > masses.max() * np.exp(-KEEP))[0]
    width = current[1] - current[0]
    low = (current[0] - width if inside[0] == 0 else values[inside[0] - 1])
    high = (current[1] + width if inside[-1] == len(values) - 1 else values[inside[-1] + 1])
    return max(low, bounds[0]), min(high, bounds[1])
