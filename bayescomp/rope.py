"""The region of practical equivalence (ROPE) and every probability computed against it.

Sign convention, used everywhere in the package: a difference is ``first - second``
(scores where higher is better). "left" is ``difference < rope.low`` (the second algorithm
is better by more than the ROPE), "rope" is ``rope.low <= difference <= rope.high``
(practically equivalent), "right" is ``difference > rope.high`` (the first is better).
The ROPE is in the units of the scores: 0.01 is one point of accuracy when scores are
fractions, and a hundredth of a point when they are percentages.
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

import numpy as np

from bayescomp.formatting import first_few

REGIONS = ("left", "rope", "right")


@dataclass(frozen=True)
class Rope:
    """A closed interval ``[low, high]`` of practically equivalent differences, ``low <= 0 <= high``."""

    low: float
    high: float

    def __post_init__(self):
        if not (np.isfinite(self.low) and np.isfinite(self.high)):
            raise ValueError(f"ROPE bounds must be finite, got [{self.low}, {self.high}]")
        if self.low > self.high:
            raise ValueError(f"ROPE is not an interval: low {self.low} > high {self.high}")
        if self.low > 0 or self.high < 0:
            raise ValueError(f"ROPE [{self.low}, {self.high}] must contain 0")

    @classmethod
    def coerce(cls, rope) -> "Rope":
        """Build a ROPE from a half-width ``w`` (giving ``[-w, w]``), a pair ``(low, high)`` or a Rope."""
        if isinstance(rope, Rope):
            return rope
        if isinstance(rope, (Real, np.floating, np.integer)) and not isinstance(rope, bool):
            width = float(rope)
            if not np.isfinite(width) or width < 0:
                raise ValueError(f"ROPE half-width must be a finite number >= 0, got {rope}")
            return cls(-width, width)
        try:
            low, high = (float(bound) for bound in rope)
        except (TypeError, ValueError):
            raise ValueError(
                f"ROPE must be a half-width >= 0 or an interval (low, high), got {rope!r}"
            ) from None
        return cls(low, high)

    def probabilities(self, distribution) -> np.ndarray:
        """Masses of a (possibly vectorised) distribution left of, inside and right of the ROPE.

        ``distribution`` needs ``cdf`` and ``sf`` methods, as scipy's frozen distributions have.
        Returns an array whose last axis is (left, rope, right).
        """
        left = np.asarray(distribution.cdf(self.low), dtype=float)
        right = np.asarray(distribution.sf(self.high), dtype=float)
        # a ROPE of width 0 holds no mass of a continuous distribution, where 1 - cdf - sf
        # would keep its rounding (2e-17 in the tables of bc.sensitivity)
        inside = (np.zeros_like(left) if self.low == self.high
                  else np.clip(1.0 - left - right, 0.0, 1.0))
        return np.stack([left, inside, right], axis=-1)

    def shares(self, draws) -> np.ndarray:
        """Share of posterior draws in each region, an array (left, rope, right)."""
        draws = np.asarray(draws, dtype=float)
        # from counts: 1 - left - right in floating point can be -1e-16, not a probability
        left, right = int(np.sum(draws < self.low)), int(np.sum(draws > self.high))
        return np.array([left, draws.size - left - right, right]) / draws.size

    def indicators(self, draws) -> np.ndarray:
        """Which region each draw is in: an array of the draws' shape plus a last axis of
        three 0/1 values (left, rope, right), whose means are :meth:`shares`."""
        draws = np.asarray(draws, dtype=float)
        return np.stack([draws < self.low, (draws >= self.low) & (draws <= self.high),
                         draws > self.high], axis=-1).astype(float)

    def __str__(self) -> str:
        return f"[{self.low:g}, {self.high:g}]"


def most_probable_shares(masses, weights=None) -> np.ndarray:
    """Share of rows of ``masses`` (draws x (left, rope, right)) in which each region is the largest.

    This is the summary that baycomp and Benavoli et al. (2017) print for posterior samples
    of the three probabilities; ties go to the first region in (left, rope, right). With
    ``weights`` (one per row: the posterior's mass at the points of a grid) the shares are
    of those weights.
    """
    masses = np.asarray(masses, dtype=float)
    winners = np.argmax(masses, axis=-1).ravel()
    weights = np.ones(winners.size) if weights is None else np.asarray(weights, float).ravel()
    return np.bincount(winners, weights=weights, minlength=3)[:3] / weights.sum()


def region_labels(first: str, second: str) -> tuple[str, str, str]:
    """Human-readable names of the regions for ``first - second``."""
    return (f"{second} better", "equivalent", f"{first} better")


class PointMass:
    """A distribution with all its mass at ``loc``: the posterior when differences are constant.

    ``cdf`` and ``sf`` are strict (mass below / above ``x``), so that a point on a ROPE
    boundary counts as inside the closed ROPE.
    """

    def __init__(self, loc: float):
        self.loc = float(loc)

    def cdf(self, x):
        return np.where(self.loc < np.asarray(x), 1.0, 0.0)

    def sf(self, x):
        return np.where(self.loc > np.asarray(x), 1.0, 0.0)

    def ppf(self, q):
        return np.full_like(np.asarray(q, dtype=float), self.loc)

    def mean(self):
        return self.loc

    def std(self):
        return 0.0

    def rvs(self, size=None, random_state=None):
        return np.full(size if size is not None else (), self.loc, dtype=float)


#: a ROPE narrower than this share of the scores' typical size is probably in other units
TINY_ROPE_SHARE = 1e-3


def check_rope(rope, scores, first: str, second: str, dataset: str | None = None) -> None:
    """Warn (:class:`~bayescomp.exceptions.InputWarning`) when a ROPE is probably wrong.

    Two mistakes are caught: a ROPE containing every difference ``first - second`` on every
    dataset (the verdict is "equivalent" by construction; typically a ROPE in other units
    than the scores), and a non-zero ROPE below a thousandth of the scores' typical size
    (``mean |score|``), as when scores are percentages and the ROPE a fraction.

    Parameters
    ----------
    rope : float, (float, float) or Rope
    scores : bayescomp.Scores
    first, second : str
        The algorithms compared.
    dataset : str, optional
        Check this dataset only (a correlated t-test on one dataset of a collection).
    """
    import warnings

    from bayescomp.exceptions import InputWarning

    rope = Rope.coerce(rope)
    if rope.high - rope.low <= 0:
        return   # no ROPE: a deliberate choice, never a unit mistake
    differences = scores.differences(first, second)
    names = list(scores.dataset_names)
    datasets = scores.datasets
    if dataset is not None:
        position = names.index(scores.dataset(dataset).name)
        differences, names, datasets = ([group[position]]
                                        for group in (differences, names, datasets))
    where = f"dataset {names[0]!r}" if len(names) == 1 else f"all {len(names)} datasets"
    pooled = np.concatenate(differences)
    low, high = float(pooled.min()), float(pooled.max())
    if high > low and rope.low <= low and high <= rope.high:
        warnings.warn(
            f"the ROPE {rope} contains every difference {first} - {second} on {where} (they "
            f"range over [{low:.4g}, {high:.4g}]), so the verdict is 'equivalent' by "
            "construction; is the ROPE in the units of the scores (0.01 is one point of "
            "accuracy given as a fraction)?", InputWarning, stacklevel=2)
    i, j = scores.algorithm_index(first), scores.algorithm_index(second)
    # the mean, not the median: as good for a factor of 1000, and a t-test on one dataset
    # would spend more on np.median than on the test
    sizes = [float(np.abs(d.values[[i, j]]).mean()) for d in datasets]
    tiny = [(name, size) for name, size in zip(names, sizes)
            if max(-rope.low, rope.high) < TINY_ROPE_SHARE * size]
    if tiny:
        where = f"all {len(names)} datasets" if len(tiny) == len(names) and len(names) > 1 \
            else f"dataset(s) {first_few(repr(name) for name, _ in tiny)}"
        warnings.warn(
            f"the ROPE {rope} is tiny next to the scores of {first} and {second} on {where} "
            f"(mean |score| {np.mean([size for _, size in tiny]):.4g}): if the scores are percentages, a ROPE "
            f"of one point is 1, not 0.01", InputWarning, stacklevel=2)
