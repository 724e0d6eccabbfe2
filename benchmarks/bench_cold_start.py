"""Cold start: the first hierarchical result on a fresh install, bayescomp against baycomp.

    python benchmarks/bench_cold_start.py [--out benchmarks/results/cold_start.md]

Every measurement runs in a fresh interpreter with empty caches (``XDG_CACHE_HOME`` and
``BAYESCOMP_CACHE_DIR`` in a new temporary directory, which is also the working directory),
so it pays what a user pays on the first call after ``pip install``: the imports, the
compile of the Stan program and the fit. The same interpreter then repeats the call (warm:
the program is cached) on a new seed. Both sides compare forest and tree on the package's
example (17 datasets, 10 x 10-fold CV, ROPE 0.01) with their own defaults:

* bayescomp: ``bc.hierarchical(scores, "forest", "tree", rope=0.01)``, 4 chains x (1000 +
  1000), once per engine this machine has (cmdstanpy compiles with CmdStan, which is
  installed once like a compiler; pystan's native route builds its module with the toolchain
  of the httpstan wheel);
* baycomp: ``baycomp.two_on_multiple(x, y, rope=0.01, runs=10, nsamples=...)``, its
  hierarchical test through pystan 3 (httpstan compiles baycomp's program), 4 chains x
  (1000 + nsamples). Its default, nsamples=10000, did not finish a cold call in 22 minutes
  on the 2-core development machine, so the benchmark gives it bayescomp's 1000 draws per
  chain (``--baycomp-nsamples``). baycomp caches its last result in
  ``./last-sample.pickle``; it is removed before the warm call so that the warm call
  samples.

The figures are wall-clock seconds and ratios within one run; compiles use one core each (a
Stan program is one translation unit).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "cold_start.md"
FIRST, SECOND, ROPE = "forest", "tree", 0.01

OURS = """
import json, sys, time
start = time.perf_counter()
import bayescomp as bc
scores = bc.datasets.load_classifiers()
times, fits = [], []
for seed in (1, 2):
    fit = bc.hierarchical(scores, {first!r}, {second!r}, rope={rope}, seed=seed,
                          backend=sys.argv[1])
    times.append(time.perf_counter() - start)
    start = time.perf_counter()
    fits.append(fit)
print(json.dumps(dict(cold=times[0], warm=times[1], reliable=bool(fits[0].reliable),
                      next=[float(p) for p in fits[0].next_dataset.probabilities])))
"""

BAYCOMP = """
import json, os, sys, time
import numpy as np
start = time.perf_counter()
import baycomp
x, y = np.load("second.npy"), np.load("first.npy")
times, probs = [], []
for seed in (1, 2):
    if os.path.exists("last-sample.pickle"):
        os.remove("last-sample.pickle")
    probs.append(baycomp.two_on_multiple(x, y, rope={rope}, runs=10, random_state=seed,
                                         nsamples={nsamples}))
    times.append(time.perf_counter() - start)
    start = time.perf_counter()
print(json.dumps(dict(cold=times[0], warm=times[1], next=[float(p) for p in probs[0]])))
"""


def in_fresh_interpreter(code: str, *args: str, files: dict | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as scratch:
        for name, array in (files or {}).items():
            np.save(Path(scratch) / name, array)
        env = dict(os.environ, XDG_CACHE_HOME=str(Path(scratch) / "cache"),
                   BAYESCOMP_CACHE_DIR=str(Path(scratch) / "bayescomp"),
                   MPLCONFIGDIR=str(Path(scratch) / "mpl"))
        done = subprocess.run([sys.executable, "-c", code, *args], cwd=scratch, env=env,
                              capture_output=True, text=True)
        if done.returncode != 0:
            return dict(error=(done.stderr.strip().splitlines() or ["?"])[-1])
        return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--baycomp-nsamples", type=int, default=1000,
                        help="baycomp's draws per chain (its own default is 10000)")
    args = parser.parse_args(argv)

    import bayescomp as bc
    from bayescomp import sampling

    scores = bc.datasets.load_classifiers()
    first, second = (np.stack([d.values[scores.algorithm_index(a)] for d in scores.datasets])
                     for a in (FIRST, SECOND))
    load = os.getloadavg()[0]
    rows = []
    for backend in ("cmdstanpy", "pystan"):
        reason = sampling.ENGINES[backend].unavailable()
        if reason is not None:
            rows.append((f"bayescomp, {backend}", dict(error=reason)))
            continue
        print(f"bayescomp through {backend} ...", flush=True)
        rows.append((f"bayescomp, {backend}", in_fresh_interpreter(
            OURS.format(first=FIRST, second=SECOND, rope=ROPE), backend)))
        print("  ", rows[-1][1], flush=True)
    try:
        import baycomp  # noqa: F401
        print("baycomp ...", flush=True)
        rows.append(("baycomp (pystan 3)", in_fresh_interpreter(
            BAYCOMP.format(rope=ROPE, nsamples=args.baycomp_nsamples),
            files={"first.npy": first, "second.npy": second})))
        print("  ", rows[-1][1], flush=True)
    except ImportError:
        rows.append(("baycomp", dict(error="not installed (pip install baycomp)")))

    reference = dict(rows).get("baycomp (pystan 3)", {})
    lines = [
        "# Cold start: the first hierarchical result on a fresh install",
        "",
        f"`python benchmarks/bench_cold_start.py`; Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores, load {load:.1f} at the start. "
        f"{FIRST} against {SECOND} on the package's example (17 datasets x 100 scores), ROPE "
        f"{ROPE}; bayescomp's defaults, baycomp's with {args.baycomp_nsamples} draws per "
        "chain; empty caches, fresh interpreter.",
        "",
        "| who | cold: first result (s) | warm: second result (s) | cold, baycomp / this "
        "| P(left, rope, right) of the next dataset | note |",
        "|---|---:|---:|---:|---|---|",
    ]
    for name, row in rows:
        if "error" in row:
            lines.append(f"| {name} | - | - | - | - | {row['error']} |")
            continue
        ratio = reference.get("cold", np.nan) / row["cold"]
        probabilities = ", ".join(f"{p:.3f}" for p in row["next"])
        note = "" if row.get("reliable", True) else "fit marked unreliable"
        lines.append(f"| {name} | {row['cold']:.1f} | {row['warm']:.1f} | {ratio:.2f} | "
                     f"{probabilities} | {note} |")
    lines += ["", "baycomp is given x = tree and y = forest: its differences y - x are "
              "bayescomp's forest - tree, so both list P(tree better), P(rope), "
              "P(forest better) in that order. baycomp's three numbers are the shares of "
              "posterior draws in which each region is the most probable one for the next "
              "dataset (the corners of bayescomp's simplex figure); bayescomp's are the "
              "posterior means of the next dataset's probabilities."]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
