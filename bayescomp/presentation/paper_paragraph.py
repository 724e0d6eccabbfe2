"""The paragraph of a paper's report (:func:`bayescomp.models.paper_analysis.paper_analysis`):
one sentence per finding, each written from the numbers of the analysis it is given.

Every number a sentence prints is a value of the analysis, rounded as printed
(probabilities to :data:`DIGITS` decimals, or 4 where an undecided pair's would print at the
threshold; p-values as the classical tests print them), and every decision is the pair
table's (its decision already holds the margin of two Monte Carlo errors, which a clause
names where an undecided probability reaches the threshold): a sentence never decides
anything itself. When the joint fit failed its sampler diagnostics the paragraph names no
best algorithm and decides no pair.
"""
from __future__ import annotations

from bayescomp.decisions import MC_MARGIN, best_algorithm
from bayescomp.formatting import equals, format_number, names_text, probability
from bayescomp.presentation.verdicts import most_probably_best, undecided_best

#: decimals of the probabilities in the paragraph
DIGITS = 3
#: up to this many equivalent (or undecided) pairs are each written with their probabilities;
#: more are counted and named, so that the paragraph of 10 algorithms stays a paragraph
LISTED = 2


def _p(value) -> str:
    return probability(value, DIGITS)


def pair_name(row) -> str:
    """``first vs second``: a pair of the table in a list."""
    return f"{row['first']} vs {row['second']}"


def _probabilities(row, scope: str) -> dict:
    """P(first better), P(equivalent), P(second better) of a row, by their labels."""
    first, second = row["first"], row["second"]
    return {f"{first} better": row[f"{scope}_p_right"], "equivalent": row[f"{scope}_p_rope"],
            f"{second} better": row[f"{scope}_p_left"]}


def undecided_probability(value: float, threshold: float) -> str:
    """A probability of an undecided pair as printed: to :data:`DIGITS` decimals, or to 4
    where those would print it at the threshold or above (3 decimals print 0.9496 as
    0.950, which beside "undecided" at 0.95 reads as a contradiction)."""
    text = _p(value)
    return probability(value, 4) if float(text) >= float(_p(threshold)) else text


def margin_note(subject: str, value: float, threshold: float) -> str:
    """Why an undecided pair's probability (``value``, named ``subject`` in the clause) at
    or above ``threshold`` decides nothing: the pair table's decision needs it
    :data:`~bayescomp.decisions.MC_MARGIN` Monte Carlo errors above (a reliable fit's
    undecided probability at the threshold or above lies within them); empty below the
    threshold."""
    if value < threshold:
        return ""
    return (f": {subject} is within {MC_MARGIN:g} Monte Carlo errors of "
            f"{format_number(threshold)}")


def pair_phrase(row, scope: str, threshold: float) -> str:
    """An equivalent or undecided row of the pair table (``first``, ``second``,
    ``<scope>_p_left`` ... and ``<scope>_decision``) in a clause naming the algorithms: the
    equivalence and P(equivalent), or the three probabilities (with :func:`margin_note`).
    (Winners are grouped by :func:`decision_clauses`.)"""
    first, second = row["first"], row["second"]
    p = _probabilities(row, scope)
    if row[f"{scope}_decision"] == "equivalent":
        return f"{first} and {second} are practically equivalent (P = {_p(p['equivalent'])})"
    printed = {label: undecided_probability(value, threshold) for label, value in p.items()}
    top = max(p, key=p.get)
    return (f"{first} against {second} is undecided (P({first} better) = "
            f"{printed[f'{first} better']}, P(equivalent) = {printed['equivalent']}, "
            f"P({second} better) = {printed[f'{second} better']})"
            f"{margin_note(f'its P({top})', p[top], threshold)}")


def decision_clauses(table, scope: str, threshold: float) -> list[str]:
    """The decisions of every pair of ``table`` on one question, grouped so that a paragraph
    stays readable with many algorithms: one clause per winner, naming each algorithm it
    beats with P(better), or one per loser where that takes fewer clauses; the equivalent pairs each with P(equivalent), or, more than
    :data:`LISTED` of them, counted and named with the range of P(equivalent); the undecided
    pairs each with their three probabilities, or, more than :data:`LISTED`, counted with the
    largest probability any of them reaches (with :func:`margin_note`: ``threshold`` is the
    one the table's decisions were made at)."""
    wins, losses, equivalent, undecided = {}, {}, [], []
    for _, row in table.iterrows():
        decision = row[f"{scope}_decision"]
        if decision == "equivalent":
            equivalent.append(row)
        elif decision == "undecided":
            undecided.append(row)
        else:
            winner = decision.removesuffix(" better")
            loser = row["second"] if winner == row["first"] else row["first"]
            p_better = _p(_probabilities(row, scope)[decision])
            wins.setdefault(winner, []).append((loser, p_better))
            losses.setdefault(loser, []).append((winner, p_better))
    # by winner, or by loser where that takes fewer clauses (six algorithms that each beat a
    # baseline: one clause, not six); a group of one pair reads winner first either way
    if len(losses) < len(wins):
        clauses = [f"{names_text(f'{w} (P = {p})' for w, p in winners)} are better than {loser}"
                   if len(winners) > 1 else
                   f"{winners[0][0]} is better than {loser} (P = {winners[0][1]})"
                   for loser, winners in losses.items()]
    else:
        clauses = [f"{winner} is better than "
                   f"{names_text(f'{other} (P = {p})' for other, p in losers)}"
                   for winner, losers in wins.items()]
    if len(equivalent) <= LISTED:
        clauses += [pair_phrase(row, scope, threshold) for row in equivalent]
    else:
        inside = [row[f"{scope}_p_rope"] for row in equivalent]
        low, high = _p(min(inside)), _p(max(inside))
        # "from 1.000 to 1.000" reads as a slip: one value, said once
        span = f"= {low} each" if low == high else f"from {low} to {high}"
        clauses.append(f"{len(equivalent)} pairs are practically equivalent (P(equivalent) "
                       f"{span}): {names_text(pair_name(row) for row in equivalent)}")
    if len(undecided) <= LISTED:
        clauses += [pair_phrase(row, scope, threshold) for row in undecided]
    else:
        label, value, row = max(((label, value, row) for row in undecided
                                 for label, value in _probabilities(row, scope).items()),
                                key=lambda item: item[1])
        which = "the other" if clauses else "all"
        clauses.append(f"{which} {len(undecided)} pairs are undecided (the largest of their "
                       f"probabilities is P({label}) = "
                       f"{undecided_probability(value, threshold)}, {pair_name(row)})"
                       f"{margin_note(f'that P({label})', value, threshold)}")
    return clauses


def opening(analysis) -> str:
    """What was compared, how, and the ROPE."""
    joint, s = analysis.joint, analysis.settings
    return (f"We compared {len(analysis.algorithms)} algorithms ({names_text(analysis.algorithms)}) "
            f"on {analysis.n_datasets} datasets with a joint hierarchical Bayesian model of "
            f"their cross-validation scores, which accounts for the correlation between "
            f"folds (bayescomp, prior {s['prior']}, seed {s['seed']}), with a region of "
            f"practical equivalence (ROPE) of {joint.rope} in the units of the scores.")


def best_sentence(analysis) -> str:
    """The best algorithm and its P(best) (ties within the ROPE share the first rank)."""
    threshold = analysis.joint.threshold
    best = analysis.joint.best
    p = analysis.joint.p_best[best]
    if analysis.joint.modes and not analysis.joint.modes_weighed:
        # P(best) of a mixture of modes whose weights are not known is not known either
        return (f"No algorithm is named the best: the posterior has several modes whose "
                f"weights are not estimated (over the chains as sampled, {best} has the "
                f"largest P(best) = {_p(p)}).")
    named, close = best_algorithm(analysis.joint.p_best, analysis.joint.p_best_mcse,
                                  analysis.joint.p_best_gap_mcse, threshold)
    if named:
        return (f"{best} is the best algorithm with probability {_p(p)} (its population "
                f"mean ranks first; algorithms within the ROPE share a rank).")
    lead = most_probably_best(analysis.joint.p_best, analysis.joint.p_best_gap_mcse,
                              lambda v: f"P(best) = {_p(v)}")
    return (f"No algorithm is the best with probability {format_number(threshold)}"
            f"{undecided_best(analysis.joint.p_best_mcse[best], close)}: {lead}.")


def decisions_sentence(analysis, scope: str) -> str:
    """Every pair's decision on the population (delta0) or on a new dataset
    (:func:`decision_clauses`)."""
    where = ("On the population of datasets (the mean difference delta0)"
             if scope == "population" else "On a new dataset")
    clauses = decision_clauses(analysis.joint.table, scope, analysis.joint.threshold)
    return f"{where}, {'; '.join(clauses)}."


def changes(base, other) -> list[tuple]:
    """The decisions of ``other`` (a pair table) that differ from ``base``'s:
    ``(pair name, question, decision in base, decision in other)``, the question
    "population" or "new dataset"."""
    found = []
    for (_, a), (_, b) in zip(base.iterrows(), other.iterrows()):
        for scope, where in (("population", "population"), ("next_dataset", "new dataset")):
            if a[f"{scope}_decision"] != b[f"{scope}_decision"]:
                found.append((pair_name(a), where, a[f"{scope}_decision"],
                              b[f"{scope}_decision"]))
    return found


def change_clauses(found, label: str = "") -> list[str]:
    """:func:`changes` as clauses, one per question and change of decision, naming its
    pairs: ``[label, ]on the population, equivalent becomes undecided for a vs b and c vs d``."""
    groups = {}
    for pair, where, before, after in found:
        groups.setdefault((where, before, after), []).append(pair)
    lead = f"{label}, " if label else ""
    return [f"{lead}on the {where}, {before} becomes {after} for {names_text(pairs)}"
            for (where, before, after), pairs in groups.items()]


def rope_sentence(analysis) -> str | None:
    """Whether any decision changes at the other ROPE widths (same draws)."""
    table = analysis.rope_sensitivity
    factors = [f for f in dict.fromkeys(table["factor"]) if f != 1.0]
    if not factors or 1.0 not in set(table["factor"]):
        return None
    base = table[table["factor"] == 1.0].reset_index(drop=True)
    clauses, widths = [], []
    for factor in factors:
        rows = table[table["factor"] == factor].reset_index(drop=True)
        low, high = (format_number(rows[end].iloc[0]) for end in ("rope_low", "rope_high"))
        widths.append(f"[{low}, {high}] ({format_number(factor)} times)")
        clauses += change_clauses(changes(base, rows),
                                  f"at {format_number(factor)} times the ROPE")
    read = f"Read from the same posterior draws with the ROPE {' and '.join(widths)}, "
    if not clauses:
        return read + "every decision stays the same."
    return read + "the decisions change: " + "; ".join(clauses) + "."


def prior_sentence(analysis) -> str | None:
    """Whether any decision changes under the other prior (read off the same draws, or a
    second fit); None when it was not read."""
    tables = list(analysis.prior_tables.items())
    if len(tables) < 2:
        return None
    (_, base), (name, other) = tables[0], tables[1]
    if name in analysis.prior_fits and not analysis.prior_fits[name].reliable:
        return (f"The refit under the {name} prior failed its sampler diagnostics, so the "
                "sensitivity to the prior is not known.")
    clauses = change_clauses(changes(base, other))
    read = (f"Under the {name} prior (the same draws, reweighted by importance sampling), "
            if name in analysis.prior_reweighted else
            f"Refitted under the {name} prior (same seed), ")
    if not clauses:
        return read + "every decision stays the same."
    return read + "the decisions change: " + "; ".join(clauses) + "."


def friedman_sentence(analysis) -> str:
    """The Friedman test and the Holm-corrected Wilcoxon pairs, beside the model."""
    f = analysis.friedman
    alpha = format_number(f.alpha)
    verb = "rejects" if f.significant else "does not reject"
    ranks = ", ".join(f"{f.algorithms[j]} {format_number(f.average_ranks[j])}"
                      for j in sorted(range(len(f.algorithms)), key=lambda j: f.average_ranks[j]))
    significant = [f"{row.first} against {row.second} (p {equals(row.holm_p)})"
                   for row in f.pairwise.itertuples() if row.holm_significant]
    holm = ("find a significant difference for " + "; ".join(significant) if significant
            else "find no significant difference")
    return (f"For comparison, the Friedman test {verb} equal average ranks at alpha = {alpha} "
            f"(chi2 = {format_number(f.statistic)}, p {equals(f.p_value)}; average ranks "
            f"{ranks}), and Wilcoxon signed-rank tests with Holm's correction {holm}.")


def unreliable_sentence(analysis) -> str:
    """No verdict: the joint fit failed its diagnostics, and why."""
    problems = "; ".join(analysis.joint.diagnostics.problems)
    return (f"The joint fit failed its sampler diagnostics ({problems}), so this analysis "
            "names no best algorithm and decides no pair.")


def sentences(analysis) -> list[str]:
    """The paragraph's sentences, in order."""
    if not analysis.joint.reliable:
        return [opening(analysis), unreliable_sentence(analysis), friedman_sentence(analysis)]
    found = [opening(analysis), best_sentence(analysis),
             decisions_sentence(analysis, "population"),
             decisions_sentence(analysis, "next_dataset"),
             rope_sentence(analysis), prior_sentence(analysis), friedman_sentence(analysis)]
    return [sentence for sentence in found if sentence is not None]


def paragraph(analysis) -> str:
    """The paragraph for the paper: :func:`sentences` joined."""
    return " ".join(sentences(analysis))
