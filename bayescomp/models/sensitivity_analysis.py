"""How the verdict of the hierarchical model moves with the prior and the ROPE.

:func:`sensitivity` fits the hierarchical model once per prior and reads every ROPE width off
the same draws: the posterior does not depend on the ROPE, only the regions the draws are
counted in do. For each (prior, ROPE) it reports P(left / rope / right) of ``delta0`` and of
the next dataset, from the per-draw masses :func:`bayescomp.hierarchical` reports them from
(:mod:`bayescomp.models.region_masses`), with the decision at the threshold.

(The module is not called ``sensitivity``: importing a submodule sets the package attribute
of its name, which would hide the function ``bayescomp.sensitivity``.)
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayescomp.data.scores import Scores
from bayescomp.decisions import THRESHOLD, decide, decide_modes
from bayescomp.reportable import Reportable
from bayescomp.models.modes import probability_mcse
from bayescomp.models.region_masses import next_dataset_masses, population_masses
from bayescomp.rope import Rope, region_labels

if TYPE_CHECKING:
    from typing import Mapping, Sequence
    from bayescomp.annotations import RopeLike
    from bayescomp.models.hierarchical import HierarchicalPrior

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
    """Name -> prior (a name of hierarchical.PRIORS or a HierarchicalPrior)."""
    if priors is None:
        # read at call time, so that priors added to PRIORS appear here
        return {name: name for name in _hierarchical.PRIORS}
    if isinstance(priors, (str, _hierarchical.HierarchicalPrior)):
        priors = [priors]
    if isinstance(priors, dict):
        chosen = dict(priors)
    else:
        chosen = {}
        for i, prior in enumerate(priors):
            chosen[prior if isinstance(prior, str) else f"custom {i + 1}"] = prior
    for name, prior in chosen.items():
        if isinstance(prior, str) and prior not in _hierarchical.PRIORS:
            raise ValueError(f"unknown prior {prior!r}; choose from {sorted(_hierarchical.PRIORS)} "
                             "or pass a HierarchicalPrior")
    if not chosen:
        raise ValueError(f"no prior given; choose from {sorted(_hierarchical.PRIORS)}")
    return chosen


@dataclass(frozen=True)
class SensitivityResult(Reportable):
    """P(left / rope / right) of delta0 and of the next dataset under each prior and ROPE.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (prior, rope, quantity): ``rope_low``, ``rope_high``, ``p_left``,
        ``p_rope``, ``p_right``, ``decision`` (at ``threshold``) and ``reliable`` (whether
        that prior's fit passed its diagnostics). ``rope`` is the half-width
        ``(high - low) / 2``; ``quantity`` is "delta0" or "next".
    fits : dict
        Prior name -> its :class:`~bayescomp.models.hierarchical.HierarchicalResult`.
    """

    first: str
    second: str
    table: pd.DataFrame = field(repr=False)
    fits: dict = field(repr=False)
    threshold: float = THRESHOLD
    seed: int | None = None

    @property
    def labels(self) -> tuple[str, str, str]:
        return region_labels(self.first, self.second)

    @property
    def priors(self) -> list[str]:
        return list(self.fits)

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
                seed: int | None = None, threshold: float = THRESHOLD, **options) -> SensitivityResult:
    """Rerun the hierarchical comparison under each prior and read it at several ROPE widths.

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
        Seed of every fit, the same for each prior and used as it is: a prior's numbers are
        those of ``bayescomp.hierarchical(scores, first, second, prior=..., seed=seed)``
        with the same options (the "paper" prior's are :func:`bayescomp.compare_all`'s cell
        of the pair with this seed). The priors are different posteriors, so sharing a seed
        correlates nothing a reader compares. Drawn once and recorded when None.
    threshold : float
        Probability a region needs for a decision.
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
    rows, fits = [], {}
    for name, prior in chosen.items():
        fit = _hierarchical.hierarchical(scores, first, second, rope=ropes[0], prior=prior,
                                         seed=seed, baselines=False, **options)
        fits[name] = fit
        posterior = fit.idata.posterior
        # the draws as the fit reports them (chains in several modes mixed by their weights)
        order = fit.draw_order
        for rope in ropes:
            # per draw, chain by chain: each question's masses (the fit's own estimators)
            for quantity, per_draw in (("delta0", population_masses(posterior, rope)),
                                       ("next", next_dataset_masses(posterior, rope))):
                p = per_draw.reshape(-1, 3)[order].mean(axis=0)
                rows.append(dict(
                    prior=name, rope=(rope.high - rope.low) / 2, rope_low=rope.low + 0.0,  # not -0
                    rope_high=rope.high, quantity=quantity, p_left=p[0], p_rope=p[1],
                    p_right=p[2], reliable=fit.reliable,
                    decision=_decision(fit, p, per_draw, threshold, labels)))
    return SensitivityResult(first, second, pd.DataFrame(rows), fits, threshold, int(seed))


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
