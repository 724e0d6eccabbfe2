"""The Plackett-Luce ranking with ties: the exact sum over each tied group's subsets against
the listed orders it replaced, in one run.

Run from the repository root (the real collections are clones that ``bench_real_pairs.py``
reads; without them only the built-in example and the simulated collections run)::

    python benchmarks/bench_ranking.py --out /tmp/ranking.md
    python benchmarks/bench_ranking.py /tmp/tutorial /tmp/amlb --seeds 2 --out /tmp/ranking.md

Per collection and seed: ``bc.rank_algorithms(scores, rope=0.01, seed=seed,
iter_warmup=1000)`` with the package's other defaults (``stan/plackett_luce.stan``: a tied ranking's probability summed over the
subsets of each group), and the baseline, ``reference_tie_orders.stan`` beside this file (the
program before: the Plackett-Luce probabilities of every strict order consistent with the
ties averaged, at most 720 orders per dataset, a random sample of 720 beyond), on the same
data, seed and Stan settings (4 x (1000 + 1000); the package's fit is extended where its
ESS target or a P(best) near 0.95 asks, and that counts in its time). Both sample one posterior where no dataset needs more than 720
orders (the mean and the sum differ by a constant); beyond, the baseline's sample of orders
is an approximation. Reported: seconds of each, the baseline's over the package's, the
largest tie group, the orders the baseline lists, and the largest difference of the worths'
posterior means in units of their Monte Carlo standard error.
"""
from __future__ import annotations

import argparse
import math
import platform
import time
import warnings
from itertools import permutations, product
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd

import bayescomp as bc
from bayescomp import sampling
from bayescomp.models.ranking import mean_scores, tie_groups
from bench_joint import markdown
from bench_real_pairs import read_collection

BASELINE = Path(__file__).with_name("reference_tie_orders.stan")
MAX_ORDERS = 720   # the baseline's cap per dataset


def listed_orders(groups, rng: np.random.Generator) -> np.ndarray:
    """Every strict order consistent with the tie groups, or MAX_ORDERS drawn at random."""
    if math.prod(math.factorial(len(g)) for g in groups) <= MAX_ORDERS:
        return np.array([np.concatenate(parts)
                         for parts in product(*(list(permutations(g)) for g in groups))])
    return np.array([np.concatenate([rng.permutation(g) for g in groups])
                     for _ in range(MAX_ORDERS)])


def baseline(scores: bc.Scores, seed: int, rope: float) -> tuple[float, np.ndarray, int]:
    """Seconds, worth draws (draws x algorithms) and orders listed, of the baseline program."""
    rng = np.random.default_rng(seed)
    orders, first, counts = [], [], []
    for values in mean_scores(scores).to_numpy():
        rows = listed_orders(tie_groups(values, True, rope), rng)
        first.append(sum(len(o) for o in orders) + 1)
        counts.append(len(rows))
        orders.append(rows)
    order = np.concatenate(orders) + 1
    data = dict(K=len(scores.algorithms), D=len(scores), N=len(order), order=order,
                first_order=np.array(first), n_orders=np.array(counts),
                alpha=np.ones(len(scores.algorithms)))
    started = time.perf_counter()
    fit = sampling.sample(BASELINE.read_text(), data, chains=4, iter_warmup=1000,
                          iter_sampling=1000, seed=seed, adapt_delta=0.8)
    seconds = time.perf_counter() - started
    worths = fit.posterior["worth"].values
    return seconds, worths, int(sum(counts))


def tied_collection(k: int, seed: int = 1) -> bc.Scores:
    """k algorithms on 30 datasets of 10 folds: on 15 of them the means span 0.008 (all k tie
    at ROPE 0.01), on the others 0.3 (a few ties)."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.7, 0.9, 30)
    spread = np.where(np.arange(30) < 15, 0.008, 0.3)
    skill = np.linspace(0, 1, k)
    means = {f"a{a}": base + spread * (skill[a] + rng.uniform(-0.3, 0.3, 30)) / 1.6
             for a in range(k)}
    return bc.from_arrays({name: mean[:, None] + rng.normal(0, 0.001, (30, 10))
                           for name, mean in means.items()}, n_folds=10)


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", nargs="*", help="clones bench_real_pairs.py reads")
    parser.add_argument("--seeds", type=int, default=1, help="fitting seeds 1..N")
    parser.add_argument("--tied", type=int, nargs="*", default=[5, 7],
                        help="simulated collections of this many algorithms, half the datasets "
                             "one tie group")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    collections = {"built-in example": bc.datasets.load_classifiers()}
    collections.update({f"{k} tied": tied_collection(k) for k in args.tied})
    for source in args.collections:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            collections[Path(source).name] = read_collection(source)
    rows = []
    for name, scores in collections.items():
        largest = max(max(len(g) for g in tie_groups(v, True, 0.01))
                      for v in mean_scores(scores).to_numpy())
        for seed in range(1, args.seeds + 1):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                started = time.perf_counter()
                result = bc.rank_algorithms(scores, rope=0.01, seed=seed, iter_warmup=1000)
                seconds = time.perf_counter() - started
                base_seconds, base_worths, listed = baseline(scores, seed, 0.01)
            ours = result.idata.posterior["worth"].values          # (chain, draw, algorithm)
            mcse = [np.hypot(az.mcse(ours[..., a]), az.mcse(base_worths[..., a]))
                    for a in range(ours.shape[-1])]
            gap = np.abs(ours.mean(axis=(0, 1)) - base_worths.mean(axis=(0, 1))) / mcse
            rows.append(dict(collection=name, algorithms=len(scores.algorithms),
                             datasets=len(scores), seed=seed, largest_tie=largest,
                             orders_listed=listed, seconds=round(seconds, 2),
                             baseline_seconds=round(base_seconds, 2),
                             baseline_over_ours=round(base_seconds / seconds, 1),
                             worth_gap_mcse=round(float(gap.max()), 2)))
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    header = (f"{time.strftime('%Y-%m-%d')}; Python {platform.python_version()}, "
              f"{platform.machine()}, engine auto; 4 chains x (1000 + 1000), the package's "
              "extended where its ESS target asks; ROPE 0.01")
    Path(args.out).write_text(f"{header}\n\n{markdown(table)}\n")
    print(table.to_string(index=False))
    return table


if __name__ == "__main__":
    main()
