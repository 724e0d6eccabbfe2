"""Collections of datasets with known mean differences, for validation and benchmarks."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayescomp.data.readers import from_arrays
from bayescomp.data.scores import Scores


@dataclass(frozen=True)
class SimulatedCollection:
    """Scores of two algorithms ``"a"`` and ``"b"`` whose true mean differences are known."""

    scores: Scores
    delta0: float
    delta: np.ndarray
    sigma: np.ndarray


def draw_deltas(n_datasets: int, delta0: float, sigma0: float, distribution: str = "normal",
                rng=None) -> np.ndarray:
    """True per-dataset differences around ``delta0``: "normal", "cauchy" (scale sigma0),
    "student" (Student-t with 2 degrees of freedom, scale sigma0: a few datasets far out on
    either side), "skewed" (normal, and on about a fifth of the datasets shifted up by an
    exponential of mean 10 sigma0, as where one algorithm fails on some datasets: the
    hierarchical model's nu then lies near 1, on some collections with a second mode near 20,
    and chains cross its range slowly),
    "mixture" (half the datasets at ``delta0 - sigma0``, half at ``delta0 + sigma0``, each
    with spread ``sigma0 / 4``) or "outliers" (the last fifth of the datasets, rounded, at
    ``delta0 + 5 sigma0``, the rest at ``delta0``, each with spread ``sigma0 / 20``: the
    hierarchical model's posterior then has a heavy-tailed mode, nu near 1 and delta0 at
    the many, and a near-normal one, and the chains of both programs cross between them)."""
    rng = np.random.default_rng(rng)
    if distribution == "normal":
        return rng.normal(delta0, sigma0, n_datasets)
    if distribution == "cauchy":
        return delta0 + sigma0 * rng.standard_cauchy(n_datasets)
    if distribution == "student":
        return delta0 + sigma0 * rng.standard_t(2.0, n_datasets)
    if distribution == "skewed":
        shifted = rng.random(n_datasets) < 0.2
        return (rng.normal(delta0, sigma0, n_datasets)
                + shifted * rng.exponential(10 * sigma0, n_datasets))
    if distribution == "mixture":
        sides = rng.choice([-1.0, 1.0], n_datasets)
        return delta0 + sides * sigma0 + rng.normal(0, sigma0 / 4, n_datasets)
    if distribution == "outliers":
        far = np.arange(n_datasets) >= n_datasets - round(n_datasets / 5)
        return delta0 + 5 * sigma0 * far + rng.normal(0, sigma0 / 20, n_datasets)
    raise ValueError("distribution must be 'normal', 'cauchy', 'student', 'skewed', "
                     "'mixture' or 'outliers', "
                     f"got {distribution!r}")


def compound_symmetric(delta, sigma, n_scores, rho, rng=None) -> list[np.ndarray]:
    """Per dataset, n_i differences ~ N(delta_i 1, sigma_i^2 ((1 - rho_i) I + rho_i 11')).

    Drawn as ``delta + sigma (sqrt(rho) z0 + sqrt(1 - rho) z)``: one shared normal z0 per
    dataset gives exactly the compound-symmetric covariance in O(n).
    """
    rng = np.random.default_rng(rng)
    k = len(delta)
    sigma, n_scores, rho = (np.broadcast_to(v, k) for v in (sigma, n_scores, rho))
    return [d + s * (np.sqrt(r) * rng.standard_normal() + np.sqrt(1 - r) * rng.standard_normal(n))
            for d, s, n, r in zip(delta, sigma, n_scores, rho)]


def collection(n_datasets: int, n_scores=100, *, delta0: float = 0.0, sigma0: float = 0.01,
               sigma=0.03, rho=0.1, distribution: str = "normal", seed=None) -> SimulatedCollection:
    """A collection whose fold differences follow the hierarchical model's likelihood.

    Parameters
    ----------
    n_datasets : int
    n_scores : int or sequence of int
        Scores per dataset (ragged allowed).
    delta0, sigma0 : float
        Centre and spread of the true differences (see :func:`draw_deltas`).
    sigma, rho : float or sequence
        Within-dataset standard deviation and correlation of the differences.
    distribution : "normal", "cauchy", "mixture" or "outliers"
    seed : int, optional

    Returns
    -------
    SimulatedCollection
        Scores of "a" and "b" with ``a - b`` the simulated differences; "b" is uniform on
        (0.6, 0.9), so the scores look like accuracies.
    """
    rng = np.random.default_rng(seed)
    delta = draw_deltas(n_datasets, delta0, sigma0, distribution, rng)
    differences = compound_symmetric(delta, sigma, n_scores, rho, rng)
    base = [rng.uniform(0.6, 0.9, x.size) for x in differences]
    scores = from_arrays({"a": [b + x for b, x in zip(base, differences)], "b": base},
                         rho=list(np.broadcast_to(rho, n_datasets)))
    return SimulatedCollection(scores, delta0, delta, np.broadcast_to(sigma, n_datasets).copy())


# --- a realistic process: cross-validated naive Bayes ----------------------------------------

def stratified_folds(y: np.ndarray, runs: int, folds: int, rng) -> np.ndarray:
    """Fold of every instance in each run, shape (runs, n): stratified k-fold, reshuffled per run.

    Per run the instances are sorted by class and, within a class, in random order; the
    position in that order modulo ``folds`` is the fold. So every fold gets each class's
    instances in equal numbers (give or take one) and the folds' sizes differ by at most one,
    as with scikit-learn's ``StratifiedKFold(shuffle=True)``.
    """
    n = y.size
    keys = rng.random((runs, n))
    order = np.lexsort((keys, np.broadcast_to(y, (runs, n))), axis=-1)
    assignment = np.empty((runs, n), dtype=np.intp)
    np.put_along_axis(assignment, order, np.broadcast_to(np.arange(n) % folds, (runs, n)), axis=-1)
    return assignment


def _naive_bayes_cv_accuracy(y: np.ndarray, feature: np.ndarray, assignment: np.ndarray,
                             folds: int) -> np.ndarray:
    """Accuracy on every (run, fold) of a one-feature naive Bayes, binary class and feature.

    Trained on the other folds: predict for feature value v the class c maximising
    ``P(c) P(v | c)`` with Laplace smoothing, ``(N_c + 1) / (N + 2) * (N_cv + 1) / (N_c + 2)``;
    ties go to class 0. Only the 2 x 2 counts per fold are needed, so this is O(runs x n).
    """
    runs = assignment.shape[0]
    cell = 2 * y + feature                                   # (class, feature) cell 0..3
    index = (np.arange(runs)[:, None] * folds + assignment) * 4 + cell
    test = np.bincount(index.ravel(), minlength=runs * folds * 4).reshape(runs, folds, 2, 2)
    train = test.sum(axis=1, keepdims=True) - test           # counts [run, fold, class, value]
    n_class = train.sum(axis=3)                              # [run, fold, class]
    n_total = n_class.sum(axis=2, keepdims=True)
    log_prior = np.log((n_class + 1) / (n_total + 2))
    log_like = np.log((train + 1) / (n_class[..., None] + 2))
    score = log_prior[..., None] + log_like                  # [run, fold, class, value]
    predicted = np.argmax(score, axis=2)                     # [run, fold, value]; ties -> 0
    correct = np.take_along_axis(test, predicted[:, :, None, :], axis=2)[:, :, 0, :].sum(axis=2)
    return correct / test.sum(axis=(2, 3))


def cv_naive_bayes_collection(n_datasets: int, delta, *, theta: float = 0.8, n_samples=1000,
                              runs: int = 10, folds: int = 10, delta0: float | None = None,
                              seed=None) -> SimulatedCollection:
    """Accuracies of two naive Bayes classifiers under repeated stratified cross-validation.

    The realistic process of Corani et al. (2017): on dataset i, a balanced binary class
    ``y`` and two binary features; feature 1 equals the class with probability ``theta``
    and feature 2 with probability ``theta - delta_i``, independently given the class.
    Classifier "a" is naive Bayes on feature 1, "b" on feature 2. With enough data each
    learns "predict the class equal to its feature", whose accuracy is theta and
    theta - delta_i: the true difference of accuracy is delta_i. The scores are the
    accuracies on the test folds of ``runs`` x ``folds`` stratified cross-validation (``runs``
    reshuffles), with ``rho = 1 / folds``; nothing imposes the correlation between the
    folds' differences, it comes from the overlapping training and test sets.

    Parameters
    ----------
    n_datasets : int
    delta : float or sequence of float
        True accuracy difference ``a - b`` on each dataset (one number for all, or one per
        dataset). Needs ``0.5 < theta - delta_i <= 1``.
    theta : float
        Probability that feature 1 agrees with the class, in (0.5, 1].
    n_samples : int or sequence of int
        Instances per dataset (at least ``2 * folds``).
    runs, folds : int
        Repetitions of k-fold cross-validation and its number of folds.
    delta0 : float, optional
        Recorded as the collection's ``delta0`` (the centre the delta_i were drawn around);
        default the mean of ``delta``.
    seed : int, numpy.random.SeedSequence or Generator, optional

    Returns
    -------
    SimulatedCollection
        ``sigma`` holds the approximate standard deviation of one fold's difference,
        ``sqrt(folds (theta (1 - theta) + theta_2 (1 - theta_2)) / n)`` with
        ``theta_2 = theta - delta_i``, what it is when both classifiers predict their
        feature and are right independently.
    """
    delta = np.broadcast_to(np.asarray(delta, dtype=float), (n_datasets,)).copy()
    n_samples = np.broadcast_to(np.asarray(n_samples), (n_datasets,)).astype(int)
    if not 0.5 < theta <= 1:
        raise ValueError(f"theta must be in (0.5, 1], got {theta}")
    theta2 = theta - delta
    if np.any(theta2 <= 0.5) or np.any(theta2 > 1):
        raise ValueError(f"theta - delta_i must be in (0.5, 1] (theta {theta}); got "
                         f"{theta2.min():.4g} .. {theta2.max():.4g}")
    if folds < 2 or runs < 1:
        raise ValueError(f"need folds >= 2 and runs >= 1, got folds={folds}, runs={runs}")
    if np.any(n_samples < 2 * folds):
        raise ValueError(f"n_samples must be at least 2 * folds = {2 * folds}")
    rng = np.random.default_rng(seed)
    first, second = [], []
    for n, p2 in zip(n_samples, theta2):
        y = rng.integers(0, 2, n)
        f1 = np.where(rng.random(n) < theta, y, 1 - y)
        f2 = np.where(rng.random(n) < p2, y, 1 - y)
        assignment = stratified_folds(y, runs, folds, rng)
        first.append(_naive_bayes_cv_accuracy(y, f1, assignment, folds).ravel())
        second.append(_naive_bayes_cv_accuracy(y, f2, assignment, folds).ravel())
    scores = from_arrays({"a": first, "b": second}, rho=1.0 / folds)
    sigma = np.sqrt(folds * (theta * (1 - theta) + theta2 * (1 - theta2)) / n_samples)
    return SimulatedCollection(scores, float(np.mean(delta)) if delta0 is None else float(delta0),
                               delta, sigma)


# --- collections that break samplers: what real benchmark studies produce --------------------

#: (runs, folds) of the designs :func:`benchmark_collection` knows; "ragged" mixes them.
DESIGNS = {"10x10": (10, 10), "10-fold": (1, 10), "5x2": (5, 2), "4-fold": (1, 4)}
_RAGGED = ((1, 10), (10, 10), (5, 2), (3, 5), (1, 5))


def _designs(n_datasets: int, design: str, identical: float, test_cases, seed):
    """The checked design of a simulated benchmark study: its generator, (runs, folds) and
    test cases per fold of every dataset, drawn in that order."""
    if design != "ragged" and design not in DESIGNS:
        raise ValueError(f"design must be 'ragged' or one of {sorted(DESIGNS)}, got {design!r}")
    if not 0 <= identical <= 1:
        raise ValueError(f"identical must be a share in [0, 1], got {identical}")
    rng = np.random.default_rng(seed)
    plans = [_RAGGED[rng.integers(len(_RAGGED))] if design == "ragged" else DESIGNS[design]
             for _ in range(n_datasets)]
    return rng, plans, rng.integers(test_cases[0], test_cases[1] + 1, n_datasets)


def benchmark_collection(n_datasets: int, *, identical: float = 0.0, offset: float | None = None,
                         test_cases=(30, 150), design: str = "10x10", delta0: float = 0.0,
                         sigma0: float = 0.01, noise: float = 0.5, distribution: str = "normal",
                         seed=None) -> SimulatedCollection:
    """Accuracies of two algorithms as a benchmark study records them: discretised by small
    test folds, often identical, sometimes a constant apart.

    On dataset i, with ``N_i`` test cases per fold (uniform on ``test_cases``), algorithm
    "b" scores ``Binomial(N_i, p_i) / N_i`` on each split (``p_i`` uniform on (0.65, 0.9)),
    and "a" scores that plus a compound-symmetric difference (mean ``delta_i ~ N(delta0,
    sigma0)``, or another ``distribution`` of :func:`draw_deltas`, correlation ``1 / folds``,
    standard deviation ``noise`` times that of one
    fold's accuracy), rounded to a whole number of test cases and clipped to [0, 1]: every
    difference is a multiple of ``1 / N_i``, as with real accuracies.

    Parameters
    ----------
    n_datasets : int
    identical : float
        Share of the datasets (rounded; the first ones) on which "a" and "b" score the same
        on every split, as two variants of one algorithm often do; their ``delta_i`` is 0.
    offset : float, optional
        "a" scores exactly ``offset`` more than "b" on every split of every dataset.
    test_cases : (int, int)
        Range of the test cases per fold.
    design : "10x10", "10-fold", "5x2", "4-fold" or "ragged"
        Runs x folds of the cross-validation; "ragged" gives each dataset one of 1 x 10,
        10 x 10, 5 x 2, 3 x 5 and 1 x 5, with its own rho.
    delta0, sigma0, noise : float
    distribution : str
        Of the delta_i (:func:`draw_deltas`).
    seed : int, optional

    Returns
    -------
    SimulatedCollection
        ``delta`` the true ``delta_i`` (``offset`` everywhere when given), ``sigma`` the
        standard deviation of the latent fold difference.
    """
    rng, plans, cases = _designs(n_datasets, design, identical, test_cases, seed)
    accuracy = rng.uniform(0.65, 0.9, n_datasets)
    delta = draw_deltas(n_datasets, delta0, sigma0, distribution, rng=rng)
    n_identical = int(round(identical * n_datasets))
    delta[:n_identical] = 0.0
    sigma = noise * np.sqrt(accuracy * (1 - accuracy) / cases)
    first, second = [], []
    for i, ((runs, folds), n_cases) in enumerate(zip(plans, cases)):
        b = rng.binomial(n_cases, accuracy[i], runs * folds) / n_cases
        if offset is not None:
            a = b + offset
        elif i < n_identical:
            a = b.copy()
        else:
            latent = compound_symmetric([delta[i]], [sigma[i]], [runs * folds], [1 / folds], rng)[0]
            a = np.clip(np.round((b + latent) * n_cases), 0, n_cases) / n_cases
        first.append(a)
        second.append(b)
    scores = from_arrays({"a": first, "b": second}, rho=[1 / folds for _, folds in plans])
    if offset is not None:
        delta = np.full(n_datasets, float(offset))
    return SimulatedCollection(scores, float(offset if offset is not None else delta0), delta,
                               sigma)


def near_identical_collection(n_datasets: int, *, identical: float = 0.25,
                              changed=(0.02, 0.08), bias: float = 0.6, outliers: float = 0.1,
                              outlier_changed=(0.8, 1.0), outlier_bias: float = 0.02,
                              test_cases=(10, 500), design: str = "10x10",
                              seed=None) -> SimulatedCollection:
    """Accuracies of two near-identical algorithms (e.g. a learner with and without a
    post-processing step): most fold differences exactly 0, a few one test case either way.

    This is what real benchmark results of such pairs look like, and what the normally
    distributed differences of :func:`benchmark_collection` never produce: the hierarchical
    model's posterior then has two modes (a heavy-tailed population with nu near 1 and a
    tiny sigma0, and a near-normal one with nu in the bulk of its prior), and chains settle
    in either.

    On dataset i, with ``N_i`` test cases per fold (uniform on ``test_cases``), "b" scores
    ``Binomial(N_i, p_i) / N_i`` on each split (``p_i`` uniform on (0.65, 0.95)); "a" scores
    the same except on ``k_i`` splits (``k_i ~ Binomial(splits, r_i)``, at least 1, ``r_i``
    uniform on ``changed``), where it classifies one more test case right (probability
    ``bias``) or one fewer. The first ``identical`` share of the datasets (rounded) have
    identical scores on every split. On the last ``outliers`` share (rounded) the step
    changes the outcome: there ``r_i`` is uniform on ``outlier_changed``, a changed split
    differs by ``1 + Poisson(1)`` test cases, in favour of "a" with probability
    ``outlier_bias``. Those few datasets, far from the many near 0, are what makes the
    population heavy-tailed on real pairs (on the issue's pair of decision trees the mean of
    the dataset means was -0.0014 while most were exactly 0).

    Parameters
    ----------
    n_datasets : int
    identical : float
        Share of datasets with identical scores on every split, in [0, 1].
    changed : (float, float)
        Range of the share of splits on which the two differ.
    bias : float
        Probability that a difference favours "a".
    outliers : float
        Share of datasets on which the two really differ, in [0, 1 - identical].
    outlier_changed : (float, float)
        Range of the share of splits that differ on those.
    outlier_bias : float
        Probability that a difference there favours "a".
    test_cases : (int, int)
        Range of the test cases per fold.
    design : "10x10", "10-fold", "5x2", "4-fold" or "ragged"
        As in :func:`benchmark_collection`.
    seed : int, optional

    Returns
    -------
    SimulatedCollection
        ``delta`` holds each dataset's expected mean difference,
        ``r_i (2 bias - 1) / N_i`` (0 on the identical datasets), ``sigma`` the standard
        deviation of one split's difference under that process.
    """
    if not 0 <= bias <= 1:
        raise ValueError(f"bias must be a probability, got {bias}")
    rng, plans, cases = _designs(n_datasets, design, identical, test_cases, seed)
    accuracy = rng.uniform(0.65, 0.95, n_datasets)
    rate = rng.uniform(changed[0], changed[1], n_datasets)
    n_identical = int(round(identical * n_datasets))
    rate[:n_identical] = 0.0
    n_outliers = int(round(outliers * n_datasets))
    if n_identical + n_outliers > n_datasets:
        raise ValueError(f"identical ({identical}) and outliers ({outliers}) shares exceed 1")
    outlying = np.arange(n_datasets) >= n_datasets - n_outliers
    rate[outlying] = rng.uniform(outlier_changed[0], outlier_changed[1], n_outliers)
    first, second = [], []
    for i, ((runs, folds), n_cases) in enumerate(zip(plans, cases)):
        splits = runs * folds
        correct = rng.binomial(n_cases, accuracy[i], splits)
        step = np.zeros(splits, dtype=int)
        if i >= n_identical:
            k = max(1, rng.binomial(splits, rate[i]))
            where = rng.choice(splits, size=k, replace=False)
            favour = outlier_bias if outlying[i] else bias
            cases_changed = 1 + rng.poisson(1.0, k) if outlying[i] else 1
            step[where] = np.where(rng.random(k) < favour, 1, -1) * cases_changed
        # one more right is impossible at a perfect fold, one fewer at an empty one
        step = np.clip(correct + step, 0, n_cases) - correct
        first.append((correct + step) / n_cases)
        second.append(correct / n_cases)
    scores = from_arrays({"a": first, "b": second}, rho=[1 / folds for _, folds in plans])
    # expected step of a changed split (its sign and size) and its second moment
    favour = np.where(outlying, outlier_bias, bias)
    magnitude, magnitude2 = np.where(outlying, 2.0, 1.0), np.where(outlying, 5.0, 1.0)
    step_mean = rate * (2 * favour - 1) * magnitude
    delta = step_mean / cases
    sigma = np.sqrt(rate * magnitude2 - step_mean ** 2) / cases
    return SimulatedCollection(scores, float(np.median(delta)), delta, sigma)
