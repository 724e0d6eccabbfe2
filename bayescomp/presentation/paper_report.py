"""How a paper's report (:class:`bayescomp.models.paper_analysis.PaperAnalysis`) reads: its
text summary, ``report.md``, ``report.tex`` (the pair table and the paragraph) and
``report.json`` (every number the text says).

The paragraph is :mod:`bayescomp.presentation.paper_paragraph`'s; the joint model's pair
table, verdicts and ranks are :mod:`bayescomp.presentation.results.joint`'s, so the report
says what ``compare_many``'s own summary says, in the same words.
"""
from __future__ import annotations

import pandas as pd

from bayescomp.decisions import MC_MARGIN
from bayescomp.formatting import effective_draws, format_number, json_number
from bayescomp.presentation.paper_paragraph import paragraph, sentences
from bayescomp.presentation.reports import latex_escape, latex_table, markdown_table, text_table
from bayescomp.presentation.results.classical import friedman_summary
from bayescomp.presentation.results.joint import (display_table, floor_lines, ranks_frame,
                                                 with_scope_columns)
from bayescomp.presentation.verdicts import rope_dict

#: the pair table's columns in the LaTeX table: (to_frame's column, header)
LATEX_COLUMNS = (("first", "first"), ("second", "second"), ("delta0_mean", "delta0"),
                 ("delta0_hdi_low", "HDI low"), ("delta0_hdi_high", "HDI high"),
                 *((f"{scope}_{column}", f"{where}: {header}")
                   for scope, where in (("population", "population"), ("next_dataset", "next"))
                   for column, header in (("p_right", "P(first better)"),
                                          ("p_rope", "P(equivalent)"),
                                          ("p_left", "P(second better)"),
                                          ("decision", "decision"))))


def advice(analysis) -> str:
    """What to do about a joint fit that failed its diagnostics, in one line."""
    s = analysis.joint.settings
    return ("run longer (--iter-warmup, --iter-sampling; now "
            f"{s['iter_warmup']} + {s['iter_sampling']}), raise --adapt-delta above "
            f"{s['adapt_delta']:.4g}, or allow more --retries; then check the trace plots "
            "(bayescomp.presentation.plots.plot_diagnostics)")


def unreliable_lines(analysis) -> list[str]:
    """The banner of a report whose fits failed their diagnostics: which, why, what to do."""
    if analysis.reliable:
        return []
    lines = []
    for name in analysis.unreliable_fits:
        fit = analysis.prior_fits[name]
        role = "the joint fit" if fit is analysis.joint else "the refit for the prior's sensitivity"
        lines.append(f"UNRELIABLE: {role} (prior {name}) failed its sampler diagnostics: "
                     + "; ".join(fit.diagnostics.problems))
    if not analysis.joint.reliable:
        lines.append("No verdict: no algorithm is named best and no pair is decided.")
    lines.append(f"What to do: {advice(analysis)}.")
    return lines


def latex_frame(analysis) -> pd.DataFrame:
    """The joint pair table with the LaTeX table's headers (:data:`LATEX_COLUMNS`)."""
    table = analysis.joint.to_frame()
    return pd.DataFrame({header: table[column] for column, header in LATEX_COLUMNS})


def ranks_table(analysis) -> pd.DataFrame:
    """P(best) and the probability of every rank, best first."""
    return ranks_frame(analysis.joint).reset_index()


def best_table(analysis) -> pd.DataFrame:
    """The best against each other algorithm, ``best - other``, both questions."""
    t = analysis.best_pairs
    shown = pd.DataFrame({"best": t["first"], "other": t["second"], "delta0": t["delta0_mean"],
                          "HDI low": t["delta0_hdi_low"], "HDI high": t["delta0_hdi_high"],
                          "next dataset": t["next_mean"], "next HDI low": t["next_hdi_low"],
                          "next HDI high": t["next_hdi_high"]})
    return with_scope_columns(shown, t, "best", "other")


def best_datasets_table(analysis) -> pd.DataFrame:
    """Per dataset and other algorithm, ``best - other``: raw mean, shrunken delta_i."""
    t = analysis.best_datasets
    return pd.DataFrame({"dataset": t["dataset"], "other": t["second"], "raw mean": t["mean"],
                         "delta_i": t["delta_mean"], "HDI low": t["delta_hdi_low"],
                         "HDI high": t["delta_hdi_high"], "P(best better)": t["p_right"],
                         "P(equivalent)": t["p_rope"], "P(other better)": t["p_left"]})


def sensitivity_table(table: pd.DataFrame, key: str) -> pd.DataFrame:
    """A sensitivity table (ROPE factor or prior first) with the pair table's display
    columns: P(equivalent) and the decision of both questions, and P(first better)."""
    shown = pd.DataFrame({key: table[key], "first": table["first"], "second": table["second"]})
    if key == "factor":
        shown.insert(1, "ROPE", [f"[{format_number(a)}, {format_number(b)}]"
                                 for a, b in zip(table["rope_low"], table["rope_high"])])
    return with_scope_columns(shown, table)


def prior_note(analysis) -> str:
    """How the pair table under each prior was read: a fit per prior, or the other prior's
    off the same draws by importance sampling (with the weights' Pareto k and worth)."""
    seed = analysis.settings["seed"]
    if not analysis.prior_reweighted:
        return f"The joint model refitted under each prior, seed {seed}."
    (name, weights), = analysis.prior_reweighted.items()
    return (f"The {name} prior read off the {weights.base} prior's draws (seed {seed}) by "
            f"Pareto-smoothed importance sampling: Pareto k {weights.pareto_k:.2f} (at most "
            f"0.7 is reliable), importance ESS {weights.ess:.0f}; the two priors differ only "
            "in the prior of nu.")


def holm_table(analysis) -> pd.DataFrame:
    p = analysis.friedman.pairwise
    return pd.DataFrame({"first": p["first"], "second": p["second"],
                         "rank difference": p["rank_difference"],
                         "Wilcoxon p_value": p["wilcoxon_p"], "Holm p_value": p["holm_p"],
                         "Holm significant": p["holm_significant"]})


def _sections(analysis, table) -> list[tuple[str, list[str]]]:
    """(heading, body lines) of every part of the report; ``table`` renders a DataFrame."""
    joint, best = analysis.joint, analysis.best
    parts = [("Paragraph for the paper", [paragraph(analysis)]),
             # one verdict a paragraph: in Markdown, lines without a blank one between run on
             ("The joint model: every pair",
              [line for verdict in joint.verdicts() for line in (verdict, "")]
              + [table(display_table(joint))]
              # a line each, separated: in Markdown, lines without a blank one run on
              + [line for floored in floor_lines(joint) for line in ("", floored.strip())]),
             ("P(best) and the probability of every rank",
              ["Ranks of the population means; algorithms within the ROPE of the best of "
               "their group share their ranks.", "", table(ranks_table(analysis))]),
             (f"{best} (the highest P(best)) against each other algorithm",
              [f"From the same joint fit, differences {best} - other (95% HDIs).", "",
               table(best_table(analysis)), "",
               "Per dataset: the raw mean difference and the shrunken delta_i (95% HDI).", "",
               table(best_datasets_table(analysis))]),
             ("Sensitivity to the ROPE",
              ["The same draws read at other ROPE widths (factor times the ROPE).", "",
               table(sensitivity_table(analysis.rope_sensitivity, "factor"))])]
    if len(analysis.prior_tables) > 1:
        parts.append(("Sensitivity to the prior",
                      [prior_note(analysis), "",
                       table(sensitivity_table(analysis.prior_sensitivity(), "prior"))]))
    else:
        parts.append(("Sensitivity to the prior", ["Not checked (--no-prior-sensitivity)."]))
    parts += [("Classical baselines",
               ["Friedman test, Nemenyi's critical difference and Wilcoxon signed-rank tests "
                "with Holm's correction, on the mean score of every dataset.", "",
                "```", friedman_summary(analysis.friedman), "```", "",
                table(holm_table(analysis))]),
              ("Sampler diagnostics",
               ["```", joint.diagnostics.summary(),
                "ESS of the reported quantities "
                f"{effective_draws(joint.settings['ess'], bool(joint.modes))}; "
                f"{len(joint.attempts)} attempt(s), {joint.settings['seconds']:.1f} s", "```"])]
    return parts


def title(analysis) -> str:
    text = (f"Comparison of {len(analysis.algorithms)} algorithms on {analysis.n_datasets} "
            "datasets")
    return text + ("" if analysis.reliable else " (UNRELIABLE)")


def to_markdown(analysis) -> str:
    """``report.md`` without its figures."""
    lines = [f"# {title(analysis)}", ""]
    banner = unreliable_lines(analysis)
    if banner:
        lines += [text for line in banner for text in (f"**{line}**", "")]
    for heading, body in _sections(analysis, markdown_table):
        lines += [f"## {heading}", "", *body, ""]
    return "\n".join(lines).rstrip("\n")


def summary(analysis) -> str:
    """The report in plain text, for a terminal."""
    lines = [title(analysis), *unreliable_lines(analysis)]
    for heading, body in _sections(analysis, lambda frame: text_table(frame, index=False)):
        lines += ["", f"{heading}:", *[line for line in body if line != "```"]]
    return "\n".join(lines)


def to_latex(analysis) -> str:
    """``report.tex``: the pair table (booktabs) and the paragraph, to paste into a paper."""
    caption = (f"Every pair of {len(analysis.algorithms)} algorithms on "
               f"{analysis.n_datasets} datasets, joint hierarchical model, ROPE "
               f"{analysis.rope}: posterior mean and 95% HDI of delta0 (first - second), "
               "the probabilities of the three regions and the decision at "
               f"{format_number(analysis.joint.threshold)} (made where a probability "
               f"exceeds it by {MC_MARGIN:g} Monte Carlo errors), for the population and "
               "for a new dataset.")
    return "\n".join([
        "% bayescomp report: needs \\usepackage{booktabs}", "",
        latex_table(latex_frame(analysis), caption, "tab:bayescomp-pairs"), "",
        latex_escape(paragraph(analysis)), ""])


def _records(frame: pd.DataFrame) -> list[dict]:
    """Rows as JSON-ready dicts: numbers through :func:`json_number`, the rest as they are."""
    return [{str(k): (json_number(v) if isinstance(v, (int, float)) or hasattr(v, "dtype")
                      else v) for k, v in row.items()}
            for row in frame.to_dict(orient="records")]


def to_dict(analysis) -> dict:
    """``report.json``: every number the text says, and the paragraph."""
    joint, f = analysis.joint, analysis.friedman
    return {
        "method": "paper report", "algorithms": list(analysis.algorithms),
        "n_datasets": analysis.n_datasets, "rope": rope_dict(analysis.rope),
        "threshold": json_number(joint.threshold), "seed": analysis.settings["seed"],
        "prior": analysis.settings["prior"], "reliable": analysis.reliable,
        "unreliable_fits": list(analysis.unreliable_fits),
        "best": {"algorithm": analysis.best, "p_best": json_number(joint.p_best[analysis.best]),
                 "p_best_mcse": json_number(joint.p_best_mcse[analysis.best])},
        "joint": joint.to_dict(),
        "best_against_others": {"pairs": _records(analysis.best_pairs),
                                "datasets": _records(analysis.best_datasets)},
        "rope_sensitivity": {"factors": list(analysis.settings["rope_factors"]),
                             "rows": _records(analysis.rope_sensitivity)},
        "prior_sensitivity": ({"priors": list(analysis.prior_tables),
                               "reweighted": {name: {"from": w.base,
                                                     "pareto_k": json_number(w.pareto_k),
                                                     "importance_ess": json_number(w.ess)}
                                              for name, w in analysis.prior_reweighted.items()},
                               "rows": _records(analysis.prior_sensitivity())}
                              if len(analysis.prior_tables) > 1 else None),
        "friedman": {"statistic": json_number(f.statistic), "p_value": json_number(f.p_value),
                     "alpha": json_number(f.alpha), "significant": f.significant,
                     "average_ranks": {a: json_number(r) for a, r in
                                       zip(f.algorithms, f.average_ranks)},
                     "critical_difference": json_number(f.critical_difference),
                     "groups": [list(g) for g in f.groups],
                     "pairs": _records(holm_table(analysis))},
        "paragraph": {"text": paragraph(analysis), "sentences": sentences(analysis)},
    }
