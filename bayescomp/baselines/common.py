"""Results of the Bayesian tests across datasets and of all five baselines together, and the
checks of their inputs, shared by :mod:`~bayescomp.baselines.across_datasets` and
:mod:`~bayescomp.baselines.bayesian_tests`. The frequentist tests' result is
:class:`~bayescomp.baselines.classical_result.ClassicalTestResult`."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayescomp.baselines.classical_result import ClassicalTestResult
from bayescomp.decisions import THRESHOLD
from bayescomp.reportable import Reportable
from bayescomp.rope import REGIONS, Rope, region_labels
from bayescomp.summarised import Summarised


# --------------------------------------------------------------------------- results

@dataclass(frozen=True, eq=False)
class BayesianTestResult(Summarised):
    """Posterior of a Bayesian test on the per-dataset differences ``first - second``.

    Attributes
    ----------
    name : str
        Name of the test.
    first, second : str
        The algorithms compared.
    rope : Rope
        The region of practical equivalence.
    samples : numpy.ndarray
        Posterior samples, shape (n_samples, 3): the (left, rope, right) masses of the
        Dirichlet-process posterior in each sample (read-only; a point of the simplex each).
    mean_masses : numpy.ndarray
        Posterior mean of the (left, rope, right) masses.
    most_probable : numpy.ndarray
        Share of samples in which each of left, rope, right has the largest mass: what
        baycomp and Benavoli et al. (2017) report as the probabilities of the three regions.
    prior_strength, prior_location : float
        Strength and location of the prior pseudo-observation.
    n_datasets : int
        Number of differences.
    """

    name: str
    first: str
    second: str
    rope: Rope
    samples: np.ndarray = field(repr=False)
    mean_masses: np.ndarray
    most_probable: np.ndarray
    prior_strength: float
    prior_location: float
    n_datasets: int

    @property
    def labels(self) -> tuple[str, str, str]:
        """Names of the left, rope and right regions: ("<second> better", "equivalent", ...)."""
        return region_labels(self.first, self.second)

    @property
    def n_samples(self) -> int:
        return self.samples.shape[0]

    def summary(self) -> str:
        """The test in a few lines: its prior, and per region the posterior mean mass and the
        share of samples in which it is the most probable."""
        from bayescomp.presentation.results.baselines import bayesian_summary
        return bayesian_summary(self)

    def to_dict(self, threshold: float = THRESHOLD) -> dict:
        """The test as JSON-ready data: the verdict from the posterior mean masses and the
        most-probable shares, both keyed by the regions' names."""
        from bayescomp.presentation.results.baselines import bayesian_to_dict
        return bayesian_to_dict(self, threshold)

    def to_frame(self) -> pd.DataFrame:
        """One row: test, names, ROPE, prior, mean masses and most-probable shares per region."""
        row = {"test": self.name, "first": self.first, "second": self.second,
               "n_datasets": self.n_datasets, "rope_low": self.rope.low,
               "rope_high": self.rope.high, "prior_strength": self.prior_strength,
               "prior_location": self.prior_location, "n_samples": self.n_samples}
        row.update({f"mass_{r}": m for r, m in zip(REGIONS, self.mean_masses)})
        row.update({f"most_probable_{r}": p for r, p in zip(REGIONS, self.most_probable)})
        return pd.DataFrame([row])


@dataclass(frozen=True, eq=False)
class BaselinesResult(Reportable):
    """All five baselines run on the same per-dataset mean differences.

    Attributes
    ----------
    first, second : str
        The algorithms compared.
    rope : Rope
        The ROPE used by the Bayesian tests.
    differences : numpy.ndarray
        Per-dataset mean differences ``first - second`` (read-only).
    dataset_names : tuple of str
    wilcoxon, sign, ttest : ClassicalTestResult
    bayesian_sign, bayesian_signed_rank : BayesianTestResult
    """

    first: str
    second: str
    rope: Rope
    differences: np.ndarray = field(repr=False)
    dataset_names: tuple
    wilcoxon: ClassicalTestResult
    sign: ClassicalTestResult
    ttest: ClassicalTestResult
    bayesian_sign: BayesianTestResult
    bayesian_signed_rank: BayesianTestResult

    @property
    def tests(self) -> tuple:
        return (self.wilcoxon, self.sign, self.ttest,
                self.bayesian_sign, self.bayesian_signed_rank)

    def summary(self) -> str:
        """The five tests' summaries under one header with the mean and median difference."""
        from bayescomp.presentation.results.baselines import summary
        return summary(self)

    def to_dict(self, threshold: float = THRESHOLD) -> dict:
        """Every number :meth:`summary` shows, JSON-ready, tests keyed by name."""
        from bayescomp.presentation.results.baselines import to_dict
        return to_dict(self, threshold)

    def to_frame(self) -> pd.DataFrame:
        """One row per test; columns that do not apply to a test are NaN."""
        return pd.concat([test.to_frame() for test in self.tests], ignore_index=True)

    def _report(self):
        from bayescomp.presentation.results.baselines import report
        return report(self)


# --------------------------------------------------------------------------- validation

def _check_differences(differences) -> np.ndarray:
    try:
        d = np.asarray(differences, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("differences must be a 1-D array of numbers") from None
    if d.ndim != 1:
        raise ValueError(f"differences must be a 1-D array (one mean difference per "
                         f"dataset), got shape {d.shape}")
    if d.size < 2:
        raise ValueError(f"at least 2 datasets are needed to compare algorithms across "
                         f"datasets, got {d.size}")
    bad = ~np.isfinite(d)
    if bad.any():
        raise ValueError(f"{bad.sum()} NaN or infinite difference(s), at position(s) "
                         f"{np.flatnonzero(bad)[:10].tolist()}")
    return d


def _check_choice(value, choices, what):
    if value not in choices:
        raise ValueError(f"{what} must be one of {list(choices)}, got {value!r}")


def _check_prior(prior_strength, prior_location):
    strength, location = float(prior_strength), float(prior_location)
    if not np.isfinite(strength) or strength < 0:
        raise ValueError(f"prior_strength must be a finite number >= 0, got {prior_strength}")
    if not np.isfinite(location):
        raise ValueError(f"prior_location must be finite, got {prior_location}")
    return strength, location


def _warning_notes(caught) -> tuple:
    return tuple(dict.fromkeys(str(w.message) for w in caught))
