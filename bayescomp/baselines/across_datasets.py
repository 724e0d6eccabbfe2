"""Baselines across datasets: tests run on the per-dataset mean differences.

Given ``d_k = mean(first - second)`` on datasets ``k = 1..n`` (see
:meth:`bayescomp.data.Scores.mean_differences`), this module runs

* three frequentist tests: the Wilcoxon signed-rank test, the sign test and the paired
  t-test (two-sided p-values, and both one-sided ones);
* two Bayesian nonparametric tests of Benavoli et al.: the Bayesian sign test and the
  Bayesian signed-rank test, both with a Dirichlet-process posterior whose prior is a
  pseudo-observation of strength ``s`` (0.5 by default) at 0.

These treat each dataset as one observation, ignoring the uncertainty of each mean; they
are the reference points that the hierarchical model is compared against.

The sign convention is the package's (see :mod:`bayescomp.rope`): "left" means the
second algorithm is better by more than the ROPE, "right" means the first is.

References
----------
A. Benavoli, G. Corani, F. Mangili, M. Zaffalon, F. Ruggeri (2014). A Bayesian Wilcoxon
signed-rank test based on the Dirichlet process. ICML, PMLR 32(2):1026-1034.

A. Benavoli, G. Corani, J. Demšar, M. Zaffalon (2017). Time for a change: a tutorial for
comparing multiple classifiers through Bayesian analysis. JMLR 18(77):1-36.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from bayescomp.presentation.reports import Reportable
from bayescomp.rope import REGIONS, Rope, most_probable_shares, region_labels
from bayescomp.presentation.verdicts import equals, format_number, json_number, probability, rope_dict, verdict_dict

__all__ = [
    "FrequentistTestResult", "BayesianTestResult", "BaselinesResult",
    "wilcoxon_test", "sign_test", "paired_ttest",
    "bayesian_sign_test", "bayesian_signed_rank_test", "baselines",
]

WILCOXON_METHODS = ("auto", "exact", "approx")
ZERO_METHODS = ("wilcox", "pratt", "zsplit")
SIGN_ZEROS = ("drop", "split")

# Weights per block of samples in the signed-rank test: small enough for a block and its
# cumulative sums to stay in cache (about 1 MB each), large enough that the Python loops
# over blocks and points cost little.
_CHUNK_ELEMENTS = 131_072

_ALL_ZERO_NOTE = ("every difference is zero: there is nothing to test, so the p-values "
                  "are reported as 1 (no evidence of a difference) and the statistic as NaN")


# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
class FrequentistTestResult:
    """Outcome of a frequentist test on the per-dataset differences ``first - second``.

    Attributes
    ----------
    name : str
        Name of the test.
    first, second : str
        The algorithms compared; differences are ``first - second``.
    statistic_name : str
        What ``statistic`` is (e.g. "W", "t", "wins").
    statistic : float
        The test statistic as scipy defines it for the two-sided test.
    p_value : float
        Two-sided p-value.
    p_greater : float
        One-sided p-value against the alternative that the differences are shifted above 0
        (``first`` better).
    p_less : float
        One-sided p-value against the alternative that they are shifted below 0
        (``second`` better).
    n_datasets : int
        Number of differences given.
    n_used : int
        Number of differences the test used (the sign test and the ``"wilcox"`` zero method
        drop zeros).
    options : tuple of (str, object) pairs
        The settings the test ran with.
    notes : tuple of str
        Warnings raised by scipy and remarks on degenerate data.
    """

    name: str
    first: str
    second: str
    statistic_name: str
    statistic: float
    p_value: float
    p_greater: float
    p_less: float
    n_datasets: int
    n_used: int
    options: tuple = ()
    notes: tuple = ()

    def summary(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in self.options)
        header = (f"{self.name}: {self.first} - {self.second} on {self.n_datasets} datasets"
                  + (f" ({settings})" if settings else ""))
        used = "" if self.n_used == self.n_datasets else f", {self.n_used} used"
        lines = [
            header,
            f"  {self.statistic_name} = {format_number(self.statistic, digits=6)}{used}, "
            f"two-sided p {equals(self.p_value)}",
            f"  one-sided p (H1: {self.first} better) {equals(self.p_greater)}, "
            f"one-sided p (H1: {self.second} better) {equals(self.p_less)}",
        ]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row: test, names, counts, statistic, p-values, options and notes."""
        return pd.DataFrame([{
            "test": self.name, "first": self.first, "second": self.second,
            "n_datasets": self.n_datasets, "n_used": self.n_used,
            "statistic_name": self.statistic_name, "statistic": self.statistic,
            "p_value": self.p_value, "p_greater": self.p_greater, "p_less": self.p_less,
            "options": ", ".join(f"{k}={v!r}" for k, v in self.options),
            "notes": "; ".join(self.notes),
        }])

    def to_dict(self) -> dict:
        """The test as JSON-ready data; one-sided p-values keyed by the better algorithm."""
        return {"test": self.name, "n_datasets": self.n_datasets, "n_used": self.n_used,
                "statistic_name": self.statistic_name, "statistic": json_number(self.statistic),
                "p_value": json_number(self.p_value),
                f"p_{self.first}_better": json_number(self.p_greater),
                f"p_{self.second}_better": json_number(self.p_less),
                "options": {k: json_number(v) if isinstance(v, (int, float)) else str(v)
                            for k, v in self.options},
                "notes": list(self.notes)}


@dataclass(frozen=True, eq=False)
class BayesianTestResult:
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
        lines = [
            f"{self.name}: {self.first} - {self.second} on {self.n_datasets} datasets, "
            f"ROPE {self.rope}, prior strength {self.prior_strength:g} at "
            f"{self.prior_location:g}, {self.n_samples} posterior samples",
            f"  {'':<{self._width}}  mean mass  share of samples where most probable",
        ]
        for label, mass, share in zip(self.labels, self.mean_masses, self.most_probable):
            lines.append(f"  {'P(' + label + ')':<{self._width}}  {probability(mass):>9}  "
                         f"{probability(share)}")
        return "\n".join(lines)

    def to_dict(self, threshold: float = 0.95) -> dict:
        """The test as JSON-ready data: the verdict from the posterior mean masses and the
        most-probable shares, both keyed by the regions' names."""
        return {"test": self.name, "n_datasets": self.n_datasets, "rope": rope_dict(self.rope),
                "prior_strength": json_number(self.prior_strength),
                "prior_location": json_number(self.prior_location),
                "n_samples": self.n_samples,
                "verdict": verdict_dict(self.mean_masses, self.first, self.second,
                                        threshold=threshold, scope=self.name, rope=self.rope),
                "most_probable_shares": {label: json_number(v) for label, v in
                                         zip(self.labels, self.most_probable)}}

    @property
    def _width(self) -> int:
        return max(len(label) for label in self.labels) + 3

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
    wilcoxon, sign, ttest : FrequentistTestResult
    bayesian_sign, bayesian_signed_rank : BayesianTestResult
    """

    first: str
    second: str
    rope: Rope
    differences: np.ndarray = field(repr=False)
    dataset_names: tuple
    wilcoxon: FrequentistTestResult
    sign: FrequentistTestResult
    ttest: FrequentistTestResult
    bayesian_sign: BayesianTestResult
    bayesian_signed_rank: BayesianTestResult

    @property
    def tests(self) -> tuple:
        return (self.wilcoxon, self.sign, self.ttest,
                self.bayesian_sign, self.bayesian_signed_rank)

    def summary(self) -> str:
        header = (f"Baselines across {len(self.differences)} datasets: {self.first} vs "
                  f"{self.second} (differences {self.first} - {self.second}, mean "
                  f"{format_number(np.mean(self.differences))}, median "
                  f"{format_number(np.median(self.differences))})")
        return "\n\n".join([header] + [test.summary() for test in self.tests])

    def to_dict(self, threshold: float = 0.95) -> dict:
        """Every number :meth:`summary` shows, JSON-ready, tests keyed by name."""
        return {"first": self.first, "second": self.second, "rope": rope_dict(self.rope),
                "datasets": list(map(str, self.dataset_names)),
                "mean_difference": json_number(np.mean(self.differences)),
                "median_difference": json_number(np.median(self.differences)),
                "tests": {name: test.to_dict() for name, test in
                          zip(("wilcoxon", "sign", "ttest"), self.tests[:3])}
                | {name: test.to_dict(threshold) for name, test in
                   zip(("bayesian_sign", "bayesian_signed_rank"), self.tests[3:])}}

    def to_frame(self) -> pd.DataFrame:
        """One row per test; columns that do not apply to a test are NaN."""
        return pd.concat([test.to_frame() for test in self.tests], ignore_index=True)

    def _report(self):
        title = f"Baselines across {len(self.differences)} datasets: {self.first} - {self.second}"
        facts = [f"mean difference {format_number(np.mean(self.differences))}, median "
                 f"{format_number(np.median(self.differences))}, ROPE {self.rope}"]
        left, equal, right = region_labels(self.first, self.second)
        rows = [{"test": t.name, "statistic": f"{t.statistic_name} = {format_number(t.statistic)}",
                 "p-value": t.p_value} for t in (self.wilcoxon, self.sign, self.ttest)]
        rows += [{"test": t.name, f"P({left})": t.mean_masses[0], f"P({equal})": t.mean_masses[1],
                  f"P({right})": t.mean_masses[2],
                  "most probable (shares)": " / ".join(probability(v, 3) for v in t.most_probable)}
                 for t in (self.bayesian_sign, self.bayesian_signed_rank)]
        return title, facts, pd.DataFrame(rows)


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


def resolve_seed(seed, random_state, default=0):
    """``seed``, or ``random_state`` (scikit-learn's name for it) when only that is given.

    Both given and different is an error: one of them would be silently ignored.
    """
    if random_state is None:
        return seed
    if seed is not None and seed is not default and seed is not random_state:
        raise ValueError(f"seed={seed!r} and random_state={random_state!r} are the same "
                         "setting; give one of them")
    return random_state


def _check_positive_int(value, what) -> int:
    try:
        valid = not isinstance(value, bool) and int(value) == value and value >= 1
    except (TypeError, ValueError, OverflowError):
        valid = False
    if not valid:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def _warning_notes(caught) -> tuple:
    return tuple(dict.fromkeys(str(w.message) for w in caught))


# --------------------------------------------------------------------------- frequentist

def wilcoxon_test(differences, *, first: str = "first", second: str = "second",
                  method: str = "auto", zero_method: str = "wilcox",
                  correction: bool = False) -> FrequentistTestResult:
    """Wilcoxon signed-rank test of the per-dataset differences, via ``scipy.stats.wilcoxon``.

    Parameters
    ----------
    differences : array-like, shape (n,)
        Per-dataset mean differences ``first - second``; n >= 2, all finite.
    first, second : str
        Names of the algorithms, used in the summary.
    method : {"auto", "exact", "approx"}
        How scipy computes the p-value (exact null distribution or normal approximation).
    zero_method : {"wilcox", "pratt", "zsplit"}
        How scipy treats zero differences: drop them ("wilcox"), rank them and then drop
        them ("pratt"), or split their ranks between the signs ("zsplit").
    correction : bool
        Continuity correction of the normal approximation.

    Returns
    -------
    FrequentistTestResult
        ``statistic`` is scipy's two-sided W: the smaller of the sums of ranks of the
        positive and of the negative differences. ``p_greater`` / ``p_less`` come from
        scipy's ``alternative="greater"`` / ``"less"``.

    Notes
    -----
    If every difference is zero the test is not run: the p-values are 1 and the statistic
    NaN, and a note says so (scipy's answer there depends on ``method`` and ``zero_method``
    and can be NaN).
    """
    d = _check_differences(differences)
    _check_choice(method, WILCOXON_METHODS, "method")
    _check_choice(zero_method, ZERO_METHODS, "zero_method")
    options = (("method", method), ("zero_method", zero_method), ("correction", correction))
    n_used = int(np.count_nonzero(d)) if zero_method == "wilcox" else d.size
    if not np.any(d):
        return FrequentistTestResult("Wilcoxon signed-rank test", first, second, "W", np.nan,
                                     1.0, 1.0, 1.0, d.size, n_used, options, (_ALL_ZERO_NOTE,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = {alternative: stats.wilcoxon(d, zero_method=zero_method, correction=correction,
                                           alternative=alternative, method=method)
               for alternative in ("two-sided", "greater", "less")}
    return FrequentistTestResult(
        "Wilcoxon signed-rank test", first, second, "W", float(res["two-sided"].statistic),
        float(res["two-sided"].pvalue), float(res["greater"].pvalue), float(res["less"].pvalue),
        d.size, n_used, options, _warning_notes(caught))


def sign_test(differences, *, first: str = "first", second: str = "second",
              zeros: str = "drop") -> FrequentistTestResult:
    """Sign test of the per-dataset differences: a binomial test of wins against losses.

    The statistic is the number of datasets on which ``first`` wins (difference > 0);
    under the null hypothesis it is Binomial(n_used, 1/2). p-values come from
    ``scipy.stats.binomtest``.

    Parameters
    ----------
    differences : array-like, shape (n,)
        Per-dataset mean differences ``first - second``; n >= 2, all finite.
    first, second : str
        Names of the algorithms, used in the summary.
    zeros : {"drop", "split"}
        What to do with differences exactly equal to 0 (ties). "drop" (the default) leaves
        them out, so ``n_used`` is the number of non-zero differences. "split" counts half
        of them as wins and half as losses, leaving one out if their number is odd
        (Demšar 2006, JMLR 7, section 3.1.3).

    Returns
    -------
    FrequentistTestResult
        ``statistic`` is the number of wins of ``first`` among the ``n_used`` differences
        counted; the notes say how many ties were dropped or split.

    Notes
    -----
    If no difference is counted (every difference is zero under "drop"), the p-values are
    1 and the statistic NaN, and a note says so.
    """
    d = _check_differences(differences)
    _check_choice(zeros, SIGN_ZEROS, "zeros")
    wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
    ties = d.size - wins - losses
    notes = []
    if ties and zeros == "drop":
        notes.append(f"{ties} zero difference(s) dropped")
    elif ties:
        half = ties // 2
        wins, losses = wins + half, losses + half
        notes.append(f"{ties} zero difference(s) split, {half} counted as wins and {half} "
                     f"as losses" + (", 1 dropped" if ties % 2 else ""))
    n_used = wins + losses
    options = (("zeros", zeros),)
    if n_used == 0:
        return FrequentistTestResult("Sign test", first, second, "wins", np.nan, 1.0, 1.0, 1.0,
                                     d.size, 0, options, tuple(notes) + (_ALL_ZERO_NOTE,))
    p = {alternative: stats.binomtest(wins, n_used, 0.5, alternative=alternative).pvalue
         for alternative in ("two-sided", "greater", "less")}
    return FrequentistTestResult("Sign test", first, second, "wins", float(wins),
                                 float(p["two-sided"]), float(p["greater"]), float(p["less"]),
                                 d.size, n_used, options, tuple(notes))


def paired_ttest(differences, *, first: str = "first",
                 second: str = "second") -> FrequentistTestResult:
    """Paired t-test across datasets: ``scipy.stats.ttest_1samp`` of the differences against 0.

    This equals ``scipy.stats.ttest_rel`` on the two algorithms' per-dataset means.

    Parameters
    ----------
    differences : array-like, shape (n,)
        Per-dataset mean differences ``first - second``; n >= 2, all finite.
    first, second : str
        Names of the algorithms, used in the summary.

    Returns
    -------
    FrequentistTestResult
        ``statistic`` is t with ``n - 1`` degrees of freedom (in ``options``).

    Notes
    -----
    If every difference is zero, t is 0/0: the p-values are reported as 1 and the statistic
    as NaN, with a note. Equal non-zero differences (zero variance) are passed to scipy,
    which gives an infinite t; its warning is kept in the notes.
    """
    d = _check_differences(differences)
    options = (("df", d.size - 1),)
    if not np.any(d):
        return FrequentistTestResult("Paired t-test", first, second, "t", np.nan, 1.0, 1.0, 1.0,
                                     d.size, d.size, options, (_ALL_ZERO_NOTE,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = {alternative: stats.ttest_1samp(d, 0.0, alternative=alternative)
               for alternative in ("two-sided", "greater", "less")}
    return FrequentistTestResult(
        "Paired t-test", first, second, "t", float(res["two-sided"].statistic),
        float(res["two-sided"].pvalue), float(res["greater"].pvalue), float(res["less"].pvalue),
        d.size, d.size, options, _warning_notes(caught))


# --------------------------------------------------------------------------- Bayesian

def _bayesian_result(name, first, second, rope, samples, strength, location, n):
    samples.setflags(write=False)
    return BayesianTestResult(name, first, second, rope, samples, samples.mean(axis=0),
                              most_probable_shares(samples), strength, location, n)


def bayesian_sign_test(differences, rope=0.01, *, first: str = "first", second: str = "second",
                       prior_strength: float = 0.5, prior_location: float = 0.0,
                       n_samples: int = 50_000, seed=0, random_state=None) -> BayesianTestResult:
    """Bayesian sign test (Benavoli et al. 2014, 2017) of the per-dataset differences.

    With a Dirichlet-process prior of strength ``s`` centred on a pseudo-observation at
    ``prior_location``, the posterior of the masses of the three regions is

        (left, rope, right) ~ Dirichlet(n_left + s [z0 left], n_rope + s [z0 in ROPE],
                                        n_right + s [z0 right])

    where ``n_left`` etc. count the differences in each region and ``z0`` is the
    pseudo-observation. Each posterior sample is directly a (left, rope, right) triple.

    Parameters
    ----------
    differences : array-like, shape (n,)
        Per-dataset mean differences ``first - second``; n >= 2, all finite.
    rope : float, (low, high) or Rope
        Half-width of a symmetric ROPE, or its bounds (see :meth:`Rope.coerce`).
    first, second : str
        Names of the algorithms, used in the summary.
    prior_strength : float
        Strength ``s >= 0`` of the prior pseudo-observation.
    prior_location : float
        Where the pseudo-observation is; 0 (the default) puts the prior on the ROPE.
    n_samples : int
        Number of posterior samples.
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Passed to ``numpy.random.default_rng``; the default 0 makes repeated calls agree
        (None draws fresh entropy).
    random_state : optional
        scikit-learn's name for ``seed``, accepted as an alias.

    Returns
    -------
    BayesianTestResult
        The posterior mean masses equal ``(counts + prior) / (n + s)`` up to Monte Carlo
        error.

    Notes
    -----
    A region with no difference and no prior has a zero Dirichlet parameter: its mass is
    exactly 0 in every sample, and the other regions are sampled from the Dirichlet of the
    remaining parameters (baycomp adds 1e-4 to every parameter instead). All-zero
    differences put everything on the ROPE.
    """
    d = _check_differences(differences)
    rope = Rope.coerce(rope)
    strength, location = _check_prior(prior_strength, prior_location)
    n_samples = _check_positive_int(n_samples, "n_samples")
    counts = np.rint(rope.shares(d) * d.size)
    alpha = counts + strength * rope.shares([location])
    rng = np.random.default_rng(resolve_seed(seed, random_state))
    positive = alpha > 0
    samples = np.zeros((n_samples, 3))
    if positive.sum() == 1:
        # numpy scales by a rounded reciprocal, which can leave 1 - 1e-16 for a sure region
        samples[:, positive] = 1.0
    else:
        samples[:, positive] = rng.dirichlet(alpha[positive], size=n_samples)
    return _bayesian_result("Bayesian sign test", first, second, rope, samples,
                            strength, location, d.size)


def _walsh_counts(points: np.ndarray, rope: Rope, block: int = 1024):
    """For each column j of the sums ``z_i + z_j`` of sorted points, the rows left and right.

    These counts are the left and right indicator matrices in compressed form: with the
    points in ascending order, floating-point addition being monotone, the rows i with
    ``z_i + z_j < 2 low`` are a prefix and those with ``z_i + z_j > 2 high`` a suffix of
    every column. Comparing the sums with twice the bounds is the same test as comparing
    the averages with the bounds (doubling is exact), and the closed ROPE keeps an
    average on a bound inside it, as everywhere in the package. Columns are taken a block
    at a time so that memory stays O(n * block) even for many datasets.
    """
    n_left, n_right = np.empty(points.size, dtype=np.intp), np.empty(points.size, dtype=np.intp)
    for start in range(0, points.size, block):
        sums = points[:, None] + points[None, start:start + block]
        n_left[start:start + block] = np.count_nonzero(sums < 2 * rope.low, axis=0)
        n_right[start:start + block] = np.count_nonzero(sums > 2 * rope.high, axis=0)
    return n_left, n_right


def bayesian_signed_rank_test(differences, rope=0.01, *, first: str = "first",
                              second: str = "second", prior_strength: float = 0.5,
                              prior_location: float = 0.0, n_samples: int = 50_000, seed=0,
                              chunk_size: int | None = None,
                              random_state=None) -> BayesianTestResult:
    """Bayesian signed-rank test (Benavoli et al. 2014, 2017) of the per-dataset differences.

    The Dirichlet-process posterior puts random weights ``w ~ Dirichlet(s, 1, ..., 1)`` on
    the points ``(z0, x_1, ..., x_n)``: the prior pseudo-observation ``z0 = prior_location``
    with strength ``s`` and the n differences. In each sample, the masses of the regions
    are those of the Walsh averages ``(z_i + z_j) / 2`` over all ordered pairs ``i, j`` in
    ``0..n`` (the diagonal included), weighted by ``w_i w_j``::

        right = sum_ij w_i w_j [z_i + z_j > 2 rope.high]
        left  = sum_ij w_i w_j [z_i + z_j < 2 rope.low]
        rope  = 1 - left - right

    This is the definition of baycomp's ``SignedRankTest`` (called with ``x = second``,
    ``y = first``), except on a bound: a Walsh average exactly equal to a ROPE bound is in
    the closed ROPE here, while baycomp splits its weight half and half. With a ROPE of
    width 0 baycomp has no ROPE region at all, while here the exactly-zero averages (at
    least the pair (z0, z0) when ``prior_location`` is 0) form it.

    Parameters
    ----------
    differences : array-like, shape (n,)
        Per-dataset mean differences ``first - second``; n >= 2, all finite.
    rope : float, (low, high) or Rope
        Half-width of a symmetric ROPE, or its bounds (see :meth:`Rope.coerce`).
    first, second : str
        Names of the algorithms, used in the summary.
    prior_strength : float
        Strength ``s >= 0`` of the pseudo-observation; with 0 it is left out.
    prior_location : float
        Location ``z0`` of the pseudo-observation.
    n_samples : int
        Number of posterior samples.
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Passed to ``numpy.random.default_rng``. The points ``(z0, x_1, ..., x_n)`` are put
        in ascending order (a stable sort, ``z0`` first among equals) and the weights
        drawn in that order with ``rng.dirichlet``, in consecutive blocks of samples; this
        gives the same draws as a single call, so results depend neither on
        ``chunk_size`` nor on the order of the datasets. The default 0 makes repeated
        calls agree (None draws fresh entropy).
    random_state : optional
        scikit-learn's name for ``seed``, accepted as an alias.
    chunk_size : int, optional
        Samples processed at a time, to bound memory; by default blocks of about 131,000
        weights (1 MB), which stay in the processor's cache.

    Returns
    -------
    BayesianTestResult

    Notes
    -----
    All-zero differences (with ``z0`` in the ROPE) give masses (0, 1, 0) in every sample.

    The quadratic forms ``w' L w`` and ``w' R w`` of the indicator matrices are computed in
    O(n) per sample rather than O(n^2): with the points sorted, column j of ``L`` selects
    a prefix of the points (and of ``R`` a suffix), so ``(L w)_j`` is a cumulative sum of
    the sorted weights (see ``_walsh_counts``). The result is the matrix product, to
    rounding.
    """
    d = _check_differences(differences)
    rope = Rope.coerce(rope)
    strength, location = _check_prior(prior_strength, prior_location)
    n_samples = _check_positive_int(n_samples, "n_samples")
    if strength > 0:
        points = np.concatenate(([location], d))
        alpha = np.concatenate(([strength], np.ones(d.size)))
    else:
        # a zero Dirichlet parameter means a weight that is always 0: drop the point
        points, alpha = d, np.ones(d.size)
    order = np.argsort(points, kind="stable")
    points, alpha = points[order], alpha[order]
    m = points.size
    if chunk_size is None:
        chunk_size = max(64, _CHUNK_ELEMENTS // m)
    else:
        chunk_size = _check_positive_int(chunk_size, "chunk_size")

    n_left, n_right = _walsh_counts(points, rope)
    # With sorted points, (L w)_j is the sum of the first n_left[j] weights,
    # cumulative[n_left[j]], and (R w)_j the sum of the last n_right[j] weights,
    # cumulative[m] - cumulative[m - n_right[j]].
    # n_left is non-increasing and n_right non-decreasing in j, so only a prefix of the
    # columns has left pairs and a suffix right pairs; the other columns add nothing.
    with_left = int(np.count_nonzero(n_left))
    without_right = m - int(np.count_nonzero(n_right))
    left_end, right_start = n_left[:with_left], m - n_right[without_right:]
    rng = np.random.default_rng(resolve_seed(seed, random_state))
    samples = np.empty((n_samples, 3))
    # Points along the rows and samples along the columns: the cumulative sums are then m
    # vectorised additions of whole rows instead of a serial scan of every sample.
    cumulative = np.zeros((m + 1, min(chunk_size, n_samples)))
    for start in range(0, n_samples, chunk_size):
        stop = min(start + chunk_size, n_samples)
        weights = rng.dirichlet(alpha, size=stop - start).T.copy()
        partial = cumulative[:, :stop - start]
        for i in range(m):
            np.add(partial[i], weights[i], out=partial[i + 1])
        samples[start:stop, 0] = np.einsum("ic,ic->c", partial[left_end], weights[:with_left])
        suffix = partial[right_start]
        np.subtract(partial[m], suffix, out=suffix)
        samples[start:stop, 2] = np.einsum("ic,ic->c", suffix, weights[without_right:])
    # the weights sum to 1 only up to rounding, which could leave a tiny negative remainder
    samples[:, 1] = np.clip(1.0 - samples[:, 0] - samples[:, 2], 0.0, 1.0)
    return _bayesian_result("Bayesian signed-rank test", first, second, rope, samples,
                            strength, location, d.size)


# --------------------------------------------------------------------------- all at once

def baselines(scores, first: str, second: str, *, rope=0.01, prior_strength: float = 0.5,
              prior_location: float = 0.0, n_samples: int = 50_000, seed=0,
              method: str = "auto", zero_method: str = "wilcox",
              sign_zeros: str = "drop", random_state=None) -> BaselinesResult:
    """Run the five baselines on the per-dataset mean differences ``first - second``.

    Parameters
    ----------
    scores : bayescomp.data.Scores
        Paired scores on at least 2 datasets.
    first, second : str
        The algorithms to compare.
    rope : float, (low, high) or Rope
        ROPE of the Bayesian tests, in the units of the scores.
    prior_strength, prior_location : float
        Prior pseudo-observation of both Bayesian tests.
    n_samples : int
        Posterior samples of each Bayesian test.
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        One generator, ``numpy.random.default_rng(seed)``, feeds the Bayesian sign test
        and then the Bayesian signed-rank test. The default 0 makes repeated calls give
        the same numbers (Monte Carlo error about 0.002 with 50,000 samples); None draws
        fresh entropy. :func:`bayescomp.hierarchical` passes its own seed.
    random_state : optional
        scikit-learn's name for ``seed``, accepted as an alias.
    method, zero_method : str
        Passed to :func:`wilcoxon_test`.
    sign_zeros : {"drop", "split"}
        Passed to :func:`sign_test` as ``zeros``.

    Returns
    -------
    BaselinesResult
        With ``summary()`` and ``to_frame()`` (one row per test).
    """
    differences = _check_differences(scores.mean_differences(first, second))
    rope = Rope.coerce(rope)
    rng = np.random.default_rng(resolve_seed(seed, random_state))
    names = dict(first=first, second=second)
    bayes = dict(prior_strength=prior_strength, prior_location=prior_location,
                 n_samples=n_samples, **names)
    result = BaselinesResult(
        first, second, rope, differences, tuple(scores.dataset_names),
        wilcoxon=wilcoxon_test(differences, method=method, zero_method=zero_method, **names),
        sign=sign_test(differences, zeros=sign_zeros, **names),
        ttest=paired_ttest(differences, **names),
        bayesian_sign=bayesian_sign_test(differences, rope, seed=rng, **bayes),
        bayesian_signed_rank=bayesian_signed_rank_test(differences, rope, seed=rng, **bayes),
    )
    differences.setflags(write=False)
    return result
