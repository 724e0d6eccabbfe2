"""Paired fold scores: the one data model every test in the package reads.

A :class:`Scores` holds, per dataset, the scores of every algorithm on the same
runs x folds (paired: column j of every algorithm comes from the same train/test split)
and the dataset's correlation ``rho`` between the differences of two splits, which the
correlated t-test and the hierarchical model need. For k-fold cross-validation
``rho = 1/k``; in general ``rho = n_test / (n_train + n_test)`` (Nadeau & Bengio 2003).

Scores may be fractions or percentages: a ROPE is read in the units of the scores.
Datasets may have different numbers of scores and different ``rho`` (ragged collections).
The readers (arrays, long and wide tables, CSV) are in :mod:`bayescomp.data.readers`.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from bayescomp.data.resolution import score_step
from bayescomp.formatting import first_few

#: fewer scores per algorithm than this on a dataset draw an InputWarning
FEW_SCORES = 5


@dataclass(frozen=True, eq=False)
class DatasetScores:
    """Scores of every algorithm on one dataset: ``values[a, j]`` is algorithm a on split j.

    ``step`` is the scores' resolution (:func:`bayescomp.data.resolution.score_step`), read
    from the values when not given; a subset of the algorithms keeps the whole dataset's."""

    name: str
    rho: float
    values: np.ndarray
    step: float | None = None

    def __post_init__(self):
        if self.step is None:
            object.__setattr__(self, "step", score_step(self.values))

    @property
    def n_scores(self) -> int:
        return self.values.shape[1]


def check_algorithm(algorithm, known) -> None:
    """A ValueError unless ``algorithm`` is one of ``known``: it lists the known names and
    suggests the one that differs only in case."""
    if algorithm in known:
        return
    same = [a for a in known if a.casefold() == str(algorithm).casefold()]
    hint = f" (did you mean {same[0]!r}?)" if same else ""
    raise ValueError(f"unknown algorithm {algorithm!r}{hint}; the scores hold {list(known)}")


@dataclass(frozen=True, eq=False)
class Scores:
    """Paired per-split scores of several algorithms on one or more datasets.

    Build one with :func:`from_arrays`, :func:`from_long`, :func:`from_wide`,
    :func:`read_csv`, :func:`from_cv_results` or :func:`from_cross_validate`.
    """

    algorithms: tuple[str, ...]
    datasets: tuple[DatasetScores, ...]

    def __post_init__(self):
        if len(set(self.algorithms)) != len(self.algorithms):
            raise ValueError(f"algorithm names are not unique: {list(self.algorithms)}")
        names = [d.name for d in self.datasets]
        if len(set(names)) != len(names):
            raise ValueError(f"dataset names are not unique: {names}")
        if not self.datasets:
            raise ValueError("no datasets given")
        for dataset in self.datasets:
            _validate(dataset, self.algorithms)

    def __len__(self) -> int:
        return len(self.datasets)

    def __repr__(self) -> str:
        sizes = sorted({d.n_scores for d in self.datasets})
        return (f"Scores({len(self.algorithms)} algorithms {list(self.algorithms)}, "
                f"{len(self)} datasets, scores per dataset {sizes})")

    @property
    def dataset_names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.datasets)

    @property
    def rho(self) -> np.ndarray:
        return np.array([d.rho for d in self.datasets])

    @property
    def n_scores(self) -> np.ndarray:
        return np.array([d.n_scores for d in self.datasets])

    def algorithm_index(self, algorithm: str) -> int:
        """Position of ``algorithm``; a ValueError listing the known names if it is unknown,
        and suggesting the one that differs only in case."""
        check_algorithm(algorithm, self.algorithms)
        return self.algorithms.index(algorithm)

    def dataset(self, name) -> DatasetScores:
        for dataset in self.datasets:
            if dataset.name == str(name):
                return dataset
        raise ValueError(f"unknown dataset {name!r}; the scores hold {list(self.dataset_names)}")

    def differences(self, first: str, second: str) -> list[np.ndarray]:
        """Per dataset, the paired differences ``first - second`` of every split."""
        if first == second:
            raise ValueError(f"first and second are the same algorithm {first!r}")
        i, j = self.algorithm_index(first), self.algorithm_index(second)
        return [d.values[i] - d.values[j] for d in self.datasets]

    def mean_differences(self, first: str, second: str) -> np.ndarray:
        """Per dataset, the mean of ``first - second`` over its splits."""
        return np.array([np.mean(x) for x in self.differences(first, second)])

    def subset(self, datasets=None, algorithms=None) -> "Scores":
        """The same scores restricted to some datasets and/or algorithms (in the order given)."""
        algorithms = tuple(self.algorithms if algorithms is None else algorithms)
        rows = [self.algorithm_index(a) for a in algorithms]
        chosen = self.datasets if datasets is None else [self.dataset(n) for n in datasets]
        return Scores(algorithms, tuple(
            DatasetScores(d.name, d.rho, d.values[rows], d.step) for d in chosen))

    def to_frame(self) -> pd.DataFrame:
        """A long frame, one row per (dataset, algorithm, run, fold): the columns dataset,
        algorithm, run, fold, score and rho, which :func:`bayescomp.read_csv` and
        :func:`bayescomp.from_long` read back to the same scores.

        Where ``rho = 1/k`` and k divides the number of scores (k-fold cross-validation),
        split j is fold ``j % k`` of run ``j // k``; otherwise each split is a run of its own
        (fold 0), and the rho column carries the correlation."""
        parts = []
        for d in self.datasets:
            split = np.arange(d.n_scores)
            k = round(1 / d.rho) if d.rho > 0 else 0
            if k >= 2 and abs(k * d.rho - 1) < 1e-9 and d.n_scores % k == 0:
                run, fold = split // k, split % k
            else:
                run, fold = split, np.zeros_like(split)
            for a, algorithm in enumerate(self.algorithms):
                parts.append(pd.DataFrame({
                    "dataset": d.name, "algorithm": algorithm, "run": run, "fold": fold,
                    "score": d.values[a], "rho": d.rho}))
        return pd.concat(parts, ignore_index=True)

    def summary(self) -> str:
        lines = [repr(self)]
        means = pd.DataFrame(
            [d.values.mean(axis=1) for d in self.datasets],
            index=pd.Index(self.dataset_names, name="dataset"), columns=list(self.algorithms))
        means["n"] = self.n_scores
        means["rho"] = self.rho
        lines.append(means.to_string(float_format=lambda v: f"{v:.4g}"))
        return "\n".join(lines)


def _validate(dataset: DatasetScores, algorithms: Sequence[str]) -> None:
    values = dataset.values
    where = f"dataset {dataset.name!r}"
    if values.ndim != 2 or values.shape[0] != len(algorithms):
        raise ValueError(f"{where}: expected scores of {len(algorithms)} algorithms, "
                         f"got an array of shape {values.shape}")
    for a, algorithm in enumerate(algorithms):
        bad = ~np.isfinite(values[a])
        if bad.any():
            kinds = "NaN" if np.isnan(values[a][bad]).all() else "NaN or infinite"
            raise ValueError(f"{where}, algorithm {algorithm!r}: {bad.sum()} {kinds} score(s) "
                             f"at split(s) {np.flatnonzero(bad)[:10].tolist()}")
    if values.shape[1] < 2:
        raise ValueError(f"{where}: {values.shape[1]} score(s) per algorithm; at least 2 "
                         "splits are needed to estimate a variance")
    if not (np.isfinite(dataset.rho) and 0 <= dataset.rho < 1):
        raise ValueError(f"{where}: rho = {dataset.rho} is outside [0, 1); for k-fold "
                         "cross-validation rho = 1/k")


def warn_few_scores(scores: Scores, stacklevel: int = 3) -> None:
    """One :class:`~bayescomp.exceptions.InputWarning` naming the datasets with fewer than
    :data:`FEW_SCORES` scores per algorithm: legal, but a variance from so few splits is
    barely estimated, and the posterior is wide."""
    from bayescomp.exceptions import InputWarning

    few = [(d.name, d.n_scores) for d in scores.datasets if d.n_scores < FEW_SCORES]
    if not few:
        return
    listed = first_few(f"{name!r} ({n} scores)" for name, n in few)
    warnings.warn(f"dataset{'s' if len(few) > 1 else ''} {listed}: fewer than "
                  f"{FEW_SCORES} scores per algorithm (n scores give n - 1 degrees of freedom); "
                  "the variance is barely estimated; use more runs or folds (e.g. 10 x 10-fold "
                  "cross-validation)", InputWarning, stacklevel=stacklevel)


def rho_from_split(n_train: int, n_test: int) -> float:
    """Correlation of the Nadeau-Bengio correction: ``n_test / (n_train + n_test)``."""
    if n_train <= 0 or n_test <= 0:
        raise ValueError(f"split sizes must be positive, got n_train={n_train}, n_test={n_test}")
    return n_test / (n_train + n_test)


def concat(collections: Sequence[Scores]) -> Scores:
    """One collection from several with the same algorithms (e.g. one per dataset)."""
    algorithms = collections[0].algorithms
    for c in collections[1:]:
        if set(c.algorithms) != set(algorithms):
            raise ValueError(f"cannot combine scores of {list(algorithms)} with {list(c.algorithms)}")
    return Scores(algorithms, tuple(
        d for c in collections for d in c.subset(algorithms=algorithms).datasets))
