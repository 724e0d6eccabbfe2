"""Start-up and per-call cost: `import bayescomp` against `import numpy, pandas, scipy.stats`,
and the closed-form correlated t-test against the same formula in plain numpy/scipy (and
baycomp's ``two_on_single`` when baycomp is installed), all measured in the same run.

Imports are timed in fresh interpreters, alternating the two, with bytecode caching on (as
in an installed package; ``-X pycache_prefix`` keeps the caches out of the source tree, and
one untimed run of each fills them). Each child times its own import with perf_counter, so
the interpreter's start is not counted. Results go to benchmarks/results/startup.md.

    python benchmarks/bench_startup.py [--runs 15] [--calls 2000]
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "startup.md"
BASELINE = "numpy, pandas, scipy.stats"
HEAVY = ("matplotlib", "matplotlib.pyplot", "arviz", "xarray", "joblib", "sklearn")


def import_seconds(statement: str, cache: str) -> tuple[float, list[str]]:
    code = ("import sys, time\nt = time.perf_counter()\n" + statement +
            "\nprint(time.perf_counter() - t)\n"
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-X", f"pycache_prefix={cache}", "-c", code],
                         env=env, capture_output=True, text=True, check=True).stdout.split("\n")
    return float(out[0]), [m for m in out[1].split(",") if m]


def per_call_ms(function, calls: int, repeats: int = 5) -> float:
    """Best of ``repeats`` averages over ``calls`` calls (the least disturbed by other load)."""
    function()
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e3


def plain_correlated_ttest(x, y, rho, rope):
    """The same formula in plain numpy/scipy: Student-t posterior of the mean difference."""
    from scipy import stats
    d = x - y
    n = d.size
    scale = np.sqrt((1 / n + rho / (1 - rho)) * np.var(d, ddof=1))
    mean = d.mean()
    left = stats.t.cdf(-rope, n - 1, mean, scale)
    right = stats.t.sf(rope, n - 1, mean, scale)
    return left, 1 - left - right, right


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed imports of each")
    parser.add_argument("--calls", type=int, default=2000, help="calls per timing of a test")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as cache:
        for statement in (f"import {BASELINE}", "import bayescomp"):
            import_seconds(statement, cache)  # fills the bytecode caches
        base, ours, loaded = [], [], set()
        for _ in range(args.runs):
            base.append(import_seconds(f"import {BASELINE}", cache)[0])
            seconds, heavy = import_seconds("import bayescomp", cache)
            ours.append(seconds)
            loaded.update(heavy)
    base_s, ours_s = float(np.median(base)), float(np.median(ours))
    ratios = np.array(ours) / np.array(base)

    import bayescomp as bc
    rng = np.random.default_rng(0)
    x, y = rng.normal(0.80, 0.03, 100), rng.normal(0.79, 0.03, 100)
    scores = bc.from_arrays({"a": [x], "b": [y]}, n_folds=10)
    ours_call = per_call_ms(lambda: bc.correlated_ttest(scores, "a", "b", rope=0.01), args.calls)
    arrays_call = per_call_ms(lambda: bc.correlated_ttest(
        bc.from_arrays({"a": [x], "b": [y]}, n_folds=10), "a", "b", rope=0.01), args.calls // 4)
    plain_call = per_call_ms(lambda: plain_correlated_ttest(x, y, 0.1, 0.01), args.calls)
    result = bc.correlated_ttest(scores, "a", "b", rope=0.01)
    agreement = np.max(np.abs(np.array(plain_correlated_ttest(x, y, 0.1, 0.01))
                              - result.probabilities))
    try:
        import baycomp
        baycomp_call = per_call_ms(lambda: baycomp.two_on_single(x, y, rope=0.01, runs=10),
                                   args.calls)
        # baycomp's differences are y - x: its (left, rope, right) is ours reversed
        baycomp_probs = np.array(baycomp.two_on_single(x, y, rope=0.01, runs=10))[::-1]
        baycomp_note = (f"{baycomp_call:.3f} ms (its probabilities, reversed to our sign "
                        f"convention, differ from ours by "
                        f"{np.max(np.abs(baycomp_probs - result.probabilities)):.1e})")
    except ImportError:
        baycomp_call, baycomp_note = None, "not installed (`pip install baycomp`)"

    lines = [
        "# Start-up and per-call cost",
        "",
        f"`python benchmarks/bench_startup.py --runs {args.runs} --calls {args.calls}`; "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores "
        "(shared with other jobs: medians and best-of timings).",
        "",
        "## `import bayescomp`",
        "",
        f"- `import {BASELINE}`: median {base_s:.3f} s over {args.runs} fresh interpreters",
        f"- `import bayescomp`: median {ours_s:.3f} s",
        f"- ratio (paired runs): median {np.median(ratios):.2f}, max {ratios.max():.2f}; "
        "target at most 1.5",
        "- heavy modules loaded by `import bayescomp`: "
        + (", ".join(sorted(loaded)) if loaded else "none of " + ", ".join(HEAVY)),
        "",
        "## Closed-form correlated t-test, per call",
        "",
        f"- `bc.correlated_ttest(scores, ...)` (validated Scores, full result): {ours_call:.3f} ms",
        f"- the same from arrays, `bc.from_arrays` included: {arrays_call:.3f} ms",
        f"- plain numpy/scipy formula (`scipy.stats.t.cdf/sf`, no validation, no result): "
        f"{plain_call:.3f} ms; probabilities agree to {agreement:.1e}",
        f"- baycomp `two_on_single`: {baycomp_note}",
    ]
    if baycomp_call is not None:
        lines.append(f"- ratio bayescomp / baycomp: {ours_call / baycomp_call:.2f} "
                     "(target at most 1)")
    text = "\n".join(lines) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
