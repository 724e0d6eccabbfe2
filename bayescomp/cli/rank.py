"""``bayescomp rank``: the Bayesian Plackett-Luce ranking of every algorithm in a CSV file.

Registered by :func:`bayescomp.cli.main.build_parser` through :func:`add_parser`; the command
line's ``main`` checks the paths (``file``, ``--out``, ``--json``, ``--csv``) before any work
and turns exceptions into one-line errors and exit codes. Exit code 1 when the fit failed its
sampler diagnostics (no verdict is given), 0 otherwise. ``--json`` is the envelope every
command writes (:func:`bayescomp.cli.export.envelope`) around the ranking's
``to_dict()``; ``--csv`` is that document flattened.
"""
from __future__ import annotations

from pathlib import Path

from bayescomp.cli.io import (add_algorithms_argument, add_input_arguments,
                              add_overwrite_argument, positive_int, read_scores)

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
    add_algorithms_argument(rank)
    rank.add_argument("--lower-is-better", action="store_true",
                      help="scores are losses (error rates): the smallest mean ranks first")
    rank.add_argument("--rope", type=_half_width, default=0.01, metavar="W",
                      help="on a dataset, algorithms whose mean scores are within W of the "
                      "best of their group tie (units of the scores; default 0.01, as the "
                      "pairwise commands; 0: equal means only)")
    rank.add_argument("--ties", choices=["average", "random"], default="average",
                      help="average: every order of the tied algorithms counts (the "
                      "probability of the tied ranking; default); random: ties broken at "
                      "random with the seed (scmamp)")
    rank.add_argument("--prior", type=_concentration, default=1.0, metavar="ALPHA",
                      help="Dirichlet concentration of the worths (default 1, uniform)")
    rank.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    rank.add_argument("--backend", choices=["auto", "cmdstanpy", "pystan"], default="auto",
                      help="Stan backend (default auto)")
    rank.add_argument("--chains", type=positive_int, default=4,
                      help="Markov chains (default 4)")
    rank.add_argument("--iter-warmup", type=positive_int, default=500, metavar="N",
                      help="warm-up iterations per chain (default 500)")
    rank.add_argument("--iter-sampling", type=positive_int, default=500, metavar="N",
                      help="draws kept per chain before the ESS target's extensions "
                      "(default 500)")
    rank.add_argument("--ess", type=positive_int, default=1000, metavar="N",
                      help="target bulk and tail ESS of the worths: a fit below it, or whose "
                      "largest P(best) is within two Monte Carlo errors of 0.95, is extended "
                      "from where its chains are (default 1000)")
    rank.add_argument("--out", metavar="DIR",
                      help="write report.md and ranking.png into DIR (nothing is written "
                      "without it)")
    add_overwrite_argument(rank)
    rank.add_argument("--json", metavar="FILE", help="write the result as JSON ('-': stdout)")
    rank.add_argument("--csv", metavar="FILE",
                      help="the same as a CSV file of key,value rows ('-': stdout)")
    rank.add_argument("--progress", action="store_true", default=None,
                      help="show progress on stderr")
    rank.set_defaults(handler=run)
    return rank


def run(args, console) -> int:
    """Run ``bayescomp rank`` with parsed ``args``; the exit code.

    ``console`` is the command line's :class:`~bayescomp.cli.console.Console`:
    the lines meant for stderr, and the warnings the JSON lists.
    """
    from bayescomp.models.ranking import rank_algorithms
    from bayescomp.cli.commands import stan_engine, write_outputs
    from bayescomp.cli.export import envelope

    scores = read_scores(args)
    backend = stan_engine(args, console, "plackett_luce")
    result = rank_algorithms(
        scores, rope=args.rope, seed=args.seed, ties=args.ties, prior=args.prior,
        higher_is_better=not args.lower_is_better, backend=backend, chains=args.chains,
        iter_warmup=args.iter_warmup, iter_sampling=args.iter_sampling, ess=args.ess,
        show_progress=bool(args.progress))
    if "-" not in (args.json, args.csv):
        print(result.summary())
    status = EXIT_OK if result.reliable else EXIT_UNRELIABLE
    if not result.reliable:
        console.write("bayescomp: UNRELIABLE: the Plackett-Luce fit failed its sampler "
                      "diagnostics; no verdict is given (exit code 1). Try --iter-warmup, "
                      "--iter-sampling or --chains.")

    def report(directory):
        _figure(result, directory / "ranking.png")
        return result.to_markdown(), ["ranking.png"]

    document = envelope("rank", status, console.shown, input=str(args.file), seed=args.seed,
                        **result.to_dict())
    write_outputs(args, console, document, report)
    return status


def _figure(result, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes = result.plot()
    axes[0].figure.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(axes[0].figure)
