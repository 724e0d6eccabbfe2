"""Sensitivity of the hierarchical model's verdict to the prior and the ROPE: known answers.

Every ROPE read off one fit's draws: P(rope) is non-decreasing in the ROPE width, zero at
width 0, one for delta0 when the ROPE holds every draw; every number of a fitted prior equals
the mean of the masses computed directly from the draws (delta0's truncated normal
conditional, the next dataset's Student-t), and the fit's own numbers at its ROPE; every
prior of PRIORS is run, including ones added later. A prior read off another's draws by
importance sampling agrees with its own fit within Monte Carlo error; where the weights or
the fit do not allow it, the prior is fitted.
"""
import matplotlib
import numpy as np
import pytest
from scipy import stats

from bayescomp.models import prior_reweighting
from bayescomp.models.modes import probability_mcse
from bayescomp.models.region_masses import next_dataset_masses, population_masses

import bayescomp as bc
from bayescomp.models.hierarchical_prior import PRIORS, HierarchicalPrior
from bayescomp.models.hierarchical_program import prepare
from bayescomp.models.quadrature import quadrature_probabilities
from bayescomp.models.sensitivity_analysis import DEFAULT_ROPES, default_ropes, sensitivity
from bayescomp.models.sensitivity_result import SensitivityResult
from bayescomp.rope import region_labels

matplotlib.use("Agg")
# 4 chains: R-hat <= 1.01 from 2 short chains fails by chance on some of the five priors
SHORT = dict(chains=4, iter_warmup=500, iter_sampling=500)
ROPES = (0.0, 0.002, 0.005, 0.01, 0.02, 10.0)


@pytest.fixture(scope="module")
def scores():
    return bc.simulate.collection(8, 10, delta0=0.01, sigma0=0.01, sigma=0.02, rho=0.1,
                                  seed=3).scores


@pytest.fixture(scope="module")
def result(scores, stan_backend):
    return sensitivity(scores, "a", "b", ropes=ROPES, seed=7, backend=stan_backend, **SHORT)


@pytest.fixture(scope="module")
def every_prior_fitted(scores, stan_backend):
    return sensitivity(scores, "a", "b", ropes=ROPES, seed=7, backend=stan_backend,
                       reweight=False, **SHORT)


def test_arguments_are_checked(scores):
    with pytest.raises(ValueError, match="unknown prior 'flat'.*paper"):
        sensitivity(scores, "a", "b", priors=["flat"], seed=1)
    with pytest.raises(TypeError, match="rope"):
        sensitivity(scores, "a", "b", rope=0.01, seed=1)
    with pytest.raises(ValueError, match="ROPE"):
        sensitivity(scores, "a", "b", ropes=[-0.01], seed=1)


def test_default_ropes_follow_the_units_of_the_scores(scores):
    assert default_ropes(scores, "a", "b") == DEFAULT_ROPES
    a, b = (np.stack([d.values[scores.algorithm_index(name)] for d in scores.datasets])
            for name in ("a", "b"))
    percent = bc.from_arrays({"a": 100 * a, "b": 100 * b}, rho=0.1)
    assert default_ropes(percent, "a", "b") == tuple(100 * r for r in DEFAULT_ROPES)
    # log-losses above 100 are neither: no default, and the call fails before any fit
    losses = bc.from_arrays({"a": 150 + a, "b": 150 + b}, rho=0.1)
    with pytest.raises(ValueError, match=r"range over \[150.*pass ropes="):
        sensitivity(losses, "a", "b", seed=1)


@pytest.mark.stan
def test_every_prior_every_rope(result):
    assert isinstance(result, SensitivityResult)
    assert result.priors == list(bc.PRIORS)
    table = result.table
    assert len(table) == len(bc.PRIORS) * len(ROPES) * 2
    np.testing.assert_allclose(table[["p_left", "p_rope", "p_right"]].sum(axis=1), 1, atol=1e-12)
    for (prior, quantity), rows in table.groupby(["prior", "quantity"]):
        rows = rows.sort_values("rope")
        assert np.all(np.diff(rows.p_rope.to_numpy()) >= 0), (prior, quantity)
        assert np.all(np.diff(rows.p_left.to_numpy()) <= 0) and np.all(np.diff(rows.p_right.to_numpy()) <= 0)
        # width 0: a continuous posterior has no mass on 0 (p_rope is 1 - p_left - p_right)
        assert rows.p_rope.iloc[0] == pytest.approx(0, abs=1e-12)
    wide = table[(table.rope == 10.0) & (table.quantity == "delta0")]
    assert np.all(wide.p_rope == 1) and np.all(wide.decision == "equivalent")


def rope_indicators(draws, width):
    return bc.Rope(-width, width).indicators(draws)


@pytest.mark.stan
def test_numbers_are_the_direct_computation_from_the_draws(result):
    for prior, fit in result.fits.items():
        post = fit.idata.posterior
        delta0, sigma0 = (post[v].values.reshape(-1) for v in ("delta0", "sigma0"))
        # delta0: the normal conditional of every draw, truncated to the prior's bound
        centre, sd = (post[v].values.reshape(-1) for v in ("delta0_centre", "delta0_sd"))
        bound = post.attrs["delta0_bound"]
        # the next dataset: Student-t, or normal for the "gaussian" population (no nu), at
        # delta0 and at its antithetic partner, the conditional's mirrored quantile
        conditional = stats.truncnorm((-bound - centre) / sd, (bound - centre) / sd,
                                      loc=centre, scale=sd)
        populations = [stats.t(post["nu"].values.reshape(-1), loc=location, scale=sigma0)
                       if "nu" in post else stats.norm(loc=location, scale=sigma0)
                       for location in (delta0, conditional.ppf(conditional.sf(delta0)))]
        low, high = stats.norm.cdf((-bound - centre) / sd), stats.norm.cdf((bound - centre) / sd)
        for width in ROPES:
            rows = result.table[(result.table.prior == prior) & (result.table.rope == width)]
            d0 = rows[rows.quantity == "delta0"].iloc[0]
            # (a ROPE wider than the bound holds everything: the cdf is 0 below the support)
            below = np.clip((stats.norm.cdf((-width - centre) / sd) - low) / (high - low), 0, 1)
            above = np.clip((high - stats.norm.cdf((width - centre) / sd)) / (high - low), 0, 1)
            assert d0.p_left == pytest.approx(np.mean(below), abs=1e-9)
            assert d0.p_right == pytest.approx(np.mean(above), abs=1e-9)
            # and within four Monte Carlo errors of the share of delta0's draws in the ROPE
            inside = rope_indicators(post["delta0"].values, width)
            assert d0.p_rope == pytest.approx(inside[..., 1].mean(),
                                              abs=4 * probability_mcse(inside)[1] + 1e-12)
            nxt = rows[rows.quantity == "next"].iloc[0]
            inside = np.mean([t.cdf(width) - t.cdf(-width) for t in populations])
            assert nxt.p_rope == pytest.approx(inside, abs=1e-9)
            assert nxt.p_left == pytest.approx(np.mean([t.cdf(-width) for t in populations]),
                                               abs=1e-9)
        # the fit itself was made at the first ROPE: its numbers are the table's
        first = result.table[(result.table.prior == prior) & (result.table.rope == ROPES[0])]
        nxt = first[first.quantity == "next"][["p_left", "p_rope", "p_right"]].to_numpy()[0]
        np.testing.assert_allclose(nxt, fit.next_dataset.probabilities, atol=1e-12)
        d0 = first[first.quantity == "delta0"].iloc[0]
        assert (d0.p_left, d0.p_rope, d0.p_right) == pytest.approx(
            tuple(fit.population.probabilities), abs=1e-12)
        assert fit.settings["seed"] == result.seed == 7


@pytest.mark.stan
def test_a_prior_is_hierarchical_with_the_same_seed(result, scores, stan_backend):
    """The "paper" column is bc.hierarchical on the pair with the user's seed: the same draws,
    and at a ROPE of 0.01 the same probabilities of delta0 and of the next dataset."""
    direct = bc.hierarchical(scores, "a", "b", rope=0.01, prior="paper", seed=7,
                             backend=stan_backend, **SHORT)
    np.testing.assert_array_equal(result.fits["paper"].idata.posterior["delta0"],
                                  direct.idata.posterior["delta0"])
    rows = result.table[(result.table.prior == "paper") & (result.table.rope == 0.01)]
    columns = ["p_left", "p_rope", "p_right"]
    np.testing.assert_allclose(rows[rows.quantity == "delta0"][columns].to_numpy()[0],
                               direct.population.probabilities, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rows[rows.quantity == "next"][columns].to_numpy()[0],
                               direct.next_dataset.probabilities, rtol=0, atol=1e-12)


@pytest.mark.stan
def test_outputs_and_figure(result):
    decisions = result.decisions("next")
    assert list(decisions.columns) == result.priors and list(decisions.index) == list(ROPES)
    assert not result.stable("delta0")  # "a better" somewhere, "equivalent" at width 10
    summary = result.summary()
    assert "moves with the prior or the ROPE" in summary and "a better" in summary
    # each prior's fit and the ESS it reached, as the fit itself reports them
    for prior, fit in result.fits.items():
        ess = fit.settings["ess"]
        assert (f"{prior} {len(fit.attempts)} attempt(s), ESS {ess['bulk']:.0f} bulk, "
                f"{ess['tail']:.0f} tail (target 1000)") in summary
    for prior, weights in result.reweighted.items():
        assert (f"{prior} from paper's draws (Pareto k {weights.pareto_k:.2f}, importance "
                f"ESS {weights.ess:.0f})") in summary
    # the table's probabilities with four decimals, as every summary writes them
    rows = summary.splitlines()[-len(result.table):]
    for row, (_, expected) in zip(rows, result.table.iterrows()):
        assert all(f" {v:.4f}" in f" {row}" for v in expected[["p_left", "p_rope", "p_right"]])
    assert result.to_markdown().startswith("### Sensitivity of a vs b")
    axes = result.plot()
    assert len(axes) == 2
    for ax in axes:
        assert len(ax.lines) == 3 * len(result.priors) + 1  # + the threshold line
    import matplotlib.pyplot as plt
    plt.close("all")


@pytest.mark.stan
def test_priors_added_later_are_included(scores, stan_backend, monkeypatch):
    wide = HierarchicalPrior(alpha=(0.5, 10.0), beta=(0.01, 0.5))
    monkeypatch.setitem(PRIORS, "wide", wide)
    # fitted, not reweighted: the test compares the two fits' draws
    result = sensitivity(scores, "a", "b", ropes=(0.01,), seed=7, backend=stan_backend,
                         reweight=False, **SHORT)
    assert "wide" in result.priors and result.fits["wide"].settings["prior"] == wide
    assert set(result.table.prior) == set(PRIORS)
    # a custom prior object under a name of its own
    custom = sensitivity(scores, "a", "b", ropes=(0.01,), priors={"mine": wide}, seed=7,
                         backend=stan_backend, **SHORT)
    assert custom.priors == ["mine"]
    np.testing.assert_array_equal(
        custom.fits["mine"].idata.posterior["delta0"], result.fits["wide"].idata.posterior["delta0"])


def test_exported_names_are_the_function_and_class():
    import bayescomp.models.sensitivity_analysis as module

    assert bc.sensitivity is module.sensitivity and callable(bc.sensitivity)
    assert bc.SensitivityResult is SensitivityResult


@pytest.mark.stan
def test_a_fit_in_modes_decides_as_the_fit_does(stan_backend):
    """Where the chains sit in modes (a near-identical pair, whose posterior has two) and the
    quadrature is off, a row decides by the fit's own rule, every mode from its own chains:
    at the fit's ROPE the rows say what bc.hierarchical says (they used the pooled chains'
    errors before); a prior read off those draws decides as its own fit does."""
    made = bc.simulate.near_identical_collection(54, seed=2)
    analysis = sensitivity(made.scores, "a", "b", ropes=(0.01, 0.001),
                           priors=["paper", "kruschke"], seed=1, backend=stan_backend,
                           quadrature=False)
    fit = analysis.fits["paper"]
    assert fit.modes, "the fit should sit in modes: the test is of that path"
    # the other prior read off the same draws, mode by mode: the decisions of its own fit
    assert list(analysis.reweighted) == ["kruschke"] and list(analysis.fits) == ["paper"]
    own = sensitivity(made.scores, "a", "b", ropes=(0.01, 0.001), priors=["kruschke"],
                      seed=1, backend=stan_backend, reweight=False, quadrature=False)
    kruschke = analysis.table[analysis.table.prior == "kruschke"].reset_index(drop=True)
    assert kruschke.decision.equals(own.table.decision)
    paper = analysis.table[analysis.table.prior == "paper"]
    rows = paper.set_index(["rope", "quantity"])["decision"]
    assert rows[(0.01, "delta0")] == fit.population.decision()
    assert rows[(0.01, "next")] == fit.next_dataset.decision()


@pytest.mark.stan
def test_reweighted_priors_agree_with_their_own_fits(result, every_prior_fitted):
    """Two routes to a prior's numbers: its own fit (reweight=False), and the "paper" fit's
    draws reweighted to it. They agree within four Monte Carlo errors (the two estimates'
    errors combined) in every row, and a fitted prior's rows are the same in both."""
    assert set(every_prior_fitted.fits) == set(bc.PRIORS) and not every_prior_fitted.reweighted
    assert result.reweighted, "the test is of the reweighted path: no prior was reweighted"
    assert set(result.fits) | set(result.reweighted) == set(bc.PRIORS)
    assert not set(result.fits) & set(result.reweighted)
    assert {"paper", "gaussian"} <= set(result.fits)   # gaussian is not a prior of nu
    keys = ["prior", "rope", "quantity"]
    fast, full = (r.table.set_index(keys).sort_index() for r in (result, every_prior_fitted))
    columns = ["p_left", "p_rope", "p_right"]
    for prior, weights in result.reweighted.items():
        assert weights.base == "paper" and weights.pareto_k <= 0.7
        assert np.all(fast.loc[prior, "read_from"] == "paper")
        base, own = result.fits["paper"].idata.posterior, every_prior_fitted.fits[prior].idata.posterior
        for width in ROPES:
            rope = bc.Rope(-width, width)
            for quantity, masses in (("delta0", population_masses),
                                     ("next", next_dataset_masses)):
                estimate, error = prior_reweighting.weighted_estimate(masses(base, rope),
                                                                      weights.weights)
                np.testing.assert_allclose(fast.loc[(prior, width, quantity), columns].to_numpy(
                    dtype=float), estimate, atol=1e-12)
                own_masses = masses(own, rope)
                combined = np.hypot(error, probability_mcse(own_masses))
                difference = np.abs(estimate - own_masses.reshape(-1, 3).mean(axis=0))
                assert np.all(difference <= 4 * combined + 1e-12), (prior, width, quantity)
    for prior in result.fits:
        assert fast.loc[prior].equals(full.loc[prior])


@pytest.mark.stan
def test_weights_beyond_the_pareto_bound_mean_a_fit(scores, stan_backend, monkeypatch):
    """With the bound on the Pareto shape below any shape, no prior is reweighted: every one
    is fitted, and its rows are those of reweight=False."""
    monkeypatch.setattr(prior_reweighting, "MAX_PARETO_K", -np.inf)
    result = sensitivity(scores, "a", "b", ropes=(0.01,), priors=["paper", "kruschke"], seed=7,
                         backend=stan_backend, **SHORT)
    assert list(result.fits) == ["paper", "kruschke"] and not result.reweighted
    assert result.table.pareto_k.isna().all()


def outlier_collection(seed=3):
    """8 datasets, 100 scores each (rho 0.1): differences about 0 (sd 0.002 between datasets,
    0.01 within) but for two outliers at +0.03 and -0.02, so that the prior of nu moves the
    population's probabilities by more than their Monte Carlo errors."""
    rng = np.random.default_rng(seed)
    delta = rng.normal(0, 0.002, 8)
    delta[:2] = 0.03, -0.02
    second = rng.uniform(0.7, 0.9, 8)[:, None] + rng.normal(0, 0.02, (8, 100))
    first = second + delta[:, None] + rng.normal(0, 0.01, (8, 100))
    return bc.from_arrays({"a": first, "b": second}, rho=0.1)


@pytest.mark.stan
def test_a_reweighted_prior_too_close_to_call_is_read_by_its_own_quadrature(stan_backend):
    """Kruschke's prior read off the paper prior's clean fit by importance weights. A
    threshold 1.7 of the reweighted draws' errors beyond one of their probabilities (above
    0.5), more than two of the base fit's errors from the base's, is a close call for the
    reweighted draws and not for the base fit's draws; of the (ROPE, question) pairs, the
    one where the two posteriors' probabilities lie furthest apart in the base's errors
    whose threshold (on the side away from the base's, else the other) Kruschke's
    quadrature lies clear of. The reweighted row is then that quadrature, to the digit,
    decided by its own error, as bc.hierarchical reads a close call (before, it was the
    weighted draws); the base's row stays its draws; the quadrature and the weighted draws
    agree within three combined errors (two routes to one number). (Which side clears the
    quadrature depends on the draws: with the threshold always away from the base's, one
    program's draws put it within the quadrature's error.)"""
    scores = outlier_collection()
    ropes = (0.004, 0.006, 0.01)
    options = dict(ropes=ropes, priors=["paper", "kruschke"], seed=3, backend=stan_backend)
    first = sensitivity(scores, "a", "b", **options)
    weights = first.reweighted["kruschke"]
    assert weights.base == "paper"
    posterior = first.fits["paper"].idata.posterior
    candidates = []
    for width in ropes:
        rope = bc.Rope(-width, width)
        for question, masses in (("delta0", population_masses(posterior, rope)),
                                 ("next", next_dataset_masses(posterior, rope))):
            base, base_error = masses.reshape(-1, 3).mean(axis=0), probability_mcse(masses)
            own, own_error = prior_reweighting.weighted_estimate(masses, weights.weights)
            k = int(np.argmax(own))
            candidates.append((abs(own[k] - base[k]) / base_error[k], width, question, k,
                               own[k], own_error[k], base[k], base_error[k]))
    data, scale = prepare(scores, "a", "b", PRIORS["kruschke"])
    grids = {width: quadrature_probabilities(data, scale, bc.Rope(-width, width),
                                             close_call=True)
             for width in ropes}
    chosen = []
    for _, width, question, k, own, own_error, base, base_error in sorted(candidates,
                                                                            reverse=True):
        away = np.sign(own - base)
        for threshold in (own + away * 1.7 * own_error, own - away * 1.7 * own_error):
            if (own > 0.5 and 0.5 < threshold <= 1 and abs(threshold - base) > 2 * base_error
                    and grids[width].settles(threshold)):
                chosen.append((width, question, k, own, own_error, threshold))
    assert chosen
    width, question, k, own, own_error, threshold = chosen[0]
    grid = grids[width]
    exact, error = ((grid.population, grid.population_error) if question == "delta0"
                    else (grid.next_dataset, grid.next_dataset_error))

    closer = sensitivity(scores, "a", "b", threshold=threshold, **options).to_frame()
    at = closer[(closer.rope == width) & (closer.quantity == question)].set_index("prior")
    assert at.loc["paper", "read_from"] == "paper"
    row = at.loc["kruschke"]
    assert row.read_from == "quadrature" and np.isnan(row.pareto_k)
    np.testing.assert_allclose(row[["p_left", "p_rope", "p_right"]].to_numpy(float), exact,
                               rtol=0, atol=1e-12)
    assert row.decision == bc.decide(exact, threshold, region_labels("a", "b"), mcse=error)
    assert abs(exact[k] - own) <= 3 * np.hypot(own_error, error[k])
