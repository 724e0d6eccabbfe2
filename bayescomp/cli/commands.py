"""The commands ``compare``, ``all-pairs`` and ``demo``: read the scores, run the models,
write the summary, the documents and the figures. Registered by
:func:`bayescomp.cli.main.build_parser`."""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from bayescomp.cli.console import Console, PairProgress
from bayescomp.cli.io import CliError, Outputs, read_scores, report_text

EXIT_OK, EXIT_UNRELIABLE, EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
#: 128 + SIGPIPE: what a shell reports for a Unix tool whose reader closed the pipe
EXIT_STDOUT_CLOSED = 141
#: options of ``bayescomp.hierarchical`` and ``bayescomp.compare_many`` the command line
#: passes through when given (``quadrature``: the pairwise model's alone)
FIT_OPTIONS = ("chains", "iter_warmup", "iter_sampling", "adapt_delta", "max_treedepth",
               "prior", "retries", "ess", "quadrature")


# --- reading --------------------------------------------------------------------------------

def fit_options(args) -> dict:
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


@contextlib.contextmanager
def _naming_the_input(args):
    """A name looked up in the scores and not found (an algorithm, a dataset) fails with
    the file it was looked up in."""
    try:
        yield
    except ValueError as error:
        if getattr(args, "file", None) is None:   # the demo's built-in scores
            raise
        raise ValueError(f"{args.file}: {error}") from None


def _check_pair(args, scores, first: str, second: str, rope) -> None:
    """Unknown names fail now, before any compile or fit; a suspicious ROPE is a warning."""
    from bayescomp.rope import check_rope

    with _naming_the_input(args):
        scores.differences(first, second)
    check_rope(rope, scores, first, second)


def stan_engine(args, console: Console, program: str) -> str:
    """The Stan engine of this command, resolved once from ``--backend``, with ``program``
    compiled for it (announced when that takes a while).

    Every fit of the command is then given this name, not ``"auto"``: resolved again later,
    ``"auto"`` could pick another engine (a CmdStan installed meanwhile), so that the
    program would be compiled twice and the announcement name the wrong engine. When
    ``"auto"`` passes over a CmdStan that is there but unfinished, one line says so: the
    user may expect that CmdStan to run.
    """
    from bayescomp.sampling import resolve_backend
    from bayescomp.sampling.cmdstanpy_engine import UnfinishedCmdStan, cmdstan_home

    backend = resolve_backend(args.backend)
    if args.backend == "auto" and backend != "cmdstanpy":
        try:
            cmdstan_home()
        except UnfinishedCmdStan as unfinished:
            console.write(f"bayescomp: Stan engine {backend}, not cmdstanpy: {unfinished}")
        except RuntimeError:   # no CmdStan at all: nothing was passed over
            pass
    console.compile_stan(program, backend)
    return backend


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
        bad = not result.reliable
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


def write_outputs(args, console: Console, document: dict, report=None) -> None:
    """Write ``--out`` (``report(directory)`` writes the figures there and returns the
    report's Markdown and the figures' names, and optionally the names of other files it
    wrote there), ``--json`` and ``--csv``, all or nothing.

    With ``--overwrite``, the files of an earlier analysis in ``--out`` are replaced or
    removed, and the line that tells where the report is says which they were.
    """
    from bayescomp.cli.export import to_csv, to_json

    with Outputs() as outputs:
        if args.out is not None and report is not None:
            with outputs.directory(Path(args.out), replace=args.overwrite) as staging:
                markdown, figures, *others = report(staging)
                (staging / "report.md").write_text(
                    report_text(markdown, figures, *others), encoding="utf-8")
        if args.json is not None:
            outputs.write_text(Path(args.json), to_json(document))
        if args.csv is not None:
            outputs.write_text(Path(args.csv), to_csv(document))
        outputs.commit()
    if args.out is not None and report is not None:
        replaced = (f", replacing the earlier analysis there ({', '.join(outputs.replaced)})"
                    if outputs.replaced else "")
        console.write(f"wrote {Path(args.out) / 'report.md'} and its figures in "
                      f"{args.out}{replaced}")


def _to_stdout(args) -> bool:
    """Whether the text summary is left out: ``--json -`` or ``--csv -`` own stdout."""
    return "-" in (args.json, args.csv)


def _document(args, console: Console, status: int, **parts) -> dict:
    from bayescomp.cli.export import envelope

    return envelope(args.command, status, console.shown, input=getattr(args, "file", None),
                    seed=args.seed, **parts)


# --- commands -------------------------------------------------------------------------------

def _run_comparison(scores, first, second, args, console: Console, extra: dict) -> int:
    """Correlated t-test on one dataset, else the hierarchical model (or, without Stan, the
    per-dataset t-tests and the baselines)."""
    from bayescomp.baselines.across_datasets import baselines
    from bayescomp.cli.export import result_dict
    from bayescomp.models.correlated import correlated_ttest, correlated_ttests

    rope = _rope(args)
    _check_pair(args, scores, first, second, rope)
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

        backend = stan_engine(args, console, "hierarchical")
        options = fit_options(args)
        with console.phase(f"sampling the hierarchical model, {first} vs {second}"):
            result = hierarchical(scores, first, second, rope=rope, seed=args.seed,
                                  backend=backend, show_progress=False, **options)
        show(result.summary())
        markdown = "\n\n".join([result.to_markdown(), result.baselines.to_markdown(),
                                "```\n" + result.diagnostics.summary() + "\n```"])
        part = result_dict(result)
        status = _status([] if result.reliable else [f"{first} vs {second}"], console)

    def report(directory):
        figures = [] if args.no_stan and len(scores) > 1 else \
            _figures(result, scores, first, second, directory)
        return markdown, figures

    write_outputs(args, console, _document(args, console, status, **extra, comparison=part),
                  report)
    return status


def run_compare(args, console: Console) -> int:
    # only the two algorithms' scores: another's missing or NaN scores are no fault here
    # (the same name twice is read once, and _check_pair says what is wrong)
    scores = read_scores(args, algorithms=list(dict.fromkeys([args.first, args.second])))
    if args.dataset is not None:
        with _naming_the_input(args):
            scores = scores.subset(datasets=[args.dataset])
    return _run_comparison(scores, args.first, args.second, args, console, {})


def run_all_pairs(args, console: Console) -> int:
    from itertools import combinations

    from bayescomp.cli.export import all_pairs_dict
    from bayescomp.models.compare import compare_all

    scores = read_scores(args)
    rope = _rope(args)
    if args.joint:
        if args.quadrature is not None:
            raise CliError("--no-quadrature is an option of the pairwise fits; the joint model "
                           "(--joint) has no quadrature")
        return _run_joint(scores, rope, args, console)
    pairs = list(combinations(scores.algorithms, 2))
    for first, second in pairs:
        _check_pair(args, scores, first, second, rope)
    # one dataset: correlated t-tests, no Stan
    backend = stan_engine(args, console, "hierarchical") if len(scores) > 1 else args.backend
    with console.counting(len(pairs), "all pairs") as step:
        stderr = sys.stderr
        if console.progress:   # compare_all's "fit k/N" lines advance the bar
            sys.stderr = PairProgress(console, step)
        try:
            result = compare_all(scores, rope=rope, seed=args.seed, n_jobs=args.n_jobs,
                                 backend=backend, show_progress=bool(console.progress),
                                 **fit_options(args))
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
        # every pair's three regions for the population, unreliable fits hatched
        _save(plots.plot_probability_heatmap(result), directory / "pairs.png", written)
        return result.to_markdown(), written

    write_outputs(args, console,
                  _document(args, console, status, all_pairs=all_pairs_dict(result)), report)
    return status


def _run_joint(scores, rope, args, console: Console) -> int:
    """``all-pairs --joint``: one joint model of every algorithm, with all-pairs' outputs."""
    from itertools import combinations

    from bayescomp.cli.export import result_dict
    from bayescomp.models.joint import compare_many
    from bayescomp.models.paper_analysis import check_joint_input

    options = fit_options(args)
    with _naming_the_input(args):   # faults of the input fail before any compile
        check_joint_input(scores, prior=options.get("prior", "paper"))
    for first, second in combinations(scores.algorithms, 2):
        _check_pair(args, scores, first, second, rope)
    backend = stan_engine(args, console, "joint")
    with console.phase(f"sampling the joint model of {len(scores.algorithms)} algorithms"):
        result = compare_many(scores, rope=rope, seed=args.seed, backend=backend,
                              show_progress=False, **options)
    if not _to_stdout(args):
        print(result.summary())
    status = _status([] if result.reliable else
                     [f"the joint model of {', '.join(result.algorithms)}"], console)

    def report(directory):
        written = []
        joint_figures(result, directory, written)
        return result.to_markdown(), written

    write_outputs(args, console, _document(args, console, status, joint=result_dict(result)),
                  report)
    return status


def joint_figures(result, directory: Path, written: list) -> None:
    """The figures of a joint fit in ``directory``: ``pairs.png`` (every pair's three
    regions, as all-pairs draws them) and ``bayesian_cd.png`` (the Bayesian
    critical-difference diagram), marked when the fit is unreliable."""
    import matplotlib
    matplotlib.use("Agg")
    from bayescomp.presentation import plots

    bad = not result.reliable
    # the pair table has the hierarchical model's two questions (population, next dataset)
    _save(plots.plot_probability_heatmap(result.to_frame().assign(method="hierarchical")),
          directory / "pairs.png", written, bad)
    _save(plots.plot_bayesian_cd(result), directory / "bayesian_cd.png", written, bad)


def run_demo(args, console: Console) -> int:
    from bayescomp.cli.export import result_dict
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
