"""Both Stan engines side by side on the hierarchical model: compile time, warm fit time, ESS/s.

Run with ``python benchmarks/bench_engines.py [--fresh] [--seeds 3] [--out FILE.md]``.

On 54 datasets x 100 scores (10 x 10 CV, rho 0.1, as in bench_hierarchical.py), the
package's settings (4 chains x (1000 warm-up + 1000 draws), adapt_delta 0.95, its initial
values), for every engine and route this machine has: cmdstanpy (CmdStan), pystan's native
route and pystan's public route. Each fit is one call of ``bayescomp.sampling.sample``
(wall-clock seconds, conversion to InferenceData included); the runs of the engines are
interleaved, seed by seed, so that the load of this shared machine falls on all alike, and
medians are compared. With the same seed every engine runs the same Stan sampler on the same
random numbers, so the ESS barely differs and the ratio of ESS/s is one of times.

``--fresh`` also compiles each engine's program into an empty cache (a temporary
``XDG_CACHE_HOME``), timing the compile and giving the size of what it caches.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import arviz as az
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_hierarchical import paper_like  # noqa: E402

from bayescomp import sampling  # noqa: E402
from bayescomp.models.hierarchical_prior import PRIORS  # noqa: E402
from bayescomp.models.hierarchical_program import initial_values, prepare  # noqa: E402

SETTINGS = dict(chains=4, iter_warmup=1000, iter_sampling=1000, adapt_delta=0.95)
COMPILE_SCRIPT = """
import sys, time
from pathlib import Path
from bayescomp import sampling
backend, route = sys.argv[1:3]
start = time.perf_counter()
sampling.engine(backend).compile(*sampling.program_code("hierarchical"), route=route)
seconds = time.perf_counter() - start
size = sum(p.stat().st_size for p in Path(sys.argv[3]).rglob("*") if p.is_file())
print(seconds, size)
"""


def candidates():
    found = []
    for backend, routes in (("cmdstanpy", ("cmdstan",)), ("pystan", ("native", "public"))):
        reason = sampling.ENGINES[backend].unavailable()
        if reason is not None:
            print(f"# {backend}: not measured, {reason}")
            continue
        found += [(backend, route) for route in routes]
    return found


def fresh_compile(backend, route):
    """Seconds and cached bytes of a first compile, in a child with an empty cache."""
    with tempfile.TemporaryDirectory(prefix="bench-engines-") as cache:
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        done = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT, backend, route, cache],
                              env=env, capture_output=True, text=True, cwd=cache)
        if done.returncode != 0:
            return float("nan"), float("nan"), done.stderr.strip().splitlines()[-1:]
        seconds, size = done.stdout.split()
        return float(seconds), int(size), []


def one_fit(backend, route, data, seed):
    start = time.perf_counter()
    idata = sampling.sample("hierarchical", data, backend=backend, route=route, seed=seed,
                            inits=initial_values(data, SETTINGS["chains"],
                                                 sampling.Seeds(seed).generator("initial_values")),
                            **SETTINGS)
    seconds = time.perf_counter() - start
    ess = az.ess(idata.posterior[["delta0", "sigma0", "nu"]])
    return dict(seconds=seconds, ess_delta0=float(ess["delta0"]),
                ess_min=float(min(float(ess[v].min()) for v in ess.data_vars)),
                stan=float(np.sum(idata.posterior.attrs.get("stan_seconds", np.nan))),
                version=idata.attrs["engine_version"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="time a first compile of each")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    args = parser.parse_args(argv)

    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    engines = candidates()
    scores = paper_like()
    data, _ = prepare(scores, "a", "b", PRIORS["paper"])
    say(f"54 datasets x 100 scores, 4 chains x (1000 + 1000), adapt_delta 0.95; {os.cpu_count()} "
        f"cores, load {os.getloadavg()[0]:.1f} at the start; seeds 1..{args.seeds}, each engine "
        "twice per seed, interleaved")
    if args.fresh:
        say("\n| engine, route | first compile (s) | cached size (MB) |\n|---|---:|---:|")
        for backend, route in engines:
            seconds, size, error = fresh_compile(backend, route)
            say(f"| {backend}, {route} | {seconds:.1f} | {size / 1e6:.1f} | {' '.join(error)}")
    for backend, route in engines:   # compiled (if not cached) and warm before any timing
        sampling.engine(backend).compile(*sampling.program_code("hierarchical"), route=route)
        one_fit(backend, route, data, seed=99)
    runs = {engine: [] for engine in engines}
    for seed in range(1, args.seeds + 1):
        for repeat in range(2):
            for engine in (engines if repeat == 0 else engines[::-1]):
                result = one_fit(*engine, data, seed)
                runs[engine].append(result)
                print(f"  {engine[0]:>9} {engine[1]:<7} seed {seed}: {result['seconds']:6.2f} s, "
                      f"ESS(delta0) {result['ess_delta0']:6.0f}, Stan's time {result['stan']:6.2f} s",
                      flush=True)
    say("\n| engine, route | versions | median warm fit (s) | median ESS(delta0) | median ESS/s "
        "(delta0) | min ESS/s (delta0, sigma0, nu) | Stan's own time, chains added (s) |")
    say("|---|---|---:|---:|---:|---:|---:|")
    rates = {}
    for engine, results in runs.items():
        seconds = np.median([r["seconds"] for r in results])
        rate = np.median([r["ess_delta0"] / r["seconds"] for r in results])
        rates[engine] = rate
        say(f"| {engine[0]}, {engine[1]} | {results[0]['version']} | {seconds:.2f} | "
            f"{np.median([r['ess_delta0'] for r in results]):.0f} | {rate:.0f} | "
            f"{np.median([r['ess_min'] / r['seconds'] for r in results]):.0f} | "
            f"{np.median([r['stan'] for r in results]):.2f} |")
    native = rates.get(("pystan", "native"))
    if native:
        say("")
        for engine, rate in rates.items():
            say(f"- {engine[0]} ({engine[1]}): ESS/s {rate / native:.0%} of pystan's native route"
                + (" (target >= 80%)" if engine[0] == "cmdstanpy" else ""))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
