"""Simulation-based calibration of ``stan/joint.stan``, the joint model of K algorithms.

The program's own generative model is simulated and fitted, as :mod:`bayescomp.validation.sbc`
does for the pairwise program, with two points where the joint model needs care:

Fold noise (the program's data)
    Each dataset's noise covariance is integrated out before sampling (device 1 of the
    program), so the program reads each dataset's mean contrast ``m_i`` with a known scale
    matrix ``Psi_i`` and degrees of freedom ``n_i - 2``: ``m_i | delta_i ~ MVt(n_i - 2,
    delta_i, Psi_i)``. That is a proper model of ``m_i`` given ``Psi_i``, so the
    simulation fixes ``Psi_i`` (a scaled Wishart draw, ``noise_sd`` its typical standard
    deviation) and draws ``m_i`` from it; the ranks then check everything the program does
    after device 1 (the scale mixtures, delta_i and delta0 integrated out, the Bartlett
    factor, the tabulated prior of nu) and the post-draws of delta_i
    (:func:`bayescomp.models.joint_program.draw_delta`). Device 1 itself is checked in
    ``tests/test_joint.py`` against a numerical integral.

delta0 (flat on R^d)
    A flat prior cannot be drawn from, but it need not be: the model is a location family
    in delta0 (shifting delta0 shifts every m_i), and under its flat (Haar) prior the
    posterior quantile of the true delta0 is uniform whatever delta0 is, and the posterior
    of every other parameter depends on the data only through quantities a shift leaves
    alone. So any fixed or drawn delta0 gives the SBC identity; it is drawn from
    ``N(0, sigma0_upper^2 I)`` so that the simulations are not all centred at 0.

The rest is drawn from the program's prior: ``sigma0 ~ U(0, sigma0_upper)``, ``W ~
Wishart(d + 1, I)``, ``Sigma0 = sigma0^2 d W / tr(W)``, ``nu - 1 ~ Gamma(alpha, beta)`` with
``alpha ~ U(alpha)``, ``beta ~ U(beta)`` (the paper's), ``delta_i ~ MVt(nu, delta0,
Sigma0)``. Ranked, in score units of the algorithms' pairs: the population's delta0 of the
first pair and of the pair (first, last), sigma0, nu, the population's Student-t scale of
the first pair (``population_sd_first_pair``: the shape of Sigma0) and delta_1 of the first
pair. A deliberately wrong fit (``fit_noise_factor`` other than 1 scales the ``Psi_i`` the
program is told) shows the check has power.
"""
from __future__ import annotations

import time

import arviz as az
import numpy as np
from joblib import delayed
from scipy import stats

from bayescomp import sampling
from bayescomp.models import nu_prior
from bayescomp.models.joint_program import PROGRAM, draw_delta, initial_values, pair_vectors
from bayescomp.validation.sbc import _result, _run_parallel, _seeds, _thin
from bayescomp.validation.sbc_ranks import SBCResult

__all__ = ["sbc_joint", "draw_prior"]


def draw_prior(k: int, n_datasets: int, rng, *, sigma0_upper: float = 1.0,
               alpha=(0.5, 5.0), beta=(0.05, 0.15)) -> dict:
    """The parameters of the joint model drawn from its prior (delta0 from N(0,
    sigma0_upper^2 I), see the module notes): ``delta0`` (d), ``sigma0``, ``chol`` (the
    Cholesky factor of Sigma0), ``nu``, ``delta`` (n_datasets x d)."""
    d = k - 1
    nu = 1.0 + rng.gamma(rng.uniform(*alpha), 1.0 / rng.uniform(*beta))
    sigma0 = rng.uniform(0.0, sigma0_upper)
    wishart = np.atleast_2d(stats.wishart(df=d + 1, scale=np.eye(d)).rvs(random_state=rng))
    chol = np.linalg.cholesky(sigma0 ** 2 * d * wishart / np.trace(wishart))
    delta0 = rng.normal(0.0, sigma0_upper, d)
    mixing = rng.gamma(nu / 2, 2 / nu, n_datasets)            # lambda_i, rate nu / 2
    delta = delta0 + (rng.standard_normal((n_datasets, d)) @ chol.T) / np.sqrt(mixing)[:, None]
    return dict(delta0=delta0, sigma0=sigma0, chol=chol, nu=nu, delta=delta)


def _replication(sequence, k, n_datasets, n_scores, noise_sd, fit_noise_factor, sigma0_upper,
                 n_draws, sample_options):
    rng = np.random.default_rng(sequence)
    d = k - 1
    truth = draw_prior(k, n_datasets, rng, sigma0_upper=sigma0_upper)
    dof = n_scores - 2
    # Psi_i: a Wishart(d + 2) draw scaled to noise_sd^2 per direction on average
    psi = np.array([np.atleast_2d(stats.wishart(df=d + 2, scale=np.eye(d) / (d + 2))
                                  .rvs(random_state=rng)) for _ in range(n_datasets)])
    psi *= noise_sd ** 2
    kappa = rng.gamma(dof / 2, 2 / dof, n_datasets)
    noise = np.einsum("nij,nj->ni", np.linalg.cholesky(psi), rng.standard_normal((n_datasets, d)))
    means = truth["delta"] + noise / np.sqrt(kappa)[:, None]
    data = dict(n_datasets=n_datasets, d=d, mean_contrast=means,
                noise_scale=psi * fit_noise_factor, noise_dof=np.full(n_datasets, float(dof)),
                sigma0_upper=sigma0_upper, **nu_prior.stan_data((0.5, 5.0), (0.05, 0.15)))
    seed = sampling.seeds.stan_seed(sequence)
    inits = initial_values(data, sample_options.get("chains", 4),
                           sampling.Seeds(seed).generator("initial_values"))
    start = time.perf_counter()
    idata = sampling.sample(PROGRAM, {key: (value.tolist() if isinstance(value, np.ndarray)
                                            else value) for key, value in data.items()},
                            seed=seed, inits=inits, **sample_options)
    seconds = time.perf_counter() - start
    post = idata.posterior
    shape = post["sigma0"].shape
    delta0 = post["delta0"].values.reshape(shape + (d,))
    chol = post["B"].values.reshape(shape + (d, d))
    delta = draw_delta(delta0, chol, post["log_kappa"].values, post["log_lambda"].values,
                       data, rng)
    pairs, vectors = pair_vectors(k)
    first, last = vectors[0], vectors[pairs.index((0, k - 1))]
    draws = {"delta0_first_pair": delta0 @ first, "delta0_first_last": delta0 @ last,
             "sigma0": post["sigma0"].values, "nu": post["nu"].values,
             "population_sd_first_pair": np.linalg.norm(np.einsum("csij,i->csj", chol, first),
                                                        axis=-1),
             "delta_1_first_pair": delta[:, :, 0] @ first}
    true = {"delta0_first_pair": truth["delta0"] @ first,
            "delta0_first_last": truth["delta0"] @ last, "sigma0": truth["sigma0"],
            "nu": truth["nu"], "population_sd_first_pair": np.linalg.norm(truth["chol"].T @ first),
            "delta_1_first_pair": truth["delta"][0] @ first}
    ranks = {name: int(np.sum(_thin(value, n_draws) < true[name])) for name, value in draws.items()}
    fit = dict(seed=seed, divergences=int(idata.sample_stats["diverging"].sum()),
               min_ess=min(float(az.ess(np.asarray(v))) for v in draws.values()),
               seconds=seconds)
    return ranks, {name: float(value) for name, value in true.items()}, fit


def sbc_joint(n_replications: int = 100, *, k: int = 3, n_datasets: int = 10,
              n_scores: int = 20, noise_sd: float = 0.5, fit_noise_factor: float = 1.0,
              sigma0_upper: float = 1.0, n_draws: int = 99, chains: int = 2,
              iter_warmup: int = 500, iter_sampling: int = 500, adapt_delta: float = 0.95,
              max_treedepth: int = 10, backend: str = "auto", seed=None,
              n_jobs=None) -> SBCResult:
    """SBC of ``stan/joint.stan`` (see the module notes).

    Parameters
    ----------
    n_replications : int
        Prior draws, each simulated and fitted once.
    k, n_datasets, n_scores : int
        Algorithms, datasets and splits per dataset (the noise has ``n_scores - k``
        degrees of freedom).
    noise_sd : float
        Typical standard deviation of a dataset's mean contrast (Psi_i's scale) on the
        program's unit scale, against ``sigma0_upper`` for the population.
    fit_noise_factor : float
        The Psi_i the program is told, over the simulation's; other than 1 is a
        deliberately wrong model, which the ranks should expose.
    n_draws, chains, iter_warmup, iter_sampling, adapt_delta, max_treedepth, backend, seed, n_jobs
        As :func:`bayescomp.validation.sbc.sbc_hierarchical`'s.

    Returns
    -------
    SBCResult
        Ranks of the quantities listed in the module notes.
    """
    if k < 2 or n_scores <= k:
        raise ValueError(f"need k >= 2 and n_scores > k, got k = {k}, n_scores = {n_scores}")
    if chains * iter_sampling < n_draws:
        raise ValueError(f"chains x iter_sampling = {chains * iter_sampling} < n_draws = {n_draws}")
    sample_options = dict(backend=backend, chains=chains, iter_warmup=iter_warmup,
                          iter_sampling=iter_sampling, adapt_delta=adapt_delta,
                          max_treedepth=max_treedepth)
    outputs = _run_parallel(
        (delayed(_replication)(s, k, n_datasets, n_scores, noise_sd, fit_noise_factor,
                               sigma0_upper, n_draws, sample_options)
         for s in _seeds(seed, n_replications)), n_jobs)
    description = (f"K = {k} algorithms, {n_datasets} datasets x {n_scores} splits, noise sd "
                   f"{noise_sd}, sigma0 ~ U(0, {sigma0_upper})")
    if fit_noise_factor != 1.0:
        description += f"; DELIBERATELY WRONG: fitted with the noise scale x {fit_noise_factor}"
    return _result("joint", outputs, n_draws, dict(
        sample_options, n_replications=n_replications, k=k, n_datasets=n_datasets,
        n_scores=n_scores, noise_sd=noise_sd, fit_noise_factor=fit_noise_factor,
        sigma0_upper=sigma0_upper, seed=seed, description=description))
