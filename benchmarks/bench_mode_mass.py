"""The mass of each mode against long runs whose chains cross between the modes.

Issue 28 asks for the modes' weights (``bayescomp.models.modes.mode_weights``: bridge
sampling of each mode against a normal fitted to its draws, ``bayescomp.models.mode_mass``)
to be checked where the truth is known. On a near-identical pair the fast program's chains do cross between the
heavy-tailed mode (nu near 1) and the near-normal one (nu near 20) given enough draws, so the
share of draws each mode holds, pooled over long chains, is the truth to hold the estimate
against. Per collection: 4 chains x ``--draws`` draws (warm-up 1000, adapt_delta 0.95), the
draws split at nu = 3; the share of draws in the heavy-tailed mode (per chain and pooled),
how often each chain crossed, and the estimated weight of that mode with the standard
error of each mode's log mass (above ``modes.LOG_MASS_ERROR_MAX`` the package does not
report the weights). Each mode's draws enter the estimate as one chain, in the order drawn.

    python benchmarks/bench_mode_mass.py                      # the simulated collection
    python benchmarks/bench_mode_mass.py --tutorial /tmp/tutorial --draws 10000
    python benchmarks/bench_mode_mass.py --datasets 20 --reference --draws 10000
    python benchmarks/bench_mode_mass.py --collection outliers --reference --draws 20000

With ``--reference``, the plain published program (``stan/hierarchical_reference.stan``,
adapt_delta 0.99) is run as long on the simulated collection, and the same shares and
crossings are given for its chains: the truth from the other program, where it mixes. It
does on ``--collection outliers`` (19 datasets, 4 of them far from the rest:
``simulate.collection(19, distribution="outliers", sigma0=0.01, sigma=0.01)``), whose
posterior has a heavy-tailed and a near-normal mode too; on the near-identical collection
its chains stay apart.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import bayescomp as bc
from bayescomp import sampling
from bayescomp.models.hierarchical_density import log_density
from bayescomp.models.hierarchical_program import PROGRAM, initial_values, prepare, unconstrained
from bayescomp.models.mode_mass import log_masses
from bayescomp.validation.simulate import collection, near_identical_collection

SPLIT_NU = 3.0


def outlier_collection():
    """15 datasets with differences near 0 and 4 near 0.05 (tests/test_mode_mass.py's)."""
    return collection(19, 100, sigma0=0.01, sigma=0.01, distribution="outliers", seed=1).scores


def long_run(scores, first, second, draws: int, seed: int) -> dict:
    data, _ = prepare(scores, first, second, bc.PRIORS["paper"])
    started = time.perf_counter()
    fit = sampling.sample(PROGRAM, data, chains=4, iter_warmup=1000, iter_sampling=draws,
                          seed=seed, adapt_delta=0.95,
                          inits=initial_values(data, 4, np.random.default_rng(seed)))
    seconds = time.perf_counter() - started
    nu = 1 + np.exp(fit.posterior["log_nu_minus_one"].values[..., 0])
    x = unconstrained(fit, data)
    heavy = nu < SPLIT_NU
    # each mode as one chain of its draws (the halves of the bridge: first and second half)
    size = min(heavy.sum(), (~heavy).sum())
    modes = np.stack([x[heavy][:size], x[~heavy][:size]])
    logs, errors = log_masses([(0,), (1,)], modes, lambda p: log_density(data, p),
                              np.random.default_rng(seed))
    # the modes' draws were cut to the same number: the masses are of the modes themselves
    return dict(seconds=round(seconds, 1), draws=f"4 x {draws}",
                heavy_share=round(float(heavy.mean()), 3),
                heavy_share_per_chain=np.round(heavy.mean(axis=1), 3).tolist(),
                crossings_per_chain=(np.diff(heavy.astype(int), axis=1) != 0).sum(axis=1).tolist(),
                estimated_heavy_weight=round(float(1 / (1 + np.exp(logs[1] - logs[0]))), 3),
                log_mass_errors=np.round(errors, 3).tolist())


def reference_run(scores, draws: int, seed: int) -> dict:
    from bayescomp.models.reference import sample_reference

    started = time.perf_counter()
    idata = sample_reference(scores, "a", "b", seed=seed, iter_sampling=draws, adapt_delta=0.99)
    heavy = idata.posterior["nu"].values < SPLIT_NU
    return dict(seconds=round(time.perf_counter() - started, 1), draws=f"4 x {draws}",
                heavy_share=round(float(heavy.mean()), 3),
                heavy_share_per_chain=np.round(heavy.mean(axis=1), 3).tolist(),
                crossings_per_chain=(np.diff(heavy.astype(int), axis=1) != 0).sum(axis=1).tolist(),
                divergences=int(idata.sample_stats["diverging"].values.sum()))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--datasets", type=int, default=54,
                        help="size of the simulated collection (54: tests/test_modes.py's)")
    parser.add_argument("--collection", choices=("near-identical", "outliers"),
                        default="near-identical")
    parser.add_argument("--reference", action="store_true",
                        help="also run the plain reference program as long on it")
    parser.add_argument("--tutorial", help="also the real j48 - j48gr pair, from a clone of "
                        "github.com/BayesianTestsML/tutorial (see bench_real_pairs.py)")
    args = parser.parse_args(argv)
    if args.collection == "outliers":
        simulated = outlier_collection()
        label = "simulated outliers x19"
    else:
        simulated = near_identical_collection(args.datasets, identical=0.25, seed=2).scores
        label = f"simulated near-identical x{args.datasets}"
    runs = {label: long_run(simulated, "a", "b", args.draws, args.seed)}
    if args.reference:
        runs[f"{label}, reference program"] = reference_run(simulated, args.draws, args.seed)
    if args.tutorial:
        from bench_real_pairs import read_tutorial
        runs["real j48 - j48gr (tutorial, 54 datasets)"] = long_run(
            read_tutorial(Path(args.tutorial)), "j48", "j48gr", args.draws, args.seed)
    for name, row in runs.items():
        print(name)
        for key, value in row.items():
            print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
