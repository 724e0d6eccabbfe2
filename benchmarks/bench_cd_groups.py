"""Planted groups of algorithms: how often the Bayesian critical-difference diagram recovers them.

Run from the repository root::

    python benchmarks/bench_cd_groups.py                 # 100 simulations per scenario
    python benchmarks/bench_cd_groups.py --quick         # 5 per scenario, a smoke test
    python benchmarks/bench_cd_groups.py --only close --sims 20

It uses ``bc.compare_many``, the joint hierarchical model of K algorithms.

Issue 31 promises that the groups of :func:`bayescomp.plots.plot_bayesian_cd` (the maximal
cliques of pairs with P(equivalent) >= 0.95, :func:`bayescomp.plots.equivalence_groups`)
are "recovered in at least 95% of simulations at the default ROPE, and no group joins two
algorithms whose true gap exceeds twice the ROPE". Each simulation draws a collection of K
algorithms whose population means are planted in groups (equal means within a group), fits
it with ``bc.compare_many`` at the default ROPE (0.01) and reads the groups from the pair
table's population probabilities. With ``--pairwise`` the pair table is ``bc.compare_all``'s
instead (the published model fitted to each pair on its own), for comparison.

The collections follow the pairwise model's likelihood, with
:mod:`bayescomp.validation.simulate`'s pieces: on dataset i, algorithm k's mean score is
``mu_k + delta_ik`` (``delta_ik`` from :func:`~bayescomp.validation.simulate.draw_deltas`,
normal with sd ``sigma0 / sqrt(2)``, so that a pair's dataset differences have sd
``sigma0``), its fold scores add compound-symmetric noise
(:func:`~bayescomp.validation.simulate.compound_symmetric`, sd ``sigma / sqrt(2)``,
correlation ``rho``, so that a pair's fold differences have sd ``sigma`` and correlation
``rho``) to a base score shared by all algorithms on each split (uniform on (0.6, 0.9), as
:func:`~bayescomp.validation.simulate.collection`'s, which cancels in every difference).

Columns per scenario: ``sims``; ``reliable`` (fits that passed their diagnostics);
``recovered`` (share of all simulations whose drawn groups are exactly the planted groups of
two or more; an unreliable fit draws no group and counts as not recovered);
``false_joins`` (simulations with a group joining two algorithms more than twice the ROPE
apart); ``undecided_pairs`` (mean per simulation) and ``seconds`` (median per fit). With
``--figures`` the diagram of each scenario's first simulation is written to
``benchmarks/output/``. The table is printed and written to
``benchmarks/results/cd_groups.md``.
"""
from __future__ import annotations

import argparse
import itertools
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayescomp as bc
from bayescomp.decisions import THRESHOLD
from bayescomp.validation.simulate import compound_symmetric, draw_deltas

RESULTS = Path(__file__).resolve().parent / "results"
OUTPUT = Path(__file__).resolve().parent / "output"
ROPE = 0.01

#: name -> planted population means (score units; equal means form a group)
SCENARIOS = {
    "two_groups": (0.0, 0.0, 0.0, -0.05, -0.05),
    "three_groups": (0.0, 0.0, -0.03, -0.03, -0.06),
    "close_groups": (0.0, 0.0, -0.025, -0.025),      # gap 2.5 ROPEs: just beyond twice the ROPE
    "all_equal": (0.0, 0.0, 0.0, 0.0),
    "no_groups": (0.0, -0.03, -0.06, -0.09),
}


def planted_collection(means, n_datasets: int = 30, n_scores: int = 10, *,
                       sigma0: float = 0.01, sigma: float = 0.03, rho: float = 0.1, seed=None):
    """Scores of ``len(means)`` algorithms ``m0, m1, ...`` whose population means are ``means``."""
    rng = np.random.default_rng(seed)
    base = [rng.uniform(0.6, 0.9, n_scores) for _ in range(n_datasets)]
    scores = {}
    for k, mu in enumerate(means):
        dataset_means = draw_deltas(n_datasets, mu, sigma0 / np.sqrt(2), "normal", rng)
        folds = compound_symmetric(dataset_means, sigma / np.sqrt(2), n_scores, rho, rng)
        scores[f"m{k}"] = [b + f for b, f in zip(base, folds)]
    return bc.from_arrays(scores, rho=rho)


def planted_groups(names, means) -> set[frozenset]:
    """The planted groups of two or more algorithms (equal means)."""
    groups = {}
    for name, mu in zip(names, means):
        groups.setdefault(mu, set()).add(name)
    return {frozenset(g) for g in groups.values() if len(g) > 1}


def one_simulation(name: str, means, seed: int, args) -> dict:
    scores = planted_collection(means, args.datasets, args.scores, sigma0=args.sigma0,
                                sigma=args.sigma, seed=seed)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the pair table of the joint model, or of the pairwise model's fit of every pair
        result = (bc.compare_all(scores, rope=ROPE, seed=seed) if args.pairwise else
                  bc.compare_many(scores, rope=ROPE, seed=seed))
    seconds = time.perf_counter() - start
    table = result.to_frame()
    names = list(result.algorithms)
    reliable = bool(result.reliable)
    p = {(r["first"], r["second"]): (r["population_p_left"], r["population_p_rope"],
                                     r["population_p_right"]) for _, r in table.iterrows()}
    p_rope = {pair: v[1] for pair, v in p.items()}
    groups = set(map(frozenset, bc.plots.equivalence_groups(names, p_rope))) if reliable else set()
    truth = dict(zip(names, means))
    false_join = any(abs(truth[a] - truth[b]) > 2 * ROPE
                     for g in groups for a, b in itertools.combinations(g, 2))
    undecided = sum(max(v) < THRESHOLD for v in p.values()) if reliable else np.nan
    if args.figures and seed == args.seed and not args.pairwise:
        import matplotlib
        matplotlib.use("Agg")
        OUTPUT.mkdir(parents=True, exist_ok=True)
        ax = bc.plots.plot_bayesian_cd(result)
        ax.figure.savefig(OUTPUT / f"cd_groups_{name}.png", dpi=110)
        import matplotlib.pyplot as plt
        plt.close(ax.figure)
    return dict(scenario=name, seed=seed, reliable=reliable,
                recovered=reliable and groups == planted_groups(names, means),
                false_join=false_join, undecided_pairs=undecided, seconds=seconds,
                groups=" | ".join(sorted(",".join(sorted(g)) for g in groups)))


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=100, help="simulations per scenario")
    parser.add_argument("--quick", action="store_true", help="5 simulations per scenario")
    parser.add_argument("--only", help="scenarios whose name contains this")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first simulation")
    # the design of a typical benchmark study (the tutorial's 54 UCI datasets, 10 x 10-fold);
    # at 30 datasets x 10 folds equal pairs are often, rightly, undecided (cd_groups.md)
    parser.add_argument("--datasets", type=int, default=54)
    parser.add_argument("--scores", type=int, default=100, help="splits per dataset (rho 0.1)")
    parser.add_argument("--sigma0", type=float, default=0.01)
    parser.add_argument("--sigma", type=float, default=0.03)
    parser.add_argument("--figures", action="store_true",
                        help="write each scenario's first diagram")
    parser.add_argument("--pairwise", action="store_true",
                        help="read the groups from bc.compare_all's pairwise fits instead")
    parser.add_argument("--out", default=str(RESULTS / "cd_groups.md"))
    args = parser.parse_args(argv)
    sims = 5 if args.quick else args.sims
    rows = []
    for name, means in SCENARIOS.items():
        if args.only and args.only not in name:
            continue
        for seed in range(args.seed, args.seed + sims):
            rows.append(one_simulation(name, means, seed, args))
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    groups = table.groupby("scenario", sort=False)
    summary = pd.DataFrame({"sims": groups.size(), "reliable": groups["reliable"].sum(),
                            "recovered": groups["recovered"].mean(),
                            "false_joins": groups["false_join"].sum(),
                            "undecided_pairs": groups["undecided_pairs"].mean(),
                            "seconds": groups["seconds"].median()})
    summary["promise"] = np.where((summary["recovered"] >= 0.95) & (summary["false_joins"] == 0),
                                  "kept", "NOT kept")
    text = summary.to_string(float_format=lambda v: f"{v:.3g}")
    print(f"\n{text}\n")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    settings = (f"{args.datasets} datasets x {args.scores} folds, sigma0 {args.sigma0}, sigma "
                f"{args.sigma}, rho 0.1, ROPE {ROPE}, seeds {args.seed}..{args.seed + sims - 1}")
    out.write_text(f"# bench_cd_groups.py ({settings})\n\n## Per scenario\n\n```\n{text}\n```\n\n"
                   f"## Per simulation\n\n```\n{table.to_string(index=False)}\n```\n")
    return summary


if __name__ == "__main__":
    main()
