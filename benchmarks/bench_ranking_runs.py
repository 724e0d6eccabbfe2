"""The Plackett-Luce ranking's warm-up and ESS target: the same collections and seeds at
several warm-ups, in one run.

Run from the repository root (the real collections are clones that ``bench_real_pairs.py``
reads; without them only the built-in example and the simulated collections run)::

    python benchmarks/bench_ranking_runs.py --out /tmp/ranking_runs.md
    python benchmarks/bench_ranking_runs.py /tmp/tutorial /tmp/amlb --warmups 1000 500 300 \\
        --seeds 4 --out /tmp/ranking_runs.md

Per collection, seed and warm-up: ``bc.rank_algorithms(scores, rope=0.01, seed=seed,
iter_warmup=W)``, the package's other defaults (its ESS target and extensions included, in
its time). The first warm-up listed is the baseline: the table gives each warm-up's total
time over the baseline's, the fits that were extended or retried, the smallest ESS of the
worths, and the decisions (the best algorithm, none, or unreliable) that differ from the
baseline's on the same seed. Collections: the
built-in example; ``bench_ranking.tied_collection(k)`` (k algorithms, half of the 30
datasets one tie group); ``near_collection(k, n)`` (k algorithms of nearly equal skill on n
datasets, so that no P(best) is near 1); the clones given.
"""
from __future__ import annotations

import argparse
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayescomp as bc
from bench_joint import markdown
from bench_ranking import tied_collection
from bench_real_pairs import read_collection


def near_collection(k: int, n_datasets: int, seed: int = 1) -> bc.Scores:
    """k algorithms on ``n_datasets`` datasets of 10 folds, the first a little better than the
    rest (0.004 in mean, per-dataset spread 0.02): P(best) is spread over several."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.7, 0.9, n_datasets)
    return bc.from_arrays({f"a{a}": (base + (0.004 if a == 0 else 0.0)
                                      + rng.normal(0, 0.02, n_datasets))[:, None]
                           + rng.normal(0, 0.001, (n_datasets, 10)) for a in range(k)},
                          n_folds=10)


def decision(result) -> str:
    """What the verdict decides: the best algorithm's name, "none" (no algorithm best, or
    too close to the threshold to tell) or "unreliable"."""
    if not result.reliable:
        return "unreliable"
    return result.best if result.verdict().startswith(f"{result.best} is the best") else "none"


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", nargs="*", help="clones bench_real_pairs.py reads")
    parser.add_argument("--warmups", type=int, nargs="+", default=[1000, 500, 300])
    parser.add_argument("--seeds", type=int, default=2, help="fitting seeds 1..N")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    collections = {"built-in example": bc.datasets.load_classifiers(),
                   "5 tied": tied_collection(5), "12 tied": tied_collection(12),
                   "near 6 x 40": near_collection(6, 40), "near 10 x 300": near_collection(10, 300)}
    for source in args.collections:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            collections[Path(source).name] = read_collection(source)
    started_run = time.perf_counter()
    rows = []
    for name, scores in collections.items():
        for seed in range(1, args.seeds + 1):
            for warmup in args.warmups:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    started = time.perf_counter()
                    result = bc.rank_algorithms(scores, rope=0.01, seed=seed,
                                                iter_warmup=warmup)
                    seconds = time.perf_counter() - started
                s = result.settings
                rows.append(dict(collection=name, algorithms=len(scores.algorithms),
                                 datasets=len(scores), seed=seed, warmup=warmup,
                                 seconds=round(seconds, 2), fits=len(s["attempts"]),
                                 draws=s["iter_sampling"],
                                 ess=round(min(s["ess"]["bulk"], s["ess"]["tail"])),
                                 best=result.best, p_best=round(float(result.p_best.max()), 4),
                                 mcse=round(float(result.p_best_mcse[result.best]), 4),
                                 reliable=result.reliable,
                                 decision=decision(result)))
                print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    first = args.warmups[0]
    base = table[table.warmup == first].set_index(["collection", "seed"])
    summary = []
    for warmup, part in table.groupby("warmup", sort=False):
        part = part.set_index(["collection", "seed"])
        differ = [f"{c} seed {s}" for (c, s) in part.index
                  if part.loc[(c, s), "decision"] != base.loc[(c, s), "decision"]]
        summary.append(dict(warmup=warmup, seconds=round(part.seconds.sum(), 1),
                            vs_first=round(part.seconds.sum() / base.seconds.sum(), 2),
                            extended_or_retried=int((part.fits > 1).sum()),
                            not_reliable=int((~part.reliable).sum()),
                            min_ess=int(part.ess.min()),
                            verdicts_differing=", ".join(differ) or "none"))
    summary = pd.DataFrame(summary)
    header = (f"{time.strftime('%Y-%m-%d')}; Python {platform.python_version()}, "
              f"{platform.machine()}, engine auto; 4 chains, warm-up W, the package's other "
              f"defaults (draws, ESS target); whole run {(time.perf_counter() - started_run) / 60:.1f} min")
    Path(args.out).write_text(f"{header}\n\n{markdown(summary)}\n\n"
                              f"{markdown(table)}\n")
    print(summary.to_string(index=False))
    return table


if __name__ == "__main__":
    main()
