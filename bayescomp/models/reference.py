"""The published hierarchical model sampled as plainly written, to check the fast program.

``stan/hierarchical_reference.stan`` is the model of Corani, Benavoli, Demsar, Mangili &
Zaffalon (2017) line by line: every ``delta_i`` (centred), every ``sigma_i``, ``delta0``,
``sigma0``, ``nu - 1``, ``alpha`` and ``beta`` are parameters of the sampler, with no
reparameterisation and nothing integrated out. :func:`bayescomp.hierarchical` samples the
same posterior faster; this module exists to show that it does (``tests/test_reference_program.py``).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import arviz as az
import xarray as xr

from bayescomp import sampling
from bayescomp.data.scores import Scores
from bayescomp.models.hierarchical_program import prepare

if TYPE_CHECKING:
    from bayescomp.models.hierarchical import HierarchicalPrior

# the module, not the function bayescomp/__init__.py exports under the same name
_hierarchical = importlib.import_module(".hierarchical", __package__)

PROGRAM = "hierarchical_reference"
# what the reference program reads from the data of bayescomp.models.hierarchical_program.prepare
_DATA_KEYS = ("n_datasets", "n_scores", "rho", "mean_diff", "ss", "delta0_bound",
              "sigma0_upper", "sigma_lower", "sigma_upper")


def reference_data(scores: Scores, first: str, second: str, prior) -> tuple[dict, float]:
    """Stan data of the reference program, on the unit scale of the fast one, and that scale.

    Parameters
    ----------
    scores : Scores
    first, second : str
        Algorithms; differences are ``first - second``.
    prior : str or HierarchicalPrior
        A name in :data:`bayescomp.models.hierarchical.PRIORS` or a prior.

    Returns
    -------
    (dict, float)
        The data (the fast program's bounds, floors and sufficient statistics, plus the
        bounds of alpha and beta) and the scale to multiply the sampled differences by.
    """
    prior = _resolve_prior(prior)
    if (prior.population, prior.nu) != ("student", "gamma"):
        raise ValueError("the reference program is the paper's model: a Student-t population "
                         "with nu - 1 ~ Gamma(alpha, beta); got population "
                         f"{prior.population!r}, nu {prior.nu!r}")
    data, scale = prepare(scores, first, second, prior)
    data = {key: data[key] for key in _DATA_KEYS}
    data.update(alpha_lower=float(prior.alpha[0]), alpha_upper=float(prior.alpha[1]),
                beta_lower=float(prior.beta[0]), beta_upper=float(prior.beta[1]))
    return data, scale


def _resolve_prior(prior):
    if isinstance(prior, str):
        if prior not in _hierarchical.PRIORS:
            raise ValueError(f"unknown prior {prior!r}; choose from {sorted(_hierarchical.PRIORS)} "
                             "or pass a HierarchicalPrior")
        return _hierarchical.PRIORS[prior]
    if not isinstance(prior, _hierarchical.HierarchicalPrior):
        raise TypeError(f"prior must be a name or a HierarchicalPrior, got {type(prior).__name__}")
    return prior


def sample_reference(scores: Scores, first: str, second: str, *,
                     prior: str | HierarchicalPrior = "paper", seed: int | None = None,
                     chains: int = 4, iter_warmup: int = 1000, iter_sampling: int = 1000,
                     adapt_delta: float = 0.95, max_treedepth: int = 10,
                     backend: str = "auto") -> az.InferenceData:
    """Sample the published hierarchical model as plainly written (slow; for validation).

    Parameters
    ----------
    scores : Scores
        Paired scores on at least two datasets.
    first, second : str
        Algorithms; differences are ``first - second``.
    prior : "paper", "baycomp" or HierarchicalPrior
        The same priors as :func:`bayescomp.hierarchical`, with the same default bounds.
    seed : int, optional
        Seeds Stan; drawn when None (recorded in ``attrs["seed"]``).
    chains, iter_warmup, iter_sampling, adapt_delta, max_treedepth
        NUTS settings. The centred program meets funnels (small sigma0, small nu) that the
        fast one avoids: ``adapt_delta=0.99`` and longer runs may be needed.
    backend : "auto", "cmdstanpy" or "pystan"

    Returns
    -------
    arviz.InferenceData
        ``posterior`` with the variables and dimensions of
        ``bayescomp.hierarchical(...).idata.posterior``: ``delta0``, ``sigma0``, ``nu``,
        ``alpha``, ``beta``, ``delta`` and ``sigma`` (dimension ``dataset``, named by
        ``scores.dataset_names``) and ``delta_next``, in the units of the scores; and the
        sampler's ``sample_stats``. Diagnose it with :func:`bayescomp.models.diagnostics.diagnose`:
        nothing is checked or warned here.
    """
    if len(scores) < 2:
        raise ValueError(f"the hierarchical model needs at least 2 datasets, got {len(scores)}")
    data, scale = reference_data(scores, first, second, prior)
    fit = sampling.sample(PROGRAM, data, backend=backend, chains=chains,
                          iter_warmup=iter_warmup, iter_sampling=iter_sampling, seed=seed,
                          adapt_delta=adapt_delta, max_treedepth=max_treedepth)
    posterior = fit.posterior
    names = list(scores.dataset_names)

    def per_dataset(variable):
        extra = [d for d in variable.dims if d not in ("chain", "draw")][0]
        return variable.rename({extra: "dataset"}).assign_coords(dataset=names)

    user = xr.Dataset({
        "delta0": posterior["delta0"] * scale, "sigma0": posterior["sigma0"] * scale,
        "nu": posterior["nu"], "alpha": posterior["alpha"], "beta": posterior["beta"],
        "delta": per_dataset(posterior["delta"] * scale),
        "sigma": per_dataset(posterior["sigma"] * scale),
        "delta_next": posterior["delta_next"] * scale},
        attrs=dict(posterior.attrs, program=PROGRAM, scale=scale))
    return az.InferenceData(posterior=user, sample_stats=fit.sample_stats)
