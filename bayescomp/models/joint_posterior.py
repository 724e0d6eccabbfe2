"""The joint model's draws as the results read them: in score units and pair coordinates
(:func:`pair_posterior`), and per draw the mass of each pair's population difference and
next-dataset difference left of, inside and right of the ROPE, with the probabilities and
Monte Carlo errors they give (:func:`pair_estimates`), and the pair table under importance
weights (:func:`reweighted_pair_table`)."""
from __future__ import annotations

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr

from bayescomp.decisions import UNRELIABLE
from bayescomp.models.hierarchical_runs import region_estimates
from bayescomp.models.joint_program import (DELTA0_COPIES, delta0_copies,
                                            delta_pair_conditional, draw_delta, lower_factor,
                                            pair_vectors)
from bayescomp.models.prior_reweighting import (weighted_decision, weighted_estimate,
                                                weighted_hdi)
from bayescomp.models.region_masses import Symmetric, average_over_draws
from bayescomp.rope import Rope, region_labels


def next_dataset_masses(posterior, rope: Rope) -> np.ndarray:
    """Per draw and pair (chain, draw, pair, 3), the mass of a new dataset's difference left
    of, inside and right of ``rope``: Student-t with nu, the pair's delta0 and its
    population scale ``population_sd``, averaged over the draw of delta0 and its antithetic
    partner, the draw reflected in the centre of delta0's conditional (``delta0_centre``;
    a normal, so the reflection is an exact draw of it too), as the pairwise model's
    :func:`bayescomp.models.region_masses.next_dataset_masses` does."""
    delta0 = posterior["delta0"].values
    mirrored = 2 * posterior["delta0_centre"].values - delta0
    nu, spread = posterior["nu"].values[..., None], posterior["population_sd"].values
    return 0.5 * sum(rope.probabilities(Symmetric.student_t(nu, location, spread))
                     for location in (delta0, mirrored))


def population_masses(posterior, rope: Rope) -> np.ndarray:
    """Per draw and pair (chain, draw, pair, 3), the shares of the draw's copies of delta0
    (``delta0_copies``, :func:`~bayescomp.models.joint_program.delta0_copies`) left of,
    inside and right of ``rope``."""
    copies = posterior["delta0_copies"].values                  # chain, draw, copy, contrast
    _, vectors = pair_vectors(copies.shape[-1] + 1)
    return rope.indicators(copies @ vectors.T).mean(axis=2)


def pair_estimates(population: np.ndarray, next_masses: np.ndarray,
                   order: np.ndarray) -> list[tuple]:
    """Per pair, ``((P(left / rope / right) of delta0, their Monte Carlo errors), (the same
    of the next dataset))``: the probabilities from the chain-major draws in ``order`` (every
    draw as sampled, or separate modes mixed by their weights), the errors from the chains
    as sampled (:func:`~bayescomp.models.hierarchical_runs.region_estimates`), as
    :func:`bayescomp.hierarchical` reports them. ``population`` (:func:`population_masses`)
    and ``next_masses`` are (chain, draw, pair, 3)."""
    estimates = []
    for p in range(population.shape[-2]):
        pair_masses = (population[..., p, :], next_masses[..., p, :])
        errors = [mcse for _, mcse in region_estimates(*pair_masses)]
        estimates.append(tuple((masses.reshape(-1, 3)[order].mean(axis=0), error)
                               for masses, error in zip(pair_masses, errors)))
    return estimates


def dataset_masses(fit, data: dict, scale: float, rotation: np.ndarray, rope: Rope,
                   draws: slice, vectors: np.ndarray) -> np.ndarray:
    """Per draw of ``draws`` (the engine's draws ``fit``, chain-major), dataset and pair of
    ``vectors``, the masses (draw, dataset, pair, 3) of delta_i left of, inside and right of
    ``rope`` under its normal conditional given the draw (the one :func:`pair_posterior`
    draws delta_i from; :func:`~bayescomp.models.joint_program.delta_pair_conditional`).
    ``data`` and ``rotation`` as :func:`pair_posterior`'s."""
    post = fit.posterior
    d = data["d"]
    total = post.sizes["chain"] * post.sizes["draw"]

    def flat(name: str, shape: tuple) -> np.ndarray:
        return post[name].values.reshape((total,) + shape)[draws]

    centre, sd = delta_pair_conditional(flat("delta0", (d,)) @ rotation.T,
                                        rotation @ flat("B", (d, d)), flat("log_kappa", (-1,)),
                                        flat("log_lambda", (-1,)), data, vectors)
    return rope.probabilities(Symmetric.normal(centre * scale, sd * scale))


def dataset_probabilities(fit, data: dict, scale: float, rotation: np.ndarray, rope: Rope,
                          counts: np.ndarray) -> np.ndarray:
    """Every dataset's and pair's P(left / rope / right) (dataset, pair, 3): the
    :func:`dataset_masses` of the engine's draws ``fit`` (chain-major) averaged, each draw
    counted ``counts`` times (every draw once, or the modes mixed by their weights), a chunk
    of draws at a time, as the pairwise model reads its datasets'
    (:func:`bayescomp.models.region_masses.dataset_probabilities`)."""
    _, vectors = pair_vectors(data["d"] + 1)
    return average_over_draws(
        lambda part: dataset_masses(fit, data, scale, rotation, rope, part, vectors), counts)


def pair_posterior(fit, data: dict, scale: float, datasets, pairs: list[str],
                   rotation: np.ndarray, rng: np.random.Generator) -> az.InferenceData:
    """The posterior in score units and in pair coordinates: delta0, the centre of its
    conditional (``delta0_centre``) and every delta_i of every pair (delta_i drawn from its
    conditional), the population's Student-t scale of
    every pair (``population_sd``, sqrt(g' B B' g)), sigma0, the components' nu (sorted per
    draw: the components have no order), and the contrast coordinates (``delta0_contrast``,
    ``B``), turned back from the sampled coordinates ``V'z`` (``rotation`` V,
    :func:`~bayescomp.models.joint_program.sampling_rotation`) to those of ``data``."""
    post = fit.posterior
    k = data["d"] + 1
    _, vectors = pair_vectors(k)
    coords = dict(chain=post.chain, draw=post.draw)
    shape = post["sigma0"].shape
    contrast0 = post["delta0"].values.reshape(shape + (k - 1,)) @ rotation.T
    centre0 = post["delta0_centre"].values.reshape(shape + (k - 1,)) @ rotation.T
    # V B is a square root of the population covariance in data's coordinates; its
    # triangular form by QR, as Cholesky's decomposition of V B B' V' fails on rounding
    # where the posterior puts that covariance near a null direction
    factor = rotation @ post["B"].values.reshape(shape + (k - 1, k - 1))
    B = lower_factor(factor)
    delta = draw_delta(contrast0, factor, post["log_kappa"].values, post["log_lambda"].values,
                       data, rng)
    copies = delta0_copies(post["delta0_centre"].values, post["delta0_precision"].values,
                           rotation, DELTA0_COPIES, rng)
    spread = np.linalg.norm(np.einsum("csij,pi->cspj", B, vectors), axis=-1) * scale
    variables = dict(
        delta0=xr.DataArray(contrast0 * scale @ vectors.T, dims=("chain", "draw", "pair"),
                            coords=dict(coords, pair=pairs)),
        delta=xr.DataArray(delta * scale @ vectors.T, dims=("chain", "draw", "dataset", "pair"),
                           coords=dict(coords, dataset=list(datasets), pair=pairs)),
        # the centre of delta0's conditional, for the antithetic draws of next_dataset_masses
        delta0_centre=xr.DataArray(centre0 * scale @ vectors.T, dims=("chain", "draw", "pair"),
                                   coords=dict(coords, pair=pairs)),
        population_sd=xr.DataArray(spread, dims=("chain", "draw", "pair"),
                                   coords=dict(coords, pair=pairs)),
        sigma0=post["sigma0"] * scale,
        nu=post["nu"],
        delta0_contrast=xr.DataArray(contrast0 * scale, dims=("chain", "draw", "contrast"),
                                     coords=coords),
        delta0_copies=xr.DataArray(copies * scale, dims=("chain", "draw", "copy", "contrast"),
                                   coords=coords),
        B=xr.DataArray(B * scale, dims=("chain", "draw", "row", "column"), coords=coords))
    return az.InferenceData(posterior=xr.Dataset(variables, attrs=post.attrs),
                            sample_stats=fit.sample_stats)


def reweighted_pair_table(result, weights: np.ndarray) -> pd.DataFrame:
    """The pair table (:meth:`~bayescomp.models.joint_result.JointResult.to_frame`'s columns)
    of ``result``'s draws weighted by ``weights`` (chain, draw; summing to 1): another prior
    of nu read off this fit (:mod:`bayescomp.models.prior_reweighting`). The probabilities
    are weighted means of the per-draw masses, with the errors of
    :func:`~bayescomp.models.prior_reweighting.weighted_estimate`; delta0's mean and 95% HDI
    are of its copies, each weighing its draw's weight; decisions are by the result's rule
    at its threshold, every mode's from its own draws where the chains sit in modes (the
    weights then from :func:`~bayescomp.models.prior_reweighting.weights_in_modes`). With
    equal weights and no modes this is ``result.to_frame()``."""
    post = result.idata.posterior
    masses = population_masses(post, result.rope), next_dataset_masses(post, result.rope)
    copies = post["delta0_copies"].values                  # chain, draw, copy, contrast
    _, vectors = pair_vectors(copies.shape[-1] + 1)
    delta0 = (copies @ vectors.T).reshape(-1, vectors.shape[0])   # draw x copy, pair
    copy_weights = np.repeat(weights.reshape(-1) / copies.shape[2], copies.shape[2])
    rows = []
    for p, row in enumerate(result.table.itertuples()):
        labels = region_labels(row.first, row.second)
        low, high = weighted_hdi(delta0[:, p], copy_weights)
        entry = dict(first=row.first, second=row.second,
                     delta0_mean=float(copy_weights @ delta0[:, p]),
                     delta0_hdi_low=low, delta0_hdi_high=high)
        for scope, per_draw in zip(("population", "next_dataset"), masses):
            estimate = weighted_estimate(per_draw[..., p, :], weights)
            entry.update({f"{scope}_p_{region}": float(value) for region, value in
                          zip(("left", "rope", "right"), estimate[0])})
            entry[f"{scope}_decision"] = (
                weighted_decision(estimate, per_draw[..., p, :], weights, result.modes,
                                  result.threshold, labels)
                if result.reliable else UNRELIABLE)
        entry["reliable"] = result.reliable
        rows.append(entry)
    return pd.DataFrame(rows, columns=result.table.columns)
