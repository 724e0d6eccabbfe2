"""Whether the ranks of simulation-based calibration are uniform, and the result that holds them.

Uniformity is tested per parameter with a chi-square test on ``bins`` equal groups of ranks
and with a binomial test of the number of ranks below the middle rank (a shifted
posterior moves it). :meth:`SBCResult.passes` asks both p-values to exceed a level
(default 0.001, lenient because several parameters are tested and a failing SBC is
usually glaring). The replications that make the ranks are run by
:mod:`bayescomp.validation.sbc`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from bayescomp.summarised import Summarised


# --------------------------------------------------------------------------- uniformity

def rank_uniformity(ranks, n_draws: int, bins: int | None = None) -> dict:
    """Tests that ranks in ``0..n_draws`` are uniform.

    Returns chi-square statistic, degrees of freedom and p-value on ``bins`` equal groups of
    ranks (``n_draws + 1`` must be a multiple of ``bins``; default the largest divisor
    giving at least 5 expected ranks per bin, at most 20 bins), the mean rank scaled to
    [0, 1] with its 99% interval under uniformity, and the binomial test of the number of
    ranks below the middle (for an odd number of possible ranks, the middle rank counts half).
    """
    ranks = np.asarray(ranks, dtype=int)
    size = ranks.size
    n_ranks = n_draws + 1
    if ranks.min(initial=0) < 0 or ranks.max(initial=0) > n_draws:
        raise ValueError(f"ranks must lie in 0..{n_draws}")
    if bins is None:
        divisors = [b for b in range(2, min(20, n_ranks) + 1) if n_ranks % b == 0]
        fitting = [b for b in divisors if size / b >= 5]
        bins = max(fitting) if fitting else min(divisors, default=1)
    if n_ranks % bins:
        raise ValueError(f"{n_ranks} possible ranks do not split into {bins} equal bins")
    counts = np.bincount(ranks // (n_ranks // bins), minlength=bins)
    chi2, p_chi2 = stats.chisquare(counts)
    scaled = ranks / n_draws
    mean = float(scaled.mean())
    # a discrete uniform on 0..L scaled by L has variance (L + 2) / (12 L)
    half = stats.norm.ppf(0.995) * np.sqrt((n_draws + 2) / (12 * n_draws) / size)
    below = np.sum(ranks < n_draws / 2) + 0.5 * np.sum(ranks == n_draws / 2)
    p_median = stats.binomtest(int(round(below)), size, 0.5).pvalue
    return dict(n=size, bins=bins, chi2=float(chi2), df=bins - 1, p_chi2=float(p_chi2),
                mean_rank=mean, mean_low=0.5 - half, mean_high=0.5 + half,
                below_middle=float(below), p_median=float(p_median), counts=counts)


@dataclass(frozen=True, eq=False)
class SBCResult(Summarised):
    """Ranks of the true parameters among the posterior draws of each replication.

    Attributes
    ----------
    program : str
    ranks : pandas.DataFrame
        One row per replication, one integer column (0..n_draws) per parameter.
    n_draws : int
        L, the thinned draws each rank is taken among.
    fits : pandas.DataFrame
        Per replication: ``seed``, ``divergences``, ``min_ess`` (smallest bulk ESS of the
        ranked parameters over all draws), ``seconds``.
    truth : pandas.DataFrame
        The true values that were ranked.
    settings : dict
    """

    program: str
    ranks: pd.DataFrame = field(repr=False)
    n_draws: int
    fits: pd.DataFrame = field(repr=False)
    truth: pd.DataFrame = field(repr=False)
    settings: dict = field(repr=False)

    @property
    def parameters(self) -> list[str]:
        return list(self.ranks.columns)

    def rank_test(self, name: str, bins: int | None = None) -> dict:
        """:func:`rank_uniformity` of the ranks of parameter ``name``, with the counts per bin."""
        return rank_uniformity(self.ranks[name], self.n_draws, bins)

    def uniformity(self, bins: int | None = None) -> pd.DataFrame:
        """Per parameter: chi-square and median tests of uniform ranks (see :func:`rank_uniformity`)."""
        rows = {}
        for name in self.parameters:
            test = self.rank_test(name, bins)
            test.pop("counts")
            rows[name] = test
        return pd.DataFrame(rows).T

    def passes(self, level: float = 0.001, bins: int | None = None) -> bool:
        """Whether every parameter's chi-square and median p-values exceed ``level``."""
        table = self.uniformity(bins)
        return bool((table["p_chi2"] > level).all() and (table["p_median"] > level).all())

    def summary(self, bins: int | None = None) -> str:
        table = self.uniformity(bins)
        low_ess = int((self.fits["min_ess"] < self.n_draws).sum())
        lines = [
            f"SBC of the {self.program} program: {len(self.ranks)} replications, ranks among "
            f"{self.n_draws} thinned draws ({self.settings.get('chains')} chains x "
            f"{self.settings.get('iter_sampling')} draws)",
            f"  {self.settings.get('description', '')}".rstrip(),
            table[["n", "bins", "chi2", "df", "p_chi2", "mean_rank", "mean_low", "mean_high",
                   "p_median"]].to_string(float_format=lambda v: f"{v:.4g}"),
            f"  replications with divergences: {int((self.fits['divergences'] > 0).sum())}; "
            f"with ESS below {self.n_draws}: {low_ess}; wall time "
            f"{self.fits['seconds'].sum():.1f} s of fits",
        ]
        return "\n".join(line for line in lines if line)
