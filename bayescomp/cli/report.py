"""``bayescomp report FILE --out DIR``: a paper's analysis of K algorithms in one command.

One fit of the joint model (:func:`bayescomp.models.paper_analysis.paper_analysis`): the
pair table, P(best), the rank probabilities and the Bayesian critical-difference diagram;
the best algorithm against each other one from the same fit; the sensitivity to the ROPE
(the same draws at other widths) and to the prior (unless ``--no-prior-sensitivity``:
the other prior read off the same draws by importance sampling, or refitted where the
weights do not allow it); the Friedman test with Holm-corrected pairs and Demšar's
diagram beside them; a LaTeX table of the pairs and a paragraph for the paper.

DIR receives ``report.md``, ``report.tex``, ``report.json`` and the PNG figures, all at once
at the end (:class:`bayescomp.cli.io.Outputs`), and nothing is written elsewhere.
Registered by :func:`bayescomp.cli.main.build_parser` through :func:`add_parser`; ``main``
checks the paths before any work and turns exceptions into one line and exit code 2. Exit
code 1 when a fit the report reads failed its sampler diagnostics (the joint fit: no
verdict; the prior's refit: its sensitivity unknown), 0 otherwise.
"""
from __future__ import annotations

from pathlib import Path

EXIT_OK, EXIT_UNRELIABLE = 0, 1
#: the figures of the report, by file name
JOINT_FIGURES = ("pairs.png", "bayesian_cd.png")


def add_parser(subparsers):
    """Add the ``report`` subcommand to ``subparsers`` (an argparse subparsers action)."""
    from bayescomp.cli.io import add_algorithms_argument
    from bayescomp.cli.main import (add_common_arguments, add_reading_arguments,
                                    add_sampling_arguments)

    report = subparsers.add_parser(
        "report", help="a paper's analysis of every algorithm in a CSV file: joint model, "
        "sensitivity, classical baselines, LaTeX table and paragraph (needs --out)",
        description="Fits the joint hierarchical model of the algorithms once (and once more "
        "under the other Student-t prior) and writes into DIR report.md, report.tex, "
        "report.json and the figures. Differences are FIRST - SECOND for scores where higher "
        "is better; the ROPE is in the units of the scores.")
    add_reading_arguments(report)
    add_algorithms_argument(report)
    report.add_argument("--no-prior-sensitivity", dest="prior_sensitivity",
                        action="store_false",
                        help="skip the pair table under the other Student-t prior "
                        "(baycomp; paper when --prior baycomp), read off the same draws or "
                        "refitted")
    add_common_arguments(report)
    add_sampling_arguments(report)
    report.set_defaults(handler=run)
    return report


def run(args, console) -> int:
    """Run ``bayescomp report`` with parsed ``args``; the exit code."""
    from bayescomp.cli.commands import (_check_pair, _document, _naming_the_input,
                                        _rope, _status, _to_stdout, fit_options, stan_engine,
                                        write_outputs)
    from bayescomp.cli.export import plain
    from bayescomp.cli.io import CliError, chosen_algorithms, read_scores
    from bayescomp.models.paper_analysis import check_analysis_input, paper_analysis

    if args.out is None:
        raise CliError("report needs --out DIR: the report is the files written there")
    scores = read_scores(args)
    rope = _rope(args)
    options = fit_options(args)
    with _naming_the_input(args):   # faults of the input fail before any compile
        chosen = check_analysis_input(scores, chosen_algorithms(args),
                                      options.get("prior", "paper"))
    for i, first in enumerate(chosen.algorithms):
        for second in chosen.algorithms[i + 1:]:
            _check_pair(args, chosen, first, second, rope)   # a ROPE in other units warns
    backend = stan_engine(args, console, "joint")
    # the other prior is read off the same draws where it can, else fitted too
    fits = "one fit, two if the prior's sensitivity needs it" if args.prior_sensitivity \
        else "one fit"
    with console.phase(f"sampling the joint model of {len(chosen.algorithms)} algorithms "
                       f"({fits})"):
        analysis = paper_analysis(chosen, rope=rope, seed=args.seed, backend=backend,
                                  prior_sensitivity=args.prior_sensitivity, **options)
    if not _to_stdout(args):
        print(analysis.summary())
    status = _status([f"the joint model ({name} prior)" for name in analysis.unreliable_fits],
                     console)
    document = analysis.to_dict()

    def report(directory):
        written = []
        figures(analysis, directory, written)
        from bayescomp.cli.export import to_json

        (directory / "report.tex").write_text(analysis.to_latex(), encoding="utf-8")
        (directory / "report.json").write_text(to_json(document), encoding="utf-8")
        return analysis.to_markdown(), written, ["report.tex", "report.json"]

    write_outputs(args, console, _document(args, console, status, report=plain(document)),
                  report)
    return status


def figures(analysis, directory: Path, written: list) -> None:
    """The report's figures in ``directory``: the joint fit's (``pairs.png``,
    ``bayesian_cd.png``), Demšar's diagram of the Friedman test
    (``critical_difference.png``) and, per other algorithm, the per-dataset shrinkage of
    ``best - other`` (``best_vs_<other>.png``, from the same joint fit)."""
    import matplotlib
    matplotlib.use("Agg")
    from types import SimpleNamespace

    from bayescomp.cli.commands import _save, joint_figures
    from bayescomp.presentation import plots

    joint_figures(analysis.joint, directory, written)
    _save(plots.plot_critical_difference(analysis.friedman),
          directory / "critical_difference.png", written)
    bad = not analysis.joint.reliable
    for pair in analysis.best_pairs.itertuples():
        rows = analysis.best_datasets[analysis.best_datasets["second"] == pair.second]
        # the forest plot reads a pair's per-dataset table and its population mean
        view = SimpleNamespace(first=pair.first, second=pair.second, rope=analysis.rope,
                               datasets=rows.set_index("dataset"),
                               population=SimpleNamespace(mean=pair.delta0_mean))
        _save(plots.plot_shrinkage(view), directory / f"best_vs_{_file_part(pair.second)}.png",
              written, bad)


def _file_part(name: str) -> str:
    """An algorithm's name as part of a file name: letters, digits, '-', '_' and '.' kept."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(name))
