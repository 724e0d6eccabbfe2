"""The quadrature (bayescomp.models.quadrature) against NUTS on the collections that break
samplers: two routes to the same posterior, and the time of each.

Run from the repository root::

    python benchmarks/bench_quadrature.py --out /tmp/quadrature.md
    python benchmarks/bench_quadrature.py --only near --out /tmp/q.md

The collections are ``bench_hard_collections.py``'s grid (simulated benchmark studies with
discretised scores, identical datasets, 3 to 1,000 datasets, ragged and 4-fold designs,
near-identical pairs, the package's example). Per collection: ``bc.hierarchical`` with the
package's defaults and ``quadrature=False`` (seed 1, no baselines), and the quadrature of the
same data; ``diff`` is the largest difference of the two over both questions' three
probabilities, ``z`` that difference over the combined error (the fit's Monte Carlo error and
the quadrature's own), ``nuts_s`` and ``quad_s`` the seconds of each (the quadrature with
every dataset's probabilities, as ``bc.hierarchical`` runs it), ``quad_ok`` whether its error
is within its tolerance. Recorded by hand in ``benchmarks/results/quadrature.md``.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import bayescomp as bc
from bayescomp.models.hierarchical_prior import PRIORS
from bayescomp.models.hierarchical_program import prepare
from bayescomp.models.quadrature import quadrature_probabilities
from bench_hard_collections import collections

ROPE = 0.01


def row(label, scores, first, second) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        fit = bc.hierarchical(scores, first, second, rope=ROPE, seed=1, baselines=False,
                              quadrature=False)
        nuts_seconds = time.perf_counter() - start
        data, scale = prepare(scores, first, second, PRIORS["paper"])
    found = quadrature_probabilities(data, scale, bc.Rope(-ROPE, ROPE))
    differences, scores_z = [], []
    for scope, estimate in (("population", fit.population), ("next_dataset", fit.next_dataset)):
        difference = np.abs(getattr(found, scope) - estimate.probabilities)
        error = np.hypot(getattr(found, f"{scope}_error"), estimate.mcse)
        differences.append(difference.max())
        scores_z.append(np.max(difference / np.maximum(error, 1e-4)))
    return dict(collection=label, datasets=len(scores), reliable=fit.reliable,
                population=fit.population.decision(), next=fit.next_dataset.decision(),
                p_population=float(found.population.max()),
                p_next=float(found.next_dataset.max()), diff=max(differences),
                z=max(scores_z), nuts_s=nuts_seconds, quad_s=found.seconds, quad_ok=found.ok)


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="collections whose name holds this")
    parser.add_argument("--out", required=True, help="Markdown file the table is written to")
    args = parser.parse_args(argv)
    rows = []
    for label, scores, first, second in collections(only=args.only):
        rows.append(row(label, scores, first, second))
        print(pd.DataFrame(rows[-1:]).to_string(index=False, header=len(rows) == 1,
                                                 float_format=lambda v: f"{v:.4g}"), flush=True)
    table = pd.DataFrame(rows)
    summary = (f"{len(table)} collections; quadrature ok on {int(table.quad_ok.sum())}; largest "
               f"difference {table['diff'].max():.4f} (z {table.z.max():.2f}); quadrature "
               f"{table.quad_s.median():.1f} s median, {table.quad_s.max():.1f} s at most; "
               f"NUTS {table.nuts_s.median():.1f} s median")
    print(summary)
    with open(args.out, "w") as handle:
        handle.write(f"# bench_quadrature.py\n\n{summary}\n\n```\n"
                     f"{table.to_string(index=False, float_format=lambda v: f'{v:.4g}')}\n```\n")
    return table


if __name__ == "__main__":
    main()
