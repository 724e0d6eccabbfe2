"""Cost of one leapfrog step of stan/hierarchical.stan against earlier versions of the program.

Run from the repository root::

    python benchmarks/bench_step_cost.py                      # working tree vs main, a5f7427
    python benchmarks/bench_step_cost.py --seeds 3 --sizes 54 1000 --against main a5f7427
    python benchmarks/bench_step_cost.py --sizes 54 --against --plain   # stanc's O1 or not

Every program is sampled through ``bayescomp.sampling.sample`` (engine cmdstanpy,
4 chains x (1000 + 1000), adapt_delta 0.95, the package's initial values) on the
same data, ``prepare`` of :func:`bayescomp.validation.simulate.benchmark_collection` (seed 1,
sigma0 0.02), the programs interleaved seed by seed so that the load of a shared machine falls
on all alike. The cost of a step is CmdStan's sampling seconds (summed over chains, warm-up
excluded) over the leapfrog steps of the kept draws (``n_steps``). Also printed: the min bulk
ESS of sigma0 and nu per sampling second, the wall time of the whole fit (warm-up included)
with delta0's bulk ESS per wall second, and the largest difference of the posterior means
of sigma0 and nu from the first program's, in Monte Carlo standard errors (the programs
sample one posterior). ``--pair near-identical`` samples
:func:`~bayescomp.validation.simulate.near_identical_collection` (seed 1) instead; its
posterior has two modes, so its ESS measures crossings, and its times are what to compare.
"""
from __future__ import annotations

import argparse
import hashlib
import time
import warnings

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr

from bayescomp import sampling
from bayescomp.models.hierarchical_prior import PRIORS
from bayescomp.models.hierarchical_density import bounded
from bayescomp.models.hierarchical_program import initial_values, prepare
from bayescomp.sampling import cmdstanpy_engine
from bayescomp.validation.simulate import benchmark_collection, near_identical_collection

from program_revisions import program, record_sampling_seconds  # benchmarks/, beside this

SETTINGS = dict(chains=4, iter_warmup=1000, iter_sampling=1000, adapt_delta=0.95)


def inits_for(code: str, data: dict, seed: int) -> list:
    """The package's initial values, with sigma_i given as the program declares it: programs
    before device 10 sample sigma_i itself, later ones its offset and scaled log-odds u_i."""
    inits = initial_values(data, SETTINGS["chains"],
                           sampling.Seeds(seed).generator("initial_values"))
    if "sigma_log_odds" not in code:
        lower = np.asarray(data["sigma_lower"], dtype=float)
        for chain in inits:
            sigma, _ = bounded(np.asarray(chain.pop("sigma_log_odds")), lower, data["sigma_upper"])
            chain["sigma"] = sigma.tolist()
    return inits


def measure(code: str, data: dict, seed: int) -> dict:
    start = time.perf_counter()
    idata = sampling.sample(code, data, backend="cmdstanpy", seed=seed,
                            inits=inits_for(code, data, seed), **SETTINGS)
    wall = time.perf_counter() - start
    seconds = float(np.sum(idata.attrs["stan_seconds"]))
    steps = int(idata.sample_stats["n_steps"].values.sum())
    # nu from log(nu - 1) (an array of size 1; the oldest programs report no nu)
    log_nu = idata.posterior["log_nu_minus_one"]
    posterior = xr.Dataset({"sigma0": idata.posterior["sigma0"],
                            "nu": 1 + np.exp(log_nu.isel({log_nu.dims[-1]: 0}))})
    ess = az.ess(posterior[["sigma0", "nu"]])
    delta0_ess = float(az.ess(idata.posterior["delta0"].values))
    mcse = az.mcse(posterior[["sigma0", "nu"]])
    # whether two programs gave the very same draws
    digest = hashlib.sha1(idata.posterior["sigma0"].values.tobytes()).hexdigest()[:12]
    return dict(wall=wall, delta0_ess_per_wall_s=delta0_ess / wall, seconds=seconds,
                steps=steps, ms_per_step=1e3 * seconds / steps, digest=digest,
                ess_per_s=min(float(ess[v]) for v in ("sigma0", "nu")) / seconds,
                divergences=int(idata.sample_stats["diverging"].values.sum()),
                **{f"mean_{v}": float(posterior[v].mean()) for v in ("sigma0", "nu")},
                **{f"mcse_{v}": float(mcse[v]) for v in ("sigma0", "nu")})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[54, 1000])
    parser.add_argument("--against", nargs="*", default=["main", "a5f7427"],
                        help="git revisions whose stan/hierarchical.stan is measured too")
    parser.add_argument("--pair", choices=["easy", "near-identical"], default="easy",
                        help="benchmark_collection (sigma0 0.02) or near_identical_collection")
    parser.add_argument("--plain", action="store_true",
                        help="also the working tree's program compiled without the package's "
                             "stanc flags (programs.STANC_FLAGS, --O1)")
    args = parser.parse_args()
    record_sampling_seconds()
    package_flags = cmdstanpy_engine.STANC_OPTIONS
    programs = {rev: program("hierarchical", rev) for rev in ["work", *args.against]}
    if args.plain:
        programs["work, plain"] = programs["work"]
    rows = []
    for size in args.sizes:
        scores = (benchmark_collection(size, seed=1, sigma0=0.02) if args.pair == "easy"
                  else near_identical_collection(size, seed=1)).scores
        data, _ = prepare(scores, "a", "b", PRIORS["paper"])
        for seed in range(1, args.seeds + 1):
            for name, code in programs.items():
                cmdstanpy_engine.STANC_OPTIONS = {} if name.endswith("plain") else package_flags
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    row = measure(code, data, seed)
                rows.append(dict(datasets=size, seed=seed, program=name, **row))
                print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    summary = table.groupby(["datasets", "program"]).agg(
        ms_per_step_median=("ms_per_step", "median"), ms_per_step_min=("ms_per_step", "min"),
        ms_per_step_max=("ms_per_step", "max"), ess_per_s_median=("ess_per_s", "median"),
        wall_median=("wall", "median"), wall_total=("wall", "sum"),
        delta0_ess_per_wall_s_median=("delta0_ess_per_wall_s", "median"),
        divergences=("divergences", "sum"))
    print(summary.to_string())
    # the programs sample one posterior: their means differ by Monte Carlo error
    for (size, seed), group in table.groupby(["datasets", "seed"]):
        first = group.iloc[0]
        for _, other in group.iloc[1:].iterrows():
            z = max(abs(other[f"mean_{v}"] - first[f"mean_{v}"])
                    / np.hypot(other[f"mcse_{v}"], first[f"mcse_{v}"]) for v in ("sigma0", "nu"))
            print(f"{size} datasets, seed {seed}: {other['program']} vs {first['program']}: "
                  f"largest |difference of means| / MCSE {z:.2f}")


if __name__ == "__main__":
    main()
