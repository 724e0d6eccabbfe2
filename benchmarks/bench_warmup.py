"""How long a warm-up the hierarchical model needs: the hard grid at several warm-up lengths.

Run from the repository root::

    python benchmarks/bench_warmup.py                          # 1000, 500, 400; seeds 1, 2
    python benchmarks/bench_warmup.py --warmups 1000 300 --seeds 1 --max-datasets 54
    python benchmarks/bench_warmup.py --sizes 54 400 1000   # bench_vs_baycomp's pairs instead
    python benchmarks/bench_warmup.py --sizes 1000 --pairs near-identical --seeds 1 2 3

Every collection of ``bench_hard_collections.py`` (up to ``--max-datasets``) is fitted with
``bc.hierarchical`` at each warm-up length, the lengths interleaved collection by collection
and seed by seed, so that the load of a shared machine falls on all alike; everything else
is the package's default (4 chains, 1000 draws, adapt_delta 0.95, its retries and ESS
target). Per warm-up: the whole grid's seconds and its ratio to the first length's in the
same run, the fits that needed more than one attempt, the rows that are not clean or not
reliable, and the rows whose decisions (population, next dataset) differ from the first
length's on the same seed. Appends its table to ``benchmarks/results/warmup.md``.

With ``--sizes``, the collections are instead ``bench_vs_baycomp.py``'s easy and
near-identical pairs at those numbers of datasets (``--pairs`` picks, ``--seeds`` are the
fitting seeds; bench_vs_baycomp fits with seed 2), and the table gives each fit's seconds,
attempts, ESS of delta0 and ESS per second at each warm-up length.
"""
from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from pathlib import Path

import arviz as az
import pandas as pd

import bayescomp as bc
from bench_hard_collections import _row, collections
from bench_vs_baycomp import PAIRS, ROPE, collection

RESULTS = Path(__file__).resolve().parent / "results" / "warmup.md"


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmups", type=int, nargs="+", default=[1000, 500, 400])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--max-datasets", type=int, default=100)
    parser.add_argument("--sizes", type=int, nargs="+",
                        help="bench_vs_baycomp's pairs at these sizes instead of the grid")
    parser.add_argument("--pairs", nargs="+", choices=list(PAIRS), default=list(PAIRS),
                        help="with --sizes: which of bench_vs_baycomp's pairs")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    if args.sizes:
        return _sizes(args)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    rows = []
    for seed in args.seeds:
        for label, scores, first, second in collections():
            if len(scores) > args.max_datasets:
                continue
            for warmup in args.warmups:
                row = _row(label, scores, first, second, False, seed, warmup, 1000, 0.95)
                rows.append(dict(row, seed=seed, warmup=warmup))
                print(f"{label:30s} seed {seed} warm-up {warmup:5d}: {row['seconds']:.2f} s, "
                      f"{row['attempts']} attempt(s), {row['population']} / {row['next']}",
                      flush=True)
    table = pd.DataFrame(rows)
    base = table[table.warmup == args.warmups[0]].set_index(["collection", "seed"])
    lines = ["| warm-up | seconds | vs first | fits with retries or extensions | not clean | "
             "not reliable | decisions differing from the first warm-up's |",
             "|---:|---:|---:|---:|---:|---:|---|"]
    for warmup in args.warmups:
        part = table[table.warmup == warmup].set_index(["collection", "seed"])
        differing = [f"{c} (seed {s})" for (c, s), r in part.iterrows()
                     if (r.population, r.next) != (base.loc[(c, s)].population,
                                                   base.loc[(c, s)].next)]
        lines.append(f"| {warmup} | {part.seconds.sum():.1f} | "
                     f"{part.seconds.sum() / base.seconds.sum():.2f} | "
                     f"{int((part.attempts > 1).sum())} | {int((~part.clean).sum())} | "
                     f"{int((~part.reliable).sum())} | {', '.join(differing) or 'none'} |")
    header = (f"\n## {time.strftime('%Y-%m-%d')}: warm-ups {args.warmups}, seeds {args.seeds}, "
              f"collections of at most {args.max_datasets} datasets\n\n"
              f"Python {platform.python_version()}, {os.cpu_count()} cores, load {load:.1f} at "
              f"the start; whole run {(time.perf_counter() - started) / 60:.1f} min; "
              f"{len(table) // len(args.warmups)} fits per warm-up.\n\n")
    slow = table.pivot_table(index=["collection", "seed"], columns="warmup", values="seconds")
    text = header + "\n".join(lines) + "\n\nSeconds per fit:\n\n```\n" + \
        slow.to_string(float_format=lambda v: f"{v:.2f}") + "\n```\n"
    print(text)
    out = Path(args.out)
    if not out.exists():
        out.write_text("# The hierarchical model's warm-up length on the hard grid "
                       "(benchmarks/bench_warmup.py)\n")
    with out.open("a") as handle:
        handle.write(text)
    return table


def _sizes(args) -> pd.DataFrame:
    """bench_vs_baycomp's pairs at ``args.sizes`` datasets, every warm-up length in turn."""
    load, started, rows = os.getloadavg()[0], time.perf_counter(), []
    for size in args.sizes:
        for pair in args.pairs:
            scores = collection(pair, size)
            for seed in args.seeds:
                for warmup in args.warmups:
                    rows.append(_fit_row(scores, pair, size, seed, warmup))
                    print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    first = table[table.warmup == args.warmups[0]].set_index(["pair", "datasets", "seed"])
    table["vs_first"] = [r.seconds / first.seconds[(r.pair, r.datasets, r.seed)]
                         for r in table.itertuples()]
    text = (f"\n## {time.strftime('%Y-%m-%d')}: bench_vs_baycomp's pairs {args.pairs} at "
            f"{args.sizes} datasets, fitting seeds {args.seeds}, warm-ups {args.warmups}"
            f"\n\nPython {platform.python_version()}, "
            f"{os.cpu_count()} cores, load {load:.1f} at the start; whole run "
            f"{(time.perf_counter() - started) / 60:.1f} min; warm (compiled, loaded).\n\n```\n"
            + table.to_string(index=False, float_format=lambda v: f"{v:.3g}") + "\n```\n")
    print(text)
    with Path(args.out).open("a") as handle:
        handle.write(text)
    return table


def _fit_row(scores, pair: str, size: int, seed: int, warmup: int) -> dict:
    """One package-default fit of a pair at a warm-up length: its seconds, ESS and verdict."""
    begun = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.hierarchical(scores, "a", "b", rope=ROPE, seed=seed, iter_warmup=warmup)
    seconds = time.perf_counter() - begun
    ess = float(az.ess(result.idata.posterior["delta0"].values))
    return dict(pair=pair, datasets=size, seed=seed, warmup=warmup, seconds=seconds,
                ess_delta0=ess, ess_per_second=ess / seconds,
                attempts=len(result.settings["attempts"]),
                draws=int(result.idata.posterior.sizes["draw"]),
                decision=result.population.decision())


if __name__ == "__main__":
    main()
