"""How a :class:`~bayescomp.models.joint_result.JointResult` reads: its verdicts, summary,
report (title, facts, table) and JSON document."""
from __future__ import annotations

import pandas as pd

from bayescomp.decisions import SCOPE_NAMES, best_algorithm
from bayescomp.formatting import effective_draws, format_number, json_number
from bayescomp.presentation.reports import text_table
from bayescomp.presentation.verdicts import (most_probably_best, rope_dict, undecided_best,
                                            verdict, verdict_dict)

SCOPES = ("population", "next_dataset")


def best_sentence(result, threshold: float) -> str:
    """One sentence on the best algorithm (ranks of the population means)."""
    best = result.best
    top = f"{result.p_best[best]:.3f}"
    if not result.reliable:
        return (f"Best algorithm: no verdict, the fit is {result.UNRELIABLE} ({best} "
                f"looked most probably best, P = {top}).")
    ties = f"ties within the ROPE {result.rope} share their ranks"
    if result.modes and not result.modes_weighed:
        # P(best) of a mixture of modes whose weights are not known is not known either
        return (f"Best algorithm: no verdict, the chains sit in several modes whose weights "
                f"are not estimated ({best} has the largest P(rank 1) over the chains "
                f"as sampled, {top}; {ties}).")
    if result.modes:
        ties += "; the modes mixed by their estimated weights"
    named, close = best_algorithm(result.p_best, result.p_best_mcse, result.p_best_gap_mcse,
                                  threshold)
    if named:
        return (f"{best} has the best population mean of the {len(result.p_best)} "
                f"algorithms, P(rank 1) = {top} >= {format_number(threshold)} ({ties}).")
    lead = most_probably_best(result.p_best, result.p_best_gap_mcse,
                              lambda v: f"P(rank 1) = {v:.3f}")
    return (f"No algorithm is best with probability {format_number(threshold)}"
            f"{undecided_best(result.p_best_mcse[best], close)}: {lead}; {ties}.")


def verdicts(result, threshold: float) -> list[str]:
    """The best algorithm's sentence, then one per pair and question."""
    lines = [best_sentence(result, threshold)]
    for (first, second), population in result.population.items():
        for scope, estimate in (("population", population),
                                ("next_dataset", result.next_dataset[(first, second)])):
            lines.append(verdict(estimate.probabilities, first, second, threshold=threshold,
                                 scope=f"{first} vs {second}, {SCOPE_NAMES[scope]}",
                                 rope=result.rope, reliable=result.reliable,
                                 decision=estimate.decision(threshold) if result.modes else None,
                                 mcse=estimate.mcse))
    return lines


def with_scope_columns(shown: pd.DataFrame, table: pd.DataFrame, first: str = "first",
                       second: str = "second") -> pd.DataFrame:
    """``shown`` with, for both questions, P(``first`` better), P(equivalent), P(``second``
    better) and the decision read from a pair table's ``<scope>_p_right``, ``_p_rope``,
    ``_p_left`` and ``_decision`` columns, named by the question."""
    for scope in SCOPES:
        where = f"{SCOPE_NAMES[scope]}: "
        shown[f"{where}P({first} better)"] = table[f"{scope}_p_right"]
        shown[f"{where}P(equivalent)"] = table[f"{scope}_p_rope"]
        shown[f"{where}P({second} better)"] = table[f"{scope}_p_left"]
        shown[f"{where}decision"] = table[f"{scope}_decision"]
    return shown


def display_table(result) -> pd.DataFrame:
    """The pair table with column names that say whose probability each is."""
    t = result.table
    shown = pd.DataFrame({"first": t["first"], "second": t["second"],
                          "delta0": t["delta0_mean"],
                          "95% HDI": [f"[{a:.4f}, {b:.4f}]" for a, b in
                                      zip(t["delta0_hdi_low"], t["delta0_hdi_high"])]})
    return with_scope_columns(shown, t)


def ranks_frame(result) -> pd.DataFrame:
    """Each algorithm's mean effect (relative to the mean of all) and P(rank r), the most
    probably best first (as the verdict names them; ties keep the algorithms' order)."""
    frame = result.rank_probabilities.copy()
    frame.columns = [f"P(rank {r})" for r in frame.columns]
    frame.insert(0, "mean effect", result.population_draws.mean(axis=0))
    return frame.loc[result.p_best.sort_values(ascending=False, kind="stable").index]


def _description(result) -> str:
    s = result.settings
    return (f"Joint hierarchical model of {len(result.algorithms)} algorithms on "
            f"{s['datasets']} datasets (one posterior, differences first - second, ROPE "
            f"{result.rope}; prior {s['prior']}; backend {s['backend']}, seed {s['seed']}; "
            f"posterior median of nu {s['nu_median']:.3g}; ESS of the reported quantities "
            f"{effective_draws(s['ess'], bool(result.modes))}; {s['seconds']:.1f} s)")


def modes_lines(result) -> list[str]:
    """What the summary says of chains that did not mix but settled (none when they mixed)."""
    if not result.modes:
        return []
    rule = (" A pair's decision stands only where every mode makes it: any mixture of the "
            "modes then makes it too.")
    if not result.modes_separate:
        return ["Modes: the chains move slowly between modes of the posterior; each chain "
                "was read on its own." + rule + " Chains that cross are not weighed, so the "
                "probabilities shown, P(best) and the ranks mix the chains as sampled."]
    chains = "; ".join(", ".join(str(c + 1) for c in part) for part in result.modes)
    head = (f"Modes: the chains settled in {len(result.modes)} separate modes of the "
            f"posterior (chains {chains}), each passing its diagnostics." + rule)
    if result.modes_weighed:
        weights = "; ".join(f"{w:.3f} +- {e:.3f}" for w, e in
                            zip(result.mode_weights, result.mode_weight_errors))
        return [head + f" Weights (posterior mass by bridge sampling, with standard errors): "
                f"{weights}; the probabilities shown, P(best) and the ranks mix the modes by "
                "them."]
    return [head + f" The modes' weights are not estimated ({result.weights_note}), so the "
            "probabilities shown, P(best) and the ranks mix the chains as sampled."]


def floored_by_pair(result) -> dict:
    """``(first, second) -> [dataset, ...]``: the datasets where the scores' resolution, not
    the splits, sets the noise of a pair's differences (``datasets.floored``), for the pairs
    that have any, in the pair table's order."""
    rows = result.datasets[result.datasets["floored"]]
    found = {}
    for _, row in result.table.iterrows():
        pair = rows[(rows["first"] == row["first"]) & (rows["second"] == row["second"])]
        if len(pair):
            found[(row["first"], row["second"])] = [str(name) for name in pair["dataset"]]
    return found


def floor_lines(result) -> list[str]:
    """One line per pair whose noise the floor sets on some datasets (none if no pair's)."""
    return [f"  {first} - {second}: noise set by the floor (the scores' resolution / "
            f"sqrt(12)), not by the splits, on {len(names)} dataset(s): {', '.join(names)}"
            for (first, second), names in floored_by_pair(result).items()]


def summary(result) -> str:
    """The fit in text: verdicts, the pair table, the ranks and the sampler's diagnostics."""
    lines = [] if result.reliable else [
        "UNRELIABLE: the joint fit failed its sampler diagnostics after its retries; its "
        "probabilities are not a decision."]
    lines += [_description(result), *result.verdicts(),
              text_table(display_table(result), index=False),
              "Ranks of the population means (mean effect: relative to the mean of all "
              "algorithms; ties within the ROPE share their ranks):",
              text_table(ranks_frame(result)), *floor_lines(result), *modes_lines(result),
              result.diagnostics.summary()]
    return "\n".join(lines)


def to_dict(result) -> dict:
    """Every number the summary shows, JSON-ready, each pair's probabilities keyed by the
    algorithms' names."""
    pairs = []
    floored = floored_by_pair(result)
    for _, row in result.table.iterrows():
        first, second = row["first"], row["second"]
        entry = {"first": first, "second": second, "reliable": bool(row["reliable"]),
                 "floored": floored.get((first, second), []),
                 "delta0": {"mean": json_number(row["delta0_mean"]),
                            "hdi_low": json_number(row["delta0_hdi_low"]),
                            "hdi_high": json_number(row["delta0_hdi_high"])}}
        for scope, estimates in (("population", result.population),
                                 ("next_dataset", result.next_dataset)):
            estimate = estimates[(first, second)]
            entry[scope] = verdict_dict(
                estimate.probabilities, first, second, threshold=result.threshold,
                scope=f"{first} vs {second}, {SCOPE_NAMES[scope]}", rope=result.rope,
                reliable=bool(row["reliable"]), mcse=estimate.mcse,
                decision=estimate.decision(result.threshold) if result.modes else None)
        pairs.append(entry)
    d = result.diagnostics
    return {"method": "joint", "algorithms": list(result.algorithms),
            "n_datasets": int(result.settings["datasets"]), "rope": rope_dict(result.rope),
            "threshold": result.threshold, "seed": json_number(result.settings["seed"]),
            "reliable": result.reliable, "best": best_sentence(result, result.threshold),
            "modes": ({"kind": ("separate modes" if result.modes_separate
                                else "chains crossing between modes"),
                       "chains": [[c + 1 for c in part] for part in result.modes],
                       "weights": [json_number(w) for w in result.mode_weights],
                       "weight_errors": [json_number(e) for e in result.mode_weight_errors],
                       "weights_note": result.weights_note}
                      if result.modes else None),
            "pairs": pairs,
            "p_best": {name: json_number(v) for name, v in result.p_best.items()},
            "p_best_mcse": {name: json_number(v) for name, v in result.p_best_mcse.items()},
            "p_best_gap_mcse": {name: json_number(v)
                                for name, v in result.p_best_gap_mcse.items()},
            "rank_probabilities": {name: [json_number(v) for v in row]
                                   for name, row in result.rank_probabilities.iterrows()},
            "diagnostics": {"ok": d.ok, "problems": list(d.problems),
                            "max_rhat": json_number(d.max_rhat),
                            "min_ess_bulk": json_number(d.min_ess_bulk),
                            "min_ess_tail": json_number(d.min_ess_tail),
                            "divergences": d.divergences},
            "settings": {**{k: v for k, v in result.settings.items()
                            if isinstance(v, (str, int, float, bool, type(None)))},
                         "ess": {k: json_number(v) for k, v in result.settings["ess"].items()}}}


def report(result):
    """(title, headline facts, table) of the Markdown, LaTeX and HTML reports."""
    d = result.diagnostics
    facts = [_description(result),
             "ranks: " + ", ".join(
                 f"P({name} best) = {p:.3f}"
                 for name, p in result.p_best.sort_values(ascending=False, kind="stable").items()),
             f"sampler: {d.verdict} (max R-hat {d.max_rhat:.3f}, min ESS "
             f"{min(d.min_ess_bulk, d.min_ess_tail):.0f}, {d.divergences} divergences)",
             *(line.strip() for line in floor_lines(result))]
    title = f"Joint comparison of {len(result.algorithms)} algorithms"
    if not result.reliable:
        title += " (UNRELIABLE)"
        facts.insert(0, "UNRELIABLE: " + "; ".join(d.problems))
    return title, facts, display_table(result)
