"""Simulation-based calibration, reduced: the programs pass, deliberately wrong fits fail.

Ranks are among L = 49 thinned draws (50 possible ranks, bins of 5 ranks); the uniformity
checks use a lenient level, 0.001, per parameter. About a minute on two cores.
"""
import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from bayescomp.validation import sbc, sbc_joint, sbc_ranks
from bayescomp.presentation.plots import validation as validation_plots

LEVEL = 0.001
FAST = dict(n_draws=49, chains=2, iter_warmup=300, iter_sampling=300, n_jobs=2)


def test_rank_uniformity_known_answers():
    rng = np.random.default_rng(0)
    uniform = rng.integers(0, 50, 200)
    test = sbc_ranks.rank_uniformity(uniform, 49)
    assert test["bins"] == 10 and test["counts"].sum() == 200
    assert test["p_chi2"] > LEVEL and test["p_median"] > LEVEL
    assert test["mean_low"] < test["mean_rank"] < test["mean_high"]
    # a posterior too narrow puts the truth outside the draws: ranks 0 and L
    u_shaped = np.where(rng.random(200) < 0.5, 0, 49)
    assert sbc_ranks.rank_uniformity(u_shaped, 49)["p_chi2"] < 1e-10
    # a posterior shifted upward puts the truth below most draws: ranks low
    shifted = rng.integers(0, 30, 200)
    test = sbc_ranks.rank_uniformity(shifted, 49)
    assert test["p_median"] < 1e-6 and test["mean_rank"] < test["mean_low"]
    with pytest.raises(ValueError, match="equal bins"):
        sbc_ranks.rank_uniformity(uniform, 49, bins=3)
    with pytest.raises(ValueError, match="0..49"):
        sbc_ranks.rank_uniformity([50], 49)


def test_prior_draws_follow_the_fixed_prior():
    prior = sbc.FixedPrior()
    rng = np.random.default_rng(1)
    draws = [prior.draw(3, rng) for _ in range(4000)]
    delta0 = np.array([d["delta0"] for d in draws])
    sigma = np.concatenate([d["sigma"] for d in draws])
    nu = np.array([d["nu"] for d in draws])
    assert delta0.min() >= -1 and delta0.max() <= 1
    assert abs(delta0.mean()) < 4 * np.sqrt(1 / 3 / 4000)
    assert sigma.min() >= 0.1 and sigma.max() <= 2
    # E[nu - 1] = E[alpha] E[1 / beta] = 2.75 * ln(3) / 0.1
    assert np.mean(nu - 1) == pytest.approx(2.75 * np.log(3) / 0.1, rel=0.1)


def test_closed_form_correlated_ttest_is_calibrated():
    """Exact pivot: the posterior quantile of the true mean is uniform; rho = 0 breaks it."""
    right = sbc.correlated_quantiles(3000, n_scores=100, rho=0.1, seed=2)
    assert right["p_value"] > LEVEL
    naive = sbc.correlated_quantiles(3000, n_scores=100, rho=0.1, fit_rho=0.0, seed=2)
    assert naive["p_value"] < 1e-10


@pytest.mark.stan
def test_sbc_correlated_program(stan_backend):
    result = sbc.sbc_correlated(60, seed=3, backend=stan_backend, **FAST)
    assert result.passes(LEVEL), result.summary()
    assert list(result.ranks.columns) == ["mu", "sigma"]
    # ignoring the correlation of the folds (rho = 0) makes the posterior of mu ~3x too narrow
    wrong = sbc.sbc_correlated(30, n_scores=100, fit_rho=0.0, seed=4, backend=stan_backend,
                               **FAST)
    assert not wrong.passes(LEVEL)
    assert wrong.uniformity().loc["mu", "p_chi2"] < LEVEL


@pytest.mark.stan
def test_sbc_hierarchical_program(stan_backend):
    result = sbc.sbc_hierarchical(60, seed=5, backend=stan_backend, **FAST)
    table = result.uniformity()
    assert result.passes(LEVEL), result.summary()
    assert set(table.index) == {"delta0", "sigma0", "nu", "delta_1", "sigma_1"}
    assert ((table["mean_low"] < table["mean_rank"]) & (table["mean_rank"] < table["mean_high"])).all()
    assert (result.fits["min_ess"] >= result.n_draws).mean() > 0.9
    axes = validation_plots.plot_ranks(result)
    assert len(axes) == 5


@pytest.mark.stan
def test_sbc_hierarchical_detects_a_shifted_prior(stan_backend):
    # simulated with beta ~ U(0.05, 0.15) (nu - 1 around 30), fitted with beta ~ U(0.5, 1.5)
    # (nu - 1 around 3): the true nu lies above the posterior draws
    prior = sbc.FixedPrior()
    shifted = sbc.FixedPrior(beta=(0.5, 1.5))
    wrong = sbc.sbc_hierarchical(24, prior=prior, fit_prior=shifted, seed=6,
                                 backend=stan_backend, **FAST)
    assert not wrong.passes(LEVEL)
    table = wrong.uniformity()
    assert table.loc["nu", "p_chi2"] < LEVEL
    assert table.loc["nu", "mean_rank"] > table.loc["nu", "mean_high"]
    assert "DELIBERATELY WRONG" in wrong.summary()


@pytest.mark.stan
def test_sbc_joint_program(stan_backend):
    """The joint model of K = 3 algorithms (bayescomp.validation.sbc_joint; the full run at
    K = 3, 4 and N = 10, 30 is benchmarks/run_sbc.py --only joint)."""
    result = sbc_joint.sbc_joint(60, k=3, n_datasets=8, seed=7, backend=stan_backend, **FAST)
    table = result.uniformity()
    assert result.passes(LEVEL), result.summary()
    assert set(table.index) == {"delta0_first_pair", "delta0_first_last", "sigma0", "nu",
                                "population_sd_first_pair", "delta_1_first_pair"}
    assert ((table["mean_low"] < table["mean_rank"]) & (table["mean_rank"] < table["mean_high"])).all()


@pytest.mark.stan
def test_sbc_joint_detects_understated_noise(stan_backend):
    # the program told 1/25 of the fold noise's scale matrix (standard deviations 5 times too
    # small) takes the noise for spread between datasets: sigma0's posterior lies above the
    # truth, and each delta_i's hugs its dataset's mean, the truth outside its draws
    wrong = sbc_joint.sbc_joint(30, k=3, n_datasets=8, fit_noise_factor=0.04, seed=8,
                                backend=stan_backend, **FAST)
    table = wrong.uniformity(bins=5)
    assert not wrong.passes(LEVEL, bins=5)
    assert table.loc["sigma0", "p_chi2"] < LEVEL
    assert table.loc["sigma0", "mean_rank"] < table.loc["sigma0", "mean_low"]
    assert "DELIBERATELY WRONG" in wrong.summary()
