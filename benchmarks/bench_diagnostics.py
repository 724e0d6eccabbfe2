"""Time of the hierarchical model's convergence diagnostics: bayescomp's vectorised R-hat and
ESS (``bayescomp.models.diagnostics.diagnose``) against ArviZ's per-variable functions, which
``diagnose`` called before, in the same run.

Run from the repository root::

    python benchmarks/bench_diagnostics.py                       # 54, 400 and 1000 datasets
    python benchmarks/bench_diagnostics.py --sizes 54 --repeats 5 --output results/x.md

The draws are AR(1) chains (coefficient 0.5) laid out as a fit of n datasets gives them to
``diagnose``: delta0, sigma0, nu and the n-vectors delta and sigma, 4 chains x 1000 draws,
with the sampler statistics it reads. Both routes compute the same numbers (checked here,
relative 1e-10); the time of each is the median of ``--repeats`` runs, the two interleaved.
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import arviz as az
import numpy as np

from bayescomp.models.diagnostics import diagnose

VAR_NAMES = ["delta0", "sigma0", "delta", "sigma", "nu"]


def fit_like(n_datasets: int, chains: int = 4, draws: int = 1000, seed: int = 1):
    """InferenceData shaped like a hierarchical fit of ``n_datasets`` with AR(1) draws."""
    rng = np.random.default_rng(seed)
    n_quantities = 3 + 2 * n_datasets
    x = np.empty((chains, draws, n_quantities))
    x[:, 0] = rng.normal(size=(chains, n_quantities))
    for t in range(1, draws):
        x[:, t] = 0.5 * x[:, t - 1] + rng.normal(size=(chains, n_quantities))
    posterior = dict(delta0=x[..., 0], sigma0=np.exp(x[..., 1]), nu=1 + np.exp(x[..., 2]),
                     delta=x[..., 3:3 + n_datasets], sigma=np.exp(x[..., 3 + n_datasets:]))
    stats = dict(diverging=np.zeros((chains, draws), dtype=bool),
                 tree_depth=rng.integers(2, 5, size=(chains, draws)),
                 energy=rng.normal(size=(chains, draws)).cumsum(axis=1) * 0.1
                 + rng.normal(size=(chains, draws)))
    return az.from_dict(posterior=posterior, sample_stats=stats)


def arviz_route(idata):
    """What ``diagnose`` computed before: ArviZ's rhat and ess per variable, and E-BFMI."""
    posterior = idata.posterior[VAR_NAMES]

    def extreme(dataset, reducer):
        values = np.concatenate([np.ravel(v.values) for v in dataset.data_vars.values()])
        return float(reducer(values[np.isfinite(values)]))

    return (extreme(az.rhat(posterior), np.max),
            extreme(az.ess(posterior, method="bulk"), np.min),
            extreme(az.ess(posterior, method="tail"), np.min),
            float(np.min(az.bfmi(idata))))


def bayescomp_route(idata):
    check = diagnose(idata, var_names=VAR_NAMES)
    return check.max_rhat, check.min_ess_bulk, check.min_ess_tail, check.min_bfmi


def timed(function, idata):
    started = time.perf_counter()
    values = function(idata)
    return time.perf_counter() - started, values


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[54, 400, 1000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", help="also write the Markdown table to this file")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [f"4 chains x 1000 draws of 3 + 2n quantities (AR(1), coefficient 0.5); median of "
             f"{args.repeats} runs, routes interleaved; {os.cpu_count()} cores, load "
             f"{load:.1f} at the start; {platform.python_version()}, numpy {np.__version__}, "
             f"arviz {az.__version__}", "",
             "| datasets | quantities | ArviZ per variable (s) | bayescomp vectorised (s) | "
             "ratio | largest relative difference |", "|---:|---:|---:|---:|---:|---:|"]
    for n_datasets in args.sizes:
        idata = fit_like(n_datasets)
        arviz_times, ours_times = [], []
        for _ in range(args.repeats):
            seconds, reference = timed(arviz_route, idata)
            arviz_times.append(seconds)
            seconds, ours = timed(bayescomp_route, idata)
            ours_times.append(seconds)
        difference = max(abs(a - b) / abs(a) for a, b in zip(reference, ours))
        if difference > 1e-10:
            raise AssertionError(f"{n_datasets} datasets: the routes differ: {reference} {ours}")
        arviz_s, ours_s = np.median(arviz_times), np.median(ours_times)
        lines.append(f"| {n_datasets} | {3 + 2 * n_datasets} | {arviz_s:.3f} | {ours_s:.3f} | "
                     f"{arviz_s / ours_s:.1f}x | {difference:.1e} |")
        print(lines[-1], flush=True)
    print("\n".join(lines))
    if args.output:
        with open(args.output, "a") as out:
            out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
