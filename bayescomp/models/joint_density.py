"""The log density of ``stan/joint.stan`` in numpy, at any points of its unconstrained scale.

Weighing the modes of the joint model's posterior by bridge sampling
(:mod:`bayescomp.models.mode_mass`) needs its log density at points drawn from a normal
approximation, not only at the draws where Stan records it (``lp__``). This is the
program's transformed parameters and model block line by line, vectorised over points, with
the Jacobians of Stan's constraining transforms, and the same constants (the program adds
everything with ``target +=``, so nothing is dropped): it equals ``lp__`` at every draw to
the rounding of the draws, and the model's density written with scipy at any point up to a
constant (``tests/test_joint_density.py``). Device numbers are the program's.

The unconstrained scale is Stan's, in the order of the program's parameters: sigma0 on
(0, sigma0_upper) as the log-odds of its place in the interval, the Bartlett factor
``shape`` row by row (each row's entries below the diagonal, then the log of its diagonal
entry: Stan's Cholesky-factor transform, :func:`bartlett_layout`), log(nu - 1), kappa_z,
lambda_z (:func:`unconstrained`).
"""
from __future__ import annotations

import numpy as np

from bayescomp.models.hierarchical_density import (bounded, log_gamma_moments, tabulated,
                                                   unbounded)


def dimensions(data: dict) -> dict:
    """The slices of each parameter in a point of the unconstrained scale."""
    d, q = int(data["d"]), int(data["n_datasets"])
    sizes = dict(sigma0=1, shape=d * (d + 1) // 2, log_nu_minus_one=1, kappa_z=q, lambda_z=q)
    slices, start = {}, 0
    for name, size in sizes.items():
        slices[name] = slice(start, start + size)
        start += size
    return slices


def bartlett_layout(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the unconstrained coordinates of a d x d Cholesky factor sit in the matrix, in
    Stan's order (row by row: the entries below the diagonal, then the diagonal's, whose
    coordinate is its log): (rows, columns, which are on the diagonal)."""
    rows = np.concatenate([np.full(m + 1, m) for m in range(d)])
    columns = np.concatenate([np.arange(m + 1) for m in range(d)])
    return rows, columns, rows == columns


def unconstrained(fit, data: dict) -> np.ndarray:
    """The sampled parameters of a fit of ``stan/joint.stan`` (the engine's InferenceData,
    on the program's unit scale) on Stan's unconstrained scale, (chain, draw, dimension):
    where ``lp__`` is the log density (module notes)."""
    posterior = fit.posterior
    draws = posterior["sigma0"].shape
    d = int(data["d"])
    rows, cols, diagonal = bartlett_layout(d)
    factor = posterior["shape"].values.reshape(draws + (d, d))[..., rows, cols]
    factor[..., diagonal] = np.log(factor[..., diagonal])
    columns = [unbounded(posterior["sigma0"].values, 0.0, data["sigma0_upper"])[..., None],
               factor,
               posterior["log_nu_minus_one"].values[..., None],
               posterior["kappa_z"].values.reshape(draws + (-1,)),
               posterior["lambda_z"].values.reshape(draws + (-1,))]
    return np.concatenate(columns, axis=-1)


def log_density(data: dict, points: np.ndarray) -> np.ndarray:
    """The program's log density (Jacobians included, constants as Stan keeps them) at
    ``points`` (..., dimension) of the unconstrained scale laid out as :func:`unconstrained`
    lays out the draws; -inf where it cannot be evaluated (a covariance that overflows far
    out in a proposal's tails).

    ``data`` is :func:`bayescomp.models.joint_program.prepare`'s (the program's entries).
    """
    points = np.asarray(points, dtype=float)
    batch = points.shape[:-1]
    points = points.reshape(-1, points.shape[-1])
    slices = dimensions(data)
    if points.shape[-1] != slices["lambda_z"].stop:
        raise ValueError(f"points have {points.shape[-1]} coordinates, the program "
                         f"{slices['lambda_z'].stop}")
    d = int(data["d"])
    means = np.asarray(data["mean_contrast"], dtype=float).reshape(-1, d)
    noise_scale = np.asarray(data["noise_scale"], dtype=float).reshape(-1, d, d)
    noise_dof = np.asarray(data["noise_dof"], dtype=float)
    n_points, q = points.shape[0], means.shape[0]

    # the constrained parameters and the Jacobians of Stan's transforms
    sigma0, target = bounded(points[:, slices["sigma0"]][:, 0], 0.0, data["sigma0_upper"])
    rows, cols, diagonal = bartlett_layout(d)
    log_diagonal = points[:, slices["shape"]][:, diagonal]
    target = target + log_diagonal.sum(axis=-1)
    shape_lower = points[:, slices["shape"]][:, ~diagonal]
    log_nu_minus_one = points[:, slices["log_nu_minus_one"]][:, 0]
    kappa_z, lambda_z = points[:, slices["kappa_z"]], points[:, slices["lambda_z"]]
    nu = 1 + np.exp(log_nu_minus_one)

    # Sigma0's Cholesky factor B from the Bartlett factor A (device 7)
    shape = np.zeros((n_points, d, d))
    shape[:, rows[diagonal], cols[diagonal]] = np.exp(log_diagonal)
    shape[:, rows[~diagonal], cols[~diagonal]] = shape_lower
    squares = np.sum(shape ** 2, axis=(-2, -1))
    B = (sigma0 * np.sqrt(d / squares))[:, None, None] * shape

    # log(kappa_i) and log(lambda_i) as z-scores of their priors' moments (devices 3, 5)
    kappa_centre, kappa_scale, kappa_constants = log_gamma_moments(0.5 * noise_dof)
    log_kappa = kappa_centre + kappa_scale * kappa_z
    mixing = (np.sum(kappa_constants + np.log(kappa_scale))
              - 0.5 * np.sum(noise_dof * (np.expm1(log_kappa) - log_kappa), axis=-1))
    lambda_centre, lambda_scale, lambda_constant = log_gamma_moments(0.5 * nu)
    log_lambda = lambda_centre[:, None] + lambda_scale[:, None] * lambda_z
    mixing = mixing + q * (lambda_constant + np.log(lambda_scale)) \
        - 0.5 * nu * np.sum(np.expm1(log_lambda) - log_lambda, axis=-1)

    # m_i ~ N(delta0, T_i) with delta_i and delta0 integrated out (device 4)
    population = B @ np.swapaxes(B, -1, -2)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        covariance = (np.exp(-log_kappa)[..., None, None] * noise_scale
                      + np.exp(-log_lambda)[..., None, None] * population[:, None])
        finite = np.all(np.isfinite(covariance), axis=(1, 2, 3))
        covariance[~finite] = np.eye(d)
        cholesky, valid = _cholesky(covariance)
        valid &= finite
        log_det = 2 * np.sum(np.log(np.diagonal(cholesky, axis1=-2, axis2=-1)), axis=(1, 2))
        identity = np.broadcast_to(np.eye(d), cholesky.shape)
        inverse_factor = np.linalg.solve(cholesky, identity)              # L_i^-1
        precisions = np.swapaxes(inverse_factor, -1, -2) @ inverse_factor  # T_i^-1
        projected = np.einsum("pnij,nj->pni", precisions, means)
        precision = precisions.sum(axis=1)
        precision = 0.5 * (precision + np.swapaxes(precision, -1, -2))
        weighted = projected.sum(axis=1)
        quadratic = np.einsum("ni,pni->p", means, projected)
        centre = np.linalg.solve(precision, weighted[..., None])[..., 0]
        _, precision_log_det = np.linalg.slogdet(precision)
        marginal = -0.5 * (log_det + precision_log_det + quadratic
                           - np.sum(weighted * centre, axis=-1))

        # priors: W = A A' ~ Wishart(d + 1, I) by its Bartlett factor (device 7) and
        # log(nu - 1) tabulated (device 6); sigma0 uniform adds nothing
        bartlett_dof = d + 2 - np.arange(1, d + 1)
        target = target + (np.sum((bartlett_dof - 1) * log_diagonal, axis=-1)
                           - 0.5 * np.sum(np.exp(2 * log_diagonal), axis=-1)
                           - 0.5 * np.sum(shape_lower ** 2, axis=-1))
        target = target + tabulated(log_nu_minus_one, data["nu_prior_start"],
                                    data["nu_prior_step"], data["nu_prior_log_density"],
                                    data["nu_prior_slope"])
        total = target + mixing + marginal
    total = np.where(valid & np.isfinite(total), total, -np.inf)
    return total.reshape(batch)


def _cholesky(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cholesky factors of (..., d, d) matrices and which of them are positive definite (the
    identity stands in for the others, so that one bad point does not fail a batch)."""
    try:
        return np.linalg.cholesky(matrices), np.ones(matrices.shape[0], dtype=bool)
    except np.linalg.LinAlgError:
        factors = np.empty_like(matrices)
        valid = np.ones(matrices.shape[0], dtype=bool)
        for p, point in enumerate(matrices):
            try:
                factors[p] = np.linalg.cholesky(point)
            except np.linalg.LinAlgError:
                factors[p] = np.eye(matrices.shape[-1])
                valid[p] = False
        return factors, valid
