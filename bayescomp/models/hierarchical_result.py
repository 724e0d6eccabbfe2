"""The result of :func:`bayescomp.hierarchical`: the posterior of the hierarchical model, its
decisions on the population and the next dataset (its text is written by
:mod:`bayescomp.presentation.results.hierarchical`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pandas as pd

from bayescomp.decisions import THRESHOLD
from bayescomp.models.diagnostics import Diagnostics, SamplerChecked
from bayescomp.models.estimate import Estimate
from bayescomp.models.quadrature_result import Quadrature
from bayescomp.reportable import Reportable
from bayescomp.rope import Rope, most_probable_shares, region_labels

@dataclass(frozen=True)
class HierarchicalResult(SamplerChecked, Reportable):
    """Posterior of the hierarchical model for ``first - second``.

    It answers two questions, each under its own name, with its own probabilities, interval
    and decision (:class:`~bayescomp.models.estimate.Estimate`):

    Attributes
    ----------
    population : Estimate
        delta0, the location of the population of mean differences (with a heavy-tailed
        population, small nu, it behaves like a median of the datasets' differences, not
        their mean: a few datasets far out move it little); its probabilities, mean, sd and
        interval from delta0's conditional per draw
        (:mod:`bayescomp.models.conditional_summaries`).
    next_dataset : Estimate
        delta_next, the mean difference on a new dataset from the same population; its
        probabilities are the posterior mean of the Student-t masses, its interval the
        mixture's of these Student-t.
    next_masses : ndarray (2 x draws, 3)
        Per draw, the next dataset's Student-t mass left of, inside and right of the ROPE,
        at the draw's delta0 and at its antithetic partner, two rows per draw
        (:func:`bayescomp.models.region_masses.next_dataset_member_masses`).
    draw_order : ndarray of int
        The chain-major draws of ``idata`` that make the reported posterior, in order: every
        draw once, or, where the chains sit in separate modes, the modes mixed by their
        weights. ``next_masses`` and every summary are of these draws (or of their
        conditionals).
    modes : tuple of Mode
        Empty when the chains mix, or when they do not and nothing can be decided. When
        they settle in separate modes of the posterior (as on near-identical algorithms)
        that each pass their own diagnostics (``modes_separate``), one
        :class:`~bayescomp.models.modes.Mode` per mode, largest first, weighed by its
        estimated mass; when they move slowly between modes but every chain makes the same
        decisions, one per chain, unweighed; when they move too slowly for that but every
        quartile of the slowest locator makes the same decisions, one per quartile
        (``Mode.stratum``; :mod:`bayescomp.models.strata`), unweighed. The probabilities then
        mix the modes by their weights (every draw alike where there are none), and a
        decision stands only when every mode makes it (:mod:`bayescomp.models.modes`).
    quadrature : Quadrature or None
        Where the chains failed their diagnostics (and their modes, if any, differ), or
        passed them with a probability too close to the threshold for their Monte Carlo
        error that the quadrature places, the probabilities by quadrature over delta0,
        sigma0 and nu
        (:mod:`bayescomp.models.quadrature`); when it is ``ok`` (:attr:`by_quadrature`),
        every probability, mean, sd and interval of the result is its (the draws are kept
        as sampled), and no modes are read.
    datasets : pandas.DataFrame
        Per dataset (index): ``n``, ``rho``, raw ``mean`` difference with its correlated
        t-test (``p_left_ttest``, ``p_rope_ttest``, ``p_right_ttest``, 95% ``ttest_hdi_low``,
        ``ttest_hdi_high``) and the shrunken delta_i (``delta_mean``, ``delta_sd``,
        ``delta_hdi_low``, ``delta_hdi_high`` of its draws; ``p_left``, ``p_rope``,
        ``p_right`` the means of its normal conditional's masses,
        :func:`bayescomp.models.region_masses.dataset_probabilities`; all the quadrature's
        where it answers), and ``floored``: whether the floor of the scores' resolution, not
        the folds, sets its sigma_i (:func:`bayescomp.data.resolution.floored_masks`; the
        datasets the :class:`~bayescomp.ConstantDifferencesWarning` names).
    """

    first: str
    second: str
    rope: Rope
    idata: az.InferenceData = field(repr=False)
    population: Estimate = field(repr=False)
    next_dataset: Estimate = field(repr=False)
    next_masses: np.ndarray = field(repr=False)
    draw_order: np.ndarray = field(repr=False)
    datasets: pd.DataFrame = field(repr=False)
    baselines: object = field(repr=False)
    diagnostics: Diagnostics = field(repr=False)
    settings: dict = field(repr=False)
    modes: tuple = field(default=(), repr=False)
    modes_separate: bool = False
    quadrature: Quadrature | None = field(default=None, repr=False)

    @property
    def labels(self) -> tuple[str, str, str]:
        return region_labels(self.first, self.second)

    @property
    def next_dataset_most_probable(self) -> np.ndarray:
        """Share of draws in which left, rope or right has the next dataset's largest mass
        (the numbers baycomp and the paper print beside the probabilities); the quadrature's
        share of the posterior where it answers (:attr:`by_quadrature`)."""
        if self.by_quadrature:
            return self.quadrature.next_dataset_most_probable
        return most_probable_shares(self.next_masses)

    @property
    def attempts(self) -> tuple:
        """Every fit made, in order: its settings, diagnostics verdict, problems and seconds."""
        return tuple(self.settings.get("attempts", ()))

    @property
    def reliable(self) -> bool:
        """Whether the fit passed its sampler diagnostics, or its chains, though they do not
        mix, can decide (:attr:`modes`), or the quadrature can (:attr:`quadrature`); if
        not, no decision is made."""
        return self.diagnostics.ok or bool(self.modes) or self.by_quadrature

    @property
    def by_quadrature(self) -> bool:
        """Whether the probabilities, means and intervals (and the figures' densities) are
        the quadrature's (:attr:`quadrature`, reliable), not the draws'."""
        return self.quadrature is not None and self.quadrature.ok

    @property
    def close_call_by_quadrature(self) -> bool:
        """Whether the quadrature answered a fit that passed its diagnostics, because a
        probability of its draws lay within four Monte Carlo errors of the threshold (where
        it answers a fit that failed them, its chains did not mix)."""
        return self.by_quadrature and self.diagnostics.ok

    def to_frame(self) -> pd.DataFrame:
        """One row per dataset (see :attr:`datasets`)."""
        return self.datasets.copy()

    def verdicts(self, threshold: float = THRESHOLD) -> list[str]:
        """The verdicts on the population (delta0) and on the next dataset, one sentence each
        (:func:`bayescomp.presentation.verdicts.verdict`); none when the fit is not :attr:`reliable`."""
        from bayescomp.presentation.results.hierarchical import verdicts
        return verdicts(self, threshold)

    def to_dict(self, threshold: float = THRESHOLD) -> dict:
        """Every number :meth:`summary` shows, JSON-ready (NaN as None), regions keyed by the
        algorithms' names (``"<second> better"``, ``"equivalent"``, ``"<first> better"``)."""
        from bayescomp.presentation.results.hierarchical import to_dict
        return to_dict(self, threshold)

    def heavy_tailed(self) -> bool:
        """Whether most of nu's posterior lies below 3, where the population is heavy-tailed
        (the quadrature's median where it answers; no nu, a normal population: False)."""
        if self.by_quadrature:
            return bool(self.quadrature.nu_median < 3)
        posterior = self.idata.posterior
        return "nu" in posterior and float(np.median(posterior["nu"].values)) < 3

    def summary(self) -> str:
        """The fit in text: verdicts, both estimates, the per-dataset table, the modes, the
        baselines, the attempts and the sampler's diagnostics."""
        from bayescomp.presentation.results.hierarchical import summary
        return summary(self)

    def _report(self):
        from bayescomp.presentation.results.hierarchical import report
        return report(self)


def region_summaries(draws, probabilities, hdi_prob: float = 0.95) -> list[dict]:
    """Mean, sd and HDI of each column of (draw, quantity) draws, with its P(left / rope /
    right) from ``probabilities`` (quantity, 3), the means of per-draw conditional masses
    (:mod:`bayescomp.models.region_masses`).

    The HDI is ArviZ's (``az.hdi`` of a column, unimodal): the narrowest of the intervals
    between sorted draws k and k + floor(hdi_prob n), the first where several are as narrow,
    computed for all columns at once (one ``az.hdi`` call per dataset took 0.1 s of a fit of
    400 datasets)."""
    # one row per quantity: its sums pairwise, as numpy sums a single column
    columns = np.ascontiguousarray(np.asarray(draws, dtype=float).T)
    n = columns.shape[1]
    ordered = np.sort(columns, axis=1)
    included = int(np.floor(hdi_prob * n))
    first = np.argmin(ordered[:, included:] - ordered[:, :n - included], axis=1)
    rows = np.arange(columns.shape[0])
    lows, highs = ordered[rows, first], ordered[rows, first + included]
    return [dict(mean=float(mean), sd=float(sd), hdi_low=float(low), hdi_high=float(high),
                 p_left=float(left), p_rope=float(inside), p_right=float(right))
            for mean, sd, low, high, (left, inside, right) in zip(
                columns.mean(axis=1), columns.std(axis=1, ddof=1), lows, highs, probabilities)]
