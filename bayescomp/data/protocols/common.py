"""What the protocols share: checks of the estimators, datasets and scorers, the splitters,
one fit and score with its error annotated, and the assembly of the paired scores.
scikit-learn is imported inside the functions (see :mod:`bayescomp.data.protocols`)."""
from __future__ import annotations

from typing import Mapping, NamedTuple

import numpy as np
import pandas as pd

from bayescomp.data.scores import DatasetScores, Scores, rho_from_split



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
        exc.add_note(f"(bayescomp.data.protocols: while fitting or scoring {where})")


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
