"""The hierarchical model on the collections that break samplers, with the package's defaults.

Run from the repository root::

    python benchmarks/bench_hard_collections.py              # the whole grid
    python benchmarks/bench_hard_collections.py --quick      # a few rows
    python benchmarks/bench_hard_collections.py --only ident --reference

One row per collection and pair: simulated collections that mimic real benchmark studies
(:func:`bayescomp.simulate.benchmark_collection`: accuracies discretised by test folds of
30 to 150 cases, pairs identical on 0%, 25%, 50% or 100% of the datasets, one algorithm a
constant ahead on every split, 3 to 1,000 datasets, 10 x 10, 10-fold, 5 x 2, 4-fold and
ragged designs, a heavy-tailed and a skewed population on 132 datasets of 4 folds as
bbtcomp's study),
near-identical pairs (:func:`bayescomp.simulate.near_identical_collection`: sparse one-case
differences, 0-50% identical datasets, 10-100 datasets, 10 x 10, 5 x 2 and 4-fold), every
pair of the package's own example (``bayescomp.data.datasets``) and, where
``../shared/data/kcv_example_auc.csv`` exists, every pair of scmamp's collection.

Columns: ``datasets``; ``attempts`` (fits run, 1 unless
a retry was needed) and ``continued`` (of those, retries that continued the chains rather
than refit afresh); ``divergences``, ``max_rhat``, ``min_ess_bulk``,
``min_ess_tail`` (over delta0, sigma0, nu and every delta_i and sigma_i, the delta_i as
drawn from their conditionals), ``min_bfmi``,
``treedepth`` (draws at the maximum tree depth) of the final fit; ``clean`` (all of: no
divergence, R-hat <= 1.01, both ESS >= 400, E-BFMI >= 0.3, no draw at the maximum tree
depth); ``reliable`` (a decision is made: clean, chains that do not mix but decide the
same, :attr:`bayescomp.HierarchicalResult.modes`, or the quadrature) and ``modes`` ("separate", "crossing",
"strata" or empty when the chains mix); ``quadrature`` (the probabilities by
quadrature, :mod:`bayescomp.models.quadrature`); ``seconds`` of the whole call (all
attempts, no baselines) and ``vs_easy``, that
time over the time of the easy collection of the same size (no identical datasets,
sigma0 0.02) in the same run. With ``--reference`` (collections of at most 54 datasets),
``ref_ess_per_s`` and ``speedup``: the published program of ``stan/hierarchical_reference.stan``
(every parameter sampled, adapt_delta 0.99) on the same data, and the fast program's
ESS per second of delta0 over the reference's.

The table is printed and written to ``benchmarks/results/hard_collections.md``.
"""
from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd

import bayescomp as bc
from bayescomp.validation.simulate import benchmark_collection, near_identical_collection
from over_seeds import summarise, write

RESULTS = Path(__file__).resolve().parent / "results"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "kcv_example_auc.csv"

NEAR = dict(sigma0=0.003)          # variants of one algorithm
EASY = dict(sigma0=0.02)           # clearly different algorithms
GRID = [
    # name, datasets, generator options
    ("easy", 54, EASY), ("ident0", 54, NEAR), ("ident25", 54, NEAR), ("ident50", 54, NEAR),
    ("ident100", 54, {}), ("offset", 54, dict(offset=0.02)),
    ("easy", 10, EASY), ("ident0", 10, NEAR), ("ident25", 10, NEAR), ("ident50", 10, NEAR),
    ("ident100", 10, {}), ("offset", 10, dict(offset=0.02)),
    ("easy", 3, EASY), ("ident0", 3, NEAR), ("offset", 3, dict(offset=0.02)),
    ("easy", 5, EASY), ("ident0", 5, NEAR), ("ident100", 5, {}), ("offset", 5, dict(offset=0.02)),
    ("easy", 200, EASY), ("ident25", 200, NEAR),
    ("easy", 1000, EASY), ("ident25", 1000, NEAR),
    ("10-fold", 20, dict(NEAR, identical=0.25, design="10-fold")),
    ("5x2", 20, dict(NEAR, identical=0.25, design="5x2")),
    ("ragged", 20, dict(NEAR, identical=0.25, design="ragged")),
    # bbtcomp's design (one 4-fold cross-validation, 132 datasets) with a heavy-tailed
    # population: 3 degrees of freedom per fold variance
    ("heavy 4-fold", 132, dict(design="4-fold", distribution="student", sigma0=0.03,
                               delta0=0.02, test_cases=(12, 500))),
    # and with a fifth of the datasets far up, as where one algorithm fails on some: nu near
    # 1, its range crossed slowly, as on bbtcomp's knn pairs
    ("skewed 4-fold", 132, dict(design="4-fold", distribution="skewed", sigma0=0.01,
                                delta0=0.02, test_cases=(12, 500))),
]
#: near-identical pairs as real benchmark results show them (mostly exact zeros, a few one
#: test case either way, a tenth of the datasets really different): their posterior has two
#: modes (:func:`bayescomp.validation.simulate.near_identical_collection`;
#: bench_near_identical.py runs them over 8 seeds against easy pairs)
NEAR_GRID = [
    ("near25", 54, dict(identical=0.25)), ("near0", 54, dict(identical=0.0)),
    ("near50", 54, dict(identical=0.5)), ("near25", 10, dict(identical=0.25)),
    ("near25", 100, dict(identical=0.25)), ("near25 5x2", 54, dict(identical=0.25, design="5x2")),
    ("near25 4-fold", 54, dict(identical=0.25, design="4-fold")),
]
QUICK = {("easy", 10), ("ident50", 10), ("ident100", 5), ("offset", 5), ("5x2", 20)}


def _options(name: str, options: dict) -> dict:
    options = dict(options)
    if name.startswith("ident"):
        options["identical"] = int(name[5:]) / 100
    return options


def collections(quick: bool = False, only: str | None = None):
    """(label, scores, first, second) of every collection and pair of the grid."""
    for seed, (name, size, options) in enumerate(GRID, start=1):
        if (quick and (name, size) not in QUICK) or (only and only not in name):
            continue
        made = benchmark_collection(size, seed=seed, **_options(name, options))
        yield f"{name} x{size}", made.scores, "a", "b"
    for seed, (name, size, options) in enumerate(NEAR_GRID, start=1):
        if quick or (only and only not in name):
            continue
        made = near_identical_collection(size, seed=seed, **options)
        yield f"{name} x{size}", made.scores, "a", "b"
    if quick or (only and only not in ("example", "scmamp")):
        return
    sources = [("example", bc.datasets.load_classifiers())]
    if SHARED.is_file():
        sources.append(("scmamp", bc.read_csv(SHARED, format="wide", dataset="DB", run="Rep",
                                              fold="Fold")))
    for label, scores in sources:
        names = scores.algorithms
        for i, first in enumerate(names):
            for second in names[i + 1:]:
                yield f"{label} {first}-{second}", scores, first, second


def _row(label, scores, first, second, reference: bool, seed: int, iter_warmup: int,
         iter_sampling: int, adapt_delta: float | None) -> dict:
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.hierarchical(scores, first, second, rope=0.01, seed=seed, baselines=False,
                                 iter_warmup=iter_warmup, iter_sampling=iter_sampling,
                                 adapt_delta=adapt_delta)
    seconds = time.perf_counter() - started
    d = result.diagnostics
    row = dict(collection=label, datasets=len(scores),
               attempts=len(result.settings.get("attempts", (1,))),
               continued=sum(bool(a.get("continued")) for a in result.settings["attempts"]),
               divergences=d.divergences,
               max_rhat=d.max_rhat, min_ess_bulk=d.min_ess_bulk, min_ess_tail=d.min_ess_tail,
               min_bfmi=d.min_bfmi, treedepth=d.treedepth_saturated,
               clean=bool(d.divergences == 0 and d.max_rhat <= 1.01 and d.treedepth_saturated == 0
                          and min(d.min_ess_bulk, d.min_ess_tail) >= 400 and d.min_bfmi >= 0.3),
               reliable=result.reliable,
               modes=("" if not result.modes else
                      "separate" if result.modes_separate else
                      "strata" if result.modes[0].stratum else "crossing"),
               quadrature=bool(result.by_quadrature),
               population=result.population.decision(), next=result.next_dataset.decision(),
               seconds=seconds)
    if reference and len(scores) <= 54:
        from bayescomp.models.reference import sample_reference

        started = time.perf_counter()
        idata = sample_reference(scores, first, second, seed=seed, adapt_delta=0.99)
        ref_seconds = time.perf_counter() - started
        fast = float(az.ess(result.idata.posterior["delta0"].values)) / seconds
        slow = float(az.ess(idata.posterior["delta0"].values)) / ref_seconds
        row.update(ref_seconds=ref_seconds, ref_ess_per_s=slow, speedup=fast / slow)
    return row


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few rows")
    parser.add_argument("--only", help="rows whose name contains this")
    parser.add_argument("--reference", action="store_true",
                        help="also time the published program (<= 54 datasets)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seeds", type=int,
                        help="run seeds 1..N instead of --seed, and summarise each collection "
                        "over them (written to hard_collections_seeds.md unless --out)")
    parser.add_argument("--first-seed", type=int, default=1,
                        help="with --seeds N, run seeds FIRST..N (to add seeds to a run)")
    parser.add_argument("--max-datasets", type=int, help="skip larger collections")
    parser.add_argument("--min-datasets", type=int, help="skip smaller collections")
    parser.add_argument("--iter-warmup", type=int, default=500,
                        help="warm-up iterations of every fit (the package's default 500)")
    parser.add_argument("--iter-sampling", type=int, default=1000,
                        help="draws per chain of every first fit (the package's default 1000)")
    parser.add_argument("--adapt-delta", type=float,
                        help="adapt_delta of every first fit (default: the package's, by the "
                        "number of datasets)")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.seeds:
        return _over_seeds(args)
    args.out = args.out or str(RESULTS / "hard_collections.md")
    # compile (or load) the program before anything is timed
    warm = benchmark_collection(5, seed=0, **EASY)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bc.hierarchical(warm.scores, "a", "b", baselines=False, seed=0, iter_warmup=100,
                        iter_sampling=100, retries=0)
    table = _grid(args, args.seed)
    text = table.to_string(index=False, float_format=lambda v: f"{v:.4g}")
    print(f"\n{text}\n\nclean: {int(table.clean.sum())} of {len(table)}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"# bench_hard_collections.py (seed {args.seed})\n\n```\n{text}\n```\n\n"
                   f"clean: {int(table.clean.sum())} of {len(table)}\n")
    return table


def _grid(args, seed: int) -> pd.DataFrame:
    """One row per collection and pair at one fitting seed, with ``vs_easy``."""
    rows = []
    for label, scores, first, second in collections(args.quick, args.only):
        if ((args.max_datasets and len(scores) > args.max_datasets)
                or (args.min_datasets and len(scores) < args.min_datasets)):
            continue
        rows.append(_row(label, scores, first, second, args.reference, seed, args.iter_warmup,
                         args.iter_sampling, args.adapt_delta))
        print(pd.DataFrame(rows[-1:]).to_string(index=False, header=len(rows) == 1,
                                                 float_format=lambda v: f"{v:.4g}"), flush=True)
    table = pd.DataFrame(rows)
    easy = {r.datasets: r.seconds for r in table.itertuples() if r.collection.startswith("easy")}
    table.insert(table.columns.get_loc("seconds") + 1, "vs_easy",
                 [r.seconds / easy[r.datasets] if r.datasets in easy else np.nan
                  for r in table.itertuples()])
    return table


def _over_seeds(args) -> pd.DataFrame:
    """The grid at seeds FIRST..N: per collection, are the decisions the same on every seed?"""
    seeds = range(args.first_seed, args.seeds + 1)
    table = pd.concat([_grid(args, seed).assign(seed=seed) for seed in seeds], ignore_index=True)
    summary = summarise(table, "collection", clean=lambda groups: groups["clean"].sum())
    write(args.out or RESULTS / "hard_collections_seeds.md",
          f"bench_hard_collections.py --seeds {args.seeds} --first-seed {args.first_seed}"
          f" --iter-warmup {args.iter_warmup} --iter-sampling {args.iter_sampling}"
          f"{f' --max-datasets {args.max_datasets}' if args.max_datasets else ''}"
          f"{f' --min-datasets {args.min_datasets}' if args.min_datasets else ''}"
          f"{f' --adapt-delta {args.adapt_delta}' if args.adapt_delta else ''}",
          summary, table, "collection")
    return table


if __name__ == "__main__":
    main()
