"""The full simulation study of Corani et al. (2017): decision rates, RMSE, power curve.

Run from the repository root::

    python benchmarks/run_study.py                      # 1000 + 800 fits: ~1.5 h on 2 busy cores
    python benchmarks/run_study.py --repetitions 50 --power-repetitions 15   # ~30 min there
    python benchmarks/run_study.py --reuse-study ...    # power curve only, study runs from CSV
    python benchmarks/run_study.py --quick              # the CI-sized study (tests/test_study.py)
    python benchmarks/run_study.py --process naive_bayes

Prints the aggregated table of :func:`bayescomp.validation.study.run_study` (delta0 in {0, 0.005},
k in {10, ..., 50}) and of :func:`bayescomp.validation.study.power_curve` (k = 50), and saves under
``benchmarks/output/`` (gitignored): ``study_<process>.txt`` (the printed tables),
``study_<process>_runs.csv``, ``study_<process>_table.csv``, ``power_<process>_table.csv``,
and the figures ``study_<process>.png``, ``power_<process>.png``, ``rmse_<process>.png``.

With a ``joblib.parallel_backend`` (e.g. ``--joblib-backend dask`` inside a Dask cluster) the
fits are spread over its workers; results are the same whatever runs them.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import joblib
import matplotlib
import pandas as pd

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from bayescomp.validation import study  # noqa: E402
from bayescomp.presentation.plots import validation as validation_plots  # noqa: E402

OUTPUT = Path(__file__).resolve().parent / "output"
POWER_DELTA0 = (0.0, 0.0025, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.025, 0.03)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--process", default="normal", choices=study.PROCESSES)
    parser.add_argument("--repetitions", type=int, default=100)
    parser.add_argument("--power-repetitions", type=int, default=None,
                        help="collections per delta0 of the power curve (default --repetitions)")
    parser.add_argument("--no-power", action="store_true", help="skip the power curve")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--iter-warmup", type=int, default=500)
    parser.add_argument("--iter-sampling", type=int, default=500)
    parser.add_argument("--seed", type=int, default=None,
                        help="default 2017 (--quick: 20170518, the seed of tests/test_study.py)")
    parser.add_argument("--quick", action="store_true",
                        help="the CI-sized study of tests/test_study.py: delta0 = 0, k = 10 and "
                             "30, 40 collections, 20 scores, 2 chains x 200 draws; no power curve")
    parser.add_argument("--joblib-backend", default=None,
                        help="run the fits inside joblib.parallel_backend(<name>)")
    parser.add_argument("--reuse-study", action="store_true",
                        help="read the study's runs from study_<process>_runs.csv (saved by an "
                             "earlier run with the same settings) instead of fitting them again")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)

    if args.seed is None:
        args.seed = 20170518 if args.quick else 2017
    fit_options = dict(chains=args.chains, iter_warmup=args.iter_warmup,
                       iter_sampling=args.iter_sampling)
    options = dict(process=args.process, seed=args.seed, n_jobs=args.n_jobs,
                   fit_options=fit_options, progress=False)
    grid = dict(delta0_values=(0.0, 0.005), n_datasets_values=(10, 20, 30, 40, 50),
                repetitions=args.repetitions)
    if args.quick:
        options.update(n_scores=20, fit_options=dict(chains=2, iter_warmup=200, iter_sampling=200))
        grid = dict(delta0_values=(0.0,), n_datasets_values=(10, 30), repetitions=40)
        args.no_power = True
    args.output.mkdir(parents=True, exist_ok=True)
    tag = args.process + ("_quick" if args.quick else "")
    context = (joblib.parallel_backend(args.joblib_backend) if args.joblib_backend
               else joblib.parallel_config())

    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    with context:
        start = time.perf_counter()
        saved = args.output / f"study_{tag}_runs.csv"
        if args.reuse_study:
            runs = pd.read_csv(saved, keep_default_na=False, na_values=[""])
            result = study.StudyResult.from_runs(runs, dict(
                process=args.process, seed=args.seed, rope=0.01, sigma0=0.0025,
                sigma=(0.02, 0.04), n_scores=options.get("n_scores", 100), rho=0.1,
                alpha=0.05, threshold=0.95, fit_options=options["fit_options"]))
            say(f"(study runs read from {saved})")
        else:
            result = study.run_study(**grid, **options)
        seconds = time.perf_counter() - start
        say(result.summary())
        say("RMSE ratio shrunk / raw: " + ", ".join(
            f"(delta0 {r.delta0:g}, k {r.n_datasets}) {r.rmse_ratio:.3f}"
            for r in result.table.itertuples()))
        if not args.reuse_study:
            say(f"wall time {seconds:.0f} s for {len(result.runs)} fits "
                f"({seconds / len(result.runs):.2f} s per fit, n_jobs {args.n_jobs})")
        if not args.reuse_study:
            result.runs.to_csv(saved, index=False)
        result.table.to_csv(args.output / f"study_{tag}_table.csv", index=False)
        axes = validation_plots.plot_study(result)
        axes[0].figure.savefig(args.output / f"study_{tag}.png", dpi=120)
        ax = validation_plots.plot_rmse(result)
        ax.set_title(f"RMSE of delta_i ({args.process} process)", fontsize=10)
        ax.figure.tight_layout()
        ax.figure.savefig(args.output / f"rmse_{tag}.png", dpi=120)
        plt.close("all")

        if not args.no_power:
            start = time.perf_counter()
            values = [d for d in POWER_DELTA0 if d not in grid["delta0_values"]]
            repetitions = args.power_repetitions or args.repetitions
            extra = study.power_curve(values, n_datasets=50, **dict(options, repetitions=repetitions))
            seconds = time.perf_counter() - start
            # the study's runs at k = 50 are the power curve's at its delta0 (same seeds)
            power = study.combine(extra, result, n_datasets=50)
            say()
            say(power.summary())
            say(f"wall time {seconds:.0f} s for the {len(extra.runs)} new fits at delta0 "
                f"{values} (k = 50; delta0 {list(grid['delta0_values'])} reuse the study's runs)")
            power.table.to_csv(args.output / f"power_{tag}_table.csv", index=False)
            ax = validation_plots.plot_power(power)
            ax.figure.savefig(args.output / f"power_{tag}.png", dpi=120)
            plt.close("all")
    (args.output / f"study_{tag}.txt").write_text("\n".join(lines) + "\n")
    print(f"saved under {args.output}")


if __name__ == "__main__":
    main()
