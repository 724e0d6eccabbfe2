"""``bayescomp rank``: the Bayesian Plackett-Luce ranking of every algorithm in a CSV file.

Registered by :func:`bayescomp.presentation.cli.main.build_parser` through :func:`add_parser`; the command
line's ``main`` checks the paths (``file``, ``--out``, ``--json``, ``--csv``) before any work
and turns exceptions into one-line errors and exit codes. Exit code 1 when the fit failed its
sampler diagnostics (no verdict is given), 0 otherwise.
"""
from __future__ import annotations

import json
from pathlib import Path

from bayescomp.presentation.cli.io import add_input_arguments

EXIT_OK, EXIT_UNRELIABLE = 0, 1


def _half_width(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0 or value == float("inf"):  # a tie has no direction: one half-width
        raise argparse.ArgumentTypeError(f"expects a half-width W >= 0, got {text!r}")
    return value


def _concentration(text: str) -> float:
    import argparse

    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def add_parser(subparsers):
    """Add the ``rank`` subcommand to ``subparsers`` (an argparse subparsers action)."""
    rank = subparsers.add_parser(
        "rank", help="rank every algorithm in a CSV file (Bayesian Plackett-Luce model)",
        description="Each dataset ranks the algorithms by mean score, algorithms within the "
        "ROPE of the best of their group tied; a Plackett-Luce model with a Dirichlet prior on "
        "the worths gives P(best), the probability of each rank of the worths and the mean "
        "observed ranks.")
    add_input_arguments(rank)
    rank.add_argument("--lower-is-better", action="store_true",
                      help="scores are losses (error rates): the smallest mean ranks first")
    rank.add_argument("--rope", type=_half_width, default=0.01, metavar="W",
                      help="on a dataset, algorithms whose mean scores are within W of the "
                      "best of their group tie (units of the scores; default 0.01, as the "
                      "pairwise commands; 0: equal means only)")
    rank.add_argument("--ties", choices=["average", "random"], default="average",
                      help="average: likelihood averaged over the orders of tied algorithms "
                      "(default); random: ties broken at random with the seed (scmamp)")
    rank.add_argument("--prior", type=_concentration, default=1.0, metavar="ALPHA",
                      help="Dirichlet concentration of the worths (default 1, uniform)")
    rank.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    rank.add_argument("--backend", choices=["auto", "cmdstanpy", "pystan"], default="auto",
                      help="Stan backend (default auto)")
    rank.add_argument("--chains", type=int, default=4, help="Markov chains (default 4)")
    rank.add_argument("--iter-warmup", type=int, default=1000, metavar="N",
                      help="warm-up iterations per chain (default 1000)")
    rank.add_argument("--iter-sampling", type=int, default=1000, metavar="N",
                      help="draws kept per chain (default 1000)")
    rank.add_argument("--out", metavar="DIR",
                      help="write report.md and ranking.png into DIR (nothing is written "
                      "without it)")
    rank.add_argument("--json", metavar="FILE", help="write the result as JSON ('-': stdout)")
    rank.add_argument("--csv", metavar="FILE",
                      help="write the per-algorithm table as CSV ('-': stdout)")
    rank.add_argument("--progress", action="store_true", default=None,
                      help="show progress on stderr")
    rank.set_defaults(handler=run)
    return rank


def _columns(items) -> dict:
    columns = {}
    for item in items or []:
        key, _, name = item.partition("=")
        if key not in ("dataset", "algorithm", "run", "fold", "score") or not name:
            raise ValueError(f"--column expects KEY=NAME with KEY in dataset, algorithm, run, "
                             f"fold, score; got {item!r}")
        columns[key] = name
    return columns


def run(args, console=None) -> int:
    """Run ``bayescomp rank`` with parsed ``args``; the exit code.

    ``console`` (the command line's :class:`~bayescomp.presentation.cli.console.Console`) receives the
    lines meant for stderr; without one they are printed there.
    """
    import sys

    from bayescomp.presentation.cli.io import Outputs
    from bayescomp.data.scores import read_csv
    from bayescomp.models.ranking import rank_algorithms

    def say(line):
        (console.write if console is not None else lambda t: print(t, file=sys.stderr))(line)

    scores = read_csv(args.file, format=args.format, **_columns(args.column))
    result = rank_algorithms(
        scores, rope=args.rope, seed=args.seed, ties=args.ties, prior=args.prior,
        higher_is_better=not args.lower_is_better, backend=args.backend, chains=args.chains,
        iter_warmup=args.iter_warmup, iter_sampling=args.iter_sampling,
        show_progress=bool(args.progress))
    if "-" not in (args.json, args.csv):
        print(result.summary())
    with Outputs() as outputs:
        if args.out is not None:
            with outputs.directory(Path(args.out)) as staging:
                _figure(result, staging / "ranking.png")
                (staging / "report.md").write_text(
                    f"{result.to_markdown()}\n\n![ranking.png](ranking.png)\n",
                    encoding="utf-8")
        if args.json is not None:
            document = dict(result.to_dict(), command="rank", input=str(args.file))
            outputs.write_text(Path(args.json), json.dumps(document, indent=2) + "\n")
        if args.csv is not None:
            outputs.write_text(Path(args.csv), result.to_frame().to_csv())
        outputs.commit()
    if args.out is not None:
        say(f"wrote {Path(args.out) / 'report.md'} and ranking.png in {args.out}")
    if not result.reliable:
        say("bayescomp: UNRELIABLE: the Plackett-Luce fit failed its sampler diagnostics; no "
            "verdict is given (exit code 1). Try --iter-warmup, --iter-sampling or --chains.")
        return EXIT_UNRELIABLE
    return EXIT_OK


def _figure(result, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes = result.plot()
    axes[0].figure.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(axes[0].figure)
