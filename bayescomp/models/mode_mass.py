"""The posterior mass of each mode of a posterior whose chains sit in separate modes, by
bridge sampling.

Chains that do not cross between modes say nothing about how much mass each mode holds: a
mode one chain of four found may hold 1% of the posterior or 99%. Each mode's mass is
estimated on its own, as the normalising constant of the posterior restricted to the mode,
by bridge sampling (Meng & Wong 1996, *Statistica Sinica* 6; the form of Gronau et al. 2017,
*J. Math. Psych.* 81, with the optimal bridge function and its iterative scheme) against a
normal fitted to the mode's draws:

- **The proposal.** A normal fitted to one half of each chain of the mode (the first half,
  then the second: two estimates), its correlation matrix shrunk towards the identity (the
  oracle approximating shrinkage of Chen, Wiesel, Eldar & Hero 2010) so that a few hundred
  draws support a hundred dimensions. The other half enters the bridge, so that the
  proposal is not fitted to the draws it is compared with (Overstall & Forster 2010).
- **The modes' regions.** The modes partition the space: a point belongs to the mode whose
  normal gives it the highest density. A mode's mass is the posterior's integral over its
  region, so a proposal draw that falls in another mode's region counts as zero, and the
  masses of the modes add up to the whole posterior's, not more. (Without this, the broad
  normal fitted to a heavy-tailed mode reaches into the near-normal mode and counts its
  mass twice.)
- **The error.** The relative mean squared error of Fruehwirth-Schnatter (2004), with the
  autocorrelation of the posterior draws through their effective size; and the two halves'
  estimates, which must agree within it.

The posterior's log density at the proposal draws comes from a function of the caller (for
the hierarchical model, :func:`bayescomp.models.hierarchical_density.log_density`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.special import logsumexp

from bayescomp.models.convergence import ess_bulk

#: draws of a half (of a mode's chains) per dimension needed to fit the proposal
DRAWS_PER_DIMENSION = 2
#: largest share of a mode's draws that may fall in another mode's region (beyond it the
#: modes are not separate, and a partition of the space cannot stand for them)
STRAY_SHARE = 0.05
#: iterations of the bridge's fixed-point scheme, and their convergence in log mass
ITERATIONS, TOLERANCE = 1000, 1e-10


def fit_normal(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and Cholesky factor of a normal fitted to ``draws`` (n, dimension): the sample
    covariance with its correlation shrunk towards the identity by the oracle approximating
    shrinkage (Chen et al. 2010), exact as n grows and well conditioned for n near the
    dimension."""
    n, dimension = draws.shape
    mean = draws.mean(axis=0)
    sd = draws.std(axis=0)
    # a coordinate the draws do not move (a bound it sits at) would make the normal singular
    sd = np.maximum(sd, 1e-9 * max(1.0, float(sd.max())))
    correlation = np.atleast_2d(np.corrcoef((draws - mean) / sd, rowvar=False))
    alpha = np.mean(correlation ** 2)
    denominator = (n + 1) * (alpha - 1 / dimension)
    shrinkage = 1.0 if denominator <= 0 else min((alpha + 1) / denominator, 1.0)
    shrunk = (1 - shrinkage) * correlation + shrinkage * np.eye(dimension)
    return mean, sd[:, None] * np.linalg.cholesky(shrunk)


def normal_logpdf(points: np.ndarray, mean: np.ndarray, chol: np.ndarray) -> np.ndarray:
    """Log density at ``points`` (n, dimension) of the normal with this mean and factor."""
    z = np.linalg.solve(chol, (points - mean).T)
    return (-0.5 * np.sum(z ** 2, axis=0) - np.sum(np.log(np.abs(np.diag(chol))))
            - 0.5 * mean.size * np.log(2 * np.pi))


def bridge(ratio_posterior: np.ndarray, ratio_proposal: np.ndarray,
           ess_posterior: float) -> tuple[float, float]:
    """The optimal bridge estimate of ``log Z`` and its relative root mean squared error.

    Parameters
    ----------
    ratio_posterior : ndarray (N1,)
        ``log p - log g`` at the posterior's draws (``p`` the unnormalised posterior, ``g``
        the normalised proposal).
    ratio_proposal : ndarray (N2,)
        The same at the proposal's draws; -inf where ``p`` is zero.
    ess_posterior : float
        Effective size of the posterior's draws (their autocorrelation enters the weights
        of the two samples and the error).
    """
    n_post, n_prop = ess_posterior, ratio_proposal.size
    log_s1, log_s2 = np.log(n_post / (n_post + n_prop)), np.log(n_prop / (n_post + n_prop))
    log_z = float(np.median(ratio_posterior))
    for _ in range(ITERATIONS):
        # Z = E_g[p / (s1 p + s2 Z g)] / E_p[g / (s1 p + s2 Z g)], all in logs
        top = logsumexp(ratio_proposal - np.logaddexp(log_s1 + ratio_proposal, log_s2 + log_z))
        bottom = logsumexp(-np.logaddexp(log_s1 + ratio_posterior, log_s2 + log_z))
        updated = float(top - np.log(n_prop) - bottom + np.log(ratio_posterior.size))
        converged = abs(updated - log_z) < TOLERANCE
        log_z = updated
        if converged:
            break
    # Fruehwirth-Schnatter's relative MSE: f1 at the proposal's draws, f2 at the posterior's
    f1 = np.exp(ratio_proposal - log_z - np.logaddexp(log_s1 + ratio_proposal - log_z, log_s2))
    f2 = np.exp(-np.logaddexp(log_s1 + ratio_posterior - log_z, log_s2))
    error2 = f1.var() / (n_prop * f1.mean() ** 2) + f2.var() / (n_post * f2.mean() ** 2)
    return log_z, float(np.sqrt(error2))


def log_masses(groups: list[tuple], unconstrained: np.ndarray,
               log_density: Callable[[np.ndarray], np.ndarray],
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Log posterior mass of each mode and its standard error; NaN where it cannot be had.

    Parameters
    ----------
    groups : list of tuple
        The chains of each mode.
    unconstrained : ndarray (chain, draw, dimension)
        The draws on the scale where ``log_density`` is the posterior's log density.
    log_density : callable
        Unnormalised log density at points (n, dimension), the same constant everywhere.
    rng : numpy.random.Generator
        Draws the proposals.

    Returns
    -------
    log_mass, error : ndarray (modes,)
        The mean of the two halves' estimates (the proposal fitted to one half of each
        chain, the bridge through the other), and the larger of the bridge's error and the
        halves' disagreement. NaN for a mode whose halves hold fewer than
        :data:`DRAWS_PER_DIMENSION` draws per dimension, or more than :data:`STRAY_SHARE`
        of whose draws fall in another mode's region.
    """
    n_chains, n_draws, dimension = unconstrained.shape
    half = n_draws // 2
    estimates = np.full((2, len(groups)), np.nan)
    errors = np.full((2, len(groups)), np.nan)
    for split, (fitted, bridged) in enumerate([(slice(None, half), slice(half, 2 * half)),
                                                (slice(half, 2 * half), slice(None, half))]):
        parts = [unconstrained[list(group)][:, fitted].reshape(-1, dimension) for group in groups]
        if min(p.shape[0] for p in parts) < DRAWS_PER_DIMENSION * dimension:
            return np.full(len(groups), np.nan), np.full(len(groups), np.nan)
        normals = [fit_normal(p) for p in parts]

        def normal_densities(points):
            """Every mode's normal at ``points`` (modes, n): the region of a point is the
            mode whose normal is highest there."""
            return np.array([normal_logpdf(points, *normal) for normal in normals])

        for k, (group, normal) in enumerate(zip(groups, normals)):
            posterior = unconstrained[list(group)][:, bridged]
            flat = posterior.reshape(-1, dimension)
            densities = normal_densities(flat)
            own = np.argmax(densities, axis=0) == k
            if 1 - own.mean() > STRAY_SHARE:
                continue
            ratio_posterior = log_density(flat) - densities[k]
            # the autocorrelation of the draws, through the ratios the bridge averages
            ess = min(float(ess_bulk(ratio_posterior.reshape(posterior.shape[:2]))), own.size)
            proposal = normal[0] + rng.standard_normal(flat.shape) @ normal[1].T
            densities = normal_densities(proposal)
            ratio_proposal = np.where(np.argmax(densities, axis=0) == k,
                                      log_density(proposal) - densities[k], -np.inf)
            estimates[split, k], errors[split, k] = bridge(ratio_posterior[own], ratio_proposal,
                                                           ess)
    log_mass = estimates.mean(axis=0)
    error = np.maximum(np.sqrt(np.mean(errors ** 2, axis=0) / 2),
                       np.abs(estimates[0] - estimates[1]) / 2)
    return log_mass, error
