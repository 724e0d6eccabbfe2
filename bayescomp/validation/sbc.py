"""Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari & Gelman 2018).

If parameters are drawn from the prior, data from the likelihood given them, and the
program's posterior is sampled correctly, then the rank of the true value among L
independent posterior draws is uniform on ``0..L``. A bug in the program (a wrong
likelihood, a missing Jacobian, a prior other than the one meant) or a sampler that does
not reach the posterior bends the histogram of ranks. This module runs that check on the
two Stan programs of the package, with :func:`bayescomp.sampling.sample`.

Hierarchical program (:func:`sbc_hierarchical`)
    The package's priors are data dependent (bounds scaled by the data's spread); SBC
    needs one fixed prior, so :class:`FixedPrior` gives FIXED bounds on the unit scale
    the program works on: ``delta0 ~ U(-1, 1)``, ``sigma0 ~ U(0, 1)``,
    ``sigma_i ~ U(0.1, 2)``, ``alpha ~ U(0.5, 5)``, ``beta ~ U(0.05, 0.15)`` (the paper's
    bounds of the Gamma), ``nu - 1 ~ Gamma(alpha, beta)`` and
    ``delta_i ~ t(nu, delta0, sigma0)``. The likelihood depends on the differences only
    through each dataset's ``n_i``, ``rho_i``, mean ``m_i`` and sum of squared deviations
    ``S_i``, so those are simulated directly: ``m_i ~ N(delta_i, sigma_i^2 (1 + (n_i - 1)
    rho_i) / n_i)`` and ``S_i ~ sigma_i^2 (1 - rho_i) chi2_{n_i - 1}``, independent (the
    mean lies along the eigenvector 1 of the compound-symmetric covariance, S on its
    orthogonal complement). Ranked: ``delta0``, ``sigma0``, ``nu``, ``delta_1`` and
    ``sigma_1``. The program integrates every delta_i out and delta_1 is drawn afterwards from
    its normal conditional (:func:`bayescomp.models.hierarchical_program.delta_conditional`),
    which the rank of delta_1 checks; the floor 0.1 of sigma_i is near the spread of some
    datasets.
    The data dict is built here, so a new data variable of the program needs a line in
    this module.

Correlated program (:func:`sbc_correlated`)
    Its prior ``p(mu, sigma) ~ 1/sigma`` is improper, so there is no prior to draw from.
    What is calibrated instead is exact for ANY distribution of the true (mu, sigma): under
    this (right-Haar) prior the posterior of ``mu`` is the Student-t of the correlated
    t-test, and ``(m - mu) / scale`` has that same Student-t distribution given (mu, sigma);
    likewise ``S / (sigma^2 (1 - rho))`` is chi2_{n-1} both a posteriori and a priori. So
    the posterior quantile of the true mu (and of the true sigma) is uniform whatever
    (mu, sigma) is: frequentist matching makes the SBC identity hold pointwise. The
    simulation draws ``mu ~ N(0, 1)`` and ``sigma ~ U(0.5, 2)`` (any proper choice works)
    and ranks the true mu and sigma among the program's draws, which checks the program and
    the backend. :func:`correlated_quantiles` does the same for the closed form of
    :mod:`bayescomp.models.correlated` from raw simulated differences (no Stan, thousands of
    replications per second).

Draws are thinned to ``n_draws`` = L equally spaced draws of all chains, so that they are
roughly independent (Talts et al., Section 5: autocorrelated draws bend the histogram
by themselves); each replication records the smallest bulk ESS of the ranked parameters,
and :meth:`SBCResult.summary` says how many had an ESS below L.

The ranks are returned as an :class:`~bayescomp.validation.sbc_ranks.SBCResult`, whose
uniformity tests are in :mod:`bayescomp.validation.sbc_ranks`. A deliberately wrong fit (``fit_prior`` other than the simulation's, or
``fit_rho`` other than the true rho) shows the check has power.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import arviz as az
import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats

from bayescomp import sampling
from bayescomp.models import nu_prior
from bayescomp.models.correlated import CorrelatedPosterior
from bayescomp.models.hierarchical_program import (coordinates, delta_conditional,
                                                   draw_delta, initial_values,
                                                   sampled_scales)
from bayescomp.validation.sbc_ranks import SBCResult
from bayescomp.validation.simulate import compound_symmetric

__all__ = ["FixedPrior", "sbc_hierarchical", "sbc_correlated", "correlated_quantiles"]


@dataclass(frozen=True)
class FixedPrior:
    """Fixed prior bounds of the hierarchical program on its unit scale, for simulation."""

    delta0_bound: float = 1.0
    sigma0_upper: float = 1.0
    sigma_lower: float = 0.1
    sigma_upper: float = 2.0
    alpha: tuple[float, float] = (0.5, 5.0)
    beta: tuple[float, float] = (0.05, 0.15)

    def __post_init__(self):
        if not (self.delta0_bound > 0 and self.sigma0_upper > 0
                and 0 < self.sigma_lower < self.sigma_upper):
            raise ValueError(f"invalid bounds: {self}")
        for name in ("alpha", "beta"):
            low, high = getattr(self, name)
            if not 0 < low < high:
                raise ValueError(f"{name} bounds must satisfy 0 < low < high, got {(low, high)}")

    def draw(self, n_datasets: int, rng) -> dict:
        """Parameters drawn from the prior (delta_i through the Student-t)."""
        alpha = rng.uniform(*self.alpha)
        beta = rng.uniform(*self.beta)
        nu = 1.0 + rng.gamma(alpha, 1.0 / beta)          # numpy's gamma takes the scale
        delta0 = rng.uniform(-self.delta0_bound, self.delta0_bound)
        sigma0 = rng.uniform(0.0, self.sigma0_upper)
        delta = delta0 + sigma0 * rng.standard_t(nu, n_datasets)
        sigma = rng.uniform(self.sigma_lower, self.sigma_upper, n_datasets)
        return dict(alpha=alpha, beta=beta, nu=nu, delta0=delta0, sigma0=sigma0,
                    delta=delta, sigma=sigma)

    def stan_data(self, n_datasets: int) -> dict:
        return dict(delta0_bound=self.delta0_bound, sigma0_upper=self.sigma0_upper,
                    sigma_lower=[self.sigma_lower] * n_datasets, sigma_upper=self.sigma_upper,
                    **nu_prior.stan_data(self.alpha, self.beta))


# --------------------------------------------------------------------------- fitting

def _thin(values: np.ndarray, n_draws: int) -> np.ndarray:
    """``n_draws`` equally spaced draws of the (chain, draw) array, chains concatenated."""
    flat = np.asarray(values).reshape(-1)
    if flat.size < n_draws:
        raise ValueError(f"{flat.size} posterior draws, fewer than n_draws = {n_draws}")
    return flat[np.linspace(0, flat.size - 1, n_draws).round().astype(int)]


def _seeds(seed, n: int) -> list[np.random.SeedSequence]:
    sequence = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return sequence.spawn(n)


def _run_parallel(tasks, n_jobs):
    """Run joblib tasks with threads (each fit samples in child processes, see compare.py)."""
    with sampling.threaded_fits():
        return Parallel(n_jobs=n_jobs, prefer="threads")(tasks)


def _hierarchical_replication(sequence, prior: FixedPrior, fit_prior: FixedPrior, n_datasets,
                              n_scores, rho, fit_rho, n_draws, sample_options):
    rng = np.random.default_rng(sequence)
    truth = prior.draw(n_datasets, rng)
    n = np.full(n_datasets, n_scores)
    rho_vec = np.full(n_datasets, rho)
    variance = truth["sigma"] ** 2
    means = rng.normal(truth["delta"], np.sqrt(variance * (1 + (n - 1) * rho_vec) / n))
    ss = variance * (1 - rho_vec) * rng.chisquare(n - 1)
    fit_rho_vec = np.full(n_datasets, rho if fit_rho is None else fit_rho)
    stan_prior = fit_prior.stan_data(n_datasets)
    data = dict(n_datasets=n_datasets, n_scores=n.tolist(), rho=fit_rho_vec.tolist(),
                mean_diff=means.tolist(), ss=ss.tolist(), population=1, **stan_prior)
    data.update(coordinates(data))
    seed = sampling.seeds.stan_seed(sequence)
    start = time.perf_counter()
    inits = initial_values(data, sample_options.get("chains", 4),
                           sampling.Seeds(seed).generator("initial_values"))
    idata = sampling.sample("hierarchical", data, seed=seed, inits=inits,
                            **sample_options)
    seconds = time.perf_counter() - start
    post = idata.posterior
    nu, sigma, log_lambda = sampled_scales(post, data)
    delta = draw_delta(*delta_conditional(post["delta0"].values, post["sigma0"].values, sigma,
                                          log_lambda, data), rng)
    draws = {"delta0": post["delta0"].values, "sigma0": post["sigma0"].values,
             "nu": nu, "delta_1": delta[:, :, 0], "sigma_1": sigma[:, :, 0]}
    true = {"delta0": truth["delta0"], "sigma0": truth["sigma0"], "nu": truth["nu"],
            "delta_1": truth["delta"][0], "sigma_1": truth["sigma"][0]}
    ranks = {k: int(np.sum(_thin(v, n_draws) < true[k])) for k, v in draws.items()}
    ess = min(float(az.ess(np.asarray(v))) for v in draws.values())
    fit = dict(seed=seed, divergences=int(idata.sample_stats["diverging"].sum()),
               min_ess=ess, seconds=seconds)
    return ranks, true, fit


def sbc_hierarchical(n_replications: int = 100, *, prior: FixedPrior | None = None,
                     fit_prior: FixedPrior | None = None, n_datasets: int = 8,
                     n_scores: int = 10, rho: float = 0.1, fit_rho: float | None = None,
                     n_draws: int = 99, chains: int = 2, iter_warmup: int = 500,
                     iter_sampling: int = 500, adapt_delta: float = 0.95,
                     max_treedepth: int = 10, backend: str = "auto", seed=None,
                     n_jobs=None) -> SBCResult:
    """SBC of ``stan/hierarchical.stan`` with fixed prior bounds (see the module notes).

    Parameters
    ----------
    n_replications : int
        Prior draws, each simulated and fitted once.
    prior : FixedPrior
        The prior the parameters are drawn from (default :class:`FixedPrior`).
    fit_prior : FixedPrior, optional
        The prior the program is given; default ``prior``. Another one is a deliberately
        wrong model, which the ranks should expose.
    n_datasets, n_scores, rho : int, int, float
        Shape of each simulated collection (every dataset alike).
    fit_rho : float, optional
        The correlation the program is told; default the true ``rho``.
    n_draws : int
        L: each rank is among L equally spaced draws of ``chains x iter_sampling``.
    chains, iter_warmup, iter_sampling, adapt_delta, max_treedepth, backend
        Passed to :func:`bayescomp.sampling.sample`.
    seed : int or SeedSequence, optional
        Replication r uses the r-th child of ``SeedSequence(seed)`` for its simulation and
        its Stan seed, so results do not depend on ``n_jobs``.
    n_jobs : int, optional
        Fits run as joblib tasks (threads unless a ``joblib.parallel_backend`` says
        otherwise), like :func:`bayescomp.models.compare.compare_all`.

    Returns
    -------
    SBCResult
        Ranks of ``delta0``, ``sigma0``, ``nu``, ``delta_1`` and ``sigma_1``.
    """
    prior = prior or FixedPrior()
    fit_prior = fit_prior or prior
    if chains * iter_sampling < n_draws:
        raise ValueError(f"chains x iter_sampling = {chains * iter_sampling} < n_draws = {n_draws}")
    sample_options = dict(backend=backend, chains=chains, iter_warmup=iter_warmup,
                          iter_sampling=iter_sampling, adapt_delta=adapt_delta,
                          max_treedepth=max_treedepth)
    children = _seeds(seed, n_replications)
    outputs = _run_parallel(
        (delayed(_hierarchical_replication)(s, prior, fit_prior, n_datasets, n_scores, rho,
                                            fit_rho, n_draws, sample_options)
         for s in children), n_jobs)
    wrong = []
    if fit_prior != prior:
        wrong.append(f"fit prior {asdict(fit_prior)} differs from the simulation's")
    if fit_rho is not None and fit_rho != rho:
        wrong.append(f"fitted with rho = {fit_rho}, simulated with rho = {rho}")
    description = (f"{n_datasets} datasets x {n_scores} scores, rho {rho}; prior "
                   f"{asdict(prior)}" + ("; DELIBERATELY WRONG: " + "; ".join(wrong) if wrong else ""))
    return _result("hierarchical", outputs, n_draws, dict(
        sample_options, n_replications=n_replications, prior=prior, fit_prior=fit_prior,
        n_datasets=n_datasets, n_scores=n_scores, rho=rho, fit_rho=fit_rho, seed=seed,
        description=description))


def _result(program, outputs, n_draws, settings) -> SBCResult:
    ranks, truth, fits = zip(*outputs)
    return SBCResult(program, pd.DataFrame(list(ranks)), n_draws, pd.DataFrame(list(fits)),
                     pd.DataFrame(list(truth)), settings)


def _correlated_replication(sequence, n_scores, rho, fit_rho, mu_sd, sigma_range, n_draws,
                            sample_options):
    rng = np.random.default_rng(sequence)
    mu = rng.normal(0.0, mu_sd)
    sigma = rng.uniform(*sigma_range)
    mean = rng.normal(mu, sigma * np.sqrt((1 + (n_scores - 1) * rho) / n_scores))
    ss = sigma ** 2 * (1 - rho) * rng.chisquare(n_scores - 1)
    seed = sampling.seeds.stan_seed(sequence)
    data = dict(n=n_scores, rho=rho if fit_rho is None else fit_rho, mean_diff=mean, ss=ss)
    start = time.perf_counter()
    idata = sampling.sample("correlated", data, seed=seed, **sample_options)
    seconds = time.perf_counter() - start
    post = idata.posterior
    draws = {"mu": post["mu"].values, "sigma": post["sigma"].values}
    true = {"mu": mu, "sigma": sigma}
    ranks = {k: int(np.sum(_thin(v, n_draws) < true[k])) for k, v in draws.items()}
    fit = dict(seed=seed, divergences=int(idata.sample_stats["diverging"].sum()),
               min_ess=min(float(az.ess(v)) for v in draws.values()), seconds=seconds)
    return ranks, true, fit


def sbc_correlated(n_replications: int = 100, *, n_scores: int = 10, rho: float = 0.1,
                   fit_rho: float | None = None, mu_sd: float = 1.0,
                   sigma_range: tuple[float, float] = (0.5, 2.0), n_draws: int = 99,
                   chains: int = 2, iter_warmup: int = 300, iter_sampling: int = 300,
                   backend: str = "auto", seed=None, n_jobs=None) -> SBCResult:
    """Calibration of ``stan/correlated.stan`` by the exact pivot (see the module notes).

    ``mu ~ N(0, mu_sd)`` and ``sigma ~ U(sigma_range)`` only choose where the truth lies:
    under the program's matching prior the ranks of the true mu and sigma are uniform for
    any such choice. ``fit_rho`` other than ``rho`` gives a deliberately wrong model
    (``fit_rho = 0`` is the naive t-test that ignores the overlap of training sets).
    Other parameters as in :func:`sbc_hierarchical`.
    """
    if chains * iter_sampling < n_draws:
        raise ValueError(f"chains x iter_sampling = {chains * iter_sampling} < n_draws = {n_draws}")
    sample_options = dict(backend=backend, chains=chains, iter_warmup=iter_warmup,
                          iter_sampling=iter_sampling)
    outputs = _run_parallel(
        (delayed(_correlated_replication)(s, n_scores, rho, fit_rho, mu_sd, sigma_range,
                                          n_draws, sample_options)
         for s in _seeds(seed, n_replications)), n_jobs)
    description = f"{n_scores} scores, rho {rho}, mu ~ N(0, {mu_sd}), sigma ~ U{tuple(sigma_range)}"
    if fit_rho is not None and fit_rho != rho:
        description += f"; DELIBERATELY WRONG: fitted with rho = {fit_rho}"
    return _result("correlated", outputs, n_draws, dict(
        sample_options, n_replications=n_replications, n_scores=n_scores, rho=rho,
        fit_rho=fit_rho, seed=seed, description=description))


def correlated_quantiles(n_replications: int = 10_000, *, n_scores: int = 100,
                         rho: float = 0.1, fit_rho: float | None = None, seed=None) -> dict:
    """Posterior quantile of the true mean under the closed-form correlated t-test.

    Raw compound-symmetric differences are simulated (``mu ~ N(0, 1)``,
    ``sigma ~ U(0.5, 2)``), :class:`bayescomp.models.correlated.CorrelatedPosterior` is built from
    them, and its CDF at the true mu should be uniform (exactly, see the module notes).

    Returns
    -------
    dict
        ``quantiles`` (array) and the Kolmogorov-Smirnov ``statistic`` and ``p_value``
        against U(0, 1).
    """
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.0, 1.0, n_replications)
    sigma = rng.uniform(0.5, 2.0, n_replications)
    differences = compound_symmetric(mu, sigma, n_scores, rho, rng)
    used = rho if fit_rho is None else fit_rho
    quantiles = np.array([CorrelatedPosterior.from_differences(x, used).distribution.cdf(m)
                          for x, m in zip(differences, mu)])
    ks = stats.kstest(quantiles, "uniform")
    return dict(quantiles=quantiles, statistic=float(ks.statistic), p_value=float(ks.pvalue))
