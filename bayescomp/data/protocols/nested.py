"""Nested cross-validation: hyper-parameters chosen by an inner grid search on the training
part of each outer split only; the outer test scores are the paired scores (Cawley &
Talbot 2010)."""
from __future__ import annotations

from typing import Mapping

import numpy as np


from bayescomp.data.protocols.common import (_collect, _annotate, _assemble, _check_datasets,
                                             _check_estimators, _check_scoring, _fit, _parallel,
                                             _params_frame, _repeated, _rho, _scorer, _sklearn,
                                             _split_data, _splits, _splitter, _stratify)


def _nested_fit_and_score(estimator, candidates, X, y, train, test, inner_splits, scoring,
                          where):
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV

    try:
        X_train, y_train = _split_data(estimator, X, y, train)
        X_test, y_test = _split_data(estimator, X, y, test, train)
        if len(candidates) == 1:
            # nothing to choose: the search would refit this very setting on the outer
            # training part, so skip its inner fits
            params, selection = candidates[0], np.nan
            model = clone(estimator).set_params(**params)
            _fit(model, X_train, y_train)
        else:
            # the inner search sees the outer training part only; its splits (indices into
            # that part) were computed once and are the same for every estimator
            search = GridSearchCV(clone(estimator), [{k: [v] for k, v in c.items()}
                                                     for c in candidates],
                                  scoring=scoring, cv=inner_splits, refit=True,
                                  error_score="raise")
            _fit(search, X_train, y_train)
            params, selection = search.best_params_, float(search.best_score_)
            model = search.best_estimator_
        score = float(_scorer(model, scoring)(model, X_test, y_test))
    except Exception as exc:
        _annotate(exc, where)
        raise
    return score, dict(params), selection



def nested_cross_validate_scores(estimators: Mapping, datasets: Mapping, *, outer_cv=None,
                                 inner_cv=None, scoring="accuracy", n_jobs=None, groups=None,
                                 random_state=0, return_params: bool = False):
    """Paired outer scores of nested cross-validation (tuning inside each outer split).

    For each dataset the outer splits are generated once and shared by every estimator. In
    each outer split a grid search (:class:`~sklearn.model_selection.GridSearchCV`, refit
    on the whole outer training part with the best setting) runs on the outer **training**
    part only, so the outer test part never influences the choice of hyper-parameters
    (Cawley & Talbot 2010); the refitted model's score on the outer test part is the paired
    score. The inner splits of each outer split are also generated once and shared by every
    estimator.

    Parameters
    ----------
    estimators : dict of str to (estimator, param_grid)
        ``param_grid`` as in ``GridSearchCV`` (a dict of lists, or a list of such dicts).
        A bare estimator, or ``(estimator, None)``, is fitted without tuning.
    datasets : dict of str to (X, y)
    outer_cv : int, splitter or None
        Default ``RepeatedStratifiedKFold(n_splits=10, n_repeats=10,
        random_state=random_state)`` (``RepeatedKFold`` for non-class targets). Costly with
        large grids: every outer split runs a full inner search per estimator.
    inner_cv : int, splitter or None
        Splitter applied to each outer training part. Default ``StratifiedKFold(5,
        shuffle=True, random_state=random_state)`` (``KFold`` for non-class targets).
    scoring : str, callable or None
        One metric, used both to choose the hyper-parameters and for the outer scores.
    n_jobs : int or None
        Joblib workers over (dataset, estimator, outer split); the inner searches run
        sequentially inside each task (no nested parallelism).
    groups : array-like or dict of str to array-like, optional
        Group labels, passed to the outer and (restricted to the training part) the inner
        splitter.
    random_state : int, default 0
        Seed of the default splitters.
    return_params : bool, default False
        Also return the chosen hyper-parameters.

    Returns
    -------
    Scores
        The outer test scores, paired across estimators; ``rho`` from the outer splits.
    pandas.DataFrame
        Only with ``return_params``: one row per (dataset, algorithm, outer split) with the
        chosen ``params`` and ``selection_score``, the best mean inner score (NaN when the
        grid has a single candidate and no search ran).
    """
    _sklearn()
    from sklearn.model_selection import KFold, StratifiedKFold
    from sklearn.utils import _safe_indexing

    models = _check_estimators(estimators, tuned=True)
    data = _check_datasets(datasets, groups)
    _check_scoring(scoring)
    names = list(models)
    bare = [estimator for estimator, _ in models.values()]
    Parallel, delayed = _parallel(n_jobs)

    tasks, outer_lists = [], []
    for dataset in data:
        where = f"dataset {dataset.name!r}"
        outer = _splitter(outer_cv, dataset.y, bare,
                          lambda: _repeated(dataset.y, bare, 10, 10, random_state))
        outer_splits = _splits(outer, dataset.X, dataset.y, dataset.groups, where)
        outer_lists.append(outer_splits)
        inner_lists = []
        for s, (train, _) in enumerate(outer_splits):
            X_train = _safe_indexing(dataset.X, train)
            y_train = None if dataset.y is None else _safe_indexing(dataset.y, train)
            g_train = None if dataset.groups is None else _safe_indexing(dataset.groups, train)
            default_cls = StratifiedKFold if _stratify(y_train, bare) else KFold
            inner = _splitter(inner_cv, y_train, bare, lambda: default_cls(
                n_splits=5, shuffle=True, random_state=random_state))
            inner_lists.append(_splits(inner, X_train, y_train, g_train,
                                       f"{where}, outer split {s} (inner splitter)"))
        for name, (estimator, candidates) in models.items():
            for s, ((train, test), inner_splits) in enumerate(zip(outer_splits, inner_lists)):
                tasks.append(delayed(_nested_fit_and_score)(
                    estimator, candidates, dataset.X, dataset.y, train, test, inner_splits,
                    scoring, f"dataset {dataset.name!r}, estimator {name!r}, outer split {s}"))

    scores, rows = _collect(Parallel(tasks), data, names, outer_lists)
    rhos = [_rho((len(train), len(test)) for train, test in splits) for splits in outer_lists]
    result = _assemble(names, data, rhos, scores)
    return (result, _params_frame(rows)) if return_params else result
