"""Paired scores from running several scikit-learn estimators on the same splits.

Every test in the package assumes that column ``j`` of every algorithm comes from the same
train/test split (the scores are *paired*) and needs the correlation ``rho`` of the
differences of two splits. The functions here produce such :class:`~bayescomp.data.Scores`:

* :func:`cross_validate_scores`: (repeated) cross-validation with one splitter. The splits
  of each dataset are generated **once** and the same list is used for every estimator, so
  the pairing does not rely on every estimator drawing the same random numbers.
* :func:`five_by_two` and :func:`as_5x2`: five replications of 2-fold cross-validation for
  Dietterich's 5x2cv t-test and Alpaydin's combined F-test
  (:func:`bayescomp.classical.paired_ttest_5x2cv`, :func:`~bayescomp.classical.combined_ftest_5x2cv`).
* :func:`nested_cross_validate_scores`: hyper-parameters chosen by an inner grid search on the
  training part of each outer split only; the outer test scores are the paired scores.
* :func:`holistic_splits` and :func:`holistic_cross_validate_scores`: holistic N-fold
  cross-validation, with a training, a validation and a test part in every rotation and the
  training size (in folds) as a parameter.

``rho`` is the mean over the splits actually used of ``n_test / (n_train + n_test)``
(Nadeau & Bengio 2003): ``1/k`` for k-fold cross-validation.

scikit-learn is an optional dependency: it is imported inside the functions, so
``import bayescomp`` works without it. Estimators are cloned (:func:`sklearn.base.clone`)
for every split, so nothing fitted leaks from one split to the next; the results are
reproducible when the splitters and the estimators have integer ``random_state``.
Fits run through joblib (``n_jobs``) and the results do not depend on ``n_jobs``: each task
gets its split as data, not a random seed.

References
----------
C. Nadeau and Y. Bengio (2003). Inference for the generalization error. Machine Learning
52(3):239-281.

T. G. Dietterich (1998). Approximate statistical tests for comparing supervised
classification learning algorithms. Neural Computation 10(7):1895-1923.

E. Alpaydin (1999). Combined 5 x 2 cv F test for comparing supervised classification
learning algorithms. Neural Computation 11(8):1885-1892.

G. C. Cawley and N. L. C. Talbot (2010). On over-fitting in model selection and subsequent
selection bias in performance evaluation. Journal of Machine Learning Research 11:2079-2107.
"""
from __future__ import annotations

from typing import Mapping, NamedTuple

import numpy as np
import pandas as pd

from bayescomp.data.scores import DatasetScores, Scores, rho_from_split

__all__ = [
    "cross_validate_scores", "five_by_two", "as_5x2", "nested_cross_validate_scores",
    "holistic_folds", "holistic_rotations", "holistic_splits", "holistic_cross_validate_scores",
]

REFITS = ("train", "train+validation")


# --------------------------------------------------------------------------- helpers

def _sklearn():
    """Import scikit-learn or say how to get it (it is an optional extra of the package)."""
    try:
        import sklearn
    except ImportError:
        raise ImportError("bayescomp.data.protocols runs scikit-learn estimators and needs "
                          "scikit-learn: pip install scikit-learn (or bayescomp[examples])"
                          ) from None
    return sklearn


def _parallel(n_jobs):
    """scikit-learn's joblib wrappers, which carry its global config into the workers."""
    try:
        from sklearn.utils.parallel import Parallel, delayed
    except ImportError:  # scikit-learn < 1.2.1
        from joblib import Parallel, delayed
    return Parallel(n_jobs=n_jobs), delayed


class _Dataset(NamedTuple):
    name: str
    X: object
    y: object
    groups: object
    n_samples: int


def _num_samples(value, what: str, where: str) -> int:
    shape = getattr(value, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    try:
        return len(value)
    except TypeError:
        raise ValueError(f"{where}: {what} has no length (got {type(value).__name__}); "
                         "expected an array-like with one row per sample") from None


def _check_datasets(datasets, groups) -> list[_Dataset]:
    """Validate ``{name: (X, y)}``: every error names the dataset at fault."""
    if not isinstance(datasets, Mapping):
        raise ValueError(f"datasets must be a dict {{name: (X, y)}}, got "
                         f"{type(datasets).__name__}")
    if not datasets:
        raise ValueError("no datasets given: pass a dict {name: (X, y)} with at least one "
                         "dataset")
    names = [str(n) for n in datasets]
    if len(set(names)) != len(names):
        raise ValueError(f"dataset names are not unique once converted to str: {names}")
    if groups is not None and not isinstance(groups, Mapping) and len(datasets) > 1:
        raise ValueError("groups must be a dict {dataset name: groups} when several datasets "
                         "are given")
    checked = []
    for key, name in zip(datasets, names):
        where = f"dataset {name!r}"
        value = datasets[key]
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise ValueError(f"{where}: expected a pair (X, y), got {type(value).__name__}"
                             + (f" of length {len(value)}" if hasattr(value, "__len__") else ""))
        X, y = value
        n = _num_samples(X, "X", where)
        if n == 0:
            raise ValueError(f"{where}: X has no samples")
        if y is not None:
            m = _num_samples(y, "y", where)
            if m != n:
                raise ValueError(f"{where}: X has {n} samples but y has {m}; they must have "
                                 "one entry per sample")
        g = groups.get(key, groups.get(name)) if isinstance(groups, Mapping) else groups
        if g is not None and _num_samples(g, "groups", where) != n:
            raise ValueError(f"{where}: X has {n} samples but groups has "
                             f"{_num_samples(g, 'groups', where)}")
        checked.append(_Dataset(name, X, y, g, n))
    return checked


def _check_estimators(estimators, *, tuned: bool) -> dict:
    """``{name: estimator}`` or, when ``tuned``, ``{name: (estimator, param_grid)}``.

    Returns ``{name: estimator}`` or ``{name: (estimator, list of candidate dicts)}``.
    """
    expected = "{name: estimator}" + (" or {name: (estimator, param_grid)}" if tuned else "")
    if not isinstance(estimators, Mapping):
        raise ValueError(f"estimators must be a dict {expected}, got "
                         f"{type(estimators).__name__}")
    if not estimators:
        raise ValueError(f"no estimators given: pass a dict {expected} with at least one entry")
    names = [str(n) for n in estimators]
    if len(set(names)) != len(names):
        raise ValueError(f"estimator names are not unique once converted to str: {names}")
    checked = {}
    for name, value in zip(names, estimators.values()):
        if tuned:
            if hasattr(value, "fit"):  # a bare estimator: nothing to tune
                value = (value, None)
            if not isinstance(value, (tuple, list)) or len(value) != 2:
                raise ValueError(f"estimator {name!r}: expected a pair (estimator, param_grid) "
                                 f"or an estimator, got {type(value).__name__}")
            estimator, grid = value
            candidates = _candidates(grid, name)
        else:
            estimator = value
            if isinstance(value, (tuple, list)):
                raise ValueError(f"estimator {name!r}: got a {type(value).__name__}; pass the "
                                 "estimator itself (use nested_cross_validate_scores or "
                                 "holistic_cross_validate_scores for (estimator, param_grid))")
        if not hasattr(estimator, "fit"):
            raise ValueError(f"estimator {name!r}: {type(estimator).__name__} has no fit method")
        checked[name] = (estimator, candidates) if tuned else estimator
    return checked


def _candidates(grid, name) -> list[dict]:
    """The candidate settings of a grid, in scikit-learn's ParameterGrid order."""
    from sklearn.model_selection import ParameterGrid

    if grid is None or (isinstance(grid, Mapping) and not grid):
        return [{}]
    try:
        candidates = list(ParameterGrid(grid))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"estimator {name!r}: invalid param_grid: {exc}") from None
    if not candidates:
        raise ValueError(f"estimator {name!r}: the param_grid has no candidate")
    return candidates


def _check_scoring(scoring):
    """A single metric only: the Scores hold one number per algorithm and split."""
    if isinstance(scoring, (list, tuple, set, dict)):
        raise ValueError(f"scoring must be one metric (a name, a scorer or None), got "
                         f"{type(scoring).__name__}; run once per metric")
    if isinstance(scoring, str):
        from sklearn.metrics import get_scorer
        get_scorer(scoring)  # unknown names fail here, before any fit


def _scorer(estimator, scoring):
    from sklearn.metrics import check_scoring
    return check_scoring(estimator, scoring=scoring)


def _stratify(y, estimators) -> bool:
    """Stratify when y is a class label and not every estimator is a regressor."""
    from sklearn.base import is_regressor
    from sklearn.utils.multiclass import type_of_target

    if y is None or all(is_regressor(e) for e in estimators):
        return False
    return type_of_target(y) in ("binary", "multiclass")


def _repeated(y, estimators, n_splits, n_repeats, random_state):
    from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold

    cls = RepeatedStratifiedKFold if _stratify(y, estimators) else RepeatedKFold
    return cls(n_splits=n_splits, n_repeats=n_repeats, random_state=random_state)


def _splitter(cv, y, estimators, default):
    """The splitter of one dataset: ``default()`` when cv is None, else scikit-learn's check_cv."""
    from sklearn.base import is_regressor
    from sklearn.model_selection import check_cv

    if cv is None:
        return default()
    # an int means (Stratified)KFold as in scikit-learn; classifier=True stratifies only
    # class-label targets, so it is also right for estimators that declare no type
    return check_cv(cv, y, classifier=not all(is_regressor(e) for e in estimators))


def _splits(splitter, X, y, groups, where) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every split of the splitter, generated once (so every estimator gets the same ones)."""
    try:
        splits = [(np.asarray(train, dtype=np.intp), np.asarray(test, dtype=np.intp))
                  for train, test in splitter.split(X, y, groups)]
    except ValueError as exc:
        raise ValueError(f"{where}: the splitter {splitter!r} failed: {exc}") from None
    if not splits:
        raise ValueError(f"{where}: the splitter {splitter!r} produced no split")
    for j, (train, test) in enumerate(splits):
        if train.size == 0 or test.size == 0:
            raise ValueError(f"{where}: split {j} has {train.size} training and {test.size} "
                             "test samples; both must be positive")
    return splits


def _rho(sizes) -> float:
    """Mean of n_test / (n_train + n_test) over the splits actually used."""
    return float(np.mean([rho_from_split(n_train, n_test) for n_train, n_test in sizes]))


def _split_data(estimator, X, y, indices, train_indices=None):
    """Rows of X and y; kernel/pairwise estimators get the right sub-matrix, as in sklearn."""
    try:
        from sklearn.utils.metaestimators import _safe_split
    except ImportError:  # private helper moved: plain row indexing
        from sklearn.utils import _safe_indexing
        return (_safe_indexing(X, indices),
                None if y is None else _safe_indexing(y, indices))
    return _safe_split(estimator, X, y, indices, train_indices)


def _fit(model, X, y):
    # mirror scikit-learn: unsupervised estimators are fitted without a y argument
    return model.fit(X) if y is None else model.fit(X, y)


def _annotate(exc: BaseException, where: str) -> None:
    """Say which dataset / estimator / split failed, keeping the exception's type."""
    if hasattr(exc, "add_note"):  # Python >= 3.11
        exc.add_note(f"(bayescomp.protocols: while fitting or scoring {where})")


def _assemble(names, data, rhos, scores) -> Scores:
    """Scores from ``scores[d][a]`` = list of per-split scores of estimator a on dataset d."""
    built = []
    for d, dataset in enumerate(data):
        values = np.array([scores[d][a] for a in range(len(names))], dtype=float)
        built.append(DatasetScores(dataset.name, rhos[d], values))
    return Scores(tuple(names), tuple(built))


def _params_frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["dataset", "algorithm", "split", "params",
                                       "selection_score"])


# --------------------------------------------------------------------------- plain CV

def _fit_and_score(estimator, X, y, train, test, scoring, where) -> float:
    from sklearn.base import clone

    model = clone(estimator)
    try:
        X_train, y_train = _split_data(model, X, y, train)
        X_test, y_test = _split_data(model, X, y, test, train)
        _fit(model, X_train, y_train)
        return float(_scorer(model, scoring)(model, X_test, y_test))
    except Exception as exc:
        _annotate(exc, where)
        raise


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
        (5, 2) differences of :func:`bayescomp.classical.paired_ttest_5x2cv`.
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
        :func:`bayescomp.classical.paired_ttest_5x2cv` and
        :func:`~bayescomp.classical.combined_ftest_5x2cv` expect (the t-test's numerator is
        the difference of the *first* fold of the *first* replication, so the order matters).
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


# --------------------------------------------------------------------------- nested CV

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


def _collect(outputs, data, names, split_lists):
    """Scores per dataset x estimator x split, and one row of chosen parameters per fit,
    from task outputs (score, params, selection score) in dataset, estimator, split order."""
    flat = iter(outputs)
    scores, rows = [], []
    for dataset, splits in zip(data, split_lists):
        per_estimator = []
        for name in names:
            column = []
            for s in range(len(splits)):
                score, params, selection = next(flat)
                column.append(score)
                rows.append((dataset.name, name, s, params, selection))
            per_estimator.append(column)
        scores.append(per_estimator)
    return scores, rows


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


# --------------------------------------------------------------------------- holistic CV

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
