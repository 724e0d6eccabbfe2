"""The ``bayescomp`` command line.

Exit codes: 0 success; 1 the analysis ran but a hierarchical fit still failed its sampler
diagnostics after the retries with safer settings (that fit is marked UNRELIABLE in the
printed summary, the report and the figures, and makes no decision); 2 an ordinary failure
(bad usage; an input that is missing, a directory, unreadable, empty or malformed, named with
its line and column where known; an output that cannot be written; a full disk; no Stan
backend or C++ compiler), told in one line; 3 an internal error (a bug: one line, and the
traceback in a file it names); 130 interrupted (Ctrl-C), leaving no partial output.

Inputs and outputs are checked before any work (:mod:`bayescomp.cli_io`); outputs are
written all at once at the end. Warnings are one line each, shown once
(:mod:`bayescomp.cli_console`); ``--json`` and ``--csv`` carry every number the text shows
(:mod:`bayescomp.cli_export`).
"""
from __future__ import annotations

import argparse
import logging
import re
import sys
import tempfile
import traceback
from pathlib import Path

from bayescomp.presentation.cli.console import Console, PairProgress, one_line
from bayescomp.presentation.cli.io import (CliError, Outputs, add_input_arguments, check_input,
                                           check_output_dir, check_output_file, os_error_line)

EXIT_OK, EXIT_SAMPLING, EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_UNRELIABLE = EXIT_SAMPLING
#: options of ``bayescomp.hierarchical`` the command line passes through when given
FIT_OPTIONS = ("chains", "iter_warmup", "iter_sampling", "adapt_delta", "max_treedepth",
               "parameterization", "prior", "retries")


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("bayescomp")
    except Exception:   # not installed (a checkout on sys.path): the package's own number
        from bayescomp import __version__
        return __version__


# --- reading --------------------------------------------------------------------------------

def _read(args):
    from bayescomp.data.scores import read_csv

    options = {"format": args.format}
    for item in args.column or []:
        key, _, name = item.partition("=")
        if key not in ("dataset", "algorithm", "run", "fold", "score") or not name:
            raise CliError(f"--column expects KEY=NAME with KEY in dataset, algorithm, run, "
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


def _rope(args):
    """The ROPE of ``--rope`` with ``--rope-low`` / ``--rope-high`` replacing its ends."""
    from bayescomp.rope import Rope

    rope = Rope.coerce(args.rope)
    low = rope.low if args.rope_low is None else args.rope_low
    high = rope.high if args.rope_high is None else args.rope_high
    return Rope(low, high)


def _check_pair(scores, first: str, second: str, rope) -> None:
    """Unknown names fail now, before any compile or fit; a suspicious ROPE is a warning."""
    from bayescomp.rope import check_rope

    scores.differences(first, second)
    check_rope(rope, scores, first, second)


# --- writing --------------------------------------------------------------------------------

def _status(unreliable: list[str], console: Console) -> int:
    """EXIT_UNRELIABLE, saying so on stderr, when some final fit failed its diagnostics."""
    if not unreliable:
        return EXIT_OK
    console.write(f"bayescomp: UNRELIABLE: {', '.join(unreliable)} failed the sampler "
                  "diagnostics after the retries; no decision is made (exit code 1). Try "
                  "--iter-warmup, --iter-sampling, --adapt-delta or --retries.")
    return EXIT_UNRELIABLE


def _save(figure_or_axes, path: Path, written: list, unreliable: bool = False) -> None:
    import matplotlib.pyplot as plt
    import numpy as np

    figure = np.ravel(figure_or_axes)[0].get_figure()
    if unreliable:
        figure.suptitle("UNRELIABLE: the sampler failed its diagnostics; not a decision",
                        color="firebrick", fontsize=11, fontweight="bold")
    figure.savefig(path, dpi=150, bbox_inches="tight")
    written.append(path.name)
    plt.close(figure)


def _figures(result, scores, first, second, out: Path) -> list[str]:
    """The paper figures of one comparison, as PNG files in ``out``."""
    import matplotlib
    matplotlib.use("Agg")
    from bayescomp.presentation import plots

    written = []
    if hasattr(result, "idata"):
        bad = not result.diagnostics.ok
        for name, axes in (
                ("posterior_delta0.png", lambda: plots.plot_posterior(result, which="delta0")),
                ("posterior_next.png", lambda: plots.plot_posterior(result, which="next")),
                ("simplex.png", lambda: plots.plot_simplex(result)),
                ("shrinkage.png", lambda: plots.plot_shrinkage(result)),
                ("diagnostics.png", lambda: plots.plot_diagnostics(result, kind="rank"))):
            _save(axes(), out / name, written, bad)
    else:
        _save(plots.plot_posterior(result), out / "posterior.png", written)
    _save(plots.plot_differences(scores, first, second, rope=result.rope),
          out / "differences.png", written)
    return written


def _write(args, console: Console, document: dict, report=None) -> None:
    """Write ``--out`` (``report(directory)`` returns the report's Markdown and figures),
    ``--json`` and ``--csv``, all or nothing."""
    from bayescomp.presentation.cli.export import to_csv, to_json

    with Outputs() as outputs:
        if args.out is not None and report is not None:
            staging = outputs.directory(Path(args.out))
            markdown, figures = report(staging)
            images = "\n".join(f"![{name}]({name})" for name in figures)
            (staging / "report.md").write_text(f"{markdown}\n\n{images}\n", encoding="utf-8")
        if args.json is not None:
            outputs.write_text(Path(args.json), to_json(document))
        if args.csv is not None:
            outputs.write_text(Path(args.csv), to_csv(document))
        outputs.commit()
    if args.out is not None and report is not None:
        console.write(f"wrote {Path(args.out) / 'report.md'} and its figures in {args.out}")


def _to_stdout(args) -> bool:
    """Whether the text summary is left out: ``--json -`` or ``--csv -`` own stdout."""
    return "-" in (args.json, args.csv)


def _document(args, console: Console, status: int, **parts) -> dict:
    return {"bayescomp": _version(), "command": args.command,
            "input": getattr(args, "file", None), "seed": args.seed, **parts,
            "exit_code": status, "warnings": list(console.shown)}


# --- commands -------------------------------------------------------------------------------

def _run_comparison(scores, first, second, args, console: Console, extra: dict) -> int:
    """Correlated t-test on one dataset, else the hierarchical model (or, without Stan, the
    per-dataset t-tests and the baselines)."""
    from bayescomp.baselines.across_datasets import baselines
    from bayescomp.presentation.cli.export import result_dict
    from bayescomp.models.correlated import correlated_ttest, correlated_ttests

    rope = _rope(args)
    _check_pair(scores, first, second, rope)
    status, show = EXIT_OK, (lambda text: None) if _to_stdout(args) else print
    if len(scores) == 1:
        result = correlated_ttest(scores, first, second, rope=rope)
        show(result.summary())
        markdown, part = result.to_markdown(), result_dict(result)
    elif args.no_stan:
        tests = correlated_ttests(scores, first, second, rope=rope)
        result = baselines(scores, first, second, rope=rope, seed=args.seed)
        for test in tests:
            show(test.summary() + "\n")
        show(result.summary())
        markdown = "\n\n".join([t.to_markdown() for t in tests] + [result.to_markdown()])
        part = {"datasets": [result_dict(t) for t in tests], "baselines": result_dict(result)}
    else:
        from bayescomp.models.hierarchical import hierarchical

        console.compile_stan("hierarchical", args.backend)
        options = _fit_options(args)
        with console.phase(f"sampling the hierarchical model, {first} vs {second}"):
            result = hierarchical(scores, first, second, rope=rope, seed=args.seed,
                                  backend=args.backend, show_progress=False, **options)
        show(result.summary())
        markdown = "\n\n".join([result.to_markdown(), result.baselines.to_markdown(),
                                "```\n" + result.diagnostics.summary() + "\n```"])
        part = result_dict(result)
        status = _status([] if result.diagnostics.ok else [f"{first} vs {second}"], console)

    def report(directory):
        figures = [] if args.no_stan and len(scores) > 1 else \
            _figures(result, scores, first, second, directory)
        return markdown, figures

    _write(args, console, _document(args, console, status, **extra, comparison=part), report)
    return status


def _compare(args, console: Console) -> int:
    scores = _read(args)
    if args.dataset is not None:
        scores = scores.subset(datasets=[args.dataset])
    return _run_comparison(scores, args.first, args.second, args, console, {})


def _all_pairs(args, console: Console) -> int:
    from itertools import combinations

    from bayescomp.presentation.cli.export import all_pairs_dict
    from bayescomp.models.compare import compare_all

    scores = _read(args)
    rope = _rope(args)
    pairs = list(combinations(scores.algorithms, 2))
    for first, second in pairs:
        _check_pair(scores, first, second, rope)
    if len(scores) > 1:
        console.compile_stan("hierarchical", args.backend)
    with console.counting(len(pairs), "all pairs") as step:
        stderr = sys.stderr
        if console.progress:   # compare_all's "fit k/N" lines advance the bar
            sys.stderr = PairProgress(console, step)
        try:
            result = compare_all(scores, rope=rope, seed=args.seed, n_jobs=args.n_jobs,
                                 backend=args.backend, progress=console.progress,
                                 **_fit_options(args))
        finally:
            sys.stderr = stderr
    if not _to_stdout(args):
        print(result.summary())
    status = _status([f"{a} vs {b}" for a, b in result.unreliable_pairs()], console)

    def report(directory):
        import matplotlib
        matplotlib.use("Agg")
        from bayescomp.presentation import plots

        written = []
        _save(plots.plot_probability_heatmap(result.probability_matrix(),
                                             unreliable=result.unreliable_pairs()),
              directory / "probability_better.png", written)
        return result.to_markdown(), written

    _write(args, console, _document(args, console, status, all_pairs=all_pairs_dict(result)),
           report)
    return status


def _demo(args, console: Console) -> int:
    from bayescomp.presentation.cli.export import result_dict
    from bayescomp.models.correlated import correlated_ttest
    from bayescomp.data.datasets import load_classifiers

    scores = load_classifiers()
    first, second = "forest", "tree"
    example = correlated_ttest(scores, first, second, dataset=scores.dataset_names[0],
                               rope=_rope(args))
    if not _to_stdout(args):
        print(f"Built-in example: {scores!r}\n")
        print(example.summary() + "\n")
    return _run_comparison(scores, first, second, args, console,
                           {"example": result_dict(example)})


# --- the parser -----------------------------------------------------------------------------

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayescomp",
        description="Bayesian comparison of learning algorithms from paired cross-validation "
        "scores. Differences are FIRST - SECOND for scores where higher is better; the ROPE "
        "is in the units of the scores.",
        epilog="exit codes: 0 success; 1 a fit still failed its sampler diagnostics after "
        "the retries (marked UNRELIABLE, no decision); 2 bad usage, input or output (one "
        "line naming the file); 3 internal error; 130 interrupted (nothing written)")
    parser.add_argument("--version", action="version", version=f"bayescomp {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(sub):
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
                         "signed-rank tests, the pairs of all-pairs (default 1)")
        sub.add_argument("--backend", choices=["auto", "cmdstanpy", "pystan"], default="auto",
                         help="Stan backend for the hierarchical model (default auto)")
        sub.add_argument("--out", metavar="DIR",
                         help="write report.md and PNG figures into DIR, created if missing "
                         "(nothing is written without it)")
        sub.add_argument("--json", metavar="FILE",
                         help="write every number of the output as JSON to FILE ('-': stdout)")
        sub.add_argument("--csv", metavar="FILE",
                         help="the same as a CSV file of key,value rows ('-': stdout)")
        sub.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                         help="progress bars for compiles, fits and pairs (default: when "
                         "stderr is a terminal)")

    def sampling(sub):
        from bayescomp.models.hierarchical import PRIORS

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
        group.add_argument("--parameterization", metavar="{auto,marginal}",
                           help="how the model is sampled (marginal: delta0 and every delta_i "
                           "integrated out; the only form, kept for scripts)")
        group.add_argument("--prior", choices=sorted(PRIORS),
                           help="model of delta_i and hyper-priors: paper (Corani et al. 2017, "
                           "default), baycomp, kruschke, juarez_steel (Student-t with those "
                           "priors on nu) or gaussian (normal delta_i)")
        group.add_argument("--retries", type=_non_negative_int, metavar="N",
                           help="refits with safer settings after a fit fails its diagnostics "
                           "(default 2; 0 disables)")

    def reading(sub):
        add_input_arguments(sub)
        sub.add_argument("--n-folds", type=int,
                         help="folds per run; rho = 1/n_folds (default: counted in the file)")
        sub.add_argument("--rho", type=float, help="correlation between splits (instead of "
                         "--n-folds)")

    def single(sub):
        sub.add_argument("--no-stan", action="store_true",
                         help="skip the hierarchical model: correlated t-tests and baselines only")

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
    pairs.set_defaults(handler=_all_pairs, no_stan=False)
    from bayescomp.presentation.cli import rank as cli_rank  # `bayescomp rank`: the Plackett-Luce ranking, in its own module
    cli_rank.add_parser(commands)
    from bayescomp.presentation.cli import cache as cli_cache  # `bayescomp cache`: the compiled programs' cache, in its own module
    cli_cache.add_parser(commands)
    return parser


# --- failures -------------------------------------------------------------------------------

def _check_paths(args) -> None:
    """Everything the command reads and writes, before any work."""
    if getattr(args, "file", None) is not None:
        check_input(args.file)
    check_output_dir(args.out)
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
            return args.handler(args, console)
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
