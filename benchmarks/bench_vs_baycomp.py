"""bayescomp's hierarchical model against baycomp's HierarchicalTest, side by side in one run:
effective draws of delta0 per second.

Run from the repository root (the full run; see benchmarks/results/vs_baycomp.md for its
expected time)::

    python benchmarks/bench_vs_baycomp.py
    python benchmarks/bench_vs_baycomp.py --sizes 54 --pairs easy near-identical --starts warm

Data: ``validation.simulate.benchmark_collection(n, seed=1)`` (the easy pair) and
``near_identical_collection(n, seed=1)`` (two near-identical algorithms), 10 x 10-fold CV,
ROPE 0.01, for n in ``--sizes``. Each measurement runs in a fresh interpreter:

* bayescomp: ``bc.hierarchical(scores, "a", "b", rope=0.01, seed=2, backend=--engine)``
  (seeds 2, 3, ... with ``--repeats``) with its defaults (4 chains x (500 + 1000), its
  retries when a fit fails its diagnostics, which count in its time), baselines off
  (baycomp runs none);
* baycomp 1.0.3: ``HierarchicalTest.sample(x, y, 0.01, runs=10, chains=4,
  nsamples=1000)`` through pystan 3 (4 chains x (1000 + 1000): pystan's warm-up and
  1,000 draws per chain, not baycomp's default of 10,000); baycomp caches its last result
  in ``./last-sample.pickle``, so every call runs in an empty working directory.

"warm": the program is compiled (a first call on the last 3 datasets compiles it if
needed, into the caches in use) and the interpreter has imported everything; the time is
the second call. "cold": empty caches (``BAYESCOMP_CACHE_DIR`` and ``XDG_CACHE_HOME``, which holds
httpstan's, in a new temporary directory), the time from the interpreter's start to the
result: imports, the compile of the program and the fit.

"vs easy" is a row's time over the easy pair's of the same tool, size and start (issue 32
asks at most 2x for the near-identical pair). ESS is the bulk ESS of delta0 over the draws
as sampled (all chains; ``bayescomp.models.convergence.ess_bulk``, ArviZ's definition) for
both; ESS per second divides it by the measured time. The ratio is bayescomp's ESS per
second over baycomp's on the same row. "ESS of the mean reported" is the posterior variance of
delta0 over the squared Monte Carlo error of the mean each tool reports: bayescomp's is the
average of delta0's conditional means per draw (``models.conditional_summaries``; its
probabilities, sd and interval are read from the same conditionals), baycomp's the mean of
its draws (whose ESS for the mean it is); for a fit read as separate modes or answered by
the quadrature it is of the draws as sampled, not of what the fit reports. With ``--repeats N`` every measurement runs N times
and a row gives the medians (the ratio is of the medians of ESS per second): baycomp's ESS
of delta0 from 4 x 1000 draws varied from 4159 to 5594 between single runs, which moved the
ratio by a third.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "vs_baycomp.md"
ROPE = 0.01
PAIRS = ("easy", "near-identical")


def collection(pair: str, n_datasets: int):
    from bayescomp.validation.simulate import benchmark_collection, near_identical_collection

    make = {"easy": benchmark_collection, "near-identical": near_identical_collection}[pair]
    return make(n_datasets, seed=1).scores


def worker(spec: dict) -> dict:
    """One measurement, in this (fresh) interpreter; ``spec["started"]`` is when the
    interpreter was launched (for a cold start)."""
    import warnings

    import numpy as np

    warnings.simplefilter("ignore")
    scores = collection(spec["pair"], spec["size"])
    if spec["tool"] == "bayescomp":
        import bayescomp as bc

        def run(data):
            return bc.hierarchical(data, "a", "b", rope=ROPE, seed=spec["seed"],
                                   backend=spec["engine"], baselines=False)
    else:
        import stan.model
        from baycomp.multiple import HierarchicalTest

        fits = []
        sample = stan.model.Model.sample

        def keep_fit(self, **kwargs):   # baycomp returns region probabilities only
            fits.append(sample(self, **kwargs))
            return fits[-1]

        stan.model.Model.sample = keep_fit

        def run(data):
            x, y = (np.stack([data.dataset(name).values[data.algorithm_index(algorithm)]
                              for name in data.dataset_names]) for algorithm in ("b", "a"))
            if os.path.exists("last-sample.pickle"):
                os.remove("last-sample.pickle")
            HierarchicalTest.sample(x, y, ROPE, runs=10, chains=4, nsamples=spec["nsamples"])
            return fits[-1]

    if spec["start"] == "warm":
        # the last 3: a near-identical collection's first datasets are identical, on which
        # baycomp's scaling divides by 0 (its differences' standard deviation)
        run(scores.subset(datasets=scores.dataset_names[-3:]))
        started = time.perf_counter()
    else:
        started = time.perf_counter() - (time.time() - spec["launched"])
    result = run(scores)
    seconds = time.perf_counter() - started
    import arviz as az

    from bayescomp.models.convergence import ess_bulk

    if spec["tool"] == "bayescomp":
        from bayescomp.models.conditional_summaries import truncated_moments

        post = result.idata.posterior
        delta0 = post["delta0"].values
        # delta0's mean as reported: the average of its conditional means per draw
        # (population_summary); its ESS is the posterior variance over that average's
        # squared Monte Carlo error
        means, _ = truncated_moments(post["delta0_centre"].values.reshape(-1),
                                     post["delta0_sd"].values.reshape(-1),
                                     float(post.attrs["delta0_bound"]))
        mcse = float(az.mcse(means.reshape(delta0.shape), method="mean"))
        extra = dict(attempts=len(result.settings["attempts"]),
                     population=[float(p) for p in result.population.probabilities],
                     version=result.settings["engine_version"],
                     reported_ess=result.population.sd ** 2 / mcse ** 2)
    else:   # pystan: draw-major, chains interleaved; delta0 in units of baycomp's scaling
        chains = result.num_chains
        delta0 = result["delta0"][0].reshape(-1, chains).T
        x, y = (np.stack([scores.dataset(name).values[scores.algorithm_index(algorithm)]
                          for name in scores.dataset_names]) for algorithm in ("b", "a"))
        delta0 = delta0 * np.mean(np.std(y - x, axis=1))
        from importlib.metadata import version

        # baycomp reads everything from the shares of its draws: its mean's ESS is theirs
        extra = dict(attempts=1, version=f"baycomp {version('baycomp')}, pystan "
                     f"{version('pystan')}", reported_ess=float(az.ess(delta0, method="mean")))
    ess = float(ess_bulk(delta0))
    return dict(spec, seconds=seconds, ess=ess, ess_per_second=ess / seconds,
                delta0_mean=float(delta0.mean()), draws=int(delta0.size), **extra,
                reported_ess_per_second=extra["reported_ess"] / seconds)


def measure(spec: dict) -> dict:
    """Run :func:`worker` in a fresh interpreter, in an empty working directory; a cold
    start also gets empty caches."""
    with tempfile.TemporaryDirectory(prefix="bench-vs-baycomp-") as scratch:
        env = dict(os.environ, MPLCONFIGDIR=str(Path(scratch) / "mpl"))
        if spec["start"] == "cold":
            env.update(XDG_CACHE_HOME=str(Path(scratch) / "cache"),
                       BAYESCOMP_CACHE_DIR=str(Path(scratch) / "bayescomp"))
        spec = dict(spec, launched=time.time())
        # a session of its own: on timeout the worker and the processes it started (httpstan's
        # pool, CmdStan) are stopped together
        worker_process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)],
            cwd=scratch, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        try:
            stdout, stderr = worker_process.communicate(timeout=60 * spec["timeout"])
        except subprocess.TimeoutExpired:
            os.killpg(worker_process.pid, signal.SIGKILL)
            worker_process.communicate()
            return dict(spec, error=f"not finished in {spec['timeout']:g} min",
                        timed_out=True)
        if worker_process.returncode != 0:
            lines = stderr.strip().splitlines() or ["?"]
            return dict(spec, error=lines[-1])
        return json.loads(stdout.strip().splitlines()[-1])


def median_row(runs: list) -> dict:
    """One row of the table from the runs of a measurement: the medians of their seconds,
    ESS, ESS per second and mean of delta0, the range of ESS per second and the most
    attempts; the first failed run's row where one failed (a median would hide it)."""
    import numpy as np

    failed = next((run for run in runs if "error" in run), None)
    if failed is not None or len(runs) == 1:
        return failed or runs[0]
    rates = [run["ess_per_second"] for run in runs]
    return dict(runs[0], **{key: float(np.median([run[key] for run in runs]))
                            for key in ("seconds", "ess", "ess_per_second", "delta0_mean",
                                        "reported_ess", "reported_ess_per_second")},
                attempts=max(run["attempts"] for run in runs), repeats=len(runs),
                ess_per_second_range=(min(rates), max(rates)))


def table(rows: list, args, load: float, seconds: float) -> list[str]:
    import numpy as np

    lines = [f"`python benchmarks/bench_vs_baycomp.py {' '.join(args.argv)}`".replace(" `", "`"),
             "",
             f"{time.strftime('%Y-%m-%d')}; Python {platform.python_version()}, "
             f"{platform.machine()}, {os.cpu_count()} cores, load {load:.1f} at the start; "
             f"whole run {seconds / 60:.1f} min. bayescomp engine: {args.engine}; baycomp 4 "
             f"chains x (1000 + {args.baycomp_nsamples}).", "",
             "| pair | datasets | start | who | seconds | vs easy | ESS(delta0) | ESS/s | "
             "bayescomp / baycomp (ESS/s) | ESS of the mean reported | its ESS/s | "
             "bayescomp / baycomp | mean delta0 | note |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for row in rows:
        head = f"| {row['pair']} | {row['size']} | {row['start']} | {row['tool']} |"
        if "error" in row:
            error = row["error"] if len(row["error"]) <= 160 else row["error"][:157] + "..."
            lines.append(f"{head} - | | - | - | | - | - | | - | {error.replace('|', '/')} |")
            continue
        same = [r for r in rows if r is not row and
                all(r[k] == row[k] for k in ("pair", "size", "start"))]
        other = next((r for r in same if "error" not in r), None)
        unfinished = next((r for r in same if r.get("timed_out")), None)
        ratio = reported_ratio = ""
        if row["tool"] == "bayescomp" and other is not None:
            ratio = f"{row['ess_per_second'] / other['ess_per_second']:.1f}x"
            reported = row["reported_ess_per_second"] / other["reported_ess_per_second"]
            reported_ratio = f"{reported:.0f}x"
        elif row["tool"] == "bayescomp" and unfinished is not None:
            # Geyer's estimate never exceeds draws x log10(draws): baycomp's ESS/s is below
            # that over the time it was given
            draws = 4 * args.baycomp_nsamples
            bound = draws * np.log10(draws) / (60 * unfinished["timeout"])
            ratio = f"> {row['ess_per_second'] / bound:.1f}x"
        # the time over the easy pair's, same tool, size and start (issue 32: at most 2x)
        easy = next((r for r in rows if "error" not in r and r["pair"] == "easy" and
                     all(r[k] == row[k] for k in ("tool", "size", "start"))), None)
        versus = "" if easy is None else f"{row['seconds'] / easy['seconds']:.2f}x"
        note = row.get("version", "")
        if row.get("attempts", 1) > 1:
            note += f"; {row['attempts']} attempts"
        if row.get("repeats", 1) > 1:
            low, high = row["ess_per_second_range"]
            note += f"; median of {row['repeats']} runs (ESS/s {low:.0f}-{high:.0f})"
        lines.append(f"{head} {row['seconds']:.1f} | {versus} | {row['ess']:.0f} | "
                     f"{row['ess_per_second']:.0f} | {ratio} | {row['reported_ess']:.0f} | "
                     f"{row['reported_ess_per_second']:.0f} | {reported_ratio} | "
                     f"{row['delta0_mean']:.4f} | {note} |")
    return lines


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[54, 400, 1000])
    parser.add_argument("--pairs", nargs="+", choices=PAIRS, default=list(PAIRS))
    parser.add_argument("--starts", nargs="+", choices=("warm", "cold"),
                        default=["warm", "cold"])
    parser.add_argument("--who", nargs="+", choices=("bayescomp", "baycomp"),
                        default=["bayescomp", "baycomp"])
    parser.add_argument("--engine", default="auto", help="bayescomp's backend")
    parser.add_argument("--baycomp-nsamples", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=20,
                        help="minutes a measurement may take before it is stopped")
    parser.add_argument("--out", type=Path, default=OUT,
                        help="Markdown file the table is appended to")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of every measurement (bayescomp's seeds 2, 3, ...; baycomp's "
                        "pystan draws its own); the table gives their medians")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    args.argv = argv
    load, begun, rows = os.getloadavg()[0], time.perf_counter(), []
    for pair in args.pairs:
        for size in args.sizes:
            for start in args.starts:
                for tool in args.who:
                    runs = []
                    for repeat in range(args.repeats):
                        spec = dict(tool=tool, pair=pair, size=size, start=start,
                                    engine=args.engine, nsamples=args.baycomp_nsamples,
                                    timeout=args.timeout, seed=2 + repeat)
                        print(f"{tool}, {pair}, {size} datasets, {start}, run {repeat + 1} ...",
                              flush=True)
                        runs.append(measure(spec))
                        print("   ", {k: runs[-1].get(k) for k in
                                      ("seconds", "ess", "ess_per_second", "attempts", "error")},
                              flush=True)
                    rows.append(median_row(runs))
    lines = table(rows, args, load, time.perf_counter() - begun)
    print("\n".join(lines))
    with open(args.out, "a") as out:
        out.write("\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
