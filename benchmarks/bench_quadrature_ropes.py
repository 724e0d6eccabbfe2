"""A sensitivity analysis of a fit the quadrature answers: the other ROPEs read from one grid
split at every ROPE's ends (``quadrature_at_ropes``, what ``bc.sensitivity`` runs) against a
quadrature per ROPE (what it ran before), in one run.

Run from the repository root with clones of github.com/jwainer/bbtcomp and of
github.com/BayesianTestsML/tutorial (the collections ``bench_real_pairs.py`` reads)::

    python benchmarks/bench_quadrature_ropes.py /tmp/bbtcomp /tmp/tutorial --out /tmp/r.md

Per pair (real pairs whose chains do not mix, so that ``bc.hierarchical`` answers them by
quadrature): the seconds of one grid read at the six default ROPEs other than the fit's
(0.01), of six quadratures, their ratio, and over the six ROPEs and both questions the
largest difference of a probability between the two routes, also over the larger of their
two errors (``z``: at most 1 where they agree within their errors), and whether the
decisions at 0.95 are the same. Per pair the baseline runs first, then the shared grid.
"""
from __future__ import annotations

import argparse
import platform
import time
import warnings
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

import bayescomp as bc
from bayescomp.decisions import decide
from bayescomp.models.hierarchical_program import prepare
from bayescomp.models.quadrature import quadrature_at_ropes, quadrature_probabilities
from bayescomp.models.sensitivity_analysis import DEFAULT_ROPES
from bench_joint import markdown
from bench_real_pairs import read_collection

PAIRS = {"bbtcomp": [("lr", "lda"), ("lgbm", "rf"), ("knn", "gbm"), ("lr", "ridge")],
         "tutorial": [("j48", "j48gr")]}


def compare(scores, first, second) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data, scale = prepare(scores, first, second, bc.PRIORS["paper"])
    ropes = [bc.Rope.coerce(r) for r in DEFAULT_ROPES if r != 0.01]
    started = time.perf_counter()
    alone = [quadrature_probabilities(data, scale, rope, summaries=False) for rope in ropes]
    alone_s = time.perf_counter() - started
    started = time.perf_counter()
    together = quadrature_at_ropes(data, scale, ropes)
    shared_s = time.perf_counter() - started
    differences, z, same = [], [], True
    labels = ("left", "rope", "right")
    for one, other in zip(alone, together):
        for scope in ("population", "next_dataset"):
            gap = np.abs(getattr(one, scope) - getattr(other, scope))
            error = np.maximum(getattr(one, f"{scope}_error"), getattr(other, f"{scope}_error"))
            differences.append(gap.max())
            z.append((gap / np.maximum(error, 1e-12)).max())
            # decided as bc.sensitivity decides them: each with its error as the margin
            same &= (decide(getattr(one, scope), 0.95, labels,
                            mcse=getattr(one, f"{scope}_error"))
                     == decide(getattr(other, scope), 0.95, labels,
                               mcse=getattr(other, f"{scope}_error")))
    return dict(pair=f"{first} - {second}", datasets=len(scores), ropes=len(ropes),
                per_rope_s=round(alone_s, 2), shared_grid_s=round(shared_s, 2),
                speed_up=round(alone_s / shared_s, 2), max_difference=float(max(differences)),
                max_z=round(float(max(z)), 2), same_decisions=bool(same),
                all_ok=all(q.ok for q in alone + together))


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bbtcomp", help="a clone of github.com/jwainer/bbtcomp")
    parser.add_argument("tutorial", help="a clone of github.com/BayesianTestsML/tutorial")
    parser.add_argument("--out", required=True, help="Markdown file the run is written to")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = []
    for name, source in (("bbtcomp", args.bbtcomp), ("tutorial", args.tutorial)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = read_collection(source)
        for first, second in PAIRS[name]:
            rows.append(dict(collection=name, **compare(scores, first, second)))
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    header = (f"{date.today()}; Python {platform.python_version()}, {platform.machine()}; "
              f"whole run {(time.perf_counter() - started) / 60:.1f} min")
    Path(args.out).write_text(f"{header}\n\n{markdown(table)}\n")
    return table


if __name__ == "__main__":
    main()
