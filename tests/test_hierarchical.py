"""The hierarchical model against simulations with known truth, scipy and published numbers."""
import dataclasses
import warnings

import arviz as az
import numpy as np
import pytest
from scipy import stats

import bayescomp as bc
from bayescomp.exceptions import InputWarning
from bayescomp.models.modes import Mode
from bayescomp.validation.simulate import collection as simulate_collection

pytestmark = pytest.mark.stan

FAST = dict(chains=4, iter_warmup=500, iter_sampling=500, baselines=False)


def simulate(n_datasets, n_scores, delta0, sigma0, sigma, seed, rho=0.1):
    """Differences drawn from the model itself, delta_i ~ N(delta0, sigma0)."""
    sim = simulate_collection(n_datasets, n_scores, delta0=delta0, sigma0=sigma0, sigma=sigma,
                              rho=rho, seed=seed)
    return sim.scores, sim.delta, sim.scores.differences("a", "b")


def test_log_likelihood_equals_scipy_multivariate_normal():
    # ragged n and distinct rho: Stan's sufficient-statistic density vs the dense density
    scores, _, diffs = simulate(4, [2, 5, 30, 12], 0.01, 0.02, 0.03, seed=1,
                                rho=[0.0, 0.1, 0.5, 0.2])
    result = bc.hierarchical(scores, "a", "b", seed=3, chains=2, iter_warmup=200,
                             iter_sampling=5, baselines=False, log_likelihood=True)
    post, log_lik = result.idata.posterior, result.idata.log_likelihood["differences"]
    for chain in range(2):
        for draw in range(5):
            for i, (x, rho) in enumerate(zip(diffs, scores.rho)):
                delta = post["delta"].values[chain, draw, i]
                sigma = post["sigma"].values[chain, draw, i]
                cov = sigma ** 2 * ((1 - rho) * np.eye(x.size) + rho)
                expected = stats.multivariate_normal.logpdf(x, np.full(x.size, delta), cov)
                # both engines return the draws as doubles
                assert log_lik.values[chain, draw, i] == pytest.approx(expected, rel=1e-10)


def test_recovers_known_truth_and_intervals_cover():
    covered, n_intervals, delta0_covered = 0, 0, 0
    repetitions = 8
    for rep in range(repetitions):
        scores, delta, _ = simulate(12, [20, 50, 100] * 4, 0.02, 0.02, 0.04, seed=100 + rep)
        result = bc.hierarchical(scores, "a", "b", seed=rep, **FAST)
        table = result.datasets
        covered += np.sum((table.delta_hdi_low <= delta) & (delta <= table.delta_hdi_high))
        n_intervals += len(delta)
        d0 = result.population
        delta0_covered += d0.hdi_low <= 0.02 <= d0.hdi_high
    coverage = covered / n_intervals
    # 96 intervals at a nominal 95%: a binomial 99.9% interval is about [0.86, 1]
    assert stats.binom.cdf(covered, n_intervals, 0.95) > 0.001, coverage
    assert delta0_covered >= repetitions - 2


def test_shrinkage_lowers_the_error_of_per_dataset_estimates():
    raw_errors, shrunk_errors = [], []
    for rep in range(3):
        # few noisy scores per dataset, similar datasets: where pooling should help most
        scores, delta, _ = simulate(25, 10, 0.01, 0.005, 0.05, seed=200 + rep)
        result = bc.hierarchical(scores, "a", "b", seed=rep, **FAST)
        raw_errors.append(np.sqrt(np.mean((result.datasets["mean"] - delta) ** 2)))
        shrunk_errors.append(np.sqrt(np.mean((result.datasets.delta_mean - delta) ** 2)))
    assert np.mean(shrunk_errors) < 0.7 * np.mean(raw_errors), (raw_errors, shrunk_errors)


def test_next_dataset_probabilities_two_routes_and_reproducibility():
    scores, _, _ = simulate(10, 30, 0.005, 0.01, 0.03, seed=5)
    result = bc.hierarchical(scores, "a", "b", rope=0.01, seed=42, **FAST)
    # the mean Student-t mass per region is the predictive probability of delta_next
    shares = result.rope.shares(result.idata.posterior["delta_next"].values)
    np.testing.assert_allclose(result.next_dataset.probabilities, shares,
                               atol=4 * np.sqrt(0.25 / 2000))
    np.testing.assert_allclose(result.next_dataset_most_probable.sum(), 1.0)
    # the next dataset's mean is delta0's (read from the draws of delta0 and their
    # antithetic partners: within delta0's Monte Carlo error of the conditionals'), and its
    # interval within the noise of its draws' (an HDI from 4 x 500 draws of a heavy tail)
    assert abs(result.next_dataset.mean - result.population.mean) < \
        4 * float(az.mcse(result.idata.posterior["delta0"].values))
    next_draws = result.idata.posterior["delta_next"].values.reshape(-1)
    width = result.next_dataset.hdi_high - result.next_dataset.hdi_low
    for got, of_draws in zip((result.next_dataset.hdi_low, result.next_dataset.hdi_high),
                             az.hdi(next_draws, hdi_prob=0.95)):
        assert abs(got - of_draws) < 0.15 * width
    # delta0's mean, sd and interval are read from its conditional per draw
    # (population_summary), within the Monte Carlo error of its draws' own (an HDI's ends
    # from 4 x 500 draws move by a few tenths of an sd from seed to seed: the interval's
    # length hardly changes as it slides)
    draws = result.idata.posterior["delta0"].values
    assert abs(result.population.mean - draws.mean()) < 4 * float(az.mcse(draws))
    assert result.population.sd == pytest.approx(draws.std(), rel=0.05)
    for got, of_draws in zip((result.population.hdi_low, result.population.hdi_high),
                             az.hdi(draws.reshape(-1), hdi_prob=0.95)):
        assert abs(got - of_draws) < 0.3 * draws.std()
    again = bc.hierarchical(scores, "a", "b", rope=0.01, seed=42, **FAST)
    np.testing.assert_array_equal(result.idata.posterior["delta"].values,
                                  again.idata.posterior["delta"].values)
    frame = result.to_frame()
    assert list(frame.index) == list(scores.dataset_names)
    assert "P(b better)" in result.summary() and "delta0" in result.summary()
    markdown = result.to_markdown()
    assert (f"delta0, the location of the population of mean differences: mean "
            f"{result.population.mean:.4g}") in markdown
    assert len([line for line in markdown.splitlines() if line.startswith("| ")]) == 1 + len(scores)
    # R-hat as the diagnostics hold it, to three decimals: 1.00004 is "1.000", not "1"
    assert f"max R-hat {result.diagnostics.max_rhat:.3f}, " in markdown
    close_to_one = dataclasses.replace(
        result, diagnostics=dataclasses.replace(result.diagnostics, max_rhat=1.00004))
    assert "max R-hat 1.000, " in close_to_one.to_markdown()
    # the modes' lines alike (R-hat to three decimals, ESS whole); chains that move slowly
    # between modes are each shown on their own, unweighed, with no list of one chain
    mode = Mode(chains=(0,), weight=float("nan"), max_rhat=1.00004, min_ess_bulk=8.749,
                min_ess_tail=255.2, ok=False, location={"delta0": 0.001},
                population=np.array([0.0, 1.0, 0.0]), next_dataset=np.array([0.0, 1.0, 0.0]),
                population_mcse=np.zeros(3), next_dataset_mcse=np.zeros(3), delta0_ess=8.749)
    per_chain = dataclasses.replace(result, modes=(mode, dataclasses.replace(mode, chains=(1,))))
    assert "  chain 2: delta0 0.001; R-hat 1.000, min ESS 9; delta0 0.0000 / " in \
        per_chain.summary()
    separate = dataclasses.replace(per_chain, modes_separate=True)
    assert "  mode 2: chains 2; weight n/a; delta0 0.001; R-hat 1.000, min ESS 9; delta0 " in \
        separate.summary()
    latex = result.to_latex()
    assert latex.count(r" \\") == 1 + len(scores)


def test_constant_dataset_does_not_crash_and_is_deterministic():
    scores, _, _ = simulate(6, 20, 0.01, 0.01, 0.03, seed=9)
    base = np.round(np.linspace(0.70, 0.89, 20), 2)
    constant = bc.from_arrays({"a": base + 0.02, "b": base}, rho=0.1, datasets=["same"])
    collection = bc.concat([scores, constant])
    with pytest.warns(bc.ConstantDifferencesWarning, match="same"):
        result = bc.hierarchical(collection, "a", "b", seed=1, **FAST)
    row = result.datasets.loc["same"]
    # the floor is resolution/sqrt(12) = 0.01/sqrt(12): delta_i is pinned near 0.02
    assert row.delta_mean == pytest.approx(0.02, abs=0.005)
    assert row.delta_sd < 0.01
    sigma = result.idata.posterior["sigma"].sel(dataset="same").values
    assert sigma.min() >= 0.01 / np.sqrt(12) * (1 - 1e-5)


def test_bad_input():
    scores, _, _ = simulate(3, 10, 0.0, 0.01, 0.03, seed=2)
    with pytest.raises(ValueError, match="unknown algorithm 'c'"):
        bc.hierarchical(scores, "a", "c")
    with pytest.raises(ValueError, match="unknown prior"):
        bc.hierarchical(scores, "a", "b", prior="flat")
    with pytest.raises(ValueError, match="population"):
        bc.HierarchicalPrior(population="cauchy")
    with pytest.raises(ValueError, match="nu must be one of"):
        bc.HierarchicalPrior(nu="flat")
    with pytest.raises(ValueError, match="ROPE"):
        bc.hierarchical(scores, "a", "b", rope=-1)
    with pytest.raises(ValueError, match="alpha"):
        bc.HierarchicalPrior(alpha=(2, 1))
    with pytest.raises(ValueError, match="at least 2 datasets.*correlated_ttest"):
        bc.hierarchical(scores.subset(datasets=["0"]), "a", "b")


def test_sampling_problems_are_reported():
    scores, _, _ = simulate(8, 10, 0.0, 0.001, 0.05, seed=3)
    with pytest.warns(bc.SamplingWarning, match="effective sample size"):
        result = bc.hierarchical(scores, "a", "b", seed=1, chains=2, iter_warmup=30,
                                 iter_sampling=30, baselines=False)
    assert not result.diagnostics.ok
    assert "raise iter_sampling" in result.diagnostics.summary()


def test_scmamp_published_hierarchical_numbers(scmamp_example):
    scores, published = scmamp_example
    # One outlying dataset (DB 7, mean 0.145, itself noisy) among ten
    result = bc.hierarchical(scores, "AlgC", "AlgD", rope=0.01, seed=2024, chains=4,
                             iter_warmup=1000, iter_sampling=2000, baselines=False)
    assert result.diagnostics.max_rhat < 1.01
    ours = result.datasets.loc[published.index]
    # Both sides are Monte Carlo estimates: scmamp's from 5 chains x 1000 draws of the dense
    # model, ours from 4 x 2000. With effective sizes of a few hundred each, the combined
    # standard error of a posterior mean is about 0.05 posterior sd, of a probability 0.025.
    np.testing.assert_array_less(np.abs(ours.delta_mean - published["mean"]), 0.2 * ours.delta_sd)
    for region in ("left", "rope", "right"):
        np.testing.assert_allclose(ours[f"p_{region}"], published[region], atol=0.07)


def test_backends_agree_within_monte_carlo_error(cmdstanpy_backend, pystan_backend):
    scores, _, _ = simulate(10, 30, 0.01, 0.01, 0.03, seed=12)
    fits = {name: bc.hierarchical(scores, "a", "b", backend=name, seed=5, **FAST)
            for name in (cmdstanpy_backend, pystan_backend)}
    means = {k: float(r.idata.posterior["delta0"].mean()) for k, r in fits.items()}
    mcse = np.sqrt(sum(float(az.mcse(r.idata, var_names=["delta0"])["delta0"]) ** 2
                       for r in fits.values()))
    assert abs(means["cmdstanpy"] - means["pystan"]) < 4 * mcse
    np.testing.assert_allclose(fits["cmdstanpy"].next_dataset.probabilities,
                               fits["pystan"].next_dataset.probabilities,
                               atol=0.05)


def _sufficient_statistics(standard_errors, n=10, rho=0.1):
    """ss, n, rho of datasets whose means have the given standard errors."""
    se = np.asarray(standard_errors, dtype=float)
    n_vec, rho_vec = np.full(se.size, n), np.full(se.size, rho)
    ss = se ** 2 * n / (1 + (n - 1) * rho) * (n - 1) * (1 - rho)
    return ss, n_vec, rho_vec


def test_sigma0_median_matches_quadrature():
    """The grid median of sigma0 (normal population, delta0 flat, sigma0 uniform) against
    scipy's quadrature of the same marginal density."""
    from scipy import integrate, optimize

    from bayescomp.models.hierarchical_program import sigma0_median

    means = np.array([0.1, -0.4, 0.3, 0.9, 0.0, -0.2, 0.5])
    se = np.array([0.2, 0.3, 0.1, 0.4, 0.05, 0.2, 0.3])
    upper = 5.0

    def density(s):
        variance = se ** 2 + s ** 2
        weight = 1 / variance
        centre = np.sum(weight * means) / np.sum(weight)
        return np.exp(-0.5 * np.sum(np.log(variance)) - 0.5 * np.log(np.sum(weight))
                      - 0.5 * np.sum(weight * (means - centre) ** 2))

    total = integrate.quad(density, 0, upper, limit=200)[0]
    median = optimize.brentq(lambda m: integrate.quad(density, 0, m, limit=200)[0] - total / 2,
                             1e-6, upper)
    assert sigma0_median(means, se, upper) == pytest.approx(median, rel=0.03)


def test_sigma0_median_under_student_t_noise_matches_quadrature():
    """With Student-t noise (``dof``) the grid median of sigma0 against a fine trapezoid
    integral of the same density (delta0 on 4,001 points over (-20, 20), sigma0 on 500
    points, where the function uses about 100 and 120): each mean Student-t(dof_i) about
    delta0 with scale sqrt(noise_i^2 + sigma0^2), delta0 flat, sigma0 uniform."""
    from bayescomp.models.hierarchical_program import sigma0_median

    means = np.array([0.1, -0.4, 0.3, 0.9, 0.0, -0.2, 0.5, 0.05, 0.2])
    noise = np.array([0.2, 0.3, 0.1, 0.4, 0.05, 0.2, 0.3, 0.1, 0.15])
    dof = np.array([2.0, 2.0, 8.0, 1.0, 3.0, 2.0, 18.0, 2.0, 5.0])
    upper = 5.0

    delta0 = np.linspace(-20, 20, 4001)
    sigma0 = np.linspace(0, upper, 500)
    density = np.array([np.trapezoid(np.prod(stats.t.pdf(means[:, None], dof[:, None], delta0,
                                                      np.sqrt(noise[:, None] ** 2 + s ** 2)),
                                          axis=0), delta0) for s in sigma0])
    cumulative = np.concatenate([[0], np.cumsum(np.diff(sigma0) * (density[1:] + density[:-1])
                                                / 2)])
    median = np.interp(cumulative[-1] / 2, cumulative, sigma0)
    assert sigma0_median(means, noise, upper, dof=dof) == pytest.approx(median, rel=0.05)
    # normal noise reads the outlier (0.9, dof 1) as spread of the population
    assert sigma0_median(means, noise, upper) > 1.2 * median


def test_mean_centre_with_few_folds_follows_identical_datasets():
    """4-fold cross-validation (3 degrees of freedom per fold variance) on a collection of
    near-identical algorithms with a few outlying datasets and a few identical ones, as
    logistic regression against a ridge classifier on bbtcomp's 132 datasets: the noise of
    a mean from 4 folds is Student-t, which explains the outliers, so sigma0 is small and
    the identical datasets, whose tiny floor pins delta0, give the centre. Read with normal
    noise, the outliers made sigma0* large and the centre the plain median of the means
    (on that pair 0.32 on the unit scale from the 0 where delta0 sits: z-scores of 14-60 and
    184-622 divergent transitions a fit)."""
    from bayescomp.models.hierarchical_density import squared_standard_errors
    from bayescomp.models.hierarchical_program import (mean_centre, sigma0_median,
                                                       weighted_median)

    rng = np.random.default_rng(4)
    n, rho, fold_sd = 4, 0.25, 0.01
    se = fold_sd * np.sqrt((rho + (1 - rho) / n) / (1 - rho))
    means = np.concatenate([rng.normal(0.003, se, 30),        # alike
                            0.004 + np.array([0.06, 0.09, 0.12, 0.15, 0.2]),  # outliers
                            np.zeros(5)])                        # identical scores
    ss = np.r_[np.full(35, (n - 1) * (1 - rho) * fold_sd ** 2), np.zeros(5)]
    data = dict(mean_diff=means.tolist(), n_scores=[n] * 40, rho=[rho] * 40,
                ss=ss.tolist(), sigma_lower=[1e-4] * 40, sigma0_upper=10.0)
    assert mean_centre(data) == 0.0
    se2 = squared_standard_errors(ss, [n] * 40, [rho] * 40, [1e-4] * 40)
    normal = sigma0_median(means, np.sqrt(se2), 10.0)
    assert weighted_median(means, 1 / (se2 + normal ** 2)) == pytest.approx(np.median(means),
                                                                          abs=0.002)
    assert np.median(means) > 0.002


def test_weighted_median_against_numpy_and_by_its_definition():
    """Equal weights give numpy's median (odd and even counts, ties, any order); a weight
    above half the total takes the median to its value; otherwise it is a value (or the
    midpoint of two) with at most half the weight strictly on either side."""
    from bayescomp.models.hierarchical_program import weighted_median

    rng = np.random.default_rng(3)
    for size in (1, 2, 3, 4, 7, 10, 51):
        values = rng.choice([-0.2, 0.0, 0.1, 0.3], size) + (rng.normal(0, 1, size) if size > 4
                                                           else 0)
        for weight in (1.0, 1 / 3, 0.1):
            assert weighted_median(values, np.full(size, weight)) == np.median(values)
    values = rng.normal(0, 1, 25)
    weights = rng.uniform(0.1, 1.0, 25)
    heavy = weights.copy()
    heavy[7] = weights.sum()
    assert weighted_median(values, heavy) == values[7]
    median = weighted_median(values, weights)
    for side in (values < median, values > median):
        assert weights[side].sum() <= 0.5 * weights.sum()
    shuffled = rng.permutation(25)
    assert weighted_median(values[shuffled], weights[shuffled]) == median


def test_mean_centre_follows_a_dataset_that_pins_delta0():
    """The means' centre of the program's data: with equal standard errors the plain median;
    where one dataset's standard error is tiny (constant differences at a small floor), that
    dataset's mean, which delta0 then sits at whenever sigma0 is small."""
    from bayescomp.models.hierarchical_program import mean_centre

    # means that differ by less than their standard errors (0.024), as a near-identical
    # pair's do: sigma0 is then small and the constant dataset's precision dominates
    means = np.array([0.012, -0.004, 0.008, 0.02, 0.0, 0.004, 0.016])
    base = dict(mean_diff=means.tolist(), n_scores=[25] * 7, rho=[0.2] * 7,
                sigma_lower=[1e-3] * 7, sigma0_upper=10.0)
    alike = dict(base, ss=[24 * 0.8 * 0.05 ** 2] * 7)
    assert mean_centre(alike) == np.median(means)
    pinned = dict(base, ss=[24 * 0.8 * 0.05 ** 2] * 4 + [0.0] + [24 * 0.8 * 0.05 ** 2] * 2)
    assert np.median(means) == 0.008 and mean_centre(pinned) == 0.0


def test_standard_errors_and_their_floor():
    """The standard error of a dataset's mean: sigma sqrt(rho + (1 - rho) / n) with sigma
    estimated from ss, never below the resolution floor."""
    from bayescomp.models.hierarchical_density import squared_standard_errors

    ss, n, rho = _sufficient_statistics([0.05, 1.0])
    assert np.allclose(squared_standard_errors(ss, n, rho, 0.0), [0.05 ** 2, 1.0])
    assert np.allclose(squared_standard_errors(np.zeros(3), np.full(3, 10), np.full(3, 0.1),
                                               0.1), 0.1 ** 2 * 1.9 / 10)


@pytest.mark.stan
@pytest.mark.parametrize("prior", ["kruschke", "juarez_steel", "gaussian"])
def test_other_priors_of_the_population(prior):
    """The authors' other models of delta_i: the next dataset's probabilities come from the
    population the prior names (normal: no nu), from the fit's own draws: each draw's
    masses averaged over its delta0 and the antithetic partner, here found by scipy's
    truncated normal (delta0's conditional) at the mirrored quantile."""
    scores, _, _ = simulate(20, 30, 0.02, 0.01, 0.03, seed=21)
    other = bc.hierarchical(scores, "a", "b", prior=prior, seed=3, baselines=False)
    assert other.reliable and other.settings["prior_name"] == prior
    assert ("nu" in other.idata.posterior) == (prior != "gaussian")
    post = other.idata.posterior
    delta0, sigma0 = post["delta0"].values.reshape(-1), post["sigma0"].values.reshape(-1)
    centre, sd = (post[name].values.reshape(-1) for name in ("delta0_centre", "delta0_sd"))
    bound = post.attrs["delta0_bound"]
    conditional = stats.truncnorm((-bound - centre) / sd, (bound - centre) / sd, loc=centre,
                                  scale=sd)
    masses = 0
    for location in (delta0, conditional.ppf(conditional.sf(delta0))):
        population = (stats.norm(location, sigma0) if prior == "gaussian"
                      else stats.t(post["nu"].values.reshape(-1), location, sigma0))
        masses = masses + other.rope.probabilities(population) / 2
    np.testing.assert_allclose(other.next_dataset.probabilities, masses.mean(axis=0))


@pytest.mark.parametrize("name, density", [
    ("kruschke", lambda nu: stats.expon.pdf(nu - 1, scale=29)),
    ("juarez_steel", lambda nu: stats.gamma.pdf(nu, 2, scale=10))])
def test_closed_form_priors_of_nu_are_scipys(name, density):
    """The tables the program interpolates: log p(u), u = log(nu - 1), equals scipy's density
    of nu times d nu / du = nu - 1, up to a constant; the slope is its derivative."""
    from bayescomp.models import nu_prior

    table = nu_prior.stan_data_for(name)
    u = table["nu_prior_start"] + table["nu_prior_step"] * np.arange(table["nu_prior_size"])
    inside = (u > -10) & (u < 8)
    expected = np.log(density(1 + np.exp(u[inside])) * np.exp(u[inside]))
    got = np.asarray(table["nu_prior_log_density"])[inside]
    np.testing.assert_allclose(got - got[0], expected - expected[0], atol=1e-9)
    def log_p(v):
        return np.log(density(1 + np.exp(v)) * np.exp(v))

    step = 1e-6
    slope = (log_p(u[inside] + step) - log_p(u[inside] - step)) / (2 * step)
    np.testing.assert_allclose(np.asarray(table["nu_prior_slope"])[inside], slope, rtol=1e-6,
                               atol=1e-6)


def test_two_datasets_warn_that_the_population_is_the_priors():
    """Below 3 datasets sigma0's posterior moves with its prior's bound (measured in
    hierarchical.FEW_DATASETS): the fit says so before sampling; from 3 on it does not."""
    scores, _, _ = simulate(3, 10, 0.0, 0.01, 0.03, seed=2)
    two = scores.subset(datasets=list(scores.dataset_names)[:2])
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)
        with pytest.raises(InputWarning, match="only 2 datasets.*prior"):
            bc.hierarchical(two, "a", "b")
        # three datasets pass the check and reach the ROPE check: an invalid ROPE is then
        # the first error, with no warning before it
        with pytest.raises(ValueError, match="ROPE"):
            bc.hierarchical(scores, "a", "b", rope=-1)
