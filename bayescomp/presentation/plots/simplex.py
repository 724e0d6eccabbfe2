"""Posterior draws of the (left, rope, right) probabilities in the probability simplex."""
from __future__ import annotations

import numpy as np
from typing import TYPE_CHECKING

from bayescomp.decisions import THRESHOLD, decide
from bayescomp.rope import most_probable_shares
from bayescomp.presentation.plots.common import REGION_COLORS, new_axes, finish

if TYPE_CHECKING:
    from typing import Sequence
    from bayescomp.annotations import SeedLike
    from matplotlib.axes import Axes

_SQRT3_2 = np.sqrt(3.0) / 2.0


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
    """The rows, region names, title and, for a hierarchical result, its own probabilities
    and shares (the quadrature's where it answers), else None."""
    answers = None
    if hasattr(result, "next_masses"):
        # where the quadrature answers, the grid's masses at points drawn by their weights:
        # the draws are those that failed
        masses = (result.quadrature.next_dataset_masses if result.by_quadrature
                  else result.next_masses)
        names = result.labels
        title = f"{result.first} - {result.second}: hierarchical model, next dataset"
        answers = (result.next_dataset.probabilities, result.next_dataset_most_probable)
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
    return masses, names, title, answers


def vertex_text(name: str, probability: float, digits: int = 3) -> str:
    """The headline at a corner of :func:`plot_simplex`: the region and its posterior
    probability (the mean of its mass, the number every summary prints)."""
    return f"{name}\nP = {probability:.{digits}f}"


def share_text(share: float, digits: int = 3) -> str:
    """The secondary line at a corner of :func:`plot_simplex`: the share of the draws in
    which the region has the largest mass. Not a probability of the region: with masses
    (0.41, 0.59, 0) in every draw the share is 1 while P = 0.59."""
    return f"(largest mass in {share:.{digits}f} of the draws)"


def decision_text(probabilities, names, threshold: float, reliable: bool = True) -> str:
    """The simplex's headline: the decision at ``threshold`` from the posterior
    probabilities, as every summary makes it."""
    if not reliable:
        return "UNRELIABLE (sampling problems): no decision"
    verdict = decide(probabilities, threshold, labels=names)
    k = int(np.argmax(probabilities))
    if verdict == "undecided":
        return (f"Decision at P \u2265 {threshold:g}: undecided (largest: {names[k]}, "
                f"P = {probabilities[k]:.3f})")
    return f"Decision at P \u2265 {threshold:g}: {verdict} (P = {probabilities[k]:.3f})"


def plot_simplex(result, ax: Axes | None = None, *, labels: Sequence[str] | None = None,
                 max_points: int = 5000, seed: SeedLike = 0, point_size: float = 5.0,
                 alpha: float = 0.35, digits: int = 3, threshold: float = THRESHOLD,
                 title: str | None = None) -> Axes:
    """Posterior samples of the (left, rope, right) probabilities in the probability simplex.

    The triangle of Benavoli et al. (2017, JMLR 18(77)): each vertex is one region (the
    second algorithm better at the bottom left, equivalence at the top, the first better at
    the bottom right) and each draw a point whose barycentric coordinates are its three
    probabilities. Lines from the barycentre to the midpoints of the edges split it into the
    three parts where each region is the most probable; the points are coloured by that part
    (the shares of draws in each part are :func:`bayescomp.rope.most_probable_shares`,
    computed on all the draws). A cross marks
    the posterior mean. The headline above the triangle is the decision at ``threshold``
    from the posterior probabilities (:func:`decision_text`), the number every summary
    reports; each corner names its region with its probability P in bold
    (:func:`vertex_text`) and, below in small grey type, the share of draws in which it
    has the largest mass (:func:`share_text`), which is not a probability of the region.
    Unlike baycomp, the scatter is drawn whatever the mass of the ROPE.

    Parameters
    ----------
    result : HierarchicalResult, BayesianTestResult or array of shape (n, 3)
        A hierarchical result gives ``result.next_masses`` (per draw, the mass of each
        region for the next dataset; where the quadrature answers, the grid's masses at 4,000
        of its points drawn by their weights); a Bayesian sign or signed-rank test its
        ``samples``;
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
        Decimals of the numbers at the vertices.
    threshold : float
        Posterior probability a region needs for the headline's decision (0.95, as the
        summaries).
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        The draws are one scatter collection with gid ``"points"`` (its offsets are
        :func:`to_simplex` of the drawn rows), the vertex texts (:func:`vertex_text`)
        have gid ``"vertex"``, the shares (:func:`share_text`) ``"share"``, the headline
        (:func:`decision_text`) ``"decision"``.
    """
    masses, names, default_title, answers = _simplex_source(result, labels)
    if max_points < 1:
        raise ValueError(f"max_points must be at least 1, got {max_points}")
    # a hierarchical fit's own numbers, as its summary prints them (the quadrature's where
    # it answers; else the same as its draws')
    mean, shares = answers or (masses.mean(axis=0), most_probable_shares(masses))
    n_draws = masses.shape[0]
    if masses.shape[0] > max_points:
        rows = np.sort(np.random.default_rng(seed).choice(masses.shape[0], max_points,
                                                          replace=False))
        masses = masses[rows]
    ax = new_axes(ax, (6.2, 6.0))

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

    # (y of the bold text, y of the grey share, vertical alignment) per corner: the share
    # between the bold text and the triangle at the top corner, under it at the others
    places = [(-0.05, -0.19, "top"), (0.13, 0.04, "bottom"), (-0.05, -0.19, "top")]
    for (x, y), (dy, dy_share, va), name, probability, share, color in zip(
            vertices, places, names, mean, shares, REGION_COLORS):
        text = ax.text(x, y + dy, vertex_text(name, probability, digits), ha="center", va=va,
                       fontsize=10, color="black" if color == REGION_COLORS[1] else color,
                       fontweight="bold", linespacing=1.3)
        text.set_gid("vertex")
        secondary = ax.text(x, y + dy_share, share_text(share, digits), ha="center", va=va,
                            fontsize=7.5, color="#666666", fontweight="normal")
        secondary.set_gid("share")
    reliable = bool(getattr(result, "reliable", True))
    headline = ax.text(0.5, _SQRT3_2 + 0.42, decision_text(mean, names, threshold, reliable),
                       ha="center", va="bottom", fontsize=11, fontweight="bold",
                       color="black" if reliable else "#B00000")
    headline.set_gid("decision")
    ax.text(0.5, -0.36, f"Each of the {n_draws} points is a posterior draw of the three "
            "probabilities\n(its barycentric coordinates); \u2716 their mean. P at each corner "
            "is the\nposterior probability of the region (the mean, as the summaries print it); "
            "in\ngrey, the share of the draws in which that region has the largest mass.",
            ha="center", va="top", fontsize=8, color="#444444")
    ax.set_aspect("equal")
    ax.set_xlim(-0.34, 1.34)
    ax.set_ylim(-0.58, _SQRT3_2 + 0.52)
    ax.axis("off")
    heading = title if title is not None else default_title
    if heading:
        ax.set_title(heading, fontsize=11)
    return finish(ax)

