"""The paragraph of a paper's report (:func:`bayescomp.models.paper_analysis.paper_analysis`):
one sentence per finding, each written from the numbers of the analysis it is given.

Every number a sentence prints is a value of the analysis, rounded as printed
(probabilities to :data:`DIGITS` decimals, p-values as the classical tests print them), and
every decision is the pair table's (its decision already holds the margin of two Monte Carlo
errors): a sentence never decides anything itself. When the joint fit failed its sampler
diagnostics the paragraph names no best algorithm and decides no pair.
"""
from __future__ import annotations

from bayescomp.formatting import equals, format_number, probability

#: decimals of the probabilities in the paragraph
DIGITS = 3


def names_text(names) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def _p(value) -> str:
    return probability(value, DIGITS)


def pair_phrase(row, scope: str) -> str:
    """What a row of the pair table (``first``, ``second``, ``<scope>_p_left`` ... and
    ``<scope>_decision``) decides, in a clause naming the algorithms: the winner and P(it is
    better), the equivalence and P(equivalent), or, undecided, the three probabilities."""
    first, second = row["first"], row["second"]
    left, inside, right = (row[f"{scope}_p_{region}"] for region in ("left", "rope", "right"))
    decision = row[f"{scope}_decision"]
    if decision == f"{first} better":
        return f"{first} is better than {second} (P = {_p(right)})"
    if decision == f"{second} better":
        return f"{second} is better than {first} (P = {_p(left)})"
    if decision == "equivalent":
        return f"{first} and {second} are practically equivalent (P = {_p(inside)})"
    return (f"{first} against {second} is undecided (P({first} better) = {_p(right)}, "
            f"P(equivalent) = {_p(inside)}, P({second} better) = {_p(left)})")


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
    ranked = analysis.joint.p_best.sort_values(ascending=False)
    threshold = analysis.joint.threshold
    best, p = ranked.index[0], ranked.iloc[0]
    if analysis.joint.modes and not analysis.joint.modes_weighed:
        # P(best) of a mixture of modes whose weights are not known is not known either
        return (f"No algorithm is named the best: the posterior has several modes whose "
                f"weights are not estimated (over the chains as sampled, {best} has the "
                f"largest P(best) = {_p(p)}).")
    if p >= threshold:
        return (f"{best} is the best algorithm with probability {_p(p)} (its population "
                f"mean ranks first; algorithms within the ROPE share a rank).")
    return (f"No algorithm is the best with probability {format_number(threshold)}: {best} "
            f"is the most probably best, P(best) = {_p(p)}, then {ranked.index[1]} "
            f"({_p(ranked.iloc[1])}).")


def decisions_sentence(analysis, scope: str) -> str:
    """Every pair's decision on the population (delta0) or on a new dataset."""
    where = ("On the population of datasets (the mean difference delta0)"
             if scope == "population" else "On a new dataset")
    phrases = [pair_phrase(row, scope) for _, row in analysis.joint.table.iterrows()]
    return f"{where}, {'; '.join(phrases)}."


def _changes(base, other, label: str) -> list[str]:
    """The decisions of ``other`` (a pair table) that differ from ``base``'s, one clause each."""
    changes = []
    for (_, a), (_, b) in zip(base.iterrows(), other.iterrows()):
        for scope, where in (("population", "population"), ("next_dataset", "new dataset")):
            if a[f"{scope}_decision"] != b[f"{scope}_decision"]:
                changes.append(f"{a['first']} against {a['second']} on the {where} "
                               f"({a[f'{scope}_decision']} becomes {b[f'{scope}_decision']} "
                               f"{label})")
    return changes


def rope_sentence(analysis) -> str | None:
    """Whether any decision changes at the other ROPE widths (same draws)."""
    table = analysis.rope_sensitivity
    factors = [f for f in dict.fromkeys(table["factor"]) if f != 1.0]
    if not factors or 1.0 not in set(table["factor"]):
        return None
    base = table[table["factor"] == 1.0].reset_index(drop=True)
    changes, widths = [], []
    for factor in factors:
        rows = table[table["factor"] == factor].reset_index(drop=True)
        low, high = (format_number(rows[end].iloc[0]) for end in ("rope_low", "rope_high"))
        widths.append(f"[{low}, {high}] ({format_number(factor)} times)")
        changes += _changes(base, rows, f"at {format_number(factor)} times the ROPE")
    read = f"Read from the same posterior draws with the ROPE {' and '.join(widths)}, "
    if not changes:
        return read + "every decision stays the same."
    return read + "the decisions change for " + "; ".join(changes) + "."


def prior_sentence(analysis) -> str | None:
    """Whether any decision changes under the other prior (a second fit); None when that
    fit was not made."""
    fits = list(analysis.prior_fits.items())
    if len(fits) < 2:
        return None
    (_, base), (name, other) = fits[0], fits[1]
    if not other.reliable:
        return (f"The refit under the {name} prior failed its sampler diagnostics, so the "
                "sensitivity to the prior is not known.")
    changes = _changes(base.table, other.table, f"under the {name} prior")
    read = f"Refitted under the {name} prior (same seed), "
    if not changes:
        return read + "every decision stays the same."
    return read + "the decisions change for " + "; ".join(changes) + "."


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
