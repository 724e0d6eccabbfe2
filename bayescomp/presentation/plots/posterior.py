"""The posterior density of a mean difference, with the ROPE and the three probabilities."""
from __future__ import annotations

import numpy as np
from scipy import stats
from typing import TYPE_CHECKING

from bayescomp.rope import PointMass, Rope, region_labels
from bayescomp.presentation.plots.common import REGION_COLORS, difference_label, new_axes, padded, shade_rope, \
    finish

if TYPE_CHECKING:
    from matplotlib.axes import Axes


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
        # where the quadrature answers, its density: the draws are those that failed
        found = result.quadrature if result.by_quadrature else None
        if which == "delta0":
            draws = result.idata.posterior["delta0"].values.reshape(-1)
            probabilities = result.population.probabilities
            title = (f"Posterior of delta0, the mean difference {result.first} - {result.second}"
                     f"\nof the population of datasets ({len(result.datasets)} datasets)")
            if found is not None:
                return ("curve", found.delta0_density, probabilities, result.rope,
                        result.first, result.second, title)
        elif which == "next":
            draws = result.idata.posterior["delta_next"].values.reshape(-1)
            probabilities = result.next_dataset.probabilities
            title = (f"Predictive mean difference {result.first} - {result.second} "
                     "on the next dataset\n(hierarchical model)")
            if found is not None:
                return ("curve", found.next_dataset_density, probabilities, result.rope,
                        result.first, result.second, title)
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


def histogram_edges(draws, span, bins: int | None = None) -> np.ndarray:
    """Bin edges over ``span`` (the draws' central 99.5%): ``bins`` bins, or by default the
    Freedman-Diaconis number (width 2 IQR n^(-1/3), from the draws' own spread), 10 to 200."""
    low, high = float(span[0]), float(span[1])
    if bins is None:
        q1, q3 = np.quantile(draws, [0.25, 0.75])
        width = 2 * (q3 - q1) * np.size(draws) ** (-1 / 3)
        bins = int(np.clip(np.ceil((high - low) / width), 10, 200)) if width > 0 else 10
    if int(bins) < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    if high <= low:  # (nearly) all draws equal: one narrow bin around them
        low, high = padded(low, high)
    return np.linspace(low, high, int(bins) + 1)


def plot_posterior(result, ax: Axes | None = None, *, which: str = "next", digits: int = 3,
                   n_points: int = 801, bins: int | None = None, title: str | None = None) -> Axes:
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
        difference on a new dataset, with the probabilities ``result.next_dataset.probabilities``;
        ``"delta0"``: the draws of the population mean ``delta0``, with the probabilities
        ``result.population.probabilities``. The draws are shown as a
        histogram under a Gaussian kernel density estimate; where the quadrature answers
        the fit (its chains did not mix, or were too close to call), its density instead,
        with no histogram.
    digits : int
        Decimals of the probabilities written on the plot.
    n_points : int
        Points of the density curve over the plotted range (the central 99.5% of the draws
        and the ROPE), and as many again over the draws' central 99.5%: a posterior far
        narrower than the ROPE still gets a resolved peak.
    bins : int, optional
        Bins of the histogram of the draws over their central 99.5%, so that the bins follow
        the draws' own spread, not the plotted range (a ROPE a hundred times wider than the
        posterior would leave two bins under the peak). By default the Freedman-Diaconis
        number (bin width 2 IQR n^(-1/3)), between 10 and 200. Heights are densities over
        all the draws, so histogram and density curve agree.
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
    ax = new_axes(ax, (7, 4.2))
    rope = Rope.coerce(rope)

    if kind == "point":
        low, high = padded(min(payload.loc, rope.low), max(payload.loc, rope.high), 0.25)
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
        elif kind == "curve":
            points, values = payload
            cumulative = np.concatenate([[0.0], np.cumsum(np.diff(points)
                                                          * (values[1:] + values[:-1]) / 2)])
            tails = np.interp([0.0025, 0.9975], cumulative / cumulative[-1], points)
            mode = float(points[np.argmax(values)])
        else:
            if kind == "mixture":
                payload, mixture = payload
            # the central 99.5%: a few far draws of a heavy tail would squash the plot
            tails = np.quantile(payload, [0.0025, 0.9975])
            mode = None
        low, high = padded(min(tails[0], rope.low), max(tails[1], rope.high))
        # the exact mode and ROPE bounds on the grid: a true peak and crisp region edges;
        # a second grid over the bulk resolves a peak far narrower than the plotted range
        grid = np.linspace(low, high, n_points)
        extra = [rope.low, rope.high] + ([mode] if mode is not None else [])
        grid = np.unique(np.concatenate([grid, np.linspace(*tails, n_points), extra]))
        if kind == "analytic":
            density = payload.pdf(grid)
        elif kind == "curve":
            density = np.interp(grid, points, values, left=0.0, right=0.0)
        else:
            edges = histogram_edges(payload, tails, bins)
            counts, edges = np.histogram(payload, bins=edges)
            ax.stairs(counts / (payload.size * np.diff(edges)), edges, color="#666666", lw=0.7,
                      zorder=4, label=f"histogram of {payload.size} posterior draws")
            density = mixture.pdf(grid).mean(axis=0) if kind == "mixture" else \
                stats.gaussian_kde(payload)(grid)
        line, = ax.plot(grid, density, color="black", lw=1.6, zorder=3,
                        label="posterior density" + {"draws": " (KDE)",
                                                     "curve": " (quadrature)"}.get(kind, ""))
        line.set_gid("posterior")
        regions = (grid <= rope.low, (grid >= rope.low) & (grid <= rope.high), grid >= rope.high)
        for where, color in zip(regions, REGION_COLORS):
            ax.fill_between(grid, density, where=where, color=color, alpha=0.45, lw=0, zorder=2)
        ax.set_ylim(0, 1.45 * float(np.max(density)))
        ax.set_ylabel("posterior density")
        peak_x = float(grid[np.argmax(density)])

    shade_rope(ax, rope)
    ax.set_xlim(low, high)
    ax.set_xlabel(difference_label(first, second))
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
    return finish(ax)

