"""The hierarchical model's probabilities by quadrature (bayescomp.models.quadrature).

Known answers: scipy's quadrature of each dataset's sigma_i density; the moments of
lambda's Gamma(nu / 2, nu / 2), in closed form; and a second route to the same posterior,
long NUTS runs of ``stan/hierarchical.stan`` whose chains mix (both priors of delta_i, a
collection with constant differences, few datasets), which the quadrature must match within
its own error and the runs' Monte Carlo errors.
"""
import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special

import bayescomp as bc
from bayescomp.exceptions import ConstantDifferencesWarning, InputWarning
from bayescomp.models.hierarchical_program import prepare
from bayescomp.decisions import THRESHOLD, too_close_to_call
from bayescomp.models.hierarchical_runs import region_estimates
from bayescomp.models.region_masses import next_dataset_masses, population_masses
from bayescomp.models.quadrature import (quadrature_at_ropes, quadrature_probabilities,
                                         quadrature_under_priors)
from bayescomp.models.quadrature_result import TOLERANCE
from bayescomp.models.quadrature_rules import lambda_cells, sigma_rule

KNN_XGB = Path(__file__).parent / "data" / "bbtcomp_knn_xgb.csv"


@pytest.mark.parametrize("n, S, floor", [(100, 80.0, 1e-3), (4, 2.5, 1e-3), (2, 0.3, 1e-4),
                                         (10, 0.0, 1e-2)])
def test_sigma_rule_integrates_the_fold_variance_density(n, S, floor):
    """Moments of sigma under sigma^-(n-1) exp(-S / (2 sigma^2)) on (floor, 50), also for
    two folds and for constant differences (S = 0, the mass at the floor), against scipy."""
    x, log_weight = sigma_rule(np.array([float(n)]), np.array([S]), np.array([floor]), 50.0, 48)
    weight = np.exp(log_weight[0])

    def density(sigma):
        return sigma ** -(n - 1) * np.exp(-S / (2 * sigma ** 2))

    points = np.geomspace(floor, 50.0, 60)
    for power in (0, 1, -2):
        exact = sum(integrate.quad(lambda s: density(s) * s ** power, a, b, epsabs=0,
                                   epsrel=1e-12, limit=200)[0]
                    for a, b in zip(points[:-1], points[1:]))
        assert np.sum(weight * np.exp(power * x[0])) == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("nu", [1.05, 3.0, 30.0, 3000.0])
def test_lambda_cells_hold_gamma_moments(nu):
    """The cells of log(lambda) (step 0.1) against E[lambda] = 1 and E[log lambda] =
    digamma(nu / 2) - log(nu / 2), also where the Gamma is far narrower than a cell."""
    log_lambda = np.arange(-25.0, 5.05, 0.1)
    mass = lambda_cells(nu, log_lambda, 0.1)
    assert mass.sum() == pytest.approx(1.0, abs=1e-12)
    # the midpoint rule: O(step^2) relative to the spread, at most about 0.1^2 / 24
    assert np.sum(mass * log_lambda) == pytest.approx(special.digamma(nu / 2) - np.log(nu / 2),
                                                      abs=0.05)
    assert np.sum(mass * np.exp(log_lambda)) == pytest.approx(1.0, abs=0.01)


def test_grid_ends_inside_the_support_are_not_missing_mass():
    """Which ends of a grid hold mass inside the posterior's support (closed_end): delta0's
    and sigma0's upper prior bounds when the range reaches them, and nu = 1 whenever the
    lowest cell of nu reaches it, whether or not the range starts at U_RANGE's end: by the
    closed form, where log(e^u_low + NU_SHIFT) - step / 2 <= log(NU_SHIFT)."""
    from bayescomp.models.quadrature import FINE, U_RANGE
    from bayescomp.models.quadrature_grid import NU_SHIFT, closed_end, grid_nodes

    bounds = dict(delta0=(-1.0, 1.0), log_sigma0_sq=(-20.0, 1.0), u=U_RANGE)
    resolution = dict(FINE, step=0.2, panels=12)
    seen = set()
    for u_low in (U_RANGE[0], -5.0, -2.0, -1.5, 0.0):
        for ranges in (bounds, dict(delta0=(-1.0, 0.5), log_sigma0_sq=(-8.0, 0.0))):
            ranges = dict(ranges, u=(u_low, 6.0))
            grid = grid_nodes(ranges, resolution, (), True)
            reaches = (np.log(np.exp(u_low) + NU_SHIFT) - resolution["nu_step"] / 2
                       <= np.log(NU_SHIFT))
            seen.add(bool(reaches))
            assert closed_end(grid, ranges, bounds, "u", 0) == reaches
            assert not closed_end(grid, ranges, bounds, "u", 1)
            assert not closed_end(grid, ranges, bounds, "log_sigma0_sq", 0)
            at_bounds = ranges["delta0"] == bounds["delta0"]
            assert closed_end(grid, ranges, bounds, "log_sigma0_sq", 1) == at_bounds
            assert closed_end(grid, ranges, bounds, "delta0", 0)
            assert closed_end(grid, ranges, bounds, "delta0", 1) == at_bounds
    # both sides of the closed form's boundary are among the cases
    assert seen == {True, False}


@pytest.mark.parametrize("prior", ["paper", "baycomp", "kruschke"])
def test_nu_cells_hold_the_prior_of_nu(prior):
    """The cells of nu's nodes (uniform in log(nu - 1 + NU_SHIFT), the lowest reaching nu =
    1) and the prior's mass in each (log_prior_cells) against scipy's quad of the prior's
    density in u = log(nu - 1) over each cell, on the coarse and the fine grid."""
    from bayescomp.models.quadrature import COARSE, FINE, U_RANGE
    from bayescomp.models.quadrature_grid import (NU_SHIFT, grid_nodes, log_prior_cells,
                                                  log_prior_u, statistics)

    scores = bc.simulate.collection(6, 10, delta0=0.005, sigma0=0.01, sigma=0.03, rho=0.1,
                                    seed=5).scores
    stats = statistics(prepare(scores, "a", "b", bc.PRIORS[prior])[0])
    start = float(stats["nu_prior_start"])

    def density(u):
        return float(np.exp(log_prior_u(stats, np.array([u]))[0]))

    for resolution in (COARSE, dict(FINE, step=0.2, panels=12)):
        grid = grid_nodes(dict(log_sigma0_sq=(-8.0, 1.0), delta0=(-1.0, 1.0), u=U_RANGE),
                          resolution, (), True)
        u, edges = grid["u"], grid["u_edges"]
        # nodes uniform in t = log(nu - 1 + NU_SHIFT), each halfway between its cell's ends
        # but the lowest, whose cell is cut at nu = 1 (t = log(NU_SHIFT), u = -inf)
        t, t_edges = np.log(np.exp(u) + NU_SHIFT), np.log(np.exp(edges) + NU_SHIFT)
        np.testing.assert_allclose(np.diff(t), resolution["nu_step"], rtol=1e-9)
        np.testing.assert_allclose(t[1:], (t_edges[1:-1] + t_edges[2:]) / 2, rtol=0, atol=1e-9)
        assert edges[0] == -np.inf and t_edges[0] == np.log(NU_SHIFT)
        assert np.log(NU_SHIFT) < t[0] < t_edges[1] and np.all(np.diff(edges) > 0)
        masses = np.exp(log_prior_cells(stats, edges))
        expected = np.array([integrate.quad(density, max(low, start), high, limit=200,
                                            epsabs=0, epsrel=1e-10)[0]
                             for low, high in zip(edges[:-1], edges[1:])])
        # log-linear steps of 0.005 of the table's log density (its cells 0.05 wide): about
        # 5e-5 relative where the prior holds mass, 1e-3 far in its upper tail, where the log
        # density falls as e^u (measured: at most 5.7e-5 and 1.0e-3)
        held = masses > 1e-12 * masses.max()
        np.testing.assert_allclose(masses[held], expected[held], rtol=2e-4)
        np.testing.assert_allclose(masses, expected, rtol=4e-3, atol=0)
    # a cell below the table's start holds nothing; one across it starts there
    below = log_prior_cells(stats, np.array([-50.0, start - 1, start + 1]))
    assert below[0] == -np.inf
    assert np.exp(below[1]) == pytest.approx(integrate.quad(density, start, start + 1)[0],
                                             rel=2e-4)


def long_run(scores, prior, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantDifferencesWarning)
        warnings.simplefilter("ignore", InputWarning)
        return bc.hierarchical(scores, "a", "b", rope=0.01, prior=prior, seed=seed,
                               baselines=False, iter_sampling=8000, quadrature=False)


def constant_collection():
    """8 datasets x 20 scores (10-fold CV), scores on a grid of 0.01; on the last three both
    algorithms score exactly the same (differences all 0, sigma_i at its floor), and the
    population's spread is small (0.02), so that sigma0's posterior reaches 0, where the
    constant datasets pin delta0 (tests/test_reference_program.py)."""
    rng = np.random.default_rng(6)
    true_delta = rng.normal(0.005, 0.02, 5)
    base = [np.round(rng.uniform(0.6, 0.9, 20), 2) for _ in range(8)]
    first = [base[i] + np.round(true_delta[i] + 0.03 * rng.standard_normal(20), 2)
             for i in range(5)] + [base[i].copy() for i in range(5, 8)]
    return bc.from_arrays({"a": first, "b": base}, n_folds=10,
                          datasets=[f"d{i}" for i in range(1, 6)] + ["same1", "same2", "same3"])


COLLECTIONS = {
    "twelve": lambda: bc.simulate.collection(12, 10, delta0=0.005, sigma0=0.02, sigma=0.03,
                                             rho=0.1, seed=5).scores,
    "four": lambda: bc.simulate.collection(4, 10, delta0=0.01, sigma0=0.01, sigma=0.03,
                                           rho=0.1, seed=3).scores,
    "constant": constant_collection,
}


@pytest.mark.stan
@pytest.mark.parametrize("name, prior", [("twelve", "paper"), ("twelve", "gaussian"),
                                         ("four", "paper"), ("constant", "paper")])
def test_the_quadrature_agrees_with_nuts_where_the_chains_mix(stan_backend, name, prior):
    """Two routes to one posterior: the quadrature and 4 x 8,000 draws of the program agree
    on both questions and every dataset within four of their combined errors."""
    scores = COLLECTIONS[name]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantDifferencesWarning)   # told by the fit too
        data, scale = prepare(scores, "a", "b", bc.PRIORS[prior])
    found = quadrature_probabilities(data, scale, bc.Rope(-0.01, 0.01))
    assert found.ok
    fit = long_run(scores, prior, seed=3)
    assert fit.reliable and fit.quadrature is None
    for scope, estimate in (("population", fit.population), ("next_dataset", fit.next_dataset)):
        error = np.hypot(getattr(found, f"{scope}_error"), estimate.mcse)
        assert np.all(np.abs(getattr(found, scope) - estimate.probabilities)
                      <= 4 * error + 1e-4), scope
    datasets = fit.datasets[["p_left", "p_rope", "p_right"]].to_numpy()
    # the datasets' errors from the draws are not kept per dataset: 0.005 bounds them here
    assert np.abs(found.datasets - datasets).max() < 0.005
    assert found.datasets.sum(axis=1) == pytest.approx(np.ones(len(datasets)))
    # each dataset's mean, sd and 95% HDI from its mixture of normals (the HDI of 50,000
    # independent draws from it) against the program's 32,000 draws. Where an HDI lies on
    # a near-symmetric density, draws place it only loosely (its width changes little as it
    # slides: the draws' ends moved by 2.5% of the width between two seeds, both the same
    # way), so the check is what the interval is: it holds 95% of the program's draws
    # (0.9465-0.9527 on these 36 datasets; the binomial sd at 8,000 effective draws is
    # 0.0024), and no interval holding 95% is much shorter (the draws' HDI: widths within
    # 1.5%)
    mixture = found.datasets_summary
    drawn = fit.datasets[["delta_mean", "delta_sd", "delta_hdi_low", "delta_hdi_high"]].to_numpy()
    width = drawn[:, 3] - drawn[:, 2]
    assert np.all(np.abs(mixture[:, 0] - drawn[:, 0]) <= 0.02 * width), "means"
    assert np.all(np.abs(mixture[:, 1] / drawn[:, 1] - 1) <= 0.03), "sds"
    delta = fit.idata.posterior["delta"].values.reshape(-1, len(scores))
    held = ((delta >= mixture[:, 2]) & (delta <= mixture[:, 3])).mean(axis=0)
    assert np.all(np.abs(held - 0.95) <= 0.008), held
    assert np.all(np.abs((mixture[:, 3] - mixture[:, 2]) / width - 1) <= 0.03), "widths"
    # the next dataset's mean and 95% HDI from the grid's mixture of normals; the draws' HDI
    # ends moved by 2% of its width between seeds 1 and 2 on the four datasets
    grid, draws = found.next_dataset_summary, fit.next_dataset
    width = draws.hdi_high - draws.hdi_low
    assert grid["mean"] == pytest.approx(draws.mean, abs=0.02 * width)
    assert grid["hdi_low"] == pytest.approx(draws.hdi_low, abs=0.04 * width)
    assert grid["hdi_high"] == pytest.approx(draws.hdi_high, abs=0.04 * width)
    if prior == "gaussian":
        assert grid["sd"] == pytest.approx(draws.sd, rel=0.03)
    else:   # nu <= 2 always has mass: no variance, by either route
        assert grid["sd"] == draws.sd == np.inf
    # the share of the posterior in which each region has the next dataset's largest mass:
    # at every point of the grid, and at each delta0 the draws hold (both of an antithetic
    # pair); the share of their averages was another number (left 0.0018 against 0.17 on
    # the four datasets)
    np.testing.assert_allclose(found.next_dataset_most_probable,
                               fit.next_dataset_most_probable, atol=0.015)


@pytest.mark.stan
def test_a_fit_whose_chains_cannot_be_read_takes_the_quadrature(stan_backend):
    """A fit starved of draws (2 chains x 30, no retries) fails its diagnostics: its
    probabilities then come from the quadrature, reliable, and agree with a long run; with
    ``quadrature=False`` the same fit stays UNRELIABLE. The summary, report, JSON and the
    all-pairs table say so."""
    scores = COLLECTIONS["twelve"]()
    options = dict(rope=0.01, seed=4, baselines=False, chains=2, iter_warmup=60,
                   iter_sampling=30, retries=0, ess=1, backend=stan_backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        starved = bc.hierarchical(scores, "a", "b", **options)
        plain = bc.hierarchical(scores, "a", "b", quadrature=False, **options)
    assert not starved.diagnostics.ok and not plain.diagnostics.ok
    assert not plain.reliable and plain.quadrature is None
    assert starved.reliable and starved.quadrature.ok
    np.testing.assert_array_equal(starved.population.probabilities,
                                  starved.quadrature.population)
    np.testing.assert_array_equal(starved.population.mcse, starved.quadrature.population_error)
    long = long_run(scores, "paper", seed=3)
    assert np.all(np.abs(starved.next_dataset.probabilities - long.next_dataset.probabilities)
                  <= 4 * np.hypot(starved.next_dataset.mcse, long.next_dataset.mcse) + 1e-4)
    # delta0's mean, sd and 95% HDI from the grid, against 4 x 8,000 draws: over seeds 3, 5,
    # 6 and 7 (4 x 10,000 draws) the draws' sd ranged over 1.2% and their HDI's ends over
    # 0.08 of an sd, which the grid's fell within
    sd = long.population.sd
    assert starved.population.mean == pytest.approx(long.population.mean, abs=0.03 * sd)
    assert starved.population.sd == pytest.approx(sd, rel=0.03)
    assert starved.population.hdi_low == pytest.approx(long.population.hdi_low, abs=0.15 * sd)
    assert starved.population.hdi_high == pytest.approx(long.population.hdi_high, abs=0.15 * sd)
    # the next dataset's summaries and shares are the grid's too
    assert starved.next_dataset.hdi_low == starved.quadrature.next_dataset_summary["hdi_low"]
    assert starved.next_dataset.mean == starved.quadrature.next_dataset_summary["mean"]
    np.testing.assert_array_equal(starved.next_dataset_most_probable,
                                  starved.quadrature.next_dataset_most_probable)
    assert "By quadrature: the chains did not mix, so every probability is" in \
        starved.summary()
    # the figure draws the grid's density, not the failed draws: its masses left of, in and
    # right of the ROPE (a trapezoid sum of the drawn curve) are the printed probabilities
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for which, estimate in (("delta0", starved.population), ("next", starved.next_dataset)):
        ax = bc.plots.plot_posterior(starved, which=which)
        curve = next(line for line in ax.get_lines() if line.get_gid() == "posterior")
        x, y = curve.get_xdata(), curve.get_ydata()
        assert "quadrature" in curve.get_label()
        assert not any(isinstance(patch, matplotlib.patches.StepPatch)   # no histogram
                       for patch in ax.patches)
        masses = [np.trapezoid(np.where(part, y, 0.0), x) for part in
                  (x <= -0.01, (x >= -0.01) & (x <= 0.01), x >= 0.01)]
        np.testing.assert_allclose(masses, estimate.probabilities, atol=0.01)
        plt.close(ax.figure)
    # the simplex scatters the grid's masses at points drawn by their weights, whose mean is
    # the next dataset's probabilities (4,000 points: within 0.02), not the failed draws'
    scattered = starved.quadrature.next_dataset_masses
    assert scattered.shape == (4000, 3)
    np.testing.assert_allclose(scattered.mean(axis=0), starved.next_dataset.probabilities,
                               atol=0.02)
    ax = bc.plots.plot_simplex(starved)
    points = np.vstack([c.get_offsets() for c in ax.collections if len(c.get_offsets()) > 100])
    np.testing.assert_allclose(points, bc.plots.to_simplex(scattered))
    plt.close(ax.figure)
    assert "share of the posterior in which each has" in starved.summary()
    assert "By quadrature" in starved.to_markdown()
    document = json.loads(json.dumps(starved.to_dict()))
    assert document["quadrature"]["ok"] and document["quadrature"]["grid"]["nu"] > 0
    # the grid as the result holds it, the lattice's step (0.2) too
    grid = starved.quadrature.grid
    assert document["quadrature"]["grid"].keys() == grid.keys()
    for key, value in document["quadrature"]["grid"].items():
        np.testing.assert_allclose(value, grid[key], rtol=1e-15)
    assert document["quadrature"]["grid"]["lattice_step"] > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = bc.compare_all(scores, rope=0.01, **{k: v for k, v in options.items()
                                                      if k not in ("rope", "baselines")})
    assert pairs.table["quadrature"].all()
    assert "ok, by quadrature" in pairs.summary()


@pytest.mark.slow
def test_a_real_pair_is_the_same_at_twice_the_resolution(monkeypatch):
    """bbtcomp's knn - xgb (4 folds, 132 datasets, nu's posterior in two modes): P(xgb
    better) on the population 0.992 and the next dataset's probabilities, within the
    quadrature's error of the same rule at twice the resolution in every direction, and of
    NUTS read in strata (0.9927-0.9933, tests/test_strata.py)."""
    from bayescomp.models import quadrature as module

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)                 # 4 scores per dataset
        warnings.simplefilter("ignore", ConstantDifferencesWarning)   # appendicitis
        scores = bc.read_csv(KNN_XGB)
        data, scale = prepare(scores, "knn", "xgb", bc.PRIORS["paper"])
    found = quadrature_probabilities(data, scale, bc.Rope(-0.01, 0.01), summaries=False)
    assert found.ok
    assert max(found.population_error.max(), found.next_dataset_error.max()) < TOLERANCE
    assert found.population[0] == pytest.approx(0.992, abs=0.002)
    monkeypatch.setattr(module, "FINE", dict(
        module.FINE, nu_step=module.FINE["nu_step"] / 2, sigma_nodes=2 * module.FINE["sigma_nodes"],
        least=2 * module.FINE["least"]))
    monkeypatch.setattr(module, "REFINEMENTS", (dict(
        step=found.grid["lattice_step"] / 2, panels=2 * found.grid["delta0_panels"]),))
    twice = quadrature_probabilities(data, scale, bc.Rope(-0.01, 0.01), summaries=False)
    assert np.all(np.abs(twice.population - found.population) <= found.population_error + 1e-4)
    assert np.all(np.abs(twice.next_dataset - found.next_dataset)
                  <= found.next_dataset_error + 1e-4)


@pytest.mark.slow
def test_the_finer_grids_are_read_only_where_the_coarser_do_not_answer(monkeypatch):
    """The fine grids are tried coarsest first: the first is reported where it is clear
    (every probability, each dataset's too, and the next dataset's most probable region's
    shares within the tolerance, none within two of its errors of the threshold) and no
    close call of a fit's draws is asked about, each later one where its error is within
    the tolerance, the last whatever it is; each as a quadrature at that resolution alone
    gives it to the last digit, and each within the coarser one's error of the finer
    (twelve simulated datasets: errors about 2.5e-3 at a lattice step of 0.3, 1e-3 at 0.2
    with 12 panels of delta0, 2.5e-4 at 0.1 with 24; each dataset's 2.8e-3 at 0.3, the
    shares' change 0.013)."""
    from bayescomp.models import quadrature as module
    from bayescomp.models import quadrature_result

    scores = COLLECTIONS["twelve"]()
    data, scale = prepare(scores, "a", "b", bc.PRIORS["paper"])
    rope = bc.Rope(-0.01, 0.01)
    ladder = module.REFINEMENTS
    assert [refinement.get("clear", False) for refinement in ladder] == [True, False, False]
    alone = []
    for refinement in ladder:
        monkeypatch.setattr(module, "REFINEMENTS", (refinement,))
        alone.append(quadrature_probabilities(data, scale, rope))
    monkeypatch.setattr(module, "REFINEMENTS", ladder)
    errors = [max(found.population_error.max(), found.next_dataset_error.max())
              for found in alone]
    first_datasets = alone[0].datasets_error.max()
    first_shares = alone[0].next_dataset_most_probable_change.max()
    assert errors[2] < 5e-4 < errors[1] < errors[0] < first_datasets < TOLERANCE < first_shares
    for scope in ("population", "next_dataset"):
        for coarser, finer in zip(alone, alone[1:]):
            assert np.all(np.abs(getattr(finer, scope) - getattr(coarser, scope))
                          <= getattr(coarser, f"{scope}_error"))
    # the tolerance, the threshold the first grid must be clear of, whether a close call
    # of the draws is asked about: which grid answers
    loose = 1.1 * first_shares
    cases = [(loose, THRESHOLD, False, 0),
             # a probability of the first grid's at the threshold: the second answers
             (loose, float(alone[0].population[1]), False, 1),
             # a close call: the first grid is not tried
             (loose, THRESHOLD, True, 1),
             # the shares' change above the tolerance on the first grid
             (TOLERANCE, THRESHOLD, False, 1),
             # each dataset's error too
             (0.5 * (errors[0] + first_datasets), THRESHOLD, False, 1),
             # the first two grids' errors above it: the last answers
             (5e-4, THRESHOLD, False, 2)]
    for tolerance, threshold, close_call, expected in cases:
        monkeypatch.setattr(quadrature_result, "TOLERANCE", tolerance)
        found = quadrature_probabilities(data, scale, rope, threshold=threshold,
                                         close_call=close_call)
        assert found.ok and found.grid == alone[expected].grid
        for name in ("population", "next_dataset", "datasets", "datasets_summary"):
            np.testing.assert_array_equal(getattr(found, name),
                                          getattr(alone[expected], name))


def test_a_first_grid_no_coarser_than_the_next_is_not_tried(monkeypatch):
    """Where sigma0's narrow range sets the lattice step of the first two grids (at most
    the range over FINE's ``least``: 0.2375 against 0.2 on a simulated 54-dataset pair),
    the first, reported only where clear, is not tried, as it is less than COARSER times as
    coarse: the answer is the second grid's alone, to the digit. Where any coarser first grid
    is tried (COARSER 1), it answers here, at its own step, as it does alone."""
    from bayescomp.models import quadrature as module

    scores = bc.simulate.benchmark_collection(54, seed=1).scores
    data, scale = prepare(scores, "a", "b", bc.PRIORS["paper"])
    rope = bc.Rope(-0.01, 0.01)
    ladder = module.REFINEMENTS
    alone = []
    for refinement in ladder[:2]:
        monkeypatch.setattr(module, "REFINEMENTS", (refinement,))
        alone.append(quadrature_probabilities(data, scale, rope))
    monkeypatch.setattr(module, "REFINEMENTS", ladder)
    steps = [found.grid["lattice_step"] for found in alone]
    assert steps[1] == ladder[1]["step"] < steps[0] < module.COARSER * steps[1] < ladder[0]["step"]
    for coarser, expected in ((module.COARSER, alone[1]), (1.0, alone[0])):
        monkeypatch.setattr(module, "COARSER", coarser)
        found = quadrature_probabilities(data, scale, rope)
        assert found.ok and found.grid == expected.grid
        for name in ("population", "next_dataset", "datasets", "datasets_summary"):
            np.testing.assert_array_equal(getattr(found, name), getattr(expected, name))


@pytest.mark.stan
def test_a_quadrature_beyond_its_tolerance_leaves_the_fit_unreliable(stan_backend, monkeypatch):
    """With a tolerance of 0 no quadrature stands: the starved fit stays UNRELIABLE, says
    why, and warns as any failed fit does."""
    from bayescomp.models import quadrature_result

    monkeypatch.setattr(quadrature_result, "TOLERANCE", 0.0)
    scores = COLLECTIONS["twelve"]()
    with pytest.warns(bc.SamplingWarning) as caught:
        result = bc.hierarchical(scores, "a", "b", rope=0.01, seed=4, baselines=False,
                                 chains=2, iter_warmup=60, iter_sampling=30, retries=0, ess=1,
                                 backend=stan_backend)
    assert not result.reliable and not result.quadrature.ok
    assert not any("by quadrature instead" in str(w.message) for w in caught)
    assert result.population.decision() == "unreliable (sampling problems)"
    assert "not reliable: the quadrature's error" in result.summary()


@pytest.mark.stan
def test_a_clean_fit_too_close_to_call_is_answered_by_the_quadrature(stan_backend):
    """At a ROPE of 0.065 the next dataset's P(equivalent) of the "twelve" collection is
    0.9487 by quadrature, error 0.00013: clear of 0.95 by ten of the grid's errors but
    within two of a first fit's Monte Carlo errors (about 0.0008) on seed 3. The fit passes
    its diagnostics and the quadrature answers at once; with ``quadrature=False`` the draws
    are doubled instead, several times, to the same decision and, within their errors, the
    same probability: two routes to one number."""
    scores = COLLECTIONS["twelve"]()
    options = dict(rope=0.065, seed=3, baselines=False, backend=stan_backend)
    answered = bc.hierarchical(scores, "a", "b", **options)
    doubled = bc.hierarchical(scores, "a", "b", quadrature=False, **options)
    assert answered.diagnostics.ok and answered.reliable and answered.quadrature.ok
    assert answered.close_call_by_quadrature
    assert [a["verdict"] for a in answered.settings["attempts"]] == [
        "ok; by quadrature, no extension"]
    data, scale = prepare(scores, "a", "b", bc.PRIORS["paper"])
    grid = quadrature_probabilities(data, scale, bc.Rope(-0.065, 0.065), close_call=True)
    for estimate, exact, error in ((answered.population, grid.population,
                                    grid.population_error),
                                   (answered.next_dataset, grid.next_dataset,
                                    grid.next_dataset_error)):
        np.testing.assert_array_equal(estimate.probabilities, exact)
        np.testing.assert_array_equal(estimate.mcse, error)
    assert abs(grid.next_dataset[1] - 0.95) > 4 * grid.next_dataset_error[1]
    assert "By quadrature: a probability lay within four Monte Carlo errors" in answered.summary()
    assert doubled.quadrature is None and len(doubled.settings["attempts"]) > 1
    assert doubled.next_dataset.decision() == answered.next_dataset.decision() == "undecided"
    assert abs(doubled.next_dataset.probabilities[1] - grid.next_dataset[1]) <= 3 * np.hypot(
        doubled.next_dataset.mcse[1], grid.next_dataset_error[1])


@pytest.mark.stan
def test_a_clean_fit_near_the_threshold_is_checked_by_the_quadrature(stan_backend, monkeypatch):
    """The test above on seed 16: the first fit's P(equivalent) of the next dataset lies
    between two and four of its Monte Carlo errors below 0.95 (0.9475 +- 0.0009, where the
    quadrature says 0.9487): the draws would decide alone (no close call, no extension), but
    within CHECK_MARGIN the quadrature is asked, answers where it settles, and gives its own
    numbers, to the digit (asked as a close call is: one grid on every seed). With the
    check's margin that of the decisions, the draws answer, as before."""
    from bayescomp import decisions
    from bayescomp.models import hierarchical as hierarchical_module

    scores = COLLECTIONS["twelve"]()
    options = dict(rope=0.065, seed=16, baselines=False, backend=stan_backend)
    checked = bc.hierarchical(scores, "a", "b", **options)
    assert checked.diagnostics.ok and checked.close_call_by_quadrature
    assert [a["verdict"] for a in checked.settings["attempts"]] == [
        "ok; by quadrature, no extension"]
    data, scale = prepare(scores, "a", "b", bc.PRIORS["paper"])
    grid = quadrature_probabilities(data, scale, bc.Rope(-0.065, 0.065), close_call=True)
    np.testing.assert_array_equal(checked.next_dataset.probabilities, grid.next_dataset)
    np.testing.assert_array_equal(checked.population.probabilities, grid.population)
    monkeypatch.setattr(hierarchical_module, "CHECK_MARGIN", decisions.MC_MARGIN)
    drawn = bc.hierarchical(scores, "a", "b", **options)
    assert drawn.quadrature is None and len(drawn.settings["attempts"]) == 1
    estimate = drawn.next_dataset
    distance = (0.95 - estimate.probabilities[1]) / estimate.mcse[1]
    assert decisions.MC_MARGIN < distance < decisions.CHECK_MARGIN
    assert drawn.next_dataset.decision() == checked.next_dataset.decision() == "undecided"
    assert abs(estimate.probabilities[1] - grid.next_dataset[1]) <= 3 * np.hypot(
        estimate.mcse[1], grid.next_dataset_error[1])


@pytest.mark.stan
def test_a_sensitivity_analysis_reads_a_close_call_at_another_rope_as_a_fit_there(stan_backend):
    """The "twelve" collection on seed 3 (the test above): fitted at a ROPE of 0, the draws
    are those of the fit at 0.065, where the next dataset's P(equivalent) lies within two
    Monte Carlo errors of 0.95. A sensitivity analysis reads that ROPE as bc.hierarchical at
    0.065 does, by the quadrature, to the digit; with quadrature=False, by the draws: the
    mean of their masses there, within three combined errors of the quadrature's (two
    routes to one number)."""
    scores = COLLECTIONS["twelve"]()
    rope = bc.Rope(-0.065, 0.065)
    options = dict(seed=3, backend=stan_backend, ropes=(0.0, 0.065), priors=["paper"])
    there = bc.hierarchical(scores, "a", "b", rope=rope, seed=3, baselines=False,
                            backend=stan_backend)
    assert there.close_call_by_quadrature

    def next_dataset_row(result):
        table = result.to_frame()
        row = table[(table.rope == 0.065) & (table.quantity == "next")]
        return row[["p_left", "p_rope", "p_right"]].to_numpy(float)[0], row.decision.iloc[0]

    probabilities, decision = next_dataset_row(bc.sensitivity(scores, "a", "b", **options))
    np.testing.assert_array_equal(probabilities, there.next_dataset.probabilities)
    assert decision == there.next_dataset.decision() == "undecided"
    by_draws = bc.sensitivity(scores, "a", "b", quadrature=False, **options)
    drawn, decision = next_dataset_row(by_draws)
    posterior = by_draws.fits["paper"].idata.posterior
    (_, _), (mean, errors) = region_estimates(population_masses(posterior, rope),
                                              next_dataset_masses(posterior, rope))
    assert too_close_to_call([(mean, errors)])
    np.testing.assert_allclose(drawn, mean, rtol=0, atol=1e-12)
    assert decision == "undecided"
    assert abs(drawn[1] - probabilities[1]) <= 3 * np.hypot(errors[1],
                                                            there.next_dataset.mcse[1])


@pytest.mark.stan
def test_a_sensitivity_of_a_clean_fit_whose_own_rope_is_a_close_call(stan_backend):
    """The "twelve" collection on seed 3 fitted at a ROPE of 0.065 (the test above): the fit
    passes its diagnostics and the quadrature answers its close call. A sensitivity analysis
    at 0.065 and 0 reads its rows at 0.065 as the fit's own numbers and those at 0 as one
    quadrature of the same posterior at both ROPEs (quadrature_at_ropes), to the digit.
    (Before, it stopped with AttributeError: the close-call check meant for a fit read from
    its draws was given the quadrature's answers; the tutorial's hnb - j48 at the default
    ROPEs met it on seed 2 with reweight=False.)"""
    scores = COLLECTIONS["twelve"]()
    analysis = bc.sensitivity(scores, "a", "b", ropes=(0.065, 0.0), priors=["paper"], seed=3,
                              backend=stan_backend)
    fit = analysis.fits["paper"]
    assert fit.diagnostics.ok and fit.close_call_by_quadrature
    data, scale = prepare(scores, "a", "b", bc.PRIORS["paper"])
    _, at_zero = quadrature_at_ropes(data, scale, [bc.Rope(-0.065, 0.065), bc.Rope(0.0, 0.0)])
    table = analysis.to_frame().set_index(["rope", "quantity"])
    columns = ["p_left", "p_rope", "p_right"]
    for quantity, own, grid in (("delta0", fit.population.probabilities, at_zero.population),
                                ("next", fit.next_dataset.probabilities, at_zero.next_dataset)):
        np.testing.assert_array_equal(table.loc[(0.065, quantity), columns].to_numpy(float), own)
        np.testing.assert_array_equal(table.loc[(0.0, quantity), columns].to_numpy(float), grid)
    assert set(table.read_from) == {"paper"} and table.reliable.all()


@pytest.mark.stan
def test_a_real_pair_whose_chains_do_not_mix_gets_the_same_numbers_on_every_seed(stan_backend):
    """bbtcomp's knn - xgb: the chains cross nu's two modes too rarely to pass their
    diagnostics, and read chain by chain or in strata their probabilities moved with the
    seed (P(xgb better) 0.9927-0.9933 on the population). Answered by the quadrature, two
    seeds give the same probabilities, delta0's and the next dataset's summaries and the
    same decisions: the population 0.992 (tests above), the next dataset undecided."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)                 # 4 scores per dataset
        warnings.simplefilter("ignore", ConstantDifferencesWarning)   # appendicitis
        scores = bc.read_csv(KNN_XGB)
    results = []
    # seeds 2 and 3 (of 1-8, all but 1 answered by the quadrature through cmdstanpy; on seed
    # 1 the chains' modes decide alike)
    for seed in (2, 3):
        with pytest.warns(bc.SamplingWarning, match="by quadrature instead"):
            results.append(bc.hierarchical(scores, "knn", "xgb", rope=0.01, seed=seed,
                                           baselines=False, backend=stan_backend))
    first, second = results
    for result in results:
        assert result.reliable and result.by_quadrature and not result.modes
        assert not result.close_call_by_quadrature        # its chains did not mix
        assert result.population.probabilities[0] == pytest.approx(0.992, abs=0.002)
        assert result.population.decision() == "xgb better"
        assert result.next_dataset.decision() == "undecided"
        assert result.next_dataset.sd == np.inf
    for scope in ("population", "next_dataset"):
        one, other = getattr(first, scope), getattr(second, scope)
        np.testing.assert_array_equal(one.probabilities, other.probabilities)
        assert (one.mean, one.sd, one.hdi_low, one.hdi_high) == \
            (other.mean, other.sd, other.hdi_low, other.hdi_high)
    np.testing.assert_array_equal(first.next_dataset_most_probable,
                                  second.next_dataset_most_probable)
    # every dataset's shrunken mean, sd, interval and probabilities too (the means and
    # intervals were the draws' until the quadrature gave them)
    pd.testing.assert_frame_equal(first.datasets, second.datasets)
    # and whether the summary calls the population heavy-tailed: the grid's median of nu
    assert first.heavy_tailed() == second.heavy_tailed() == (first.quadrature.nu_median < 3)


@pytest.mark.stan
def test_the_sensitivity_of_a_fit_the_quadrature_answers(stan_backend, monkeypatch):
    """bc.sensitivity of a starved fit that the quadrature answers: its rows at the fit's
    ROPE are the fit's own numbers, those at another ROPE one quadrature of the same
    posterior at both ROPEs; no prior is read off the failed draws, and the next prior of nu
    is read on the same grid, without a fit: digit for digit that grid under its prior, and
    within the larger of their errors a quadrature of its posterior on its own grid (two
    routes). Where the shared grid misses its tolerance, the prior's own grid is read; where
    that misses it too, the prior gets a fit."""
    from bayescomp.models import sensitivity_quadrature as module

    scores = COLLECTIONS["twelve"]()
    options = dict(chains=2, iter_warmup=60, iter_sampling=30, retries=0, ess=1,
                   backend=stan_backend)
    ropes = [bc.Rope(-0.01, 0.01), bc.Rope(-0.02, 0.02)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = bc.sensitivity(scores, "a", "b", ropes=(0.01, 0.02),
                                  priors=["paper", "kruschke"], seed=4, **options)
        data, scale = prepare(scores, "a", "b", bc.PRIORS["paper"])
        kruschke_data = prepare(scores, "a", "b", bc.PRIORS["kruschke"])[0]
    paper, on_grid = quadrature_under_priors(data, [kruschke_data], scale, ropes)
    own_grid = quadrature_at_ropes(kruschke_data, scale, ropes)
    fit = analysis.fits["paper"]
    assert fit.by_quadrature and set(analysis.fits) == {"paper"}
    assert not analysis.reweighted and set(analysis.by_quadrature) == {"kruschke"}
    columns = ["p_left", "p_rope", "p_right"]

    def rows_of(result, prior):
        alone = result.table[result.table.prior == prior].set_index(["rope", "quantity"])
        assert (alone["read_from"] == "quadrature").all() and alone["reliable"].all()
        return alone

    def assert_rows_are(alone, quadratures):
        for rope, found in zip((0.01, 0.02), quadratures):
            for quantity, scope in (("delta0", "population"), ("next", "next_dataset")):
                np.testing.assert_array_equal(alone.loc[(rope, quantity)][columns]
                                              .to_numpy(float), getattr(found, scope))

    assert_rows_are(rows_of(analysis, "kruschke"), on_grid)
    for shared, own in zip(on_grid, own_grid):
        assert shared.ok and own.ok
        for scope in ("population", "next_dataset"):
            error = np.maximum(getattr(shared, f"{scope}_error"), getattr(own, f"{scope}_error"))
            assert np.all(np.abs(getattr(shared, scope) - getattr(own, scope)) <= error)
    assert "by quadrature alone: kruschke (error at most" in analysis.summary()
    real = quadrature_under_priors

    def failing(from_index):
        """The real quadratures, those of the posteriors from ``from_index`` on made to
        miss their tolerance."""
        def patched(*args):
            return [found if k < from_index else [
                dataclasses.replace(q, problems=("made up by the test",)) for q in found]
                for k, found in enumerate(real(*args))]
        return patched

    # the shared grid beyond its tolerance: the prior's own grid
    monkeypatch.setattr(module, "quadrature_under_priors", failing(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        own = bc.sensitivity(scores, "a", "b", ropes=(0.01, 0.02), priors=["paper", "kruschke"],
                             seed=4, **options)
    assert set(own.fits) == {"paper"} and set(own.by_quadrature) == {"kruschke"}
    assert_rows_are(rows_of(own, "kruschke"), own_grid)
    # and its own grid too: the prior is fitted as any other
    monkeypatch.setattr(module, "quadrature_under_priors", failing(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = bc.sensitivity(scores, "a", "b", ropes=(0.01, 0.02),
                                priors=["paper", "kruschke"], seed=4, **options)
    assert set(fitted.fits) == {"paper", "kruschke"} and not fitted.by_quadrature
    table = analysis.table.set_index(["prior", "rope", "quantity"])
    for quantity, estimate in (("delta0", fit.population), ("next", fit.next_dataset)):
        row = table.loc[("paper", 0.01, quantity)]
        np.testing.assert_array_equal(row[columns].to_numpy(float), estimate.probabilities)
        assert row["decision"] == estimate.decision()
    np.testing.assert_array_equal(table.loc[("paper", 0.02, "delta0")][columns].to_numpy(float),
                                  paper[1].population)
    np.testing.assert_array_equal(table.loc[("paper", 0.02, "next")][columns].to_numpy(float),
                                  paper[1].next_dataset)


def test_modes_that_agree_within_the_tolerance_need_no_quadrature():
    """Modes whose probabilities differ by at most the quadrature's tolerance, on both
    questions: no weighting of them moves a probability by more than its own error."""
    from types import SimpleNamespace

    from bayescomp.models.hierarchical import modes_differ

    def mode(population, next_dataset):
        return SimpleNamespace(population=np.array(population),
                               next_dataset=np.array(next_dataset))

    agree = [mode([0, 1, 0], [0.001, 0.998, 0.001]), mode([0, 1, 0], [0.003, 0.996, 0.001])]
    assert not modes_differ(agree) and not modes_differ(agree[:1]) and not modes_differ(())
    differ = agree + [mode([0, 1, 0], [0.0045, 0.99, 0.0055])]      # 0.998 - 0.99 > 0.005
    assert modes_differ(differ)
    assert modes_differ([mode([0.2, 0.8, 0], [0.1, 0.8, 0.1]),
                         mode([0.21, 0.79, 0], [0.1, 0.8, 0.1])])       # the population's


@pytest.mark.stan
def test_a_near_identical_pair_whose_modes_agree_is_read_in_modes(stan_backend):
    """The simulated near-identical pair (54 datasets): the chains sit in nu's two modes,
    every mode says P(equivalent) = 1 on both questions, so the modes decide and no
    quadrature runs (it would cost 5-9 times the fit)."""
    made = bc.simulate.near_identical_collection(54, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.hierarchical(made.scores, "a", "b", rope=0.01, seed=1, baselines=False,
                                 backend=stan_backend)
    assert not result.diagnostics.ok, "the chains should sit in modes: the test is of that path"
    assert result.reliable and result.quadrature is None
    assert result.modes and all(m.population[1] == 1.0 for m in result.modes)
    assert result.population.decision() == result.next_dataset.decision() == "equivalent"


@pytest.mark.stan
def test_a_sensitivity_reads_a_fit_in_modes_by_quadrature_where_they_differ(stan_backend):
    """The simulated near-identical pair read in modes at ROPE 0.01 (above): at ROPE 0 its
    modes' probabilities differ by more than the tolerance, so the sensitivity's rows there
    are the quadrature's, digit for digit, as ``bc.hierarchical`` at ROPE 0 would take it;
    at 0.01 (the fit's own) and 0.02 they are the modes' draws, as the fit reads them. A
    prior of nu reweighted off the fit reads the same grid under its prior at ROPE 0 and the
    reweighted draws elsewhere."""
    from bayescomp.models.region_masses import next_dataset_masses, population_masses

    made = bc.simulate.near_identical_collection(54, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = bc.sensitivity(made.scores, "a", "b", ropes=(0.01, 0.0, 0.02),
                                  priors=["paper", "kruschke"], seed=1, backend=stan_backend)
        data, scale = prepare(made.scores, "a", "b", bc.PRIORS["paper"])
        kruschke_data = prepare(made.scores, "a", "b", bc.PRIORS["kruschke"])[0]
    fit = analysis.fits["paper"]
    assert fit.modes and not fit.by_quadrature, "the test is of a fit read in modes"
    assert set(analysis.reweighted) == {"kruschke"}, "and of a prior reweighted off it"
    reweighted = analysis.table[analysis.table.prior == "kruschke"].set_index(["rope", "quantity"])
    paper_at_0, kruschke_at_0 = quadrature_under_priors(data, [kruschke_data], scale,
                                                        [bc.Rope(0.0, 0.0)])
    for quantity, scope in (("delta0", "population"), ("next", "next_dataset")):
        np.testing.assert_array_equal(reweighted.loc[(0.0, quantity)][["p_left", "p_rope",
                                                                       "p_right"]].to_numpy(float),
                                      getattr(kruschke_at_0[0], scope))
    assert (reweighted["read_from"] == ["quadrature" if rope == 0 else "paper"
                                        for rope, _ in reweighted.index]).all()
    analysis = dataclasses.replace(analysis, table=analysis.table[analysis.table.prior == "paper"])
    table = analysis.table.set_index(["rope", "quantity"])
    columns = ["p_left", "p_rope", "p_right"]
    post = fit.idata.posterior
    for width in (0.0, 0.02):
        rope = bc.Rope(-width, width)
        per_draw = dict(delta0=population_masses(post, rope), next=next_dataset_masses(post, rope))
        spread = max(np.ptp([masses[list(m.chains)].reshape(-1, 3).mean(axis=0)
                             for m in fit.modes], axis=0).max() for masses in per_draw.values())
        found, = quadrature_at_ropes(data, scale, [rope])
        for quantity, scope in (("delta0", "population"), ("next", "next_dataset")):
            row = table.loc[(width, quantity)][columns].to_numpy(float)
            expected = (getattr(found, scope) if spread > TOLERANCE else
                        per_draw[quantity].reshape(-1, 3)[fit.draw_order].mean(axis=0))
            np.testing.assert_array_equal(row, expected)
        assert (spread > TOLERANCE) == (width == 0.0)
    for quantity, estimate in (("delta0", fit.population), ("next", fit.next_dataset)):
        np.testing.assert_array_equal(table.loc[(0.01, quantity)][columns].to_numpy(float),
                                      estimate.probabilities)


@pytest.mark.parametrize("name", ["twelve", "constant"])
def test_one_grid_read_at_several_ropes_is_each_ropes_own_quadrature(name):
    """Two routes to the probabilities at five ROPEs (zero width, asymmetric, and one
    holding every difference among them): one grid split at every ROPE's end, read at each
    (what a sensitivity analysis asks), and a quadrature of each ROPE alone. They agree
    within the larger of their errors, and the shared grid's summaries are the single
    ROPE's within those of a grid's resolution."""
    scores = COLLECTIONS[name]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantDifferencesWarning)
        data, scale = prepare(scores, "a", "b", bc.PRIORS["paper"])
    ropes = [bc.Rope(0.0, 0.0), bc.Rope(-0.005, 0.005), bc.Rope(-0.01, 0.02),
             bc.Rope(-0.03, 0.03), bc.Rope(-1.0, 1.0)]
    shared = quadrature_at_ropes(data, scale, ropes)
    for rope, together in zip(ropes, shared):
        alone = quadrature_probabilities(data, scale, rope, summaries=False)
        assert together.ok and alone.ok
        for scope in ("population", "next_dataset"):
            error = np.maximum(getattr(together, f"{scope}_error"),
                               getattr(alone, f"{scope}_error"))
            assert np.all(np.abs(getattr(together, scope) - getattr(alone, scope))
                          <= error + 1e-6), (rope, scope)
        assert together.delta0_summary["mean"] == pytest.approx(alone.delta0_summary["mean"],
                                                                abs=1e-3 * scale)
    # the ROPE of zero width holds nothing of delta0; the widest holds all of both
    assert shared[0].population[1] == 0.0
    np.testing.assert_allclose(shared[-1].population, [0, 1, 0], atol=1e-9)
    np.testing.assert_allclose(shared[-1].next_dataset[1], 1.0, atol=1e-3)


def test_the_quadrature_in_threads_is_the_same_to_the_last_digit(monkeypatch):
    """Blocks of datasets in the pass over nu, and each dataset's mixture, are worked on
    alone, in the same way in any thread: one thread and three give every probability and
    summary bit for bit (twelve datasets: two blocks)."""
    from bayescomp.models import quadrature_datasets

    scores = COLLECTIONS["twelve"]()
    data, scale = prepare(scores, "a", "b", bc.PRIORS["paper"])
    found = {}
    for workers in (1, 3):
        monkeypatch.setattr(quadrature_datasets, "WORKERS", workers)
        found[workers] = quadrature_probabilities(data, scale, bc.Rope(-0.01, 0.01))
    for name in ("population", "next_dataset", "datasets", "datasets_summary"):
        np.testing.assert_array_equal(getattr(found[1], name), getattr(found[3], name))
    assert found[1].next_dataset_summary == found[3].next_dataset_summary
    assert np.ptp(found[1].datasets_summary[:, 0]) > 0.01   # twelve different datasets


def test_lambdas_cells_left_out_at_the_lattices_ends_change_nothing(monkeypatch):
    """The pass over nu takes only the lattice's rows that log(lambda)'s cells heavier than
    CELL_FLOOR reach; with every cell (a floor of 0) every probability and summary is the
    same to 1e-12. The narrowing is real: at nu = 1000 most of the cells (step 0.3) lie
    below the floor, at nu = 1.5 only the last few (lambda above e^4.4)."""
    from bayescomp.models import quadrature as module

    log_lambda = np.arange(-25.0, 5.0, 0.3)
    for nu, dropped in ((1000.0, True), (1.5, False)):
        cells = lambda_cells(nu, log_lambda, 0.3)
        share = np.mean(cells < module.CELL_FLOOR * cells.max())
        assert (share > 0.8) if dropped else (share < 0.05)
    scores = COLLECTIONS["twelve"]()
    data, scale = prepare(scores, "a", "b", bc.PRIORS["paper"])
    found = {}
    for floor in (module.CELL_FLOOR, 0.0):
        monkeypatch.setattr(module, "CELL_FLOOR", floor)
        found[floor] = quadrature_probabilities(data, scale, bc.Rope(-0.01, 0.01))
    banded, every = found.values()
    for name in ("population", "next_dataset", "datasets", "datasets_summary",
                 "population_error", "next_dataset_error"):
        np.testing.assert_allclose(getattr(banded, name), getattr(every, name), rtol=1e-12,
                                   atol=1e-15)
    for key, value in every.next_dataset_summary.items():
        if key != "density":
            assert banded.next_dataset_summary[key] == pytest.approx(value, rel=1e-12)


def test_the_next_datasets_distribution_skips_only_the_far_components(monkeypatch):
    """The next dataset's distribution function is taken in blocks of points, each over the
    components within FAR of a point of the block, the shares of those below it added
    whole: against every component at every point (one block), its mean, sd, interval and
    density agree to 1e-12, from under half the pairs (a mixture as wide as a Student-t's
    with nu near 1: components 1e-3 to 1e3 wide)."""
    from concurrent.futures import ThreadPoolExecutor

    from bayescomp.models import quadrature_summary as module

    lattice = np.linspace(-14.0, 14.0, 57)              # e^(l / 2) from 1e-3 to 1e3
    delta0 = np.linspace(-0.5, 0.5, 13)
    mixture = (np.random.default_rng(3).random((57, 13)) * np.exp(-0.05 * lattice[:, None] ** 2)
               * np.exp(-(delta0[None, :] / 0.3) ** 2))
    pairs, phi = [], module.phi_within_far
    monkeypatch.setattr(module, "phi_within_far", lambda z: pairs.append(z.size) or phi(z))
    found = []
    for block in (module.NEXT_BLOCK, 10 ** 6):
        monkeypatch.setattr(module, "NEXT_BLOCK", block)
        pairs.clear()
        with ThreadPoolExecutor(max_workers=2) as pool:
            found.append((module.next_dataset_summary(delta0, lattice, mixture, True, pool),
                          sum(pairs)))
    (blocks, evaluated), (whole, every) = found
    assert every == module.NEXT_POINTS * mixture.size     # one block: every pair
    assert evaluated < 0.5 * every
    for key in ("mean", "hdi_low", "hdi_high"):
        assert blocks[key] == pytest.approx(whole[key], rel=1e-12)
    np.testing.assert_allclose(blocks["density"][1], whole["density"][1], rtol=1e-12,
                               atol=1e-12 * whole["density"][1].max())


@pytest.mark.parametrize("prior", ["paper", "gaussian"])
def test_each_datasets_probabilities_are_the_grid_sum_written_out(prior):
    """Two routes to each dataset's P(delta_i left / right of the ROPE) on one small grid:
    the quadrature's (each dataset's weight of its table accumulated over nu, then the
    heavier normal components) and the sum written out point by point: at every (nu,
    sigma0, delta0), the posterior's weight times E[Phi] over sigma_i's nodes and
    log(lambda)'s cells given dataset i, divided by I_i, that expectation without Phi."""
    from bayescomp.models.quadrature import _posterior
    from bayescomp.models.quadrature_grid import statistics
    from bayescomp.models.quadrature_datasets import workers
    from bayescomp.models.quadrature_rules import delta0_panels

    scores = bc.simulate.collection(4, 10, delta0=0.01, sigma0=0.02, sigma=0.03, rho=0.1,
                                    seed=3).scores
    data, scale = prepare(scores, "a", "b", bc.PRIORS[prior])
    stats = statistics(data)
    student = prior == "paper"
    rope = bc.Rope(-0.01 / scale, 0.01 / scale)
    delta0, delta0_weight = delta0_panels(-1.0, 1.0, (rope.low, rope.high), 3, 3)
    grid = dict(step=0.4, log_sigma0_sq=np.arange(-6.0, 1.0, 0.4), delta0=delta0,
                delta0_weight=delta0_weight, u=np.array([-1.0, 1.0, 3.0]) if student else None,
                u_edges=np.array([-2.0, 0.0, 2.0, 4.0]) if student else None, sigma_nodes=12)
    with workers() as pool:
        found = _posterior(stats, grid, rope, datasets=True, intervals=False, pool=pool)

    x, log_weight = sigma_rule(stats["n"], stats["S"], stats["floor"], stats["sigma_upper"], 12)
    step = grid["step"]
    # log(lambda)'s cells as the quadrature lays them out (its lowest cell follows the
    # smallest nu)
    lowest = max(-25.0, -30 / (0.5 * (1 + np.exp(-1.0)) + 0.5))
    log_lambda = np.arange(lowest, 5 + step / 2, step) if student else np.zeros(1)
    nus = 1 + np.exp(grid["u"]) if student else [np.inf]
    expected = np.zeros((len(stats["mean"]), 2))
    for t, nu in enumerate(nus):
        cells = lambda_cells(nu, log_lambda, step) if student else np.ones(1)
        for k, log_sigma0_sq in enumerate(grid["log_sigma0_sq"]):
            added = np.exp(log_sigma0_sq - log_lambda)                    # e^l per cell
            for d, centre0 in enumerate(delta0):
                weight = found["weights"][t, k, d]
                for i, mean in enumerate(stats["mean"]):
                    noise = np.exp(2 * x[i]) * stats["mean_share"][i]       # per node
                    total = noise[:, None] + added[None, :]                  # (node, cell)
                    density = (np.exp(log_weight[i])[:, None] * cells[None, :]
                               * np.exp(-0.5 * (mean - centre0) ** 2 / total)
                               / np.sqrt(2 * np.pi * total))
                    share = added[None, :] / total
                    centre = centre0 + (mean - centre0) * share
                    spread = np.sqrt(noise[:, None] * share)
                    left = special.ndtr((rope.low - centre) / spread)
                    right = special.ndtr((centre - rope.high) / spread)
                    expected[i] += weight * np.array([np.sum(density * left),
                                                      np.sum(density * right)]) / density.sum()
    np.testing.assert_allclose(found["datasets_sides"], expected, rtol=1e-5, atol=1e-9)
    assert expected.max() > 0.01   # the ROPE's sides carry mass here: the check has teeth


def test_a_grid_read_under_another_prior_of_nu_is_the_sum_written_out():
    """Two routes to the next dataset's probabilities on one small grid under a second
    prior of nu: the shared reading (the first prior's grid reweighted at each node of u by
    the ratio of the priors, the Student-t masses at the points that weigh) and the sums
    written out over every point, the second prior's log density added to the likelihood
    and the rule afresh. The first prior's numbers read together with the second are bit
    for bit those read alone."""
    from bayescomp.models.quadrature import _posterior, _under_prior
    from bayescomp.models.quadrature_datasets import workers
    from bayescomp.models.quadrature_grid import log_prior_cells, statistics
    from bayescomp.models.quadrature_rules import delta0_panels
    from bayescomp.models.quadrature_summary import rope_readings

    scores = bc.simulate.collection(6, 10, delta0=0.005, sigma0=0.01, sigma=0.03, rho=0.1,
                                    seed=5).scores
    data, scale = prepare(scores, "a", "b", bc.PRIORS["paper"])
    other = statistics(prepare(scores, "a", "b", bc.PRIORS["kruschke"])[0])
    stats = statistics(data)
    rope = bc.Rope(-0.01 / scale, 0.01 / scale)
    delta0, delta0_weight = delta0_panels(-1.0, 1.0, (rope.low, rope.high), 4, 3)
    grid = dict(step=0.4, log_sigma0_sq=np.arange(-8.0, 1.0, 0.4), delta0=delta0,
                delta0_weight=delta0_weight, u=np.arange(-3.0, 5.0, 0.5),
                u_edges=np.arange(-3.25, 5.0, 0.5), sigma_nodes=12)
    with workers() as pool:
        found = _posterior(stats, grid, rope, datasets=False, intervals=False, pool=pool)
        reweighted = _under_prior(found, log_prior_cells(other, grid["u_edges"]))
        alone, = rope_readings([found], grid, rope, pool)
        together = rope_readings([found, reweighted], grid, rope, pool)
    for key in ("population", "next_dataset", "next_most_probable"):
        np.testing.assert_array_equal(together[0][key], alone[key])
    # written out: the other prior's posterior at every point, its Student-t masses there
    log_post = found["log_post"] - log_prior_cells(stats, grid["u_edges"])[:, None, None] \
        + log_prior_cells(other, grid["u_edges"])[:, None, None]
    weights = np.exp(log_post - special.logsumexp(log_post))
    nu = (1 + np.exp(grid["u"]))[:, None, None]
    sigma0 = np.exp(0.5 * grid["log_sigma0_sq"])[None, :, None]
    left = special.stdtr(nu, (rope.low - delta0) / sigma0)
    right = special.stdtr(nu, (delta0 - rope.high) / sigma0)
    expected = np.array([np.sum(weights * left), np.sum(weights * (1 - left - right)),
                         np.sum(weights * right)])
    np.testing.assert_allclose(together[1]["next_dataset"], expected, rtol=0, atol=1e-9)
    assert 0.05 < expected[1] < 0.95   # the ROPE holds some of the mass: the check has teeth
    # and the priors do differ here: the reading moves
    assert np.abs(together[1]["next_dataset"] - together[0]["next_dataset"]).max() > 1e-4


def test_other_priors_of_nu_need_a_student_population():
    """The normal population has no nu: no other prior of nu can be read on its grid."""
    scores = bc.simulate.collection(4, 10, delta0=0.01, sigma0=0.02, sigma=0.03, seed=1).scores
    data, scale = prepare(scores, "a", "b", bc.PRIORS["gaussian"])
    other = prepare(scores, "a", "b", bc.PRIORS["paper"])[0]
    with pytest.raises(ValueError, match="Student-t population"):
        quadrature_under_priors(data, [other], scale, [bc.Rope(-0.01, 0.01)])
