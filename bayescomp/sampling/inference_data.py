"""Stan's draws (any engine) as ArviZ InferenceData: the one converter of the package.

Both engines return Stan's output columns (the sampler's ``lp__``, ``accept_stat__``, ...
and the flattened variables ``B.1.2``), so one function gives both the same groups, names,
shapes and dtypes, with the names ArviZ's converters use for the sampler's statistics.
"""
from __future__ import annotations

import re

import numpy as np

SAMPLE_STATS = ("diverging", "tree_depth", "energy", "lp", "step_size", "n_steps", "acceptance_rate")
_STAT_NAMES = {
    "lp__": "lp", "accept_stat__": "acceptance_rate", "stepsize__": "step_size",
    "treedepth__": "tree_depth", "n_leapfrog__": "n_steps", "divergent__": "diverging",
    "energy__": "energy",
}
_STAT_DTYPES = {"divergent__": bool, "n_leapfrog__": np.int64, "treedepth__": np.int64}
_INDEX = re.compile(r"^(.+?)((?:\.\d+)*)$")


def variables(columns: list) -> list:
    """[(name, shape, first column)] of Stan's flattened columns, in their order.

    Stan flattens column-major and names every cell ``name.i.j``; the largest index of each
    position is that dimension's size. Variables of size 0 have no column and are left out.
    """
    found, order = {}, []
    for position, column in enumerate(columns):
        name, indices = _INDEX.match(column).groups()
        index = [int(i) for i in indices.split(".")[1:]]
        if name not in found:
            found[name] = [position, index, 0, position]
            order.append(name)
        entry = found[name]
        entry[3] = position
        if len(index) != len(entry[1]):
            raise RuntimeError(f"Stan column {column!r} has {len(index)} indices, "
                               f"{name} elsewhere {len(entry[1])}")
        entry[1] = [max(a, b) for a, b in zip(entry[1], index)]
        entry[2] += 1
    result = []
    for name in order:
        first, shape, count, last = found[name]
        if count != int(np.prod(shape)) or last - first + 1 != count:
            raise RuntimeError(f"Stan's columns of {name} are not one complete block")
        result.append((name, tuple(shape), first))
    return result


def build(draws, code: str, attrs: dict):
    """InferenceData with ``posterior``, ``sample_stats`` and, for ``log_lik``, ``log_likelihood``.

    Parameters
    ----------
    draws : bayescomp.sampling.engine.Draws
        Columns and values (chains, draws, columns) from an engine.
    code : str
        The Stan program: integer generated quantities stay integers.
    attrs : dict
        Recorded in the attrs of the object and of its posterior and sample_stats groups.

    Returns
    -------
    arviz.InferenceData
        Sampler statistics named as in :data:`SAMPLE_STATS` (``diverging`` boolean,
        ``tree_depth`` and ``n_steps`` integers); a generated quantity ``log_lik`` goes to
        ``log_likelihood`` when ArviZ's ``data.log_likelihood`` setting is on (its default).
    """
    import arviz as az

    try:  # what az.from_pystan and az.from_cmdstan use to keep integer quantities integers
        from arviz.data.base import infer_stan_dtypes
    except ImportError:
        infer_stan_dtypes = lambda code: {}  # noqa: E731

    values = np.asarray(draws.values, dtype=np.float64)
    columns = list(draws.columns)
    if values.ndim != 3 or values.shape[2] != len(columns):
        raise RuntimeError(f"the {attrs.get('backend')} engine returned draws of shape "
                           f"{values.shape} for {len(columns)} columns")
    stats = [c for c in columns if c.endswith("__")]
    if columns[:len(stats)] != stats:
        raise RuntimeError(f"Stan's sampler columns are not first: {columns}")
    missing = [c for c in _STAT_NAMES if c not in stats]
    if missing:
        raise RuntimeError(f"the {attrs.get('backend')} fit lacks sampler statistics {missing}")
    dtypes = infer_stan_dtypes(code)
    log_lik = "log_lik" if az.rcParams["data.log_likelihood"] is True else None

    posterior, log_likelihood = {}, {}
    for name, shape, first in variables(columns[len(stats):]):
        size = int(np.prod(shape))
        block = values[:, :, len(stats) + first:len(stats) + first + size]
        # column-major flattening: the first index varies fastest
        block = block.reshape(*block.shape[:2], *reversed(shape))
        block = block.transpose(0, 1, *range(block.ndim - 1, 1, -1)).astype(dtypes.get(name))
        (log_likelihood if name == log_lik else posterior)[name] = block
    sample_stats = {}
    for index, stat in enumerate(stats):
        name = _STAT_NAMES.get(stat, stat.removesuffix("__"))
        sample_stats[name] = values[:, :, index].astype(_STAT_DTYPES.get(stat, np.float64))

    groups = {"posterior": _dataset(posterior, attrs), "sample_stats": _dataset(sample_stats, attrs)}
    if log_likelihood:
        groups["log_likelihood"] = _dataset(log_likelihood, {})
    idata = az.InferenceData(**groups)
    idata.attrs.update(attrs)
    return idata


def _dataset(variables_: dict, attrs: dict):
    """``az.dict_to_dataset(variables_, attrs=attrs)``, built in one step.

    ArviZ builds and aligns one DataArray per variable: 15 ms per group, a tenth of a whole
    warm fit of the 54-dataset benchmark.
    """
    import arviz as az
    import xarray as xr
    from arviz.data.base import make_attrs

    origin = az.rcParams["data.index_origin"]
    data_vars, coords = {}, {}
    for name, values in variables_.items():
        dims = ["chain", "draw"] + [f"{name}_dim_{i}" for i in range(values.ndim - 2)]
        for axis, (dim, size) in enumerate(zip(dims, values.shape)):
            coords[dim] = np.arange(size) if axis < 2 else np.arange(origin, origin + size)
        data_vars[name] = (dims, values)
    return xr.Dataset(data_vars, coords=coords, attrs=make_attrs(attrs=attrs))
