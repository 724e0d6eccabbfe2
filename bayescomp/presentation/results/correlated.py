"""How a :class:`~bayescomp.models.correlated.CorrelatedTTestResult` reads: its verdict, its
summary, its report (title, facts, table) and its JSON document."""
from __future__ import annotations

import pandas as pd

from bayescomp.decisions import THRESHOLD
from bayescomp.formatting import equals, format_number, json_number, probability
from bayescomp.presentation.verdicts import rope_dict, verdict, verdict_dict


def verdicts(result, threshold: float = THRESHOLD) -> list[str]:
    """The verdict on the result's dataset in one sentence (:func:`~bayescomp.presentation.verdicts.verdict`)."""
    return [verdict(result.probabilities, result.first, result.second, threshold=threshold,
                    scope=f"On dataset {result.dataset!r}", rope=result.rope)]


def to_dict(result, threshold: float = THRESHOLD) -> dict:
    """Every number :func:`summary` shows, JSON-ready (NaN as None), regions keyed by the
    algorithms' names (``"<second> better"``, ``"equivalent"``, ``"<first> better"``)."""
    p = result.posterior
    low, high = result.interval()
    return {
        "test": "correlated t-test", "first": result.first, "second": result.second,
        "dataset": result.dataset, "rope": rope_dict(result.rope), "n": p.n,
        "rho": json_number(p.rho), "mean": json_number(p.mean),
        "scale": json_number(p.scale), "hdi_95": [json_number(low), json_number(high)],
        "verdict": verdict_dict(result.probabilities, result.first, result.second,
                                threshold=threshold, scope=f"On dataset {result.dataset!r}",
                                rope=result.rope),
        "nadeau_bengio": {"t": json_number(result.nb_statistic), "df": p.df,
                          "p_value": json_number(result.nb_p_value),
                          f"p_{result.first}_better": json_number(result.nb_p_greater),
                          f"p_{result.second}_better": json_number(result.nb_p_less)},
    }


def summary(result) -> str:
    """The test in a few lines: the verdict, the posterior and the Nadeau-Bengio test."""
    p = result.posterior
    low, high = result.interval()
    left, equal, right = result.labels
    n = format_number
    return "\n".join([
        f"Bayesian correlated t-test: {result.first} - {result.second} on dataset {result.dataset!r}",
        *result.verdicts(),
        f"  n = {p.n} scores, rho = {n(p.rho)}, ROPE = {result.rope}",
        f"  mean difference {n(p.mean)}, posterior scale {n(p.scale)}, "
        f"95% HDI [{n(low)}, {n(high)}]",
        f"  P({left}) = {probability(result.probabilities[0])}   "
        f"P({equal}) = {probability(result.probabilities[1])}   "
        f"P({right}) = {probability(result.probabilities[2])}",
        f"  Nadeau-Bengio corrected t = {n(result.nb_statistic)}, df = {p.df}, "
        f"p {equals(result.nb_p_value)} (two-sided)",
    ])


def report(result):
    """(title, headline facts, table) of the Markdown, LaTeX and HTML reports."""
    p = result.posterior
    low, high = result.interval()
    left, equal, right = result.labels
    table = pd.DataFrame([{
        "dataset": result.dataset, "n": p.n, "rho": p.rho, "mean": p.mean,
        "95% HDI": f"[{format_number(low)}, {format_number(high)}]",
        f"P({left})": result.probabilities[0], f"P({equal})": result.probabilities[1],
        f"P({right})": result.probabilities[2], "Nadeau-Bengio p": result.nb_p_value}])
    facts = [f"ROPE {result.rope}; differences are {result.first} - {result.second}"]
    return (f"Bayesian correlated t-test: {result.first} vs {result.second} on {result.dataset}",
            facts, table)
