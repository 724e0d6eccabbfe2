"""Readers of paired fold scores: from numpy arrays, long and wide tables, and CSV files.

Each returns a :class:`~bayescomp.data.scores.Scores`, with every dataset's correlation
``rho`` given (``rho``), derived from the number of folds (``n_folds``, ``rho = 1/k``) or,
for a table, read from its ``rho`` column (as :meth:`Scores.to_frame` writes it) or else
derived from the folds seen in the data.
"""
from __future__ import annotations

import warnings
import zlib
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
import pandas as pd

from bayescomp.data.resolution import table_steps
from bayescomp.data.scores import DatasetScores, Scores, check_algorithm, warn_few_scores
from bayescomp.formatting import first_few

if TYPE_CHECKING:
    import os


def _per_dataset(value, names: Sequence[str], what: str) -> list:
    """Expand a scalar, a mapping by dataset name, or a sequence into one value per dataset."""
    if value is None or np.isscalar(value):
        return [value] * len(names)
    if isinstance(value, Mapping):
        missing = [n for n in names if n not in value and str(n) not in value]
        if missing:
            raise ValueError(f"{what} is not given for dataset(s) {missing}")
        return [value[n] if n in value else value[str(n)] for n in names]
    value = list(value)
    if len(value) != len(names):
        raise ValueError(f"{what} has {len(value)} values for {len(names)} datasets")
    return value


def _resolve_rho(names, rho, n_folds, inferred_folds=None) -> list[float]:
    """rho per dataset from an explicit rho, a number of folds, or folds seen in the data."""
    if rho is not None and n_folds is not None:
        raise ValueError("give either rho or n_folds, not both")
    if rho is not None:
        return [float(r) for r in _per_dataset(rho, names, "rho")]
    if n_folds is not None:
        folds = _per_dataset(n_folds, names, "n_folds")
    elif inferred_folds is not None:
        folds = inferred_folds
    else:
        raise ValueError("the correlation is unknown: give rho (e.g. 0.1) or n_folds "
                         "(rho = 1/n_folds for k-fold cross-validation)")
    for name, k in zip(names, folds):
        if k is None or int(k) < 2:
            raise ValueError(f"dataset {name!r}: n_folds = {k}; k-fold needs k >= 2")
    return [1.0 / int(k) for k in folds]


def _warn_missing_folds(labels: dict, stacklevel: int) -> None:
    """One :class:`~bayescomp.exceptions.InputWarning` naming the datasets that may have lost
    a fold, from each dataset's set of fold ``labels``: integer labels with a gap (0, 1, 2,
    4, ...), or fewer folds than most datasets of the table have. rho = 1/k from the k folds
    seen is that of k-fold cross-validation, which is wrong if a fold of a larger k failed."""
    from bayescomp.exceptions import InputWarning

    names = list(labels)
    counts = pd.Series({name: len(seen) for name, seen in labels.items()})
    usual = int(counts.mode().max())
    try:
        numbers = {name: sorted(float(label) for label in seen) for name, seen in labels.items()}
        integers = all(n.is_integer() for seen in numbers.values() for n in seen)
    except (TypeError, ValueError):   # labels that are not numbers: no gaps to tell
        integers = False
    suspects = []
    for name in names:
        k = counts[name]
        missing = (sorted(set(range(int(numbers[name][0]), int(numbers[name][-1]) + 1))
                          - {int(n) for n in numbers[name]}) if integers else [])
        if missing:
            suspects.append(f"{name!r} (fold{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(map(str, missing))} of {int(numbers[name][0])}-"
                            f"{int(numbers[name][-1])} missing; rho = 1/{k})")
        elif k < usual:
            suspects.append(f"{name!r} ({k} folds where most datasets have {usual}; "
                            f"rho = 1/{k})")
    if suspects:
        warnings.warn(f"dataset{'s' if len(suspects) > 1 else ''} "
                      f"{first_few(suspects, '; ')}: rho is 1/k for the k folds seen, as for "
                      "k-fold cross-validation; if a fold of a larger k is missing, give "
                      "n_folds (the CLI's --n-folds) or rho", InputWarning, stacklevel=stacklevel)


def repeated_runs(wide: pd.DataFrame) -> list[list]:
    """Groups of runs of one dataset whose scores are the same for every algorithm on every
    fold: ``wide`` is indexed by (run, fold), one column per algorithm. Runs whose scores are
    all one number (every algorithm perfect, say) are left out, as are datasets whose runs do
    not share their fold labels."""
    by_run = wide.unstack(level=1)                      # run x (algorithm, fold)
    if len(by_run) < 2 or by_run.isna().to_numpy().any():
        return []
    groups: dict[tuple, list] = {}
    for label, row in zip(by_run.index, by_run.to_numpy()):
        if np.ptp(row) > 0:
            groups.setdefault(tuple(row), []).append(label)
    return [runs for runs in groups.values() if len(runs) > 1]


def _warn_repeated_runs(found: dict, stacklevel: int) -> None:
    """One :class:`~bayescomp.exceptions.InputWarning` naming the datasets with runs of equal
    scores (:func:`repeated_runs`, ``{dataset: groups}``): one split done twice (a random
    state drawn twice) counts its evidence twice. A coarse score (a few test cases) can
    also repeat by chance, so it warns and changes nothing."""
    from bayescomp.exceptions import InputWarning

    if not found:
        return
    listed = [f"{name!r} (runs {' = '.join(map(str, runs))})" for name, groups in found.items()
              for runs in groups]
    warnings.warn(f"dataset{'s' if len(found) > 1 else ''} {first_few(listed, '; ')}: "
                  "these runs have the same score for every algorithm on every fold. If they "
                  "are one split done twice (a random state drawn twice, say), the model counts "
                  "its evidence twice; give every run its own split, or keep one of the copies",
                  InputWarning, stacklevel=stacklevel)


def from_arrays(scores: Mapping[str, object], *, rho: float | None = None,
                n_folds: int | None = None, datasets: Sequence[str] | None = None) -> Scores:
    """Scores from numpy fold matrices, one per algorithm.

    Parameters
    ----------
    scores : mapping of algorithm name to array-like
        Each value is a 2-D array (datasets x scores), a list of 1-D arrays (ragged:
        datasets with different numbers of scores) or a 1-D array (a single dataset).
        Row i of every algorithm must hold the same splits of dataset i in the same order.
    rho : float, sequence or mapping, optional
        Correlation per dataset (one number for all, or one per dataset).
    n_folds : int, sequence or mapping, optional
        Number of folds of k-fold cross-validation; sets ``rho = 1/n_folds``.
    datasets : sequence of str, optional
        Dataset names; default "0", "1", ...

    Returns
    -------
    Scores
    """
    if not scores:
        raise ValueError("no algorithms given")
    rows = {}
    for algorithm, value in scores.items():
        try:
            value = np.asarray(value, dtype=float)
        except ValueError:  # ragged: one 1-D array per dataset
            pass
        else:
            value = value[np.newaxis] if value.ndim == 1 else value
        rows[str(algorithm)] = [np.asarray(row, dtype=float).ravel() for row in value]
    counts = {a: len(r) for a, r in rows.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"algorithms have scores on different numbers of datasets: {counts}")
    n_datasets = next(iter(counts.values()))
    names = [str(n) for n in (datasets if datasets is not None else range(n_datasets))]
    if len(names) != n_datasets:
        raise ValueError(f"{len(names)} dataset names for {n_datasets} datasets")
    rhos = _resolve_rho(names, rho, n_folds)
    built = []
    for i, name in enumerate(names):
        sizes = {a: r[i].size for a, r in rows.items()}
        if len(set(sizes.values())) != 1:
            raise ValueError(f"dataset {name!r}: algorithms have different numbers of "
                             f"scores {sizes}; scores must be paired split by split")
        built.append(DatasetScores(name, rhos[i], np.vstack([r[i] for r in rows.values()])))
    result = Scores(tuple(rows), tuple(built))
    warn_few_scores(result)
    return result


def _with_default_columns(frame: pd.DataFrame, dataset, run):
    """A copy of ``frame`` with a single dataset and a single run where their columns are
    not named, and the column names to read them from."""
    frame = frame.copy()
    if dataset is None:
        dataset = "dataset"
        frame[dataset] = "dataset"
    if run is None:
        run = "run"
        frame[run] = 0
    return frame, dataset, run


#: the column of a table that gives each dataset's rho (what :meth:`Scores.to_frame` writes)
RHO_COLUMN = "rho"


def _rho_column(frame: pd.DataFrame, dataset: str, names) -> dict:
    """Each dataset's rho from the frame's rho column: one number per dataset."""
    values = pd.to_numeric(frame[RHO_COLUMN], errors="coerce")
    rhos = {}
    for name in names:
        seen = values[frame[dataset] == name].unique()
        if len(seen) != 1 or not np.isfinite(seen[0]):
            shown = sorted(frame.loc[frame[dataset] == name, RHO_COLUMN].astype(str).unique())
            raise ValueError(f"dataset {name!r}: column {RHO_COLUMN!r} must hold one number "
                             f"per dataset, got {shown[:5]}")
        rhos[name] = float(seen[0])
    return rhos


def from_long(frame: pd.DataFrame, *, dataset: str = "dataset", algorithm: str = "algorithm",
              run: str = "run", fold: str = "fold", score: str = "score", rho: float | None = None,
              n_folds: int | None = None, algorithms: Sequence[str] | None = None,
              _wide: bool = False) -> Scores:
    """Scores from a long frame with one row per (dataset, algorithm, run, fold).

    Parameters
    ----------
    frame : pandas.DataFrame
    dataset, algorithm, run, fold, score : str
        Column names. ``run`` may be None for a single run of cross-validation; ``dataset``
        may be None for a single dataset.
    rho, n_folds : optional
        As in :func:`from_arrays`. When neither is given, rho is read from the frame's
        column ``rho`` if it has one (one value per dataset), else ``rho = 1/k`` with k the
        number of distinct folds seen in each dataset.
    algorithms : sequence of str, optional
        Read only these algorithms' rows, in this order (default: every algorithm, in the
        order of their first rows); the other rows are not checked, so an algorithm left
        out may have missing or NaN scores, but its scores still give each dataset's step
        (:func:`~bayescomp.data.resolution.table_steps`).

    Returns
    -------
    Scores
    """
    frame, dataset, run = _with_default_columns(frame, dataset, run)
    needed = [dataset, algorithm, run, fold, score]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not found; the frame has {list(frame.columns)}")
    frame[dataset] = frame[dataset].astype(str)
    frame[algorithm] = frame[algorithm].astype(str)
    file_steps = {}
    if algorithms is not None:
        algorithms = [str(name) for name in algorithms]
        present = list(pd.unique(frame[algorithm]))
        for name in algorithms:
            check_algorithm(name, present)
        if len(set(algorithms)) < len(algorithms):
            raise ValueError(f"algorithms {algorithms}: a name given twice")
        kept = frame[algorithm].isin(algorithms)
        # a dataset with none of them is not left out silently: it fails as a dataset with
        # some of them and not others does (scores must be paired)
        has_any = kept.groupby(frame[dataset], sort=False).any()
        without = list(has_any.index[~has_any.to_numpy()])
        if without:
            raise ValueError(f"dataset {without[0]!r} has no scores of {algorithms}"
                             + (f" ({len(without)} such datasets)" if len(without) > 1 else ""))
        if not kept.all():
            file_steps = table_steps(frame, dataset, algorithm, run, fold, score)
        frame = frame[kept].copy()
    values = pd.to_numeric(frame[score], errors="coerce")
    bad = ~np.isfinite(values.to_numpy(dtype=float))
    if bad.any():
        first_bad = frame[bad].iloc[0]
        column = first_bad[algorithm] if _wide else score
        # the cell as the file holds it, not np.float64(nan): pandas reads an empty cell and
        # the texts "nan", "NA", "null" alike as missing
        cell = first_bad[score]
        shown = ("empty or NaN" if pd.isna(cell)
                 else repr(cell.item() if hasattr(cell, "item") else cell))
        raise ValueError(
            f"dataset {first_bad[dataset]!r}, algorithm {first_bad[algorithm]!r}: "
            f"{bad.sum()} NaN, infinite or non-numeric score(s), first at run "
            f"{first_bad[run]}, fold {first_bad[fold]} ({frame.index.name or 'row'} "
            f"{first_bad.name}, column {column!r}: {shown})")
    frame[score] = values
    key = [dataset, algorithm, run, fold]
    duplicated = frame.duplicated(key, keep=False)
    if duplicated.any():
        first = frame[duplicated].iloc[0]
        same = frame[duplicated & (frame[key] == first[key]).all(axis=1)].index.tolist()
        raise ValueError(
            f"dataset {first[dataset]!r}, algorithm {first[algorithm]!r}: run {first[run]}, "
            f"fold {first[fold]} appears {len(same)} times ({frame.index.name or 'row'}s {same})")
    algorithms = tuple(pd.unique(frame[algorithm]) if algorithms is None else algorithms)
    names = list(pd.unique(frame[dataset]))
    # each dataset's fold labels, once: their number gives rho when nothing else does
    by_dataset = frame.groupby(dataset, sort=False)[fold].agg(lambda seen: set(seen.dropna()))
    fold_labels = {name: by_dataset[name] for name in names}
    if rho is None and n_folds is None and RHO_COLUMN in frame.columns:
        rho = _rho_column(frame, dataset, names)
    if rho is None and n_folds is None:
        _warn_missing_folds(fold_labels, stacklevel=4 if _wide else 3)
    rhos = _resolve_rho(names, rho, n_folds,
                        inferred_folds=[len(seen) for seen in fold_labels.values()])
    built, repeated = [], {}
    for name, rho_i in zip(names, rhos):
        wide = (frame[frame[dataset] == name]
                .pivot(index=[run, fold], columns=algorithm, values=score)
                .reindex(columns=list(algorithms)).sort_index())
        holes = wide.isna()
        if holes.any().any():
            alg = holes.any().idxmax()
            (r, f) = holes.index[holes[alg].to_numpy()][0]
            present = [a for a in algorithms if not holes.loc[(r, f), a]]
            raise ValueError(f"dataset {name!r}, algorithm {alg!r}: no score for run {r}, "
                             f"fold {f}, which {present} have; scores must be paired")
        built.append(DatasetScores(name, rho_i, wide.to_numpy(dtype=float).T,
                                   file_steps.get(name)))
        if groups := repeated_runs(wide):
            repeated[name] = groups
    _warn_repeated_runs(repeated, stacklevel=4 if _wide else 3)
    result = Scores(algorithms, tuple(built))
    warn_few_scores(result, stacklevel=4 if _wide else 3)
    return result


def from_wide(frame: pd.DataFrame, *, algorithms: Sequence[str] | None = None,
              dataset: str = "dataset", run: str = "run", fold: str = "fold",
              rho: float | None = None, n_folds: int | None = None) -> Scores:
    """Scores from a wide frame: one row per (dataset, run, fold), one column per algorithm.

    ``algorithms`` defaults to every column other than ``dataset``, ``run``, ``fold`` and
    ``rho`` (each dataset's correlation, as in :func:`from_long`). Other parameters are as
    in :func:`from_long`; the other numeric columns count as algorithms for the step.
    """
    frame, dataset, run = _with_default_columns(frame, dataset, run)
    ids = [dataset, run, fold]
    missing = [c for c in ids if c not in frame.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not found; the frame has {list(frame.columns)}")
    every = [c for c in frame.columns if c not in ids + [RHO_COLUMN]]
    if algorithms is None:
        algorithms = every
    unknown = [a for a in algorithms if a not in frame.columns]
    if unknown:
        raise ValueError(f"unknown algorithm column(s) {unknown}; the frame has {list(frame.columns)}")
    # keep the frame's index so that errors point at the original rows (lines of a CSV)
    if RHO_COLUMN in frame.columns and RHO_COLUMN not in algorithms:
        ids = ids + [RHO_COLUMN]
    algorithms = list(algorithms)
    # the other algorithms' columns: numeric ones (a column of notes is no algorithm's)
    others = [c for c in every
              if c not in algorithms and pd.api.types.is_numeric_dtype(frame[c])]
    long = frame.melt(id_vars=ids, value_vars=algorithms + others, var_name="algorithm",
                      value_name="score", ignore_index=False)
    return from_long(long, dataset=dataset, algorithm="algorithm", run=run, fold=fold,
                     score="score", rho=rho, n_folds=n_folds,
                     algorithms=algorithms, _wide=True)


def read_csv(path: str | os.PathLike, *, format: str = "auto", **columns) -> Scores:
    """Scores from a CSV file in the long or wide layout (see :func:`from_long`, :func:`from_wide`).

    ``format="auto"`` reads the long layout when the file has the algorithm and score
    columns (``algorithm``, ``score``, or the names given for them), else the wide one.
    Keyword arguments name the columns and give ``rho``, ``n_folds`` or ``algorithms``
    (only these algorithms' scores are read and checked, in this order). A file without a
    ``run`` column, when none is named, holds one run of cross-validation.
    """
    if format not in ("auto", "long", "wide"):
        raise ValueError(f"format must be 'auto', 'long' or 'wide', got {format!r}")
    try:
        frame = pd.read_csv(path)
    except IsADirectoryError:
        raise ValueError(f"{path} is a directory, not a CSV file") from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} is empty: expected a CSV file with a header line "
                         "(e.g. dataset,algorithm,run,fold,score)") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not a text CSV file (undecodable byte at offset "
                         f"{error.start})") from None
    except pd.errors.ParserError as error:   # pandas says "... in line N ..."
        raise ValueError(f"{path}: not a well-formed CSV file: "
                         f"{' '.join(str(error).split())}") from None
    except (OSError, EOFError, zlib.error) as error:
        if isinstance(error, (FileNotFoundError, PermissionError)):
            raise
        # pandas decompresses by the file's extension (.gz, .zip, ...): a damaged archive
        raise ValueError(f"{path}: cannot be read as a CSV file ({error})") from None
    # number rows as the file's lines (line 1 is the header), for error messages
    frame.index = pd.RangeIndex(2, len(frame) + 2, name="line")
    if format == "auto":
        named = {columns.get("algorithm", "algorithm"), columns.get("score", "score")}
        format = "long" if named <= set(frame.columns) else "wide"
    reader = from_long if format == "long" else from_wide
    if "run" not in columns and "run" not in frame.columns:
        # one run of cross-validation (an OpenML task's folds): each fold's scores are
        # then unique, and a file with repeated runs under another name fails as
        # duplicated folds, which names the column to give
        columns = dict(columns, run=None)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scores = reader(frame, **columns)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    for warning in caught:   # name the file in the reader's warnings
        warnings.warn(f"{path}: {warning.message}", warning.category, stacklevel=2)
    return scores
