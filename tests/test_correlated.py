"""The correlated t-test against published numbers, scipy and Monte Carlo."""
import os
from pathlib import Path

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayescomp as bc

SHARED = Path(os.environ.get("BAYESCOMP_SHARED", Path(__file__).resolve().parents[2] / "shared"))
KCV = SHARED / "data" / "kcv_example_auc.csv"


@pytest.fixture(scope="module")
def kcv():
    if not KCV.exists():
        pytest.skip(f"reference data {KCV} is absent (../shared is not beside the checkout)")
    return bc.from_wide(pd.read_csv(KCV), dataset="DB", run="Rep", fold="Fold")


@pytest.mark.parametrize("first, second, expected", [
    ("AlgA", "AlgB", (0.002339103, 0.003762019, 0.993898878)),
    ("AlgC", "AlgD", (0.1984274, 0.2716592, 0.5299133)),
])
def test_scmamp_published_probabilities(kcv, first, second, expected):
    # scmamp's vignette, dataset DB 5, rho 0.1 (inferred from 10 folds), ROPE [-0.01, 0.01]
    result = bc.correlated_ttest(kcv, first, second, dataset="5", rope=0.01)
    assert result.posterior.rho == pytest.approx(0.1)
    np.testing.assert_allclose(result.probabilities, expected, atol=5e-7)


def make_scores(n_runs=10, n_folds=10, shift=0.01, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(0.8, 0.03, n_runs * n_folds)
    b = a - shift + rng.normal(0, 0.02, a.size)
    return bc.from_arrays({"a": a, "b": b}, n_folds=n_folds), a - b


def test_closed_form_matches_formula_and_scipy():
    scores, x = make_scores()
    result = bc.correlated_ttest(scores, "a", "b", rope=0.01)
    n, rho = x.size, 0.1
    scale = np.sqrt((1 / n + rho / (1 - rho)) * np.var(x, ddof=1))
    posterior = stats.t(n - 1, loc=x.mean(), scale=scale)
    expected = [posterior.cdf(-0.01), posterior.cdf(0.01) - posterior.cdf(-0.01), posterior.sf(0.01)]
    np.testing.assert_allclose(result.probabilities, expected, rtol=1e-12, atol=1e-15)
    assert result.posterior.scale == pytest.approx(scale)
    # Nadeau-Bengio: the same corrected variance in a classical t statistic
    t = x.mean() / scale
    assert result.nb_statistic == pytest.approx(t)
    assert result.nb_p_value == pytest.approx(2 * stats.t.sf(abs(t), n - 1))
    assert result.nb_p_greater == pytest.approx(stats.t.sf(t, n - 1))
    assert result.nb_p_less == pytest.approx(stats.t.cdf(t, n - 1))


def test_rho_zero_is_the_ordinary_paired_t_test():
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.7, 0.05, 30), rng.normal(0.69, 0.05, 30)
    result = bc.correlated_ttest(bc.from_arrays({"a": a, "b": b}, rho=0.0), "a", "b")
    reference = stats.ttest_rel(a, b)
    assert result.nb_statistic == pytest.approx(reference.statistic)
    assert result.nb_p_value == pytest.approx(reference.pvalue)


def test_probabilities_agree_with_monte_carlo_draws():
    scores, _ = make_scores(shift=0.012, seed=4)
    result = bc.correlated_ttest(scores, "a", "b", rope=(-0.01, 0.015))
    draws = result.sample(200_000, seed=11)
    shares = result.rope.shares(draws)
    # binomial standard error of a share from 200,000 independent draws is at most 0.0012
    np.testing.assert_allclose(shares, result.probabilities, atol=5 * 0.0012)
    np.testing.assert_array_equal(draws, result.sample(200_000, seed=11))


def test_intervals_equal_tailed_and_highest_density():
    scores, x = make_scores(seed=5)
    result = bc.correlated_ttest(scores, "a", "b")
    eti = result.interval(0.9, kind="eti")
    hdi = result.interval(0.9, kind="hdi")
    posterior = stats.t(x.size - 1, loc=x.mean(), scale=result.posterior.scale)
    np.testing.assert_allclose(eti, posterior.ppf([0.05, 0.95]))
    np.testing.assert_allclose(hdi, eti)
    # the HDI is the shortest 90% interval: shifting it lengthens any interval of equal mass
    shifted_low = posterior.ppf(0.06)
    assert posterior.ppf(0.96) - shifted_low > hdi[1] - hdi[0]


def test_labels_name_the_algorithms_and_sign_convention():
    scores, _ = make_scores(shift=0.05, seed=6)
    result = bc.correlated_ttest(scores, "a", "b", rope=0.01)
    assert result.decision() == "a better"
    flipped = bc.correlated_ttest(scores, "b", "a", rope=0.01)
    np.testing.assert_allclose(flipped.probabilities, result.probabilities[::-1])
    assert flipped.decision() == "a better"
    assert "P(a better)" in result.summary()


def test_constant_differences_give_a_point_mass_with_a_warning():
    a = np.linspace(0.7, 0.9, 20)
    scores = bc.from_arrays({"a": a, "b": a - 0.02}, n_folds=10)
    with pytest.warns(bc.ConstantDifferencesWarning, match="dataset '0'"):
        result = bc.correlated_ttest(scores, "a", "b", rope=0.01)
    np.testing.assert_array_equal(result.probabilities, [0, 0, 1])
    assert result.nb_statistic == np.inf and result.nb_p_value == 0
    with pytest.warns(bc.ConstantDifferencesWarning):
        same = bc.correlated_ttest(bc.from_arrays({"a": a, "b": a}, n_folds=10), "a", "b", rope=0.01)
    np.testing.assert_array_equal(same.probabilities, [0, 1, 0])
    assert same.nb_p_value == 1.0
    assert same.interval() == (0.0, 0.0)


def test_dataset_selection_and_all_datasets():
    rng = np.random.default_rng(7)
    a = [rng.normal(0.8, 0.02, 20), rng.normal(0.8, 0.02, 50)]
    b = [row - 0.01 + rng.normal(0, 0.01, row.size) for row in a]
    scores = bc.from_arrays({"a": a, "b": b}, rho=[0.1, 0.2], datasets=["x", "y"])
    with pytest.raises(ValueError, match="2 datasets"):
        bc.correlated_ttest(scores, "a", "b")
    results = bc.correlated_ttests(scores, "a", "b", rope=0.01)
    single = bc.correlated_ttest(scores, "a", "b", dataset="y", rope=0.01)
    np.testing.assert_array_equal(results[1].probabilities, single.probabilities)
    assert [r.posterior.n for r in results] == [20, 50]
    assert [r.posterior.rho for r in results] == [0.1, 0.2]
    frame = single.to_frame()
    assert frame.loc[0, "p_right"] == single.probabilities[2]
    with pytest.raises(ValueError, match="unknown algorithm 'c'"):
        bc.correlated_ttest(scores, "a", "c", dataset="x")


@pytest.mark.parametrize("rope", [-0.01, (0.02, 0.01), (0.01, 0.02), "wide", np.nan])
def test_bad_rope(rope):
    scores, _ = make_scores()
    with pytest.raises(ValueError, match="ROPE"):
        bc.correlated_ttest(scores, "a", "b", rope=rope)


def test_a_rope_in_other_units_warns_python_users_too():
    """Percent scores with a fraction ROPE: the library itself warns, naming the dataset; a
    ROPE in the scores' units is silent."""
    rng = np.random.default_rng(5)
    percent = bc.from_arrays({"a": [rng.uniform(70, 80, 20), rng.uniform(60, 70, 20)],
                              "b": [rng.uniform(70, 80, 20), rng.uniform(60, 70, 20)]},
                             n_folds=10, datasets=["iris", "wine"])
    with pytest.warns(bc.exceptions.InputWarning, match="tiny next to the scores.*'wine'"):
        bc.correlated_ttest(percent, "a", "b", dataset="wine", rope=0.01)
    with pytest.warns(bc.exceptions.InputWarning, match="on all 2 datasets"):
        bc.correlated_ttests(percent, "a", "b", rope=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bc.correlated_ttests(percent, "a", "b", rope=1.0)
