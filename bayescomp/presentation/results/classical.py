"""How a frequentist test reads: the summary and the JSON document of a
:class:`~bayescomp.baselines.classical_result.ClassicalTestResult`, and the summary of a
:class:`~bayescomp.baselines.friedman.FriedmanResult`."""
from __future__ import annotations

import numpy as np

from bayescomp.formatting import equals, format_number, format_value, json_number, json_value


def names(result) -> str:
    """The algorithms as the summary names them: ``first - second`` for two (their
    difference is tested), else a list."""
    return " - ".join(result.algorithms) if len(result.algorithms) == 2 \
        else ", ".join(result.algorithms)


def summary(result) -> str:
    """The test in a few lines: statistic and p-values, details, conclusion, notes."""
    settings = ", ".join(f"{k}={v!r}" for k, v in result.options)
    used = "" if result.n_used in (None, result.n) else f", {result.n_used} used"
    side = "two-sided" if result.alternative == "two-sided" else "one-sided"
    lines = [f"{result.name}: {names(result)} on {result.n} {result.unit}"
             + (f" ({settings})" if settings else ""),
             f"  {result.statistic_name} = {format_number(result.statistic, digits=6)}"
             f"{df_text(result.df)}{used}, {side} p {equals(result.p_value)}"]
    if result.p_greater is not None:
        first, second = result.algorithms
        lines.append(f"  one-sided p (H1: {first} better) {equals(result.p_greater)}, "
                     f"one-sided p (H1: {second} better) {equals(result.p_less)}")
    lines += [f"  {key} = {format_value(value)}" for key, value in result.details]
    if result.conclusion:
        lines.append(f"  {result.conclusion}")
    lines += [f"  note: {note}" for note in result.notes]
    return "\n".join(lines)


def to_dict(result) -> dict:
    """The test as JSON-ready data; one-sided p-values keyed by the better algorithm."""
    data = {"test": result.name, **result.counts()}
    if result.n_used is not None:
        data["n_used"] = result.n_used
    data |= {"statistic_name": result.statistic_name, "statistic": json_number(result.statistic),
             "p_value": json_number(result.p_value)}
    if result.df is not None:
        data["df"] = list(result.df) if isinstance(result.df, tuple) else result.df
    if result.alternative != "two-sided":
        data["alternative"] = result.alternative
    if result.p_greater is not None:
        first, second = result.algorithms
        data |= {f"p_{first}_better": json_number(result.p_greater),
                 f"p_{second}_better": json_number(result.p_less)}
    if result.alpha is not None:
        data |= {"alpha": result.alpha, "significant": result.significant,
                 "conclusion": result.conclusion}
    data["options"] = {k: json_number(v) if isinstance(v, (int, float)) else str(v)
                       for k, v in result.options}
    if result.details:
        data["details"] = {k: json_value(v) for k, v in result.details}
    data["notes"] = list(result.notes)
    return data


def df_text(df) -> str:
    """``", df = k"`` or ``", df = (k1, k2)"`` to follow a statistic; empty without df."""
    if df is None:
        return ""
    if isinstance(df, tuple):
        return f", df = ({format_number(df[0])}, {format_number(df[1])})"
    return f", df = {format_number(df)}"


def friedman_summary(result) -> str:
    """The summary of a Friedman test and its post-hoc tests."""
    k, n = len(result.algorithms), result.n_datasets
    better = "highest" if result.higher_is_better else "lowest"
    lines = [
        f"Friedman test: {k} algorithms on {n} datasets (rank 1 = {better} score)",
        f"  chi2 = {format_number(result.statistic, digits=6)}, df = {result.df}, "
        f"p {equals(result.p_value)}; Iman-Davenport F = "
        f"{format_number(result.iman_davenport, digits=6)}, df = {result.iman_davenport_df}, "
        f"p {equals(result.iman_davenport_p)}",
        "  average ranks:",
    ]
    width = max(len(a) for a in result.algorithms)
    for j in np.argsort(result.average_ranks, kind="stable"):
        lines.append(f"    {result.algorithms[j]:<{width}}  "
                     f"{format_number(result.average_ranks[j])}")
    lines.append(f"  Nemenyi: q_{format_number(result.alpha)} = "
                 f"{format_number(result.q_alpha)}, "
                 f"CD = {format_number(result.critical_difference, digits=5)}")
    groups = "; ".join("{" + ", ".join(g) + "}" for g in result.groups) or "none"
    lines.append(f"  not significantly different (Nemenyi): {groups}")
    table = result.pairwise.to_string(index=False, float_format=format_number)
    lines += ["  pairwise post-hoc tests:"] + ["    " + row for row in table.splitlines()]
    lines.append(f"  {result.conclusion}")
    lines += [f"  note: {note}" for note in result.notes]
    return "\n".join(lines)
