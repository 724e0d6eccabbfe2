"""The adapter between the scores and ``stan/joint.stan``: coordinates, data, start, post-draws.

Every split's K scores ``y`` enter as ``z = G'y`` with ``G = sqrt(2) H`` and ``H`` the
orthonormal Helmert basis of the sum-zero subspace of R^K (:func:`contrast_basis`): the
difference of algorithms a and b is ``(e_a - e_b)' G z / 2`` (:func:`pair_vectors`), and at
K = 2, ``z`` is the paper's difference. Each dataset's fold noise is integrated out in
closed form (the program's device 1): its mean contrast ``m_i`` given delta_i is a
multivariate Student-t with ``n_i - 2`` degrees of freedom, whatever K, and scale
``Psi_i = a_i S'_i / (b_i (n_i - 2))``; this module computes ``m_i``, ``Psi_i`` and
the bound of sigma0, on a unit scale, and turns the draws back into the units of the scores.
"""
from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np

from bayescomp.data.resolution import (difference_ss, floored_datasets, floored_masks,
                                       steps)
from bayescomp.data.scores import Scores
from bayescomp.exceptions import ConstantDifferencesWarning
from bayescomp.formatting import first_few
from bayescomp.models import nu_prior

PROGRAM = "joint"
REFERENCE_PROGRAM = "joint_reference"


def contrast_basis(k: int) -> np.ndarray:
    """``G = sqrt(2) H`` (k x (k - 1)): H the orthonormal Helmert basis of the sum-zero
    subspace of R^k (column j contrasts the first j algorithms with the next)."""
    if k < 2:
        raise ValueError(f"need at least 2 algorithms, got {k}")
    basis = np.zeros((k, k - 1))
    for j in range(1, k):
        basis[:j, j - 1] = 1.0
        basis[j, j - 1] = -float(j)
        basis[:, j - 1] /= np.sqrt(j * (j + 1))
    return np.sqrt(2.0) * basis


def pair_vectors(k: int) -> tuple[list[tuple[int, int]], np.ndarray]:
    """The pairs (a, b), a < b, and (pairs x d) the vectors g_ab = G'(e_a - e_b) / 2 with
    ``delta_ab = g_ab . z`` (at K = 2: g = 1)."""
    basis = contrast_basis(k)
    pairs = list(combinations(range(k), 2))
    return pairs, np.array([(basis[a] - basis[b]) / 2 for a, b in pairs])


def _statistics(values: np.ndarray, basis: np.ndarray):
    z = basis.T @ values                       # d x n
    mean = z.mean(axis=1)
    centred = z - mean[:, None]
    return z, mean, centred @ centred.T


def floored_pairs(scores: Scores, floor: np.ndarray) -> np.ndarray:
    """(datasets x pairs, in :func:`pair_vectors`' order) whether the floor, not the splits,
    sets the noise of that pair's differences on that dataset: the soft floor of the
    program's device 2, as the pairwise model's floor sets sigma_i; the same rule
    (:func:`bayescomp.data.resolution.floored_masks` on
    :func:`~bayescomp.data.resolution.difference_ss`). A
    :class:`ConstantDifferencesWarning` names every pair with such datasets, and them."""
    names = scores.algorithms
    pairs = list(combinations(range(len(names)), 2))
    floored = np.zeros((len(scores), len(pairs)), dtype=bool)
    for p, (a, b) in enumerate(pairs):
        ss = difference_ss(scores.datasets, a, b)
        masks = floored_masks(ss, scores.n_scores, scores.rho, floor)
        floored[:, p] = np.logical_or(*masks)
        said = floored_datasets(scores.dataset_names, *masks)
        if said:
            warnings.warn(
                f"{names[a]} - {names[b]} {said}; the joint model's noise there is bounded "
                "below by the scores' resolution / sqrt(12) (see bayescomp.compare_many)",
                ConstantDifferencesWarning, stacklevel=4)
    return floored


def prepare(scores: Scores, prior) -> tuple[dict, float]:
    """Stan data of ``stan/joint.stan`` on a unit scale, and that scale (in score units).

    The scale is the mean over datasets of the splits' contrast standard deviation
    ``sqrt(tr(S_i) / (n_i d))``, at least the floor (at K = 2 the pairwise program's).
    ``prior`` is a :class:`bayescomp.models.hierarchical_prior.HierarchicalPrior` (its
    ``sigma_factor``, ``sigma0_upper``, ``nu``, ``alpha``, ``beta``; delta0 is flat, so
    ``delta0_bound`` is not used).
    Also holds, for the reference program and the caller, ``n_scores``, ``rho``,
    ``scatter``, ``floor_sd``, ``noise_scale`` (Psi_i) and ``floored`` (datasets x pairs,
    :func:`floored_pairs`).
    """
    k = len(scores.algorithms)
    d = k - 1
    basis = contrast_basis(k)
    n = scores.n_scores.astype(int)
    short = [name for name, size in zip(scores.dataset_names, n) if size < 3]
    if short:
        # named as the warnings name many datasets
        raise ValueError(f"the joint model needs at least 3 splits on every dataset (its "
                         f"noise has n_i - 2 degrees of freedom); {len(short)} of {len(n)} "
                         f"have 2 ({first_few([repr(name) for name in short])}); all-pairs "
                         "compares two algorithms on any number")
    rho = scores.rho.astype(float)
    step = steps(scores.datasets)       # each dataset's, from every algorithm's scores
    if np.isnan(step).all():
        raise ValueError("every score is the same number on every dataset: nothing to compare")
    floor = step / np.sqrt(12)
    floored = floored_pairs(scores, floor)
    stats = [_statistics(ds.values, basis) for ds in scores.datasets]
    means = np.array([s[1] for s in stats])
    scatter = np.array([s[2] for s in stats])
    spread = np.sqrt(np.trace(scatter, axis1=1, axis2=2) / (n * d))
    scale = float(np.maximum(spread, floor).mean())
    a = rho + (1 - rho) / n
    b = 1 - rho
    # n_i - 2, not the n_i - 1 - d of the prior |Sigma_i|^(-d/2): then each contrast's
    # noise is the pairwise model's whatever K (the program's device 1)
    dof = n - 2
    regularised = scatter + ((n - 1) * b * floor ** 2)[:, None, None] * np.eye(d)
    psi = (a / (b * dof))[:, None, None] * regularised
    among = np.sqrt(np.trace(np.atleast_2d(np.cov(means.T))) / d) if len(means) > 1 else 0.0
    among = among if among > 0 else scale
    sigma0_upper = prior.sigma0_upper or prior.sigma_factor * among
    data = dict(
        n_datasets=len(scores), d=d, mean_contrast=means / scale,
        noise_dof=dof.astype(float),
        sigma0_upper=float(sigma0_upper / scale),
        **nu_prior.stan_data_for(prior.nu, prior.alpha, prior.beta))
    extra = dict(n_scores=n, rho=rho, scatter=scatter / scale ** 2, floor_sd=floor / scale,
                 noise_scale=psi / scale ** 2, floored=floored)
    return {**data, **extra}, scale


def stan_data(data: dict, program: str = PROGRAM, prior=None) -> dict:
    """The entries of ``data`` (:func:`prepare`) that ``program`` reads."""
    if program == PROGRAM:
        keys = ("n_datasets", "d", "mean_contrast", "noise_scale", "noise_dof", "sigma0_upper", "nu_prior_start", "nu_prior_step", "nu_prior_size",
                "nu_prior_log_density", "nu_prior_slope")
        return {key: data[key] for key in keys}
    keys = ("n_datasets", "d", "n_scores", "rho", "mean_contrast", "scatter", "floor_sd",
            "sigma0_upper")
    return dict({key: data[key] for key in keys}, alpha_lower=prior.alpha[0],
                alpha_upper=prior.alpha[1], beta_lower=prior.beta[0], beta_upper=prior.beta[1])


def log_likelihood(mean_contrast, noise_scale, dof, delta) -> np.ndarray:
    """log p(m_i | delta_i) of every dataset, Sigma_i integrated out (the program's device 1,
    constants included): the multivariate Student-t with ``dof`` = n_i - 2 degrees of
    freedom, location delta_i and scale matrix Psi_i (``noise_scale``)."""
    from scipy import special

    m, psi, delta = (np.asarray(v, dtype=float) for v in (mean_contrast, noise_scale, delta))
    dof = np.asarray(dof, dtype=float)
    d = m.shape[-1]
    chol = np.linalg.cholesky(psi)
    residual = np.linalg.solve(chol, (m - delta)[..., None])[..., 0]
    distance2 = np.sum(residual ** 2, axis=-1)
    log_det = np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return (special.gammaln((dof + d) / 2) - special.gammaln(dof / 2) - d / 2 * np.log(dof * np.pi)
            - log_det - (dof + d) / 2 * np.log1p(distance2 / dof))


def _population_guess(data: dict) -> tuple[np.ndarray, np.ndarray]:
    """The population covariance as the data suggest it, in its eigenvectors: the means'
    covariance less the mean noise along each eigenvector, floored at 5% of the mean noise
    variance; (values in ascending order, vectors as columns, each with its largest entry
    positive so that the choice does not rest on the linear algebra library's signs)."""
    d, q = data["d"], data["n_datasets"]
    means = np.asarray(data["mean_contrast"], dtype=float)
    noise = np.asarray(data["noise_scale"], dtype=float).mean(axis=0)
    covariance = np.cov(means.T).reshape(d, d) if q > 1 else np.eye(d)
    values, vectors = np.linalg.eigh(covariance)
    floor = 0.05 * max(float(np.trace(noise)) / d, 1e-12)
    noise_share = np.einsum("ki,kl,li->i", vectors, noise, vectors)
    values = np.maximum(values - noise_share, floor)
    order = np.argsort(values, kind="stable")
    vectors = vectors[:, order]
    largest = vectors[np.argmax(np.abs(vectors), axis=0), np.arange(d)]
    return values[order], vectors * np.sign(largest)


def sampling_rotation(data: dict) -> np.ndarray:
    """The orthogonal d x d matrix V whose columns are the principal directions of the
    population covariance as the data suggest it, the narrowest first: the program samples
    the contrasts ``V'z`` (:func:`rotate`), and :func:`bayescomp.compare_many` turns the
    draws back.

    Why: the model is invariant under z -> R z (the program's header), so the posterior is
    the same in any orthonormal coordinates, but its geometry is not. A near-identical pair
    gives the population covariance a nearly null direction; the Bartlett factor of the
    covariance then lies near a subspace oblique to its coordinates, which a diagonal
    metric crosses with small steps (the tutorial's 5 x 54: step size 0.03, tree depth 7).
    Along the principal directions that subspace is a set of coordinates near 0 (step size
    0.08-0.11, tree depth 5-6; benchmarks/results/joint.md). At K = 2, V = 1.
    """
    return _population_guess(data)[1]


def rotate(data: dict, rotation: np.ndarray) -> dict:
    """``data`` (:func:`prepare`) in the contrasts ``V'z``, V = ``rotation``: every mean
    contrast, noise scale and (where present) scatter matrix rotated, and made symmetric to
    the bit (the product's two triangles may round apart: the program's Cholesky
    factorisations reject a matrix whose triangles differ by more than 1e-8, which far out
    in a warm-up, at entries of 1e9, rounding alone does); the rest unchanged."""
    v = np.asarray(rotation, dtype=float)
    rotated = dict(data, mean_contrast=np.asarray(data["mean_contrast"], dtype=float) @ v)
    for key in ("noise_scale", "scatter"):
        if key in data:
            product = np.einsum("ki,nkl,lj->nij", v, np.asarray(data[key], dtype=float), v)
            rotated[key] = 0.5 * (product + np.swapaxes(product, -1, -2))
    return rotated


def initial_values(data: dict, chains: int, rng: np.random.Generator) -> list[dict]:
    """Initial values per chain in the posterior's bulk: sigma0 and B from the means'
    covariance less the noise (so that a near-identical pair starts with its narrow
    population direction), log(nu - 1) in (0.5, 3.5), the z-scores in (-1, 1), the chains
    apart for R-hat."""
    d, q = data["d"], data["n_datasets"]
    values, vectors = _population_guess(data)
    target = (vectors * values) @ vectors.T
    sigma0 = float(np.sqrt(np.trace(target) / d))
    shape = np.linalg.cholesky(target / sigma0 ** 2)
    inits = []
    for _ in range(chains):
        start = min(sigma0 * np.exp(rng.uniform(-0.5, 0.5)), 0.5 * data["sigma0_upper"])
        factor = np.sqrt(d + 1) * shape
        factor[np.diag_indices(d)] *= np.exp(rng.uniform(-0.1, 0.1, d))
        factor[np.tril_indices(d, -1)] += rng.normal(0, 0.02, d * (d - 1) // 2)
        inits.append(dict(
            sigma0=float(start),
            shape=factor.tolist(),
            log_nu_minus_one=float(rng.uniform(0.5, 3.5)),
            kappa_z=rng.uniform(-1, 1, q).tolist(),
            lambda_z=rng.uniform(-1, 1, q).tolist()))
    return inits


def continuation_inits(fit, data: dict) -> list[dict]:
    """Each chain's last draw of ``fit`` (the engine's draws, in the sampled coordinates of
    ``data``) as initial values, so that a continued fit picks up where the chain stopped.
    sigma0 and the Bartlett factor's diagonal are nudged inside their bounds: a draw next
    to a bound can equal it in double precision, where Stan rejects an initial value."""
    margin = 1e-6
    upper = data["sigma0_upper"]
    inits = []
    for chain in range(fit.posterior.sizes["chain"]):
        last = fit.posterior.isel(chain=chain, draw=-1)
        factor = np.array(last["shape"].values, dtype=float).reshape(data["d"], data["d"])
        factor[np.diag_indices(data["d"])] = np.maximum(np.diag(factor), margin)
        inits.append(dict(
            sigma0=float(np.clip(float(last["sigma0"]), margin * upper, (1 - margin) * upper)),
            shape=factor.tolist(),
            log_nu_minus_one=float(last["log_nu_minus_one"]),
            kappa_z=np.ravel(last["kappa_z"].values).tolist(),
            lambda_z=np.ravel(last["lambda_z"].values).tolist()))
    return inits


def _conditional_terms(factor, log_kappa, log_lambda, data: dict) -> tuple:
    """What delta_i's normal conditional is made of, on the unit scale of ``data``: the
    means m_i (dataset, d), the noise scales Psi_i (dataset, d, d), lambda_i and kappa_i
    (..., dataset), the prior covariances S_i = F F' / lambda_i and S_i + N_i, N_i =
    Psi_i / kappa_i (..., dataset, d, d); F = ``factor`` (..., d, d)."""
    m = np.asarray(data["mean_contrast"], dtype=float)
    noise = np.asarray(data["noise_scale"], dtype=float)
    factor = np.asarray(factor, dtype=float)
    lam, kappa = np.exp(np.asarray(log_lambda)), np.exp(np.asarray(log_kappa))
    prior = (factor @ np.swapaxes(factor, -1, -2))[..., None, :, :] / lam[..., None, None]
    return m, noise, lam, kappa, prior, prior + noise / kappa[..., None, None]


def draw_delta(delta0, factor, log_kappa, log_lambda, data: dict, rng) -> np.ndarray:
    """Draws of every delta_i (chain, draw, dataset, d) from its normal conditional given
    the sampled parameters (the program's device 4): prior N(delta0, S_i), S_i = F F' /
    lambda_i with F = ``factor`` any square root of Sigma0 (triangular or not), and the mean
    m_i ~ N(delta_i, N_i), N_i = Psi_i / kappa_i. All on the unit scale of ``data``.

    By Matheron's rule: u from the prior and e from the noise, then
    delta_i = u + S_i (S_i + N_i)^-1 (m_i - u - e), an exact draw from the conditional.
    Why this form: it solves with S_i + N_i only, which the noise keeps positive definite,
    so a population covariance with a null direction (datasets whose every algorithm scores
    alike pin the contrasts to delta0 there) needs no inverse of F.
    """
    m, noise, lam, kappa, prior, total = _conditional_terms(factor, log_kappa, log_lambda, data)
    u = (np.asarray(delta0)[..., None, :]
         + np.einsum("csij,csnj->csni", np.asarray(factor, dtype=float),
                     rng.standard_normal(lam.shape + m.shape[-1:]))
         / np.sqrt(lam)[..., None])
    e = (np.einsum("nij,csnj->csni", np.linalg.cholesky(noise),
                   rng.standard_normal(lam.shape + m.shape[-1:]))
         / np.sqrt(kappa)[..., None])
    gain = np.linalg.solve(total, (m - u - e)[..., None])[..., 0]
    return u + np.einsum("csnij,csnj->csni", prior, gain)


def delta_pair_conditional(delta0, factor, log_kappa, log_lambda, data: dict,
                           vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centre and sd of every pair's delta_i (..., dataset, pair) under the normal
    conditional that :func:`draw_delta` draws from: with S_i = F F' / lambda_i and N_i =
    Psi_i / kappa_i, mean delta0 + S_i (S_i + N_i)^-1 (m_i - delta0) and covariance S_i -
    S_i (S_i + N_i)^-1 S_i, read along each pair's vector g (``vectors``, pair x d):
    g' mean and sqrt(g' covariance g). The arguments as :func:`draw_delta`'s, with any
    leading shape; unit scale. A population covariance with a null direction gives a
    variance of 0 there, which rounding can take below 0: held at the smallest positive
    double."""
    m, _, _, _, prior, total = _conditional_terms(factor, log_kappa, log_lambda, data)
    solved = np.linalg.solve(total, prior)                           # (S + N)^-1 S
    delta0 = np.asarray(delta0, dtype=float)[..., None, :]
    # (S + N)^-1 S transposed is S (S + N)^-1: both matrices are symmetric
    mean = delta0 + np.einsum("...ji,...j->...i", solved, m - delta0)
    covariance = prior - prior @ solved
    variance = np.einsum("pi,...ij,pj->...p", vectors, covariance, vectors)
    return mean @ vectors.T, np.sqrt(np.maximum(variance, np.finfo(float).tiny))


#: draws of delta0 per posterior draw (:func:`delta0_copies`): at 16 the Monte Carlo error of
#: the AutoML pairs' P(equivalent) near 0.95 is 0.0014, against 0.0034 with one and 0.0012
#: with its conditional probabilities in closed form (benchmarks/results/joint.md)
DELTA0_COPIES = 16


def delta0_copies(centre, precision, rotation: np.ndarray, copies: int,
                  rng: np.random.Generator) -> np.ndarray:
    """``copies`` draws of delta0 per posterior draw (chain, draw, copy, d) from its exact
    conditional given the sampled parameters, N(``centre``, ``precision``^-1) (the
    program's device 4; both chain, draw, ...), in the sampled coordinates ``V'z``, turned
    back to those of the data by ``rotation`` V (:func:`sampling_rotation`).

    Why several: the pair table, P(best) and the ranks are shares of delta0's draws, read
    from the same draws so that they cannot contradict each other. One draw of delta0 per
    posterior draw adds its conditional noise to their Monte Carlo error; many, drawn
    cheaply here, average most of it away while every share is still a share of draws.
    """
    centre = np.asarray(centre, dtype=float)
    factor = np.linalg.cholesky(np.asarray(precision, dtype=float))        # L, L L' = P
    noise = rng.standard_normal(centre.shape[:2] + (copies, centre.shape[-1]))
    # centre + L'^-1 e has covariance (L L')^-1 = P^-1
    spread = np.linalg.solve(np.swapaxes(factor, -1, -2)[:, :, None], noise[..., None])[..., 0]
    return (centre[:, :, None, :] + spread) @ np.asarray(rotation, dtype=float).T


def lower_factor(factor: np.ndarray) -> np.ndarray:
    """The lower-triangular L with a non-negative diagonal and L L' = F F' (F: ..., d, d),
    from the QR decomposition of F': Cholesky's factor of F F' where that is positive
    definite, and defined where it is only semi-definite (a population with a null
    direction), where Cholesky's decomposition fails on rounding."""
    _, upper = np.linalg.qr(np.swapaxes(np.asarray(factor, dtype=float), -1, -2))
    lower = np.swapaxes(upper, -1, -2)
    signs = np.sign(np.diagonal(lower, axis1=-2, axis2=-1))
    return lower * np.where(signs == 0, 1.0, signs)[..., None, :]


def algorithm_effects(delta0: np.ndarray, k: int) -> np.ndarray:
    """Each algorithm's population mean relative to the mean of all k, ``G delta0 / 2``
    (draws x d -> draws x k; the rows sum to 0)."""
    return delta0 @ contrast_basis(k).T / 2
