"""The data model: constructors agree with each other, bad input is named precisely."""
import numpy as np
import pandas as pd
import pytest

import bayescomp as bc


def long_frame(n_datasets=3, n_runs=2, n_folds=5, algorithms=("a", "b", "c"), seed=0):
    rng = np.random.default_rng(seed)
    rows = [(f"d{d}", alg, r, f, rng.uniform(0.6, 0.9))
            for d in range(n_datasets) for alg in algorithms
            for r in range(n_runs) for f in range(n_folds)]
    return pd.DataFrame(rows, columns=["dataset", "algorithm", "run", "fold", "score"])


def test_long_wide_arrays_and_csv_agree(tmp_path):
    long = long_frame()
    from_long = bc.from_long(long)
    wide = long.pivot(index=["dataset", "run", "fold"], columns="algorithm",
                      values="score").reset_index()
    from_wide = bc.from_wide(wide)
    arrays = {alg: np.vstack([long[(long.dataset == d) & (long.algorithm == alg)]
                              .sort_values(["run", "fold"]).score.to_numpy()
                              for d in ["d0", "d1", "d2"]]) for alg in "abc"}
    from_arrays = bc.from_arrays(arrays, n_folds=5, datasets=["d0", "d1", "d2"])
    long.sample(frac=1, random_state=1).to_csv(tmp_path / "scores.csv", index=False)
    from_csv = bc.read_csv(tmp_path / "scores.csv")
    from_csv = from_csv.subset(datasets=from_long.dataset_names, algorithms=from_long.algorithms)
    # the wide file, read with the layout detected (no algorithm and score columns)
    wide.to_csv(tmp_path / "wide.csv", index=False)
    from_wide_csv = bc.read_csv(tmp_path / "wide.csv")
    for other in (from_wide, from_arrays, from_csv, from_wide_csv):
        assert other.algorithms == from_long.algorithms
        assert other.dataset_names == from_long.dataset_names
        for a, b in zip(other.datasets, from_long.datasets):
            np.testing.assert_array_equal(a.values, b.values)
            assert a.rho == b.rho == pytest.approx(1 / 5)
    np.testing.assert_allclose(from_long.mean_differences("a", "b"),
                               [np.mean(arrays["a"][i] - arrays["b"][i]) for i in range(3)])


def test_a_csv_without_a_run_column_is_one_run_of_cross_validation(tmp_path):
    """An OpenML task's folds: no run column. Long and wide files read as from_long with
    run=None; repeated runs under a column of another name are duplicated folds, an error."""
    long = long_frame()
    single = long[long["run"] == long["run"].min()].drop(columns="run")
    single.to_csv(tmp_path / "long.csv", index=False)
    expected = bc.from_long(single, run=None)
    wide = single.pivot(index=["dataset", "fold"], columns="algorithm",
                        values="score").reset_index()
    wide.to_csv(tmp_path / "wide.csv", index=False)
    for name in ("long.csv", "wide.csv"):
        scores = bc.read_csv(tmp_path / name)
        assert scores.algorithms == expected.algorithms
        for got, want in zip(scores.datasets, expected.datasets):
            np.testing.assert_array_equal(got.values, want.values)
            assert got.rho == want.rho == pytest.approx(1 / 5)
    long.rename(columns={"run": "repeat"}).to_csv(tmp_path / "repeats.csv", index=False)
    with pytest.raises(ValueError, match="repeats.csv: dataset .*: run 0, fold .* appears 2 times"):
        bc.read_csv(tmp_path / "repeats.csv")


def test_a_dataset_that_may_have_lost_a_fold_is_named_with_the_rho_it_gives(tmp_path):
    """Fold 2 of 0-9 missing on d1, or its last fold (9 folds where the others have 10): rho
    is 1/9 from the folds seen, and a warning names the dataset, why, the rho and how to set
    it. The same fold labels everywhere, or n_folds given, warn nothing."""
    import warnings

    long = long_frame(n_runs=1, n_folds=10).drop(columns="run")
    gap = long[(long["dataset"] != "d1") | (long["fold"] != 2)]
    gap.to_csv(tmp_path / "gap.csv", index=False)
    with pytest.warns(bc.exceptions.InputWarning,
                      match=r"dataset 'd1' \(fold 2 of 0-9 missing; rho = 1/9\).*give n_folds "
                            r"\(the CLI's --n-folds\)"):
        scores = bc.read_csv(tmp_path / "gap.csv")
    np.testing.assert_allclose(scores.rho, [1 / 10, 1 / 9, 1 / 10])
    short = long[(long["dataset"] != "d1") | (long["fold"] < 9)]
    with pytest.warns(bc.exceptions.InputWarning,
                      match=r"dataset 'd1' \(9 folds where most datasets have 10; rho = 1/9\)"):
        np.testing.assert_allclose(bc.from_long(short, run=None).rho, [1 / 10, 1 / 9, 1 / 10])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(bc.from_long(long, run=None).rho, 1 / 10)
        np.testing.assert_allclose(bc.from_long(gap, run=None, n_folds=10).rho, 1 / 10)
        folds = {"d0": 10, "d1": 9, "d2": 10}
        np.testing.assert_allclose(bc.from_long(short, run=None, n_folds=folds).rho,
                                   [1 / 10, 1 / 9, 1 / 10])


def test_runs_with_the_same_scores_everywhere_are_named(tmp_path):
    """Run 3 of d1 a copy of its run 0 (one split done twice): a warning names the dataset and
    the runs, and the scores stay as given. Runs of one constant score (every algorithm
    perfect), runs whose fold labels differ, and distinct runs warn nothing."""
    import warnings

    long = long_frame(n_runs=4, n_folds=5)
    copied = long.copy()
    in_d1 = copied["dataset"] == "d1"
    for algorithm in "abc":
        source = in_d1 & (copied["algorithm"] == algorithm)
        copied.loc[source & (copied["run"] == 3), "score"] = \
            copied.loc[source & (copied["run"] == 0), "score"].to_numpy()
    copied.to_csv(tmp_path / "copied.csv", index=False)
    with pytest.warns(bc.exceptions.InputWarning,
                      match=r"dataset 'd1' \(runs 0 = 3\): these runs have the same score for "
                            r"every algorithm on every fold.*keep one of the copies"):
        scores = bc.read_csv(tmp_path / "copied.csv")
    d1 = scores.datasets[scores.dataset_names.index("d1")].values.reshape(3, 4, 5)
    np.testing.assert_array_equal(d1[:, 3], d1[:, 0])
    perfect = long.assign(score=np.where(long["dataset"] == "d2", 1.0, long["score"]))
    ragged = long.assign(fold=np.where(long["run"] == 3, long["fold"] + 5, long["fold"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for frame in (long, perfect):
            bc.from_long(frame)
        bc.from_long(ragged, n_folds=5)


def test_ragged_collection_with_distinct_rho():
    scores = bc.from_arrays({"x": [np.arange(10.0), np.arange(4.0)],
                             "y": [np.arange(10.0) + 1, np.arange(4.0) * 2]},
                            rho={"p": 0.1, "q": 0.25}, datasets=["p", "q"])
    np.testing.assert_array_equal(scores.n_scores, [10, 4])
    np.testing.assert_array_equal(scores.rho, [0.1, 0.25])
    np.testing.assert_array_equal(scores.differences("y", "x")[1], np.arange(4.0))
    frame = scores.to_frame()
    assert len(frame) == 2 * (10 + 4)
    assert set(scores.subset(datasets=["q"]).dataset_names) == {"q"}


def test_to_frame_reads_back_as_the_same_scores(tmp_path):
    # a 10-fold dataset, a 5 x 2 one, and a resampled one whose rho is no 1/k (0.3 over 7
    # splits): to_frame's layout read back by from_long, from_wide and read_csv
    rng = np.random.default_rng(4)
    sizes = {"ten": 20, "five-by-two": 10, "holdout": 7}
    scores = bc.from_arrays({a: [rng.uniform(0.6, 0.9, n) for n in sizes.values()]
                             for a in ("x", "y")},
                            rho={"ten": 0.1, "five-by-two": 0.5, "holdout": 0.3},
                            datasets=list(sizes))
    frame = scores.to_frame()
    assert list(frame.columns) == ["dataset", "algorithm", "run", "fold", "score", "rho"]
    ten = frame[(frame.dataset == "ten") & (frame.algorithm == "x")]
    np.testing.assert_array_equal(ten.run, np.repeat([0, 1], 10))
    np.testing.assert_array_equal(ten.fold, np.tile(np.arange(10), 2))
    frame.to_csv(tmp_path / "long.csv", index=False)
    wide = frame.pivot(index=["dataset", "run", "fold", "rho"], columns="algorithm",
                       values="score").reset_index()
    wide.to_csv(tmp_path / "wide.csv", index=False)
    for back in (bc.from_long(frame), bc.read_csv(tmp_path / "long.csv"),
                 bc.read_csv(tmp_path / "wide.csv")):
        back = back.subset(datasets=scores.dataset_names)
        assert back.algorithms == ("x", "y")
        np.testing.assert_array_equal(back.rho, [0.1, 0.5, 0.3])
        for a, b in zip(back.datasets, scores.datasets):
            np.testing.assert_array_equal(a.values, b.values)
    # an explicit rho or n_folds wins over the column
    np.testing.assert_array_equal(bc.from_long(frame, rho=0.2).rho, [0.2] * 3)


def test_a_rho_column_with_two_values_in_a_dataset_is_named():
    frame = long_frame().assign(rho=0.2)
    frame.loc[frame.index[-1], "rho"] = 0.25
    with pytest.raises(ValueError, match=r"dataset 'd2': column 'rho' must hold one number "
                       r"per dataset, got \['0.2', '0.25'\]"):
        bc.from_long(frame)


def test_rho_inferred_from_folds_per_dataset():
    long = pd.concat([long_frame(1, 2, 10).assign(dataset="ten"),
                      long_frame(1, 3, 5).assign(dataset="five")])
    scores = bc.from_long(long)
    np.testing.assert_allclose(scores.rho, [0.1, 0.2])
    assert bc.rho_from_split(n_train=90, n_test=10) == pytest.approx(0.1)


@pytest.mark.parametrize("mutate, message", [
    (lambda f: f.assign(score=f.score.where(f.index != 7, np.nan)), "dataset 'd0', algorithm 'a'.*NaN"),
    (lambda f: f.assign(score=f.score.where(f.index != 25, np.inf)), "dataset 'd1', algorithm 'a'.*infinite"),
    (lambda f: f.drop(index=12), "dataset 'd0', algorithm 'b': no score for run 0, fold 2"),
    (lambda f: pd.concat([f, f.iloc[[3]]]), "dataset 'd0', algorithm 'a': run 0, fold 3 appears"),
])
def test_bad_long_frames_name_dataset_and_algorithm(mutate, message):
    long = long_frame(n_datasets=2, n_runs=1, n_folds=10, algorithms=("a", "b"))
    with pytest.raises(ValueError, match=message):
        bc.from_long(mutate(long))


def test_bad_arrays():
    with pytest.raises(ValueError, match="dataset '1'.*at least 2"):
        bc.from_arrays({"a": [[0.1, 0.2], [0.3]], "b": [[0.1, 0.3], [0.2]]}, rho=0.1)
    with pytest.raises(ValueError, match="dataset '0': algorithms have different numbers"):
        bc.from_arrays({"a": [[0.1, 0.2, 0.3]], "b": [[0.1, 0.3]]}, rho=0.1)
    with pytest.raises(ValueError, match=r"dataset '0': rho = 1.0 is outside \[0, 1\)"):
        bc.from_arrays({"a": [0.1, 0.2], "b": [0.2, 0.1]}, rho=1.0)
    with pytest.raises(ValueError, match="rho = -0.1"):
        bc.from_arrays({"a": [0.1, 0.2], "b": [0.2, 0.1]}, rho=-0.1)
    with pytest.raises(ValueError, match="give rho"):
        bc.from_arrays({"a": [0.1, 0.2], "b": [0.2, 0.1]})
    with pytest.raises(ValueError, match="n_folds = 1"):
        bc.from_arrays({"a": [0.1, 0.2], "b": [0.2, 0.1]}, n_folds=1)
    scores = bc.from_arrays({"a": [0.1, 0.2], "b": [0.2, 0.1]}, rho=0.5)
    with pytest.raises(ValueError, match="unknown algorithm 'z'.*'a', 'b'"):
        scores.differences("a", "z")
    with pytest.raises(ValueError, match="unknown dataset"):
        scores.dataset("nope")


def test_reading_only_some_algorithms(tmp_path):
    """``algorithms=`` reads those algorithms' scores only, in that order, and the same
    numbers as the whole file: another algorithm's NaN or missing fold is not checked."""
    frame = long_frame()
    whole = bc.from_long(frame)
    broken = frame.copy()
    broken.loc[(broken.algorithm == "b") & (broken.fold == 2), "score"] = np.nan
    broken = broken.drop(broken.index[(broken.algorithm == "b") & (broken.fold == 3)])
    with pytest.raises(ValueError, match="algorithm 'b': .* NaN"):
        bc.from_long(broken)
    some = bc.from_long(broken, algorithms=["c", "a"])
    assert some.algorithms == ("c", "a") and some.dataset_names == whole.dataset_names
    for mine, reference in zip(some.datasets, whole.datasets):
        np.testing.assert_array_equal(mine.values, reference.values[[2, 0]])
        assert mine.rho == reference.rho
    path = tmp_path / "scores.csv"
    broken.to_csv(path, index=False)
    assert bc.read_csv(path, algorithms=["a", "c"]).algorithms == ("a", "c")
    with pytest.raises(ValueError, match=r"unknown algorithm 'A' \(did you mean 'a'\?\)"):
        bc.read_csv(path, algorithms=["A", "c"])
    with pytest.raises(ValueError, match="given twice"):
        bc.from_long(frame, algorithms=["a", "a"])
    # a dataset holding none of them fails, as one holding some of them does
    alone = frame[~((frame.dataset == "d1") & frame.algorithm.isin(["a", "c"]))]
    with pytest.raises(ValueError, match="dataset 'd1' has no scores of \\['a', 'c'\\]"):
        bc.from_long(alone, algorithms=["a", "c"])


def test_wide_unknown_algorithm_and_csv_error_names_file(tmp_path):
    wide = pd.DataFrame({"dataset": "d", "run": 0, "fold": range(4), "a": 0.5, "b": 0.6})
    with pytest.raises(ValueError, match=r"unknown algorithm column\(s\) \['c'\]"):
        bc.from_wide(wide, algorithms=["a", "c"])
    path = tmp_path / "bad.csv"
    wide.assign(a=[0.5, np.nan, 0.5, 0.5]).to_csv(path, index=False)
    with pytest.raises(ValueError, match="bad.csv.*dataset 'd', algorithm 'a'.*line 3, column 'a'"):
        bc.read_csv(path, format="wide")
    long = tmp_path / "long.csv"
    frame = long_frame(1, 1, 4, algorithms=("a", "b"))
    frame["score"] = frame["score"].astype(object)
    frame.loc[5, "score"] = "oops"
    frame.to_csv(long, index=False)
    with pytest.raises(ValueError, match=r"long.csv.*line 7, column 'score': 'oops'"):
        bc.read_csv(long)
    # "nan" in the file and an empty cell are both missing to pandas: the message says so
    # rather than calling a "nan" empty
    for text in ("nan", ""):
        long.write_text(frame.assign(score=frame["score"].astype(str)).to_csv(index=False)
                        .replace("oops", text))
        with pytest.raises(ValueError, match=r"line 7, column 'score': empty or NaN\)"):
            bc.read_csv(long)
    pd.concat([frame.iloc[:4], frame.iloc[[1]]]).assign(score=0.5).to_csv(long, index=False)
    with pytest.raises(ValueError, match=r"run 0, fold 1 appears 2 times \(lines \[3, 6\]\)"):
        bc.read_csv(long)


def test_sklearn_cross_validate_and_grid_search():
    pytest.importorskip("sklearn", reason="scikit-learn is an optional extra")
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import (GridSearchCV, RepeatedStratifiedKFold, ShuffleSplit,
                                         cross_validate)
    from sklearn.naive_bayes import GaussianNB

    X, y = make_classification(200, random_state=0)
    cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=0)
    outputs = {"nb": cross_validate(GaussianNB(), X, y, cv=cv),
               "lr": cross_validate(LogisticRegression(), X, y, cv=cv)}
    scores = bc.from_cross_validate(outputs, dataset="synthetic", cv=cv)
    assert scores.rho[0] == pytest.approx(0.2)
    np.testing.assert_array_equal(scores.differences("nb", "lr")[0],
                                  outputs["nb"]["test_score"] - outputs["lr"]["test_score"])
    assert bc.from_cross_validate(outputs, cv=cv, X=X, y=y).rho[0] == pytest.approx(40 / 200)

    search = GridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]}, cv=cv).fit(X, y)
    candidates = bc.from_cv_results(search)
    assert candidates.algorithms == ("C=0.01", "C=1.0")
    assert candidates.rho[0] == pytest.approx(0.2)
    expected = [search.cv_results_[f"split{i}_test_score"][0] for i in range(10)]
    np.testing.assert_array_equal(candidates.datasets[0].values[0], expected)
    assert bc.rho_from_cv(ShuffleSplit(test_size=0.25)) == pytest.approx(0.25)
    assert bc.rho_from_cv(10) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="no split<i>_test_accuracy"):
        bc.from_cv_results(search, metric="accuracy")
    combined = bc.concat([scores, bc.from_cross_validate(outputs, dataset="again", rho=0.2)])
    assert combined.dataset_names == ("synthetic", "again")
