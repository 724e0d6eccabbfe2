"""Checks of the arguments that every layer takes alike."""
from __future__ import annotations


def check_count(value, what: str, least: int = 0) -> int:
    """``value`` of the argument ``what`` as an int, if it is a whole number of at least
    ``least`` (0: a count such as ``retries``; 1: a size or a target such as ``ess``); an
    integral float counts too, as counts read from tables often are, a bool or a string
    does not. Else a ValueError naming the argument."""
    try:
        valid = (not isinstance(value, (bool, str, bytes)) and int(value) == value
                 and value >= least)
    except (TypeError, ValueError, OverflowError):
        valid = False
    if not valid:
        kind = {0: "a non-negative integer", 1: "a positive integer"}.get(
            least, f"an integer of at least {least}")
        raise ValueError(f"{what} must be {kind}, got {value!r}")
    return int(value)
