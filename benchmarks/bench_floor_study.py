"""Sparse disagreements with a known truth: does the floor of the scores' resolution make the
hierarchical model decide wrongly?

Run from the repository root::

    python benchmarks/bench_floor_study.py                 # 8 seeds per scenario
    python benchmarks/bench_floor_study.py --seeds 3 --sizes 20 --scenarios null

Real pairs of near-identical algorithms disagree on a few test cases of a fold, so most of
their fold differences are 0 or one test case, and on many datasets they are constant: there
the noise of a dataset's differences is set by the floor (the step of its scores over
sqrt(12)), not by the splits. The truth of such a collection is known when it is simulated
as the two algorithms' disagreements: on dataset i they disagree on each test case with
probability ``d_i`` and, where they disagree, "a" is right with probability ``(1 + b_i) /
2``; its true difference in accuracy is ``delta_i = d_i b_i``, and the population's mean
``(1 - identical) E[d] E[b]``.

On every split of dataset i (10 x 10-fold, ``N_i`` test cases per fold uniform on 30-300),
"b" scores ``Binomial(N_i, p_i) / N_i`` (``p_i`` uniform on 0.7-0.95) and "a" that plus
(wins - losses) / N_i, with ``k ~ Binomial(N_i, d_i)`` disagreements of which ``wins ~
Binomial(k, (1 + b_i) / 2)``. ``d_i`` is uniform on (0, 2 d) (0 on the ``identical`` share of
the datasets) and ``b_i`` normal around ``b`` with sd 0.2, clipped to [-1, 1].

Scenarios (ROPE 0.01):
- ``null``: d = 0.01, b = 0, a third of the datasets identical: every |delta_i| below 0.02,
  the population's mean 0; right answers: equivalent or no decision, never a difference.
- ``sparse-equal``: d = 0.005, b = 0, half identical: most datasets constant.
- ``sparse-edge``: d = 0.004, b = 0.8, a quarter identical: where they disagree "a" is
  nearly always right, so many datasets differ by a test case or two in "a"'s favour on a
  few folds, but the population's mean is 0.0024; right answers: equivalent or no decision.
- ``sparse-better``: d = 0.06, b = 0.5: the population's mean 0.03, three ROPEs; right
  answer: "a" better (or no decision), never equivalent or "b" better.

Per scenario, size and seed, ``bayescomp.hierarchical`` with the package's defaults: the
decisions on delta0 and on the next dataset, whether they are wrong, whether delta0's 95%
interval holds the mean and the median of the law the delta_i are drawn from (a weighted
mean of the datasets' means is neither where that law is skewed), the share of datasets
constant (by the package's rule, :func:`bayescomp.data.resolution.difference_ss`) and
floored, seconds and whether the result is reliable. The table is printed and appended to
``benchmarks/results/floor_study.md``.
"""
from __future__ import annotations

import argparse
import datetime
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayescomp as bc
from bayescomp.data.resolution import difference_ss

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_joint import markdown  # noqa: E402

ROPE = 0.01
SCENARIOS = {"null": dict(d=0.01, b=0.0, identical=1 / 3),
             "sparse-equal": dict(d=0.005, b=0.0, identical=0.5),
             "sparse-edge": dict(d=0.004, b=0.8, identical=0.25),
             "sparse-better": dict(d=0.06, b=0.5, identical=0.0)}
#: the decisions (bayescomp's labels for a - b) that contradict each scenario's truth
WRONG = {"null": {"a better", "b better"}, "sparse-equal": {"a better", "b better"},
         "sparse-edge": {"a better", "b better"}, "sparse-better": {"equivalent", "b better"}}


def population_truth(d: float, b: float, identical: float, size: int = 2_000_000) -> tuple:
    """The mean and the median of the law the delta_i are drawn from (a share ``identical``
    at 0, the rest d_i b_i), by Monte Carlo (seed 0; their errors are below 1e-5)."""
    rng = np.random.default_rng(0)
    delta = rng.uniform(0, 2 * d, size) * np.clip(rng.normal(b, 0.2, size), -1, 1)
    delta[: int(round(identical * size))] = 0.0
    return float(delta.mean()), float(np.median(delta))


def sparse_collection(n_datasets: int, *, d: float, b: float, identical: float, seed: int):
    """(scores, true delta_i)."""
    rng = np.random.default_rng(seed)
    runs, folds = 10, 10
    n_identical = int(round(identical * n_datasets))
    rate = rng.uniform(0, 2 * d, n_datasets)
    rate[:n_identical] = 0.0
    edge = np.clip(rng.normal(b, 0.2, n_datasets), -1, 1)
    cases = rng.integers(30, 301, n_datasets)
    accuracy = rng.uniform(0.7, 0.95, n_datasets)
    first, second = [], []
    for i in range(n_datasets):
        base = rng.binomial(cases[i], accuracy[i], runs * folds)
        disagreements = rng.binomial(cases[i], rate[i], runs * folds)
        wins = rng.binomial(disagreements, (1 + edge[i]) / 2)
        other = np.clip(base + wins - (disagreements - wins), 0, cases[i])
        first.append(other / cases[i])
        second.append(base / cases[i])
    scores = bc.from_arrays({"a": first, "b": second}, rho=1 / folds)
    return scores, rate * edge


def one_fit(scenario: str, n_datasets: int, seed: int, truth: tuple) -> dict:
    """One fit; ``truth`` is the scenario's :func:`population_truth`."""
    scores, delta = sparse_collection(n_datasets, **SCENARIOS[scenario], seed=seed)
    mean, median = truth
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bc.ConstantDifferencesWarning)
        result = bc.hierarchical(scores, "a", "b", rope=ROPE, seed=seed, baselines=False)
    seconds = time.perf_counter() - start
    population, following = result.population.decision(), result.next_dataset.decision()
    low, high = result.population.hdi_low, result.population.hdi_high
    return dict(scenario=scenario, datasets=n_datasets, seed=seed,
                constant=float(np.mean(difference_ss(scores.datasets, 0, 1) == 0)),
                floored=float(result.datasets["floored"].mean()),
                true_mean=mean, true_median=median, max_abs_delta=float(np.abs(delta).max()),
                delta0_mean=float(result.population.mean), covered=bool(low <= mean <= high),
                covered_median=bool(low <= median <= high),
                population=population, next=following,
                wrong=bool(population in WRONG[scenario] or following in WRONG[scenario]),
                reliable=bool(result.reliable), seconds=round(seconds, 2))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 54])
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    parser.add_argument("--out", default="benchmarks/results/floor_study.md")
    args = parser.parse_args(argv)
    rows = []
    for scenario in args.scenarios:
        truth = population_truth(**SCENARIOS[scenario])
        for size in args.sizes:
            for seed in range(1, args.seeds + 1):
                rows.append(one_fit(scenario, size, seed, truth))
                print(rows[-1], flush=True)
    write(pd.DataFrame(rows), args)


def write(runs: pd.DataFrame, args) -> None:
    """The summary per scenario and size, and every fit, printed and appended to args.out."""
    summary = runs.groupby(["scenario", "datasets"], sort=False).agg(
        fits=("seed", "size"), constant=("constant", "mean"), floored=("floored", "mean"),
        wrong=("wrong", "sum"), true_mean=("true_mean", "first"),
        true_median=("true_median", "first"), delta0_mean=("delta0_mean", "median"),
        covered=("covered", "mean"), covered_median=("covered_median", "mean"),
        reliable=("reliable", "mean"),
        population=("population", lambda s: ", ".join(f"{k} {v}" for k, v in
                                                       s.value_counts().items())),
        next=("next", lambda s: ", ".join(f"{k} {v}" for k, v in s.value_counts().items())),
        seconds=("seconds", "median")).reset_index()

    def significant(frame):   # differences of 0.001 are what the scenarios are about
        return frame.apply(lambda column: column.map(
            lambda v: f"{v:.3g}" if isinstance(v, float) else v))

    text = (f"\n## {datetime.date.today()}: {args.seeds} seeds, sizes {args.sizes}, "
            f"bayescomp {bc.__version__}\n\n" + markdown(significant(summary))
            + "\n\n### Per fit\n\n" + markdown(significant(runs)) + "\n")
    print(text)
    out = Path(args.out)
    if not out.exists():
        title = "# Sparse disagreements with a known truth (benchmarks/bench_floor_study.py)"
        text = title + "\n" + text
    with out.open("a") as handle:
        handle.write(text)


if __name__ == "__main__":
    main()
