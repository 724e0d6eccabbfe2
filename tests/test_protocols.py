"""Paired scores from estimators run on shared splits (bayescomp.data.protocols): known answers."""
from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

pytest.importorskip("sklearn", reason="bayescomp.data.protocols runs scikit-learn estimators")

from sklearn.base import BaseEstimator, ClassifierMixin, clone  # noqa: E402
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.model_selection import (GridSearchCV, GroupKFold, KFold,  # noqa: E402
                                     RepeatedKFold, RepeatedStratifiedKFold, ShuffleSplit,
                                     StratifiedKFold, cross_val_score)
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from bayescomp.baselines.resampled_ttests import (combined_ftest_5x2cv,  # noqa: E402
                                                  paired_ttest_5x2cv)
from bayescomp.data.scores import Scores  # noqa: E402
from bayescomp.data.protocols import (as_5x2, cross_validate_scores, five_by_two,  # noqa: E402
                                 holistic_cross_validate_scores, holistic_folds,
                                 holistic_rotations, holistic_splits,
                                 nested_cross_validate_scores)


# --------------------------------------------------------------------------- fixtures

class Recorder(ClassifierMixin, BaseEstimator):
    """Records the sample ids (column 0 of X) it is fitted on and asked to predict.

    Predicts the last class when feature 1 exceeds ``threshold``, so that different
    thresholds score differently and a grid search has something to choose.
    """

    log: list = []

    def __init__(self, tag="a", threshold=0.0):
        self.tag = tag
        self.threshold = threshold

    def fit(self, X, y):
        X = np.asarray(X)
        Recorder.log.append((self.tag, "fit", X[:, 0].astype(int), self.threshold))
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        X = np.asarray(X)
        Recorder.log.append((self.tag, "predict", X[:, 0].astype(int), self.threshold))
        return np.where(X[:, 1] > self.threshold, self.classes_[-1], self.classes_[0])


class Failing(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        raise RuntimeError("this estimator always fails")


@pytest.fixture(autouse=True, scope="module")
def single_threaded_blas():
    """Tiny fits: multi-threaded BLAS only oversubscribes the shared cores (10x slower)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


@pytest.fixture(autouse=True)
def clear_log():
    Recorder.log.clear()
    yield
    Recorder.log.clear()


def id_data(n=60, seed=0):
    """X = [sample id, informative feature], binary y."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    feature = y + rng.normal(0, 0.8, n)
    return np.column_stack([np.arange(n), feature]), y


def events(tag, kind=None):
    return [e for e in Recorder.log if e[0] == tag and (kind is None or e[1] == kind)]


@pytest.fixture(scope="module")
def data():
    X1, y1 = make_classification(n_samples=90, n_features=6, n_informative=3, flip_y=0.1,
                                 random_state=1)
    X2, y2 = make_classification(n_samples=70, n_features=5, n_informative=2, n_classes=3,
                                 n_clusters_per_class=1, random_state=2)
    return {"one": (X1, y1), "two": (X2, y2)}


ESTIMATORS = {
    "nb": GaussianNB(),
    "logistic": LogisticRegression(max_iter=500),
    "tree": DecisionTreeClassifier(max_depth=3, random_state=0),
}


# --------------------------------------------------------------------------- import

def test_protocols_imports_without_sklearn(run_without_sklearn):
    """The module imports sklearn only inside functions, and then says how to install it."""
    run_without_sklearn(
        "import bayescomp, bayescomp.data.protocols as p\n"
        "assert not any(m == 'sklearn' or m.startswith('sklearn.') for m in sys.modules "
        "if sys.modules[m] is not None)\n"
        "try:\n"
        "    p.holistic_splits(10, 5)\n"
        "except ImportError as e:\n"
        "    assert 'pip install scikit-learn' in str(e), e\n"
        "else:\n"
        "    raise AssertionError('no ImportError')\n")


# --------------------------------------------------------------------------- cross-validation

def test_every_estimator_sees_the_same_splits_even_with_an_unseeded_splitter():
    """The splits are generated once: an unseeded ShuffleSplit still pairs the estimators."""
    X, y = id_data()
    cv = ShuffleSplit(n_splits=4, test_size=0.3, random_state=None)
    scores = cross_validate_scores({"a": Recorder("a"), "b": Recorder("b")}, {"d": (X, y)},
                                   cv=cv)
    fits_a, fits_b = events("a", "fit"), events("b", "fit")
    tests_a, tests_b = events("a", "predict"), events("b", "predict")
    assert len(fits_a) == len(fits_b) == len(tests_a) == len(tests_b) == 4
    for fa, fb, ta, tb in zip(fits_a, fits_b, tests_a, tests_b):
        np.testing.assert_array_equal(fa[2], fb[2])
        np.testing.assert_array_equal(ta[2], tb[2])
        assert not set(fa[2]) & set(ta[2])
    # the same deterministic rule on the same splits: identical scores
    np.testing.assert_array_equal(scores.datasets[0].values[0], scores.datasets[0].values[1])


def test_default_splits_are_10x10_stratified_with_seed_0():
    X, y = id_data()
    scores = cross_validate_scores({"a": Recorder("a")}, {"d": (X, y)})
    expected = list(RepeatedStratifiedKFold(n_splits=10, n_repeats=10,
                                            random_state=0).split(X, y))
    fits, tests = events("a", "fit"), events("a", "predict")
    assert len(fits) == len(tests) == 100
    for (train, test), fit, predict in zip(expected, fits, tests):
        np.testing.assert_array_equal(fit[2], train)
        np.testing.assert_array_equal(predict[2], test)
    assert scores.n_scores.tolist() == [100]
    assert scores.rho[0] == pytest.approx(0.1, abs=1e-15)


def test_scores_equal_cross_val_score_on_the_same_splitter(data):
    cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=3)
    scores = cross_validate_scores(ESTIMATORS, data, cv=cv)
    assert isinstance(scores, Scores)
    assert scores.algorithms == tuple(ESTIMATORS)
    assert scores.dataset_names == ("one", "two")
    for dataset in scores.datasets:
        X, y = data[dataset.name]
        for a, (name, estimator) in enumerate(ESTIMATORS.items()):
            expected = cross_val_score(
                clone(estimator), X, y, scoring="accuracy",
                cv=RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=3))
            np.testing.assert_allclose(dataset.values[a], expected, rtol=0, atol=1e-12)
        assert dataset.rho == pytest.approx(0.2, abs=1e-15)


def test_other_scoring_and_pandas_input(data):
    X, y = data["one"]
    frame, series = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])]), pd.Series(y)
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    estimators = {"nb": GaussianNB(), "logistic": LogisticRegression(max_iter=500)}
    from_frame = cross_validate_scores(estimators, {"one": (frame, series)}, cv=cv,
                                       scoring="neg_log_loss")
    from_numpy = cross_validate_scores(estimators, {"one": (X, y)}, cv=cv,
                                       scoring="neg_log_loss")
    np.testing.assert_allclose(from_frame.datasets[0].values, from_numpy.datasets[0].values,
                               rtol=0, atol=1e-12)
    expected = cross_val_score(GaussianNB(), X, y, cv=cv, scoring="neg_log_loss")
    np.testing.assert_allclose(from_numpy.datasets[0].values[0], expected, rtol=0, atol=1e-12)


def test_n_jobs_does_not_change_the_scores(data):
    cv = RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=5)
    estimators = {"nb": GaussianNB(), "tree": ESTIMATORS["tree"]}
    serial = cross_validate_scores(estimators, data, cv=cv)
    parallel = cross_validate_scores(estimators, data, cv=cv, n_jobs=2)
    for a, b in zip(serial.datasets, parallel.datasets):
        np.testing.assert_array_equal(a.values, b.values)


def test_rho_is_one_over_k_for_k_fold_even_with_unequal_folds():
    X, y = id_data(n=50)  # 50 samples in 4 folds: sizes 13, 13, 12, 12
    scores = cross_validate_scores({"a": Recorder("a")}, {"d": (X, y)}, cv=KFold(4))
    assert scores.rho[0] == pytest.approx(1 / 4, abs=1e-15)


def test_rho_of_a_shuffle_split_is_n_test_over_n_train_plus_n_test():
    X, y = id_data(n=50)
    cv = ShuffleSplit(n_splits=3, test_size=0.25, train_size=0.5, random_state=0)
    scores = cross_validate_scores({"a": Recorder("a"), "b": Recorder("b")}, {"d": (X, y)},
                                   cv=cv)
    n_test, n_train = 13, 25  # ceil(0.25 * 50), floor(0.5 * 50), as scikit-learn rounds
    assert scores.rho[0] == pytest.approx(n_test / (n_train + n_test), abs=1e-15)
    assert [len(e[2]) for e in events("a", "fit")] == [n_train] * 3


def test_an_int_cv_is_stratified_k_fold_for_classes():
    X, y = id_data()
    cross_validate_scores({"a": Recorder("a")}, {"d": (X, y)}, cv=3)
    for (train, _), fit in zip(StratifiedKFold(3).split(X, y), events("a", "fit")):
        np.testing.assert_array_equal(fit[2], train)


def test_group_splitter_gets_the_groups_of_each_dataset():
    X, y = id_data()
    groups = np.arange(len(y)) // 6  # 10 groups of 6
    scores = cross_validate_scores({"a": Recorder("a")}, {"d": (X, y), "e": (X, y)},
                                   cv=GroupKFold(5), groups={"d": groups, "e": groups})
    assert scores.n_scores.tolist() == [5, 5]
    for fit, predict in zip(events("a", "fit"), events("a", "predict")):
        assert not set(groups[fit[2]]) & set(groups[predict[2]])
    with pytest.raises(ValueError, match="dict"):
        cross_validate_scores({"a": Recorder("a")}, {"d": (X, y), "e": (X, y)},
                              cv=GroupKFold(5), groups=groups)
    with pytest.raises(ValueError, match="dataset 'd'.*groups"):
        cross_validate_scores({"a": Recorder("a")}, {"d": (X, y)}, cv=GroupKFold(5),
                              groups=groups[:-1])


def test_regression_defaults_to_repeated_k_fold():
    X, y = make_regression(n_samples=40, n_features=3, noise=5.0, random_state=0)
    scores = cross_validate_scores({"ols": LinearRegression()}, {"reg": (X, y)}, scoring="r2")
    expected = cross_val_score(LinearRegression(), X, y, scoring="r2",
                               cv=RepeatedKFold(n_splits=10, n_repeats=10, random_state=0))
    np.testing.assert_allclose(scores.datasets[0].values[0], expected, rtol=0, atol=1e-12)


def test_a_failing_fit_says_where():
    X, y = id_data()
    with pytest.raises(RuntimeError, match="always fails") as info:
        cross_validate_scores({"ok": Recorder(), "bad": Failing()}, {"d": (X, y)}, cv=3)
    if sys.version_info >= (3, 11):
        assert "dataset 'd', estimator 'bad', split 0" in "".join(info.value.__notes__)


# --------------------------------------------------------------------------- bad input

def _runners():
    grid = {"threshold": [0.0, 0.5]}

    def tuned(e):  # (estimator, grid) pairs; anything but a dict is passed on unchanged
        return {k: (v, grid) for k, v in e.items()} if isinstance(e, dict) else e

    return {
        "cross_validate_scores": lambda e, d: cross_validate_scores(e, d, cv=3),
        "five_by_two": lambda e, d: five_by_two(e, d),
        "nested": lambda e, d: nested_cross_validate_scores(
            tuned(e), d, outer_cv=3, inner_cv=2),
        "holistic": lambda e, d: holistic_cross_validate_scores(
            tuned(e), d, n_folds=5),
    }


@pytest.mark.parametrize("runner", list(_runners()))
def test_bad_input_gives_clear_value_errors(runner):
    run = _runners()[runner]
    X, y = id_data()
    with pytest.raises(ValueError, match="no estimators given"):
        run({}, {"d": (X, y)})
    with pytest.raises(ValueError, match="no datasets given"):
        run({"a": Recorder()}, {})
    with pytest.raises(ValueError, match=r"dataset 'short': X has 60 samples but y has 59"):
        run({"a": Recorder()}, {"d": (X, y), "short": (X, y[:-1])})
    with pytest.raises(ValueError, match=r"dataset 'd': expected a pair \(X, y\)"):
        run({"a": Recorder()}, {"d": X})
    with pytest.raises(ValueError, match="estimator 'a'.*no fit method"):
        run({"a": "not an estimator"}, {"d": (X, y)})
    with pytest.raises(ValueError, match=r"datasets must be a dict \{name: \(X, y\)\}"):
        run({"a": Recorder()}, [(X, y)])
    with pytest.raises(ValueError, match="estimators must be a dict"):
        run([Recorder()], {"d": (X, y)})


def test_other_bad_arguments():
    X, y = id_data()
    with pytest.raises(ValueError, match="one metric"):
        cross_validate_scores({"a": Recorder()}, {"d": (X, y)}, cv=3,
                              scoring=["accuracy", "f1"])
    with pytest.raises(ValueError, match="nested_cross_validate_scores"):
        cross_validate_scores({"a": (Recorder(), {"threshold": [0]})}, {"d": (X, y)}, cv=3)
    with pytest.raises(ValueError, match="refit"):
        holistic_cross_validate_scores({"a": Recorder()}, {"d": (X, y)}, n_folds=5,
                                       refit="all")
    with pytest.raises(ValueError, match="estimator 'a': invalid param_grid"):
        nested_cross_validate_scores({"a": (Recorder(), {"threshold": 0.5})}, {"d": (X, y)})


# --------------------------------------------------------------------------- 5x2cv

def test_as_5x2_follows_the_splitter_order_and_feeds_dietterichs_test():
    X, y = make_classification(n_samples=80, n_features=5, n_informative=2, flip_y=0.2,
                               random_state=4)
    first, second = GaussianNB(), DecisionTreeClassifier(max_depth=2, random_state=0)
    scores = five_by_two({"nb": first, "tree": second}, {"d": (X, y)}, random_state=7)
    assert scores.n_scores.tolist() == [10]
    assert scores.rho[0] == pytest.approx(0.5, abs=1e-15)

    # independently: the splitter's splits in order, split j = fold j % 2 of replication j // 2
    splits = list(RepeatedStratifiedKFold(n_splits=2, n_repeats=5, random_state=7).split(X, y))
    expected = np.empty((5, 2))
    for j, (train, test) in enumerate(splits):
        a = clone(first).fit(X[train], y[train]).score(X[test], y[test])
        b = clone(second).fit(X[train], y[train]).score(X[test], y[test])
        expected[j // 2, j % 2] = a - b
    for i in range(5):  # the two folds of each row partition the data: a replication
        both = np.concatenate([splits[2 * i][1], splits[2 * i + 1][1]])
        np.testing.assert_array_equal(np.sort(both), np.arange(len(y)))
    d = as_5x2(scores, "nb", "tree")
    assert d.shape == (5, 2)
    np.testing.assert_allclose(d, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(as_5x2(scores, "tree", "nb", "d"), -expected, rtol=0,
                               atol=1e-12)

    # Dietterich (1998): t = p_1^(1) / sqrt(mean_i s_i^2), s_i^2 = sum_j (p_i^(j) - pbar_i)^2
    s2 = [(e[0] - e.mean()) ** 2 + (e[1] - e.mean()) ** 2 for e in expected]
    assert np.mean(s2) > 0
    t = expected[0, 0] / np.sqrt(np.mean(s2))
    result = paired_ttest_5x2cv(d)
    assert result.statistic == pytest.approx(t, rel=1e-12)
    assert result.p_value == pytest.approx(2 * stats.t.sf(abs(t), 5), rel=1e-10)
    # Alpaydin (1999): F = sum p^2 / (2 sum s_i^2), df (10, 5)
    f = np.sum(expected ** 2) / (2 * np.sum(s2))
    combined = combined_ftest_5x2cv(d)
    assert combined.statistic == pytest.approx(f, rel=1e-12)
    assert combined.p_value == pytest.approx(stats.f.sf(f, 10, 5), rel=1e-10)


def test_as_5x2_refuses_other_designs(data):
    ten_fold = cross_validate_scores({"nb": GaussianNB(), "tree": ESTIMATORS["tree"]},
                                     {"one": data["one"]}, cv=StratifiedKFold(10))
    with pytest.raises(ValueError, match="rho = 0.5"):
        as_5x2(ten_fold, "nb", "tree")
    both = five_by_two({"nb": GaussianNB(), "tree": ESTIMATORS["tree"]}, data)
    with pytest.raises(ValueError, match="dataset="):
        as_5x2(both, "nb", "tree")
    assert as_5x2(both, "nb", "tree", "two").shape == (5, 2)
    with pytest.raises(ValueError, match="unknown dataset"):
        as_5x2(both, "nb", "tree", "three")
    with pytest.raises(ValueError, match="unknown algorithm"):
        as_5x2(both, "nb", "forest", "one")


def test_five_by_two_is_reproducible_and_seeded(data):
    estimators = {"nb": GaussianNB(), "tree": ESTIMATORS["tree"]}
    a = five_by_two(estimators, data, random_state=1)
    b = five_by_two(estimators, data, random_state=1)
    c = five_by_two(estimators, data, random_state=2)
    np.testing.assert_array_equal(a.datasets[0].values, b.datasets[0].values)
    assert not np.array_equal(a.datasets[0].values, c.datasets[0].values)


# --------------------------------------------------------------------------- nested CV

def test_inner_search_never_sees_the_outer_test_part():
    X, y = id_data(n=48)
    outer = StratifiedKFold(4, shuffle=True, random_state=0)
    grid = {"threshold": [-0.5, 0.5, 1.5]}
    scores, params = nested_cross_validate_scores(
        {"a": (Recorder("a"), grid)}, {"d": (X, y)}, outer_cv=outer,
        inner_cv=StratifiedKFold(3, shuffle=True, random_state=1), return_params=True)
    splits = list(outer.split(X, y))
    log = events("a")
    s, previous = 0, None
    for tag, kind, ids, _ in log:
        train, test = splits[s]
        if kind == "predict" and np.array_equal(ids, test):
            # the outer test part is predicted once, by the model refitted on the whole
            # outer training part just before
            assert previous[1] == "fit" and np.array_equal(previous[2], train)
            s += 1
        else:
            assert set(ids) <= set(train) and not set(ids) & set(test)
        previous = (tag, kind, ids)
    assert s == len(splits) == 4
    # 3 candidates x 3 inner folds (fit + predict) + refit + outer predict, per outer split
    assert len(log) == 4 * (3 * 3 * 2 + 2)
    assert params["params"].map(lambda p: p["threshold"]).isin(grid["threshold"]).all()
    assert scores.rho[0] == pytest.approx(0.25, abs=1e-15)


def test_nested_scores_equal_a_manual_loop(data):
    specs = {"tree": (DecisionTreeClassifier(random_state=0), {"max_depth": [1, 2, 4]}),
             "logistic": (LogisticRegression(max_iter=500), {"C": [0.01, 1.0]}),
             "nb": GaussianNB()}
    outer = StratifiedKFold(4, shuffle=True, random_state=0)
    scores, params = nested_cross_validate_scores(specs, data, outer_cv=outer,
                                                  return_params=True)
    assert scores.algorithms == ("tree", "logistic", "nb")
    for dataset in scores.datasets:
        X, y = data[dataset.name]
        for a, (name, spec) in enumerate(specs.items()):
            estimator, grid = spec if isinstance(spec, tuple) else (spec, None)
            expected, chosen = [], []
            for train, test in outer.split(X, y):
                if grid is None:
                    model = clone(estimator).fit(X[train], y[train])
                    chosen.append({})
                else:  # the default inner splitter: StratifiedKFold(5, shuffle, seed 0)
                    model = GridSearchCV(estimator, grid, scoring="accuracy",
                                         cv=StratifiedKFold(5, shuffle=True, random_state=0)
                                         ).fit(X[train], y[train])
                    chosen.append(model.best_params_)
                expected.append(model.score(X[test], y[test]))
            np.testing.assert_allclose(dataset.values[a], expected, rtol=0, atol=1e-12)
            rows = params[(params["dataset"] == dataset.name) & (params["algorithm"] == name)]
            assert rows["split"].tolist() == [0, 1, 2, 3]
            assert rows["params"].tolist() == chosen


def test_nested_default_outer_is_10x10():
    X, y = id_data()
    scores = nested_cross_validate_scores({"a": Recorder("a")}, {"d": (X, y)})
    assert scores.n_scores.tolist() == [100]
    assert scores.rho[0] == pytest.approx(0.1, abs=1e-15)
    expected = list(RepeatedStratifiedKFold(n_splits=10, n_repeats=10,
                                            random_state=0).split(X, y))
    for (train, _), fit in zip(expected, events("a", "fit")):
        np.testing.assert_array_equal(fit[2], train)


# --------------------------------------------------------------------------- holistic CV

def test_holistic_rotations_follow_the_formula_for_n5_t2():
    y = np.repeat([0, 1, 2], [20, 15, 15])
    N, t = 5, 2
    splits = holistic_splits(y, n_folds=N, train_size=t, random_state=3)
    # the folds, computed independently: the test parts of a shuffled StratifiedKFold
    folds = [test for _, test in StratifiedKFold(N, shuffle=True, random_state=3).split(
        np.zeros(len(y)), y)]
    for a, b in zip(holistic_folds(y, N, random_state=3), folds):
        np.testing.assert_array_equal(a, b)
    everything = np.sort(np.concatenate(folds))
    np.testing.assert_array_equal(everything, np.arange(len(y)))  # disjoint and covering
    for fold in folds:  # stratified: 4 / 3 / 3 of each class
        assert np.bincount(y[fold]).tolist() == [4, 3, 3]

    assert len(splits) == N
    times_tested = np.zeros(len(y), dtype=int)
    for r, (train, validation, test) in enumerate(splits):
        train_folds = [(i + r) % N for i in range(t)]
        np.testing.assert_array_equal(train, np.sort(np.concatenate(
            [folds[f] for f in train_folds])))
        np.testing.assert_array_equal(validation, folds[(N - 2 + r) % N])
        np.testing.assert_array_equal(test, folds[(N - 1 + r) % N])
        assert not (set(train) & set(validation) or set(train) & set(test)
                    or set(validation) & set(test))
        times_tested[test] += 1
        assert holistic_rotations(N, t)[r] == (tuple(train_folds), (3 + r) % 5, (4 + r) % 5)
    assert (times_tested == 1).all()
    assert holistic_rotations(5, 2)[0] == ((0, 1), 3, 4)
    assert holistic_rotations(5, 2)[3] == ((3, 4), 1, 2)


def test_holistic_defaults_and_reproducibility():
    splits = holistic_splits(40, n_folds=4)  # a sample count: plain shuffled KFold
    for train, validation, test in splits:  # train_size N-2: all folds used
        np.testing.assert_array_equal(np.sort(np.concatenate([train, validation, test])),
                                      np.arange(40))
    again, other = holistic_splits(40, n_folds=4), holistic_splits(40, 4, random_state=1)
    for (a, _, _), (b, _, _) in zip(splits, again):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a[2], b[2]) for a, b in zip(splits, other))
    folds = [test for _, test in KFold(4, shuffle=True, random_state=0).split(np.zeros(40))]
    np.testing.assert_array_equal(splits[0][2], folds[3])


@pytest.mark.parametrize("n_folds, train_size, message", [
    (5, 0, "between 1 and n_folds - 2 = 3"),
    (5, 4, "between 1 and n_folds - 2 = 3"),
    (5, 2.0, "whole number"),
    (2, None, "n_folds must be an integer >= 3"),
])
def test_holistic_rejects_bad_sizes(n_folds, train_size, message):
    with pytest.raises(ValueError, match=message):
        holistic_splits(50, n_folds, train_size)
    X, y = id_data()
    with pytest.raises(ValueError, match=message):
        holistic_cross_validate_scores({"a": Recorder()}, {"d": (X, y)}, n_folds=n_folds,
                                       train_size=train_size)


def test_holistic_rejects_datasets_it_cannot_cut():
    X, y = id_data()
    with pytest.raises(ValueError, match="dataset 'tiny': 4 samples cannot be cut into 5"):
        holistic_cross_validate_scores({"a": Recorder()}, {"d": (X, y), "tiny": (X[:4], y[:4])},
                                       n_folds=5)
    with pytest.raises(ValueError, match="dataset 'reg'.*stratify=False"):
        holistic_cross_validate_scores({"a": Recorder()}, {"reg": (X, X[:, 1])}, n_folds=5)


def test_holistic_tunes_on_validation_only_and_tests_once():
    X, y = id_data(n=50)
    grid = {"threshold": [-0.5, 0.5, 1.5]}
    scores, params = holistic_cross_validate_scores(
        {"a": (Recorder("a"), grid)}, {"d": (X, y)}, n_folds=5, train_size=2,
        random_state=0, return_params=True)
    splits = holistic_splits(y, 5, 2, random_state=0)
    log = events("a")
    per_rotation = 3 * 2 + 1  # fit + validate per candidate, then the test fold once
    assert len(log) == 5 * per_rotation
    for r, (train, validation, test) in enumerate(splits):
        block = log[r * per_rotation:(r + 1) * per_rotation]
        for c, threshold in enumerate(grid["threshold"]):
            fit, check = block[2 * c], block[2 * c + 1]
            assert fit[1] == "fit" and fit[3] == threshold
            np.testing.assert_array_equal(fit[2], train)
            assert check[1] == "predict"
            np.testing.assert_array_equal(check[2], validation)
        final = block[-1]
        assert final[1] == "predict" and final[3] == params["params"][r]["threshold"]
        np.testing.assert_array_equal(final[2], test)
    # each fold is 10 samples: rho = 10 / (2 * 10 + 10)
    assert scores.rho[0] == pytest.approx(1 / 3, abs=1e-15)


@pytest.mark.parametrize("refit", ["train", "train+validation"])
def test_holistic_scores_equal_a_manual_loop(data, refit):
    grid = {"max_depth": [1, 2, 3, 5]}
    specs = {"tree": (DecisionTreeClassifier(random_state=0), grid), "nb": GaussianNB()}
    N, t = 5, 2
    scores, params = holistic_cross_validate_scores(
        specs, data, n_folds=N, train_size=t, random_state=2, refit=refit, return_params=True)
    for dataset in scores.datasets:
        X, y = data[dataset.name]
        splits = holistic_splits(y, N, t, random_state=2)
        for a, (name, spec) in enumerate(specs.items()):
            estimator, grid = spec if isinstance(spec, tuple) else (spec, {})
            # ParameterGrid order for one parameter: the listed order; untuned: one candidate
            candidates = [{k: v} for k, values in grid.items() for v in values] or [{}]
            expected, chosen, rhos = [], [], []
            for train, validation, test in splits:
                best, best_score = None, -np.inf
                for c in candidates:
                    model = clone(estimator).set_params(**c).fit(X[train], y[train])
                    s = model.score(X[validation], y[validation])
                    if s > best_score:
                        best, best_score = c, s
                fit_on = train if refit == "train" else np.concatenate([train, validation])
                model = clone(estimator).set_params(**best).fit(X[np.sort(fit_on)],
                                                                y[np.sort(fit_on)])
                expected.append(model.score(X[test], y[test]))
                chosen.append(best)
                rhos.append(len(test) / (len(fit_on) + len(test)))
            np.testing.assert_allclose(dataset.values[a], expected, rtol=0, atol=1e-12)
            rows = params[(params["dataset"] == dataset.name) & (params["algorithm"] == name)]
            assert rows["params"].tolist() == chosen
            assert dataset.rho == pytest.approx(np.mean(rhos), abs=1e-15)
    # refitting on validation too changes rho: one more fold of training data
    # dataset "one": 90 samples, 5 folds of 18
    assert scores.rho[0] == pytest.approx(18 / (3 * 18 + 18) if refit == "train+validation"
                                          else 18 / (2 * 18 + 18), abs=1e-15)
