"""The priors of the hierarchical model (:mod:`bayescomp.models.hierarchical`), shared by
the pairwise model, the joint model (:mod:`bayescomp.models.joint`), the reference programs,
the sensitivity analysis and the command line: the hyper-priors as one frozen object, the
named choices of the paper and the authors' code, and the one place a name becomes a prior.
"""
from __future__ import annotations

from dataclasses import dataclass

from bayescomp.models import nu_prior


@dataclass(frozen=True)
class HierarchicalPrior:
    """Hyper-priors of the hierarchical model.

    Parameters
    ----------
    alpha, beta : (float, float)
        Bounds of the uniform priors on the shape and rate of ``nu - 1 ~ Gamma(alpha, beta)``
        (with ``nu="gamma"``).
    sigma_factor : float
        Default upper bounds: ``sigma_i < sigma_factor x`` the mean within-dataset standard
        deviation of the differences, ``sigma0 < sigma_factor x`` the standard deviation of
        the dataset means (as in the paper and its reference code, factor 1000).
    delta0_bound, sigma0_upper, sigma_upper : float, optional
        Explicit bounds in the units of the scores: ``delta0 ~ U(-delta0_bound, delta0_bound)``
        (default the largest absolute difference), ``sigma0 ~ U(0, sigma0_upper)``,
        ``sigma_i ~ U(floor_i, sigma_upper)``.
    population : "student" or "normal"
        The distribution of delta_i: Student-t (the paper's) or normal (no nu).
    nu : "gamma", "kruschke" or "juarez_steel"
        Prior of the Student-t's degrees of freedom, the choices of the authors' code: the
        paper's ``nu - 1 ~ Gamma(alpha, beta)`` with uniform alpha and beta; Kruschke's
        (2013) ``nu - 1 ~ Exponential(1 / 29)``; Juarez & Steel's (2010) ``nu ~ Gamma(2, 0.1)``
        (restricted to nu > 1).
    """

    alpha: tuple[float, float] = (0.5, 5.0)
    beta: tuple[float, float] = (0.05, 0.15)
    sigma_factor: float = 1000.0
    delta0_bound: float | None = None
    sigma0_upper: float | None = None
    sigma_upper: float | None = None
    population: str = "student"
    nu: str = "gamma"

    def __post_init__(self):
        if self.population not in ("student", "normal"):
            raise ValueError(f"prior population must be 'student' or 'normal', got {self.population!r}")
        if self.nu not in nu_prior.NU_PRIORS:
            raise ValueError(f"prior nu must be one of {nu_prior.NU_PRIORS}, got {self.nu!r}")
        for name in ("alpha", "beta"):
            low, high = getattr(self, name)
            if not 0 < low < high:
                raise ValueError(f"prior bounds of {name} must satisfy 0 < low < high, got {(low, high)}")
        for name in ("sigma_factor", "delta0_bound", "sigma0_upper", "sigma_upper"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"prior {name} must be positive, got {value}")


PRIORS = {
    # Corani et al. (2017)
    "paper": HierarchicalPrior(),
    # baycomp's HierarchicalTest defaults
    "baycomp": HierarchicalPrior(alpha=(1.0, 2.0), beta=(0.01, 0.1)),
    # the other models of delta_i in the authors' code
    "kruschke": HierarchicalPrior(nu="kruschke"),
    "juarez_steel": HierarchicalPrior(nu="juarez_steel"),
    "gaussian": HierarchicalPrior(population="normal"),
}


def resolve_prior(prior: str | HierarchicalPrior) -> tuple[str, HierarchicalPrior]:
    """The name and the prior of ``prior``: a name in :data:`PRIORS`, or a
    :class:`HierarchicalPrior` (named "custom").

    Raises
    ------
    ValueError
        For a name not in :data:`PRIORS`, listing them.
    TypeError
        For anything else.
    """
    if isinstance(prior, str):
        if prior not in PRIORS:
            raise ValueError(f"unknown prior {prior!r}; choose from {sorted(PRIORS)} "
                             "or pass a HierarchicalPrior")
        return prior, PRIORS[prior]
    if not isinstance(prior, HierarchicalPrior):
        raise TypeError(f"prior must be a name or a HierarchicalPrior, got {type(prior).__name__}")
    return "custom", prior
