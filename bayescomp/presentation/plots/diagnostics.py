"""Trace and rank plots of the hierarchical model's chains, drawn by arviz."""
from __future__ import annotations

import numpy as np


# --------------------------------------------------------------------------- diagnostics

def plot_diagnostics(result, kind: str = "trace", var_names=("delta0", "sigma0", "nu"),
                     **kwargs):
    """Trace or rank plots of the hierarchical model's chains, drawn by arviz.

    Parameters
    ----------
    result : HierarchicalResult or arviz.InferenceData
    kind : {"trace", "rank"}
        ``arviz.plot_trace`` (density and trace of each chain) or ``arviz.plot_rank``
        (rank histograms, flat when the chains mix).
    var_names : sequence of str
        Variables of ``result.idata.posterior``: delta0, sigma0, nu, alpha, beta,
        delta_next, or the per-dataset delta and sigma.
    **kwargs
        Passed to the arviz function.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
        arviz's layout: (variables x 2) for a trace plot, one Axes per panel for ranks
        (always an array, also for a single panel).
    """
    import arviz as az

    if kind not in ("trace", "rank"):
        raise ValueError(f"kind must be 'trace' or 'rank', got {kind!r}")
    idata = getattr(result, "idata", result)
    var_names = [var_names] if isinstance(var_names, str) else list(var_names)
    unknown = [v for v in var_names if v not in idata.posterior]
    if unknown:
        raise ValueError(f"unknown variable(s) {unknown}; the posterior has "
                         f"{list(idata.posterior.data_vars)}")
    plot = az.plot_trace if kind == "trace" else az.plot_rank
    axes = np.atleast_1d(np.asarray(plot(idata, var_names=var_names, **kwargs), dtype=object))
    figure = axes.flat[0].figure
    if "ax" not in kwargs:
        # arviz's own figure: keep the titles off the tick labels of the panel above
        figure.set_layout_engine("constrained")
    if hasattr(result, "first"):
        figure.suptitle(f"{kind.capitalize()} plots of the hierarchical model "
                        f"{result.first} - {result.second}", fontsize=11)
    return axes

