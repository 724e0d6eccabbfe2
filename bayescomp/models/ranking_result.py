"""The result of the Plackett-Luce ranking (:func:`bayescomp.models.ranking.rank_algorithms`):
the posterior's draws and what is read from them; its text and JSON are in
:mod:`bayescomp.presentation.results.ranking`."""
from __future__ import annotations

from dataclasses import dataclass, field

import arviz as az
import pandas as pd

from bayescomp.decisions import THRESHOLD, leaders
from bayescomp.models.diagnostics import Diagnostics, SamplerChecked
from bayescomp.reportable import Reportable


@dataclass(frozen=True)
class RankingResult(SamplerChecked, Reportable):
    """Posterior of the Plackett-Luce model of the algorithms' rankings.

    Attributes
    ----------
    algorithms : tuple of str
    worths : pandas.DataFrame
        Posterior draws (rows) of the worths (columns, summing to 1 per draw).
    p_best : pandas.Series
        Posterior probability that each algorithm has the largest worth.
    p_best_mcse : pandas.Series
        Monte Carlo standard error of each ``p_best`` (the verdict names a best algorithm
        only where its ``p_best`` clears the threshold by two of them, as every decision of
        the package does: :data:`bayescomp.decisions.MC_MARGIN`).
    p_best_gap_mcse : pandas.Series
        Monte Carlo standard errors of the gap between the largest ``p_best`` and each,
        taken on the same draws (0 for the largest): algorithms within two of them share
        the lead (:func:`bayescomp.decisions.leaders`).
    rank_probabilities : pandas.DataFrame
        Algorithms x ranks 1..k: posterior probability that the algorithm's worth is the
        r-th largest. Rows and columns sum to 1.
    expected_rank : pandas.DataFrame
        Per algorithm, the posterior mean rank of its worth (``mean``; 1 = largest worth) and
        the central credible interval ``low``, ``high`` (ranks are integers, so are its
        bounds). Not the mean observed rank (``observed_ranks.mean()``).
    worth : pandas.DataFrame
        Per algorithm the worth's ``mean`` (the probability of being ranked first on a new
        dataset, scmamp's ``expected.win.prob``), ``sd`` and HDI ``hdi_low``, ``hdi_high``.
    observed_ranks : pandas.DataFrame
        Datasets x algorithms: the data, ranks by mean score, algorithms tied within the
        ROPE (``settings["rope"]``) sharing their average rank.
    """

    algorithms: tuple
    worths: pd.DataFrame = field(repr=False)
    p_best: pd.Series = field(repr=False)
    p_best_mcse: pd.Series = field(repr=False)
    p_best_gap_mcse: pd.Series = field(repr=False)
    rank_probabilities: pd.DataFrame = field(repr=False)
    expected_rank: pd.DataFrame = field(repr=False)
    worth: pd.DataFrame = field(repr=False)
    observed_ranks: pd.DataFrame = field(repr=False)
    idata: az.InferenceData = field(repr=False)
    diagnostics: Diagnostics = field(repr=False)
    settings: dict = field(repr=False)

    @property
    def best(self) -> str:
        """The algorithm most probably best (the first of those that share the largest
        p_best, :func:`bayescomp.decisions.leaders`)."""
        return leaders(self.p_best, self.p_best_gap_mcse)[0]

    def verdict(self, threshold: float = THRESHOLD) -> str:
        """One sentence naming the best algorithm, or the most probably best when none
        reaches ``threshold``."""
        from bayescomp.presentation.results.ranking import verdict
        return verdict(self, threshold)

    def to_frame(self) -> pd.DataFrame:
        """One row per algorithm, best first: worth, P(best), posterior mean rank of the
        worth (``rank_mean``) and its interval, mean observed rank on the datasets."""
        frame = pd.concat([
            self.worth.add_prefix("worth_"), self.p_best.rename("p_best"),
            self.expected_rank.add_prefix("rank_"),
            self.observed_ranks.mean().rename("mean_observed_rank")], axis=1)
        frame.index.name = "algorithm"
        return frame.sort_values(["rank_mean", "p_best"], ascending=[True, False])

    def to_dict(self) -> dict:
        """Plain Python (JSON-able) numbers: verdict, per-algorithm table, rank
        probabilities, diagnostics and settings."""
        from bayescomp.presentation.results.ranking import to_dict
        return to_dict(self)

    def summary(self) -> str:
        """The ranking in text: the verdict, the per-algorithm table, the probability of
        each rank and the sampler's diagnostics."""
        from bayescomp.presentation.results.ranking import summary
        return summary(self)

    def meaning(self) -> str:
        """What the ROPE and the ranks are, in one sentence."""
        from bayescomp.presentation.results.ranking import meaning
        return meaning(self)

    def plot(self, axes=None):
        """Ranks of the worths and their probabilities
        (:func:`bayescomp.presentation.plots.ranking.plot_ranking`)."""
        from bayescomp.presentation.plots.ranking import plot_ranking

        return plot_ranking(self, axes=axes)

    def _report(self):
        from bayescomp.presentation.results.ranking import report
        return report(self)
