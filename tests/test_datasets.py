"""The built-in example scores (bayescomp.data.datasets) and their tie to the generating script."""
from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd
import pytest

from bayescomp.data.scores import Scores
from bayescomp.data.datasets import load_classifiers
from bayescomp.data.datasets import make_classifiers as gen

ALGORITHMS = ("naive_bayes", "logistic", "tree", "forest")
N_DATASETS = 17
N_SCORES = 100  # 10 runs x 10 folds


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return load_classifiers(as_frame=True)


@pytest.fixture(scope="module")
def scores() -> Scores:
    return load_classifiers()


def test_csv_is_a_package_resource():
    source = resources.files("bayescomp.data.datasets").joinpath("classifiers.csv")
    assert source.is_file()
    assert len(source.read_bytes()) < 1_000_000


def test_scores_shape_and_rho(scores):
    assert isinstance(scores, Scores)
    assert scores.algorithms == ALGORITHMS
    assert len(scores) == N_DATASETS
    assert scores.dataset_names == tuple(gen.DATASETS)
    for dataset in scores.datasets:
        assert dataset.values.shape == (len(ALGORITHMS), N_SCORES)
    np.testing.assert_array_equal(scores.n_scores, N_SCORES)
    np.testing.assert_allclose(scores.rho, 0.1)


def test_scores_are_accuracies(scores):
    values = np.concatenate([d.values.ravel() for d in scores.datasets])
    assert np.all((values >= 0) & (values <= 1))
    # not a degenerate file: the datasets differ in difficulty and the classifiers differ
    means = np.array([d.values.mean(axis=1) for d in scores.datasets])
    assert means.min() < 0.6 and means.max() > 0.95
    assert len(set(means.argmax(axis=1))) >= 3  # at least three different winners


def test_frame_columns_and_order(frame):
    assert list(frame.columns) == ["dataset", "algorithm", "run", "fold", "score"]
    assert len(frame) == N_DATASETS * len(ALGORITHMS) * N_SCORES
    assert frame["run"].dtype.kind == "i" and frame["fold"].dtype.kind == "i"
    assert sorted(frame["run"].unique()) == list(range(10))
    assert sorted(frame["fold"].unique()) == list(range(10))
    # rows ordered by dataset, algorithm (as in the script), run, fold
    key = pd.DataFrame({
        "d": frame["dataset"].map({n: i for i, n in enumerate(gen.DATASETS)}),
        "a": frame["algorithm"].map({n: i for i, n in enumerate(gen.ALGORITHMS)}),
        "r": frame["run"], "f": frame["fold"]})
    assert not key.isna().any().any()
    assert key.sort_values(["d", "a", "r", "f"]).index.equals(frame.index)


def test_folds_are_paired(frame):
    counts = frame.groupby(["dataset", "run", "fold", "algorithm"]).size()
    assert (counts == 1).all()
    per_split = frame.groupby(["dataset", "run", "fold"])["algorithm"].agg(
        lambda a: tuple(sorted(a)))
    assert len(per_split) == N_DATASETS * N_SCORES
    assert (per_split == tuple(sorted(ALGORITHMS))).all()


def test_loading_does_not_need_scikit_learn(run_without_sklearn):
    run_without_sklearn(
        "from bayescomp.data.datasets import load_classifiers\n"
        "s = load_classifiers(); f = load_classifiers(as_frame=True)\n"
        "assert len(s) == 17 and len(f) == 6800\n"
        "assert not any(m == 'sklearn' or m.startswith('sklearn.') for m in sys.modules "
        "if sys.modules[m] is not None)\n")


@pytest.mark.parametrize("algorithm", ["naive_bayes", "tree"])
def test_scores_match_a_fresh_cross_validation(frame, algorithm):
    """Known answer: re-running the script's cross-validation on iris gives the CSV's scores."""
    pytest.importorskip(
        "sklearn", reason="scikit-learn is needed to re-run the cross-validation that made "
                          "the example scores (only loading them works without it)")
    X, y = gen.load_dataset("iris")
    splits = gen.make_splits(X, y)
    assert len(splits) == N_SCORES
    expected = gen.cross_validate(X, y, splits, algorithm)
    stored = (frame[(frame["dataset"] == "iris") & (frame["algorithm"] == algorithm)]
              .sort_values(["run", "fold"])["score"].to_numpy())
    np.testing.assert_allclose(stored, expected, rtol=0, atol=1e-6)


def test_splits_are_shared_and_stratified():
    pytest.importorskip("sklearn", reason="scikit-learn is needed to rebuild the splits")
    X, y = gen.load_dataset("iris")
    first, second = gen.make_splits(X, y), gen.make_splits(X, y)
    for (train_a, test_a), (train_b, test_b) in zip(first, second):
        np.testing.assert_array_equal(train_a, train_b)
        np.testing.assert_array_equal(test_a, test_b)
    # each run is a partition of the data into 10 stratified folds
    for run in range(10):
        tests = [test for _, test in first[run * 10:(run + 1) * 10]]
        np.testing.assert_array_equal(np.sort(np.concatenate(tests)), np.arange(len(y)))
        for test in tests:
            assert np.bincount(y[test], minlength=3).tolist() == [5, 5, 5]
