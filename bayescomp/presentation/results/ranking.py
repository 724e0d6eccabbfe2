"""How a :class:`~bayescomp.models.ranking_result.RankingResult` reads: its verdict, its summary, its
report (title, facts, table) and its JSON document."""
from __future__ import annotations

import pandas as pd

from bayescomp.decisions import THRESHOLD, best_algorithm
from bayescomp.formatting import effective_draws
from bayescomp.presentation.verdicts import most_probably_best, undecided_best


def verdict(result, threshold: float = THRESHOLD) -> str:
    """One sentence naming the best algorithm, or the most probably best when none
    reaches ``threshold`` by two Monte Carlo errors (as every decision of the package)."""
    named, close = best_algorithm(result.p_best, result.p_best_mcse, result.p_best_gap_mcse,
                                  threshold)
    best = result.best
    top = f"{result.p_best[best]:.3f}"
    rank, s = result.expected_rank.loc[best], result.settings
    interval = (f"posterior mean rank of its worth {rank['mean']:.2f}, {s['interval']:.0%} "
                f"interval [{rank['low']:.0f}, {rank['high']:.0f}]; mean observed rank "
                f"{result.observed_ranks[best].mean():.2f} on the {s['datasets']} datasets, "
                f"ties within the ROPE {s['rope']:g}")
    if not result.reliable:
        return (f"No verdict, the fit is {result.UNRELIABLE}: {best} looked most probably "
                f"best (P = {top}).")
    if named:
        return (f"{best} is the best of the {len(result.p_best)} algorithms: its "
                f"Plackett-Luce worth is the largest with posterior probability {top} "
                f"({interval}).")
    lead = most_probably_best(result.p_best, result.p_best_gap_mcse, lambda v: f"P = {v:.3f}")
    return (f"No algorithm is best with probability {threshold}"
            f"{undecided_best(result.p_best_mcse[best], close)}: {lead}; {best}: {interval}.")


def to_dict(result) -> dict:
    """Plain Python (JSON-able) numbers: verdict, per-algorithm table, rank
    probabilities, diagnostics and settings."""
    return {
        "verdict": verdict(result), "best": result.best, "reliable": result.reliable,
        "algorithms": {name: {k: float(v) for k, v in row.items()}
                       for name, row in result.to_frame().iterrows()},
        "rank_probabilities": {name: [float(v) for v in row]
                               for name, row in result.rank_probabilities.iterrows()},
        "p_best_mcse": {name: float(v) for name, v in result.p_best_mcse.items()},
        "p_best_gap_mcse": {name: float(v) for name, v in result.p_best_gap_mcse.items()},
        "diagnostics": {"ok": result.diagnostics.ok, "problems": list(result.diagnostics.problems),
                        "max_rhat": result.diagnostics.max_rhat,
                        "min_ess_bulk": result.diagnostics.min_ess_bulk},
        "ess": dict(result.settings["ess"]),
        "attempts": [dict(a) for a in result.settings["attempts"]],
        "settings": {k: v for k, v in result.settings.items()
                     if isinstance(v, (str, int, float, bool, type(None)))},
    }


def summary(result) -> str:
    """The ranking in text: the verdict, the per-algorithm table, the probability of each
    rank (its rows in the table's order) and the sampler's diagnostics."""
    s = result.settings
    frame = result.to_frame()
    lines = [
        f"Plackett-Luce ranking of {len(result.algorithms)} algorithms on {s['datasets']} "
        f"datasets (ROPE {s['rope']:g}; ties: {s['ties']}, {s['tied_datasets']} "
        f"dataset(s) with ties; "
        f"Dirichlet prior {s['prior_text']}; backend {s['backend']}, seed {s['seed']})",
        verdict(result), meaning(result), sampling_line(result),
        "Per algorithm (worth_mean: probability of ranking first on a new dataset; "
        "rank_*: rank of the worth; mean_observed_rank: on the datasets):",
        frame.to_string(float_format=lambda v: f"{v:.4g}"),
        "Probability of each rank (rows: algorithms, columns: ranks):",
        # the rows in the order of the table above (by the rank of the worth)
        result.rank_probabilities.loc[frame.index].to_string(float_format=lambda v: f"{v:.3f}"),
        result.diagnostics.summary(),
    ]
    return "\n".join(lines)


def sampling_line(result) -> str:
    """The draws behind the probabilities: their number, the worths' ESS against the target,
    the largest P(best)'s Monte Carlo error and the fits it took."""
    s = result.settings
    extra = len(s["attempts"]) - 1
    return (f"{s['chains']} chains x {s['iter_sampling']} draws; ESS of the worths "
            f"{effective_draws(s['ess'])}; Monte Carlo error of P(best) "
            f"{result.p_best_mcse[result.best]:.4f}; {s['seconds']:.1f} s"
            + (f" in {extra + 1} fits (extended or retried from where the chains were)"
               if extra else ""))


def meaning(result) -> str:
    """What the ROPE and the ranks are, in one sentence."""
    return (f"On each dataset, algorithms whose mean scores are within the ROPE "
            f"{result.settings['rope']:g} of the best of their group tie "
            f"({result.settings['direction']}); the rank of a worth is its place among the "
            "worths (1 = largest, the algorithm most likely first on a new dataset), not "
            "the mean observed rank.")


def report(result):
    """(title, headline facts, table) of the Markdown, LaTeX and HTML reports."""
    s = result.settings
    frame = result.to_frame()
    table = pd.DataFrame({
        "P(best)": frame.p_best, "rank of the worth (mean)": frame.rank_mean,
        f"{s['interval']:.0%} interval": [f"[{a:.0f}, {b:.0f}]" for a, b in
                                         zip(frame.rank_low, frame.rank_high)],
        "worth": frame.worth_mean,
        "worth HDI": [f"[{a:.3f}, {b:.3f}]" for a, b in
                      zip(frame.worth_hdi_low, frame.worth_hdi_high)],
        "mean observed rank": frame.mean_observed_rank}, index=frame.index)
    facts = [
        verdict(result), meaning(result),
        f"{s['datasets']} datasets ranked by mean score; ties {s['ties']} "
        f"({s['tied_datasets']} dataset(s) with ties); Dirichlet prior {s['prior_text']}",
        f"sampler: {result.diagnostics.verdict} (max R-hat {result.diagnostics.max_rhat:.3f}, "
        f"min ESS {min(result.diagnostics.min_ess_bulk, result.diagnostics.min_ess_tail):.0f} "
        f"(target {s['ess']['target']}), "
        f"{result.diagnostics.divergences} divergences); backend {s['backend']}, seed {s['seed']}",
    ]
    title = f"Plackett-Luce ranking of {len(result.algorithms)} algorithms"
    return title, facts, table
