"""A paper's analysis of K algorithms in one call: the joint model, the best algorithm against
each other one, the sensitivity to the ROPE and the prior, and the classical baselines.

:func:`paper_analysis` fits :func:`bayescomp.models.joint.compare_many` once and reads
everything else off that fit where it can: the best algorithm (highest P(best)) against each
other one, from the same pair table and per-dataset shrunken effects, oriented ``best -
other``; the pair table at other ROPE widths (:func:`rope_sensitivity`: the posterior does
not depend on the ROPE, only the regions its draws are counted in do), and the pair table
under the other Student-t prior of :data:`bayescomp.PRIORS` ("baycomp" after "paper", else
"paper"): the two differ only in the prior of nu, so that table is read off the same draws by
Pareto-smoothed importance sampling (:mod:`bayescomp.models.prior_reweighting`) where the
weights' Pareto shape is at most 0.7, and otherwise from a second fit with the same seed, as
:func:`bayescomp.sensitivity` does for a pair. The Friedman test with Holm-corrected Wilcoxon
post-hoc pairs runs beside (:func:`bayescomp.baselines.friedman.friedman_test`).

The result holds data; its text (paragraph, Markdown, LaTeX, JSON) is written by
:mod:`bayescomp.presentation.paper_report`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayescomp.baselines.friedman import FriedmanResult, friedman_test
from bayescomp.data.scores import Scores
from bayescomp.decisions import SCOPES as DECISION_SCOPES
from bayescomp.decisions import UNRELIABLE, decide, decide_modes
from bayescomp.models.hierarchical_prior import PRIORS
from bayescomp.models.joint import compare_many, select_algorithms
from bayescomp.models.joint_posterior import (next_dataset_masses, pair_estimates,
                                              population_masses, reweighted_pair_table)
from bayescomp.models.joint_modes import part_probabilities
from bayescomp.models.joint_program import prepare
from bayescomp.models.joint_result import JointResult
from bayescomp.models.prior_reweighting import Reweighting, reweighting
from bayescomp.rope import Rope, region_labels
from bayescomp.summarised import Summarised

if TYPE_CHECKING:
    from bayescomp.annotations import RopeLike

#: the ROPE widths of the sensitivity table, as multiples of the analysis's ROPE
ROPE_FACTORS = (0.5, 1.0, 2.0)
#: the questions of every pair, as the pair table's column prefixes
SCOPES = DECISION_SCOPES["hierarchical"]
#: the priors the joint model can take (a Student-t population)
STUDENT_PRIORS = tuple(name for name, prior in PRIORS.items() if prior.population == "student")


def other_prior(prior: str) -> str:
    """The prior of the sensitivity refit: "baycomp" (baycomp's hyper-priors of nu) after
    "paper" (the published model's) or any other, "paper" after "baycomp"."""
    return "paper" if prior == "baycomp" else "baycomp"


def check_joint_input(scores: Scores, algorithms=None, prior: str = "paper") -> Scores:
    """The scores of the algorithms compared, after the checks the joint model makes before
    it samples (a Student-t prior, distinct known names, at least 2 datasets, on every
    dataset at least 3 splits): a fault is a ValueError naming the dataset or the
    name, raised before any compile or fit.
    """
    if prior not in STUDENT_PRIORS:
        raise ValueError(f"the joint model takes a Student-t prior, one of "
                         f"{list(STUDENT_PRIORS)}; got {prior!r}")
    chosen = select_algorithms(scores, algorithms)
    if len(chosen) < 2:
        raise ValueError(f"the joint model needs at least 2 datasets, got {len(chosen)}")
    prepare(chosen, PRIORS[prior])
    return chosen


def check_analysis_input(scores: Scores, algorithms=None, prior: str = "paper") -> Scores:
    """:func:`check_joint_input`'s checks, and at least 3 algorithms: the analysis ranks
    them and runs Friedman's test beside the joint model, which a pair has no use for."""
    chosen = check_joint_input(scores, algorithms, prior)
    if len(chosen.algorithms) < 3:
        raise ValueError(f"a paper's analysis compares at least 3 algorithms (it ranks them "
                         f"and runs Friedman's test), got {list(chosen.algorithms)}; for two, "
                         "use bayescomp.hierarchical (bayescomp compare)")
    return chosen


def _oriented(table: pd.DataFrame, best: str) -> pd.DataFrame:
    """The rows of ``table`` (columns first, second, *_p_left, *_p_rope, *_p_right, and a
    mean and HDI) that hold ``best``, turned to read ``best - other``: where ``best`` is the
    second, differences change sign and the left and right regions swap (decisions name
    the algorithms, so they hold as they are)."""
    rows = table[(table["first"] == best) | (table["second"] == best)].copy()
    flip = (rows["second"] == best).to_numpy()
    # copies of the columns swapped: where every row flips, pandas can hand back a view of
    # the very block being written, and the second column would get the first's new values
    rows.loc[flip, ["first", "second"]] = rows.loc[flip, ["second", "first"]].to_numpy(copy=True)
    lefts = [c for c in rows.columns if c.endswith("p_left")]
    for left in lefts:
        right = left[:-len("left")] + "right"
        rows.loc[flip, [left, right]] = rows.loc[flip, [right, left]].to_numpy(copy=True)
    for mean, low, high in (("delta0_mean", "delta0_hdi_low", "delta0_hdi_high"),
                            ("next_mean", "next_hdi_low", "next_hdi_high"),
                            ("delta_mean", "delta_hdi_low", "delta_hdi_high")):
        if mean in rows:
            rows.loc[flip, mean] = -rows.loc[flip, mean]
            rows.loc[flip, [low, high]] = -rows.loc[flip, [high, low]].to_numpy()
    if "mean" in rows:   # the raw mean difference of a dataset
        rows.loc[flip, "mean"] = -rows.loc[flip, "mean"]
    return rows.reset_index(drop=True)


def rope_sensitivity(result: JointResult, factors=ROPE_FACTORS) -> pd.DataFrame:
    """The pair table's probabilities and decisions at other ROPE widths, from the same draws.

    Each ROPE is the result's ROPE times a factor (both ends scaled). Per pair: P(left /
    rope / right) of delta0 (the share of its draws' copies) and of the next dataset (the posterior
    mean of its Student-t masses), computed as :func:`~bayescomp.models.joint.compare_many`
    computes them, and the decision at the result's threshold by two Monte Carlo errors; at
    factor 1 every number and decision is the pair table's.

    Returns
    -------
    pandas.DataFrame
        One row per (factor, pair): ``factor``, ``rope_low``, ``rope_high``, ``first``,
        ``second``, then ``<scope>_p_left``, ``_p_rope``, ``_p_right`` and
        ``_decision`` of the population and the next dataset.
    """
    post = result.idata.posterior
    rows = []
    for factor in factors:
        rope = Rope(result.rope.low * factor + 0.0, result.rope.high * factor)   # + 0.0: not -0
        masses = population_masses(post, rope), next_dataset_masses(post, rope)
        # where the chains did not mix, a pair decides what every part decides, as in the
        # pair table (bayescomp.models.joint_modes)
        parts = part_probabilities(*masses, result.modes) if result.modes else None
        # the draws as the pair table reads them (separate modes mixed by their weights)
        order = (result.draw_order if result.draw_order is not None
                 else np.arange(post.sizes["chain"] * post.sizes["draw"]))
        for p, (row, estimates) in enumerate(zip(result.table.itertuples(),
                                                 pair_estimates(*masses, order))):
            labels = region_labels(row.first, row.second)
            entry = dict(factor=float(factor), rope_low=rope.low, rope_high=rope.high,
                         first=row.first, second=row.second)
            for scope, (probabilities, errors) in zip(SCOPES, estimates):
                entry.update({f"{scope}_p_{region}": float(value) for region, value in
                              zip(("left", "rope", "right"), probabilities)})
                entry[f"{scope}_decision"] = (
                    UNRELIABLE if not result.reliable else
                    decide_modes(parts[0][(scope, p)], parts[1][(scope, p)], result.threshold,
                                 labels) if parts else
                    decide(probabilities, result.threshold, labels, errors))
            rows.append(entry)
    return pd.DataFrame(rows)


def _ttest_intervals(scores: Scores, best: str, others) -> pd.DataFrame:
    """Per dataset and other algorithm, the 95% interval of ``best - other`` of the
    correlated t-test (closed form): the raw estimate the shrinkage figure shows beside
    the shrunken one."""
    from bayescomp.models.correlated import correlated_ttests

    rows = []
    for other in others:
        for test in correlated_ttests(scores, best, other):
            low, high = test.interval()
            rows.append(dict(dataset=test.dataset, second=other, ttest_hdi_low=low,
                             ttest_hdi_high=high))
    return pd.DataFrame(rows)


@dataclass(frozen=True, eq=False)
class PaperAnalysis(Summarised):
    """Everything a paper's report of K algorithms says, as numbers.

    Attributes
    ----------
    joint : JointResult
        The one fit of the joint model every Bayesian number is read from.
    best : str
        The algorithm with the highest P(best).
    best_pairs : pandas.DataFrame
        One row per other algorithm, the joint pair table's row oriented ``best - other``
        (``first`` is always the best), with the next dataset's difference (``next_mean``,
        ``next_hdi_low``, ``next_hdi_high``) beside delta0's.
    best_datasets : pandas.DataFrame
        Per dataset and other algorithm, oriented ``best - other``: the raw ``mean``
        difference, the shrunken ``delta_mean``, ``delta_sd``, ``delta_hdi_low``,
        ``delta_hdi_high`` and its ``p_left``, ``p_rope``, ``p_right`` (the joint result's
        ``datasets``), and the correlated t-test's ``ttest_hdi_low``, ``ttest_hdi_high``.
    rope_sensitivity : pandas.DataFrame
        :func:`rope_sensitivity` of the joint fit.
    prior_fits : dict
        Prior name -> its JointResult, for the priors fitted: the analysis's prior, and the
        other one when it could not be read off that fit's draws.
    prior_tables : dict
        Prior name -> its pair table (:meth:`JointResult.to_frame`'s columns): the
        analysis's prior first, then the other one (absent when
        ``prior_sensitivity=False``), from its fit or reweighted.
    prior_reweighted : dict
        Prior name -> the :class:`~bayescomp.models.prior_reweighting.Reweighting` its
        table was read with, for a prior read off the joint fit's draws.
    friedman : FriedmanResult
        The Friedman test, Holm-corrected Wilcoxon pairs and Nemenyi's critical difference.
    settings : dict
        ``seed``, ``prior``, ``rope_factors``, ``alpha``, ``threshold``, ``reweight`` and
        the sampler's options.
    """

    joint: JointResult = field(repr=False)
    best: str
    best_pairs: pd.DataFrame = field(repr=False)
    best_datasets: pd.DataFrame = field(repr=False)
    rope_sensitivity: pd.DataFrame = field(repr=False)
    prior_fits: dict = field(repr=False)
    prior_tables: dict = field(repr=False)
    prior_reweighted: dict = field(repr=False)
    friedman: FriedmanResult = field(repr=False)
    settings: dict = field(repr=False)

    @property
    def algorithms(self) -> tuple:
        return self.joint.algorithms

    @property
    def rope(self) -> Rope:
        return self.joint.rope

    @property
    def n_datasets(self) -> int:
        return int(self.joint.settings["datasets"])

    @property
    def unreliable_fits(self) -> list[str]:
        """The priors whose fit failed its sampler diagnostics, the analysis's own first."""
        return [name for name, fit in self.prior_fits.items() if not fit.reliable]

    @property
    def reliable(self) -> bool:
        """Whether every fit the report reads passed its sampler diagnostics."""
        return not self.unreliable_fits

    def prior_sensitivity(self) -> pd.DataFrame:
        """The pair table under each prior: ``prior``, then :meth:`JointResult.to_frame`'s
        columns."""
        return pd.concat([table.assign(prior=name) for name, table in
                          self.prior_tables.items()], ignore_index=True)[
            ["prior", *self.joint.table.columns]]

    def paragraph(self) -> str:
        """The paragraph for the paper, every number and decision read from this result."""
        from bayescomp.presentation.paper_report import paragraph
        return paragraph(self)

    def summary(self) -> str:
        """The report in text."""
        from bayescomp.presentation.paper_report import summary
        return summary(self)

    def to_markdown(self) -> str:
        """The report in Markdown (``report.md``), figures not included."""
        from bayescomp.presentation.paper_report import to_markdown
        return to_markdown(self)

    def to_latex(self) -> str:
        """The pair table as a booktabs table and the paragraph (``report.tex``)."""
        from bayescomp.presentation.paper_report import to_latex
        return to_latex(self)

    def to_dict(self) -> dict:
        """Every number the text says, JSON-ready (``report.json``)."""
        from bayescomp.presentation.paper_report import to_dict
        return to_dict(self)


def paper_analysis(scores: Scores, algorithms=None, *, rope: RopeLike = 0.01,
                   seed: int | None = None, prior: str = "paper",
                   prior_sensitivity: bool = True, reweight: bool = True,
                   rope_factors=ROPE_FACTORS, alpha: float = 0.05,
                   **options) -> PaperAnalysis:
    """The analysis of a paper comparing K algorithms, in one call.

    Parameters
    ----------
    scores : Scores
        Paired fold scores; every dataset needs at least 3 splits.
    algorithms : sequence of str, optional
        The algorithms compared (default: all of them).
    rope : float or (float, float)
        Region of practical equivalence in the units of the scores.
    seed : int, optional
        The seed of both fits (drawn once and recorded when None).
    prior : str
        A Student-t prior of :data:`bayescomp.PRIORS` (not "gaussian").
    prior_sensitivity : bool
        Read the pair table under :func:`other_prior`: off the joint fit's draws by
        importance sampling where that works, else from one more fit of the joint model.
    reweight : bool
        False: always fit the joint model under the other prior (with the same seed) instead
        of reading it off the joint fit's draws.
    rope_factors : sequence of float
        The ROPE widths of :func:`rope_sensitivity`, as multiples of ``rope``.
    alpha : float
        Significance level of the Friedman test and its post-hoc tests.
    **options
        Passed to :func:`~bayescomp.models.joint.compare_many` (backend, chains,
        iter_warmup, iter_sampling, adapt_delta, max_treedepth, retries, ess, show_progress).

    Returns
    -------
    PaperAnalysis
    """
    scores = check_analysis_input(scores, algorithms, prior)
    from bayescomp.sampling import check_seed

    seed = check_seed(seed)   # drawn here once when None: both fits get this one
    joint = compare_many(scores, rope=rope, seed=seed, prior=prior, **options)
    fits, tables, reweighted = {prior: joint}, {prior: joint.to_frame()}, {}
    if prior_sensitivity:
        other = other_prior(prior)
        weights = _reweighting(joint, prior, other) if reweight else None
        if weights is None:
            fits[other] = compare_many(scores, rope=rope, seed=seed, prior=other, **options)
            tables[other] = fits[other].to_frame()
        else:
            reweighted[other] = weights
            tables[other] = reweighted_pair_table(joint, weights.weights)
    best = joint.best
    others = [a for a in joint.algorithms if a != best]
    # the t-test's intervals are of best - other already: joined after the orientation
    best_datasets = _oriented(joint.datasets, best).merge(
        _ttest_intervals(scores, best, others), on=["dataset", "second"], how="left")
    settings = dict(seed=int(seed), prior=prior, rope_factors=tuple(float(f) for f in rope_factors),
                    alpha=float(alpha), threshold=float(joint.threshold), reweight=bool(reweight),
                    **{k: v for k, v in options.items() if k != "show_progress"})
    pairs = joint.to_frame()
    for name, key in (("next_mean", "mean"), ("next_hdi_low", "hdi_low"),
                      ("next_hdi_high", "hdi_high")):
        pairs[name] = [getattr(joint.next_dataset[(a, b)], key)
                       for a, b in zip(pairs["first"], pairs["second"])]
    return PaperAnalysis(
        joint=joint, best=best, best_pairs=_oriented(pairs, best),
        best_datasets=best_datasets,
        rope_sensitivity=rope_sensitivity(joint, rope_factors), prior_fits=fits,
        prior_tables=tables, prior_reweighted=reweighted,
        friedman=friedman_test(scores, alpha=alpha), settings=settings)


def _reweighting(joint: JointResult, prior: str, other: str) -> Reweighting | None:
    """The weights that read ``other`` off the joint fit under ``prior`` (mode by mode where
    its chains sit in modes), or None where they cannot stand in for a fit: the fit failed
    its diagnostics, or the weights' Pareto shape is above 0.7."""
    if not joint.reliable:
        return None
    masses = joint.mode_weights if joint.modes_weighed else [np.nan] * len(joint.modes)
    weights = reweighting(joint.idata.posterior["nu"].values, prior, PRIORS[prior], PRIORS[other],
                          joint.modes, masses)
    return weights if weights.usable else None
