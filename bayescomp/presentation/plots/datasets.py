"""Per-dataset figures: the shrinkage forest plot and the differences of every split.

Both order the datasets by one rule (:func:`bayescomp.presentation.plots.common.dataset_order`), so that
their rows line up when the figures are read side by side. Both are bounded at any number of
datasets: up to ``max_named`` (40) rows each row is named; beyond, the figure keeps a fixed
height, draws every row unlabelled and names the extremes only
(:func:`bayescomp.presentation.plots.common.name_rows`), so that a thousand datasets give a
figure a viewer, libpng or LaTeX can open (not 63,000 pixels tall).
"""
from __future__ import annotations

import numpy as np
from typing import TYPE_CHECKING

from bayescomp.rope import Rope
from bayescomp.presentation.plots.common import MAX_NAMED, REGION_COLORS, dataset_order, \
    difference_label, finish, name_rows, new_axes, rows_height, shade_rope
from bayescomp.presentation.plots.protocols import HierarchicalLike

if TYPE_CHECKING:
    from bayescomp.annotations import RopeLike, SeedLike
    from bayescomp.data.scores import Scores
    from matplotlib.axes import Axes


# --------------------------------------------------------------------------- shrinkage

def plot_shrinkage(result: HierarchicalLike, ax: Axes | None = None, sort: bool = True, *,
                   offset: float = 0.17, max_named: int = MAX_NAMED,
                   title: str | None = None) -> Axes:
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
        Order the datasets by raw mean difference, the smallest at the bottom (as
        :func:`plot_differences` does by default, so that the rows line up); otherwise in
        the order of ``result.datasets``, the first at the bottom.
    offset : float
        Vertical distance of each estimate from its dataset's row.
    max_named : int
        Most datasets named one per row; with more, the figure has a fixed height and names
        the three lowest and highest only (sorted, these are the extreme differences).
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Dataset i of the chosen order is drawn at y = i, named by its tick label (or, beyond
        ``max_named``, the extremes by texts with gid ``"name"``); the intervals are the
        segments of line collections with gid ``"raw_interval"`` and ``"shrunk_interval"``,
        the means lines ``"raw_mean"`` and ``"shrunk_mean"``.
    """
    table = result.datasets
    table = table.iloc[dataset_order(table["mean"], sort)]
    k = len(table)
    y = np.arange(k, dtype=float)
    ax = new_axes(ax, (7.5, rows_height(k, 1.8, max_named)))
    # thinner lines and markers when the rows are dense: a band of intervals, not a blot
    dense = k > max_named
    lw, ms = (0.6, 1.5) if dense else (1.0, 6)

    shade_rope(ax, result.rope)
    ax.axvline(0, color="#777777", lw=0.6, zorder=0)
    d0 = float(result.population.mean)
    line = ax.axvline(d0, color="#C44E52", lw=1.4, ls="--", zorder=1,
                      label=f"posterior mean of delta0 = {d0:.4g}")
    line.set_gid("delta0")
    raw = ax.hlines(y + offset, table["ttest_hdi_low"], table["ttest_hdi_high"], color="#555555",
                    lw=1.6 * lw, zorder=2, alpha=0.6 if dense else 1)
    raw.set_gid("raw_interval")
    raw_mean, = ax.plot(table["mean"], y + offset, "o", mfc="white", mec="#555555",
                        mew=1.4 * lw, ms=ms, color="#555555", zorder=3,
                        label="raw mean, correlated t-test 95% interval")
    raw_mean.set_gid("raw_mean")
    shrunk = ax.hlines(y - offset, table["delta_hdi_low"], table["delta_hdi_high"],
                       color=REGION_COLORS[0], lw=2.2 * lw, zorder=2)
    shrunk.set_gid("shrunk_interval")
    shrunk_mean, = ax.plot(table["delta_mean"], y - offset, "o", color=REGION_COLORS[0], ms=ms,
                           zorder=3, label="shrunken delta_i (posterior mean), 95% HDI")
    shrunk_mean.set_gid("shrunk_mean")

    named = name_rows(ax, table.index, max_named)
    ax.set_ylim(-0.7, k - 0.3)
    ax.set_ylabel(_rows_label(k, len(named), sort))
    ax.set_xlabel(difference_label(result.first, result.second))
    ax.set_title(title if title is not None else
                 f"Shrinkage of the mean difference {result.first} - {result.second}"
                 " per dataset", fontsize=11)
    if not dense:
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
    return finish(ax)


def _rows_label(k: int, named: int, sort: bool) -> str:
    """The y label: what the rows are, and which are named when not all are."""
    if named == k:
        return "dataset" + (" (sorted by mean difference)" if sort else "")
    which = ("the lowest and highest" if sort else "the first and last")
    return f"{k} datasets{' sorted by mean difference' if sort else ''}; {which} {named // 2} named"


# --------------------------------------------------------------------------- differences

def plot_differences(scores: Scores, first: str, second: str, ax: Axes | None = None,
                     kind: str = "box", rope: RopeLike | None = None, *, sort: bool = True,
                     seed: SeedLike = 0, max_named: int = MAX_NAMED,
                     title: str | None = None) -> Axes:
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
        Order the datasets by mean difference, the smallest at the bottom: the order of
        :func:`plot_shrinkage`, whose rows then line up with these. False keeps the order
        of ``scores`` (the first at the bottom).
    seed : int
        Seed of the jitter of ``kind="strip"``.
    max_named : int
        Most datasets drawn and named one per row as ``kind`` says. With more, the figure
        has a fixed height, each dataset is its interquartile range (a line) and median (a
        dot), whatever ``kind``, and only the three extreme datasets at each end are named.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Dataset i is at y = i, named by its tick label (beyond ``max_named``, the extremes
        by texts with gid ``"name"``); each box (a patch) or strip (a scatter collection)
        has gid ``"box"`` or ``"strip"``; the compact form's quartile ranges are the
        segments of a line collection with gid ``"quartiles"``, its medians a line
        ``"median"``.
    """
    if kind not in ("box", "strip"):
        raise ValueError(f"kind must be 'box' or 'strip', got {kind!r}")
    differences = scores.differences(first, second)
    names = list(scores.dataset_names)
    order = dataset_order([np.mean(x) for x in differences], sort)
    differences = [differences[i] for i in order]
    names = [names[i] for i in order]
    k = len(names)
    y = np.arange(k, dtype=float)
    ax = new_axes(ax, (7.5, rows_height(k, 1.6, max_named)))

    if rope is not None:
        shade_rope(ax, Rope.coerce(rope))
    ax.axvline(0, color="#777777", lw=0.6, zorder=0)
    if k > max_named:  # a thousand boxes or strips in a few inches would be a blot
        quartiles = np.array([np.percentile(x, [25, 50, 75]) for x in differences])
        ranges = ax.hlines(y, quartiles[:, 0], quartiles[:, 2], color=REGION_COLORS[0],
                           lw=0.8, alpha=0.7, label="interquartile range")
        ranges.set_gid("quartiles")
        medians, = ax.plot(quartiles[:, 1], y, "o", color="black", ms=1.2, label="median")
        medians.set_gid("median")
        what = "interquartile range and median"
    elif kind == "box":
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
    named = name_rows(ax, names, max_named)
    ax.set_ylim(-0.7, k - 0.3)
    ax.set_ylabel(_rows_label(k, len(named), sort))
    ax.set_xlabel(f"difference {first} - {second} per split  (> 0: {first} better)")
    if k <= max_named:
        what = "box plots" if kind == "box" else "every split, bar = mean"
    ax.set_title(title if title is not None else
                 f"Differences {first} - {second} on each dataset ({what})", fontsize=11)
    if rope is not None or k > max_named:
        ax.legend(loc="best", fontsize=8)
    return finish(ax)

