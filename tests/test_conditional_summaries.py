"""delta0's mean, sd and interval from its conditional per draw
(bayescomp.models.conditional_summaries), against closed forms and against draws."""
import numpy as np
import pytest
import xarray as xr
from scipy import optimize, stats

from bayescomp.models.conditional_summaries import next_dataset_summary, population_summary
from bayescomp.models.region_masses import antithetic_delta0


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
    low, high = shortest_by_root_finding(lambda x: float(np.mean(parts.cdf(x))), -bound, bound)
    assert found["hdi_low"] == pytest.approx(low, abs=2e-3 * spread)
    assert found["hdi_high"] == pytest.approx(high, abs=2e-3 * spread)


def test_counts_weigh_the_draws_as_repeating_them():
    centre, sd = np.array([0.01, 0.02, -0.03]), np.array([0.01, 0.005, 0.02])
    weighed = population_summary(conditionals(centre, sd, 1.0), counts=np.array([2, 0, 1]))
    repeated = population_summary(conditionals(centre[[0, 0, 2]], sd[[0, 0, 2]], 1.0))
    for key in ("mean", "sd", "hdi_low", "hdi_high"):
        assert weighed[key] == pytest.approx(repeated[key], rel=1e-12, abs=1e-15)


def shortest_by_root_finding(cdf, lowest: float, highest: float) -> tuple[float, float]:
    """The shortest interval holding 0.95 of a distribution function: a bounded minimiser
    over its start, below the 5% quantile, with the end by a root finder."""
    def end(start):
        target = cdf(start) + 0.95
        return optimize.brentq(lambda x: cdf(x) - target, start, highest, xtol=1e-13)

    latest = optimize.brentq(lambda x: cdf(x) - 0.05, lowest, highest, xtol=1e-13)
    start = optimize.minimize_scalar(lambda s: end(s) - s, bounds=(lowest, latest),
                                     method="bounded", options=dict(xatol=1e-11)).x
    return start, end(start)


@pytest.mark.parametrize("student, draws, nu_shape", [(True, 300, 2.0), (False, 300, 2.0),
                                                     (True, 20, 0.05)])
def test_next_dataset_against_its_mixture_written_out(student, draws, nu_shape):
    """Draws of (delta0's conditional, sigma0, nu) and of delta_next: the mean and sd are
    the mixture's of the Student-t (normal) at each delta0 and its antithetic partner, the
    interval the one a root finder finds on scipy's distribution functions of the mixture at
    each delta0. The last case: 40 draws with nu near 1, whose draws of the next dataset
    span less than its interval."""
    rng = np.random.default_rng(5)
    shape = (2, draws)
    centre, sd = rng.normal(0.01, 0.002, shape), rng.uniform(0.003, 0.004, shape)
    delta0 = centre + sd * rng.standard_normal(shape)
    sigma0, nu = rng.uniform(0.01, 0.03, shape), 1 + rng.gamma(nu_shape, 2.0, shape)
    dims = ("chain", "draw")
    variables = dict(delta0_centre=(dims, centre), delta0_sd=(dims, sd),
                     delta0=(dims, delta0), sigma0=(dims, sigma0))
    if student:
        variables["nu"] = (dims, nu)
        next_draws = delta0 + sigma0 * rng.standard_t(nu)
    else:
        next_draws = delta0 + sigma0 * rng.standard_normal(shape)
    variables["delta_next"] = (dims, next_draws)
    posterior = xr.Dataset(variables, attrs=dict(delta0_bound=1.0))
    found = next_dataset_summary(posterior)
    both = np.concatenate([delta0.ravel(), antithetic_delta0(posterior).ravel()])
    assert found["mean"] == pytest.approx(both.mean(), rel=1e-12)
    if student:
        assert found["sd"] == np.inf
    else:
        assert found["sd"] == pytest.approx(np.sqrt(np.mean(sigma0 ** 2) + np.mean(both ** 2)
                                                    - both.mean() ** 2), rel=1e-12)
    # the interval: the mixture at the draws of delta0 (every one: at most NEXT_COMPONENTS)
    location, scale = delta0.ravel(), sigma0.ravel()
    parts = (stats.t(nu.ravel(), loc=location, scale=scale) if student
             else stats.norm(loc=location, scale=scale))
    def cdf(x):
        return float(np.mean(parts.cdf(x)))

    low, high = shortest_by_root_finding(cdf, -1e3, 1e3)
    # the shortest interval's place is ill-conditioned (its length hardly changes as it
    # slides): its mass and length are checked closely, its ends to a hundredth of it
    assert cdf(found["hdi_high"]) - cdf(found["hdi_low"]) == pytest.approx(0.95, abs=2e-4)
    width = high - low
    assert found["hdi_high"] - found["hdi_low"] == pytest.approx(width, rel=1e-3)
    assert found["hdi_low"] == pytest.approx(low, abs=1e-2 * width)
    assert found["hdi_high"] == pytest.approx(high, abs=1e-2 * width)


def test_each_datasets_summary_is_arviz_and_numpys_of_its_column():
    """region_summaries computes the HDIs of all columns at once: each is az.hdi of its
    column to the digit (skewed, discrete with ties, a constant column), the mean and sd
    numpy's, the probabilities passed through."""
    import arviz as az

    from bayescomp.models.hierarchical_result import region_summaries

    rng = np.random.default_rng(4)
    n = 4000
    draws = np.column_stack([rng.normal(0.1, 0.02, n), rng.gamma(1.5, 0.01, n),
                             np.round(rng.normal(0, 0.03, n), 2), np.full(n, 0.25),
                             rng.standard_t(2, n)])
    probabilities = rng.dirichlet(np.ones(3), draws.shape[1])
    found = region_summaries(draws, probabilities)
    for column, summary, expected in zip(draws.T, found, probabilities):
        low, high = az.hdi(column, hdi_prob=0.95)
        assert (summary["hdi_low"], summary["hdi_high"]) == (low, high)
        assert summary["mean"] == np.mean(column)
        assert summary["sd"] == np.std(column, ddof=1)
        assert [summary[k] for k in ("p_left", "p_rope", "p_right")] == expected.tolist()
