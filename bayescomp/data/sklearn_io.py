"""Scores from scikit-learn's ``cross_validate`` output and ``GridSearchCV.cv_results_``.

scikit-learn is not imported here: the functions read plain dictionaries and duck-type the
splitters, so the package works without it.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Mapping

import numpy as np

from bayescomp.data.scores import DatasetScores, Scores, rho_from_split

if TYPE_CHECKING:
    from typing import Any, Sequence
    from bayescomp.annotations import ArrayLike


def rho_from_cv(cv: Any, X: ArrayLike | None = None, y: ArrayLike | None = None,
                groups: ArrayLike | None = None) -> float:
    """The Nadeau-Bengio correlation ``n_test / (n_train + n_test)`` of a scikit-learn splitter.

    With ``X`` the splits are generated and the ratio averaged over them; without it the
    ratio is read from the splitter: ``1/k`` for k-fold splitters (an int ``cv`` means
    k-fold, as in scikit-learn) and ``test_size / (train_size + test_size)`` for shuffle
    splits given as fractions.
    """
    if X is not None:
        ratios = [rho_from_split(len(train), len(test)) for train, test in cv.split(X, y, groups)]
        return float(np.mean(ratios))
    if isinstance(cv, (int, np.integer)) and not isinstance(cv, bool):
        return 1.0 / int(cv)
    name = type(cv).__name__
    params = getattr(cv, "cvargs", None) or vars(cv)
    if "KFold" in name and "n_splits" in params:
        return 1.0 / int(params["n_splits"])
    test, train = params.get("test_size"), params.get("train_size")
    if "ShuffleSplit" in name and isinstance(test, float):
        train = 1.0 - test if train is None else train
        if isinstance(train, float):
            return test / (train + test)
    raise ValueError(f"cannot read the train/test sizes of {cv!r}; pass rho=... or the data "
                     "X (and y, groups) so that the splits can be generated")


def _rho(rho, cv, X, y, groups) -> float:
    if rho is not None:
        return float(rho)
    if cv is None:
        raise ValueError("the correlation is unknown: pass rho=... or the splitter cv=...")
    return rho_from_cv(cv, X, y, groups)


def from_cross_validate(results: Mapping[str, Mapping], *, dataset: str = "dataset",
                        metric: str = "test_score", cv: Any = None, rho: float | None = None,
                        X: ArrayLike | None = None, y: ArrayLike | None = None,
                        groups: ArrayLike | None = None) -> Scores:
    """Scores of one dataset from ``sklearn.model_selection.cross_validate`` outputs.

    Parameters
    ----------
    results : mapping of algorithm name to the dict ``cross_validate`` returned
        All algorithms must have been run with the same splits (pass the same splitter
        with a fixed ``random_state``).
    dataset : str
        Name of the dataset.
    metric : str
        Key of the scores, e.g. ``"test_score"`` or ``"test_accuracy"``.
    cv, rho, X, y, groups
        ``rho`` directly, or the splitter (and optionally the data) it is read from,
        see :func:`rho_from_cv`.

    Returns
    -------
    Scores
        Use :func:`bayescomp.concat` to combine the scores of several datasets.
    """
    rows = []
    for algorithm, output in results.items():
        if metric not in output:
            raise ValueError(f"dataset {dataset!r}, algorithm {algorithm!r}: no {metric!r} in "
                             f"the cross_validate output; keys are {sorted(output)}")
        rows.append(np.asarray(output[metric], dtype=float))
    sizes = {a: r.size for a, r in zip(results, rows)}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"dataset {dataset!r}: algorithms have different numbers of splits {sizes}")
    return Scores(tuple(map(str, results)), (DatasetScores(
        str(dataset), _rho(rho, cv, X, y, groups), np.vstack(rows)),))


def _candidate_name(params: Mapping) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in params.items())


def from_cv_results(search: Any, *, dataset: str = "dataset", metric: str = "score",
                    names: Sequence[str] | None = None, cv: Any = None, rho: float | None = None,
                    X: ArrayLike | None = None, y: ArrayLike | None = None,
                    groups: ArrayLike | None = None) -> Scores:
    """Scores of the candidates of a grid or randomized search, one "algorithm" per candidate.

    Parameters
    ----------
    search : fitted ``GridSearchCV`` / ``RandomizedSearchCV``, or its ``cv_results_`` dict
        The ``split<i>_test_<metric>`` columns are the paired scores. When the search
        object is given, its ``cv`` is used for ``rho`` unless ``cv`` or ``rho`` is passed.
    dataset : str
    metric : str
        ``"score"`` for single-metric searches, else the scorer's name.
    names : sequence of str, optional
        Names of the candidates; default built from ``params`` ("C=1, kernel='rbf'").
    cv, rho, X, y, groups
        As in :func:`from_cross_validate`.

    Returns
    -------
    Scores
    """
    results = getattr(search, "cv_results_", search)
    if cv is None and rho is None and hasattr(search, "cv_results_"):
        cv = 5 if search.cv is None else search.cv
    pattern = re.compile(rf"^split(\d+)_test_{re.escape(metric)}$")
    columns = sorted((int(m.group(1)), key) for key in results
                     if (m := pattern.match(key)))
    if not columns:
        raise ValueError(f"no split<i>_test_{metric} columns in the search results")
    matrix = np.column_stack([np.asarray(results[key], dtype=float) for _, key in columns])
    if names is None:
        names = [_candidate_name(p) for p in results["params"]]
    if len(names) != matrix.shape[0]:
        raise ValueError(f"{len(names)} names for {matrix.shape[0]} candidates")
    return Scores(tuple(map(str, names)), (DatasetScores(
        str(dataset), _rho(rho, cv, X, y, groups), matrix),))
