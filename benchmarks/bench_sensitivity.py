"""The prior-sensitivity analyses: other priors of nu read off one fit's draws
(Pareto-smoothed importance sampling) against a fit per prior, in one run.

Run from the repository root (the real collections are clones that ``bench_real_pairs.py``
reads; without them only the built-in example runs)::

    python benchmarks/bench_sensitivity.py --out /tmp/sensitivity.md
    python benchmarks/bench_sensitivity.py /tmp/tutorial /tmp/amlb --pairs 4 --seeds 2
    python benchmarks/bench_sensitivity.py /tmp/tutorial /tmp/amlb --report --seeds 2

Per collection, pair and seed, interleaved: ``bc.sensitivity(scores, first, second,
seed=seed)`` at the package's defaults (every prior of ``bc.PRIORS``, the default ROPEs;
"baycomp", "kruschke" and "juarez_steel" read off the "paper" fit's draws where the weights
allow) and the same with ``reweight=False`` (the baseline: a fit per prior). Reported: the
seconds of each and their ratio, the fits each made, the priors reweighted with their Pareto
shapes, and over every reweighted prior, ROPE and question the largest difference of a
probability from the baseline's own fit of that prior, the rows whose decisions differ and
the rows the quadrature answered.

With ``--report``, per collection and seed: a paper's analysis of every algorithm
(``bayescomp.models.paper_analysis.paper_analysis(scores, rope=0.01, seed=seed)``, what
``bayescomp report`` runs), whose prior-sensitivity table under "baycomp" is read off the
joint fit's draws where the weights allow, against ``reweight=False`` (a second joint fit);
the same columns, over every pair and both questions.
"""
from __future__ import annotations

import argparse
import itertools
import platform
import time
import warnings

import numpy as np
import pandas as pd

import bayescomp as bc
from bench_joint import markdown
from bench_real_pairs import read_collection

PROBABILITIES = ["p_left", "p_rope", "p_right"]


def timed(scores, first, second, seed, reweight):
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.sensitivity(scores, first, second, seed=seed, reweight=reweight)
    return result, time.perf_counter() - started


def compare(fast, full) -> dict:
    """The reweighted priors' rows of ``fast`` against the same rows of ``full``."""
    keys = ["prior", "rope", "quantity"]
    a = fast.table.set_index(keys)
    b = full.table.set_index(keys).loc[a.index]
    chosen = a.index.get_level_values("prior").isin(list(fast.reweighted))
    difference = np.abs(a.loc[chosen, PROBABILITIES].to_numpy()
                        - b.loc[chosen, PROBABILITIES].to_numpy())
    return dict(
        reweighted=", ".join(f"{p} (k {w.pareto_k:.2f})" for p, w in fast.reweighted.items())
        or "-",
        max_difference=float(difference.max()) if difference.size else float("nan"),
        decisions_differ=int((a.loc[chosen, "decision"] != b.loc[chosen, "decision"]).sum()),
        rows=int(chosen.sum()),
        # the reweighted rows that the quadrature answered (a close call, or modes that differ)
        by_quadrature=int((a.loc[chosen, "read_from"] == "quadrature").sum()))


def report_row(scores, seed: int) -> dict:
    """One collection and seed of ``--report``: both analyses, interleaved."""
    from bayescomp.models.paper_analysis import paper_analysis

    timings, analyses = [], []
    for reweight in (True, False):
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            analyses.append(paper_analysis(scores, rope=0.01, seed=seed, reweight=reweight))
        timings.append(time.perf_counter() - started)
    fast, full = analyses
    a, b = (x.prior_tables["baycomp"] for x in analyses)
    columns = [c for c in a.columns if "_p_" in c]
    decisions = [c for c in a.columns if c.endswith("_decision")]
    return dict(seed=seed, seconds=timings[0], fits=len(fast.prior_fits),
                baseline_seconds=timings[1], baseline_fits=len(full.prior_fits),
                speed_up=timings[1] / timings[0],
                reweighted=", ".join(f"{p} (k {w.pareto_k:.2f})" for p, w in
                                     fast.prior_reweighted.items()) or "-",
                max_difference=float(np.abs(a[columns].to_numpy() - b[columns].to_numpy()).max()),
                decisions_differ=int((a[decisions].to_numpy() != b[decisions].to_numpy()).sum()),
                rows=int(a[decisions].size))


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", nargs="*", help="clones or CSV files (default: the "
                        "built-in example)")
    parser.add_argument("--pairs", type=int, default=3, help="the first N pairs of each")
    parser.add_argument("--seeds", type=int, default=2, help="seeds 1..N")
    parser.add_argument("--report", action="store_true",
                        help="time the paper's analysis of every algorithm instead")
    parser.add_argument("--out", help="append the table to this Markdown file")
    args = parser.parse_args(argv)
    sources = {name: read_collection(name) for name in args.collections} or {
        "built-in example": bc.datasets.load_classifiers()}
    rows, started = [], time.perf_counter()
    for label, scores in sources.items():
        if args.report:
            for seed in range(1, args.seeds + 1):
                rows.append(dict(collection=label.rstrip("/").split("/")[-1],
                                 **report_row(scores, seed)))
                print(rows[-1], flush=True)
            continue
        pairs = list(itertools.combinations(scores.algorithms, 2))[:args.pairs]
        for (first, second), seed in itertools.product(pairs, range(1, args.seeds + 1)):
            fast, fast_seconds = timed(scores, first, second, seed, True)
            full, full_seconds = timed(scores, first, second, seed, False)
            rows.append(dict(collection=label.rstrip("/").split("/")[-1],
                             pair=f"{first} - {second}", seed=seed, seconds=fast_seconds,
                             fits=len(fast.fits), baseline_seconds=full_seconds,
                             baseline_fits=len(full.fits),
                             speed_up=full_seconds / fast_seconds, **compare(fast, full)))
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    head = (f"{time.strftime('%Y-%m-%d')}; Python {platform.python_version()}, "
            f"{platform.machine()}; whole run {(time.perf_counter() - started) / 60:.1f} min"
            + ("; paper_analysis, prior 'paper' and its table under 'baycomp'" if args.report
               else f"; priors {list(bc.PRIORS)}, default ROPEs"))
    text = f"{head}\n\n{markdown(table)}\n"
    print(text)
    if args.out:
        with open(args.out, "a") as handle:
            handle.write(text + "\n")
    return table


if __name__ == "__main__":
    main()
