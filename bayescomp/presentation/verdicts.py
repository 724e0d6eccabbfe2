"""Verdict sentences and number formatting, shared by every result, report and table.

Every text the package prints goes through :func:`format_number` (one rule per kind of
number) and every verdict through :func:`verdict`, so that ``summary()``, the Markdown and
LaTeX reports, the all-pairs table and the CLI say the same thing in the same words:

>>> verdict([0.88, 0.11, 0.01], "nbc", "hnb", scope="On the population (delta0)")
'On the population (delta0): undecided, P(hnb better) = 0.8800 < 0.95.'
>>> verdict([0.97, 0.03, 0.0], "nbc", "hnb", scope="On the next dataset")
'On the next dataset: hnb is better than nbc, P(hnb better) = 0.9700 >= 0.95.'

Probabilities are (left, rope, right) of ``first - second`` as everywhere in the package
(see :mod:`bayescomp.rope`): left means the second algorithm is better.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from bayescomp.decisions import MC_MARGIN, MODES_DISAGREE, UNRELIABLE, decide, too_close
from bayescomp.rope import region_labels

#: The default probability a region needs for a decision.
THRESHOLD = 0.95
KINDS = ("number", "probability", "p_value")
#: how a hierarchical result's verdicts open, per scope
SCOPE_OPENINGS = {"population": "On the population of datasets (delta0)",
                  "next_dataset": "On the next dataset"}


def format_number(value, kind: str = "number", digits: int = 4, nan: str = "n/a") -> str:
    """One number as text, by one rule per kind; never ``-0``, never ``np.float64(...)``.

    Parameters
    ----------
    value : float, int, bool, None or anything else
        Non-numbers are returned as ``str(value)``; None and NaN as ``nan``.
    kind : {"number", "probability", "p_value"}
        ``"number"``: ``digits`` significant digits, positional from 1e-4 to 1e6 and
        scientific outside (``3.1e-7``); magnitudes below 1e-12, the rounding noise of
        differences of scores, print as ``0``. ``"probability"``: ``digits`` decimals
        (``0.9500``), clipped to [0, 1]. ``"p_value"``: like a number, but below
        ``10**-digits`` as ``< 0.0001`` (digits 4): smaller p-values say nothing more.
    digits : int
    nan : str
        Text of a missing value (NaN or None); tables use ``""``.

    Examples
    --------
    >>> [format_number(v) for v in (-0.0, 2.927e-17, 0.0123456, 123456.7, 1234567.0, float("nan"))]
    ['0', '0', '0.01235', '123457', '1.235e+6', 'n/a']
    >>> format_number(-1e-9, "probability"), format_number(3e-9, "p_value")
    ('0.0000', '< 0.0001')
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if value is None:
        return nan
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, Integral):
        return str(int(value))
    if not isinstance(value, Real):
        return str(value)
    value = float(value)
    if math.isnan(value):
        return nan
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if kind == "probability":
        # + 0.0 turns -0.0 into 0.0
        return f"{min(max(value, 0.0), 1.0) + 0.0:.{digits}f}"
    if kind == "p_value" and value < 10.0 ** -digits:
        return f"< {10.0 ** -digits:.{digits}f}"
    if abs(value) < 1e-12:
        return "0"
    if 10.0 ** digits <= abs(value) < 1e6:
        return f"{value:.0f}"
    if 1e-4 <= abs(value) < 1e6:
        return f"{value:.{digits}g}"
    return f"{value:.{max(digits - 1, 0)}e}".replace("e-0", "e-").replace("e+0", "e+")


def equals(value, kind: str = "p_value", digits: int = 4) -> str:
    """``"= 0.0312"``, or ``"< 0.0001"`` for a p-value below the printed precision: text to
    follow a name, as in ``f"p {equals(p)}"``."""
    text = format_number(value, kind, digits)
    return text if text.startswith("<") else f"= {text}"


def probability(value, digits: int = 4) -> str:
    """Shorthand for ``format_number(value, "probability", digits)``."""
    return format_number(value, "probability", digits)


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
    region = decide(probabilities, threshold)
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


def json_number(value):
    """A float for JSON: numpy scalars as Python numbers, NaN and infinities as None."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, Integral):
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else None


def rope_dict(rope) -> dict:
    """A ROPE as ``{"low": ..., "high": ...}``."""
    return {"low": json_number(rope.low), "high": json_number(rope.high)}


def mode_lines(result) -> list[str]:
    """The lines that show the modes of a hierarchical result whose chains settled in
    several: per mode its chains, weight, location, diagnostics and both verdicts."""
    left, equal, right = result.labels
    if result.modes_separate:
        lines = [f"Modes: the chains settled in {len(result.modes)} separate modes of the "
                 "posterior (more sampling does not make chains cross between them); each mode "
                 "passes the diagnostics on its own chains. Weights: posterior mass by "
                 "reciprocal importance sampling (nan: not estimable; the chains then count "
                 "alike)."]
    else:
        lines = ["Modes: the chains move slowly between modes of the posterior (nu and sigma0 "
                 "do not mix), so each chain is shown on its own, unweighed; every chain makes "
                 "the same decisions with a margin of two Monte Carlo errors, so any mixture "
                 "of what they sampled does. The intervals of nu, sigma0 and delta_i are "
                 "less certain than they look; to weigh the modes, run longer."]
    lines.append(f"  probabilities: P({left}) / P({equal}) / P({right})")
    name = "mode" if result.modes_separate else "chain"
    for k, mode in enumerate(result.modes, 1):
        where = ", ".join(f"{name} {format_number(value)}"
                          for name, value in mode.location.items())
        per_scope = []
        for scope, masses, errors in (
                ("delta0", mode.population, mode.population_mcse),
                ("next dataset", mode.next_dataset, mode.next_dataset_mcse)):
            decision = decide(masses, THRESHOLD, labels=result.labels, mcse=errors)
            per_scope.append(f"{scope} {' / '.join(probability(p) for p in masses)} "
                             f"({decision})")
        chains = ", ".join(str(c + 1) for c in mode.chains)
        lines.append(f"  {name} {k}: chains {chains}; weight {format_number(mode.weight)}; "
                     f"{where}; R-hat {format_number(mode.max_rhat)}, min ESS "
                     f"{format_number(min(mode.min_ess_bulk, mode.min_ess_tail))}; "
                     + "; ".join(per_scope))
    agreed = [result.population.decision(), result.next_dataset.decision()]
    lines.append("  " + ("Every mode makes the same decisions: any mixture of these modes gives "
                         "them." if MODES_DISAGREE not in agreed else
                         "The modes disagree: no decision where they do."))
    return lines
