"""How the verdict of the hierarchical model moves with the prior and the ROPE.

:func:`sensitivity` reads every ROPE width off the same draws (the posterior does not depend
on the ROPE, only the regions the draws are counted in do), and every prior that differs from
an earlier one only in the prior of nu off that prior's draws, reweighted by Pareto-smoothed
importance sampling (:mod:`bayescomp.models.prior_reweighting`) where the weights allow it;
every other prior gets a fit of its own. For each (prior, ROPE) it reports P(left / rope /
right) of ``delta0`` and of the next dataset, from the per-draw masses
:func:`bayescomp.hierarchical` reports them from (:mod:`bayescomp.models.region_masses`), with
the decision at the threshold. A fit that the quadrature answers (its chains did not mix,
:mod:`bayescomp.models.quadrature`) is read at every other ROPE by one quadrature of the
same posterior, and no prior is read off its draws; every later prior that differs from it
only in nu's prior is then read by quadrature alone, without a fit (its chains would meet the
same modes), where its error is within the tolerance at every ROPE. A fit read in modes (they agree at its ROPE) is read at
each other ROPE as :func:`bayescomp.hierarchical` at that ROPE would read it: by its modes
where their probabilities agree there too, else by the quadrature.

(The module is not called ``sensitivity``: importing a submodule sets the package attribute
of its name, which would hide the function ``bayescomp.sensitivity``.)
"""
from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayescomp.data.scores import Scores
from bayescomp.decisions import THRESHOLD, decide, decide_modes
from bayescomp.reportable import Reportable
from bayescomp.models.hierarchical_prior import PRIORS, HierarchicalPrior, resolve_prior
from bayescomp.models.hierarchical_program import prepare
from bayescomp.models.modes import probability_mcse
from bayescomp.models.quadrature import quadrature_at_ropes
from bayescomp.models.prior_reweighting import (Reweighting, differs_only_in_nu, reweighting,
                                                weighted_decision, weighted_estimate)
from bayescomp.models.region_masses import next_dataset_masses, population_masses
from bayescomp.rope import Rope, region_labels

if TYPE_CHECKING:
    from typing import Mapping, Sequence
    from bayescomp.annotations import RopeLike

# the module, not the function bayescomp.hierarchical that shadows it as a package attribute
_hierarchical = importlib.import_module(".hierarchical", __package__)

#: default ROPE half-widths, for scores given as fractions (0.01 is one point of accuracy);
#: multiplied by 100 for scores given as percentages
DEFAULT_ROPES = (0.0, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05)
QUANTITIES = ("delta0", "next")


def _ropes(ropes) -> list[Rope]:
    if isinstance(ropes, (Rope, int, float, np.number)):
        ropes = [ropes]
    ropes = [Rope.coerce(r) for r in ropes]
    if not ropes:
        raise ValueError("no ROPE given: pass half-widths, e.g. ropes=(0, 0.01, 0.02)")
    return ropes


def default_ropes(scores: Scores, first: str, second: str) -> tuple:
    """:data:`DEFAULT_ROPES` in the units of the two algorithms' scores: as they are for
    scores in [0, 1], times 100 for scores in [0, 100]; any other range has no default."""
    values = np.concatenate([d.values[[scores.algorithm_index(a) for a in (first, second)]]
                             .ravel() for d in scores.datasets])
    low, high = float(values.min()), float(values.max())
    if 0 <= low and high <= 1:
        return DEFAULT_ROPES
    if 0 <= low and high <= 100:
        return tuple(100 * r for r in DEFAULT_ROPES)
    raise ValueError(
        f"the scores of {first} and {second} range over [{low:.4g}, {high:.4g}], neither "
        "fractions nor percentages, so there is no default ROPE: pass ropes= in their units, "
        "e.g. ropes=(0, 0.5, 1, 2) for differences of about one unit")


def _priors(priors) -> dict:
    """Name -> prior (a name of hierarchical_prior.PRIORS or a HierarchicalPrior)."""
    if priors is None:
        # read at call time, so that priors added to PRIORS appear here
        return {name: name for name in PRIORS}
    if isinstance(priors, (str, HierarchicalPrior)):
        priors = [priors]
    if isinstance(priors, dict):
        chosen = dict(priors)
    else:
        chosen = {}
        for i, prior in enumerate(priors):
            chosen[prior if isinstance(prior, str) else f"custom {i + 1}"] = prior
    for prior in chosen.values():
        resolve_prior(prior)
    if not chosen:
        raise ValueError(f"no prior given; choose from {sorted(PRIORS)}")
    return chosen


@dataclass(frozen=True)
class SensitivityResult(Reportable):
    """P(left / rope / right) of delta0 and of the next dataset under each prior and ROPE.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (prior, rope, quantity): ``rope_low``, ``rope_high``, ``p_left``,
        ``p_rope``, ``p_right``, ``decision`` (at ``threshold``), ``reliable`` (whether
        the fit the row is read from passed its diagnostics), ``read_from`` (the prior of
        that fit: the row's own, or the one whose draws were reweighted; "quadrature" for a
        prior read by quadrature alone) and ``pareto_k`` (the reweighting's Pareto shape;
        NaN otherwise). ``rope`` is the half-width
        ``(high - low) / 2``; ``quantity`` is "delta0" or "next".
    fits : dict
        Prior name -> its :class:`~bayescomp.models.hierarchical.HierarchicalResult`, for
        the priors that were fitted.
    reweighted : dict
        Prior name -> its :class:`~bayescomp.models.prior_reweighting.Reweighting`, for the
        priors read off another prior's draws.
    by_quadrature : dict
        Prior name -> its :class:`~bayescomp.models.quadrature_result.Quadrature` at each
        ROPE, for the priors read by quadrature alone (no fit).
    """

    first: str
    second: str
    table: pd.DataFrame = field(repr=False)
    fits: dict = field(repr=False)
    threshold: float = THRESHOLD
    seed: int | None = None
    reweighted: dict = field(default_factory=dict, repr=False)
    by_quadrature: dict = field(default_factory=dict, repr=False)

    @property
    def labels(self) -> tuple[str, str, str]:
        return region_labels(self.first, self.second)

    @property
    def priors(self) -> list[str]:
        """Every prior of the table, in the order asked for."""
        return list(dict.fromkeys(self.table["prior"]))

    @property
    def quantities(self) -> tuple[str, ...]:
        """The quantities of :attr:`table`: ``"delta0"`` and ``"next"`` (the next dataset)."""
        return QUANTITIES

    def to_frame(self) -> pd.DataFrame:
        """The long table (see :attr:`table`)."""
        return self.table.copy()

    def decisions(self, quantity: str = "next") -> pd.DataFrame:
        """ROPE half-widths (rows) x priors (columns): the decision for ``quantity``."""
        if quantity not in QUANTITIES:
            raise ValueError(f"quantity must be one of {QUANTITIES}, got {quantity!r}")
        rows = self.table[self.table.quantity == quantity]
        return rows.pivot(index="rope", columns="prior", values="decision")[self.priors]

    def stable(self, quantity: str = "next") -> bool:
        """Whether the decision for ``quantity`` is the same under every prior and ROPE."""
        return self.decisions(quantity).stack().nunique() == 1

    def summary(self) -> str:
        """How each decision moves with the prior and the ROPE, and the long table."""
        from bayescomp.presentation.results.sensitivity import summary
        return summary(self)

    def __str__(self) -> str:
        return self.summary()

    def _report(self):
        from bayescomp.presentation.results.sensitivity import report
        return report(self)

    def plot(self, axes=None):
        """The figure of :func:`bayescomp.presentation.plots.ranking.plot_sensitivity`."""
        from bayescomp.presentation.plots.ranking import plot_sensitivity

        return plot_sensitivity(self, axes=axes)


def sensitivity(scores: Scores, first: str, second: str, *,
                ropes: Sequence[RopeLike] | None = None,
                priors: Sequence | Mapping[str, str | HierarchicalPrior] | None = None,
                seed: int | None = None, threshold: float = THRESHOLD, reweight: bool = True,
                **options) -> SensitivityResult:
    """Read the hierarchical comparison under each prior and at several ROPE widths.

    Parameters
    ----------
    scores : Scores
    first, second : str
        Algorithms; differences are ``first - second``.
    ropes : sequence of float or (float, float), optional
        ROPE half-widths (or intervals), in the units of the scores. None:
        :data:`DEFAULT_ROPES` (0 to 0.05) for scores in [0, 1], the same times 100 for
        scores in [0, 100] (percentages); other scores need explicit ROPEs.
    priors : None, sequence or dict
        Names of :data:`bayescomp.PRIORS`, :class:`~bayescomp.HierarchicalPrior` objects, or
        a dict of name -> either. None: every prior in :data:`bayescomp.PRIORS`.
    seed : int, optional
        Seed of every fit, the same for each prior and used as it is: a fitted prior's
        numbers are those of ``bayescomp.hierarchical(scores, first, second, prior=...,
        seed=seed)`` with the same options (the "paper" prior's are
        :func:`bayescomp.compare_all`'s cell of the pair with this seed). The priors are
        different posteriors, so sharing a seed correlates nothing a reader compares. Drawn
        once and recorded when None.
    threshold : float
        Probability a region needs for a decision.
    reweight : bool
        Read a prior that differs from an earlier fitted one only in the prior of nu ("paper",
        "baycomp", "kruschke" and "juarez_steel" do) off that fit's draws, by Pareto-smoothed
        importance sampling, when that fit passed its diagnostics (in one mode or, weighed
        mode by mode, in several) and the weights' Pareto shape is at most 0.7
        (:mod:`bayescomp.models.prior_reweighting`):
        its numbers then agree with its own fit's within Monte Carlo error, and cost no
        fit. False: fit every prior. (Either way, once a fit is answered by the quadrature,
        every later prior that differs from it only in nu's prior is read by quadrature
        alone where its error allows.)
    **options
        Passed to :func:`bayescomp.hierarchical` (backend, chains, iter_warmup,
        iter_sampling, adapt_delta, retries, ...).

    Returns
    -------
    SensitivityResult
    """
    ropes = _ropes(default_ropes(scores, first, second) if ropes is None else ropes)
    chosen = _priors(priors)
    for name in ("rope", "prior", "seed", "baselines"):
        if name in options:
            raise TypeError(f"sensitivity() sets {name!r} itself; pass ropes=, priors=, seed=")
    from bayescomp.sampling import check_seed

    seed = check_seed(seed)   # drawn here once when None: every prior's fit gets this one
    labels = region_labels(first, second)
    # per fit, per ROPE, per draw, chain by chain: each question's masses (the fit's own
    # estimators), computed once and read by every prior read off that fit
    rows, fits, reweighted, masses, by_grid = [], {}, {}, {}, {}
    swapped = {}   # per fit read in modes: the ROPEs where its modes differ, by quadrature
    for name, prior in chosen.items():
        # the fit is given the name, so that it reports it
        resolved = resolve_prior(prior)[1]
        weights = _reweighting(resolved, fits) if reweight else None
        grid = (_quadrature_alone(scores, first, second, resolved, ropes)
                if weights is None and any(fit.by_quadrature and differs_only_in_nu(
                    fit.settings["prior"], resolved) for fit in fits.values())
                else None)
        if grid is not None:
            # the chains of an earlier prior that differs only in nu's did not mix, and the
            # quadrature answered: so it does here (as a fit's draws are reweighted), without
            # a fit whose chains would meet the same modes
            by_grid[name] = grid
            masses[name] = [_answers(q) for q in grid]
        elif weights is None:
            fit = _hierarchical.hierarchical(scores, first, second, rope=ropes[0], prior=prior,
                                             seed=seed, baselines=False, **options)
            fits[name] = fit
            posterior = fit.idata.posterior
            masses[name] = (_by_quadrature(fit, scores, ropes) if fit.by_quadrature else
                            [(population_masses(posterior, rope),
                              next_dataset_masses(posterior, rope)) for rope in ropes])
            if fit.modes and options.get("quadrature", True):
                swapped[name] = _modes_or_quadrature(fit, scores, ropes, masses[name])
        else:
            reweighted[name] = weights
            fit = fits[weights.base]
        for k, (rope, both) in enumerate(zip(ropes,
                                             masses[name if weights is None else weights.base])):
            if weights is None:
                both = swapped.get(name, {}).get(k, both)
            for quantity, per_draw in zip(QUANTITIES, both):
                reliable = fit.reliable
                if isinstance(per_draw, tuple):
                    # the quadrature's answer at this ROPE: the fit's, or where its modes
                    # differ here
                    p, error, reliable = per_draw
                    decision = (decide(p, threshold, labels, mcse=error) if reliable
                                else fit.UNRELIABLE)
                elif weights is None:
                    # the draws as the fit reports them (modes mixed by their weights)
                    p = per_draw.reshape(-1, 3)[fit.draw_order].mean(axis=0)
                    decision = _decision(fit, p, per_draw, threshold, labels)
                else:
                    estimate = weighted_estimate(per_draw, weights.weights)
                    p = estimate[0]
                    decision = weighted_decision(estimate, per_draw, weights.weights,
                                                 [mode.chains for mode in fit.modes],
                                                 threshold, labels)
                rows.append(dict(
                    prior=name, rope=(rope.high - rope.low) / 2, rope_low=rope.low + 0.0,  # not -0
                    rope_high=rope.high, quantity=quantity, p_left=p[0], p_rope=p[1],
                    p_right=p[2], reliable=reliable, decision=decision,
                    read_from=("quadrature" if grid is not None else
                               name if weights is None else weights.base),
                    pareto_k=np.nan if weights is None else weights.pareto_k))
    return SensitivityResult(first, second, pd.DataFrame(rows), fits, threshold, int(seed),
                             reweighted, by_grid)


def _by_quadrature(fit, scores: Scores, ropes: list[Rope]) -> list[tuple]:
    """Per ROPE, both questions' (probabilities, errors, whether reliable) for a fit that
    the quadrature answers: its own at its ROPE, one quadrature of the same posterior read
    at every other (:func:`~bayescomp.models.quadrature.quadrature_at_ropes`)."""
    own = (fit.rope.low, fit.rope.high)
    others = [rope for rope in ropes if (rope.low, rope.high) != own]
    found = {own: fit.quadrature}
    if others:
        found.update(zip(((rope.low, rope.high) for rope in others),
                         _quadratures(scores, fit.first, fit.second, fit.settings["prior"],
                                      others)))
    return [_answers(found[(rope.low, rope.high)]) for rope in ropes]


def _quadratures(scores: Scores, first: str, second: str, prior: HierarchicalPrior,
                 ropes: list[Rope]) -> list:
    """``prior``'s posterior by quadrature at each of ``ropes``, from one grid
    (:func:`~bayescomp.models.quadrature.quadrature_at_ropes`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the first fit told its warnings about the data
        data, scale = prepare(scores, first, second, prior)
    return quadrature_at_ropes(data, scale, ropes)


def _answers(found) -> tuple:
    """Both questions' (probabilities, errors, whether reliable) of one quadrature, as the
    table's rows read them."""
    return tuple((getattr(found, scope), getattr(found, f"{scope}_error"), found.ok)
                 for scope in ("population", "next_dataset"))


def _modes_or_quadrature(fit, scores: Scores, ropes: list[Rope], masses: list) -> dict:
    """A fit read in modes (they agree within the quadrature's tolerance at its ROPE), at
    every ROPE as :func:`bayescomp.hierarchical` at that ROPE reads it: its modes where their
    probabilities agree there too, else the quadrature (one grid for those ROPEs), where its
    error is within the tolerance. ``masses`` holds both questions' per-draw masses at each
    ROPE. Returns {ROPE's place: both questions' (probabilities, errors, True)} for the
    ROPEs the quadrature answers (a prior reweighted off the fit still reads its draws)."""
    own = (fit.rope.low, fit.rope.high)
    parts = [list(mode.chains) for mode in fit.modes]
    differ = [k for k, (rope, both) in enumerate(zip(ropes, masses))
              if (rope.low, rope.high) != own and _hierarchical.parts_differ(
                  *([per_draw[part].reshape(-1, 3).mean(axis=0) for part in parts]
                    for per_draw in both))]
    if not differ:
        return {}
    found = _quadratures(scores, fit.first, fit.second, fit.settings["prior"],
                         [ropes[k] for k in differ])
    return {k: _answers(q) for k, q in zip(differ, found) if q.ok}


def _quadrature_alone(scores: Scores, first: str, second: str, prior: HierarchicalPrior,
                      ropes: list[Rope]) -> list | None:
    """``prior``'s posterior by quadrature at every ROPE, from one grid and no fit
    (:func:`~bayescomp.models.quadrature.quadrature_at_ropes`), or None where its error
    misses the tolerance at some ROPE: the prior then gets a fit of its own."""
    found = _quadratures(scores, first, second, prior, ropes)
    return found if all(q.ok for q in found) else None


def _reweighting(prior: HierarchicalPrior, fits: dict) -> Reweighting | None:
    """Weights that read ``prior`` off the first earlier fit they can (one that differs
    from it only in nu's prior and passed its diagnostics, in one mode or in several, not
    one the quadrature answers; weights with a Pareto shape of at most 0.7), or None: the
    prior needs a fit of its own."""
    for base_name, fit in fits.items():
        base = fit.settings["prior"]
        if fit.reliable and not fit.by_quadrature and differs_only_in_nu(base, prior):
            weights = reweighting(fit.idata.posterior["nu"].values, base_name, base, prior,
                                  [mode.chains for mode in fit.modes],
                                  [mode.weight for mode in fit.modes])
            if weights.usable:
                return weights
    return None


def _decision(fit, probabilities, per_draw: np.ndarray, threshold: float, labels) -> str:
    """The fit's own rule (:meth:`~bayescomp.models.estimate.Estimate.decision`) applied to
    the probabilities at another ROPE: with a margin of two Monte Carlo errors from the
    chains as sampled (``per_draw``: chain, draw, 3), and where the chains sit in modes, the
    decision every mode makes from its own chains (so that at the fit's ROPE a row says what
    the fit says)."""
    if not fit.reliable:
        return fit.UNRELIABLE
    if fit.modes:
        chains = [list(mode.chains) for mode in fit.modes]
        return decide_modes([per_draw[c].reshape(-1, 3).mean(axis=0) for c in chains],
                            [probability_mcse(per_draw[c]) for c in chains], threshold, labels)
    return decide(probabilities, threshold, labels, mcse=probability_mcse(per_draw))
