"""The ``bayescomp`` command line.

Exit codes: 0 success; 1 the analysis ran but a hierarchical fit still failed its sampler
diagnostics after the retries with safer settings (that fit is marked UNRELIABLE in the
printed summary, the report and the figures, and makes no decision); 2 bad usage or bad
input (the message names the file, line and column). Files are written only under ``--out``.

The sampler settings that the advice names are options: ``--chains``, ``--iter-warmup``,
``--iter-sampling``, ``--adapt-delta``, ``--max-treedepth``, ``--parameterization``,
``--prior``, ``--seed`` and ``--retries``; unset ones keep :func:`bayescomp.hierarchical`'s
defaults.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from .exceptions import BayescompWarning

EXIT_OK, EXIT_SAMPLING, EXIT_INPUT = 0, 1, 2
EXIT_UNRELIABLE = EXIT_SAMPLING
#: options of ``bayescomp.hierarchical`` the command line passes through when given
FIT_OPTIONS = ("chains", "iter_warmup", "iter_sampling", "adapt_delta", "max_treedepth",
               "parameterization", "prior", "retries")


def _read(args):
    from .data import read_csv

    options = {"format": args.format}
    for item in args.column or []:
        key, _, name = item.partition("=")
        if key not in ("dataset", "algorithm", "run", "fold", "score") or not name:
            raise ValueError(f"--column expects KEY=NAME with KEY in dataset, algorithm, run, "
                             f"fold, score; got {item!r}")
        options[key] = name
    if args.n_folds is not None:
        options["n_folds"] = args.n_folds
    if args.rho is not None:
        options["rho"] = args.rho
    return read_csv(args.file, **options)


def _fit_options(args) -> dict:
    """The sampler options given on the command line (unset ones keep the defaults)."""
    return {name: getattr(args, name) for name in FIT_OPTIONS
            if getattr(args, name, None) is not None}


def _print_warnings(caught) -> None:
    """Print the package's warnings (not the Stan libraries' chatter)."""
    for w in caught:
        if issubclass(w.category, BayescompWarning):
            print(f"warning: {w.message}", file=sys.stderr)


def _status(unreliable: list[str]) -> int:
    """EXIT_UNRELIABLE, saying so on stderr, when some final fit failed its diagnostics."""
    if not unreliable:
        return EXIT_OK
    print(f"bayescomp: UNRELIABLE: {', '.join(unreliable)} failed the sampler diagnostics "
          "after the retries; no decision is made (exit code 1). Try --iter-warmup, "
          "--iter-sampling, --adapt-delta, --parameterization or --retries.", file=sys.stderr)
    return EXIT_UNRELIABLE


def _save(figure_or_axes, path: Path, written: list, unreliable: bool = False) -> None:
    import numpy as np

    axes = np.ravel(figure_or_axes)[0]
    figure = axes.get_figure()
    if unreliable:
        figure.suptitle("UNRELIABLE: the sampler failed its diagnostics; not a decision",
                        color="firebrick", fontsize=11, fontweight="bold")
    figure.savefig(path, dpi=150, bbox_inches="tight")
    written.append(path.name)
    import matplotlib.pyplot as plt
    plt.close(figure)


def _figures(result, scores, first, second, out: Path) -> list[str]:
    """The paper figures of one comparison, as PNG files in ``out``."""
    import matplotlib
    matplotlib.use("Agg")
    from . import plots

    written = []
    if hasattr(result, "idata"):
        bad = not result.diagnostics.ok
        _save(plots.plot_posterior(result, which="delta0"), out / "posterior_delta0.png", written,
              bad)
        _save(plots.plot_posterior(result, which="next"), out / "posterior_next.png", written,
              bad)
        _save(plots.plot_simplex(result), out / "simplex.png", written, bad)
        _save(plots.plot_shrinkage(result), out / "shrinkage.png", written, bad)
        _save(plots.plot_diagnostics(result, kind="rank"), out / "diagnostics.png", written, bad)
    else:
        _save(plots.plot_posterior(result), out / "posterior.png", written)
    _save(plots.plot_differences(scores, first, second, rope=result.rope), out / "differences.png",
          written)
    return written


def _write_report(out: Path, markdown: str, figures: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    images = "\n".join(f"![{name}]({name})" for name in figures)
    (out / "report.md").write_text(f"{markdown}\n\n{images}\n")
    print(f"\nwrote {out / 'report.md'} and {len(figures)} figure(s) in {out}", file=sys.stderr)


def _run_comparison(scores, first, second, args) -> int:
    """Correlated t-test on one dataset, else the hierarchical model (or, without Stan, the
    per-dataset t-tests and the baselines)."""
    from .baselines import baselines
    from .correlated import correlated_ttest, correlated_ttests
    from .hierarchical import hierarchical

    status = EXIT_OK
    if len(scores) == 1:
        result = correlated_ttest(scores, first, second, rope=args.rope)
        print(result.summary())
        markdown = result.to_markdown()
    elif args.no_stan:
        tests = correlated_ttests(scores, first, second, rope=args.rope)
        result = baselines(scores, first, second, rope=args.rope, seed=args.seed)
        for test in tests:
            print(test.summary(), end="\n\n")
        print(result.summary())
        markdown = "\n\n".join([t.to_markdown() for t in tests] + [result.to_markdown()])
    else:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", BayescompWarning)
            result = hierarchical(scores, first, second, rope=args.rope, seed=args.seed,
                                  backend=args.backend, show_progress=args.progress,
                                  **_fit_options(args))
        print(result.summary())
        markdown = "\n\n".join([result.to_markdown(), result.baselines.to_markdown(),
                                "```\n" + result.diagnostics.summary() + "\n```"])
        _print_warnings(caught)
        status = _status([] if result.diagnostics.ok else [f"{first} vs {second}"])
    if args.out is not None:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        figures = [] if args.no_stan and len(scores) > 1 else \
            _figures(result, scores, first, second, out)
        _write_report(out, markdown, figures)
    return status


def _compare(args) -> int:
    scores = _read(args)
    if args.dataset is not None:
        scores = scores.subset(datasets=[args.dataset])
    return _run_comparison(scores, args.first, args.second, args)


def _all_pairs(args) -> int:
    from .compare import compare_all

    scores = _read(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BayescompWarning)
        result = compare_all(scores, rope=args.rope, seed=args.seed, n_jobs=args.n_jobs,
                             backend=args.backend, progress=True, **_fit_options(args))
    print(result.summary())
    _print_warnings(caught)
    status = _status([f"{a} vs {b}" for a, b in result.unreliable_pairs()])
    if args.out is not None:
        import matplotlib
        matplotlib.use("Agg")
        from . import plots

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        _save(plots.plot_probability_heatmap(result.probability_matrix(),
                                             unreliable=result.unreliable_pairs()),
              out / "probability_better.png", written)
        _write_report(out, result.to_markdown(), written)
    return status


def _demo(args) -> int:
    from .correlated import correlated_ttest
    from .datasets import load_classifiers

    scores = load_classifiers()
    first, second = "forest", "tree"
    print(f"Built-in example: {scores!r}\n")
    example = scores.dataset_names[0]
    print(correlated_ttest(scores, first, second, dataset=example, rope=args.rope).summary())
    print()
    return _run_comparison(scores, first, second, args)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def _probability(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayescomp",
        description="Bayesian comparison of learning algorithms from paired cross-validation "
        "scores. Differences are FIRST - SECOND for scores where higher is better; the ROPE "
        "is in the units of the scores.",
        epilog="exit codes: 0 success, 1 a fit still failed its sampler diagnostics after "
        "the retries (marked UNRELIABLE, no decision), 2 bad usage or input")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(sub):
        sub.add_argument("--rope", type=float, default=0.01,
                         help="half-width of the region of practical equivalence (default 0.01)")
        sub.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
        sub.add_argument("--backend", choices=["auto", "cmdstanpy", "pystan"], default="auto",
                         help="Stan backend for the hierarchical model (default auto)")
        sub.add_argument("--out", metavar="DIR",
                         help="write report.md and PNG figures into DIR (nothing is written "
                         "without it)")

    def sampling(sub):
        from .hierarchical import PRIORS

        group = sub.add_argument_group(
            "sampler of the hierarchical model (unset: the library's defaults)")
        group.add_argument("--chains", type=_positive_int, metavar="N",
                           help="Markov chains (default 4)")
        group.add_argument("--iter-warmup", type=_positive_int, metavar="N",
                           help="warm-up iterations per chain (default 1000)")
        group.add_argument("--iter-sampling", type=_positive_int, metavar="N",
                           help="draws kept per chain (default 1000)")
        group.add_argument("--adapt-delta", type=_probability, metavar="P",
                           help="target acceptance rate of NUTS, in (0, 1) (default 0.95)")
        group.add_argument("--max-treedepth", type=_positive_int, metavar="N",
                           help="maximum tree depth of NUTS (default 10)")
        group.add_argument("--parameterization", metavar="{auto,centered,noncentered}",
                           help="how delta_i is sampled (default auto: chosen from the data)")
        group.add_argument("--prior", choices=sorted(PRIORS),
                           help="hyper-priors: paper (Corani et al. 2017, default) or baycomp")
        group.add_argument("--retries", type=_non_negative_int, metavar="N",
                           help="refits with safer settings after a fit fails its diagnostics "
                           "(default 2; 0 disables)")

    def reading(sub):
        sub.add_argument("file", help="CSV of scores. long: columns dataset, algorithm, run, "
                         "fold, score; wide: dataset, run, fold and one column per algorithm")
        sub.add_argument("--format", choices=["long", "wide"], default="long",
                         help="layout of the CSV (default long)")
        sub.add_argument("--column", action="append", metavar="KEY=NAME",
                         help="name of a column in the file, e.g. --column dataset=DB "
                         "(KEY: dataset, algorithm, run, fold, score); repeatable")
        sub.add_argument("--n-folds", type=int,
                         help="folds per run; rho = 1/n_folds (default: counted in the file)")
        sub.add_argument("--rho", type=float, help="correlation between splits (instead of "
                         "--n-folds)")

    def single(sub):
        sub.add_argument("--no-stan", action="store_true",
                         help="skip the hierarchical model: correlated t-tests and baselines only")
        sub.add_argument("--progress", action="store_true", help="show Stan's progress")

    demo = commands.add_parser("demo", help="run the built-in example end to end (forest vs "
                               "tree on 17 datasets)")
    common(demo)
    single(demo)
    sampling(demo)
    demo.set_defaults(handler=_demo)

    compare = commands.add_parser("compare", help="compare two algorithms from a CSV file")
    reading(compare)
    compare.add_argument("--first", required=True, help="first algorithm")
    compare.add_argument("--second", required=True, help="second algorithm")
    compare.add_argument("--dataset", help="analyse one dataset only (correlated t-test)")
    common(compare)
    single(compare)
    sampling(compare)
    compare.set_defaults(handler=_compare)

    pairs = commands.add_parser("all-pairs", help="compare every pair of algorithms in a CSV file")
    reading(pairs)
    pairs.add_argument("--n-jobs", type=int, default=None, help="fits run in parallel (joblib)")
    common(pairs)
    sampling(pairs)
    pairs.set_defaults(handler=_all_pairs)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (ValueError, FileNotFoundError) as error:
        print(f"bayescomp: error: {error}", file=sys.stderr)
        return EXIT_INPUT


if __name__ == "__main__":
    sys.exit(main())
