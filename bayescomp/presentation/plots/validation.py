"""Figures of the validation runs: the simulation study's decision rates, power and RMSE
(:mod:`bayescomp.validation.study`) and the rank histograms of simulation-based calibration
(:mod:`bayescomp.validation.sbc`). They read the attributes their protocols name
(:mod:`bayescomp.presentation.plots.protocols`)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from typing import TYPE_CHECKING

from bayescomp.presentation.plots.protocols import SBCLike, StudyLike

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_study", "plot_power", "plot_rmse", "plot_ranks"]

#: The study's decisions, as the legends name them.
LABELS = {"signed_rank": "signed-rank test rejects (p < alpha)",
          "hier_difference": "hierarchical: difference (P(left or right) > 0.95)",
          "hier_equivalence": "hierarchical: equivalence (P(rope) > 0.95)"}


# --------------------------------------------------------------------------- figures

def _rate_lines(ax, table: pd.DataFrame, x: str, offsets=(-0.3, 0.0, 0.3)):
    spread = np.ptp(table[x]) if len(table) > 1 else 1.0
    for (name, label), offset, marker in zip(LABELS.items(), offsets, "osD"):
        rate = table[f"{name}_rate"].to_numpy()
        error = np.vstack([rate - table[f"{name}_low"], table[f"{name}_high"] - rate])
        ax.errorbar(table[x] + offset * spread / 40, rate, yerr=error, marker=marker,
                    capsize=3, ms=4, label=label)
    ax.set_ylim(-0.03, 1.03)
    ax.grid(alpha=0.3)


def plot_study(result: StudyLike, axes=None) -> np.ndarray:
    """Decision rates against the number of datasets, one panel per delta0.

    One line per decision (signed-rank rejects, hierarchical difference, hierarchical
    equivalence) with Wilson 95% intervals; a dotted line at the signed-rank's alpha.

    Returns
    -------
    numpy.ndarray of matplotlib Axes
    """
    import matplotlib.pyplot as plt

    table = result.table
    values = sorted(table["delta0"].unique())
    own_figure = axes is None
    if own_figure:
        fig, axes = plt.subplots(1, len(values), figsize=(5.2 * len(values), 4.6), squeeze=False,
                                 sharey=True)
        axes = axes[0]
    axes = np.atleast_1d(axes)
    for ax, delta0 in zip(axes, values):
        _rate_lines(ax, table[table["delta0"] == delta0], "n_datasets")
        ax.axhline(result.settings["alpha"], color="0.4", ls=":", lw=1)
        ax.set_title(f"delta0 = {delta0:g} (ROPE {result.settings['rope']:g}, "
                     f"{result.settings['process']} process)", fontsize=10)
        ax.set_xlabel("number of datasets k")
    axes[0].set_ylabel("rate over simulated collections")
    if own_figure:  # below the panels, where it hides no line
        fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=8)
        fig.tight_layout(rect=(0, 0.07, 1, 1))
    else:
        axes[0].legend(fontsize=8)
    return axes


def plot_power(result: StudyLike, ax: Axes | None = None) -> Axes:
    """Decision rates against delta0 (a :func:`power_curve` result), the ROPE marked."""
    import matplotlib.pyplot as plt

    own_figure = ax is None
    if own_figure:
        _, ax = plt.subplots(figsize=(6.4, 4.8))
    table = result.table.sort_values("delta0")
    ks = table["n_datasets"].unique()
    _rate_lines(ax, table, "delta0")
    ax.axvline(result.settings["rope"], color="0.4", ls="--", lw=1)
    ax.axhline(result.settings["alpha"], color="0.4", ls=":", lw=1)
    ax.set_xlabel("delta0 (population mean difference); dashed: ROPE")
    ax.set_ylabel("rate over simulated collections")
    ax.set_title(f"Power curve at k = {', '.join(map(str, ks))} datasets "
                 f"({result.settings['process']} process)", fontsize=10)
    if own_figure:  # below the axes, where it hides no line
        ax.figure.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=1, fontsize=8)
        ax.figure.tight_layout(rect=(0, 0.17, 1, 1))
    else:
        ax.legend(fontsize=8)
    return ax


def plot_rmse(result: StudyLike, ax: Axes | None = None) -> Axes:
    """RMSE of the shrunken and of the raw estimates of delta_i against k, per delta0."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, (delta0, group) in enumerate(result.table.groupby("delta0")):
        ax.plot(group["n_datasets"], group["rmse_raw"], "--", marker="s", color=f"C{i}",
                label=f"raw means, delta0 = {delta0:g}")
        ax.plot(group["n_datasets"], group["rmse_shrunk"], "-", marker="o", color=f"C{i}",
                label=f"shrunken (posterior mean), delta0 = {delta0:g}")
    ax.set_xlabel("number of datasets k")
    ax.set_ylabel("RMSE of delta_i")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax


# --------------------------------------------------------------------------- plot

def plot_ranks(result: SBCLike, bins: int | None = None, axes=None) -> np.ndarray:
    """Histogram of the ranks of each parameter with the 99% band of a uniform histogram.

    The grey band is the central 99% interval of one bin's count under uniformity
    (Binomial(replications, 1 / bins)), as in Talts et al. (2018, Fig. 3).

    Returns
    -------
    numpy.ndarray of matplotlib Axes
    """
    import matplotlib.pyplot as plt

    names = result.parameters
    if axes is None:
        _, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 2.8), squeeze=False)
        axes = axes[0]
    axes = np.atleast_1d(axes)
    for ax, name in zip(axes, names):
        test = result.rank_test(name, bins)
        counts, n_bins = test["counts"], test["bins"]
        low, high = stats.binom.ppf([0.005, 0.995], test["n"], 1 / n_bins)
        edges = np.arange(n_bins + 1) * (result.n_draws + 1) / n_bins
        ax.axhspan(low, high, color="0.85", zorder=0)
        ax.axhline(test["n"] / n_bins, color="0.5", lw=1, zorder=1)
        ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color="C0",
               edgecolor="white", zorder=2)
        ax.set_xlim(0, result.n_draws + 1)
        ax.set_title(f"{name}: chi2 p = {test['p_chi2']:.3g}", fontsize=9)
        ax.set_xlabel(f"rank among {result.n_draws} draws")
    axes[0].set_ylabel("replications")
    return axes
