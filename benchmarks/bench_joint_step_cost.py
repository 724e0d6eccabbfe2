"""Cost of one leapfrog step of stan/joint.stan against an earlier version of the program.

Run from the repository root::

    python benchmarks/bench_joint_step_cost.py --against 7673b3c          # built-in example
    python benchmarks/bench_joint_step_cost.py /tmp/bbtcomp --against 7673b3c \\
        --algorithms lgbm dt rf xgb gbm lr ridge lda svml knn --seeds 2

Both programs are sampled through ``bayescomp.sampling.sample`` (engine cmdstanpy, 4 chains
x (``--warmup`` + ``--draws``), adapt_delta 0.95, the package's initial values in each
program's parameters) on the same data (``joint_program.prepare``, rotated as
``compare_many`` rotates it), interleaved seed by seed so that the load of a shared machine
falls on both alike. The cost of a step is CmdStan's sampling seconds (summed over chains,
warm-up excluded) over the leapfrog steps of the kept draws. The programs sample one
posterior (their coordinates may differ, so their draws do): the posterior means of sigma0
and nu are compared in Monte Carlo standard errors. ``source`` is what
``bench_real_pairs.read_collection`` reads (a clone of bbtcomp, of the tutorial, a CSV);
without it, the package's example (``bc.datasets.load_classifiers()``).
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd

import bayescomp as bc
from bayescomp import sampling
from bayescomp.models.joint_program import (initial_values, prepare, rotate,
                                            sampling_rotation, stan_data)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_real_pairs import read_collection  # noqa: E402
from program_revisions import program, record_sampling_seconds  # noqa: E402


def inits_for(code: str, data: dict, seed: int) -> list:
    """The package's initial values; for a program that samples the Bartlett factor as two
    vectors (before it was one Cholesky-factor matrix), its diagonal and the entries below."""
    inits = initial_values(data, 4, np.random.default_rng(seed))
    if "shape_diagonal" in code:
        d = int(data["d"])
        for chain in inits:
            factor = np.asarray(chain.pop("shape"))
            chain["shape_diagonal"] = np.diag(factor).tolist()
            chain["shape_lower"] = factor[np.tril_indices(d, -1)].tolist()
    return inits


def measure(code: str, data: dict, seed: int, settings: dict) -> dict:
    start = time.perf_counter()
    idata = sampling.sample(code, stan_data(data), backend="cmdstanpy", seed=seed,
                            inits=inits_for(code, data, seed), **settings)
    wall = time.perf_counter() - start
    seconds = float(np.sum(idata.attrs["stan_seconds"]))
    steps = int(idata.sample_stats["n_steps"].values.sum())
    post = idata.posterior
    nu = 1 + np.exp(post["log_nu_minus_one"])
    means = {"sigma0": post["sigma0"], "nu": nu}
    return dict(wall=wall, seconds=seconds, steps=steps, ms_per_step=1e3 * seconds / steps,
                steps_per_draw=steps / post["sigma0"].size,
                divergences=int(idata.sample_stats["diverging"].values.sum()),
                **{f"mean_{k}": float(v.mean()) for k, v in means.items()},
                **{f"mcse_{k}": float(az.mcse(v.values)) for k, v in means.items()})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", nargs="?", help="a collection (bench_real_pairs's)")
    parser.add_argument("--algorithms", nargs="+", help="a subset of the algorithms")
    parser.add_argument("--against", default="HEAD", help="the git revision to compare with")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--draws", type=int, default=500)
    args = parser.parse_args()
    scores = read_collection(args.source) if args.source else bc.datasets.load_classifiers()
    if args.algorithms:
        scores = scores.subset(algorithms=args.algorithms)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data, _ = prepare(scores, bc.PRIORS["paper"])
    data = rotate(data, sampling_rotation(data))
    settings = dict(chains=4, iter_warmup=args.warmup, iter_sampling=args.draws,
                    adapt_delta=0.95)
    record_sampling_seconds()
    programs = {rev: program("joint", rev) for rev in ["work", args.against]}
    rows = []
    for seed in range(1, args.seeds + 1):
        for name, code in programs.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rows.append(dict(seed=seed, program=name,
                                 **measure(code, data, seed, settings)))
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    print(f"{len(scores)} datasets, {len(scores.algorithms)} algorithms, 4 chains x "
          f"({args.warmup} + {args.draws})")
    print(table[["seed", "program", "wall", "ms_per_step", "steps_per_draw", "divergences",
                 "mean_sigma0", "mean_nu"]].to_string(index=False))
    for seed, group in table.groupby("seed"):
        work, other = group.iloc[0], group.iloc[1]
        z = max(abs(work[f"mean_{v}"] - other[f"mean_{v}"])
                / np.hypot(work[f"mcse_{v}"], other[f"mcse_{v}"]) for v in ("sigma0", "nu"))
        print(f"seed {seed}: ms per step {work['ms_per_step'] / other['ms_per_step']:.2f}x, "
              f"wall {work['wall'] / other['wall']:.2f}x; the largest |difference of means| "
              f"/ MCSE {z:.2f}")


if __name__ == "__main__":
    main()
