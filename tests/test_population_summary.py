"""delta0's mean, sd and interval from its conditional per draw
(bayescomp.models.population_summary), against closed forms and against draws."""
import numpy as np
import pytest
import xarray as xr
from scipy import optimize, stats

from bayescomp.models.population_summary import population_summary


def conditionals(centre, sd, bound):
    dims = ("chain", "draw")
    return xr.Dataset(dict(delta0_centre=(dims, np.atleast_2d(centre)),
                           delta0_sd=(dims, np.atleast_2d(sd))),
                      attrs=dict(delta0_bound=bound))


def test_one_normal_far_from_the_bound_is_its_own_interval():
    found = population_summary(conditionals(0.3, 0.02, 1.0))
    assert found["mean"] == pytest.approx(0.3, abs=1e-15)
    assert found["sd"] == pytest.approx(0.02, rel=1e-12)
    z = stats.norm.ppf(0.975)
    # the shortest interval of a normal is the central one; its ends to 1e-3 sds
    assert found["hdi_low"] == pytest.approx(0.3 - z * 0.02, abs=2e-5)
    assert found["hdi_high"] == pytest.approx(0.3 + z * 0.02, abs=2e-5)


@pytest.mark.parametrize("centre", [0.99, -1.5])
def test_one_truncated_normal_against_scipy(centre):
    """Near the bound, and centred far outside it (the mass in a sliver at -1): the
    density falls away from the bound, so the shortest interval starts there."""
    sd, bound = 0.02, 1.0
    truncated = stats.truncnorm((-bound - centre) / sd, (bound - centre) / sd, loc=centre,
                                scale=sd)
    found = population_summary(conditionals(centre, sd, bound))
    assert found["mean"] == pytest.approx(truncated.mean(), rel=1e-12)
    assert found["sd"] == pytest.approx(truncated.std(), rel=1e-9)
    if centre > 0:
        expected = (truncated.ppf(0.05), bound)
    else:
        expected = (-bound, truncated.ppf(0.95))
    tolerance = 3e-3 * truncated.std()
    assert found["hdi_low"] == pytest.approx(expected[0], abs=tolerance)
    assert found["hdi_high"] == pytest.approx(expected[1], abs=tolerance)


def test_a_mixture_against_its_draws_and_the_shortest_interval_by_root_finding():
    """Two clusters of conditionals, one against the bound: the mean and sd of 8 million
    draws of the mixture (within their Monte Carlo error) are those read from it; its
    shortest 95% interval is the one a root finder and a bounded minimiser find on the
    mixture's distribution function (written out with scipy's truncnorm). (The draws' HDI
    is no check: its ends slide by a few hundredths of an sd even at 8 million draws, as
    the interval's length hardly changes.)"""
    rng = np.random.default_rng(3)
    centre = np.concatenate([rng.normal(0.01, 0.003, 300), rng.normal(0.985, 0.004, 100)])
    sd = rng.uniform(0.004, 0.006, 400)
    bound = 1.0
    draws = stats.truncnorm((-bound - centre) / sd, (bound - centre) / sd, loc=centre,
                            scale=sd).rvs(size=(20_000, 400), random_state=rng).ravel()
    found = population_summary(conditionals(centre, sd, bound))
    spread = draws.std()
    assert found["mean"] == pytest.approx(draws.mean(), abs=4 * spread / np.sqrt(draws.size))
    assert found["sd"] == pytest.approx(spread, rel=2e-3)
    parts = stats.truncnorm((-bound - centre) / sd, (bound - centre) / sd, loc=centre,
                            scale=sd)

    def cdf(x):
        return float(np.mean(parts.cdf(x)))

    def upper_end(low):
        target = cdf(low) + 0.95
        return optimize.brentq(lambda x: cdf(x) - target, low, bound, xtol=1e-12)

    # the start lies below the 5% quantile, past which less than 0.95 lies above
    latest = optimize.brentq(lambda x: cdf(x) - 0.05, -bound, bound, xtol=1e-12)
    start = optimize.minimize_scalar(lambda low: upper_end(low) - low,
                                     bounds=(float((centre - 8 * sd).min()), latest),
                                     method="bounded", options=dict(xatol=1e-10)).x
    assert found["hdi_low"] == pytest.approx(start, abs=2e-3 * spread)
    assert found["hdi_high"] == pytest.approx(upper_end(start), abs=2e-3 * spread)


def test_counts_weigh_the_draws_as_repeating_them():
    centre, sd = np.array([0.01, 0.02, -0.03]), np.array([0.01, 0.005, 0.02])
    weighed = population_summary(conditionals(centre, sd, 1.0), counts=np.array([2, 0, 1]))
    repeated = population_summary(conditionals(centre[[0, 0, 2]], sd[[0, 0, 2]], 1.0))
    for key in ("mean", "sd", "hdi_low", "hdi_high"):
        assert weighed[key] == pytest.approx(repeated[key], rel=1e-12, abs=1e-15)
