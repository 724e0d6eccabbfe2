"""What :func:`bayescomp.sensitivity` found: P(left / rope / right) of delta0 and of the
next dataset under each prior and at each ROPE, the fits, reweightings and quadratures they
were read from."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from bayescomp.decisions import THRESHOLD
from bayescomp.reportable import Reportable
from bayescomp.rope import region_labels

QUANTITIES = ("delta0", "next")


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
        prior read by quadrature alone, and for a reweighted prior's rows at the ROPEs
        where its base fit's modes differ, read on the same grid as the fit's) and
        ``pareto_k`` (the reweighting's Pareto shape; NaN otherwise). ``rope`` is the half-width
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

    def _report(self):
        from bayescomp.presentation.results.sensitivity import report
        return report(self)

    def plot(self, axes=None):
        """The figure of :func:`bayescomp.presentation.plots.ranking.plot_sensitivity`."""
        from bayescomp.presentation.plots.ranking import plot_sensitivity

        return plot_sensitivity(self, axes=axes)
