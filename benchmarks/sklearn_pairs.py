"""Near-identical pairs of real learners, made with scikit-learn: the kind of pair whose
posterior has several modes (issue 28), on data anyone can rebuild without downloads.

The built-in example's 17 datasets (:mod:`bayescomp.data.datasets.make_classifiers`: four
that ship in scikit-learn, thirteen from its generators with fixed seeds), the same
10 x 10-fold stratified splits for every learner, accuracy on each test fold. Three pairs
that differ by one small setting, and so agree on most folds:

* ``tree`` and ``tree_pruned``: a decision tree, and the same with cost-complexity pruning
  ``ccp_alpha=0.002`` (the pruning of C4.5 against its grafted version, in spirit);
* ``logistic`` and ``logistic_c08``: standardised logistic regression with C = 1 and 0.8;
* ``knn5`` and ``knn5_dist``: 5 nearest neighbours, uniform and distance weights.

Writes a long CSV (dataset, algorithm, run, fold, score)::

    python benchmarks/sklearn_pairs.py /tmp/sklearn_pairs.csv
    python benchmarks/bench_real_pairs.py /tmp/sklearn_pairs.csv --easy tree logistic \\
        --pairs tree-tree_pruned,logistic-logistic_c08,knn5-knn5_dist --out /tmp/sklearn_pairs.md
"""
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from bayescomp.data.datasets import make_classifiers


def learners() -> dict:
    """name -> a function making the unfitted learner."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    def logistic(c):
        return lambda: make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=5000))

    return {"tree": lambda: DecisionTreeClassifier(random_state=0),
            "tree_pruned": lambda: DecisionTreeClassifier(random_state=0, ccp_alpha=0.002),
            "logistic": logistic(1.0), "logistic_c08": logistic(0.8),
            "knn5": lambda: KNeighborsClassifier(5),
            "knn5_dist": lambda: KNeighborsClassifier(5, weights="distance")}


def make_frame() -> pd.DataFrame:
    from threadpoolctl import threadpool_limits

    rows = []
    with threadpool_limits(1):   # single-threaded fits: the same scores on every machine
        for name in make_classifiers.DATASETS:
            X, y = make_classifiers.load_dataset(name)
            splits = make_classifiers.make_splits(X, y)
            for algorithm, make in learners().items():
                for i, (train, test) in enumerate(splits):
                    model = make().fit(X[train], y[train])
                    rows.append((name, algorithm, i // 10, i % 10,
                                 float(np.mean(model.predict(X[test]) == y[test]))))
    return pd.DataFrame(rows, columns=["dataset", "algorithm", "run", "fold", "score"])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the CSV file to write")
    make_frame().to_csv(parser.parse_args(argv).out, index=False)


if __name__ == "__main__":
    main()
