"""How an :class:`~bayescomp.models.all_pairs_result.AllPairsResult` reads: its verdicts, the
table the summary and the reports show, its summary, its report and its JSON document."""
from __future__ import annotations

import numpy as np
import pandas as pd

from bayescomp.decisions import MODES_DISAGREE, SCOPE_NAMES
from bayescomp.formatting import format_number, json_number
from bayescomp.presentation.reports import text_table
from bayescomp.presentation.results.hierarchical import modes_dict, quadrature_dict
from bayescomp.presentation.verdicts import rope_dict, verdict, verdict_dict


def pair_verdicts(result, row, threshold: float) -> list[str]:
    """The verdicts of one row at ``threshold``: population and next dataset, or the one
    dataset."""
    first, second, reliable = row["first"], row["second"], bool(row["reliable"])
    pair = f"{first} vs {second}"
    if not reliable:  # one sentence: neither scope has a verdict
        return [verdict([np.nan] * 3, first, second, scope=pair, reliable=False)]
    fit = result.results[(first, second)]
    # where the chains sit in several modes, the decision is theirs (the probabilities
    # mix the modes by estimated weights)
    return [verdict([row[f"{scope}_p_left"], row[f"{scope}_p_rope"], row[f"{scope}_p_right"]],
                    first, second, threshold=threshold,
                    scope=f"{pair}, {SCOPE_NAMES[scope]}" if len(result.scopes) > 1 else pair,
                    rope=result.rope,
                    decision=getattr(fit, scope).decision(threshold) if row["modes"]
                    else None,
                    mcse=getattr(fit, scope).mcse if result.method == "hierarchical" else None)
            for scope in result.scopes]


def verdicts(result, threshold: float) -> list[str]:
    """One sentence per pair and scope (:func:`bayescomp.presentation.verdicts.verdict`) at
    ``threshold``: population (delta0) and next dataset for
    the hierarchical model, the dataset for the correlated t-test."""
    return [sentence for _, row in result.table.iterrows()
            for sentence in pair_verdicts(result, row, threshold)]


def display_table(result) -> pd.DataFrame:
    """The table as the summary and the reports show it: per pair and scope, the
    probabilities under column names that say whose (``P(first better)``,
    ``P(equivalent)``, ``P(second better)``; ``first`` and ``second`` name the
    algorithms of the row) and the decision, the p-values and, for the hierarchical
    model, whether the fit can decide (``UNRELIABLE`` where not)."""
    t = result.table
    shown = pd.DataFrame({"first": t["first"], "second": t["second"]})
    for scope in result.scopes:
        where = f"{SCOPE_NAMES[scope]}: " if len(result.scopes) > 1 else ""
        shown[f"{where}P(first better)"] = t[f"{scope}_p_right"]
        shown[f"{where}P(equivalent)"] = t[f"{scope}_p_rope"]
        shown[f"{where}P(second better)"] = t[f"{scope}_p_left"]
        shown[f"{where}decision"] = t[f"{scope}_decision"]
    shown[f"{t['test'].iloc[0]} p_value"] = t.p_value
    shown["p_value corrected"] = t.p_value_corrected
    if result.method == "hierarchical":
        decisions = zip(*(t[f"{scope}_decision"] for scope in result.scopes))
        shown["fit"] = [("ok, by quadrature" if by_quadrature else "ok" if not modes
                         else f"ok, {modes} modes agree" if MODES_DISAGREE not in chosen
                         else f"{modes} modes disagree")
                        if reliable else "UNRELIABLE" for reliable, modes, by_quadrature, chosen
                        in zip(t.reliable.astype(bool), t.modes, t.quadrature, decisions)]
        shown["attempts"] = t.attempts
        # what the probabilities rest on: the fewer of bulk and tail
        shown["ESS"] = np.minimum(t.ess_bulk, t.ess_tail).round().astype(int)
    return shown


def to_dict(result) -> dict:
    """Every number the summary shows, JSON-ready, each pair's probabilities keyed by
    the algorithms' names (``"<second> better"``, ``"equivalent"``, ``"<first> better"``)."""
    pairs = []
    for _, row in result.table.iterrows():
        first, second = row["first"], row["second"]
        common = dict(threshold=result.threshold, rope=result.rope,
                      reliable=bool(row["reliable"]))
        entry = {"first": first, "second": second, "reliable": bool(row["reliable"]),
                 "attempts": int(row["attempts"]), "seed": int(row["seed"]),
                 "test": row["test"], "p_value": json_number(row["p_value"]),
                 "p_value_corrected": json_number(row["p_value_corrected"]),
                 "reject": bool(row["reject"])}
        for scope in result.scopes:
            entry[scope] = verdict_dict(
                [row[f"{scope}_p_left"], row[f"{scope}_p_rope"], row[f"{scope}_p_right"]],
                first, second, scope=f"{first} vs {second}, {SCOPE_NAMES[scope]}",
                decision=row[f"{scope}_decision"] if row["modes"] else None,
                mcse=(getattr(result.results[(first, second)], scope).mcse
                      if result.method == "hierarchical" else None), **common)
        if result.method == "hierarchical":
            entry["ess"] = {k: json_number(v) for k, v in
                            result.results[(first, second)].settings["ess"].items()}
            entry["modes"] = modes_dict(result.results[(first, second)], result.threshold)
            entry["quadrature"] = quadrature_dict(result.results[(first, second)])
            if not row["reliable"]:
                entry["problems"] = list(result.results[(first, second)].diagnostics.problems)
        pairs.append(entry)
    return {"method": result.method, "algorithms": list(result.algorithms),
            "n_datasets": result.n_datasets, "rope": rope_dict(result.rope),
            "threshold": result.threshold, "correction": result.correction,
            "alpha": result.alpha, "seed": json_number(result.seed), "reliable": result.reliable,
            "unreliable_pairs": [list(p) for p in result.unreliable_pairs()], "pairs": pairs}


def problem_lines(result) -> list[str]:
    """One line per fit that failed its diagnostics, with its problems."""
    return [f"sampling problems, {a} vs {b}: "
            + "; ".join(result.results[(a, b)].diagnostics.problems)
            for a, b in result.unreliable_pairs()]


def summary(result) -> str:
    """Every pair in text: the verdicts, the table and the fits that failed."""
    test = result.table["test"].iloc[0]
    unreliable = result.unreliable_pairs()
    lines = [] if not unreliable else [
        f"UNRELIABLE: {len(unreliable)} of {len(result.table)} fits failed their sampler "
        "diagnostics after their retries; their probabilities are not a decision: "
        + ", ".join(f"{a} vs {b}" for a, b in unreliable)]
    lines += [
        f"All {len(result.table)} pairwise comparisons of {len(result.algorithms)} algorithms on "
        f"{result.n_datasets} dataset(s): {result.method} (differences first - second), "
        f"ROPE {result.rope}, seed {result.seed}",
        f"decisions at {format_number(result.threshold)}; p-values: {test}, corrected by "
        f"{result.correction or 'nothing'}, reject at {format_number(result.alpha)}",
        *result.verdicts(),
        text_table(display_table(result), index=False),
        *problem_lines(result),
    ]
    if result.method == "hierarchical" and len(result.algorithms) > 2:
        # the other answer to the same question, named so that a reader who meets both
        # knows why their probabilities differ
        lines.append(f"Each pair is a separate fit of the pairwise model. The joint model of "
                     f"all {len(result.algorithms)} algorithms (bc.compare_many, all-pairs "
                     "--joint, report) reads every pair from one posterior; its probabilities "
                     "can differ where the pairwise fits' population spreads contradict each "
                     "other.")
    if unreliable:
        lines.append("what to do: run longer (iter_warmup, iter_sampling), raise adapt_delta, "
                     "or more retries; see each pair's "
                     "result.summary()")
    return "\n".join(lines)


def report(result):
    """(title, headline facts, table) of the Markdown, LaTeX and HTML reports."""
    facts = [f"{result.method}; differences first - second; ROPE {result.rope}; seed {result.seed}",
             f"decisions at {format_number(result.threshold)}; p-values: "
             f"{result.table['test'].iloc[0]}, corrected by {result.correction or 'nothing'}"]
    title = f"All pairwise comparisons of {len(result.algorithms)} algorithms"
    if result.method == "hierarchical":
        unreliable = result.unreliable_pairs()
        named = ": " + ", ".join(f"{a} vs {b}" for a, b in unreliable) if unreliable else ""
        facts.append(f"sampling problems in {len(unreliable)} of {len(result.table)} fits"
                     + named)
        facts += problem_lines(result)
        if unreliable:
            facts.insert(0, f"UNRELIABLE: {len(unreliable)} fit(s) failed their sampler "
                         "diagnostics after their retries, no decision is made for them: "
                         + ", ".join(f"{a} vs {b}" for a, b in unreliable))
            title += f" ({len(unreliable)} UNRELIABLE fit(s))"
    return title, facts, display_table(result)
