"""The scores' resolution (bayescomp.data.resolution) against the true step of real accuracies.

Run from the repository root with a clone of github.com/jwainer/bbtcomp (test accuracies
k / n_test, written with 15 significant digits, so that each fold's test size is read back
exactly from the scores' denominators)::

    python benchmarks/bench_resolution.py /tmp/bbtcomp

For every dataset the true step of a fold is 1 / n_test, n_test the least common multiple of
the denominators of its scores (fractions with denominators up to 10^5 within 1e-12); a
dataset's is the median over its folds. Printed, as ratios to it (quantiles over datasets):
the package's step (every algorithm's scores, within splits), the smallest gap between any
two scores of the dataset (the estimator before), how often leaving one algorithm out
changes the step (the package's, and the smallest gap within splits, its estimator before
the common step), and, for some pairs with only the two algorithms' scores, both (two
algorithms fall back to the smallest gap), with how many non-constant datasets a floor from
the gaps within splits alone (the pair's differences) would put above the differences' own
standard deviation. Output: benchmarks/results/resolution.md.
"""
from __future__ import annotations

import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_real_pairs import read_bbtcomp  # noqa: E402

from bayescomp.data.resolution import score_step  # noqa: E402
from bayescomp.exceptions import InputWarning  # noqa: E402

PAIRS = [("lr", "lda"), ("lgbm", "rf"), ("knn", "gbm"), ("nb", "mlp")]
QUANTILES = (0, 5, 25, 50, 75, 95, 100)


def denominator(value: float) -> int:
    fraction = Fraction(float(value)).limit_denominator(10 ** 5)
    if abs(float(fraction) - value) > 1e-12:
        raise ValueError(f"{value!r} is not a ratio with a denominator up to 10^5")
    return fraction.denominator


def true_step(values: np.ndarray) -> float:
    per_fold = [1 / np.lcm.reduce([denominator(v) for v in column]) for column in values.T]
    return float(np.median(per_fold))


def smallest_gap(values: np.ndarray) -> float:
    gaps = np.diff(np.unique(values))
    gaps = gaps[gaps > 1e-9]
    return float(gaps.min()) if gaps.size else np.nan


def smallest_gap_within_splits(values: np.ndarray) -> float:
    """The package's step before the common step: the smallest gap within a split of at
    least three distinct scores (else the smallest gap of any two)."""
    gaps = np.diff(np.sort(values, axis=0), axis=0)
    distinct = gaps > 1e-9
    three = distinct.sum(axis=0) >= 2
    return (float(gaps[:, three][distinct[:, three]].min()) if three.any()
            else smallest_gap(values))


def quantiles(ratios) -> str:
    return " / ".join(f"{q:.3g}" for q in np.nanpercentile(ratios, QUANTILES))


def main(root: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)     # 4 folds: told by the reader
        scores = read_bbtcomp(Path(root))
    truth = np.array([true_step(d.values) for d in scores.datasets])
    print(f"bbtcomp: {len(scores)} datasets, {len(scores.algorithms)} algorithms; ratios to "
          f"1 / n_test, quantiles {QUANTILES} %")
    print("every algorithm, the package's step:", quantiles([d.step for d in scores.datasets]
                                                            / truth))
    print("every algorithm, smallest gap:",
          quantiles([smallest_gap(d.values) for d in scores.datasets] / truth))
    # one answer whatever else a file holds: the step with each algorithm left out in turn
    for name, estimator in (("the package's step", score_step), ("smallest gap within splits",
                                                                 smallest_gap_within_splits)):
        full = [estimator(d.values) for d in scores.datasets]
        moved = [(i, k) for i, d in enumerate(scores.datasets)
                 for k in range(len(scores.algorithms))
                 if not np.isclose(estimator(np.delete(d.values, k, axis=0)), full[i],
                                   rtol=1e-9, equal_nan=True)]
        print(f"{name}, one algorithm left out: changed in {len(moved)} of "
              f"{len(full) * len(scores.algorithms)} (dataset, algorithm) cases, on "
              f"{len({i for i, _ in moved})} datasets")
    for first, second in PAIRS:
        pair = scores.subset(algorithms=[first, second])
        own = np.array([score_step(d.values) for d in pair.datasets])
        differences = pair.differences(first, second)
        spread = np.array([x.std(ddof=1) for x in differences])
        within = np.array([np.abs(x[np.abs(x) > 1e-9]).min() if np.any(np.abs(x) > 1e-9)
                           else np.nan for x in differences])
        varying = spread > 1e-12
        print(f"{first} - {second} alone: step {quantiles(own / truth)}; gaps within splits "
              f"alone {quantiles(within[varying] / truth[varying])}, a floor above the "
              f"differences' sd on {int(np.sum(within[varying] / np.sqrt(12) > spread[varying]))}"
              f" of {int(varying.sum())} non-constant datasets (the step: "
              f"{int(np.sum(own[varying] / np.sqrt(12) > spread[varying]))})")


if __name__ == "__main__":
    main(sys.argv[1])
