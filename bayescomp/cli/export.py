"""``--json`` and ``--csv``: every number the command prints, for scripts.

Every command's JSON document is one envelope (:func:`envelope`): ``schema_version``
(:data:`SCHEMA_VERSION`, raised when a key changes meaning or goes away), ``bayescomp`` (the
version), ``command``, the command's own parts (``comparison``, ``all_pairs``, ``cache``,
or the ranking's keys), ``exit_code`` and ``warnings`` (the lines shown, without
``warning: ``). Results are their ``to_dict()`` (probabilities keyed by the regions' names,
which name the algorithms: ``"tree better"``, ``"equivalent"``, ``"forest better"``). The
CSV file is the same document flattened to two columns, ``key`` and ``value``: a key is the
path of a number in the JSON with list items named by their dataset or pair, e.g.
``comparison/delta0/verdict/probabilities/forest better``.
"""
from __future__ import annotations

import csv
import io
import json
import math

import numpy as np


#: version of the envelope's layout; scripts check it before reading the document
SCHEMA_VERSION = 1


def version() -> str:
    """The installed version of bayescomp."""
    try:
        from importlib.metadata import version
        return version("bayescomp")
    except Exception:   # not installed (a checkout on sys.path): the package's own number
        from bayescomp import __version__
        return __version__


def envelope(command: str, exit_code: int, warnings, **parts) -> dict:
    """The JSON document of ``command``: the keys every command shares around ``parts``.

    Parameters
    ----------
    command : str
        The command's name, e.g. ``"compare"``.
    exit_code : int
        The exit code the command returns.
    warnings : iterable of str
        The warnings shown on stderr, in order, without the ``warning: `` prefix.
    **parts
        The command's own keys (its inputs and results), placed between ``command`` and
        ``exit_code``.

    Returns
    -------
    dict
        ``schema_version``, ``bayescomp``, ``command``, ``parts``, ``exit_code``,
        ``warnings``.
    """
    shared = {"schema_version", "bayescomp", "command", "exit_code", "warnings"}
    clash = shared.intersection(parts)
    if clash:
        raise ValueError(f"the envelope's own keys cannot be parts: {sorted(clash)}")
    return {"schema_version": SCHEMA_VERSION, "bayescomp": version(), "command": command,
            **parts, "exit_code": int(exit_code), "warnings": list(warnings)}


def plain(value):
    """``value`` with numpy scalars and arrays as Python numbers and lists, NaN as None."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if value is None or isinstance(value, str):
        return value
    if hasattr(value, "low") and hasattr(value, "high"):   # a Rope
        return {"low": plain(value.low), "high": plain(value.high)}
    return str(value)


def result_dict(result) -> dict:
    """A result as JSON-ready data: its ``to_dict()``, else its table's rows."""
    to_dict = getattr(result, "to_dict", None)
    if callable(to_dict):
        return plain(to_dict())
    return {"rows": plain(result.to_frame().reset_index().to_dict(orient="records"))}


def all_pairs_dict(result) -> dict:
    """An :class:`~bayescomp.AllPairsResult` with one entry per pair, regions named: its
    ``to_dict()`` and the counts its summary's headline prints."""
    return plain({"n_algorithms": len(result.algorithms), "n_pairs": len(result.table)}
                 | result.to_dict())


def to_json(document: dict) -> str:
    return json.dumps(plain(document), indent=2, ensure_ascii=False) + "\n"


def _item_name(item, index: int) -> str:
    if isinstance(item, dict):
        if "dataset" in item and isinstance(item["dataset"], str):
            return item["dataset"]
        if "first" in item and "second" in item:
            return f"{item['first']} vs {item['second']}"
        if "attempt" in item:
            return f"attempt {item['attempt']}"
    return str(index)


def flatten(value, path=()):
    """(key path, value) of every leaf of a JSON-ready document."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from flatten(item, path + (str(key),))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from flatten(item, path + (_item_name(item, index),))
    else:
        yield path, value


def to_csv(document: dict) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["key", "value"])
    for path, value in flatten(plain(document)):
        writer.writerow(["/".join(path), "" if value is None else value])
    return buffer.getvalue()
