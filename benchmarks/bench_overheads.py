"""Where the time of one hierarchical fit goes besides Stan's sampling, on both engines.

Run from the repository root::

    python benchmarks/bench_overheads.py                     # 54 datasets, 3 warm fits each
    python benchmarks/bench_overheads.py --datasets 400 --repeats 5 --output results/x.md

One warm fit (``bc.hierarchical`` on ``benchmark_collection(n, seed=1)``, the package's
defaults: 4 chains x (500 + 1000)) per engine and repeat, engines interleaved; each step is
timed by wrapping the function that does it (the wrappers cost microseconds). "Stan" is the
longest chain's own total time as Stan reports it; "engine call" the engine's ``sample``;
what the engine call spends outside Stan is process start, data and initial values read by
Stan and written by the engine, waiting for the slowest chain, and reading the draws back.
"""
from __future__ import annotations

import argparse
import collections
import functools
import os
import time
import warnings

import numpy as np

import bayescomp as bc
from bayescomp.models import hierarchical as hierarchical_module, region_masses
from bayescomp.sampling import _native, cmdstanpy_engine, inference_data
from bayescomp.validation.simulate import benchmark_collection

TIMES: dict = collections.defaultdict(float)
#: (label, module, attribute): the steps timed
STEPS = [
    ("initial values", hierarchical_module, "initial_values"),
    ("Stan data (prepare)", hierarchical_module, "prepare"),
    ("engine call (sampling.sample)", hierarchical_module.sampling, "sample"),
    ("reading CmdStan's CSV", cmdstanpy_engine, "_read_csv"),
    ("draws to InferenceData", inference_data, "build"),
    ("to the user's scale", hierarchical_module, "to_user_scale"),
    ("R-hat and ESS (variable_convergence)", hierarchical_module, "variable_convergence"),
    ("diagnostics", hierarchical_module, "diagnose"),
    ("population's masses", region_masses, "population_masses"),
    ("next dataset's masses", region_masses, "next_dataset_masses"),
    ("datasets' masses", region_masses, "dataset_probabilities"),
    ("per-dataset t-tests", hierarchical_module, "correlated_ttests"),
    ("datasets' summaries (region_summaries)", hierarchical_module, "region_summaries"),
    ("baselines (signed-rank, sign)", hierarchical_module, "run_baselines"),
]


def timed(label, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            TIMES[label] += time.perf_counter() - started
    return wrapper


def install_timers():
    import cmdstanpy.stanfit.mcmc as mcmc

    for label, module, name in STEPS:
        setattr(module, name, timed(label, getattr(module, name)))
    sample = hierarchical_module.sampling.sample

    @functools.wraps(sample)
    def sample_recording_stan(*args, **kwargs):
        idata = sample(*args, **kwargs)
        TIMES["Stan (slowest chain)"] += float(np.max(idata.attrs["stan_seconds"]))
        return idata

    hierarchical_module.sampling.sample = sample_recording_stan
    mcmc.CmdStanMCMC._validate_csv_files = timed(
        "cmdstanpy's check of its CSV", mcmc.CmdStanMCMC._validate_csv_files)
    import cmdstanpy

    cmdstanpy.CmdStanModel.sample = timed("cmdstanpy's sample()", cmdstanpy.CmdStanModel.sample)
    _native.sample = timed("native route's sample()", _native.sample)


def one_fit(scores, backend, seed):
    TIMES.clear()
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.hierarchical(scores, "a", "b", rope=0.01, backend=backend, seed=seed)
    if len(result.settings["attempts"]) > 1:
        print(f"({backend}, seed {seed}: {len(result.settings['attempts'])} attempts)")
    return dict(TIMES, total=time.perf_counter() - started)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=54)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--engines", nargs="+", default=["cmdstanpy", "pystan"])
    parser.add_argument("--output", help="also write the Markdown table to this file")
    args = parser.parse_args(argv)
    install_timers()
    scores = benchmark_collection(args.datasets, seed=1).scores
    for engine in args.engines:   # warm: compiled, imported
        one_fit(scores, engine, seed=1)
    load = os.getloadavg()[0]
    rows = {engine: [] for engine in args.engines}
    for repeat in range(args.repeats):
        for engine in args.engines:
            rows[engine].append(one_fit(scores, engine, seed=100 + repeat))
    labels = ["total", "Stan (slowest chain)", "engine call (sampling.sample)",
              "cmdstanpy's sample()", "native route's sample()", "cmdstanpy's check of its CSV",
              "reading CmdStan's CSV", "draws to InferenceData"] + \
             [label for label, _, _ in STEPS if label not in (
                 "engine call (sampling.sample)", "reading CmdStan's CSV",
                 "draws to InferenceData")]
    lines = [f"{args.datasets} datasets, 4 chains x (500 + 1000); median of {args.repeats} "
             f"warm fits per engine, interleaved; {os.cpu_count()} cores, load {load:.1f} at "
             "the start", "",
             "| step (s) | " + " | ".join(args.engines) + " |",
             "|---|" + "---:|" * len(args.engines)]
    for label in labels:
        values = [np.median([row.get(label, np.nan) for row in rows[engine]])
                  for engine in args.engines]
        if all(np.isnan(values)):
            continue
        lines.append(f"| {label} | " + " | ".join(
            "" if np.isnan(v) else f"{v:.3f}" for v in values) + " |")
    outside = [np.median([row["total"] - row["Stan (slowest chain)"] for row in rows[engine]])
               for engine in args.engines]
    lines.append("| total minus Stan | " + " | ".join(f"{v:.3f}" for v in outside) + " |")
    print("\n".join(lines))
    if args.output:
        with open(args.output, "a") as out:
            out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
