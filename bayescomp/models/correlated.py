"""The Bayesian correlated t-test on one dataset (Corani & Benavoli 2015).

The differences of the n splits are modelled as normal with mean ``mu`` and a covariance
with correlation ``rho`` between any two splits (they share training data). Under the
matching prior the posterior of ``mu`` is Student-t with ``n - 1`` degrees of freedom,
location the sample mean and scale ``sqrt((1/n + rho/(1-rho)) s^2)``. The frequentist
counterpart is the corrected resampled t-test of Nadeau & Bengio (2003), which uses the
same variance correction.

Constant differences (``s = 0``, e.g. two trees that agree on every split) make the
scale 0: the posterior is then a point mass at the observed difference, the region that
contains it gets probability 1, and a :class:`ConstantDifferencesWarning` is issued.
The Nadeau-Bengio statistic is then +/-inf (p-value 0) for a non-zero difference and
0 (p-value 1) for a zero difference.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import special

from bayescomp.data.scores import Scores
from bayescomp.decisions import THRESHOLD, CostDecision, decide, expected_cost_decision
from bayescomp.exceptions import ConstantDifferencesWarning
from bayescomp.reportable import Reportable
from bayescomp.rope import PointMass, Rope, check_rope, region_labels

if TYPE_CHECKING:
    from bayescomp.annotations import RopeLike


class StudentT:
    """Student-t(df, loc, scale) with scipy's frozen-distribution methods the package uses.

    ``scipy.stats.t(df, loc, scale)`` costs about 1 ms to build (it parses docstrings and
    signatures), several times the whole closed-form test; these are the same special
    functions (``stdtr``, ``stdtrit``) without that cost. :meth:`frozen` gives scipy's.
    """

    def __init__(self, df: float, loc: float, scale: float):
        self.df, self.loc, self.scale = float(df), float(loc), float(scale)

    def _z(self, x):
        return (np.asarray(x, dtype=float) - self.loc) / self.scale

    def cdf(self, x):
        return special.stdtr(self.df, self._z(x))

    def sf(self, x):
        return special.stdtr(self.df, -self._z(x))

    def ppf(self, q):
        return self.loc + self.scale * special.stdtrit(self.df, np.asarray(q, dtype=float))

    def pdf(self, x):
        z, df = self._z(x), self.df
        log_norm = (special.gammaln((df + 1) / 2) - special.gammaln(df / 2)
                    - 0.5 * np.log(df * np.pi) - np.log(self.scale))
        return np.exp(log_norm - (df + 1) / 2 * np.log1p(z * z / df))

    def mean(self) -> float:
        return self.loc if self.df > 1 else np.nan

    def std(self) -> float:
        if self.df > 2:
            return self.scale * np.sqrt(self.df / (self.df - 2))
        return np.inf if self.df > 1 else np.nan

    def rvs(self, size=None, random_state=None):
        rng = np.random.default_rng(random_state)
        return self.loc + self.scale * rng.standard_t(self.df, size=size)

    def frozen(self):
        """The same distribution as ``scipy.stats.t``'s frozen object."""
        from scipy import stats
        return stats.t(self.df, loc=self.loc, scale=self.scale)


@dataclass(frozen=True)
class CorrelatedPosterior:
    """Posterior of the mean difference of one dataset: Student-t(df, loc, scale)."""

    n: int
    rho: float
    mean: float
    std: float
    df: int
    scale: float

    @classmethod
    def from_differences(cls, differences, rho: float) -> "CorrelatedPosterior":
        differences = np.asarray(differences, dtype=float)
        n = differences.size
        std = float(np.std(differences, ddof=1)) if np.ptp(differences) > 0 else 0.0
        scale = float(np.sqrt((1.0 / n + rho / (1.0 - rho)) * std ** 2))
        return cls(n, float(rho), float(np.mean(differences)), std, n - 1, scale)

    @property
    def constant(self) -> bool:
        return self.scale == 0.0

    @property
    def distribution(self):
        """A :class:`StudentT` (scipy's methods ``cdf``, ``sf``, ``ppf``, ``pdf``, ``rvs``), or
        a point mass when the differences are constant."""
        if self.constant:
            return PointMass(self.mean)
        return StudentT(self.df, self.mean, self.scale)

    def nadeau_bengio(self) -> tuple[float, float, float, float]:
        """Corrected t statistic and p-values (two-sided, first better, second better)."""
        if self.constant:
            statistic = 0.0 if self.mean == 0 else np.copysign(np.inf, self.mean)
        else:
            statistic = self.mean / self.scale
        greater = float(special.stdtr(self.df, -statistic))
        less = float(special.stdtr(self.df, statistic))
        return float(statistic), min(1.0, 2 * min(greater, less)), greater, less


@dataclass(frozen=True)
class CorrelatedTTestResult(Reportable):
    """Bayesian correlated t-test of ``first - second`` on one dataset.

    Attributes
    ----------
    probabilities : ndarray
        P(left), P(rope), P(right): the second better, practically equivalent, the first better.
    nb_statistic, nb_p_value, nb_p_greater, nb_p_less : float
        The Nadeau-Bengio corrected t-test: statistic, two-sided p-value, and one-sided
        p-values for "first better" and "second better".
    """

    first: str
    second: str
    dataset: str
    rope: Rope
    posterior: CorrelatedPosterior
    probabilities: np.ndarray
    nb_statistic: float
    nb_p_value: float
    nb_p_greater: float
    nb_p_less: float

    @property
    def labels(self) -> tuple[str, str, str]:
        return region_labels(self.first, self.second)

    def interval(self, prob: float = 0.95, kind: str = "hdi") -> tuple[float, float]:
        """Credible interval of the mean difference.

        ``kind="eti"`` is equal-tailed, ``"hdi"`` highest-density; the Student-t posterior
        is symmetric and unimodal, so both give the same interval.
        """
        if kind not in ("hdi", "eti"):
            raise ValueError(f"kind must be 'hdi' or 'eti', got {kind!r}")
        if not 0 < prob < 1:
            raise ValueError(f"prob must be in (0, 1), got {prob}")
        low, high = self.posterior.distribution.ppf([(1 - prob) / 2, (1 + prob) / 2])
        return float(low), float(high)

    def sample(self, size: int = 10_000, seed=None) -> np.ndarray:
        """Draws from the posterior of the mean difference, reproducible under ``seed``."""
        return self.posterior.distribution.rvs(size=size, random_state=np.random.default_rng(seed))

    def decision(self, threshold: float = THRESHOLD) -> str:
        """The region whose probability reaches ``threshold`` (named by algorithm), or "undecided"."""
        return decide(self.probabilities, threshold, labels=self.labels)

    def verdicts(self, threshold: float = THRESHOLD) -> list[str]:
        """The verdict on this dataset in one sentence (:func:`bayescomp.presentation.verdicts.verdict`)."""
        from bayescomp.presentation.results.correlated import verdicts
        return verdicts(self, threshold)

    def expected_costs(self, costs, decisions=None) -> CostDecision:
        """Expected cost of each decision from a cost matrix (decisions x (left, rope, right))."""
        return expected_cost_decision(self.probabilities, costs, decisions)

    def to_frame(self) -> pd.DataFrame:
        p = self.posterior
        low, high = self.interval()
        return pd.DataFrame([{
            "dataset": self.dataset, "first": self.first, "second": self.second,
            "n": p.n, "rho": p.rho, "mean": p.mean, "scale": p.scale, "hdi_2.5%": low,
            "hdi_97.5%": high, "p_left": self.probabilities[0], "p_rope": self.probabilities[1],
            "p_right": self.probabilities[2], "nb_t": self.nb_statistic,
            "nb_p_value": self.nb_p_value, "decision": self.decision()}])

    def to_dict(self, threshold: float = THRESHOLD) -> dict:
        """Every number :meth:`summary` shows, JSON-ready (NaN as None), regions keyed by the
        algorithms' names (``"<second> better"``, ``"equivalent"``, ``"<first> better"``)."""
        from bayescomp.presentation.results.correlated import to_dict
        return to_dict(self, threshold)

    def summary(self) -> str:
        """The test in a few lines: the verdict, the posterior and the Nadeau-Bengio test."""
        from bayescomp.presentation.results.correlated import summary
        return summary(self)

    def _report(self):
        from bayescomp.presentation.results.correlated import report
        return report(self)


def _test_one(differences, rho, rope: Rope, first, second, dataset) -> CorrelatedTTestResult:
    posterior = CorrelatedPosterior.from_differences(differences, rho)
    if posterior.constant:
        warnings.warn(
            f"dataset {dataset!r}: {first} - {second} equals {posterior.mean:g} on all "
            f"{posterior.n} splits; the posterior of the mean is a point mass there",
            ConstantDifferencesWarning, stacklevel=3)
    probabilities = rope.probabilities(posterior.distribution)
    return CorrelatedTTestResult(first, second, dataset, rope, posterior, probabilities,
                                 *posterior.nadeau_bengio())


def correlated_ttest(scores: Scores, first: str, second: str, *, dataset: str | None = None,
                     rope: RopeLike = 0.0) -> CorrelatedTTestResult:
    """Bayesian correlated t-test of ``first - second`` on one dataset.

    Parameters
    ----------
    scores : Scores
        Paired scores; see :func:`bayescomp.from_arrays` and friends.
    first, second : str
        Algorithm names. Positive differences mean ``first`` scores higher.
    dataset : str, optional
        The dataset to test; may be omitted when ``scores`` holds a single dataset.
    rope : float or (float, float)
        Half-width of the region of practical equivalence, or its bounds, in the units
        of the scores.

    Returns
    -------
    CorrelatedTTestResult
    """
    rope = Rope.coerce(rope)
    if dataset is None:
        if len(scores) != 1:
            raise ValueError(f"the scores hold {len(scores)} datasets; name one with dataset=..., "
                             "or use correlated_ttests for all of them")
        dataset = scores.dataset_names[0]
    position = scores.dataset_names.index(scores.dataset(dataset).name)
    differences = scores.differences(first, second)[position]
    check_rope(rope, scores, first, second, dataset=scores.dataset_names[position])
    return _test_one(differences, scores.rho[position], rope, first, second,
                     scores.dataset_names[position])


def correlated_ttests(scores: Scores, first: str, second: str, *,
                      rope: RopeLike = 0.0) -> list[CorrelatedTTestResult]:
    """The correlated t-test of ``first - second`` on every dataset, in the order of ``scores``.

    Warns (:class:`~bayescomp.exceptions.InputWarning`) when the ROPE is probably in other
    units than the scores (:func:`bayescomp.rope.check_rope`).
    """
    rope = Rope.coerce(rope)
    check_rope(rope, scores, first, second)
    return [_test_one(x, rho, rope, first, second, name) for x, rho, name in
            zip(scores.differences(first, second), scores.rho, scores.dataset_names)]
