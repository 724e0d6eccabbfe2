"""Regenerate ``bayescomp/datasets/classifiers.csv``, the built-in example scores.

Run it with ``python -m bayescomp.data.datasets.make_classifiers`` (needs scikit-learn; loading
the CSV with :func:`bayescomp.data.datasets.load_classifiers` does not).

How the data were made
----------------------
Four scikit-learn classifiers, with these exact settings:

* ``naive_bayes``: ``GaussianNB()``
* ``logistic``: ``make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))``
* ``tree``: ``DecisionTreeClassifier(max_depth=None, random_state=0)``
* ``forest``: ``RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1)``

were evaluated by 10 runs of stratified 10-fold cross-validation,
``RepeatedStratifiedKFold(n_splits=10, n_repeats=10, random_state=2024)``, on each of the
datasets listed in :data:`DATASETS` (in that order). The splits are computed once per dataset
and the same 100 train/test splits are used for every classifier, so the scores are paired
split by split. Split ``i`` (in the order the splitter yields them) is written as
``run = i // 10`` and ``fold = i % 10``, both counted from 0. A fresh, unfitted classifier is
fitted on the training part of each split, and the score is its accuracy on the test part
(a fraction in [0, 1], written with ``%.6f``). Features are used as given (only the
logistic regression standardises them, inside its pipeline, on the training part).

The datasets are the four that ship inside scikit-learn (``load_iris``, ``load_wine``,
``load_breast_cancer``, ``load_digits``) and thirteen drawn from scikit-learn's generators
with fixed seeds (``make_classification`` with different sizes, numbers of informative,
redundant and noise features, class separations, label noise and numbers of classes or
clusters; ``make_moons``, ``make_circles``, ``make_gaussian_quantiles`` and
``make_hastie_10_2``), chosen so that the datasets range from easy to hard and the ranking
of the classifiers changes from one dataset to another. The exact arguments are in
:data:`DATASETS`.

The output is a long CSV with columns ``dataset, algorithm, run, fold, score``, rows ordered
by dataset (as in :data:`DATASETS`), algorithm (as in :data:`ALGORITHMS`), run and fold.
Everything is seeded and every fit is single-threaded (``n_jobs=1`` and BLAS/OpenMP limited
to one thread with ``threadpoolctl``), so rerunning the script reproduces the
file byte for byte (with the same scikit-learn version; the shipped file was made with
scikit-learn 1.9.1, numpy 2.4.6). ``--n-jobs`` parallelises over datasets and does not
change the result.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

#: Seed of ``RepeatedStratifiedKFold`` (the same for every dataset).
CV_SEED = 2024
N_SPLITS = 10
N_REPEATS = 10
#: Seed of the classifiers that are randomised (tree, forest).
MODEL_SEED = 0

ALGORITHMS = ("naive_bayes", "logistic", "tree", "forest")

#: name -> (loader or generator in ``sklearn.datasets``, keyword arguments).
DATASETS: dict[str, tuple[str, dict]] = {
    "iris": ("load_iris", {}),
    "wine": ("load_wine", {}),
    "breast_cancer": ("load_breast_cancer", {}),
    "digits": ("load_digits", {}),
    # make_classification: easy, linearly separable to a large extent.
    "clf_easy": ("make_classification", dict(
        n_samples=300, n_features=10, n_informative=5, n_redundant=2, class_sep=2.0,
        flip_y=0.01, random_state=1)),
    # weakly separated classes among many noise features.
    "clf_hard": ("make_classification", dict(
        n_samples=400, n_features=20, n_informative=4, n_redundant=2, class_sep=0.5,
        flip_y=0.05, random_state=2)),
    # heavy label noise.
    "clf_label_noise": ("make_classification", dict(
        n_samples=500, n_features=10, n_informative=3, n_redundant=1, class_sep=1.0,
        flip_y=0.25, random_state=3)),
    # few samples, many features.
    "clf_wide": ("make_classification", dict(
        n_samples=200, n_features=50, n_informative=5, n_redundant=5, class_sep=1.0,
        flip_y=0.02, random_state=4)),
    # four classes.
    "clf_multiclass": ("make_classification", dict(
        n_samples=600, n_features=15, n_informative=6, n_redundant=3, n_classes=4,
        class_sep=1.0, flip_y=0.02, random_state=5)),
    # many clusters per class: non-linear boundaries.
    "clf_clusters": ("make_classification", dict(
        n_samples=500, n_features=8, n_informative=6, n_redundant=0,
        n_clusters_per_class=4, class_sep=1.5, flip_y=0.01, random_state=6)),
    # strongly correlated (redundant and repeated) features.
    "clf_redundant": ("make_classification", dict(
        n_samples=400, n_features=20, n_informative=3, n_redundant=10, n_repeated=3,
        class_sep=1.2, flip_y=0.03, random_state=7)),
    "moons": ("make_moons", dict(n_samples=400, noise=0.2, random_state=8)),
    "moons_noisy": ("make_moons", dict(n_samples=300, noise=0.4, random_state=9)),
    "circles": ("make_circles", dict(n_samples=400, noise=0.1, factor=0.5, random_state=10)),
    "gaussian_quantiles": ("make_gaussian_quantiles", dict(
        n_samples=400, n_features=2, n_classes=2, random_state=11)),
    "gaussian_quantiles_3": ("make_gaussian_quantiles", dict(
        n_samples=600, n_features=6, n_classes=3, random_state=12)),
    "hastie": ("make_hastie_10_2", dict(n_samples=600, random_state=13)),
}

CSV_PATH = Path(__file__).with_name("classifiers.csv")
SCORE_FORMAT = "%.6f"


def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of one dataset of :data:`DATASETS`."""
    import sklearn.datasets

    function, kwargs = DATASETS[name]
    result = getattr(sklearn.datasets, function)(**kwargs)
    if function.startswith("load_"):
        X, y = result.data, result.target
    else:
        X, y = result
    return np.asarray(X, dtype=float), np.asarray(y)


def make_classifier(algorithm: str):
    """A fresh, unfitted classifier for one of :data:`ALGORITHMS`."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    if algorithm == "naive_bayes":
        return GaussianNB()
    if algorithm == "logistic":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    if algorithm == "tree":
        return DecisionTreeClassifier(max_depth=None, random_state=MODEL_SEED)
    if algorithm == "forest":
        return RandomForestClassifier(n_estimators=100, random_state=MODEL_SEED, n_jobs=1)
    raise ValueError(f"unknown algorithm {algorithm!r}; expected one of {list(ALGORITHMS)}")


def make_splits(X: np.ndarray, y: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The 100 (train, test) index pairs shared by every classifier on one dataset."""
    from sklearn.model_selection import RepeatedStratifiedKFold

    cv = RepeatedStratifiedKFold(n_splits=N_SPLITS, n_repeats=N_REPEATS, random_state=CV_SEED)
    return list(cv.split(X, y))


def cross_validate(X, y, splits, algorithm: str) -> np.ndarray:
    """Accuracy of ``algorithm`` on each split, in the order of ``splits``."""
    scores = np.empty(len(splits))
    for i, (train, test) in enumerate(splits):
        model = make_classifier(algorithm).fit(X[train], y[train])
        scores[i] = np.mean(model.predict(X[test]) == y[test])
    return scores


def score_dataset(name: str, algorithms=ALGORITHMS) -> pd.DataFrame:
    """Long frame (dataset, algorithm, run, fold, score) of one dataset."""
    from threadpoolctl import threadpool_limits

    X, y = load_dataset(name)
    splits = make_splits(X, y)
    split = np.arange(len(splits))
    # Single-threaded BLAS/OpenMP: the same floating-point results on any machine and n_jobs.
    with threadpool_limits(limits=1):
        parts = [pd.DataFrame({"dataset": name, "algorithm": algorithm,
                               "run": split // N_SPLITS, "fold": split % N_SPLITS,
                               "score": cross_validate(X, y, splits, algorithm)})
                 for algorithm in algorithms]
    return pd.concat(parts, ignore_index=True)


def make_frame(datasets=None, n_jobs: int = 1) -> pd.DataFrame:
    """The long frame of every dataset (in the order of :data:`DATASETS`)."""
    from joblib import Parallel, delayed

    names = list(DATASETS) if datasets is None else list(datasets)
    frames = Parallel(n_jobs=n_jobs)(delayed(score_dataset)(name) for name in names)
    return pd.concat(frames, ignore_index=True)


def write_csv(frame: pd.DataFrame, path=CSV_PATH) -> None:
    frame.to_csv(path, index=False, float_format=SCORE_FORMAT, lineterminator="\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description="Regenerate the built-in example scores (bayescomp/datasets/classifiers.csv).")
    parser.add_argument("--output", type=Path, default=CSV_PATH, help="where to write the CSV")
    parser.add_argument("--n-jobs", type=int, default=-1,
                        help="datasets processed in parallel (default: all cores); "
                             "does not change the result")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    frame = make_frame(n_jobs=args.n_jobs)
    write_csv(frame, args.output)
    elapsed = time.perf_counter() - start
    means = frame.pivot_table(index="dataset", columns="algorithm", values="score",
                              sort=False)[list(ALGORITHMS)]
    print(means.to_string(float_format=lambda v: f"{v:.3f}"))
    print(f"wrote {len(frame)} rows to {args.output} in {elapsed:.1f} s")


if __name__ == "__main__":
    main()
