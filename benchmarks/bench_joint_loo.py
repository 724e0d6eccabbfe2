"""Leave-one-dataset-out coverage of the joint model's predictive intervals.

    python benchmarks/bench_joint_loo.py --collections 4 --datasets 10 --backend pystan

Simulated collections of 3 algorithms whose true per-dataset effects are known: algorithm a's
mean on dataset i is ``base_i + mu_a + e_ia`` with ``mu = (0, 0.01, 0.02)`` and ``e_ia ~ N(0,
0.01^2)`` independent (so every pair's delta_i is normal with sd 0.0141 about its mean), and
each of the 20 splits adds noise of sd 0.02 per algorithm, correlated between splits by rho =
0.1. For every dataset in turn, the joint model is fitted on the others (2 chains x 500 draws)
and the 90% central interval of each pair's difference on a new dataset (delta0 + the pair's
population scale x t(nu)) is checked against the held-out dataset's true delta_i. Printed
and appended to ``benchmarks/results/joint.md``.
"""
from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

import bayescomp as bc


def collection(n_datasets: int, rng) -> tuple[bc.Scores, np.ndarray]:
    mu = np.array([0.0, 0.01, 0.02])
    n, rho = 20, 0.1
    arrays, truth = {name: [] for name in ("a0", "a1", "a2")}, []
    for _ in range(n_datasets):
        effects = 0.8 + mu + rng.normal(0, 0.01, 3)
        truth.append(effects)
        for a, name in enumerate(arrays):
            noise = np.sqrt(rho) * rng.normal(0, 0.02) + np.sqrt(1 - rho) * rng.normal(0, 0.02, n)
            arrays[name].append(effects[a] + noise)
    scores = bc.from_arrays({k: np.array(v) for k, v in arrays.items()}, rho=rho,
                            datasets=[f"d{i}" for i in range(n_datasets)])
    return scores, np.array(truth)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", type=int, default=4)
    parser.add_argument("--datasets", type=int, default=10)
    parser.add_argument("--backend", default="pystan")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    pairs = [(0, 1), (0, 2), (1, 2)]
    hits, total, started, problems = 0, 0, time.perf_counter(), 0
    for c in range(args.collections):
        scores, truth = collection(args.datasets, rng)
        for held in range(args.datasets):
            rest = scores.subset(datasets=[n for j, n in enumerate(scores.dataset_names) if j != held])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = bc.compare_many(rest, seed=args.seed + held, backend=args.backend,
                                         chains=2, iter_warmup=500, iter_sampling=500, retries=0)
            problems += not result.reliable
            post = result.idata.posterior
            nu = post["nu"].values.reshape(-1)
            draws = np.random.default_rng(held).standard_t(nu)
            for p, (a, b) in enumerate(pairs):
                location = post["delta0"].values[..., p].reshape(-1)
                spread = post["population_sd"].values[..., p].reshape(-1)
                low, high = np.quantile(location + spread * draws, [0.05, 0.95])
                true = truth[held, a] - truth[held, b]
                hits += low <= true <= high
                total += 1
    seconds = time.perf_counter() - started
    share = hits / total
    error = np.sqrt(share * (1 - share) / total)
    lines = ["", "## Leave-one-dataset-out coverage (benchmarks/bench_joint_loo.py)", "",
             f"{args.collections} simulated collections of 3 algorithms x {args.datasets} "
             f"datasets (seed {args.seed}), every dataset held out in turn: the true delta_i of "
             f"the held-out dataset lies in the 90% predictive interval in {hits} of {total} "
             f"cases, {share:.3f} (binomial standard error {error:.3f}; the cases of one "
             f"collection are correlated); {problems} of {args.collections * args.datasets} "
             f"fits failed their diagnostics (2 x 500 draws, no retries); {seconds:.0f} s."]
    print("\n".join(lines))
    out = Path(__file__).resolve().parent / "results" / "joint.md"
    with out.open("a") as handle:
        handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
