"""Rank-normalised split R-hat and bulk and tail effective sample sizes of many quantities at
once (Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021, "Rank-normalization, folding, and
localization: an improved R-hat for assessing convergence of MCMC").

ArviZ computes these one quantity at a time (a Python loop over the 2n + 3 reported
quantities of the hierarchical model); here every function takes draws shaped
(chain, draw, quantity...) and computes all quantities in whole-array numpy operations. The
definitions are ArviZ's (0.23), to the last detail, so that both give the same numbers:

* chains are split in halves (the first ``draws // 2`` and the last ``draws // 2``);
* ranks (ties averaged) over all split draws of a quantity are normal scores
  ``Phi^-1((r - 3/8) / (N + 1/4))``;
* R-hat is the larger of the bulk one (of the normal scores) and the tail one (of the
  normal scores of the draws folded about their median), the one that is not NaN if one is;
* autocovariances by FFT; Geyer's initial positive sequence of pairs of autocorrelations,
  made monotone, truncated as ArviZ truncates it;
* bulk ESS is the ESS of the normal scores, tail ESS the smaller of the ESS of the
  indicators of the draws at most their 5% and 95% quantiles (R's type 7).

What ArviZ returns on degenerate input is returned too: NaN for a quantity with a NaN draw
or fewer than 4 draws; for a constant quantity an R-hat of NaN and an ESS equal to the
number of draws. One difference, by design: a single chain is compared with itself by its two
halves (ArviZ returns NaN), which is how one mode's chain of a fit is checked.
"""
from __future__ import annotations

import functools

import numpy as np
from scipy.fft import next_fast_len
from scipy.special import ndtri

from bayescomp.sampling.threads import map_on_cores

#: Blom's offset of the normal scores of ranks
BLOM = 3 / 8
#: probabilities whose quantiles the tail ESS is of
TAIL_PROBS = (0.05, 0.95)
#: fewest draws per chain for which anything is computed
MIN_DRAWS = 4
#: quantities computed together (more only take more memory, 4,000 draws x 64 bytes each)
BLOCK = 64


def _by_quantity(draws) -> tuple[np.ndarray, tuple]:
    """``draws`` (chain, draw, ...) as float (quantity, chain, draw), contiguous (sorts and
    FFTs run along the last axis), and the shape of ``...``."""
    draws = np.asarray(draws, dtype=float)
    if draws.ndim < 2:
        raise ValueError(f"draws must be shaped (chain, draw, ...), got shape {draws.shape}")
    flat = draws.reshape(draws.shape[0], draws.shape[1], -1)
    return np.ascontiguousarray(flat.transpose(2, 0, 1)), draws.shape[2:]


def _shaped(values: np.ndarray, shape: tuple):
    """Per-quantity results in the shape of the quantities; a float for a single one."""
    values = values.reshape(shape)
    return float(values) if values.ndim == 0 else values


def _per_quantity(outputs: int = 1):
    """Decorator: a statistic of (quantity, chain, draw) draws returning ``outputs`` arrays
    as a function of (chain, draw, ...) draws, computed in blocks of quantities; NaN for a
    quantity with a NaN draw, and for all when there are too few draws."""
    def decorate(statistic):
        @functools.wraps(statistic)
        def wrapped(draws):
            draws, shape = _by_quantity(draws)
            if draws.shape[2] < MIN_DRAWS:
                values = [np.full(draws.shape[0], np.nan) for _ in range(outputs)]
            else:   # in blocks of quantities whose intermediate arrays stay small, on
                # every core (numpy's sorts and FFTs release the GIL)
                blocks = map_on_cores(statistic, (draws[start:start + BLOCK]
                                                  for start in range(0, draws.shape[0], BLOCK)))
                values = [np.concatenate(parts) for parts in
                          (zip(*blocks) if outputs > 1 else [blocks])]
            invalid = np.isnan(draws).any(axis=(1, 2))
            for value in values:
                value[invalid] = np.nan
            shaped = tuple(_shaped(value, shape) for value in values)
            return shaped if outputs > 1 else shaped[0]

        return wrapped

    return decorate


def split_chains(draws: np.ndarray) -> np.ndarray:
    """(quantity, chain, draw) draws as (quantity, 2 chain, draw // 2): each chain's first and
    last halves, all first halves first (a middle draw of an odd count is left out)."""
    n_draws = draws.shape[2]
    half = n_draws // 2
    return np.concatenate([draws[:, :, :half], draws[:, :, n_draws - half:]], axis=1)


def _ranked(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order of each row of (rows, n) and its values in that order."""
    order = np.argsort(flat, axis=1)    # tied values get their average rank: order is moot
    return order, np.take_along_axis(flat, order, axis=1)


def _scores(order: np.ndarray, ordered: np.ndarray) -> np.ndarray:
    """Normal scores of the ranks (ties given their average) of rows sorted by ``order``
    into ``ordered``, in the rows' own order."""
    n = order.shape[1]
    twice_rank = np.broadcast_to(np.arange(2, 2 * n + 1, 2), order.shape)
    tied = ordered[:, 1:] == ordered[:, :-1]
    if tied.any():
        positions = np.arange(n)
        starts_run = np.ones(order.shape, dtype=bool)
        starts_run[:, 1:] = ~tied
        ends_run = np.ones(order.shape, dtype=bool)
        ends_run[:, :-1] = ~tied
        first = np.maximum.accumulate(np.where(starts_run, positions, 0), axis=1)
        last = np.minimum.accumulate(np.where(ends_run, positions, n)[:, ::-1], axis=1)[:, ::-1]
        twice_rank = first + last + 2
    # every rank a value can have is a multiple of 1/2: their scores once, then looked up
    table = ndtri((np.arange(2 * n + 1) / 2 - BLOM) / (n - 2 * BLOM + 1))
    scores = np.empty(order.shape)
    np.put_along_axis(scores, order, table[twice_rank], axis=1)
    return scores


def normal_scores(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank-normalised (quantity, chain, draw) draws, the normal scores of each quantity's
    ranks over all its chains and draws; and the same of the draws folded about their
    median, ``|draws - median|``."""
    flat = draws.reshape(draws.shape[0], -1)
    n = flat.shape[1]
    order, ordered = _ranked(flat)
    median = (ordered[:, (n - 1) // 2] + ordered[:, n // 2]) / 2
    # folded in the draws' order, the values fall then rise: a stable sort (timsort) merges
    # the two runs in linear time
    folded = np.abs(ordered - median[:, None])
    refold = np.argsort(folded, axis=1, kind="stable")
    folded_order = np.take_along_axis(order, refold, axis=1)
    folded_scores = _scores(folded_order, np.take_along_axis(folded, refold, axis=1))
    return (_scores(order, ordered).reshape(draws.shape),
            folded_scores.reshape(draws.shape))


def _rhat(split: np.ndarray) -> np.ndarray:
    """Potential scale reduction of (quantity, chain, draw) draws already split."""
    n = split.shape[2]
    between = n * split.mean(axis=2).var(axis=1, ddof=1)
    within = split.var(axis=2, ddof=1).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):   # a constant quantity: 0 / 0 = NaN
        return np.sqrt((between / within + n - 1) / n)


@_per_quantity()
def rank_rhat(draws):
    """Rank-normalised split R-hat (the larger of bulk and folded) of every quantity.

    Parameters
    ----------
    draws : array_like (chain, draw, ...)
        One chain or several; one chain is compared by its halves.

    Returns
    -------
    float or ndarray
        Shaped as ``...``; ArviZ's ``rhat(method="rank")`` for two chains or more.
    """
    return _rank_rhat(*normal_scores(split_chains(draws)))


def _rank_rhat(scores: np.ndarray, folded_scores: np.ndarray) -> np.ndarray:
    """R-hat of split draws from their normal scores and those of the folded draws."""
    # a quantity folded to a constant: the bulk one
    return np.fmax(_rhat(scores), _rhat(folded_scores))


def _mean_autocovariance(split: np.ndarray) -> np.ndarray:
    """Autocovariance (biased, / n) at every lag averaged over the chains, (quantity, lag), by
    FFT: the chains' power spectra are averaged first, so one inverse transform is needed."""
    n = split.shape[2]
    size = next_fast_len(2 * n)
    transform = np.fft.rfft(split - split.mean(axis=2, keepdims=True), n=size, axis=2)
    power = (transform.real ** 2 + transform.imag ** 2).mean(axis=1)
    return np.fft.irfft(power, n=size, axis=1)[:, :n] / n


def _ess(split: np.ndarray) -> np.ndarray:
    """Effective sample size of every quantity of (quantity, chain, draw) split draws."""
    _, chains, n = split.shape
    total = chains * n
    autocov = _mean_autocovariance(split)
    mean_var = autocov[:, :1] * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if chains > 1:
        var_plus = var_plus + split.mean(axis=2).var(axis=1, ddof=1)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (mean_var - autocov) / var_plus
    rho[:, 0] = 1.0
    # Geyer's initial positive sequence: sums of pairs (rho[2k], rho[2k+1]) are summed up to
    # the first that is not positive, or to the last pair ArviZ looks at
    last_pair = max(0, (n - 3) // 2)
    pairs = rho[:, 0:2 * last_pair + 2:2] + rho[:, 1:2 * last_pair + 2:2]
    stops = ~(pairs > 0)
    stops[:, last_pair] = True
    cut = np.argmax(stops, axis=1)                    # the pair where the sequence ends
    rows = np.arange(split.shape[0])
    cut_pair, cut_even = pairs[rows, cut], rho[rows, 2 * cut]
    # initial monotone sequence: each pair sum at most the one before
    monotone = np.minimum.accumulate(pairs, axis=1)
    before_cut = np.arange(last_pair + 1) < cut[:, None]
    # of the pair where the sequence ends, its even term counts when the pair is not
    # negative or that term is positive
    ending = np.where((cut_pair >= 0) | (cut_even > 0), cut_even, 0.0)
    tau = -1.0 + 2.0 * np.where(before_cut, monotone, 0.0).sum(axis=1) + ending
    ess = total / np.maximum(tau, 1 / np.log10(total))
    constant = (split.max(axis=(1, 2)) - split.min(axis=(1, 2))) < np.finfo(float).resolution
    ess[constant] = total
    return ess


@_per_quantity()
def ess_bulk(draws):
    """Bulk effective sample size (of the rank-normalised split chains) of every quantity.

    Parameters
    ----------
    draws : array_like (chain, draw, ...)

    Returns
    -------
    float or ndarray
        Shaped as ``...``; ArviZ's ``ess(method="bulk")``.
    """
    return _ess(normal_scores(split_chains(draws))[0])


@_per_quantity()
def ess_mean(draws):
    """Effective sample size of the mean of every quantity of (chain, draw, ...) draws, shaped
    as ``...`` (ArviZ's ``ess(method="mean")``): from the autocorrelations of the draws
    themselves, not of their ranks, so that it gives a mean's Monte Carlo error, sd /
    sqrt(ESS), where the draws' values matter and not only their order."""
    return _ess(split_chains(draws))


def quantiles(draws: np.ndarray, probs) -> np.ndarray:
    """(quantity, prob) quantiles of each quantity of (quantity, chain, draw) draws over all
    its draws, R's type 7 computed as ``scipy.stats.mstats.mquantiles(alphap=1, betap=1)``
    computes it (ArviZ's)."""
    flat = draws.reshape(draws.shape[0], -1)
    n = flat.shape[1]
    probs = np.asarray(probs, dtype=float)
    aleph = n * probs + (1.0 - probs)
    k = np.floor(aleph.clip(1, n - 1)).astype(int)
    gamma = (aleph - k).clip(0, 1)
    # the order statistics k - 1 and k in place, not a whole sort
    ordered = np.partition(flat, np.unique(np.concatenate([k - 1, k])), axis=1)
    return (1.0 - gamma) * ordered[:, k - 1] + gamma * ordered[:, k]


@_per_quantity()
def ess_tail(draws):
    """Tail effective sample size of every quantity: the smaller of the ESS of its 5% and
    95% quantiles (of the indicators of the draws at most each).

    Parameters
    ----------
    draws : array_like (chain, draw, ...)

    Returns
    -------
    float or ndarray
        Shaped as ``...``; ArviZ's ``ess(method="tail")``.
    """
    return _ess_tail(draws)


def _ess_tail(draws: np.ndarray) -> np.ndarray:
    """Tail ESS of every quantity of (quantity, chain, draw) draws."""
    bounds = quantiles(draws, TAIL_PROBS)
    return np.min([_ess(split_chains((draws <= bound[:, None, None]).astype(float)))
                   for bound in bounds.T], axis=0)


@_per_quantity(outputs=3)
def convergence(draws):
    """:func:`rank_rhat`, :func:`ess_bulk` and :func:`ess_tail` of every quantity, sharing
    the work they have in common.

    Parameters
    ----------
    draws : array_like (chain, draw, ...)

    Returns
    -------
    tuple of (float or ndarray)
        R-hat, bulk ESS and tail ESS, each shaped as ``...``.
    """
    scores, folded_scores = normal_scores(split_chains(draws))
    return _rank_rhat(scores, folded_scores), _ess(scores), _ess_tail(draws)
