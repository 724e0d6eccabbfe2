"""The nodes of :mod:`bayescomp.models.quadrature`'s grids: the Stan data as the arrays it
reads, nodes at one resolution on given ranges, half that resolution (the error's check),
and the range of an axis that holds the posterior (the search of those ranges)."""
from __future__ import annotations

import numpy as np

from bayescomp.models.hierarchical_density import tabulated
from bayescomp.models.quadrature_rules import delta0_panels

#: the grid keeps where the posterior's density is within e^-20 of its largest
KEEP = 20.0


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
    and of u at most their range over ``least`` (a narrow posterior, many datasets); delta0's
    panels split at the ``cuts``."""
    low, high = ranges["log_sigma0_sq"]
    step = min(resolution["step"], (high - low) / resolution["least"])
    u_step = min(resolution["u_step"], (ranges["u"][1] - ranges["u"][0]) / resolution["least"])
    delta0, weight = delta0_panels(*ranges["delta0"], cuts, resolution["panels"],
                                   resolution["nodes"])
    u = np.arange(ranges["u"][0], ranges["u"][1] + u_step / 2, u_step) if student else None
    return dict(step=step, log_sigma0_sq=np.arange(low, high + step / 2, step), delta0=delta0,
                delta0_weight=weight, u=u, u_step=u_step, sigma_nodes=resolution["sigma_nodes"])


def halved(resolution: dict) -> dict:
    """Half the ``resolution`` in every direction: twice its steps, half its sigma_i nodes,
    delta0 panels and fewest steps over a range (the nodes per panel kept)."""
    return dict(resolution, step=2 * resolution["step"], u_step=2 * resolution["u_step"],
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
