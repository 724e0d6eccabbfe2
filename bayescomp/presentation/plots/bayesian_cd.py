"""A Bayesian critical-difference diagram of K algorithms, in the units of the scores: the
sibling of Demšar's diagram (:mod:`~bayescomp.presentation.plots.critical_difference`) for
the joint hierarchical model (``bayescomp.models.joint.compare_many``).

Where Demšar's diagram places the algorithms by average rank and joins those a Nemenyi test
cannot tell apart, this one places them by their population mean score relative to the
best algorithm and joins those the posterior says are *practically equivalent*: every pair
of a group has P(equivalent) >= the threshold. Pairs the posterior cannot decide (no region
reaches the threshold) get bars of their own, dashed and grey, so that "we do not know" is
never drawn as "equivalent". No bar between two algorithms means one is better by more than
the ROPE (or the pair's fit was unreliable: the title says so).

The groups are the maximal cliques of a graph whose nodes are the algorithms
(:func:`maximal_cliques`, Bron and Kerbosch 1973 with pivoting: exact, and fast for the
K <= 20 or so a diagram can show).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayescomp.decisions import SCOPE_NAMES, SCOPES, THRESHOLD, decide
from bayescomp.presentation.plots.common import REGION_COLORS, ROPE_COLOR, clean_text, finish
from bayescomp.presentation.plots.protocols import JointLike

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from matplotlib.axes import Axes

__all__ = ["plot_bayesian_cd", "equivalence_groups", "undecided_groups", "maximal_cliques",
           "relative_to_best", "hdi"]

#: Probability of the intervals drawn around each algorithm.
HDI_PROB = 0.95
UNDECIDED_COLOR = "#8C8C8C"


# --------------------------------------------------------------------------- groups

def maximal_cliques(adjacency) -> list[tuple[int, ...]]:
    """Every maximal clique of an undirected graph, as sorted tuples of node indices, sorted.

    ``adjacency`` is a symmetric K x K boolean matrix (its diagonal is ignored). An isolated
    node is a maximal clique of its own, ``(i,)``. Bron-Kerbosch with pivoting: each
    maximal clique is found once, in time that stays small for the K of a diagram.
    """
    adjacency = np.asarray(adjacency, dtype=bool)
    k = adjacency.shape[0] if adjacency.ndim == 2 else -1
    if adjacency.shape != (k, k):
        raise ValueError(f"adjacency must be a square matrix, got shape {adjacency.shape}")
    if not np.array_equal(adjacency, adjacency.T):
        raise ValueError("adjacency must be symmetric (an undirected graph)")
    neighbours = [frozenset(int(j) for j in np.flatnonzero(adjacency[i]) if j != i)
                  for i in range(k)]
    found: list[tuple[int, ...]] = []

    def expand(clique: frozenset, candidates: frozenset, excluded: frozenset) -> None:
        if not candidates and not excluded:
            found.append(tuple(sorted(clique)))
            return
        # the pivot with most neighbours among the candidates; ties to the lowest index
        pivot = max(sorted(candidates | excluded), key=lambda v: len(candidates & neighbours[v]))
        for v in sorted(candidates - neighbours[pivot]):
            expand(clique | {v}, candidates & neighbours[v], excluded & neighbours[v])
            candidates, excluded = candidates - {v}, excluded | {v}

    if k:
        expand(frozenset(), frozenset(range(k)), frozenset())
    return sorted(found)


def _check_threshold(threshold: float) -> None:
    if not 0.5 < threshold <= 1:
        raise ValueError(f"threshold must be in (0.5, 1], got {threshold}")


def _index(algorithms: Sequence[str], name) -> int:
    try:
        return list(algorithms).index(name)
    except ValueError:
        raise ValueError(f"{name!r} is not one of the algorithms {list(algorithms)}") from None


def _groups(algorithms: Sequence[str], adjacency: np.ndarray) -> tuple[tuple[str, ...], ...]:
    """Maximal cliques of two or more members, as names in the order of ``algorithms``."""
    return tuple(tuple(algorithms[i] for i in clique)
                 for clique in maximal_cliques(adjacency) if len(clique) > 1)


def equivalence_groups(algorithms: Sequence[str], p_rope, threshold: float = THRESHOLD
                       ) -> tuple[tuple[str, ...], ...]:
    """The groups of practically equivalent algorithms: the maximal cliques of the graph
    joining two algorithms when their P(equivalent) is at least ``threshold``.

    Parameters
    ----------
    algorithms : sequence of str
    p_rope : mapping (first, second) -> P(equivalent), or a K x K matrix
        (array in the order of ``algorithms``, or a DataFrame indexed by their names). A
        pair that is missing (or NaN) is not joined; a pair given both ways must agree.
    threshold : float
        In (0.5, 1]; :data:`bayescomp.decisions.THRESHOLD` by default.

    Returns
    -------
    tuple of tuples of str
        Each group's names in the order of ``algorithms``; the groups sorted by the
        positions of their members. Groups have two members or more: an algorithm
        equivalent to no other is in no group (the figure draws no bar for it). A chain
        A ~ B, B ~ C without A ~ C gives two groups, (A, B) and (B, C).
    """
    _check_threshold(threshold)
    algorithms = list(algorithms)
    k = len(algorithms)
    if isinstance(p_rope, pd.DataFrame):
        matrix = p_rope.reindex(index=algorithms, columns=algorithms).to_numpy(dtype=float)
    elif hasattr(p_rope, "items"):
        matrix = np.full((k, k), np.nan)
        for (first, second), p in p_rope.items():
            i, j = _index(algorithms, first), _index(algorithms, second)
            matrix[i, j] = matrix[j, i] = p
    else:
        matrix = np.asarray(p_rope, dtype=float)
        if matrix.shape != (k, k):
            raise ValueError(f"p_rope must be {k} x {k}, got shape {matrix.shape}")
    with np.errstate(invalid="ignore"):
        adjacency = matrix >= threshold
    return _groups(algorithms, adjacency & adjacency.T)


def undecided_groups(algorithms: Sequence[str], probabilities: Mapping, threshold: float = THRESHOLD
                     ) -> tuple[tuple[str, ...], ...]:
    """The groups of undecided algorithms: the maximal cliques of the graph joining two
    algorithms when no region of their difference reaches ``threshold``
    (:func:`bayescomp.decisions.decide` says "undecided").

    ``probabilities`` maps (first, second) to (P(left), P(rope), P(right)); a missing pair
    is not joined. Groups have two members or more, as in :func:`equivalence_groups`.
    """
    _check_threshold(threshold)
    algorithms = list(algorithms)
    adjacency = np.zeros((len(algorithms), len(algorithms)), dtype=bool)
    for (first, second), p in probabilities.items():
        i, j = _index(algorithms, first), _index(algorithms, second)
        adjacency[i, j] = adjacency[j, i] = decide(p, threshold) == "undecided"
    return _groups(algorithms, adjacency)


# --------------------------------------------------------------------------- positions

def hdi(draws, prob: float = HDI_PROB) -> tuple[float, float]:
    """The shortest interval holding ``floor(prob * n)`` + 1 of the ``n`` sorted draws (as
    :func:`arviz.hdi` computes it for one variable)."""
    x = np.sort(np.asarray(draws, dtype=float).ravel())
    inside = int(np.floor(prob * x.size))
    if x.size == 0 or inside >= x.size:
        raise ValueError(f"too few draws ({x.size}) for a {prob:g} interval")
    start = int(np.argmin(x[inside:] - x[:x.size - inside]))
    return float(x[start]), float(x[start + inside])


def relative_to_best(algorithms: Sequence[str], draws, prob: float = HDI_PROB) -> pd.DataFrame:
    """Each algorithm's population mean minus the best algorithm's, draw by draw.

    The best algorithm is the one with the highest posterior mean (the first of those tied);
    its own difference is 0 in every draw. ``draws`` is draws x K (any common shift of a
    row, such as the mean of the K, cancels). Returns one row per algorithm, best first
    (then by decreasing mean, ties in the given order), indexed by name: ``mean`` (the
    difference of the posterior means) and ``hdi_low``, ``hdi_high`` (the ``prob`` HDI of
    the difference: the interval of the pair's delta0, comparable with the ROPE).
    """
    algorithms = list(algorithms)
    draws = np.asarray(draws, dtype=float)
    if draws.ndim != 2 or draws.shape[1] != len(algorithms) or draws.shape[0] == 0:
        raise ValueError(f"population draws must be draws x {len(algorithms)} (one column per "
                         f"algorithm), got shape {draws.shape}")
    if not np.all(np.isfinite(draws)):
        raise ValueError("population draws must be finite")
    best = int(np.argmax(draws.mean(axis=0)))
    differences = draws - draws[:, [best]]
    intervals = np.array([hdi(differences[:, a], prob) for a in range(len(algorithms))])
    frame = pd.DataFrame({"mean": differences.mean(axis=0), "hdi_low": intervals[:, 0],
                          "hdi_high": intervals[:, 1]},
                         index=pd.Index(algorithms, name="algorithm"))
    order = np.argsort(-frame["mean"].to_numpy(), kind="stable")
    order = np.concatenate([[best], order[order != best]])
    return frame.iloc[order]


# --------------------------------------------------------------------------- diagram

def _pairs(result: JointLike, scope: str) -> tuple[dict, int]:
    """(first, second) -> (left, rope, right) of the reliable pairs, and how many are not."""
    table = result.to_frame()
    if table.empty:     # one algorithm: no pairs
        return {}, 0
    columns = [f"{scope}_p_{region}" for region in ("left", "rope", "right")]
    missing = [c for c in ["first", "second", *columns] if c not in table.columns]
    if missing:
        raise ValueError(f"the result's table lacks the columns {missing}")
    reliable = (table["reliable"].to_numpy(dtype=bool) if "reliable" in table
                else np.ones(len(table), dtype=bool)) & bool(result.reliable)
    pairs = {(row["first"], row["second"]): tuple(float(row[c]) for c in columns)
             for (_, row), ok in zip(table.iterrows(), reliable) if ok}
    return pairs, int((~reliable).sum())


def _ticks(lo: float, hi: float) -> np.ndarray:
    from matplotlib.ticker import MaxNLocator

    ticks = MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
    tolerance = 1e-9 * (hi - lo)
    ticks = ticks[(ticks >= lo - tolerance) & (ticks <= hi + tolerance)]
    return np.where(np.abs(ticks) < tolerance, 0.0, ticks)


def _bar_lines(kinds, position: dict, pad: float) -> tuple[list, int]:
    """The bars of the groups, packed: (gid, line, members' sorted positions, whether to mark
    the members, style) per group, and how many lines they take. Each kind (equivalent,
    then undecided) takes its own lines; a group goes on the first of them where it clears
    the bars already there, groups taken from the right (best) end."""
    bars, n_lines = [], 0
    for gid, groups, style in kinds:
        lines: list[list[tuple[float, float]]] = []
        extents = sorted(((sorted(position[a] for a in g), g) for g in groups),
                         key=lambda item: (-item[0][-1], -item[0][0]))
        for xs, group in extents:
            free = [i for i, taken in enumerate(lines)
                    if all(xs[-1] + 3 * pad < x0 or xs[0] - 3 * pad > x1 for x0, x1 in taken)]
            if not free:
                lines.append([])
                free = [len(lines) - 1]
            lines[free[0]].append((xs[0], xs[-1]))
            marked = any(xs[0] <= x <= xs[-1] for name, x in position.items() if name not in group)
            bars.append((gid, n_lines + free[0], xs, marked, style))
        n_lines += len(lines)
    return bars, n_lines


def plot_bayesian_cd(result: JointLike, ax: Axes | None = None, threshold: float = THRESHOLD,
                     scope: str = "population") -> Axes:
    """A Bayesian critical-difference diagram of the joint model of K algorithms.

    The algorithms hang from an axis in the units of the scores, at the posterior mean of
    their population mean minus the best algorithm's (the one with the highest posterior
    mean, at 0; the others are left of it), as :func:`relative_to_best` computes from the
    draws: each algorithm's row carries the 95% HDI of that difference, draw by draw (the
    pair's delta0 with the best; the best has none). The better half is labelled on the
    right, the rest on the left, as in :func:`plot_critical_difference` mirrored (better is
    right here, as on the axis). The ROPE is a grey band around 0, around the best: an
    interval inside it is an algorithm the posterior deems as good as the best.

    Below the axis, thick black bars join the groups of :func:`equivalence_groups` (every
    pair's P(equivalent) >= ``threshold``) and dashed grey bars the groups of
    :func:`undecided_groups` (every pair undecided), packed: bars that do not overlap share
    a line. When a bar passes over an algorithm not in its group, white dots mark its
    members, so that it is not read as joining that one. An algorithm
    equivalent to no other has no bar. A fit that failed its sampler diagnostics decides
    nothing: no bars, hatched intervals and a title that says so; unreliable pairs of a
    reliable fit are left unjoined and counted in the title.

    Parameters
    ----------
    result : JointLike
        ``bayescomp.models.joint.compare_many``'s result, or any object with its ``algorithms``, ``rope``,
        ``population_draws`` (draws x K), ``reliable`` and ``to_frame()`` (one row per pair
        with ``first``, ``second``, ``<scope>_p_left / _p_rope / _p_right``, ``reliable``).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when None.
    threshold : float
        Probability a region needs, in (0.5, 1].
    scope : "population" or "next_dataset"
        Whose probabilities decide the bars. The positions and intervals are the population
        means in both cases (the result has no per-algorithm draws of a next dataset).

    Returns
    -------
    matplotlib.axes.Axes
        The artists have gids: ``"score_axis"``, ``"rope_band"`` (a Rectangle from
        ``rope.low`` to ``rope.high``), ``"equivalent_group"`` and ``"undecided_group"`` (one
        Line2D per group, its vertices the ends and the members' positions, the members
        marked where needed), ``"hdi"`` (one Rectangle per algorithm, best first),
        ``"mean"`` (one point per algorithm, at its position), ``"connector"`` and
        ``"algorithm"`` (its name).
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle

    if scope not in SCOPES["hierarchical"]:
        raise ValueError(f"scope must be one of {SCOPES['hierarchical']}, got {scope!r}")
    _check_threshold(threshold)
    algorithms = tuple(result.algorithms)
    if not algorithms:
        raise ValueError("no algorithms to draw")
    frame = relative_to_best(algorithms, result.population_draws)
    pairs, n_unreliable = _pairs(result, scope)
    equivalent = equivalence_groups(algorithms, {p: v[1] for p, v in pairs.items()}, threshold)
    undecided = undecided_groups(algorithms, pairs, threshold)
    unreliable_fit = not bool(result.reliable)

    k = len(algorithms)
    names = list(frame.index)
    means = frame["mean"].to_numpy()
    n_right = (k + 1) // 2
    n_rows = max(n_right, k - n_right)
    rope = result.rope
    lo = float(min(frame["hdi_low"].min(), rope.low, means.min()))
    hi = float(max(frame["hdi_high"].max(), rope.high, 0.0))
    if hi - lo <= 0:    # every draw equal and no ROPE: an axis of width 2e-3 around them
        lo, hi = lo - 1e-3, hi + 1e-3
    span = hi - lo
    pad = 0.015 * span
    kinds = [("equivalent_group", equivalent, dict(color="black", lw=4, solid_capstyle="round")),
             ("undecided_group", undecided, dict(color=UNDECIDED_COLOR, lw=2.5, ls=(0, (4, 2))))]
    bars, n_bars = _bar_lines(kinds, dict(zip(names, means)), pad)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 1.9 + 0.3 * n_rows + 0.1 * n_bars),
                             layout="constrained")
    fig = ax.figure
    width_in = max(fig.get_figwidth() * ax.get_position().width, 2.0)
    # each side as wide as its longest name (inches), then in data units
    sides_in = [min(0.07 * max((len(clean_text(a)) for a in side), default=0) + 0.35,
                    0.4 * width_in) for side in (names[n_right:], names[:n_right])]
    left_margin, right_margin = (side * span / max(width_in - sum(sides_in), 0.5)
                                 for side in sides_in)

    line = dict(color="black", clip_on=False)
    ax.plot([lo, hi], [0, 0], lw=1, gid="score_axis", **line)
    for tick in _ticks(lo, hi):
        ax.plot([tick, tick], [0, 0.1], lw=1, **line)
        ax.text(tick, 0.13, f"{tick:.4g}", ha="center", va="bottom", fontsize=9)
    ax.text((lo + hi) / 2, 0.4, f"population mean - {names[0]}'s (score units)",
            ha="center", va="bottom", fontsize=9)

    top, bar_step, step = -0.12, 0.1, 0.25
    first_row = top - bar_step * n_bars - 0.1
    # the two sides' rows interleave, so that wide intervals of the two sides never share a row
    bottom = first_row - step * (n_rows - 1) - step / 2 - 0.15
    band = Rectangle((rope.low, bottom), rope.high - rope.low, 0.1 - bottom, color=ROPE_COLOR,
                     alpha=0.35, lw=0, zorder=0, gid="rope_band")
    ax.add_patch(band)
    if rope.low == rope.high:
        ax.plot([rope.low, rope.low], [bottom, 0.1], color=ROPE_COLOR, lw=2, zorder=0)

    for gid, level, xs, members_marked, style in bars:
        ax.plot([xs[0] - pad, *xs, xs[-1] + pad], [top - bar_step * level] * (len(xs) + 2),
                marker="o", ms=4.5, mfc="white", mec=style["color"], clip_on=False, gid=gid,
                markevery=list(range(1, len(xs) + 1)) if members_marked else [], **style)

    colour = REGION_COLORS[0]
    for i, (name, row) in enumerate(frame.iterrows()):
        on_right = i < n_right
        y = first_row - step * i if on_right else first_row - step * (k - 1 - i) - step / 2
        end = hi + 0.1 * right_margin if on_right else lo - 0.1 * left_margin
        ax.plot([row["mean"], row["mean"], end], [0, y, y], lw=0.8, gid="connector", **line)
        ax.add_patch(Rectangle((row["hdi_low"], y - 0.045), row["hdi_high"] - row["hdi_low"], 0.09,
                               facecolor=colour, alpha=0.55, edgecolor=colour, lw=0.8, zorder=3,
                               hatch="////" if unreliable_fit else None, gid="hdi"))
        ax.plot([row["mean"]], [y], "o", color="black", ms=3.5, zorder=4, gid="mean")
        ax.text(end + 0.03 * right_margin if on_right else end - 0.03 * left_margin, y, name,
                ha="left" if on_right else "right", va="center", fontsize=10, gid="algorithm")
    ax.text(rope.high, bottom, " ROPE", ha="left", va="bottom", fontsize=8, color="#666666")

    scope_name = SCOPE_NAMES[scope]
    handles = [Line2D([], [], color="black", lw=4,
                      label=f"equivalent: P(rope) >= {threshold:g} ({scope_name})"),
               Line2D([], [], color=UNDECIDED_COLOR, lw=2.5, ls=(0, (4, 2)),
                      label="undecided: no region reaches it"),
               Patch(facecolor=colour, alpha=0.55, label=f"{HDI_PROB:.0%} HDI"),
               Patch(facecolor=ROPE_COLOR, alpha=0.35, label=f"ROPE {rope}")]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2,
              fontsize=8, frameon=False)
    if unreliable_fit:
        ax.set_title("UNRELIABLE fit (sampling problems): no decision, no bars", fontsize=10,
                     color="#B00020")
    elif n_unreliable:
        ax.set_title(f"{n_unreliable} pair(s) unreliable (sampling problems): never joined",
                     fontsize=10, color="#B00020")
    ax.set_xlim(lo - left_margin, hi + right_margin)
    ax.set_ylim(bottom - 0.05, 0.6)
    ax.axis("off")
    # names in any script, never a missing-glyph warning (see bayescomp.presentation.plots)
    return finish(ax)
