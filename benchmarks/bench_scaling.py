"""How the hierarchical model scales: datasets, scores per dataset, and all pairs of algorithms.

Run from the repository root::

    python benchmarks/bench_scaling.py             # 4 chains x (500 + 1000), as the package
    python benchmarks/bench_scaling.py --quick     # 2 chains x (300 + 300), smaller grids

Prints three tables (and saves them to ``benchmarks/output/scaling.txt``):

1. against the number of datasets k (10, 50, 200, 1000, 2000; 100 scores each);
2. against the number of scores per dataset (10, 100, 1000; 50 datasets);
3. the all-pairs workload, 10 algorithms x 54 datasets (45 fits), serial against parallel
   through joblib (:func:`bayescomp.models.compare.compare_all`).

Columns: ``total_s`` wall time of one :func:`bayescomp.hierarchical` call (no baselines);
``sample_s`` the part spent in :func:`bayescomp.sampling.sample` (Stan plus the transfer
of the draws into ArviZ); ``ess_delta0`` bulk ESS of delta0 and ``ess_per_s`` = ESS /
total_s; ``divergences``; ``peak_main_mb`` and ``peak_worker_mb`` the peak resident memory
(VmHWM, reset before each fit through /proc/<pid>/clear_refs) of this process and of the
largest sampling worker (httpstan's pool for pystan's direct route; 0 for its native
route, whose chains run as threads of this process; for cmdstanpy, whose children exit,
``ru_maxrss`` of the children so far, which cannot be reset). Compilation is excluded (one
warm-up fit first). On a shared machine times vary by tens of percent between runs.
"""
from __future__ import annotations

import argparse
import os
import resource
import time
import warnings
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd

from bayescomp import compare_all, from_arrays, hierarchical, sampling, simulate
from bayescomp.exceptions import SamplingWarning

OUTPUT = Path(__file__).resolve().parent / "output"


# --------------------------------------------------------------------------- memory

def _worker_pids() -> list[int]:
    if sampling.resolve_backend() == "cmdstanpy" or sampling.ENGINES["pystan"].routes[0] == "native":
        return []  # the chains are threads of this process (cmdstanpy's are not measured)
    try:
        import httpstan.services_stub as stub
    except ImportError:
        return []
    return list((getattr(stub.executor, "_processes", None) or {}).keys())


def _reset_peaks(pids) -> bool:
    ok = True
    for pid in pids:
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as fh:
                fh.write("5")  # resets VmHWM to the current RSS
        except OSError:
            ok = False
    return ok


def _peak_mb(pid) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _children_maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


# --------------------------------------------------------------------------- one fit

def measure(scores, label: str, **options) -> dict:
    """Time, ESS/s and peak memory of one hierarchical fit of ``a - b``."""
    workers = _worker_pids()
    _reset_peaks([os.getpid(), *workers])
    timing = {}
    original = sampling.sample

    def timed_sample(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            timing["sample"] = time.perf_counter() - start

    sampling.sample = timed_sample
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SamplingWarning)
            start = time.perf_counter()
            result = hierarchical(scores, "a", "b", baselines=False, seed=1, **options)
            total = time.perf_counter() - start
    finally:
        sampling.sample = original
    ess = float(az.ess(result.idata, var_names=["delta0"])["delta0"])
    workers = _worker_pids() or workers
    worker_peak = max((_peak_mb(p) for p in workers), default=float("nan")) if workers \
        else _children_maxrss_mb()
    return dict(workload=label, total_s=total, sample_s=timing.get("sample", np.nan),
                ess_delta0=ess, ess_per_s=ess / total,
                divergences=result.diagnostics.divergences,
                peak_main_mb=_peak_mb(os.getpid()), peak_worker_mb=worker_peak)


def collection(n_datasets, n_scores, seed=0):
    sigma = np.random.default_rng(seed).uniform(0.02, 0.04, n_datasets)
    return simulate.collection(n_datasets, n_scores, delta0=0.005, sigma0=0.01, sigma=sigma,
                               rho=0.1, seed=seed).scores


def many_algorithms(n_algorithms=10, n_datasets=54, n_scores=100, seed=0):
    """Scores of several algorithms: dataset base accuracy + algorithm effect + CS fold noise."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.6, 0.9, n_datasets)
    effect = rng.normal(0.0, 0.01, n_algorithms)
    arrays = {}
    for j in range(n_algorithms):
        delta = base + effect[j] + rng.normal(0.0, 0.005, n_datasets)
        # independent compound-symmetric noise per algorithm: differences are CS with rho too
        noise = simulate.compound_symmetric(np.zeros(n_datasets), 0.02, n_scores, 0.1, rng)
        arrays[f"alg{j}"] = [d + x for d, x in zip(delta, noise)]
    return from_arrays(arrays, rho=0.1)


def all_pairs(scores, n_jobs, options) -> float:
    """Wall time of every pairwise hierarchical comparison."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplingWarning)
        compare_all(scores, rope=0.01, method="hierarchical", n_jobs=n_jobs, seed=1, **options)
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--iter-warmup", type=int, default=500)
    parser.add_argument("--iter-sampling", type=int, default=1000)
    parser.add_argument("--datasets", type=int, nargs="+", default=[10, 50, 200, 1000, 2000])
    parser.add_argument("--scores", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--pairs-jobs", type=int, default=2,
                        help="n_jobs of the parallel all-pairs run")
    parser.add_argument("--skip-pairs", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    if args.quick:
        args.chains, args.iter_warmup, args.iter_sampling = 2, 300, 300
        args.datasets, args.scores = [10, 50, 200], [10, 100]
    options = dict(chains=args.chains, iter_warmup=args.iter_warmup,
                   iter_sampling=args.iter_sampling)
    args.output.mkdir(parents=True, exist_ok=True)
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    say(f"backend {sampling.resolve_backend('auto')}, {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f}; fits: {options}")
    measure(collection(10, 10), "warm-up", **options)  # compiles if needed; not reported

    rows = [dict(k=k, n=100, **measure(collection(k, 100), f"k={k}", **options))
            for k in args.datasets]
    say("\n1. Against the number of datasets (100 scores each)")
    say(pd.DataFrame(rows).drop(columns="workload").to_string(
        index=False, float_format=lambda v: f"{v:.4g}"))

    rows = [dict(k=50, n=n, **measure(collection(50, n), f"n={n}", **options))
            for n in args.scores]
    say("\n2. Against the number of scores per dataset (50 datasets)")
    say(pd.DataFrame(rows).drop(columns="workload").to_string(
        index=False, float_format=lambda v: f"{v:.4g}"))

    if not args.skip_pairs:
        scores = many_algorithms()
        serial = all_pairs(scores, 1, options)
        parallel = all_pairs(scores, args.pairs_jobs, options)
        say("\n3. All pairs: 10 algorithms x 54 datasets x 100 scores = 45 fits")
        say(pd.DataFrame([
            dict(run="serial (n_jobs=1)", wall_s=serial, per_fit_s=serial / 45, speedup=1.0),
            dict(run=f"joblib threads (n_jobs={args.pairs_jobs})", wall_s=parallel,
                 per_fit_s=parallel / 45, speedup=serial / parallel),
        ]).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    (args.output / f"scaling{'_quick' if args.quick else ''}.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
