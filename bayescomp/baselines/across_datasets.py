"""Baselines across datasets: tests run on the per-dataset mean differences.

Given ``d_k = mean(first - second)`` on datasets ``k = 1..n`` (see
:meth:`bayescomp.data.scores.Scores.mean_differences`), this module runs

* three frequentist tests: the Wilcoxon signed-rank test, the sign test and the paired
  t-test (two-sided p-values, and both one-sided ones);
* two Bayesian nonparametric tests of Benavoli et al.: the Bayesian sign test and the
  Bayesian signed-rank test, both with a Dirichlet-process posterior whose prior is a
  pseudo-observation of strength ``s`` (0.5 by default) at 0.

These treat each dataset as one observation, ignoring the uncertainty of each mean; they
are the reference points that the hierarchical model is compared against. The frequentist
tests and :func:`baselines` are here; the Bayesian ones are in
:mod:`~bayescomp.baselines.bayesian_tests`; the results are in
:mod:`~bayescomp.baselines.classical_result` (frequentist) and :mod:`~bayescomp.baselines.common`.

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
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from bayescomp.baselines.bayesian_tests import bayesian_sign_test, bayesian_signed_rank_test
from bayescomp.baselines.classical_result import ClassicalTestResult
from bayescomp.baselines.common import (BaselinesResult, BayesianTestResult,  # noqa: F401 (public here)
                                         _check_choice, _check_differences, _warning_notes)
from bayescomp.rope import Rope

if TYPE_CHECKING:
    from bayescomp.annotations import ArrayLike, RopeLike, SeedLike
    from bayescomp.data.scores import Scores

__all__ = [
    "ClassicalTestResult", "BayesianTestResult", "BaselinesResult",
    "wilcoxon_test", "sign_test", "paired_ttest",
    "bayesian_sign_test", "bayesian_signed_rank_test", "baselines",
]

WILCOXON_METHODS = ("auto", "exact", "approx")
ZERO_METHODS = ("wilcox", "pratt", "zsplit")
SIGN_ZEROS = ("drop", "split")

_ALL_ZERO_NOTE = ("every difference is zero: there is nothing to test, so the p-values "
                  "are reported as 1 (no evidence of a difference) and the statistic as NaN")


# --------------------------------------------------------------------------- frequentist

def _result(name, first, second, statistic_name, statistic, p_values, n, n_used, options,
            notes) -> ClassicalTestResult:
    """A test across datasets: no level, so no conclusion; the two-sided p-value and both
    one-sided ones (``p_values``), as the baselines report them."""
    two_sided, greater, less = p_values
    return ClassicalTestResult(name, (first, second), statistic_name, statistic, two_sided, n,
                               "datasets", p_greater=greater, p_less=less, n_used=n_used,
                               options=options, notes=notes)


def wilcoxon_test(differences: ArrayLike, *, first: str = "first", second: str = "second",
                  method: str = "auto", zero_method: str = "wilcox",
                  correction: bool = False) -> ClassicalTestResult:
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
    ClassicalTestResult
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
        return _result("Wilcoxon signed-rank test", first, second, "W", np.nan, (1.0, 1.0, 1.0),
                       d.size, n_used, options, (_ALL_ZERO_NOTE,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = {alternative: stats.wilcoxon(d, zero_method=zero_method, correction=correction,
                                           alternative=alternative, method=method)
               for alternative in ("two-sided", "greater", "less")}
    return _result("Wilcoxon signed-rank test", first, second, "W",
                   float(res["two-sided"].statistic),
                   tuple(float(res[a].pvalue) for a in ("two-sided", "greater", "less")),
                   d.size, n_used, options, _warning_notes(caught))


def sign_test(differences: ArrayLike, *, first: str = "first", second: str = "second",
              zeros: str = "drop") -> ClassicalTestResult:
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
    ClassicalTestResult
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
        return _result("Sign test", first, second, "wins", np.nan, (1.0, 1.0, 1.0), d.size, 0,
                       options, tuple(notes) + (_ALL_ZERO_NOTE,))
    p = {alternative: stats.binomtest(wins, n_used, 0.5, alternative=alternative).pvalue
         for alternative in ("two-sided", "greater", "less")}
    return _result("Sign test", first, second, "wins", float(wins),
                   tuple(float(p[a]) for a in ("two-sided", "greater", "less")), d.size, n_used,
                   options, tuple(notes))


def paired_ttest(differences: ArrayLike, *, first: str = "first",
                 second: str = "second") -> ClassicalTestResult:
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
    ClassicalTestResult
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
        return _result("Paired t-test", first, second, "t", np.nan, (1.0, 1.0, 1.0), d.size,
                       d.size, options, (_ALL_ZERO_NOTE,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = {alternative: stats.ttest_1samp(d, 0.0, alternative=alternative)
               for alternative in ("two-sided", "greater", "less")}
    return _result("Paired t-test", first, second, "t", float(res["two-sided"].statistic),
                   tuple(float(res[a].pvalue) for a in ("two-sided", "greater", "less")),
                   d.size, d.size, options, _warning_notes(caught))



def baselines(scores: Scores, first: str, second: str, *, rope: RopeLike = 0.01,
              prior_strength: float = 0.5, prior_location: float = 0.0, n_samples: int = 50_000,
              seed: SeedLike = 0, method: str = "auto", zero_method: str = "wilcox",
              sign_zeros: str = "drop") -> BaselinesResult:
    """Run the five baselines on the per-dataset mean differences ``first - second``.

    Parameters
    ----------
    scores : bayescomp.data.scores.Scores
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
    rng = np.random.default_rng(seed)
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
