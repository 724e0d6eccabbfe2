"""Near-identical algorithms on simulated benchmark results: the same verdict on every seed?

Run from the repository root::

    python benchmarks/bench_near_identical.py                  # 8 seeds per collection
    python benchmarks/bench_near_identical.py --seeds 3 --reference 4

Each collection is :func:`bayescomp.validation.simulate.near_identical_collection`: most fold
differences exactly 0, a few one test case either way, a share of the datasets identical on
every split, a tenth that really differ (what makes the population heavy-tailed), test folds
of 10 to 500 cases. Real pairs of this kind (a learner with and without a post-processing
step) give the hierarchical model a posterior with two modes, nu near 1 and nu near 25.

Per collection and seed, ``bayescomp.hierarchical`` with the package's defaults on the
near-identical pair, and on an easy pair of the same size and design
(:func:`~bayescomp.validation.simulate.benchmark_collection`, delta0 0.05, sigma0 0.01:
every probability far from the threshold) in the same run:
``seconds`` of each call and ``vs_easy`` their ratio; ``attempts``; the decisions on the
population and the next dataset; ``modes`` (how the result decided when its chains did not
mix: "separate" modes each clean, "crossing" chains that each decide the same, or "" when
they mix); ``heavy`` the chains (of 4) whose median nu is below 3. With ``--reference K``,
the plain published program (``stan/hierarchical_reference.stan``, adapt_delta 0.99) on the
first K seeds, and ``ref_heavy`` the same count for its chains.

The table is printed and written to ``benchmarks/results/near_identical.md``.
"""
from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayescomp as bc
from bayescomp.validation.simulate import benchmark_collection, near_identical_collection
from over_seeds import summarise, write

RESULTS = Path(__file__).resolve().parent / "results"

FAMILY = [
    # name, datasets, generator options (the collection's seed is its place in the list,
    # unless the options name one)
    ("ident25 10x10", 54, dict(identical=0.25)),
    ("ident0 10x10", 54, dict(identical=0.0)),
    ("ident50 10x10", 54, dict(identical=0.5)),
    ("ident25 10x10", 10, dict(identical=0.25)),
    ("ident25 10x10", 100, dict(identical=0.25)),
    ("ident25 5x2", 54, dict(identical=0.25, design="5x2")),
    ("ident25 ragged", 54, dict(identical=0.25, design="ragged")),
    # the collection of tests/test_modes.py, whose chains split between nu near 1 and 25
    ("bimodal ident25 10x10", 54, dict(identical=0.25, seed=2)),
]


def heavy_chains(idata) -> int:
    """Chains whose median nu is below 3: the heavy-tailed mode."""
    nu = idata.posterior["nu"].values
    return int(np.sum(np.median(nu.reshape(nu.shape[0], -1), axis=1) < 3))


def timed(scores, seed: int):
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.hierarchical(scores, "a", "b", rope=0.01, seed=seed, baselines=False)
    return result, time.perf_counter() - started


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8, help="fitting seeds 1..N per collection")
    parser.add_argument("--reference", type=int, default=0,
                        help="also sample the plain reference program on the first K seeds")
    parser.add_argument("--only", help="collections whose label (name and size, e.g. "
                        "'ident25 10x10 x100') contains this")
    parser.add_argument("--out", default=str(RESULTS / "near_identical.md"))
    args = parser.parse_args(argv)
    warm = benchmark_collection(5, seed=0, sigma0=0.02)
    timed(warm.scores, 0)   # compile (or load) before anything is timed
    rows = []
    for index, (name, size, options) in enumerate(FAMILY, start=1):
        if args.only and args.only not in f"{name} x{size}":
            continue
        options = dict(options)
        near = near_identical_collection(size, seed=options.pop("seed", index), **options)
        # easy: every probability far from the threshold (with delta0 0 and sigma0 0.02 the
        # 5x2 and ragged collections sat at it, and their extensions up to 8 times the draws
        # made the "easy" fit the slow one)
        easy = benchmark_collection(size, seed=index, delta0=0.05, sigma0=0.01,
                                    design=options.get("design", "10x10"))
        for seed in range(1, args.seeds + 1):
            result, seconds = timed(near.scores, seed)
            _, easy_seconds = timed(easy.scores, seed)
            row = dict(collection=f"{name} x{size}", seed=seed, seconds=seconds,
                       easy_seconds=easy_seconds, vs_easy=seconds / easy_seconds,
                       attempts=len(result.attempts), reliable=result.reliable,
                       population=result.population.decision(),
                       next=result.next_dataset.decision(),
                       modes=("" if not result.modes else
                              "separate" if result.modes_separate else "crossing"),
                       heavy=heavy_chains(result.idata),
                       max_rhat=result.diagnostics.max_rhat,
                       min_ess_bulk=result.diagnostics.min_ess_bulk)
            if seed <= args.reference:
                from bayescomp.models.reference import sample_reference

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    reference = sample_reference(near.scores, "a", "b", seed=seed,
                                                 adapt_delta=0.99)
                row["ref_heavy"] = heavy_chains(reference)
            rows.append(row)
            print(pd.DataFrame(rows[-1:]).to_string(index=False, header=len(rows) == 1,
                                                     float_format=lambda v: f"{v:.4g}"),
                  flush=True)
    table = pd.DataFrame(rows)
    split = lambda v: int(np.sum((v > 0) & (v < 4)))  # noqa: E731 (chains in both modes)
    extra = {"split_seeds": lambda groups: groups["heavy"].agg(split)}
    if "ref_heavy" in table:
        extra["ref_split_seeds"] = lambda groups: groups["ref_heavy"].agg(
            lambda v: f"{split(v)} of {int(v.notna().sum())}")
    write(args.out, f"bench_near_identical.py (seeds 1-{args.seeds}, reference on "
          f"{args.reference})", summarise(table, "collection", **extra), table, "collection")
    return table


if __name__ == "__main__":
    main()
