"""The other priors of nu on one quadrature grid (``quadrature_under_priors``, what
``bc.sensitivity`` reads after a fit the quadrature answers) against a grid of each prior's
own (``quadrature_at_ropes``, what it read before), in one run.

Run from the repository root with clones of the collections ``bench_real_pairs.py`` reads
(github.com/BayesianTestsML/tutorial, github.com/openml/automlbenchmark,
github.com/jwainer/bbtcomp)::

    python benchmarks/bench_priors_on_grid.py /tmp/tutorial /tmp/amlb /tmp/bbtcomp --out /tmp/r.md

Per collection, every pair of its first ``--algorithms`` algorithms, at the default ROPEs of
``bc.sensitivity``: the seconds of the "paper" prior's grid read under it and under
"baycomp", "kruschke" and "juarez_steel" together, and of the three priors' own grids (the
baseline; the paper prior's own grid is the shared one's first part, so the ratio is that
of the whole sensitivity's quadratures only where the paper fit went to the quadrature);
per prior whether each route is within its tolerance at every ROPE, and ``z``: over the
ROPEs and both questions, the largest difference of a probability between the two routes
over the larger of their errors (at most 1 where they agree within their errors).
"""
from __future__ import annotations

import argparse
import itertools
import platform
import time
import warnings
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

import bayescomp as bc
from bayescomp.models.hierarchical_program import prepare
from bayescomp.models.quadrature import quadrature_at_ropes, quadrature_under_priors
from bayescomp.models.sensitivity_analysis import default_ropes
from bench_joint import markdown
from bench_real_pairs import read_collection

OTHERS = ("baycomp", "kruschke", "juarez_steel")
SCOPES = ("population", "next_dataset")


def largest_z(shared: list, own: list) -> float:
    """The largest difference of a probability over the larger of the two errors."""
    return max(float((np.abs(getattr(a, scope) - getattr(b, scope))
                      / np.maximum(np.maximum(getattr(a, f"{scope}_error"),
                                              getattr(b, f"{scope}_error")), 1e-12)).max())
               for a, b in zip(shared, own) for scope in SCOPES)


def compare(scores, first: str, second: str) -> dict | None:
    try:
        ropes = [bc.Rope(-width, width) for width in default_ropes(scores, first, second)]
    except ValueError:          # scores neither fractions nor percentages: no default ROPEs
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data, scale = prepare(scores, first, second, bc.PRIORS["paper"])
        others = [prepare(scores, first, second, bc.PRIORS[name])[0] for name in OTHERS]
    started = time.perf_counter()
    own = [quadrature_at_ropes(other, scale, ropes) for other in others]
    own_s = time.perf_counter() - started
    started = time.perf_counter()
    shared = quadrature_under_priors(data, others, scale, ropes)
    shared_s = time.perf_counter() - started
    row = dict(pair=f"{first} - {second}", datasets=len(data["mean_diff"]),
               own_grids_s=round(own_s, 2), shared_grid_s=round(shared_s, 2),
               ratio=round(own_s / shared_s, 2))
    for name, on_grid, alone in zip(OTHERS, shared[1:], own):
        row[f"{name}_ok"] = (f"{all(q.ok for q in on_grid)}/{all(q.ok for q in alone)}")
        row[f"{name}_z"] = round(largest_z(on_grid, alone), 3)
    return row


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", nargs="+", help="clones or CSV files of scores")
    parser.add_argument("--algorithms", type=int, default=6,
                        help="the first this many algorithms of each collection (default 6)")
    parser.add_argument("--out", required=True, help="Markdown file the run is written to")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = []
    for source in args.collections:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = read_collection(source)
        for first, second in itertools.combinations(scores.algorithms[:args.algorithms], 2):
            row = compare(scores, first, second)
            if row is not None:
                rows.append(dict(collection=Path(source).name, **row))
                print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    header = (f"{date.today()}; Python {platform.python_version()}, {platform.machine()}; "
              f"whole run {(time.perf_counter() - started) / 60:.1f} min; the shared grid "
              f"holds the paper prior and {', '.join(OTHERS)}; ok is shared/own")
    Path(args.out).write_text(f"{header}\n\n{markdown(table)}\n")
    return table


if __name__ == "__main__":
    main()
