"""The simulation study and the naive-Bayes process: known answers only.

The Stan part is a reduced study (delta0 = 0, k = 10 and 30, 40 collections each, 20 scores
per dataset, 2 chains x (200 warm-up + 200 draws)): 80 fits, 30-50 s on two busy cores.
"""
import matplotlib

matplotlib.use("Agg")

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayescomp import simulate
from bayescomp.validation import study
from bayescomp.presentation.plots import validation as validation_plots
from bayescomp.validation.simulate import stratified_folds

# 20 splits per dataset instead of 100; the fits at the package's settings, which pass their
# diagnostics here (shorter chains failed R-hat on every fit and paid for retries: 2.4 s a fit
# against 1.1 s)
REDUCED = dict(n_scores=20, seed=20170518, n_jobs=2)


# --------------------------------------------------------------------------- naive Bayes

def test_stratified_folds_balance_classes_and_sizes():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 1003)
    assignment = stratified_folds(y, 10, 10, rng)
    for run in assignment:
        sizes = np.bincount(run, minlength=10)
        positives = np.bincount(run[y == 1], minlength=10)
        assert sizes.max() - sizes.min() <= 1
        assert positives.max() - positives.min() <= 1
    # runs are reshuffled: the same instance lands in different folds
    assert np.mean(assignment[0] == assignment[1]) < 0.2


def test_naive_bayes_mean_difference_is_delta():
    """Known truth: each learns 'class = feature', accuracy theta and theta - delta_i."""
    rng = np.random.default_rng(1)
    delta = rng.uniform(-0.05, 0.05, 300)
    sim = simulate.cv_naive_bayes_collection(300, delta, theta=0.8, n_samples=1000, seed=2)
    means = sim.scores.mean_differences("a", "b")
    # the CV mean estimates the accuracy difference on the n instances: its sd is
    # sqrt((theta (1 - theta) + theta2 (1 - theta2)) / n) = sigma / sqrt(folds)
    sd = sim.sigma / np.sqrt(10)
    z = (means - delta) / sd
    assert abs(z.mean()) < 4 / np.sqrt(300)
    low, high = stats.chi2.ppf([0.0005, 0.9995], 299) / 299
    assert low < z.var(ddof=1) < high
    accuracy_a = np.mean([d.values[0].mean() for d in sim.scores.datasets])
    assert accuracy_a == pytest.approx(0.8, abs=4 * np.sqrt(0.16 / 300_000))
    assert np.all(sim.scores.rho == 0.1)
    assert np.all(sim.scores.n_scores == 100)


def test_naive_bayes_fold_differences_are_positively_correlated():
    """Folds of different runs share about n / k^2 test instances: correlation 1/k."""
    delta = np.full(400, 0.02)
    sim = simulate.cv_naive_bayes_collection(400, delta, n_samples=1000, seed=3)
    residuals = np.array(sim.scores.differences("a", "b")) - delta[:, None]
    corr = np.corrcoef(residuals.T)
    same_run = np.kron(np.eye(10), np.ones((10, 10))).astype(bool)
    off_diagonal = ~np.eye(100, dtype=bool)
    across_runs = corr[~same_run].mean()
    within_run = corr[same_run & off_diagonal].mean()
    # 4500 pairs of 400 datasets: the average has a standard error well below 0.01
    assert 0.07 < across_runs < 0.13
    assert abs(within_run) < 0.03      # disjoint test sets of one run
    assert corr[off_diagonal].mean() > 0.05


def test_naive_bayes_seeded_and_validated():
    a = simulate.cv_naive_bayes_collection(3, [0.0, 0.01, 0.02], n_samples=[100, 200, 300],
                                           runs=2, folds=5, seed=7)
    b = simulate.cv_naive_bayes_collection(3, [0.0, 0.01, 0.02], n_samples=[100, 200, 300],
                                           runs=2, folds=5, seed=7)
    for x, y in zip(a.scores.differences("a", "b"), b.scores.differences("a", "b")):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(a.scores.n_scores, [10, 10, 10])
    assert a.delta0 == pytest.approx(0.01)
    with pytest.raises(ValueError, match="theta - delta_i"):
        simulate.cv_naive_bayes_collection(2, 0.4, theta=0.8)
    with pytest.raises(ValueError, match="n_samples"):
        simulate.cv_naive_bayes_collection(2, 0.0, n_samples=10, folds=10)


# --------------------------------------------------------------------------- aggregation

def _fake_fit(p_by_delta0):
    """A stand-in for hierarchical(): fixed probabilities, shrunken = raw / 2."""
    class Fake:
        def __init__(self, scores, rope):
            means = scores.mean_differences("a", "b")
            self.next_dataset = SimpleNamespace(
                probabilities=np.array(p_by_delta0(float(np.mean(means)))))
            self.population = SimpleNamespace(mean=float(np.mean(means)))
            self.datasets = pd.DataFrame({"mean": means, "delta_mean": means / 2})
            self.diagnostics = type("D", (), {"divergences": 0, "ok": True, "problems": ()})()
            self.settings = {}

    def fit(scores, first, second, *, rope, seed, baselines, **options):
        return Fake(scores, rope)
    return fit


def test_aggregation_power_curve_and_figures_without_stan(monkeypatch):
    # "difference" whenever the observed mean exceeds the ROPE, else "equivalence"
    monkeypatch.setattr(study, "hierarchical", _fake_fit(
        lambda m: (0.0, 0.0, 1.0) if m > 0.01 else (0.0, 1.0, 0.0)))
    result = study.power_curve((0.0, 0.03), n_datasets=8, repetitions=6, sigma0=0.001,
                               n_scores=20, seed=1)
    table = result.table.set_index("delta0")
    assert list(table["runs"]) == [6, 6]
    assert table.loc[0.0, "hier_difference_count"] == 0
    assert table.loc[0.0, "hier_equivalence_count"] == 6
    assert table.loc[0.03, "hier_difference_rate"] == 1.0
    assert table.loc[0.03, "signed_rank_rate"] == 1.0     # 8 datasets, all means positive
    for name in ("signed_rank", "hier_difference", "hier_equivalence"):
        assert (table[f"{name}_low"] <= table[f"{name}_rate"]).all()
        assert (table[f"{name}_rate"] <= table[f"{name}_high"]).all()
    # shrunken = raw / 2 is closer to delta_i near 0 only; the table reports both
    assert (table["rmse_shrunk"] > 0).all() and (table["rmse_raw"] > 0).all()
    ax = validation_plots.plot_power(result)
    assert len(ax.get_lines()) >= 3
    axes = validation_plots.plot_study(result)
    assert len(axes) == 2
    assert "0.01" in result.summary()


def test_seeds_do_not_depend_on_jobs_or_other_cells(monkeypatch):
    monkeypatch.setattr(study, "hierarchical", _fake_fit(lambda m: (0.2, 0.6, 0.2)))
    alone = study.run_study((0.0,), (6,), repetitions=3, n_scores=20, seed=5, n_jobs=1)
    mixed = study.run_study((0.005, 0.0), (6, 7), repetitions=3, n_scores=20, seed=5, n_jobs=2)
    same = mixed.runs[(mixed.runs.delta0 == 0.0) & (mixed.runs.n_datasets == 6)]
    columns = ["run", "seed", "wilcoxon_p", "mse_raw"]
    pd.testing.assert_frame_equal(alone.runs[columns].reset_index(drop=True),
                                  same[columns].reset_index(drop=True))


@pytest.mark.parametrize("process", ["naive_bayes", "cauchy", "mixture"])
def test_other_processes_run(monkeypatch, process):
    monkeypatch.setattr(study, "hierarchical", _fake_fit(lambda m: (0.1, 0.8, 0.1)))
    result = study.run_study((0.01,), (5,), repetitions=2, process=process, seed=2)
    assert len(result.runs) == 2 and set(result.runs["process"]) == {process}
    assert np.isfinite(result.table["rmse_raw"]).all()
    if process == "naive_bayes":
        # 1000 instances: the raw means' error is about sqrt(0.32 / 1000) = 0.018
        assert 0.005 < result.table["rmse_raw"].iloc[0] < 0.05


def test_run_study_validates():
    with pytest.raises(ValueError, match="process"):
        study.run_study(process="bernoulli")
    with pytest.raises(ValueError, match="multiple"):
        study.run_study(n_scores=25)
    with pytest.raises(ValueError, match="seed"):
        study.run_study(fit_options={"seed": 1})


# --------------------------------------------------------------------------- Stan

@pytest.fixture(scope="module")
def reduced_study(stan_backend):
    return study.run_study((0.0,), (10, 30), repetitions=40, **REDUCED)


@pytest.mark.stan
def test_null_study_hierarchical_never_declares_a_difference(reduced_study):
    runs = reduced_study.runs
    n = len(runs)
    assert n == 80
    # the paper's finding is zero false differences; allow what a 2% rate allows
    differences = int(runs["hier_difference"].sum())
    assert stats.binomtest(differences, n, 0.02, alternative="greater").pvalue > 0.001
    assert differences <= 1


@pytest.mark.stan
def test_null_study_signed_rank_rejects_at_its_level(reduced_study):
    runs = reduced_study.runs
    rejections = int(runs["signed_rank_reject"].sum())
    assert stats.binomtest(rejections, len(runs), 0.05).pvalue > 0.001
    # and the p-values of a valid test are (super-)uniform under the null
    assert stats.kstest(runs["wilcoxon_p"], "uniform", alternative="greater").pvalue > 0.001


@pytest.mark.stan
def test_null_study_shrinkage_beats_raw_means(reduced_study):
    table = reduced_study.table
    # raw means: sd sigma_i sqrt((1 + 19 rho) / 20) with sigma_i ~ U(0.02, 0.04),
    # E[sigma^2] = (0.04^3 - 0.02^3) / (3 * 0.02)
    expected_raw = np.sqrt((0.04 ** 3 - 0.02 ** 3) / 0.06 * (1 + 19 * 0.1) / 20)
    np.testing.assert_allclose(table["rmse_raw"], expected_raw, rtol=0.15)
    # delta_i spread 0.0025 against noise 0.011: shrinkage must help a lot
    assert (table["rmse_shrunk"] < 0.7 * table["rmse_raw"]).all()
    assert set(table["n_datasets"]) == {10, 30}
    assert table["runs"].tolist() == [40, 40]
