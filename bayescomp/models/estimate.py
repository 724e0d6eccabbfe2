"""What a hierarchical result says about one of the two differences it reports on: the
population's (delta0) or the next dataset's (delta_next), each with its own probabilities,
interval and decision, so that no name leaves the reader to guess which."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bayescomp.decisions import THRESHOLD, UNRELIABLE, decide, decide_modes, too_close


@dataclass(frozen=True)
class Estimate:
    """The posterior of one mean difference ``first - second``.

    Attributes
    ----------
    scope : {"population", "next_dataset"}
    quantity : str
        The model's name for it: ``"delta0"`` (the location of the population of mean
        differences) or ``"delta_next"`` (the mean difference on a new dataset).
    mean, sd, hdi_low, hdi_high : float
        Posterior mean, standard deviation and 95% highest-density interval of its draws.
    probabilities : ndarray
        P(left), P(rope), P(right): the posterior means of the masses of each region under
        the quantity's distribution given each draw's other parameters (for the pairwise
        hierarchical model's delta0 its truncated normal conditional, for the next dataset
        the Student-t, the number the paper and baycomp print;
        :mod:`bayescomp.models.region_masses`). The joint model's delta0 is read as the
        shares of its draws.
    labels : tuple of str
        The regions' names: ``"<second> better"``, ``"equivalent"``, ``"<first> better"``.
    reliable : bool
        Whether the fit can decide (:attr:`bayescomp.HierarchicalResult.reliable`).
    mcse : ndarray
        Monte Carlo standard errors of ``probabilities``, from the effective draws of each
        region's per-draw values; a decision needs a margin of two of them
        (:data:`bayescomp.decisions.MC_MARGIN`).
    mode_probabilities, mode_mcse : tuple of ndarray
        Where the chains sit in several modes, each mode's probabilities and their errors.
    """

    scope: str
    quantity: str
    mean: float
    sd: float
    hdi_low: float
    hdi_high: float
    probabilities: np.ndarray = field(repr=False)
    labels: tuple = field(repr=False)
    mcse: np.ndarray = field(repr=False)
    reliable: bool = True
    mode_probabilities: tuple = field(default=(), repr=False)
    mode_mcse: tuple = field(default=(), repr=False)

    def decision(self, threshold: float = THRESHOLD) -> str:
        """The region whose probability reaches ``threshold`` by two Monte Carlo errors (by
        its label), else ``"undecided"``; ``"unreliable (sampling problems)"`` when the fit
        cannot decide; where the chains sit in several modes, the decision every mode makes,
        else ``"undecided (the modes disagree)"``: a mixture's probability of a region lies
        between its modes', so when every mode decides the same, so does every mixture."""
        if not self.reliable:
            return UNRELIABLE
        if self.mode_probabilities:
            return decide_modes(self.mode_probabilities, self.mode_mcse, threshold, self.labels)
        return decide(self.probabilities, threshold, labels=self.labels, mcse=self.mcse)

    def too_close(self, threshold: float = THRESHOLD) -> bool:
        """Whether a probability is within two Monte Carlo errors of ``threshold`` (in some
        mode, where there are several): more draws could decide."""
        pairs = (zip(self.mode_probabilities, self.mode_mcse) if self.mode_probabilities
                 else [(self.probabilities, self.mcse)])
        return self.reliable and any(too_close(p, threshold, e) for p, e in pairs)

    def to_dict(self) -> dict:
        """mean, sd, hdi_low, hdi_high and p_left, p_rope, p_right as floats."""
        left, rope, right = (float(p) for p in self.probabilities)
        mcse_left, mcse_rope, mcse_right = (float(e) for e in self.mcse)
        return dict(mean=float(self.mean), sd=float(self.sd), hdi_low=float(self.hdi_low),
                    hdi_high=float(self.hdi_high), p_left=left, p_rope=rope, p_right=right,
                    mcse_left=mcse_left, mcse_rope=mcse_rope, mcse_right=mcse_right)
