"""How the package writes a number, in text and in JSON: one rule per kind of number.

Shared by every layer: the frequentist tests write their conclusion with it when they run,
and every summary, report, table and JSON document of :mod:`bayescomp.presentation` goes
through it, so that the same number reads the same everywhere.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

KINDS = ("number", "probability", "p_value")


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


def format_value(value) -> str:
    """A number, or a tuple of numbers as ``(a, b)``, with six significant digits: how a
    test's details (``ClassicalTestResult.details``) are written."""
    if isinstance(value, (tuple, list, np.ndarray)):
        return "(" + ", ".join(format_value(v) for v in value) + ")"
    return format_number(value, digits=6)


def json_value(value):
    """A number, a tuple of numbers (as a list) or anything else (as its text), for JSON."""
    if isinstance(value, (tuple, list, np.ndarray)):
        return [json_value(v) for v in value]
    return json_number(value) if isinstance(value, (int, float, np.number)) else str(value)


def first_few(items, separator: str = ", ", limit: int = 5) -> str:
    """At most ``limit`` of ``items`` (strings) joined by ``separator``, and how many more
    there are: what a warning names when it may concern many datasets."""
    items = list(items)
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return separator.join(items[:limit]) + more


def effective_draws(ess: dict, modes: bool = False, quadrature: bool = False,
                    mixed: bool = False) -> str:
    """A fit's ``settings["ess"]`` (``target``, smallest ``bulk`` and ``tail`` ESS of what it
    reports) as every summary writes it: "1234 bulk, 987 tail (target 1000)". For a fit read
    as ``modes`` the sentence says what that pooled ESS counts: on a real near-identical
    pair it was 11 (the chains cross rarely between the modes) while each mode's
    probabilities had Monte Carlo errors below 0.001. For a fit the ``quadrature`` answered,
    it says that no reported number is read off those draws: draws that did not mix, or
    (``mixed``) draws that mixed but left a probability too close to the threshold."""
    text = f"{ess['bulk']:.0f} bulk, {ess['tail']:.0f} tail (target {ess['target']}"
    if quadrature:
        text += (f"; of the draws{'' if mixed else ' that did not mix'}, which no number "
                 "reported here is read from")
    elif modes:
        text += ("; over chains read as modes it counts their crossings, not the precision "
                 "of each mode's probabilities, whose Monte Carlo errors are shown with them")
    return text + ")"


def names_text(names) -> str:
    """Names as a sentence lists them: ``a``, ``a and b``, ``a, b and c``."""
    names = [str(name) for name in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
