"""sigma0's sampled coordinate (device 11 of stan/hierarchical.stan): its log-odds offset and
scaled by the datasets' information about it, against the closed form and the posterior."""
import warnings

import numpy as np
import pytest
from scipy import special

import bayescomp as bc
from bayescomp.models.hierarchical_density import SIGMA0_SPREAD, sigma0_coordinates
from bayescomp.models.hierarchical_prior import HierarchicalPrior
from bayescomp.models.hierarchical_program import prepare
from bayescomp.validation.simulate import benchmark_collection


def _data(q, se, upper=10.0, n=10, rho=0.1):
    # ss chosen so that the squared standard error of every mean is se^2:
    # ss / ((n - 1) (1 - rho)) * (rho + (1 - rho) / n) = se^2
    share = rho + (1 - rho) / n
    ss = se ** 2 / share * (n - 1) * (1 - rho)
    return dict(mean_diff=[0.0] * q, ss=[ss] * q, n_scores=[n] * q, rho=[rho] * q,
                sigma_lower=[1e-6] * q, sigma0_upper=upper)


def test_the_scale_is_twice_the_fisher_sd_of_log_sigma0_in_log_odds_units():
    # m_i ~ N(delta0, sigma0^2 + se^2): the information about log(sigma0) is 2 sum w_i^2,
    # w_i = sigma0^2 / (sigma0^2 + se^2); d logit(sigma0 / U) / d log(sigma0) = 1 / (1 - s / U)
    q, se, spread, upper = 100, 0.1, 0.3, 10.0
    found = sigma0_coordinates(_data(q, se, upper), spread)
    w = 0.9                                      # 0.09 / (0.09 + 0.01)
    sd = 1 / np.sqrt(2 * q * w ** 2) / (1 - spread / upper)
    assert SIGMA0_SPREAD == 2.0
    assert found["sigma0_scale"] == pytest.approx(2 * sd, rel=1e-12)
    assert found["sigma0_offset"] == pytest.approx(np.log(0.03 / 0.97), rel=1e-12)
    # four times the datasets, half the sd
    assert (sigma0_coordinates(_data(4 * q, se, upper), spread)["sigma0_scale"]
            == pytest.approx(sd, rel=1e-12))


def test_the_scale_is_stans_own_where_the_means_do_not_resolve_sigma0():
    # a spread far inside the standard errors (a near-identical pair): w_i ~ 1e-4, the sd
    # of log(sigma0) in the thousands, and the coordinate keeps Stan's unit scale
    found = sigma0_coordinates(_data(400, 0.1), 1e-3)
    assert found["sigma0_scale"] == 1.0
    assert found["sigma0_offset"] == pytest.approx(special.logit(1e-4), rel=1e-12)
    # a spread beyond half the bound is held at half of it (the log-odds 0)
    assert sigma0_coordinates(_data(10, 0.1), 50.0)["sigma0_offset"] == 0.0


@pytest.mark.stan
def test_the_coordinate_standardises_sigma0_on_the_easy_pair():
    # The premise, on the simulated easy pair (means spread well beyond their standard
    # errors): the posterior sd of sigma0's log-odds falls about as 1 / sqrt(q) and is about
    # the sd that the information gives, so that the coordinate the sampler moves has an sd
    # of 0.25-1 (on Stan's own log-odds it was 0.06 at 400 datasets, and the first 100
    # warm-up iterations took half the warm-up's leapfrog steps). Measured on collection
    # seeds 1-3 and fitting seeds 2-3: the sd 1.07-1.48 times the information's, 0.53-0.74
    # in the sampled coordinate, and 0.46-0.67 times as large at 216 datasets as at 54.
    spreads = {}
    for q in (54, 216):
        scores = benchmark_collection(q, seed=1, sigma0=0.02).scores
        data, scale = prepare(scores, "a", "b", HierarchicalPrior())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = bc.hierarchical(scores, "a", "b", seed=2, baselines=False)
        sigma0 = result.idata.posterior["sigma0"].values / scale
        log_odds = special.logit(sigma0 / data["sigma0_upper"])
        fisher = data["sigma0_scale"] / SIGMA0_SPREAD
        assert data["sigma0_scale"] < 1
        assert 0.8 < log_odds.std() / fisher < 4
        assert 0.25 < log_odds.std() / data["sigma0_scale"] < 1
        spreads[q] = log_odds.std()
    assert 0.35 < spreads[216] / spreads[54] < 0.8
