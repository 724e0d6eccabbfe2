"""Figures of all pairwise comparisons: the three regions per pair, and a heatmap."""
from __future__ import annotations

import numpy as np
import pandas as pd
from typing import TYPE_CHECKING

from bayescomp.decisions import SCOPE_NAMES, SCOPES
from bayescomp.presentation.plots.common import REGION_COLORS, clean_text, new_axes, finish
from bayescomp.presentation.plots.protocols import AllPairsLike

if TYPE_CHECKING:
    from matplotlib.axes import Axes


# --------------------------------------------------------------------------- heatmap

def plot_probability_heatmap(source, ax: Axes | None = None, annotate: bool = True, *,
                             which: str | None = None, digits: int = 2, cmap: str = "Blues",
                             colorbar: bool = True, title: str | None = None,
                             unreliable=None) -> Axes:
    """All pairs of many algorithms as a matrix: the three regions of every pair, or one
    probability per cell.

    Given ``compare_all``'s result (or its table), each cell (row a, column b) is a bar of
    the three regions of ``a - b``: P(b better), P(equivalent), P(a better), left to right
    in the colours of :func:`plot_all_pairs`, with the three numbers under it; by default
    for the population (delta0) of the hierarchical model. Equivalent algorithms give grey
    cells both ways, not two cells that look like defeats. A pair whose fit failed its
    sampler diagnostics is hatched, faded and marked UNRELIABLE in its cell.

    Given a square matrix (e.g. ``AllPairsResult.probability_matrix()``), each cell is
    its one number, P(row better than column) by more than the ROPE, on a sequential
    scale from white (0): P(equivalent) is not shown.

    Parameters
    ----------
    source : AllPairsResult, pandas.DataFrame (its table) or square pandas.DataFrame
        The result or its table (with ``first``, ``second`` and the ``<scope>_p_*``
        columns; differences ``first - second``, "right" = first better),
        or a matrix with the same algorithms as index and columns, probabilities in [0, 1],
        NaN (the diagonal) left blank.
    ax : matplotlib.axes.Axes, optional
    annotate : bool
        Write the numbers in the cells, with ``digits`` decimals.
    which : {"population", "next_dataset", "dataset"}, optional
        Result or table only: for the hierarchical model the population
        (``population_p_*``, the default) or the next dataset (``next_dataset_p_*``); the
        correlated t-test has only ``dataset``.
    cmap : str
        Matrix only: a colormap for values from 0 (white with the default) to 1.
    colorbar : bool
        Matrix only.
    title : str, optional
    unreliable : iterable of (str, str), optional
        Matrix only: pairs whose fit failed its sampler diagnostics (e.g.
        ``AllPairsResult.unreliable_pairs()``); a result or table says it in ``reliable``.
        Both cells are hatched and the title says so.

    Returns
    -------
    matplotlib.axes.Axes
        Cell (i, j) is at x = j, y = i (row 0 at the top). The numbers have gid
        ``"value"``, the hatched cells ``"unreliable"``; with a result, the three parts of
        each bar are Rectangles with gid ``"segment"`` (widths proportional to P(column
        better), P(equivalent), P(row better)).
    """
    if isinstance(source, pd.DataFrame) and "first" not in source.columns:
        return _matrix_heatmap(source, ax, annotate, digits, cmap, colorbar, title, unreliable)
    if unreliable is not None:
        raise ValueError("unreliable= is for a matrix; a result or table has its 'reliable' column")
    rows, what, rope = _pairs_source(source, which)
    return _regions_heatmap(rows, what, rope, ax, annotate, digits, title)


def _regions_heatmap(rows, what, rope, ax, annotate, digits, title):
    """The three-region matrix of :func:`plot_probability_heatmap`."""
    from matplotlib.patches import Patch, Rectangle

    names = list(dict.fromkeys(name for row in rows for name in row[:2]))
    position = {name: k for k, name in enumerate(names)}
    n = len(names)
    ax = new_axes(ax, (max(5.0, 1.25 * n + 2.2), max(4.0, 0.95 * n + 2.2)))
    width, low, height = 0.9, -0.34, 0.34  # the bar in a cell: x centred, y from low down
    n_unreliable = 0
    for first, second, left, inside, right, reliable in rows:
        # cell (first, second) shows first - second; its mirror second - first, reversed
        for a, b, parts in ((first, second, (left, inside, right)),
                            (second, first, (right, inside, left))):
            i, j = position[a], position[b]
            start = j - width / 2
            for p, color in zip(parts, REGION_COLORS):
                segment = Rectangle((start, i + low), p * width, height, facecolor=color,
                                    edgecolor="white", lw=0.5, alpha=0.9 if reliable else 0.25)
                segment.set_gid("segment")
                ax.add_patch(segment)
                start += p * width
            if annotate:
                for dx, p, color in zip((-0.3, 0, 0.3), parts, REGION_COLORS):
                    value = ax.text(j + dx, i + 0.2, f"{p:.{digits}f}", ha="center",
                                    va="center", fontsize=8 if n <= 8 else 7,
                                    color="black" if color == REGION_COLORS[1] else color,
                                    fontweight="bold" if p >= 0.95 else "normal")
                    value.set_gid("value")
            if not reliable:
                # faded hatch: the cell reads UNRELIABLE, its numbers stay legible
                cover = Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="xx",
                                  edgecolor="#B00000", lw=1.5, alpha=0.45)
                cover.set_gid("unreliable")
                ax.add_patch(cover)
                flag = ax.text(j, i - 0.02, "UNRELIABLE", ha="center", va="center",
                               fontsize=8, color="#B00000", fontweight="bold",
                               bbox=dict(facecolor="white", edgecolor="none", pad=1))
                flag.set_gid("unreliable")
        n_unreliable += not reliable
    for k in range(n):  # the diagonal: no pair
        ax.add_patch(Rectangle((k - 0.5, k - 0.5), 1, 1, facecolor="#E5E5E5", lw=0))
    for k in range(n + 1):
        ax.axhline(k - 0.5, color="#CCCCCC", lw=0.6)
        ax.axvline(k - 0.5, color="#CCCCCC", lw=0.6)
    _name_axes(ax, [clean_text(name) for name in names])
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    handles = [Patch(color=REGION_COLORS[0], label="column better"),
               Patch(color=REGION_COLORS[1],
                     label="practically equivalent" + (f" (ROPE {rope})" if rope else "")),
               Patch(color=REGION_COLORS[2], label="row better")]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.08 - 0.3 / n),
              ncol=3, fontsize=8, frameon=False)
    heading = title if title is not None else (
        f"All pairs, {what}: posterior P(column better | equivalent | row better)")
    if n_unreliable:
        heading += (f"\nUNRELIABLE ({n_unreliable} pair(s) failed the sampler diagnostics): "
                    "hatched, not a decision")
    ax.set_title(heading, fontsize=11)
    return finish(ax)


def _name_axes(ax, names):
    n = len(names)
    ax.set_xticks(np.arange(n))
    ax.set_yticks(np.arange(n))
    rotate = max((len(name) for name in names), default=0) > 4
    ax.set_xticklabels(names, rotation=40 if rotate else 0, ha="right" if rotate else "center")
    ax.set_yticklabels(names)
    ax.set_xlabel("column algorithm")
    ax.set_ylabel("row algorithm")
    ax.tick_params(length=0)


def _matrix_heatmap(matrix, ax, annotate, digits, cmap, colorbar, title, unreliable):
    """One probability per cell: the matrix form of :func:`plot_probability_heatmap`."""
    import matplotlib
    from matplotlib.patches import Rectangle

    if matrix.shape[0] != matrix.shape[1] or list(matrix.index) != list(matrix.columns):
        raise ValueError("matrix must be square with the same algorithms, in the same order, "
                         f"as index and columns; got {list(matrix.index)} x {list(matrix.columns)}")
    values = matrix.to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    if np.any((finite < 0) | (finite > 1)):
        raise ValueError("matrix values must be probabilities in [0, 1]")
    n = values.shape[0]
    ax = new_axes(ax, (max(4.5, 0.75 * n + 2.5), max(3.8, 0.65 * n + 1.8)))
    colormap = matplotlib.colormaps[cmap].with_extremes(bad="#CFCFCF")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=colormap, vmin=0, vmax=1,
                      aspect="auto")
    names = [clean_text(name) for name in matrix.index]
    _name_axes(ax, names)
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
    title = title if title is not None else ("P(row algorithm better than column algorithm by "
                                             "more than the ROPE)\n(P(equivalent) not shown)")
    if marked:
        title += (f"\nhatched: UNRELIABLE ({len(marked) // 2} pair(s) failed the sampler "
                  "diagnostics)")
    ax.set_title(title, fontsize=11)
    return finish(ax)


# --------------------------------------------------------------------------- all pairs

def _pairs_source(result, which: str | None):
    """(rows of first, second, p_left, p_rope, p_right, reliable; what; rope) to draw."""
    table = getattr(result, "table", result)
    if not isinstance(table, pd.DataFrame):
        raise TypeError("plot_all_pairs needs an AllPairsResult or its table, got "
                        f"{type(result).__name__}")
    if table is result:  # a bare table: its columns say what it holds
        method = table["method"].iloc[0] if "method" in table else "correlated"
    else:
        method = result.method
    scopes = SCOPES[method]
    which = which or scopes[0]
    if which not in scopes:
        raise ValueError(f"which must be one of {scopes} for the {method} model, got {which!r}")
    columns = [f"{which}_p_left", f"{which}_p_rope", f"{which}_p_right"]
    missing = [c for c in ["first", "second", *columns] if c not in table]
    if missing:
        raise ValueError(f"the table lacks the column(s) {missing}")
    reliable = table["reliable"].astype(bool) if "reliable" in table else \
        pd.Series(True, index=table.index)
    rows = list(zip(table["first"], table["second"], *(table[c].astype(float) for c in columns),
                    reliable))
    return rows, SCOPE_NAMES[which], None if table is result else result.rope


def plot_all_pairs(result: AllPairsLike | pd.DataFrame, ax: Axes | None = None, *, which: str | None = None,
                   digits: int = 2, min_width: float = 0.07, title: str | None = None) -> Axes:
    """All three regions of every pair: one bar per pair, split into P(second better),
    P(equivalent) and P(first better), with the algorithms' names at the two ends.

    Unlike :func:`plot_probability_heatmap`, the ROPE's share is visible: two equivalent
    algorithms give a grey bar, not two dark cells. Read each bar from its ends: the
    name on the left wins the left (blue) part, the name on the right the right (orange)
    part, the middle (grey) is practical equivalence.

    Parameters
    ----------
    result : AllPairsResult or pandas.DataFrame
        ``compare_all``'s result, or its table (``first``, ``second``, the
        ``<scope>_p_*`` columns and ``reliable`` when present).
    ax : matplotlib.axes.Axes, optional
    which : {"population", "next_dataset", "dataset"}, optional
        Which question: for the hierarchical model the population (``population_p_*``, the
        default) or the next dataset (``next_dataset_p_*``); the correlated t-test has
        only ``dataset``.
    digits : int
        Decimals of the probabilities written in the parts.
    min_width : float
        Parts narrower than this carry no number (it would not fit).
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Pair k of the table is drawn at y = k from the top; its three parts are Rectangles
        with gid ``"segment"`` (widths P(second better), P(equivalent), P(first better)),
        the numbers texts with gid ``"value"``, the names texts with gid ``"name"`` (second
        on the left, first on the right); an unreliable fit is hatched (gid
        ``"unreliable"``) and labelled UNRELIABLE.
    """
    rows, what, rope = _pairs_source(result, which)
    from matplotlib.patches import Patch, Rectangle

    k = len(rows)
    ax = new_axes(ax, (8.0, max(2.6, 0.55 * k + 1.8)))
    height = 0.62
    n_unreliable = 0
    for row, (first, second, left, inside, right, reliable) in enumerate(rows):
        y = k - 1 - row  # the first pair on top
        start = 0.0
        for width, color in zip((left, inside, right), REGION_COLORS):
            segment = Rectangle((start, y - height / 2), width, height, facecolor=color,
                                edgecolor="white", linewidth=0.8, alpha=0.9)
            segment.set_gid("segment")
            ax.add_patch(segment)
            if width >= min_width:
                value = ax.text(start + width / 2, y, f"{width:.{digits}f}", ha="center",
                                va="center", fontsize=9, color="white", fontweight="bold")
                value.set_gid("value")
            start += width
        for x, name, align in ((-0.015, second, "right"), (1.015, first, "left")):
            label = ax.text(x, y, clean_text(name), ha=align, va="center", fontsize=10)
            label.set_gid("name")
        if not reliable:
            n_unreliable += 1
            cover = Rectangle((0, y - height / 2), 1, height, fill=False, hatch="///",
                              edgecolor="black", linewidth=1.2)
            cover.set_gid("unreliable")
            ax.add_patch(cover)
            flag = ax.text(0.5, y + height / 2 + 0.03, "UNRELIABLE (sampling problems): "
                           "not a decision", ha="center", va="bottom", fontsize=8,
                           color="#B00000", fontweight="bold")
            flag.set_gid("unreliable")
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.7, k - 0.2)
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel("posterior probability (left name better | equivalent | right name better)")
    handles = [Patch(color=REGION_COLORS[0], label="left name better"),
               Patch(color=REGION_COLORS[1],
                     label="practically equivalent" + (f" (ROPE {rope})" if rope else "")),
               Patch(color=REGION_COLORS[2], label="right name better")]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16 - 0.6 / (k + 2)),
              ncol=3, fontsize=8, frameon=False)
    heading = title if title is not None else f"All pairs: the three regions, {what}"
    if n_unreliable:
        heading += f"\nhatched: UNRELIABLE ({n_unreliable} pair(s) failed the sampler diagnostics)"
    ax.set_title(heading, fontsize=11)
    return finish(ax)
