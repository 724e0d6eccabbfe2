"""(Repeated) cross-validation with one splitter, and five replications of 2-fold
cross-validation (:func:`five_by_two`, :func:`as_5x2`) for the 5x2cv tests."""
from __future__ import annotations

from typing import Mapping

import numpy as np

from bayescomp.data.scores import Scores

from bayescomp.data.protocols.common import (_Dataset, _assemble, _check_datasets,
                                             _check_estimators, _check_scoring, _fit_and_score,
                                             _parallel, _repeated, _rho, _sklearn, _splits,
                                             _splitter)


def cross_validate_scores(estimators: Mapping, datasets: Mapping, *, cv=None,
                          scoring="accuracy", n_jobs=None, groups=None) -> Scores:
    """Paired cross-validation scores of several estimators on several datasets.

    For each dataset the splits are generated once, ``list(cv.split(X, y, groups))``, and
    every estimator is fitted (a fresh :func:`~sklearn.base.clone` per split) on exactly
    those training parts and scored on those test parts, so the scores are paired split by
    split.

    Parameters
    ----------
    estimators : dict of str to estimator
        Unfitted scikit-learn estimators (or pipelines), by name.
    datasets : dict of str to (X, y)
        The data, by name. ``X`` and ``y`` must have one row per sample.
    cv : int, splitter or None
        A scikit-learn splitter, used for every dataset (give it an integer
        ``random_state`` for reproducible splits), or an int for (stratified) k-fold as in
        scikit-learn. Default: ``RepeatedStratifiedKFold(n_splits=10, n_repeats=10,
        random_state=0)``, the 10 runs of 10-fold cross-validation recommended for the
        correlated t-test; ``RepeatedKFold`` with the same settings when ``y`` is not a class
        label or every estimator is a regressor.
    scoring : str, callable or None
        One metric, as in scikit-learn (:func:`sklearn.metrics.get_scorer`); None uses the
        estimator's ``score``. Use e.g. ``"r2"`` for regressors.
    n_jobs : int or None
        Number of joblib workers over the (dataset, estimator, split) fits. The result does
        not depend on it.
    groups : array-like or dict of str to array-like, optional
        Group labels for group splitters: an array when there is one dataset, otherwise a
        dict by dataset name.

    Returns
    -------
    Scores
        ``values[a, j]`` is estimator ``a`` on split ``j`` (in the splitter's order: for
        repeated k-fold, split ``j`` is fold ``j % k`` of repetition ``j // k``). ``rho`` is
        the mean of ``n_test / (n_train + n_test)`` over the splits, ``1/k`` for k-fold.

    Raises
    ------
    ValueError
        No estimator or dataset, X and y of different lengths (naming the dataset), a
        multi-metric ``scoring``, or a splitter that fails on a dataset.
    """
    _sklearn()
    models = _check_estimators(estimators, tuned=False)
    data = _check_datasets(datasets, groups)
    _check_scoring(scoring)
    fitted = list(models.values())
    return _cross_validate(models, data, lambda dataset: _splitter(
        cv, dataset.y, fitted, lambda: _repeated(dataset.y, fitted, 10, 10, 0)), scoring, n_jobs)


def _cross_validate(models: dict, data: list[_Dataset], splitter_of, scoring, n_jobs) -> Scores:
    """Run every estimator on the splits ``splitter_of(dataset)`` gives, generated once."""
    Parallel, delayed = _parallel(n_jobs)
    split_lists = [_splits(splitter_of(dataset), dataset.X, dataset.y, dataset.groups,
                           f"dataset {dataset.name!r}") for dataset in data]
    # task order (dataset, estimator, split) is the order of the results: joblib keeps it
    tasks = [delayed(_fit_and_score)(estimator, dataset.X, dataset.y, train, test, scoring,
                                     f"dataset {dataset.name!r}, estimator {name!r}, split {j}")
             for dataset, splits in zip(data, split_lists)
             for name, estimator in models.items()
             for j, (train, test) in enumerate(splits)]
    flat = iter(Parallel(tasks))
    scores = [[[next(flat) for _ in splits] for _ in models] for splits in split_lists]
    rhos = [_rho((len(train), len(test)) for train, test in splits) for splits in split_lists]
    return _assemble(list(models), data, rhos, scores)


# --------------------------------------------------------------------------- 5x2cv

def five_by_two(estimators: Mapping, datasets: Mapping, *, random_state=0,
                scoring="accuracy", n_jobs=None) -> Scores:
    """Paired scores of five replications of 2-fold cross-validation (5x2cv).

    The splits are ``RepeatedStratifiedKFold(n_splits=2, n_repeats=5,
    random_state=random_state)`` (``RepeatedKFold`` when ``y`` is not a class label or
    every estimator is a regressor), shared by every estimator as in
    :func:`cross_validate_scores`.

    Parameters
    ----------
    estimators : dict of str to estimator
    datasets : dict of str to (X, y)
    random_state : int, default 0
        Seed of the five random halvings of each dataset.
    scoring : str, callable or None
    n_jobs : int or None

    Returns
    -------
    Scores
        10 scores per estimator and dataset: split ``j`` is fold ``j % 2`` of replication
        ``j // 2``; ``rho = 0.5``. :func:`as_5x2` turns two algorithms' scores into the
        (5, 2) differences of :func:`bayescomp.baselines.resampled_ttests.paired_ttest_5x2cv`.
    """
    _sklearn()
    models = _check_estimators(estimators, tuned=False)
    fitted = list(models.values())
    data = _check_datasets(datasets, None)
    _check_scoring(scoring)
    # the same seed for every dataset; stratified for class labels only
    return _cross_validate(models, data, lambda dataset: _repeated(
        dataset.y, fitted, 2, 5, random_state), scoring, n_jobs)


def as_5x2(scores: Scores, first: str, second: str, dataset=None) -> np.ndarray:
    """The differences ``first - second`` of a 5x2cv run as a (5, 2) array.

    Parameters
    ----------
    scores : Scores
        Scores of :func:`five_by_two` (or any run of r replications of 2-fold
        cross-validation whose split ``j`` is fold ``j % 2`` of replication ``j // 2``).
    first, second : str
        Algorithm names; the differences are ``first - second``.
    dataset : str, optional
        Name of the dataset; may be omitted when ``scores`` holds a single dataset.

    Returns
    -------
    numpy.ndarray, shape (5, 2)
        Row i is replication i, column j fold j: the layout that
        :func:`bayescomp.baselines.resampled_ttests.paired_ttest_5x2cv` and
        :func:`~bayescomp.baselines.resampled_ttests.combined_ftest_5x2cv` expect (the
        t-test's numerator is the difference of the *first* fold of the *first*
        replication, so the order matters).
        With r replications the shape is (r, 2).

    Raises
    ------
    ValueError
        Unknown names, several datasets but no ``dataset``, or scores that cannot come from
        replications of 2-fold cross-validation (an odd number of scores, or ``rho`` not 0.5).
    """
    if dataset is None:
        if len(scores) != 1:
            raise ValueError(f"the scores hold {len(scores)} datasets "
                             f"{list(scores.dataset_names)}; say which with dataset=...")
        chosen = scores.datasets[0]
    else:
        chosen = scores.dataset(dataset)
    i, j = scores.algorithm_index(first), scores.algorithm_index(second)
    if first == second:
        raise ValueError(f"first and second are the same algorithm {first!r}")
    n = chosen.n_scores
    # each replication of 2-fold CV tests on the two halves, so the mean of n_test / n is
    # exactly 1/2: anything else (e.g. 10-fold CV, which also gives 10 scores) is refused
    if n % 2 or abs(chosen.rho - 0.5) > 1e-9:
        raise ValueError(f"dataset {chosen.name!r}: {n} scores with rho = {chosen.rho:.4g}; "
                         "replications of 2-fold cross-validation give an even number of "
                         "scores (10 for 5x2cv) and rho = 0.5 (use five_by_two)")
    return (chosen.values[i] - chosen.values[j]).reshape(n // 2, 2)
