"""Plots of the posteriors, with matplotlib (and arviz for the sampler's diagnostics).

Every function takes ``ax=None`` (a new figure is made when it is None) and returns the
Axes it drew on, except :func:`plot_diagnostics`, which returns arviz's array of Axes.
Differences are ``first - second`` as everywhere in the package (see :mod:`bayescomp.rope`):
left of the ROPE the second algorithm is better, right of it the first. Titles, axis labels
and legends name the algorithms.

The artists that carry the content have a ``gid`` (``artist.get_gid()``), so that code and
tests can find them: ``"rope"`` (the shaded ROPE), ``"posterior"`` (the density curve or the
line of a point mass), ``"probability"`` (the texts of the three probabilities), ``"points"``
(the simplex's draws), ``"vertex"`` (the simplex's corner texts), ``"raw_interval"``,
``"raw_mean"``, ``"shrunk_interval"``, ``"shrunk_mean"`` and ``"delta0"`` (the forest plot),
``"box"`` and ``"strip"`` (one per dataset in :func:`plot_differences`), ``"value"`` (the
heatmap's annotations) and ``"unreliable"`` (the heatmap's hatched cells).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .rope import PointMass, Rope, most_probable_shares, region_labels

__all__ = ["plot_posterior", "plot_simplex", "plot_shrinkage", "plot_differences",
           "plot_diagnostics", "plot_probability_heatmap", "to_simplex", "from_simplex",
           "REGION_COLORS"]

#: Colours of the regions (left: second better, rope: equivalent, right: first better).
REGION_COLORS = ("#4C72B0", "#8C8C8C", "#DD8452")
_ROPE_COLOR = "#BBBBBB"
_SQRT3_2 = np.sqrt(3.0) / 2.0


def _pyplot():
    import matplotlib.pyplot as plt
    return plt


def _new_axes(ax, figsize):
    if ax is None:
        _, ax = _pyplot().subplots(figsize=figsize, layout="constrained")
    return ax


def _difference_label(first: str, second: str) -> str:
    return f"mean difference {first} - {second}  (> 0: {first} better)"


def _shade_rope(ax, rope: Rope, label: bool = True):
    """The ROPE as a grey band (a line when it has width 0), gid ``"rope"``."""
    text = f"ROPE {rope}" if label else None
    band = ax.axvspan(rope.low, rope.high, color=_ROPE_COLOR, alpha=0.35, lw=0, label=text,
                      zorder=0)
    band.set_gid("rope")
    if rope.low == rope.high:
        ax.axvline(rope.low, color=_ROPE_COLOR, lw=2, zorder=0)
    return band


def _padded(low: float, high: float, fraction: float = 0.05) -> tuple[float, float]:
    width = high - low
    if width <= 0:
        width = max(abs(low), abs(high), 1e-3)
    return low - fraction * width, high + fraction * width


# --------------------------------------------------------------------------- posterior

def _posterior_source(result, which: str):
    """(kind, payload, probabilities, rope, first, second, title) of what plot_posterior draws."""
    if hasattr(result, "posterior") and hasattr(result.posterior, "distribution"):
        distribution = result.posterior.distribution
        title = f"Posterior of the mean difference {result.first} - {result.second}"
        title += f"\non dataset {result.dataset!r} (correlated t-test)"
        kind = "point" if isinstance(distribution, PointMass) else "analytic"
        return (kind, distribution, np.asarray(result.probabilities, dtype=float), result.rope,
                result.first, result.second, title)
    if hasattr(result, "idata") and hasattr(result, "next_masses"):
        if which == "delta0":
            draws = result.idata.posterior["delta0"].values.reshape(-1)
            probabilities = result.delta0[["p_left", "p_rope", "p_right"]].to_numpy(dtype=float)
            title = (f"Posterior of delta0, the mean difference {result.first} - {result.second}"
                     f"\nof the population of datasets ({len(result.datasets)} datasets)")
        elif which == "next":
            draws = result.idata.posterior["delta_next"].values.reshape(-1)
            probabilities = np.asarray(result.probabilities, dtype=float)
            title = (f"Predictive mean difference {result.first} - {result.second} "
                     "on the next dataset\n(hierarchical model)")
            if np.ptp(draws) > 0:
                # the predictive density is known exactly: the posterior mean of the
                # Student-t densities, which a kernel estimate of heavy-tailed draws is not
                post = result.idata.posterior
                mixture = stats.t(*(post[v].values.reshape(-1)[:, None]
                                    for v in ("nu", "delta0", "sigma0")))
                return ("mixture", (draws, mixture), probabilities, result.rope,
                        result.first, result.second, title)
        else:
            raise ValueError(f"which must be 'delta0' or 'next', got {which!r}")
        kind = "point" if np.ptp(draws) == 0 else "draws"
        payload = PointMass(draws[0]) if kind == "point" else draws
        return (kind, payload, probabilities, result.rope, result.first, result.second, title)
    raise TypeError("plot_posterior needs a CorrelatedTTestResult or a HierarchicalResult, got "
                    f"{type(result).__name__}")


def plot_posterior(result, ax=None, *, which: str = "next", digits: int = 3,
                   n_points: int = 801, bins: int = 60, title: str | None = None):
    """Posterior density of the mean difference, with the ROPE and the three probabilities.

    Parameters
    ----------
    result : CorrelatedTTestResult or HierarchicalResult
        A correlated t-test is drawn from its analytic Student-t posterior (a vertical line
        when the differences were constant and the posterior is a point mass). For a
        hierarchical result, ``which`` chooses the variable.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    which : {"next", "delta0"}
        Hierarchical results only. ``"next"``: the draws of ``delta_next``, the mean
        difference on a new dataset, with the probabilities ``result.probabilities``;
        ``"delta0"``: the draws of the population mean ``delta0``, with the probabilities
        of ``result.delta0`` (``p_left``, ``p_rope``, ``p_right``). The draws are shown as a
        histogram under a Gaussian kernel density estimate.
    digits : int
        Decimals of the probabilities written on the plot.
    n_points : int
        Points of the density curve.
    bins : int
        Bins of the histogram of the draws, over the plotted range (the central 99.5% of
        the draws and the ROPE); its heights are densities over all the draws.
    title : str, optional
        Replaces the default title, which names the algorithms.

    Returns
    -------
    matplotlib.axes.Axes
        The curve has gid ``"posterior"``, the ROPE band ``"rope"`` and the three texts
        ``"P(<second> better) = ..."``, ``"P(equivalent) = ..."``, ``"P(<first> better) = ..."``
        gid ``"probability"``. The area under the curve is coloured by region.
    """
    kind, payload, probabilities, rope, first, second, default_title = _posterior_source(
        result, which)
    ax = _new_axes(ax, (7, 4.2))
    rope = Rope.coerce(rope)

    if kind == "point":
        low, high = _padded(min(payload.loc, rope.low), max(payload.loc, rope.high), 0.25)
        line = ax.axvline(payload.loc, color="black", lw=2,
                          label=f"posterior: all mass at {payload.loc:.4g}")
        line.set_gid("posterior")
        ax.set_ylim(0, 1.45)
        ax.set_yticks([])
        peak_x = payload.loc
    else:
        if kind == "analytic":
            tails = payload.ppf([5e-4, 1 - 5e-4])
            mode = float(payload.mean())
        else:
            if kind == "mixture":
                payload, mixture = payload
            # the central 99.5%: a few far draws of a heavy tail would squash the plot
            tails = np.quantile(payload, [0.0025, 0.9975])
            mode = None
        low, high = _padded(min(tails[0], rope.low), max(tails[1], rope.high))
        # the exact mode and ROPE bounds on the grid: a true peak and crisp region edges
        grid = np.linspace(low, high, n_points)
        extra = [rope.low, rope.high] + ([mode] if mode is not None else [])
        grid = np.unique(np.concatenate([grid, extra]))
        if kind == "analytic":
            density = payload.pdf(grid)
        else:
            # density over all draws, drawn over the plotted range only
            counts, edges = np.histogram(payload, bins=np.linspace(low, high, bins + 1))
            ax.stairs(counts / (payload.size * np.diff(edges)), edges, color="#666666", lw=0.7,
                      zorder=4, label=f"histogram of {payload.size} posterior draws")
            density = mixture.pdf(grid).mean(axis=0) if kind == "mixture" else \
                stats.gaussian_kde(payload)(grid)
        line, = ax.plot(grid, density, color="black", lw=1.6, zorder=3,
                        label="posterior density" + (" (KDE)" if kind == "draws" else ""))
        line.set_gid("posterior")
        regions = (grid <= rope.low, (grid >= rope.low) & (grid <= rope.high), grid >= rope.high)
        for where, color in zip(regions, REGION_COLORS):
            ax.fill_between(grid, density, where=where, color=color, alpha=0.45, lw=0, zorder=2)
        ax.set_ylim(0, 1.45 * float(np.max(density)))
        ax.set_ylabel("posterior density")
        peak_x = float(grid[np.argmax(density)])

    _shade_rope(ax, rope)
    ax.set_xlim(low, high)
    ax.set_xlabel(_difference_label(first, second))
    ax.set_title(title if title is not None else default_title, fontsize=11)

    # the probabilities in the upper corner away from the peak
    left_side = peak_x > (low + high) / 2
    x_text, align = (0.02, "left") if left_side else (0.98, "right")
    for i, (label, p, color) in enumerate(zip(region_labels(first, second), probabilities,
                                              REGION_COLORS)):
        text = ax.text(x_text, 0.95 - 0.075 * i, f"P({label}) = {p:.{digits}f}",
                       transform=ax.transAxes, ha=align, va="top", fontsize=10,
                       color="black" if i == 1 else color, fontweight="bold")
        text.set_gid("probability")
    ax.legend(loc="upper right" if left_side else "upper left", fontsize=8, frameon=False)
    return ax


# --------------------------------------------------------------------------- simplex

def to_simplex(masses) -> np.ndarray:
    """2-D positions of (left, rope, right) masses in the triangle of :func:`plot_simplex`.

    The vertices are left ``(0, 0)``, right ``(1, 0)`` and rope ``(1/2, sqrt(3)/2)``; a point
    is the average of the vertices weighted by its masses.
    """
    masses = np.asarray(masses, dtype=float)
    return np.stack([masses[..., 1] / 2 + masses[..., 2], masses[..., 1] * _SQRT3_2], axis=-1)


def from_simplex(points) -> np.ndarray:
    """The inverse of :func:`to_simplex`: barycentric (left, rope, right) of 2-D points."""
    points = np.asarray(points, dtype=float)
    inside = points[..., 1] / _SQRT3_2
    right = points[..., 0] - inside / 2
    return np.stack([1 - inside - right, inside, right], axis=-1)


def _simplex_source(result, labels):
    if hasattr(result, "next_masses"):
        masses, names = result.next_masses, result.labels
        title = f"{result.first} - {result.second}: hierarchical model, next dataset"
    elif hasattr(result, "samples") and hasattr(result, "labels"):
        masses, names = result.samples, result.labels
        title = f"{result.first} - {result.second}: {getattr(result, 'name', 'posterior')}"
    else:
        masses, names, title = result, ("left", "rope", "right"), None
    masses = np.asarray(masses, dtype=float)
    if masses.ndim != 2 or masses.shape[1] != 3 or masses.shape[0] == 0:
        raise ValueError(f"expected posterior samples of shape (n, 3), got {masses.shape}")
    if not np.all(np.isfinite(masses)) or np.any(masses < -1e-9) or \
            np.any(np.abs(masses.sum(axis=1) - 1) > 1e-6):
        raise ValueError("each row must be (left, rope, right) masses: finite, >= 0, sum 1")
    if labels is not None:
        names = tuple(labels)
        if len(names) != 3:
            raise ValueError(f"labels must name the 3 regions (left, rope, right), got {labels!r}")
    return masses, names, title


def plot_simplex(result, ax=None, *, labels=None, max_points: int = 5000, seed=0,
                 point_size: float = 5.0, alpha: float = 0.35, digits: int = 3,
                 title: str | None = None):
    """Posterior samples of the (left, rope, right) probabilities in the probability simplex.

    The triangle of Benavoli et al. (2017, JMLR 18(77)): each vertex is one region (the
    second algorithm better at the bottom left, equivalence at the top, the first better at
    the bottom right) and each draw a point whose barycentric coordinates are its three
    probabilities. Lines from the barycentre to the midpoints of the edges split it into the
    three parts where each region is the most probable; the points are coloured by that part
    and each vertex shows the share of draws in its part
    (:func:`bayescomp.rope.most_probable_shares`, computed on all the draws). A cross marks
    the posterior mean. Unlike baycomp, the scatter is drawn whatever the mass of the ROPE.

    Parameters
    ----------
    result : HierarchicalResult, BayesianTestResult or array of shape (n, 3)
        A hierarchical result gives ``result.next_masses`` (per draw, the mass of each
        region for the next dataset); a Bayesian sign or signed-rank test its ``samples``;
        an array is used as is, each row (left, rope, right) summing to 1.
    ax : matplotlib.axes.Axes, optional
    labels : (str, str, str), optional
        Names of the regions; by default ``("<second> better", "equivalent",
        "<first> better")`` from the result, ``("left", "rope", "right")`` for an array.
    max_points : int
        At most this many points are drawn: when there are more rows, the rows
        ``numpy.sort(numpy.random.default_rng(seed).choice(n, max_points, replace=False))``.
    seed : int or numpy.random.Generator
        Seed of that subsample.
    point_size, alpha : float
        Marker area and opacity.
    digits : int
        Decimals of the shares at the vertices.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        The draws are one scatter collection with gid ``"points"`` (its offsets are
        :func:`to_simplex` of the drawn rows), the vertex texts have gid ``"vertex"``.
    """
    masses, names, default_title = _simplex_source(result, labels)
    if max_points < 1:
        raise ValueError(f"max_points must be at least 1, got {max_points}")
    shares = most_probable_shares(masses)
    mean = masses.mean(axis=0)
    if masses.shape[0] > max_points:
        rows = np.sort(np.random.default_rng(seed).choice(masses.shape[0], max_points,
                                                          replace=False))
        masses = masses[rows]
    ax = _new_axes(ax, (6.2, 6.0))

    vertices = to_simplex(np.eye(3))
    centre = to_simplex(np.full(3, 1 / 3))
    midpoints = to_simplex(np.array([[0.5, 0.5, 0], [0, 0.5, 0.5], [0.5, 0, 0.5]]))
    # the part of each region: its vertex, the midpoints of its two edges and the centre
    parts = ([vertices[0], midpoints[0], centre, midpoints[2]],
             [vertices[1], midpoints[1], centre, midpoints[0]],
             [vertices[2], midpoints[2], centre, midpoints[1]])
    for part, color in zip(parts, REGION_COLORS):
        polygon = np.array(part)
        ax.fill(polygon[:, 0], polygon[:, 1], color=color, alpha=0.10, lw=0, zorder=0)
    for midpoint in midpoints:
        ax.plot([centre[0], midpoint[0]], [centre[1], midpoint[1]], color="#555555", lw=0.9,
                ls="--", zorder=3)
    outline = np.vstack([vertices, vertices[:1]])
    ax.plot(outline[:, 0], outline[:, 1], color="black", lw=1.2, zorder=3)

    colors = np.array(REGION_COLORS)[np.argmax(masses, axis=1)]
    points = ax.scatter(*to_simplex(masses).T, s=point_size, c=colors, alpha=alpha,
                        linewidths=0, zorder=2, rasterized=masses.shape[0] > 2000)
    points.set_gid("points")
    x_mean, y_mean = to_simplex(mean)
    ax.plot([x_mean], [y_mean], marker="X", ms=9, color="black", mec="white", mew=1.0,
            ls="none", zorder=4)

    offsets = [(0, -0.05, "center", "top"), (0, 0.04, "center", "bottom"),
               (0, -0.05, "center", "top")]
    for (x, y), (dx, dy, ha, va), name, share, color in zip(vertices, offsets, names, shares,
                                                             REGION_COLORS):
        text = ax.text(x + dx, y + dy, f"{name}\n{share:.{digits}f}", ha=ha, va=va,
                       fontsize=11, color="black" if color == REGION_COLORS[1] else color,
                       fontweight="bold", linespacing=1.3)
        text.set_gid("vertex")
    ax.text(0.5, -0.27, f"Each of the {masses.shape[0]} points is a posterior draw of the three "
            "probabilities\n(its barycentric coordinates); \u2716 their mean. Corner numbers: "
            "share of\nthe draws in which that region is the most probable.",
            ha="center", va="top", fontsize=8, color="#444444")
    ax.set_aspect("equal")
    ax.set_xlim(-0.22, 1.22)
    ax.set_ylim(-0.42, _SQRT3_2 + 0.2)
    ax.axis("off")
    heading = title if title is not None else default_title
    if heading:
        ax.set_title(heading, fontsize=11)
    return ax


# --------------------------------------------------------------------------- shrinkage

def plot_shrinkage(result, ax=None, sort: bool = True, *, offset: float = 0.17,
                   title: str | None = None):
    """Forest plot of the raw and the shrunken mean difference of every dataset.

    Per dataset: the raw mean of ``first - second`` with its 95% interval of the correlated
    t-test (hollow, above) beside the hierarchical model's ``delta_i`` with its 95% HDI
    (filled, below). The ROPE is the grey band and the posterior mean of ``delta0`` a
    vertical line: the shrunken estimates are pulled towards it.

    Parameters
    ----------
    result : HierarchicalResult
    ax : matplotlib.axes.Axes, optional
    sort : bool
        Order the datasets by raw mean, the smallest at the bottom; otherwise in the order
        of ``result.datasets``, the first at the bottom.
    offset : float
        Vertical distance of each estimate from its dataset's row.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Dataset i of the chosen order is drawn at y = i with its name as tick label; the
        intervals are the segments of line collections with gid ``"raw_interval"`` and
        ``"shrunk_interval"``, the means lines ``"raw_mean"`` and ``"shrunk_mean"``.
    """
    table = result.datasets
    if sort:
        table = table.sort_values("mean", kind="stable")
    k = len(table)
    y = np.arange(k, dtype=float)
    ax = _new_axes(ax, (7.5, max(3.5, 0.42 * k + 1.8)))

    _shade_rope(ax, result.rope)
    ax.axvline(0, color="#777777", lw=0.6, zorder=0)
    d0 = float(result.delta0["mean"])
    line = ax.axvline(d0, color="#C44E52", lw=1.4, ls="--", zorder=1,
                      label=f"posterior mean of delta0 = {d0:.4g}")
    line.set_gid("delta0")
    raw = ax.hlines(y + offset, table["ttest_hdi_low"], table["ttest_hdi_high"], color="#555555",
                    lw=1.6, zorder=2)
    raw.set_gid("raw_interval")
    raw_mean, = ax.plot(table["mean"], y + offset, "o", mfc="white", mec="#555555", mew=1.4,
                        ms=6, color="#555555", zorder=3,
                        label="raw mean, correlated t-test 95% interval")
    raw_mean.set_gid("raw_mean")
    shrunk = ax.hlines(y - offset, table["delta_hdi_low"], table["delta_hdi_high"],
                       color=REGION_COLORS[0], lw=2.2, zorder=2)
    shrunk.set_gid("shrunk_interval")
    shrunk_mean, = ax.plot(table["delta_mean"], y - offset, "o", color=REGION_COLORS[0], ms=6,
                           zorder=3, label="shrunken delta_i (posterior mean), 95% HDI")
    shrunk_mean.set_gid("shrunk_mean")

    ax.set_yticks(y)
    ax.set_yticklabels([str(name) for name in table.index])
    ax.set_ylim(-0.7, k - 0.3)
    ax.set_ylabel("dataset" + (" (sorted by raw mean)" if sort else ""))
    ax.set_xlabel(_difference_label(result.first, result.second))
    ax.set_title(title if title is not None else
                 f"Shrinkage of the mean difference {result.first} - {result.second}"
                 " per dataset", fontsize=11)
    ax.grid(axis="y", color="#EEEEEE", lw=0.8)
    ax.set_axisbelow(True)
    from matplotlib.legend_handler import HandlerTuple
    from matplotlib.transforms import ScaledTranslation

    handles, labels = ax.get_legend_handles_labels()
    # each estimate's legend entry shows its interval line and its marker
    pairs = {raw_mean: (raw, raw_mean), shrunk_mean: (shrunk, shrunk_mean)}
    handles = [pairs.get(h, h) for h in handles]
    # below the x label, at a fixed distance in inches whatever the number of datasets
    below = ax.transAxes + ScaledTranslation(0, -0.47, ax.figure.dpi_scale_trans)
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0),
              bbox_transform=below, ncol=2, fontsize=8, frameon=False,
              handler_map={tuple: HandlerTuple(ndivide=1)})
    return ax


# --------------------------------------------------------------------------- differences

def plot_differences(scores, first: str, second: str, ax=None, kind: str = "box", rope=None,
                     *, sort: bool = False, seed=0, title: str | None = None):
    """The differences ``first - second`` of every split, one row per dataset.

    Parameters
    ----------
    scores : Scores
    first, second : str
        The algorithms; positive differences mean ``first`` scored higher.
    ax : matplotlib.axes.Axes, optional
    kind : {"box", "strip"}
        Box plots, or every difference as a (vertically jittered) point with the dataset's
        mean as a bar.
    rope : float, (float, float) or Rope, optional
        Shaded when given.
    sort : bool
        Order the datasets by mean difference (the smallest at the bottom) instead of
        the order of ``scores`` (the first at the bottom).
    seed : int
        Seed of the jitter of ``kind="strip"``.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Dataset i is at y = i with its name as tick label; each box (a patch) or strip (a
        scatter collection) has gid ``"box"`` or ``"strip"``.
    """
    if kind not in ("box", "strip"):
        raise ValueError(f"kind must be 'box' or 'strip', got {kind!r}")
    differences = scores.differences(first, second)
    names = list(scores.dataset_names)
    order = np.argsort([np.mean(x) for x in differences], kind="stable") if sort \
        else np.arange(len(names))
    differences = [differences[i] for i in order]
    names = [names[i] for i in order]
    k = len(names)
    y = np.arange(k, dtype=float)
    ax = _new_axes(ax, (7.5, max(3.5, 0.42 * k + 1.6)))

    if rope is not None:
        _shade_rope(ax, Rope.coerce(rope))
    ax.axvline(0, color="#777777", lw=0.6, zorder=0)
    if kind == "box":
        import matplotlib
        orientation = ({"orientation": "horizontal"}
                       if tuple(int(v) for v in matplotlib.__version__.split(".")[:2]) >= (3, 10)
                       else {"vert": False})
        parts = ax.boxplot(differences, positions=y, widths=0.55, patch_artist=True,
                           manage_ticks=False, flierprops=dict(marker=".", ms=4, alpha=0.6),
                           medianprops=dict(color="black"), **orientation)
        for box in parts["boxes"]:
            box.set(facecolor=REGION_COLORS[0], alpha=0.55, edgecolor="#333333")
            box.set_gid("box")
    else:
        rng = np.random.default_rng(seed)
        for position, x in zip(y, differences):
            strip = ax.scatter(x, position + rng.uniform(-0.22, 0.22, x.size), s=10,
                               color=REGION_COLORS[0], alpha=0.5, linewidths=0, zorder=2)
            strip.set_gid("strip")
            ax.plot([np.mean(x)] * 2, [position - 0.3, position + 0.3], color="black", lw=2,
                    zorder=3)
    ax.set_yticks(y)
    ax.set_yticklabels(names)
    ax.set_ylim(-0.7, k - 0.3)
    ax.set_ylabel("dataset")
    ax.set_xlabel(f"difference {first} - {second} per split  (> 0: {first} better)")
    what = "box plots" if kind == "box" else "every split, bar = mean"
    ax.set_title(title if title is not None else
                 f"Differences {first} - {second} on each dataset ({what})", fontsize=11)
    if rope is not None:
        ax.legend(loc="best", fontsize=8)
    return ax


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


# --------------------------------------------------------------------------- heatmap

def plot_probability_heatmap(matrix: pd.DataFrame, ax=None, annotate: bool = True, *,
                             digits: int = 2, cmap: str = "RdBu", colorbar: bool = True,
                             title: str | None = None, unreliable=None):
    """Heatmap of P(row better than column) for many algorithms.

    Parameters
    ----------
    matrix : pandas.DataFrame
        Square, with the same algorithm names as index and columns, and probabilities in
        [0, 1]; NaN (e.g. on the diagonal) is left blank.
    ax : matplotlib.axes.Axes, optional
    annotate : bool
        Write each value in its cell, with ``digits`` decimals.
    cmap : str
        A colormap; the default diverging one is white at 0.5.
    colorbar : bool
    title : str, optional
    unreliable : iterable of (str, str), optional
        Pairs whose fit failed its sampler diagnostics (e.g.
        ``AllPairsResult.unreliable_pairs()``): both of their cells are hatched and the title
        says so; their values are not decisions.

    Returns
    -------
    matplotlib.axes.Axes
        The annotations have gid ``"value"``, the hatched cells ``"unreliable"``; cell (i, j)
        is at x = j, y = i (row 0 at the top).
    """
    import matplotlib
    from matplotlib.patches import Rectangle

    if not isinstance(matrix, pd.DataFrame):
        raise TypeError(f"matrix must be a pandas DataFrame, got {type(matrix).__name__}")
    if matrix.shape[0] != matrix.shape[1] or list(matrix.index) != list(matrix.columns):
        raise ValueError("matrix must be square with the same algorithms, in the same order, "
                         f"as index and columns; got {list(matrix.index)} x {list(matrix.columns)}")
    values = matrix.to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    if np.any((finite < 0) | (finite > 1)):
        raise ValueError("matrix values must be probabilities in [0, 1]")
    n = values.shape[0]
    ax = _new_axes(ax, (max(4.5, 0.75 * n + 2.5), max(3.8, 0.65 * n + 1.8)))
    colormap = matplotlib.colormaps[cmap].with_extremes(bad="#CFCFCF")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=colormap, vmin=0, vmax=1,
                      aspect="auto")
    names = [str(name) for name in matrix.index]
    ax.set_xticks(np.arange(n))
    ax.set_yticks(np.arange(n))
    rotate = max((len(name) for name in names), default=0) > 4
    ax.set_xticklabels(names, rotation=40 if rotate else 0, ha="right" if rotate else "center")
    ax.set_yticklabels(names)
    ax.set_xlabel("column algorithm")
    ax.set_ylabel("row algorithm")
    ax.tick_params(length=0)
    if annotate:
        for i in range(n):
            for j in range(n):
                if np.isfinite(values[i, j]):
                    r, g, b, _ = colormap(values[i, j])
                    dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
                    text = ax.text(j, i, f"{values[i, j]:.{digits}f}", ha="center", va="center",
                                   fontsize=10 if n <= 8 else 8,
                                   color="white" if dark else "black")
                    text.set_gid("value")
    position = {name: k for k, name in enumerate(matrix.index)}
    marked = set()
    for pair in unreliable or ():
        a, b = pair
        if a not in position or b not in position:
            raise ValueError(f"unreliable pair {pair!r} names an algorithm not in the matrix "
                             f"{names}")
        marked |= {(position[a], position[b]), (position[b], position[a])}
    for i, j in sorted(marked):
        cell = Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", edgecolor="black",
                         linewidth=0.0, alpha=0.6)
        cell.set_gid("unreliable")
        ax.add_patch(cell)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label="P(row better than column)", fraction=0.05)
    title = title if title is not None else "P(row algorithm better than column algorithm)"
    if marked:
        title += (f"\nhatched: UNRELIABLE ({len(marked) // 2} pair(s) failed the sampler "
                  "diagnostics)")
    ax.set_title(title, fontsize=11)
    return ax
