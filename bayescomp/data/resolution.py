"""The resolution of a dataset's scores: the step q between the values a score can take.

An accuracy on a test set of n cases moves in steps of 1 / n (100 / n as a percentage), so
paired differences cannot tell variances below the rounding of one step, q / sqrt(12),
apart; the hierarchical models bound every dataset's noise below by it (their floors), which
constant differences need. The step is a property of the dataset (its test sets), so it is
read from every algorithm's scores, those of a file's algorithms not asked for too
(:func:`bayescomp.data.readers.from_long`), and kept when a collection is narrowed to a pair
(:meth:`bayescomp.data.scores.Scores.subset`): a pair's fit and a joint fit of many
algorithms use the same floors, whichever algorithms were read.

The gaps between scores of one split (one test set, one step) are multiples of its step;
between splits of different test sizes (1368 and 1369 cases) they are not, and can be far
smaller. So the step is read within splits that hold at least three distinct scores (two
are the pair's difference itself, a multiple of the step that on consistent differences is
many steps): the smallest over them of the gaps' common step (:func:`common_steps`; gaps of 2
and 3 cases give 1 case), or the smallest gap where the gaps share none near it. On
bbtcomp's 132 datasets (15 algorithms, 4-fold) this is 0.98 to 1 times 1 / n_test on every
dataset (the smallest gap alone: up to 3 times, and 2 times on xd6 without qda's scores, so
that a file with qda gave other floors), where the smallest gap between any two scores of a
dataset was a median 0.42 and at least 0.004 times it. A dataset with no
such split (two algorithms, or all but two equal everywhere) takes that smallest gap of any
two distinct scores; a dataset whose scores are one number has no step (nan), and
:func:`steps` gives it the median of the others'.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: gaps below this, relative to the scores' magnitude (at least 1), are floating-point noise:
#: 0.7 + 0.02 and 0.72
NOISE = 1e-9
#: a split's smallest gap is at most this many steps where its gaps share a common step: on
#: bbtcomp's 132 datasets 1 to 3 (15 algorithms); percentages rounded to 2 decimals share
#: 0.01, 41 times below a step of 100 / 243
MULTIPLE = 8
#: scores written with at most this many decimals are read as rounded (:func:`written_unit`)
DECIMALS = 8


def written_unit(finite: np.ndarray) -> float | None:
    """The last decimal place of scores that are all written with at most :data:`DECIMALS`
    decimals (0.0001 for 0.8533 and 0.85), else None (accuracies k / n written in full)."""
    for decimals in range(DECIMALS + 1):
        shifted = finite * 10.0 ** decimals
        if np.all(np.abs(shifted - np.round(shifted)) <= NOISE * np.maximum(1.0, np.abs(shifted))):
            return 10.0 ** -decimals
    return None


def common_steps(gaps: np.ndarray, distinct: np.ndarray, unit: float | None = None
                 ) -> np.ndarray:
    """Per split (a column of ``gaps[gap, split]``, of which ``distinct`` marks those between
    distinct scores, at least one per split), the largest q of which every such gap is a
    whole multiple (to a millionth of q), where its smallest gap is at most
    :data:`MULTIPLE` times it; else that smallest gap.

    Accuracies k / n on one test set: gaps of 2 and 3 cases give 1 / n where the smallest
    gap is 2 / n (bbtcomp's xd6 without qda). Scores rounded to a coarser grid than their
    step (percentages to 2 decimals) or continuous ones end in a q far below the smallest
    gap, which is kept. So is a q that is the scores' written ``unit``
    (:func:`written_unit`): it may be the rounding's, as 0.0001 from accuracies on 4000 cases
    written to 4 decimals (gaps of 5 and 7 units for 2 and 3 cases). Rounding leaves
    gaps one unit apart, so a q of 2 units or more is the step's (1 / 500: 0.002). Every
    split at once: 400 datasets of 15 algorithms' scores on 100 splits each take 0.1 s."""
    smallest = np.where(distinct, gaps, np.inf).min(axis=0)
    tolerance = 1e-6 * smallest
    step = smallest.copy()
    for gap, real in zip(gaps, distinct):
        # Euclid's algorithm on reals, split by split: a remainder within rounding of 0 ends
        # it; a gap between equal scores leaves the step as it is
        a, b = np.where(real, gap, step), step.copy()
        going = b > tolerance
        while going.any():
            remainder = np.abs(a[going] - np.round(a[going] / b[going]) * b[going])
            a[going], b[going] = b[going], remainder
            going[going] = remainder > tolerance[going]
        step = a
    units = np.where(distinct, gaps, step) / step
    whole = np.all(np.abs(units - np.round(units)) <= 1e-6 * units.max(axis=0), axis=0)
    kept = whole & (smallest / step <= MULTIPLE + 1e-6)
    if unit is not None:
        kept &= step >= 1.5 * unit
    return np.where(kept, step, smallest)


def score_step(values: np.ndarray) -> float:
    """The step of one dataset's scores, ``values[algorithm, split]`` (module docstring);
    nan where every finite score is the same number."""
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    if values.ndim != 2 or finite.size == 0:
        return np.nan
    noise = NOISE * max(1.0, float(np.max(np.abs(finite))))
    # within each split: the gaps between its sorted scores (a non-finite score sorts last
    # and makes no gap), those above the noise between distinct scores
    gaps = np.diff(np.sort(np.where(np.isfinite(values), values, np.nan), axis=0), axis=0)
    distinct = gaps > noise
    three = np.nonzero(distinct.sum(axis=0) >= 2)[0]
    if three.size:
        return float(common_steps(gaps[:, three], distinct[:, three],
                                  written_unit(finite)).min())
    gaps = np.diff(np.sort(finite))
    gaps = gaps[gaps > noise]
    return float(gaps.min()) if gaps.size else np.nan


def steps(datasets) -> np.ndarray:
    """Per dataset (:class:`~bayescomp.data.scores.DatasetScores`), its ``step``; a dataset
    without one (its scores are one number) takes the median of the others' (nan if none
    has one): a typical test set's step, where the smallest would claim that dataset's
    noise known to the finest step of the collection."""
    found = np.array([d.step for d in datasets], dtype=float)
    known = found[np.isfinite(found)]
    return np.where(np.isfinite(found), found, np.median(known) if known.size else np.nan)


def table_steps(frame: pd.DataFrame, dataset: str, algorithm: str, run: str, fold: str,
                score: str) -> dict:
    """Each dataset's step from a long table's scores of every algorithm it holds, named by
    its columns: what the readers keep when asked for some algorithms, so that reading a
    pair of a file gives the floors that reading all of it does. Missing, non-numeric and
    non-finite scores make no gap."""
    values = pd.to_numeric(frame[score], errors="coerce")
    table = (frame.assign(**{score: values})
             .pivot_table(index=[dataset, run, fold], columns=algorithm, values=score,
                          aggfunc="first", dropna=False, observed=True))
    return {name: score_step(block.to_numpy(dtype=float).T)
            for name, block in table.groupby(level=0, sort=False)}


def difference_ss(datasets, first: int, second: int) -> np.ndarray:
    """Per dataset (:class:`~bayescomp.data.scores.DatasetScores`), the sum of squared
    deviations of the differences ``values[first] - values[second]`` from their mean, 0
    where it is rounding noise (their root mean square deviation at most :data:`NOISE` times
    the two algorithms' largest score, at least 1): a - b with a = b + 0.02 differs from 0.02
    by rounding, a spread that is no information. One rule for the pairwise model's data and
    the joint model's floored pairs, so that both name the same constant datasets."""
    ss = np.empty(len(datasets))
    for i, dataset in enumerate(datasets):
        values = dataset.values[[first, second]]
        difference = values[0] - values[1]
        ss[i] = np.sum((difference - difference.mean()) ** 2)
        magnitude = max(1.0, float(np.abs(values).max()))
        if np.sqrt(ss[i] / difference.size) <= NOISE * magnitude:
            ss[i] = 0.0
    return ss


def floored_masks(ss, n_scores, rho, floor) -> tuple[np.ndarray, np.ndarray]:
    """Per dataset, whether the floor sets its noise: whether its differences are constant
    (``ss`` 0: the caller zeroes spreads at rounding noise), and whether they vary but their
    folds alone would put the noise below ``floor`` (its mode given them, ``sqrt(ss / ((1 -
    rho) (n - 1)))``): two algorithms that differ on a fold or two of a hundred, as the
    tutorial's aode - j48gr on 2 of its 54 datasets, at 0.34 and 0.37 times the floor
    (``benchmarks/results/real_pairs.md``, section 31)."""
    ss = np.asarray(ss, dtype=float)
    alone = np.sqrt(ss / ((1 - np.asarray(rho)) * np.maximum(np.asarray(n_scores) - 1, 1)))
    return ss == 0, (ss > 0) & (alone < np.asarray(floor))


def floored_datasets(names, constant, below) -> str:
    """What a warning says, after the pair's name, of the datasets whose noise the floor sets,
    from the two masks of :func:`floored_masks`: "is constant on dataset(s) [...] and has
    folds that alone would put its noise below the floor on dataset(s) [...]"; "" where
    there are none."""
    constant, below = ([name for name, chosen in zip(names, mask) if chosen]
                       for mask in (constant, below))
    parts = ([f"is constant on dataset(s) {constant}"] if constant else []) + (
        [f"has folds that alone would put its noise below the floor on dataset(s) {below}"]
        if below else [])
    return " and ".join(parts)
