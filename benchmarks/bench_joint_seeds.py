"""The joint model on a real collection over seeds: the same decisions on every seed, and what
each fit cost.

Run from the repository root with a clone of one of the collections
``bench_real_pairs.py`` reads (the tutorial, the decision trees, the AutoML benchmark or the
5 x 2-fold study)::

    python benchmarks/bench_joint_seeds.py /tmp/amlb --seeds 4 --out /tmp/joint_seeds.md

Per seed, ``bc.compare_many(scores, rope=0.01, seed=seed)`` with the package's defaults:
its seconds, attempts and draws per chain, and every pair's decisions on the population and
on the next dataset. The summary says per pair whether the decisions are the same on every
seed; ``vs_easy`` is the fit's time over the first seed's (the fits have no easy pair).
"""
from __future__ import annotations

import argparse
import time
import warnings

import pandas as pd

import bayescomp as bc
from bench_real_pairs import read_collection
from over_seeds import summarise, write


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", help="a clone of a collection bench_real_pairs.py reads")
    parser.add_argument("--seeds", type=int, default=4, help="fitting seeds 1..N")
    parser.add_argument("--backend", default="auto", choices=["auto", "cmdstanpy", "pystan"])
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    scores = read_collection(args.collection)
    rows, first_seconds = [], None
    for seed in range(1, args.seeds + 1):
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = bc.compare_many(scores, rope=0.01, seed=seed, backend=args.backend)
        seconds = time.perf_counter() - started
        first_seconds = first_seconds or seconds
        # draws per chain after each attempt (earlier versions did not record them)
        print(f"seed {seed}: {seconds:.1f} s, attempts "
              + ", ".join(f"{a.get('draws', a['iter_sampling'])} draws "
                          f"{'ok' if a['ok'] else 'failed'} ({a['seconds']:.1f} s)"
                          for a in result.attempts), flush=True)
        for _, pair in result.to_frame().iterrows():
            rows.append(dict(pair=f"{pair['first']}-{pair['second']}", seed=seed,
                             seconds=seconds, vs_easy=seconds / first_seconds,
                             attempts=len(result.attempts),
                             draws=result.settings["iter_sampling"], reliable=result.reliable,
                             population=pair["population_decision"],
                             next=pair["next_dataset_decision"],
                             p_rope=pair["population_p_rope"]))
    table = pd.DataFrame(rows)
    summary = summarise(table, "pair", same_every_seed=lambda groups: groups.apply(
        lambda g: g["population"].nunique() == 1 and g["next"].nunique() == 1),
        p_rope=lambda groups: groups["p_rope"].agg(lambda v: f"{v.min():.4f}-{v.max():.4f}"))
    write(args.out, f"bench_joint_seeds.py {args.collection} (seeds 1-{args.seeds}, backend "
          f"{args.backend}, ROPE 0.01)", summary, table, "pair")
    return table


if __name__ == "__main__":
    main()
