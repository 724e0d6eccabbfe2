"""Holistic N-fold cross-validation: a training, a validation and a test part in every
rotation, with the training size (in folds) as a parameter."""
from __future__ import annotations

from typing import Mapping

import numpy as np


from bayescomp.data.protocols.common import (_collect, REFITS, _annotate, _assemble, _check_datasets,
                                             _check_estimators, _check_scoring, _fit, _num_samples,
                                             _parallel, _params_frame, _rho, _scorer, _sklearn,
                                             _split_data)



def _check_holistic(n_folds, train_size) -> tuple[int, int]:
    if isinstance(n_folds, bool) or not isinstance(n_folds, (int, np.integer)) or n_folds < 3:
        raise ValueError(f"n_folds must be an integer >= 3 (a training, a validation and a "
                         f"test fold), got {n_folds!r}")
    n_folds = int(n_folds)
    if train_size is None:
        return n_folds, n_folds - 2
    if (isinstance(train_size, bool) or not isinstance(train_size, (int, np.integer))
            or not 1 <= train_size <= n_folds - 2):
        raise ValueError(f"train_size must be a whole number of folds between 1 and "
                         f"n_folds - 2 = {n_folds - 2} (one fold each is kept for validation "
                         f"and test), got {train_size!r}")
    return n_folds, int(train_size)


def holistic_rotations(n_folds: int = 10, train_size: int | None = None
                       ) -> list[tuple[tuple[int, ...], int, int]]:
    """Fold numbers of each rotation of holistic N-fold cross-validation.

    In rotation ``r = 0..N-1`` the training folds are ``(i + r) mod N`` for
    ``i = 0..t-1``, the validation fold is ``(N - 2 + r) mod N`` and the test fold
    ``(N - 1 + r) mod N``, with ``t = train_size``.

    Parameters
    ----------
    n_folds : int, default 10
        N, at least 3.
    train_size : int, optional
        t, the number of training folds, in 1..N-2; default N-2 (every fold not used for
        validation or test).

    Returns
    -------
    list of (tuple of int, int, int)
        ``(training folds, validation fold, test fold)`` per rotation.
    """
    n, t = _check_holistic(n_folds, train_size)
    return [(tuple((i + r) % n for i in range(t)), (n - 2 + r) % n, (n - 1 + r) % n)
            for r in range(n)]


def holistic_folds(y, n_folds: int = 10, *, random_state=0,
                   stratify: bool = True) -> list[np.ndarray]:
    """Cut the data once into N folds (the test parts of a shuffled (Stratified)KFold).

    Parameters
    ----------
    y : int or array-like
        The number of samples, or the targets (class labels when stratified).
    n_folds : int, default 10
    random_state : int, RandomState or None, default 0
        Seed of the shuffle.
    stratify : bool, default True
        Keep the class proportions in every fold (``StratifiedKFold``); ignored when ``y``
        is a number of samples. Use False for continuous targets.

    Returns
    -------
    list of numpy.ndarray
        The sorted sample indices of fold 0, ..., N-1: disjoint and covering every sample.
    """
    _sklearn()
    from sklearn.model_selection import KFold, StratifiedKFold
    from sklearn.utils.multiclass import type_of_target

    n_folds, _ = _check_holistic(n_folds, None)
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool):
        n_samples, labels, stratify = int(y), None, False
    else:
        labels = np.asarray(y)
        n_samples = _num_samples(labels, "y", "holistic_folds")
    if n_samples < n_folds:
        raise ValueError(f"{n_samples} samples cannot be cut into {n_folds} folds")
    if stratify:
        kind = type_of_target(labels)
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"cannot stratify a {kind!r} target: stratify=True needs class "
                             "labels; pass stratify=False (e.g. for regression)")
        splitter = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=random_state)
    else:
        splitter = KFold(n_splits=n_folds, shuffle=True, random_state=random_state)
    # the k-fold test parts are the N disjoint folds, in the splitter's order
    return [np.sort(test) for _, test in splitter.split(np.zeros((n_samples, 1)), labels)]


def holistic_splits(y, n_folds: int = 10, train_size: int | None = None, *, random_state=0,
                    stratify: bool = True) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Training, validation and test indices of every rotation of holistic N-fold CV.

    The data are cut once into N folds (:func:`holistic_folds`); rotation ``r`` trains on
    folds ``(0..t-1) + r mod N``, validates on fold ``(N - 2 + r) mod N`` and tests on fold
    ``(N - 1 + r) mod N`` (:func:`holistic_rotations`). Over the N rotations every sample is
    in the test fold exactly once. Varying ``train_size`` t with the same folds and seed
    shows how a comparison depends on the size of the training set.

    Parameters
    ----------
    y : int or array-like
        The number of samples, or the targets (stratified folds when ``stratify``).
    n_folds : int, default 10
        N, at least 3.
    train_size : int, optional
        t, the number of training folds, 1..N-2; default N-2.
    random_state : int, RandomState or None, default 0
    stratify : bool, default True

    Returns
    -------
    list of (train_idx, validation_idx, test_idx)
        N triples of sorted index arrays, rotation r at position r. Arguments are checked
        when the function is called, not when the list is iterated.

    Raises
    ------
    ValueError
        ``n_folds < 3``, ``train_size`` outside 1..N-2, fewer samples than folds, or a
        non-class target with ``stratify=True``.
    """
    n, t = _check_holistic(n_folds, train_size)
    folds = holistic_folds(y, n, random_state=random_state, stratify=stratify)
    return [(np.sort(np.concatenate([folds[f] for f in train])), folds[validation], folds[test])
            for train, validation, test in holistic_rotations(n, t)]


def _holistic_fit_and_score(estimator, candidates, X, y, train, validation, test, scoring,
                            refit, where):
    from sklearn.base import clone

    try:
        X_train, y_train = _split_data(estimator, X, y, train)
        best, best_score, best_params, best_rank = None, None, None, -np.inf
        for params in candidates:
            model = clone(estimator).set_params(**params)
            _fit(model, X_train, y_train)
            if len(candidates) == 1:  # nothing to choose: skip the validation scoring
                best, best_score, best_params = model, np.nan, params
                break
            X_val, y_val = _split_data(model, X, y, validation, train)
            score = float(_scorer(model, scoring)(model, X_val, y_val))
            # a failed (NaN) score never wins; ties keep the first candidate in grid order,
            # as GridSearchCV does
            rank = -np.inf if np.isnan(score) else score
            if best is None or rank > best_rank:
                best, best_score, best_params, best_rank = model, score, params, rank
        if refit == "train":
            # the chosen candidate was already fitted on the training folds: score it as is
            model, fit_indices = best, train
        else:
            fit_indices = np.sort(np.concatenate([train, validation]))
            model = clone(estimator).set_params(**best_params)
            X_fit, y_fit = _split_data(model, X, y, fit_indices)
            _fit(model, X_fit, y_fit)
        X_test, y_test = _split_data(model, X, y, test, fit_indices)
        score = float(_scorer(model, scoring)(model, X_test, y_test))
    except Exception as exc:
        _annotate(exc, where)
        raise
    return score, dict(best_params), best_score


def holistic_cross_validate_scores(estimators: Mapping, datasets: Mapping, *,
                                   n_folds: int = 10, train_size: int | None = None,
                                   scoring="accuracy", random_state=0, stratify: bool = True,
                                   refit: str = "train", n_jobs=None,
                                   return_params: bool = False):
    """Paired test scores of holistic N-fold cross-validation with validation-fold tuning.

    Each dataset is cut once into N folds and every estimator uses the same rotations
    (:func:`holistic_splits`). In each rotation every candidate of the grid is fitted on
    the training folds and scored on the validation fold; the hyper-parameters are chosen
    on the **validation fold only** (the best score; ties go to the first candidate in
    ``ParameterGrid`` order). The chosen model is then scored on the test fold, which played
    no part in the choice. This gives N paired scores per estimator and dataset.

    Parameters
    ----------
    estimators : dict of str to (estimator, param_grid)
        ``param_grid`` as in ``GridSearchCV``; a bare estimator or ``(estimator, None)`` is
        not tuned (and the validation fold is unused).
    datasets : dict of str to (X, y)
    n_folds : int, default 10
        N, at least 3.
    train_size : int, optional
        Training folds per rotation, 1..N-2 (default N-2). Rerun with several values and
        the same ``random_state`` to study the sensitivity to the training-set size.
    scoring : str, callable or None
        One metric, for both the choice and the test scores.
    random_state : int, default 0
        Seed of the cut into folds (the same for every dataset).
    stratify : bool, default True
        Stratified folds; set False for continuous targets.
    refit : {"train", "train+validation"}, default "train"
        What the chosen model is fitted on before being tested. ``"train"`` (default): the
        chosen candidate as fitted on the training folds, so the tested model was trained
        on exactly ``train_size`` folds, the size this protocol studies.
        ``"train+validation"`` refits the chosen setting on the training and validation
        folds (hyper-parameters still chosen on the validation fold only); ``rho`` then
        counts the validation fold as training data.
    n_jobs : int or None
        Joblib workers over (dataset, estimator, rotation).
    return_params : bool, default False
        Also return the chosen hyper-parameters.

    Returns
    -------
    Scores
        Score ``j`` is the test fold of rotation ``j``; ``rho`` is the mean over the
        rotations of ``n_test / (n_train + n_test)`` (with ``n_train`` the samples the
        tested model was fitted on, see ``refit``).
    pandas.DataFrame
        Only with ``return_params``: one row per (dataset, algorithm, rotation) with the
        chosen ``params`` and their validation score ``selection_score`` (NaN when the grid
        has a single candidate).

    Raises
    ------
    ValueError
        No estimator or dataset, X and y of different lengths, ``train_size`` outside
        1..N-2, or a dataset that cannot be cut into N folds (the message names it).
    """
    _sklearn()
    n_folds, train_size = _check_holistic(n_folds, train_size)
    if refit not in REFITS:
        raise ValueError(f"refit must be one of {list(REFITS)}, got {refit!r}")
    models = _check_estimators(estimators, tuned=True)
    data = _check_datasets(datasets, None)
    _check_scoring(scoring)
    names = list(models)
    Parallel, delayed = _parallel(n_jobs)

    tasks, split_lists = [], []
    for dataset in data:
        if dataset.y is None:
            target = dataset.n_samples
        else:
            target = dataset.y
        try:
            splits = holistic_splits(target, n_folds, train_size, random_state=random_state,
                                     stratify=stratify)
        except ValueError as exc:
            raise ValueError(f"dataset {dataset.name!r}: {exc}") from None
        split_lists.append(splits)
        for name, (estimator, candidates) in models.items():
            for r, (train, validation, test) in enumerate(splits):
                tasks.append(delayed(_holistic_fit_and_score)(
                    estimator, candidates, dataset.X, dataset.y, train, validation, test,
                    scoring, refit,
                    f"dataset {dataset.name!r}, estimator {name!r}, rotation {r}"))

    scores, rows = _collect(Parallel(tasks), data, names, split_lists)
    extra = (lambda v: len(v)) if refit == "train+validation" else (lambda v: 0)
    rhos = [_rho((len(train) + extra(validation), len(test)) for train, validation, test in s)
            for s in split_lists]
    result = _assemble(names, data, rhos, scores)
    return (result, _params_frame(rows)) if return_params else result
