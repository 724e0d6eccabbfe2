"""Full simulation-based calibration of the Stan programs (bayescomp.validation.sbc).

Run from the repository root::

    python benchmarks/run_sbc.py                 # 400 / 1000 replications, L = 99, ~10 min on 2 cores
    python benchmarks/run_sbc.py --quick         # the CI-sized check (tests/test_sbc.py)
    python benchmarks/run_sbc.py --only joint    # the checks whose names start with "joint"

Prints, per check, the chi-square test of uniform ranks (20 bins of 5 ranks) and the test of
the mean rank per parameter, and saves under ``benchmarks/output/``: ``sbc.txt``, the ranks
``sbc_<check>_ranks.csv`` and the rank histograms ``sbc_<check>.png``. Checks:

* ``hierarchical``: the hierarchical program with the fixed prior of :class:`FixedPrior`;
* ``hierarchical_shifted_prior``: fitted with beta ~ U(0.5, 1.5) instead of U(0.05, 0.15)
  (deliberately wrong: must fail, on nu);
* ``hierarchical_rho0``: fitted with rho = 0 on data simulated with rho = 0.1 and 100 scores
  (the correlation of cross-validation ignored; must fail, on delta_1);
* ``joint_k3_n10``, ``joint_k3_n30``, ``joint_k4_n10``, ``joint_k4_n30``: the joint program of K
  algorithms on N datasets (:mod:`bayescomp.validation.sbc_joint`; 20 splits per dataset);
* ``joint_wrong_noise``: the joint program told a quarter of the fold noise's scale matrix
  (must fail, on sigma0);
* ``correlated``: the correlated program through the exact pivot of its matching prior;
* ``correlated_rho0``: the same fitted with rho = 0 (must fail);
* the closed-form correlated t-test (no Stan), KS test of the posterior quantile of the truth.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib
import pandas as pd

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from bayescomp.validation import sbc, sbc_joint  # noqa: E402
from bayescomp.presentation.plots import validation as validation_plots  # noqa: E402

OUTPUT = Path(__file__).resolve().parent / "output"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=400,
                        help="replications of the hierarchical check (wrong models: a quarter)")
    parser.add_argument("--correlated-replications", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=99, help="L, thinned draws per rank")
    parser.add_argument("--bins", type=int, default=20)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--iter-warmup", type=int, default=500)
    parser.add_argument("--iter-sampling", type=int, default=500)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2018)
    parser.add_argument("--quick", action="store_true", help="the CI-sized checks")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--only", help="run the checks whose names start with this")
    args = parser.parse_args(argv)
    if args.quick:
        args.replications, args.correlated_replications = 60, 60
        args.draws, args.bins = 49, None
        args.iter_warmup = args.iter_sampling = 300
    args.output.mkdir(parents=True, exist_ok=True)
    fit = dict(n_draws=args.draws, chains=args.chains, iter_warmup=args.iter_warmup,
               iter_sampling=args.iter_sampling, n_jobs=args.n_jobs)
    wrong_reps = max(24, args.replications // 4)
    checks = {
        "hierarchical": lambda: sbc.sbc_hierarchical(args.replications, seed=args.seed, **fit),
        "hierarchical_shifted_prior": lambda: sbc.sbc_hierarchical(
            wrong_reps, fit_prior=sbc.FixedPrior(beta=(0.5, 1.5)), seed=args.seed + 1, **fit),
        "hierarchical_rho0": lambda: sbc.sbc_hierarchical(
            wrong_reps, n_scores=100, fit_rho=0.0, seed=args.seed + 2, **fit),
        **{f"joint_k{k}_n{n}": (lambda k=k, n=n: sbc_joint.sbc_joint(
            args.replications, k=k, n_datasets=n, seed=args.seed + 10 * k + n, **fit))
           for k in (3, 4) for n in (10, 30)},
        "joint_wrong_noise": lambda: sbc_joint.sbc_joint(
            wrong_reps, k=3, n_datasets=10, fit_noise_factor=0.25, seed=args.seed + 6, **fit),
        "correlated": lambda: sbc.sbc_correlated(args.correlated_replications,
                                                 seed=args.seed + 3, **fit),
        "correlated_rho0": lambda: sbc.sbc_correlated(
            max(30, args.correlated_replications // 4), n_scores=100, fit_rho=0.0,
            seed=args.seed + 4, **fit),
    }
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    if args.only:
        checks = {name: run for name, run in checks.items() if name.startswith(args.only)}
    for name, run in checks.items():
        start = time.perf_counter()
        result = run()
        seconds = time.perf_counter() - start
        bins = args.bins if args.bins and len(result.ranks) / args.bins >= 5 else None
        say(f"== {name} ({seconds:.0f} s wall)")
        say(result.summary(bins))
        say(f"  passes at level 0.001: {result.passes(0.001, bins)}")
        say()
        pd.concat([result.ranks, result.truth.add_suffix("_true"), result.fits], axis=1).to_csv(
            args.output / f"sbc_{name}_ranks.csv", index=False)
        axes = validation_plots.plot_ranks(result, bins)
        axes[0].figure.suptitle(f"SBC: {name} ({len(result.ranks)} replications)", fontsize=10)
        axes[0].figure.tight_layout()
        axes[0].figure.savefig(args.output / f"sbc_{name}.png", dpi=110)
        plt.close("all")

    pivots = (("closed-form correlated t-test", None), ("... fitted with rho = 0", 0.0))
    for label, fit_rho in () if args.only else pivots:
        test = sbc.correlated_quantiles(20_000, n_scores=100, rho=0.1, fit_rho=fit_rho,
                                        seed=args.seed + 5)
        say(f"{label}: 20000 replications, KS statistic {test['statistic']:.4f}, "
            f"p = {test['p_value']:.3g}")
    (args.output / f"sbc{'_quick' if args.quick else ''}{'_' + args.only if args.only else ''}.txt").write_text("\n".join(lines) + "\n")
    print(f"saved under {args.output}")


if __name__ == "__main__":
    main()
