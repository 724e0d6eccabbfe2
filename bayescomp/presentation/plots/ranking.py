"""Figures of the Plackett-Luce ranking (:func:`bayescomp.rank_algorithms`) and of the
sensitivity analysis (:func:`bayescomp.sensitivity`). Each function takes ``ax=`` or
``axes=`` and returns what it drew on; matplotlib is imported on first use."""
from __future__ import annotations

import numpy as np

from bayescomp.presentation.plots.protocols import RankingLike, SensitivityLike

REGION_COLOURS = ("tab:red", "tab:gray", "tab:blue")  # left, rope, right
PRIOR_STYLES = ("-", "--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)))


def _axes(ax, ncols=1, width=5.0, height=3.5):
    import matplotlib.pyplot as plt

    if ax is not None:
        return ax
    _, created = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False)
    return created[0] if ncols > 1 else created[0, 0]


def plot_rank_probabilities(result, ax=None):
    """Heatmap of P(the algorithm's worth has rank r), algorithms ordered by the posterior
    mean rank of their worths.

    Parameters
    ----------
    result : RankingResult
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax, width=1.1 * len(result.algorithms) + 2.5, height=0.45 * len(result.algorithms) + 1.5)
    order = result.expected_rank["mean"].sort_values().index
    matrix = result.rank_probabilities.loc[order].to_numpy()
    image = ax.imshow(matrix, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    k = matrix.shape[1]
    for i, j in np.ndindex(matrix.shape):
        ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=8,
                color="white" if matrix[i, j] > 0.6 else "black")
    ax.set_xticks(range(k), [str(r) for r in range(1, k + 1)])
    ax.set_yticks(range(len(order)), list(order))
    ax.set_xlabel("rank of the worth (1 = largest worth)")
    ax.set_title("Posterior probability of each rank of the worth", fontsize=10)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def plot_worth_ranks(result, ax=None):
    """Per algorithm, best at the top: the posterior mean rank of its worth with its credible
    interval, its mean observed rank on the datasets (a cross) and P(best) beside them.

    Two different ranks, named apart: the rank of the worth (1 = largest worth, the
    algorithm most likely first on a new dataset) narrows as datasets accrue; the mean
    observed rank is the data's, with algorithms tied within the ROPE sharing their rank.

    Returns
    -------
    matplotlib Axes
        The intervals are a line collection with gid ``"worth_rank_interval"``, the means a
        line with gid ``"worth_rank"``, the crosses ``"observed_rank"``.
    """
    ax = _axes(ax, height=0.45 * len(result.algorithms) + 1.5)
    frame = result.to_frame()
    y = np.arange(len(frame))[::-1]
    interval = ax.hlines(y, frame.rank_low, frame.rank_high, color="tab:blue", lw=2)
    interval.set_gid("worth_rank_interval")
    mean, = ax.plot(frame.rank_mean, y, "o", color="tab:blue",
                    label=f"rank of the worth: posterior mean, "
                    f"{result.settings['interval']:.0%} interval")
    mean.set_gid("worth_rank")
    observed, = ax.plot(frame.mean_observed_rank, y, "x", color="black",
                        label=f"mean observed rank on the {result.settings['datasets']} "
                        f"datasets (ties within ROPE {result.settings['rope']:g})")
    observed.set_gid("observed_rank")
    k = len(frame)
    for yi, p_best in zip(y, frame.p_best):  # in a right-hand margin, clear of the intervals
        ax.text(k + 0.35, yi, f"P(best) {p_best:.2f}", va="center", fontsize=8)
    ax.set_xlim(0.5, k + 1.5)
    ax.set_xticks(range(1, k + 1))
    ax.set_yticks(y, list(frame.index))
    ax.set_xlabel("rank (1 = best)")
    ax.set_title("Rank of each worth (Plackett-Luce) and mean observed rank", fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), fontsize=8, frameon=False)
    return ax


def plot_ranking(result: RankingLike, axes=None) -> np.ndarray:
    """Both ranking figures side by side; returns the two axes."""
    import matplotlib.pyplot as plt

    if axes is None:
        k = len(result.algorithms)
        _, axes = plt.subplots(1, 2, figsize=(11, 0.45 * k + 1.8), constrained_layout=True)
    plot_worth_ranks(result, ax=axes[0])
    plot_rank_probabilities(result, ax=axes[1])
    if not result.reliable:
        axes[0].figure.suptitle("UNRELIABLE: the sampler failed its diagnostics; not a verdict",
                                color="firebrick", fontweight="bold")
    return axes


def plot_sensitivity(result: SensitivityLike, axes=None) -> np.ndarray:
    """P(left / rope / right) against the ROPE half-width, for delta0 (left panel) and the
    next dataset (right panel).

    Colour is the region; each prior has its own marker and line style, hollow markers of
    decreasing size so that priors whose curves coincide still show every marker, and its
    own legend entry. Priors whose probabilities differ by less than ``SAME`` (0.005) at
    every ROPE width of a panel are named in that panel as coinciding: identical curves
    cannot be told apart by their style alone.

    Parameters
    ----------
    result : SensitivityResult
    axes : two matplotlib Axes, optional

    Returns
    -------
    numpy array of two Axes
        Each prior's three lines carry gid ``"prior:<name>"``; the coincidence notes are
        texts with gid ``"coincide"``.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True, constrained_layout=True)
    table = result.table
    labels = result.labels
    styles = [prior_style(p) for p in range(len(result.priors))]
    for ax, quantity, title in zip(axes, ("delta0", "next"),
                                   ("delta0 (population mean difference)", "next dataset")):
        curves = {}
        for prior, style in zip(result.priors, styles):
            rows = table[(table.prior == prior) & (table.quantity == quantity)].sort_values("rope")
            curves[prior] = rows[["p_left", "p_rope", "p_right"]].to_numpy()
            for colour, column in zip(REGION_COLOURS, ("p_left", "p_rope", "p_right")):
                line, = ax.plot(rows.rope, rows[column], color=colour, mfc="none", **style)
                line.set_gid(f"prior:{prior}")
        ax.axhline(result.threshold, color="black", lw=0.7, alpha=0.5)
        same = coinciding(curves)
        if same:
            note = ax.text(0.02, 0.5, "coincide (within 0.005):\n" + "\n".join(
                " = ".join(group) for group in same), transform=ax.transAxes, fontsize=8,
                va="center", bbox=dict(facecolor="white", edgecolor="#999999", alpha=0.85))
            note.set_gid("coincide")
        ax.set_title(title)
        ax.set_xlabel("ROPE half-width (units of the scores)")
        ax.set_ylim(-0.02, 1.02)
    axes[0].set_ylabel("posterior probability")
    handles = [Line2D([], [], color=c, lw=2, label=f"P({label})")
               for c, label in zip(REGION_COLOURS, labels)]
    handles += [Line2D([], [], color="black", mfc="none", label=f"prior {prior}", **style)
                for prior, style in zip(result.priors, styles)]
    axes[1].legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1))
    return np.asarray(axes)


#: Priors whose probabilities differ by less than this everywhere coincide on the figure.
SAME = 0.005
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def prior_style(p: int) -> dict:
    """Marker, marker size and line style of the p-th prior of :func:`plot_sensitivity`:
    distinct shapes, and sizes shrinking so that coinciding markers nest inside each other."""
    return dict(marker=_MARKERS[p % len(_MARKERS)], markersize=max(3.0, 9.0 - 1.3 * p),
                linestyle=PRIOR_STYLES[p % len(PRIOR_STYLES)], lw=1.2)


def coinciding(curves: dict) -> list[list[str]]:
    """Groups (two or more) of priors whose curves differ by less than :data:`SAME` at every
    point, each prior in the group of the first prior it coincides with."""
    groups, placed = [], set()
    names = list(curves)
    for i, a in enumerate(names):
        if a in placed:
            continue
        group = [a] + [b for b in names[i + 1:] if b not in placed and
                       curves[a].shape == curves[b].shape and
                       np.max(np.abs(curves[a] - curves[b])) < SAME]
        if len(group) > 1:
            groups.append(group)
            placed.update(group)
    return groups
