"""The joint model of K algorithms against the K(K-1)/2 pairwise fits it replaces.

Run from the repository root, with a copy of the public repository BayesianTestsML/tutorial
(GPL: read from where you cloned it, never shipped here)::

    git clone https://github.com/BayesianTestsML/tutorial /tmp/tutorial
    python benchmarks/bench_joint.py /tmp/tutorial --backend pystan

Two collections: the tutorial's 5 classifiers on 54 UCI datasets (10 x 10-fold accuracy;
j48 and j48gr near-identical) and the built-in example (4 classifiers, 17 datasets). On
each, in the same run, seed and engine: ``bc.compare_many`` (one joint fit) and
``bc.compare_all`` (every pair with ``bc.hierarchical``), their seconds, the joint fit's
diagnostics, and the pair table side by side (population P(first better) / P(equivalent) /
P(second better) and decisions), with their wall-clock and CPU times. Printed; ``--out
benchmarks/results/joint.md`` appends it there.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

import bayescomp as bc

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_real_pairs import read_tutorial  # noqa: E402


def markdown(frame: pd.DataFrame, index: bool = False) -> str:
    """A pipe table (pandas' to_markdown needs tabulate)."""
    frame = frame.reset_index() if index else frame
    cells = [[f"{v:.3f}" if isinstance(v, float) else str(v) for v in row]
             for row in frame.itertuples(index=False)]
    header = [str(c) for c in frame.columns]
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(row) + " |" for row in cells])


def side_by_side(joint, pairwise) -> pd.DataFrame:
    """One row per pair: the joint and the pairwise population probabilities and decisions."""
    j = joint.to_frame().set_index(["first", "second"])
    p = pairwise.to_frame().set_index(["first", "second"])
    rows = []
    for key in j.index:
        rows.append({"pair": f"{key[0]} - {key[1]}",
                     **{f"joint {r}": j.loc[key, f"population_p_{r}"] for r in ("right", "rope", "left")},
                     **{f"pairwise {r}": p.loc[key, f"population_p_{r}"] for r in ("right", "rope", "left")},
                     "joint decision": j.loc[key, "population_decision"],
                     "pairwise decision": p.loc[key, "population_decision"],
                     "joint next rope": j.loc[key, "next_dataset_p_rope"],
                     "pairwise next rope": p.loc[key, "next_dataset_p_rope"]})
    return pd.DataFrame(rows)


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (CmdStan's chains): on a shared
    machine a fairer cost than the wall clock."""
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                         resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run(name: str, scores, backend: str, seed: int) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        started, cpu = time.perf_counter(), cpu_seconds()
        joint = bc.compare_many(scores, seed=seed, backend=backend)
        joint_seconds, joint_cpu = time.perf_counter() - started, cpu_seconds() - cpu
        started, cpu = time.perf_counter(), cpu_seconds()
        pairwise = bc.compare_all(scores, seed=seed, backend=backend)
        pairwise_seconds, pairwise_cpu = time.perf_counter() - started, cpu_seconds() - cpu
    d = joint.diagnostics
    table = side_by_side(joint, pairwise)
    lines = [
        f"## {name}: {len(scores.algorithms)} algorithms, {len(scores)} datasets "
        f"(backend {backend}, seed {seed})", "",
        f"- joint fit: {joint_seconds:.0f} s, CPU {joint_cpu:.0f} s (attempts: {len(joint.attempts)}; "
        + ", ".join(f"{a['iter_warmup']}+{a['iter_sampling']} draws, adapt_delta "
                    f"{a['adapt_delta']}, {a['seconds']:.0f} s, "
                    f"{'ok' if a['ok'] else 'failed'}" for a in joint.attempts) + ")",
        f"- {len(table)} pairwise fits (bc.compare_all): {pairwise_seconds:.0f} s, CPU "
        f"{pairwise_cpu:.0f} s; joint / pairwise {joint_seconds / pairwise_seconds:.2f} (wall), "
        f"{joint_cpu / pairwise_cpu:.2f} (CPU) "
        f"(attempts per pair: {pairwise.table['attempts'].tolist()})",
        f"- joint diagnostics: max R-hat {d.max_rhat:.4f}, min bulk ESS {d.min_ess_bulk:.0f}, "
        f"min tail ESS {d.min_ess_tail:.0f}, divergences {d.divergences}, tree depth "
        f"saturated {d.treedepth_saturated}, min E-BFMI {d.min_bfmi:.2f}; posterior median "
        f"of nu {joint.settings['nu_median']:.3g}",
        f"- warnings: {sorted({w.category.__name__ for w in caught})}", "",
        "Population probabilities, P(first better) / P(equivalent) / P(second better):", "",
        markdown(table), "",
        "Joint P(best) and rank probabilities (ties within the ROPE share their ranks):", "",
        markdown(joint.rank_probabilities.assign(p_best=joint.p_best), index=True), ""]
    print("\n".join(lines), flush=True)
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tutorial", type=Path)
    parser.add_argument("--backend", default="pystan")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", choices=["tutorial", "builtin"], default=None)
    parser.add_argument("--out", type=Path, default=None,
                        help="append the run to this file (default: print only)")
    args = parser.parse_args(argv)
    lines = [f"Run of `benchmarks/bench_joint.py` ({time.strftime('%Y-%m-%d')}, "
             f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the start)", ""]
    if args.only in (None, "builtin"):
        lines += run("built-in example", bc.datasets.load_classifiers(), args.backend, args.seed)
    if args.only in (None, "tutorial"):
        lines += run("tutorial (Benavoli et al. 2017)", read_tutorial(args.tutorial),
                     args.backend, args.seed)
    if args.out is not None:
        with args.out.open("a") as handle:
            handle.write("\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
