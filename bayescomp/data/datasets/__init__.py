"""Example data that ship with bayescomp, so that the examples run offline.

The scores were made by the package itself with scikit-learn; the script that regenerates them,
byte for byte, is :mod:`bayescomp.data.datasets.make_classifiers`
(``python -m bayescomp.data.datasets.make_classifiers``). Loading them needs only pandas.
"""
from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from bayescomp.data.scores import Scores

__all__ = ["load_classifiers"]

_CLASSIFIERS_CSV = "classifiers.csv"


def load_classifiers(as_frame: bool = False) -> Scores | pd.DataFrame:
    """Accuracies of four scikit-learn classifiers on 17 datasets, 10 x 10-fold cross-validation.

    Four classifiers were compared by 10 runs of stratified 10-fold cross-validation
    (``RepeatedStratifiedKFold(n_splits=10, n_repeats=10, random_state=2024)``) on 17
    datasets. Within a dataset every classifier saw the same 100 train/test splits, so the
    scores are paired split by split.

    Algorithms (scikit-learn defaults unless stated):

    * ``"naive_bayes"``: Gaussian naive Bayes (``GaussianNB``);
    * ``"logistic"``: ``StandardScaler`` followed by ``LogisticRegression(max_iter=5000)``;
    * ``"tree"``: ``DecisionTreeClassifier(max_depth=None, random_state=0)``;
    * ``"forest"``: ``RandomForestClassifier(n_estimators=100, random_state=0)``.

    Datasets:

    * shipped with scikit-learn: ``"iris"``, ``"wine"``, ``"breast_cancer"``, ``"digits"``;
    * from ``make_classification`` with fixed seeds: ``"clf_easy"`` (well separated),
      ``"clf_hard"`` (weakly separated, many noise features), ``"clf_label_noise"``
      (25% of labels randomised), ``"clf_wide"`` (200 samples, 50 features),
      ``"clf_multiclass"`` (4 classes), ``"clf_clusters"`` (4 clusters per class),
      ``"clf_redundant"`` (strongly correlated features);
    * other generators: ``"moons"``, ``"moons_noisy"`` (``make_moons``), ``"circles"``
      (``make_circles``), ``"gaussian_quantiles"``, ``"gaussian_quantiles_3"``
      (``make_gaussian_quantiles``, 2 and 3 classes), ``"hastie"`` (``make_hastie_10_2``).

    The datasets range from easy (all classifiers above 95%) to hard, and the ranking of the
    classifiers changes across datasets: the forest is often best, the logistic regression
    fails on the rotation-invariant problems (circles, Gaussian quantiles, Hastie) where
    naive Bayes excels, and on some datasets (iris) all four are practically equivalent.
    The exact generator arguments are in ``bayescomp.data.datasets.make_classifiers.DATASETS``.

    Units: a score is the accuracy on the test fold as a fraction in [0, 1] (rounded to
    six decimals), so a ROPE of 0.01 is one accuracy point.

    Parameters
    ----------
    as_frame : bool, default False
        Return the raw long table instead of a :class:`~bayescomp.data.scores.Scores`.

    Returns
    -------
    Scores or pandas.DataFrame
        With ``as_frame=False``, a :class:`~bayescomp.data.scores.Scores` with algorithms
        ``("naive_bayes", "logistic", "tree", "forest")``, 17 datasets, 100 scores per
        algorithm and dataset (run-major: run 0 folds 0-9, run 1 folds 0-9, ...), and
        ``rho = 1/10`` for every dataset. With ``as_frame=True``, a DataFrame with
        columns ``dataset`` (str), ``algorithm`` (str), ``run`` (int, 0-9), ``fold``
        (int, 0-9) and ``score`` (float), one row per (dataset, algorithm, run, fold).

    Examples
    --------
    >>> from bayescomp.data.datasets import load_classifiers
    >>> scores = load_classifiers()
    >>> scores.algorithms
    ('naive_bayes', 'logistic', 'tree', 'forest')
    >>> len(scores), int(scores.n_scores[0]), float(scores.rho[0])
    (17, 100, 0.1)
    """
    source = resources.files(__name__).joinpath(_CLASSIFIERS_CSV)
    with source.open("r", encoding="utf-8", newline="") as handle:
        frame = pd.read_csv(handle, dtype={"dataset": str, "algorithm": str,
                                           "run": "int64", "fold": "int64",
                                           "score": "float64"})
    if as_frame:
        return frame
    from bayescomp.data.readers import from_long

    return from_long(frame, dataset="dataset", algorithm="algorithm", run="run",
                     fold="fold", score="score", rho=1 / 10)
