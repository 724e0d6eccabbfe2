"""The ``bayescomp`` command line.

Exit codes: 0 success; 1 the analysis ran but a hierarchical fit still failed its sampler
diagnostics after the retries with safer settings (that fit is marked UNRELIABLE in the
printed summary, the report and the figures, and makes no decision); 2 an ordinary failure
(bad usage; an input that is missing, a directory, unreadable, empty or malformed, named with
its line and column where known; an output that cannot be written; a full disk; no Stan
backend or C++ compiler), told in one line; 3 an internal error (a bug: one line, and the
traceback in a file it names); 130 interrupted (Ctrl-C), leaving no partial output; 141
(128 + SIGPIPE, as Unix tools) standard output closed by its reader (``| head``), silently.

Inputs and outputs are checked before any work (:mod:`bayescomp.cli.io`); outputs are
written all at once at the end. Warnings are one line each, shown once
(:mod:`bayescomp.cli.console`); ``--json`` and ``--csv`` carry every number the text shows
(:mod:`bayescomp.cli.export`).
"""
from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import tempfile
import traceback

from bayescomp.cli.commands import (EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED,
                                                 EXIT_STDOUT_CLOSED, run_all_pairs, run_compare,
                                                 run_demo)
from bayescomp.cli.export import version
from bayescomp.cli.console import Console, one_line
from bayescomp.cli.io import (CliError, add_algorithms_argument, add_input_arguments,
                              add_overwrite_argument, check_input, check_output_dir,
                              check_output_file, os_error_line, positive_int)


# --- the parser -----------------------------------------------------------------------------

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


def _rope_value(text: str):
    """``W`` (the ROPE [-W, W]) or ``LOW,HIGH`` (brackets allowed), checked by Rope."""
    from bayescomp.rope import Rope

    parts = [p for p in text.strip().strip("[]()").split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects W or LOW,HIGH, got {text!r}") from None
    if len(values) not in (1, 2):
        raise argparse.ArgumentTypeError(f"expects W or LOW,HIGH, got {text!r}")
    try:
        Rope.coerce(values[0] if len(values) == 1 else values)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return values[0] if len(values) == 1 else tuple(values)


_ROPE_PAIR = re.compile(r"^\[?-[\d.]+(e-?\d+)?,")


def _join_rope(argv: list[str]) -> list[str]:
    """``--rope -0.01,0.02`` as ``--rope=-0.01,0.02``: argparse takes a value starting with
    '-' that is not a plain negative number for an option."""
    joined, i = [], 0
    while i < len(argv):
        if argv[i] == "--rope" and i + 1 < len(argv) and _ROPE_PAIR.match(argv[i + 1]):
            joined.append(f"--rope={argv[i + 1]}")
            i += 2
        else:
            joined.append(argv[i])
            i += 1
    return joined


def add_common_arguments(sub) -> None:
    """The options every analysing command takes: the ROPE, the seed, the Stan backend and
    the outputs (``--out``, ``--overwrite``, ``--json``, ``--csv``, ``--progress``)."""
    sub.add_argument("--rope", type=_rope_value, default=0.01, metavar="W|LOW,HIGH",
                     help="region of practical equivalence: a half-width W, [-W, W] "
                     "(default 0.01), or LOW,HIGH for an asymmetric one, e.g. "
                     "--rope -0.01,0.02")
    sub.add_argument("--rope-low", type=float, metavar="LOW",
                     help="lower end of the ROPE (<= 0), replacing -W")
    sub.add_argument("--rope-high", type=float, metavar="HIGH",
                     help="upper end of the ROPE (>= 0), replacing W")
    sub.add_argument("--seed", type=int, default=1,
                     help="random seed of every random step: Stan, the Bayesian sign and "
                     "signed-rank tests; every pair of all-pairs is fitted with it as it "
                     "is, so compare --seed reproduces a pair (default 1)")
    sub.add_argument("--backend", choices=["auto", "cmdstanpy", "pystan"], default="auto",
                     help="Stan backend for the hierarchical model (default auto)")
    sub.add_argument("--out", metavar="DIR",
                     help="write report.md and PNG figures into DIR, created if missing "
                     "(nothing is written without it)")
    add_overwrite_argument(sub)
    sub.add_argument("--json", metavar="FILE",
                     help="write every number of the output as JSON to FILE ('-': stdout)")
    sub.add_argument("--csv", metavar="FILE",
                     help="the same as a CSV file of key,value rows ('-': stdout)")
    sub.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="progress bars for compiles, fits and pairs (default: when "
                     "stderr is a terminal)")


def add_sampling_arguments(sub, pairwise: bool = False) -> None:
    """The sampler's options of the hierarchical models, pairwise and joint (unset: the
    library's defaults); ``pairwise`` adds those of the pairwise model alone."""
    from bayescomp.models.hierarchical_prior import PRIORS

    group = sub.add_argument_group(
        "sampler of the hierarchical model (unset: the library's defaults)")
    group.add_argument("--chains", type=positive_int, metavar="N",
                       help="Markov chains (default 4)")
    group.add_argument("--iter-warmup", type=positive_int, metavar="N",
                       help="warm-up iterations per chain (default 500)")
    group.add_argument("--iter-sampling", type=positive_int, metavar="N",
                       help="draws kept per chain (default 1000)")
    group.add_argument("--adapt-delta", type=_probability, metavar="P",
                       help="target acceptance rate of NUTS, in (0, 1) (default 0.95 up to 54 "
                       "datasets, lower above to keep the step: 0.864 at 400)")
    group.add_argument("--max-treedepth", type=positive_int, metavar="N",
                       help="maximum tree depth of NUTS (default 10)")
    group.add_argument("--prior", choices=sorted(PRIORS),
                       help="model of delta_i and hyper-priors: paper (Corani et al. 2017, "
                       "default), baycomp, kruschke, juarez_steel (Student-t with those "
                       "priors on nu) or gaussian (normal delta_i)")
    group.add_argument("--retries", type=_non_negative_int, metavar="N",
                       help="after a fit fails its diagnostics: continue slowly mixing "
                       "chains, or refit afresh with safer settings (default 2; 0 "
                       "disables)")
    group.add_argument("--ess", type=positive_int, metavar="N",
                       help="target bulk and tail ESS of the reported quantities: a fit "
                       "below it is extended from where its chains are (default 1000)")
    if pairwise:
        group.add_argument("--no-quadrature", dest="quadrature", action="store_false",
                           default=None,
                           help="leave a pairwise fit whose chains cannot be read UNRELIABLE "
                           "instead of taking its probabilities by quadrature over delta0, "
                           "sigma0 and nu (bayescomp.hierarchical's quadrature)")


def add_reading_arguments(sub) -> None:
    """The CSV of scores, its layout and the correlation between its splits."""
    add_input_arguments(sub)
    sub.add_argument("--n-folds", type=int,
                     help="folds per run; rho = 1/n_folds (default: counted in the file)")
    sub.add_argument("--rho", type=float, help="correlation between splits (instead of "
                     "--n-folds)")


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse's parser, with a usage error told in one line: the 15 lines of usage above
    it hid the line that says what is wrong; ``--help`` shows them."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog="bayescomp",
        description="Bayesian comparison of learning algorithms from paired cross-validation "
        "scores. Differences are FIRST - SECOND for scores where higher is better; the ROPE "
        "is in the units of the scores.",
        epilog="exit codes: 0 success; 1 a fit still failed its sampler diagnostics after "
        "the retries (marked UNRELIABLE, no decision); 2 bad usage, input or output (one "
        "line naming the file); 3 internal error; 130 interrupted (nothing written); 141 "
        "standard output closed by its reader (| head), silently")
    parser.add_argument("--version", action="version", version=f"bayescomp {version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def single(sub):
        sub.add_argument("--no-stan", action="store_true",
                         help="skip the hierarchical model: correlated t-tests and baselines only")

    demo = commands.add_parser("demo", help="run the built-in example end to end (forest vs "
                               "tree on 17 datasets)")
    add_common_arguments(demo)
    single(demo)
    add_sampling_arguments(demo, pairwise=True)
    demo.set_defaults(handler=run_demo)

    compare = commands.add_parser("compare", help="compare two algorithms from a CSV file")
    add_reading_arguments(compare)
    compare.add_argument("--first", required=True, help="first algorithm")
    compare.add_argument("--second", required=True, help="second algorithm")
    compare.add_argument("--dataset", help="analyse one dataset only (correlated t-test)")
    add_common_arguments(compare)
    single(compare)
    add_sampling_arguments(compare, pairwise=True)
    compare.set_defaults(handler=run_compare)

    pairs = commands.add_parser("all-pairs", help="compare every pair of algorithms in a CSV file")
    add_reading_arguments(pairs)
    add_algorithms_argument(pairs)
    pairs.add_argument("--n-jobs", type=int, default=None, help="fits run in parallel (joblib)")
    pairs.add_argument("--joint", action="store_true",
                       help="one joint model of all the algorithms (compare_many) instead of "
                       "a hierarchical fit per pair: the pairs, P(best) and the ranks from one "
                       "posterior (every dataset needs at least 3 splits)")
    add_common_arguments(pairs)
    add_sampling_arguments(pairs, pairwise=True)
    pairs.set_defaults(handler=run_all_pairs, no_stan=False)
    from bayescomp.cli import rank as cli_rank  # `bayescomp rank`: the Plackett-Luce ranking, in its own module
    cli_rank.add_parser(commands)
    from bayescomp.cli import report as cli_report  # `bayescomp report`: a paper's analysis, in its own module
    cli_report.add_parser(commands)
    from bayescomp.cli import cache as cli_cache  # `bayescomp cache`: the compiled programs' cache, in its own module
    cli_cache.add_parser(commands)
    return parser


# --- failures -------------------------------------------------------------------------------

def _check_paths(args) -> None:
    """Everything the command reads and writes, before any work."""
    if getattr(args, "file", None) is not None:
        check_input(args.file)
    check_output_dir(args.out, getattr(args, "overwrite", False))
    check_output_file(args.json, "--json")
    check_output_file(args.csv, "--csv")


def _save_details(text: str, kind: str) -> str:
    """Write ``text`` to a file in the temporary directory; its path, or '' if it fails."""
    try:
        with tempfile.NamedTemporaryFile("w", prefix=f"bayescomp-{kind}-", suffix=".txt",
                                         delete=False) as fh:
            fh.write(text)
        return fh.name
    except OSError:
        return ""


def _runtime_line(error: RuntimeError) -> str:
    """One line for a failure of Stan: the first line, the rest saved to a file."""
    text = str(error)
    first = one_line(text.split("\n", 1)[0])
    if "compile" in text.lower():
        first += (" Is a C++ compiler (g++ or clang++) installed and on PATH? Compiling "
                  "happens once per program and Stan version.")
    if "\n" in text.strip():
        details = _save_details(text, "error")
        if details:
            first += f" The full message is in {details}."
    return first


def _failure(error: BaseException) -> tuple[int, str]:
    """The exit code and the one line for ``error``."""
    if isinstance(error, CliError):
        return EXIT_INPUT, str(error)
    if isinstance(error, OSError):   # incl. FileNotFoundError, PermissionError, ENOSPC
        return EXIT_INPUT, os_error_line(error)
    if isinstance(error, ValueError):
        return EXIT_INPUT, one_line(error)
    if isinstance(error, RuntimeError):
        return EXIT_INPUT, _runtime_line(error)
    details = _save_details("".join(traceback.format_exception(error)), "traceback")
    return EXIT_INTERNAL, (f"{type(error).__name__}: {one_line(error)}"
                           + (f"; the traceback is in {details}, please report it" if details
                              else ""))


def _stdout_reader_gone() -> bool:
    """Whether standard output is a pipe whose reader has closed it (poll reports an error
    condition on the writing end), rather than some other pipe having broken."""
    try:
        import select

        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):   # no poll (Windows), or not a real file
        return False


def _stdout_closed() -> int:
    """EXIT_STDOUT_CLOSED, silently: the reader of standard output has gone (``| head``),
    which is how such a pipeline ends, not a failure to report."""
    try:   # the interpreter flushes stdout at exit again: into the void, not the pipe
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):   # not a real file (a test's capture): nothing to flush
        pass
    return EXIT_STDOUT_CLOSED


def main(argv=None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); the exit code."""
    argv = _join_rope(list(sys.argv[1:] if argv is None else argv))
    args = build_parser().parse_args(argv)
    console = Console(args.progress)
    # cmdstanpy logs what the one-line errors already say, and its chains' threads keep
    # logging after an interrupt; the command line speaks for it
    logging.getLogger("cmdstanpy").disabled = True
    try:
        with console.capturing_warnings():
            _check_paths(args)
            code = args.handler(args, console)
            sys.stdout.flush()   # a pipe is block-buffered: a closed reader shows here
            return code
    except BrokenPipeError as error:
        if _stdout_reader_gone():
            return _stdout_closed()
        code, line = _failure(error)   # another pipe (an engine's child process) broke
        console.write(f"bayescomp: error: {line}")
        return code
    except KeyboardInterrupt:
        console.write("bayescomp: interrupted; nothing was written (exit code 130)")
        return EXIT_INTERRUPTED
    except Exception as error:   # every failure is one line; bugs keep their traceback
        code, line = _failure(error)
        kind = "internal error" if code == EXIT_INTERNAL else "error"
        console.write(f"bayescomp: {kind}: {line}")
        return code


if __name__ == "__main__":
    sys.exit(main())
