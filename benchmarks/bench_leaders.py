"""Who shares the lead, seed by seed: the joint model's and the ranking's leaders under the
rule the package applies (within two Monte Carlo errors of each algorithm's gap to the
largest P(best), taken on the same draws) beside the rule it replaced (two errors taken as
independent).

Run from the repository root with a clone of one of the collections ``bench_real_pairs.py``
reads (the tutorial, the decision trees, the AutoML benchmark or the 5 x 2-fold study), or a
CSV file of scores::

    python benchmarks/bench_leaders.py /tmp/tutorial /tmp/amlb --seeds 3

One line per collection, model and seed: both rules' leaders, the fit's seconds, and the
three largest P(best) with their errors (``e``) and their gaps' errors (``g``).
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import bayescomp as bc
from bayescomp.decisions import leaders
from bench_real_pairs import read_collection


def independent_leaders(result) -> list[str]:
    """The leaders by the replaced rule: the gap's error as hypot of the two errors."""
    p_best, mcse = result.p_best, result.p_best_mcse
    top = p_best.idxmax()
    return leaders(p_best, pd.Series(np.hypot(mcse[top], mcse), index=p_best.index))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", nargs="+", help="clones or CSV files")
    parser.add_argument("--seeds", type=int, default=3, help="fitting seeds 1..N")
    args = parser.parse_args(argv)
    fits = {"joint": lambda scores, seed: bc.compare_many(scores, rope=0.01, seed=seed),
            "ranking": lambda scores, seed: bc.rank_algorithms(scores, seed=seed)}
    for source in args.collections:
        scores = read_collection(source)
        for model, fit in fits.items():
            for seed in range(1, args.seeds + 1):
                started = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = fit(scores, seed)
                seconds = time.perf_counter() - started
                p_best, mcse, gaps = result.p_best, result.p_best_mcse, result.p_best_gap_mcse
                ahead = p_best.sort_values(ascending=False, kind="stable").index[:3]
                detail = "; ".join(f"{name} {p_best[name]:.6f} e={mcse[name]:.2e} "
                                   f"g={gaps[name]:.2e}" for name in ahead)
                print(f"{source} {model} seed {seed}: now {leaders(p_best, gaps)}, "
                      f"independent {independent_leaders(result)} ({seconds:.1f} s) | {detail}",
                      flush=True)


if __name__ == "__main__":
    main()
