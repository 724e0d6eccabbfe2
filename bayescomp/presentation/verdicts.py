"""Verdict sentences, shared by every result, report and table.

Every verdict goes through :func:`verdict` (and every number through
:func:`bayescomp.formatting.format_number`), so that ``summary()``, the Markdown and
LaTeX reports, the all-pairs table and the CLI say the same thing in the same words:

>>> verdict([0.88, 0.11, 0.01], "nbc", "hnb", scope="On the population (delta0)")
'On the population (delta0): undecided, P(hnb better) = 0.8800 < 0.95.'
>>> verdict([0.97, 0.03, 0.0], "nbc", "hnb", scope="On the next dataset")
'On the next dataset: hnb is better than nbc, P(hnb better) = 0.9700 >= 0.95.'

Probabilities are (left, rope, right) of ``first - second`` as everywhere in the package
(see :mod:`bayescomp.rope`): left means the second algorithm is better.
"""
from __future__ import annotations

import numpy as np

from bayescomp.decisions import (MC_MARGIN, MODES_DISAGREE, THRESHOLD, UNRELIABLE, decide,
                                 leaders, too_close)
from bayescomp.formatting import format_number, json_number, names_text, probability
from bayescomp.rope import region_labels

#: how a hierarchical result's verdicts open, per scope
SCOPE_OPENINGS = {"population": "On the population of datasets (delta0)",
                  "next_dataset": "On the next dataset"}


def verdict(probabilities, first: str, second: str, *, threshold: float = THRESHOLD,
            scope: str | None = None, rope=None, reliable: bool = True,
            digits: int = 4, decision: str | None = None, mcse=None) -> str:
    """The verdict on ``first - second`` in one sentence naming the algorithms.

    Parameters
    ----------
    probabilities : array-like of 3 floats
        P(left), P(rope), P(right): the second better, equivalent, the first better.
    first, second : str
        Algorithm names.
    threshold : float
        Probability a region needs, in (0.5, 1].
    scope : str, optional
        What the verdict is about, e.g. ``"On the population (delta0)"``; it opens the
        sentence, followed by a colon.
    rope : Rope, optional
        Named in an equivalence verdict.
    reliable : bool
        False for a fit that failed its sampler diagnostics: the sentence says there is no
        verdict instead of reading the probabilities.
    digits : int
        Decimals of the probabilities.
    mcse : array-like of 3 floats, optional
        Monte Carlo standard errors of probabilities estimated from draws: a region decides
        only with a margin of two of them, and a sentence says when the margin decided.
    decision : str, optional
        The decision of a posterior whose chains sit in several modes (the one every mode
        makes, or ``"undecided (the modes disagree)"``); the sentence then says so.

    Returns
    -------
    str
        ``"<scope>: <winner> is better than <loser>, P(<winner> better) = p >= t."``,
        ``"<scope>: <first> and <second> are practically equivalent (ROPE r), P(equivalent)
        = p >= t."``, ``"<scope>: undecided, P(<most probable>) = p < t."`` or
        ``"<scope>: no verdict, the sampler failed its diagnostics (unreliable)."``.
    """
    opening = f"{scope}: " if scope else ""
    if not reliable:
        return f"{opening}no verdict, the sampler failed its diagnostics (unreliable)."
    if decision == MODES_DISAGREE:
        return (f"{opening}no decision, the posterior's modes disagree (each mode's verdict "
                "and weight are listed with the modes).")
    probabilities = np.asarray(probabilities, dtype=float)
    labels = region_labels(first, second)
    region = decide(probabilities, threshold, mcse=mcse)
    limit = format_number(threshold)
    if decision is not None:
        return (verdict(probabilities, first, second, threshold=threshold, scope=scope,
                        rope=rope, digits=digits)
                + " Every mode of the posterior makes this decision, so any mixture of "
                "them does.")
    if region == "undecided":
        top = int(np.argmax(probabilities))
        if too_close(probabilities, threshold, mcse):
            return (f"{opening}undecided, P({labels[top]}) = "
                    f"{probability(probabilities[top], digits)} is within "
                    f"{MC_MARGIN:g} Monte Carlo errors ({format_number(mcse[top])} each) of "
                    f"{limit}: on another seed it could fall on either side; more draws "
                    "(iter_sampling) can decide.")
        return (f"{opening}undecided, P({labels[top]}) = "
                f"{probability(probabilities[top], digits)} < {limit}.")
    index = ("left", "rope", "right").index(region)
    evidence = f"P({labels[index]}) = {probability(probabilities[index], digits)} >= {limit}."
    if region == "rope":
        within = f" (ROPE {rope})" if rope is not None else ""
        return f"{opening}{first} and {second} are practically equivalent{within}, {evidence}"
    winner, loser = (second, first) if region == "left" else (first, second)
    return f"{opening}{winner} is better than {loser}, {evidence}"


def verdict_dict(probabilities, first: str, second: str, *, threshold: float = THRESHOLD,
                 scope: str | None = None, rope=None, reliable: bool = True,
                 decision: str | None = None, mcse=None) -> dict:
    """The verdict as JSON-ready data: probabilities keyed by region names, the decision
    (``"<name> better"``, ``"equivalent"``, ``"undecided"``, ``"undecided (the modes
    disagree)"`` or ``"unreliable (sampling problems)"``), the threshold and the sentence of
    :func:`verdict` (``decision`` as there)."""
    probabilities = np.asarray(probabilities, dtype=float)
    labels = region_labels(first, second)
    sentence = verdict(probabilities, first, second, threshold=threshold, scope=scope,
                       rope=rope, reliable=reliable, decision=decision, mcse=mcse)
    if not reliable:
        decision = UNRELIABLE
    elif decision is None:
        decision = decide(probabilities, threshold, labels=labels, mcse=mcse)
    data = {"probabilities": {label: json_number(p) for label, p in zip(labels, probabilities)},
            "decision": decision, "threshold": float(threshold), "sentence": sentence}
    if mcse is not None:
        data["mcse"] = {label: json_number(e) for label, e in zip(labels, mcse)}
    return data


def rope_dict(rope) -> dict:
    """A ROPE as ``{"low": ..., "high": ...}``."""
    return {"low": json_number(rope.low), "high": json_number(rope.high)}


def undecided_best(error: float, close: bool) -> str:
    """The clause a best-algorithm sentence adds where the most probably best algorithm's
    P(best) lies within two Monte Carlo errors (``error``) of the threshold (``close``, from
    :func:`bayescomp.decisions.best_algorithm`); empty otherwise."""
    if not close:
        return ""
    return (f" (its P(best) is within {MC_MARGIN:g} Monte Carlo errors ({format_number(error)} "
            "each) of the threshold: on another seed it could fall on either side)")


def most_probably_best(p_best, gap_mcse, write) -> str:
    """Who leads when no algorithm is named best: "<best> is the most probably best
    (<P>), then <runner> (<P>)", or, where several share the largest P(best) to the Monte
    Carlo errors of their gaps to it, ``gap_mcse`` (:func:`bayescomp.decisions.leaders`),
    "<a>, <b> and <c> share the largest P(best) (<P> to <P>)". ``write`` renders a P(best)
    as the sentence's style wants it."""
    ahead = leaders(p_best, gap_mcse)
    if len(ahead) > 1:
        low, high = p_best[ahead].min(), p_best[ahead].max()
        shared = (f"{write(high)} each" if write(low) == write(high)
                  else f"{write(low)} to {write(high)}")
        return f"{names_text(ahead)} share the largest P(best) ({shared})"
    rest = p_best.drop(ahead[0]).sort_values(ascending=False, kind="stable")
    runner = (f", then {rest.index[0]} ({write(rest.iloc[0])})" if len(rest) else "")
    return f"{ahead[0]} is the most probably best ({write(p_best[ahead[0]])}){runner}"
