"""The hierarchical models sampled as plainly written, to check the fast programs.

``stan/hierarchical_reference.stan`` is the model of Corani, Benavoli, Demsar, Mangili &
Zaffalon (2017) line by line: every ``delta_i`` (centred), every ``sigma_i``, ``delta0``,
``sigma0``, ``nu - 1``, ``alpha`` and ``beta`` are parameters of the sampler, with no
reparameterisation and nothing integrated out. :func:`bayescomp.hierarchical` samples the
same posterior faster; this module exists to show that it does (``tests/test_reference_program.py``).
``stan/joint_reference.stan`` is, in the same way, the joint model of K algorithms
(:func:`sample_joint_reference`), which :func:`bayescomp.compare_many` samples with the
noise, every delta_i and delta0 integrated out (``tests/test_joint_reference.py``).
"""
from __future__ import annotations

import arviz as az
import numpy as np
import xarray as xr

from bayescomp import sampling
from bayescomp.data.scores import Scores
from bayescomp.models import joint_program
from bayescomp.models.hierarchical_prior import HierarchicalPrior, resolve_prior
from bayescomp.models.hierarchical_program import prepare


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
        A name in :data:`bayescomp.models.hierarchical_prior.PRIORS` or a prior.

    Returns
    -------
    (dict, float)
        The data (the fast program's bounds, floors and sufficient statistics, plus the
        bounds of alpha and beta) and the scale to multiply the sampled differences by.
    """
    _, prior = resolve_prior(prior)
    if (prior.population, prior.nu) != ("student", "gamma"):
        raise ValueError("the reference program is the paper's model: a Student-t population "
                         "with nu - 1 ~ Gamma(alpha, beta); got population "
                         f"{prior.population!r}, nu {prior.nu!r}")
    data, scale = prepare(scores, first, second, prior)
    data = {key: data[key] for key in _DATA_KEYS}
    data.update(alpha_lower=float(prior.alpha[0]), alpha_upper=float(prior.alpha[1]),
                beta_lower=float(prior.beta[0]), beta_upper=float(prior.beta[1]))
    return data, scale


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


JOINT_PROGRAM = joint_program.REFERENCE_PROGRAM


def joint_reference_inits(data: dict, prior: HierarchicalPrior, chains: int,
                          rng: np.random.Generator) -> list[dict]:
    """Initial values of ``stan/joint_reference.stan`` per chain, from the data (unit scale
    of :func:`bayescomp.models.joint_program.prepare`) and the bounds of alpha and beta in
    ``prior``: delta_i at the dataset's mean contrast, Sigma_i at its scatter matrix over
    ``(n_i - 1) b_i`` (plus floor_i^2 I), delta0 at the means' mean, sigma0 from their
    spread, W = (d + 1) I, nu - 1 = 10, alpha and beta mid-range; scales jittered by up to
    20% and means by a standard error, so that the chains start apart, as R-hat needs.

    Stan's default (uniform on (-2, 2) unconstrained) starts every Sigma_i near the
    identity and every delta_i within 2 of 0 whatever the data, and warm-up must bring N
    covariances from there past the funnels the fast program avoids (it did, on the one
    collection tried); a start at the data spares that.
    """
    d = int(data["d"])
    means = np.asarray(data["mean_contrast"], dtype=float).reshape(-1, d)
    scatter = np.asarray(data["scatter"], dtype=float).reshape(-1, d, d)
    n = np.asarray(data["n_scores"], dtype=float)
    b = 1 - np.asarray(data["rho"], dtype=float)
    floor = np.asarray(data["floor_sd"], dtype=float)
    noise = scatter / ((n - 1) * b)[:, None, None] + (floor ** 2)[:, None, None] * np.eye(d)
    # each mean's standard error given Sigma_i: sqrt(a_i Sigma_i[k, k])
    standard_error = np.sqrt((np.asarray(data["rho"], dtype=float) + b / n)[:, None]
                             * np.diagonal(noise, axis1=1, axis2=2))
    spread = float(np.sqrt(np.mean(np.var(means, axis=0)))) if len(means) > 1 else 1.0
    sigma0 = min(max(spread, 1e-3), 0.5 * float(data["sigma0_upper"]))

    def jitter(size=None):
        return np.exp(rng.uniform(-0.2, 0.2, size))

    inits = []
    for _ in range(chains):
        inits.append(dict(
            delta0=(means.mean(axis=0) + rng.normal(0, 0.2 * sigma0, d)).tolist(),
            sigma0=sigma0 * float(jitter()),
            W=((d + 1) * float(jitter()) * np.eye(d)).tolist(),
            nu_minus_one=10 * float(jitter()),
            alpha=float(np.mean(prior.alpha)) * float(jitter()),
            beta=float(np.mean(prior.beta)) * float(jitter()),
            delta=(means + rng.normal(0, 1, means.shape) * standard_error).tolist(),
            Sigma=(noise * jitter((len(means), 1, 1))).tolist()))
    return inits


def sample_joint_reference(scores: Scores, *, prior: str | HierarchicalPrior = "paper",
                           seed: int | None = None, chains: int = 4, iter_warmup: int = 1000,
                           iter_sampling: int = 1000, adapt_delta: float = 0.95,
                           max_treedepth: int = 10, backend: str = "auto") -> az.InferenceData:
    """Sample the joint model of K algorithms as plainly written (slow; for validation).

    Parameters
    ----------
    scores : Scores
        Fold scores of K >= 2 algorithms on at least two datasets, more than K splits each.
    prior : "paper", "baycomp" or HierarchicalPrior
        The priors of :func:`bayescomp.compare_many` (its nu - 1 ~ Gamma(alpha, beta) with
        alpha and beta uniform, sampled here, integrated out there).
    seed : int, optional
        Seeds Stan and the jitter of the initial values (:func:`joint_reference_inits`).
    chains, iter_warmup, iter_sampling, adapt_delta, max_treedepth
        NUTS settings. The centred program samples cleanly only where the data pin every
        delta_i and Sigma_i well inside the population (``stan/joint_reference.stan``).
    backend : "auto", "cmdstanpy" or "pystan"

    Returns
    -------
    arviz.InferenceData
        ``posterior`` with the variables of ``bayescomp.compare_many(...).idata.posterior``
        in the units of the scores: ``delta0``, ``population_sd`` (dimension ``pair``,
        named "first - second"), ``delta`` (``dataset``, ``pair``), ``sigma0`` and ``nu``;
        and every sampled parameter in the program's contrast coordinates (unit scale):
        ``delta0_contrast``, ``delta_contrast``, ``W``, ``Sigma``, ``alpha``, ``beta``.
        Diagnose it with :func:`bayescomp.models.diagnostics.diagnose`; nothing is checked
        here.
    """
    _, prior = resolve_prior(prior)
    if (prior.population, prior.nu) != ("student", "gamma"):
        raise ValueError("the reference program has a Student-t population with nu - 1 ~ "
                         f"Gamma(alpha, beta); got population {prior.population!r}, "
                         f"nu {prior.nu!r}")
    if len(scores) < 2:
        raise ValueError(f"the joint model needs at least 2 datasets, got {len(scores)}")
    data, scale = joint_program.prepare(scores, prior)
    program_data = joint_program.stan_data(data, JOINT_PROGRAM, prior)
    rng = np.random.default_rng(seed)
    inits = joint_reference_inits(data, prior, chains, rng)
    fit = sampling.sample(JOINT_PROGRAM, program_data, backend=backend, chains=chains,
                          iter_warmup=iter_warmup, iter_sampling=iter_sampling, seed=seed,
                          adapt_delta=adapt_delta, max_treedepth=max_treedepth, inits=inits)
    post = fit.posterior
    k = int(data["d"]) + 1
    names = list(scores.algorithms)
    pairs, vectors = joint_program.pair_vectors(k)
    pair_names = [f"{names[a]} - {names[b]}" for a, b in pairs]
    shape = post["sigma0"].shape
    contrast0 = post["delta0"].values.reshape(shape + (k - 1,))
    contrast = post["delta"].values.reshape(shape + (len(scores), k - 1))
    covariance = post["Sigma0"].values.reshape(shape + (k - 1, k - 1))
    coords = dict(chain=post.chain, draw=post.draw)
    pair_coords = dict(coords, pair=pair_names)
    # a pair's population scale: sqrt(g' Sigma0 g), as compare_many's sqrt(g' B B' g)
    spread = np.sqrt(np.einsum("pi,csij,pj->csp", vectors, covariance, vectors)) * scale
    user = xr.Dataset({
        "delta0": xr.DataArray(contrast0 @ vectors.T * scale, dims=("chain", "draw", "pair"),
                               coords=pair_coords),
        "population_sd": xr.DataArray(spread, dims=("chain", "draw", "pair"), coords=pair_coords),
        "delta": xr.DataArray(contrast @ vectors.T * scale,
                              dims=("chain", "draw", "dataset", "pair"),
                              coords=dict(pair_coords, dataset=list(scores.dataset_names))),
        "sigma0": post["sigma0"] * scale, "nu": post["nu"],
        "delta0_contrast": xr.DataArray(contrast0, dims=("chain", "draw", "contrast"),
                                        coords=coords),
        "delta_contrast": xr.DataArray(contrast, dims=("chain", "draw", "dataset", "contrast"),
                                       coords=coords),
        "W": xr.DataArray(post["W"].values.reshape(shape + (k - 1, k - 1)),
                          dims=("chain", "draw", "row", "column"), coords=coords),
        "Sigma": xr.DataArray(post["Sigma"].values.reshape(shape + (len(scores), k - 1, k - 1)),
                              dims=("chain", "draw", "dataset", "row", "column"),
                              coords=coords),
        "alpha": post["alpha"], "beta": post["beta"]},
        attrs=dict(post.attrs, program=JOINT_PROGRAM, scale=scale))
    return az.InferenceData(posterior=user, sample_stats=fit.sample_stats)
