"""The Bayesian nonparametric tests of Benavoli et al. on the per-dataset mean differences:
the Bayesian sign test and the Bayesian signed-rank test, with a Dirichlet-process posterior
whose prior is a pseudo-observation of strength ``s`` at ``prior_location``."""
from __future__ import annotations

import numpy as np
from typing import TYPE_CHECKING

from bayescomp.rope import Rope, most_probable_shares
from bayescomp.arguments import check_count
from bayescomp.baselines.common import BayesianTestResult, _check_differences, _check_prior

if TYPE_CHECKING:
    from bayescomp.annotations import ArrayLike, RopeLike, SeedLike


# Weights per block of samples in the signed-rank test: small enough for a block and its
# cumulative sums to stay in cache (about 1 MB each), large enough that the Python loops
# over blocks and points cost little.
_CHUNK_ELEMENTS = 131_072


# --------------------------------------------------------------------------- Bayesian

def _bayesian_result(name, first, second, rope, samples, strength, location, n):
    samples.setflags(write=False)
    return BayesianTestResult(name, first, second, rope, samples, samples.mean(axis=0),
                              most_probable_shares(samples), strength, location, n)


def bayesian_sign_test(differences: ArrayLike, rope: RopeLike = 0.01, *, first: str = "first",
                       second: str = "second", prior_strength: float = 0.5,
                       prior_location: float = 0.0, n_samples: int = 50_000,
                       seed: SeedLike = 0) -> BayesianTestResult:
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
    n_samples = check_count(n_samples, "n_samples", least=1)
    counts = np.rint(rope.shares(d) * d.size)
    alpha = counts + strength * rope.shares([location])
    rng = np.random.default_rng(seed)
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


def bayesian_signed_rank_test(differences: ArrayLike, rope: RopeLike = 0.01, *,
                              first: str = "first", second: str = "second",
                              prior_strength: float = 0.5, prior_location: float = 0.0,
                              n_samples: int = 50_000, seed: SeedLike = 0,
                              chunk_size: int | None = None) -> BayesianTestResult:
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
    n_samples = check_count(n_samples, "n_samples", least=1)
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
        chunk_size = check_count(chunk_size, "chunk_size", least=1)

    n_left, n_right = _walsh_counts(points, rope)
    # With sorted points, (L w)_j is the sum of the first n_left[j] weights,
    # cumulative[n_left[j]], and (R w)_j the sum of the last n_right[j] weights,
    # cumulative[m] - cumulative[m - n_right[j]].
    # n_left is non-increasing and n_right non-decreasing in j, so only a prefix of the
    # columns has left pairs and a suffix right pairs; the other columns add nothing.
    with_left = int(np.count_nonzero(n_left))
    without_right = m - int(np.count_nonzero(n_right))
    left_end, right_start = n_left[:with_left], m - n_right[without_right:]
    rng = np.random.default_rng(seed)
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