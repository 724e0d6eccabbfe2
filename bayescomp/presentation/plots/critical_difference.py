"""Demšar's (2006) critical-difference diagram of a Friedman test
(:func:`bayescomp.baselines.friedman.friedman_test`)."""
from __future__ import annotations

import numpy as np
from typing import TYPE_CHECKING

from bayescomp.presentation.plots.common import finish
from bayescomp.presentation.plots.protocols import FriedmanLike

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_critical_difference"]


# --------------------------------------------------------------------------- diagram

def plot_critical_difference(result: FriedmanLike, ax: Axes | None = None) -> Axes:
    """Demšar's (2006) critical-difference diagram of a :func:`friedman_test` result.

    The algorithms hang from an axis of average ranks (rank 1, the best, at the left): the
    better half is labelled on the left, the other half on the right. A bar above the
    axis shows the Nemenyi critical difference, and thick lines join the groups of
    algorithms whose average ranks do not differ significantly.

    Parameters
    ----------
    result : FriedmanResult or any object with its ``algorithms``, ``average_ranks``,
        ``critical_difference`` and ``groups``
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when None.

    Returns
    -------
    matplotlib.axes.Axes
        The artists have gids: ``"rank_axis"``, ``"cd_bar"`` (the bar, one Line2D with its
        end ticks) and ``"cd_label"``, ``"group"`` (one thick line per group),
        ``"algorithm"`` (one text per algorithm, its name) and ``"connector"``.
    """
    import matplotlib.pyplot as plt

    k = len(result.algorithms)
    order = np.argsort(result.average_ranks, kind="stable")
    ranks = np.asarray(result.average_ranks)[order]
    names = [result.algorithms[j] for j in order]
    n_left = (k + 1) // 2
    n_rows = max(n_left, k - n_left)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 1.4 + 0.3 * n_rows), layout="constrained")
    fig = ax.figure
    width_in = max(fig.get_figwidth() * ax.get_position().width, 2.0)
    label_in = min(0.07 * max(len(a) for a in names) + 0.35, 0.4 * width_in)
    cd = result.critical_difference
    span = max(k, 1 + cd) - 1
    margin = label_in * span / max(width_in - 2 * label_in, 0.5)
    lo, hi = 1.0, float(k)

    line = dict(color="black", clip_on=False)
    ax.plot([lo, hi], [0, 0], lw=1, gid="rank_axis", **line)
    for r in np.arange(lo, hi + 0.25, 0.5):
        whole = float(r).is_integer()
        ax.plot([r, r], [0, 0.1 if whole else 0.05], lw=1, **line)
        if whole:
            ax.text(r, 0.13, f"{int(r)}", ha="center", va="bottom", fontsize=9)
    cd_y = 0.6
    ax.plot([lo, lo, lo + cd, lo + cd], [cd_y - 0.06, cd_y, cd_y, cd_y - 0.06], lw=1.5,
            gid="cd_bar", **line)
    ax.text(lo + cd / 2, cd_y + 0.04, "CD", ha="center", va="bottom", fontsize=9,
            gid="cd_label")

    groups = [[names.index(a) for a in g] for g in result.groups]
    top = -0.12
    for g, members in enumerate(groups):
        y = top - 0.1 * g
        ax.plot([ranks[members[0]] - 0.03, ranks[members[-1]] + 0.03], [y, y], lw=4,
                solid_capstyle="round", gid="group", **line)
    first_row = top - 0.1 * len(groups) - 0.1
    step = 0.25
    for i, (name, r) in enumerate(zip(names, ranks)):
        left = i < n_left
        y = first_row - step * (i if left else k - 1 - i)
        end = lo - 0.1 * margin if left else hi + 0.1 * margin
        ax.plot([r, r, end], [0, y, y], lw=0.8, gid="connector", **line)
        ax.text(end - 0.03 * margin if left else end + 0.03 * margin, y, name,
                ha="right" if left else "left", va="center", fontsize=10, gid="algorithm")
    ax.set_xlim(lo - margin, max(hi, lo + cd) + margin)
    ax.set_ylim(first_row - step * (n_rows - 1) - 0.15, cd_y + 0.3)
    ax.axis("off")
    # names in any script, never a missing-glyph warning (see bayescomp.presentation.plots)
    return finish(ax)
