"""``bayescomp joint``: every algorithm of a CSV file in one joint hierarchical model.

Registered by :func:`bayescomp.cli.main.build_parser` through :func:`add_parser`, as
``rank`` is; the command line's ``main`` checks the paths before any work and turns
exceptions into one-line errors and exit codes. Exit code 1 when the fit failed its
sampler diagnostics (no decision is made), 0 otherwise. ``--json`` is the envelope every
command writes (:func:`bayescomp.cli.export.envelope`) around the result's ``to_dict()``;
``--csv`` is that document flattened; ``--out DIR`` writes ``report.md``.
"""
from __future__ import annotations

from bayescomp.cli.io import add_input_arguments, add_overwrite_argument

EXIT_OK, EXIT_UNRELIABLE = 0, 1


def add_parser(subparsers):
    """Add the ``joint`` subcommand to ``subparsers`` (an argparse subparsers action)."""
    joint = subparsers.add_parser(
        "joint", help="compare every algorithm in a CSV file with one joint hierarchical model",
        description="One posterior of all algorithms (bc.compare_many): the pairwise model of "
        "Corani et al. (2017) for K algorithms at once, its fold noise, correlation rho and "
        "ROPE kept; prints every pair's population and next-dataset probabilities and the "
        "probabilities of each algorithm's rank.")
    add_input_arguments(joint)
    joint.add_argument("--algorithms", metavar="NAMES",
                       help="comma-separated algorithms to compare, in the order of the pairs "
                       "(default: all)")
    joint.add_argument("--rope", type=float, default=0.01, metavar="W",
                       help="half-width of the ROPE in the units of the scores (default 0.01)")
    joint.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    joint.add_argument("--backend", choices=["auto", "cmdstanpy", "pystan"], default="auto",
                       help="Stan backend (default auto)")
    joint.add_argument("--chains", type=int, default=4, help="Markov chains (default 4)")
    joint.add_argument("--iter-warmup", type=int, default=1000, metavar="N",
                       help="warm-up iterations per chain (default 1000)")
    joint.add_argument("--iter-sampling", type=int, default=1000, metavar="N",
                       help="draws kept per chain (default 1000)")
    joint.add_argument("--out", metavar="DIR", help="write report.md into DIR")
    add_overwrite_argument(joint)
    joint.add_argument("--json", metavar="FILE", help="write the result as JSON ('-': stdout)")
    joint.add_argument("--csv", metavar="FILE",
                       help="the same as a CSV file of key,value rows ('-': stdout)")
    joint.add_argument("--progress", action="store_true", default=None,
                       help="show progress on stderr")
    joint.set_defaults(handler=run)
    return joint


def run(args, console) -> int:
    """Run ``bayescomp joint`` with parsed ``args``; the exit code."""
    from bayescomp.cli.commands import stan_engine, write_outputs
    from bayescomp.cli.export import envelope
    from bayescomp.cli.rank import _columns
    from bayescomp.data.readers import read_csv
    from bayescomp.models.joint import compare_many

    scores = read_csv(args.file, format=args.format, **_columns(args.column))
    algorithms = [a.strip() for a in args.algorithms.split(",")] if args.algorithms else None
    backend = stan_engine(args, console, "joint")
    result = compare_many(scores, algorithms, rope=args.rope, seed=args.seed, backend=backend,
                          chains=args.chains, iter_warmup=args.iter_warmup,
                          iter_sampling=args.iter_sampling, show_progress=bool(args.progress))
    if "-" not in (args.json, args.csv):
        print(result.summary())
    status = EXIT_OK if result.reliable else EXIT_UNRELIABLE
    if not result.reliable:
        console.write("bayescomp: UNRELIABLE: the joint fit failed its sampler diagnostics; "
                      "no decision is made (exit code 1). Try --iter-warmup, --iter-sampling "
                      "or --chains.")

    def report(directory):
        return result.to_markdown(), []

    document = envelope("joint", status, console.shown, input=str(args.file),
                        **result.to_dict())
    write_outputs(args, console, document, report)
    return status
