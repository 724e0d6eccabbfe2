"""Time bayescomp's Bayesian signed-rank test against baycomp's SignedRankTest.

Run from the repository root:

    python benchmarks/bench_signed_rank.py [--samples 50000] [--repeats 3] [--datasets 20 100]

For each number of datasets it simulates paired per-dataset mean scores with a fixed seed
and times, best of ``--repeats`` runs each:

* ours: ``bayescomp.baselines.across_datasets.bayesian_signed_rank_test`` (sorted points, cumulative sums);
* the same posterior computed with dense matrix products ``(W @ M) * W`` of the weights with
  the (n+1) x (n+1) indicator matrices, on the same weights (a reference for the design
  choice; the largest difference from ours is printed);
* baycomp's ``SignedRankTest.probs(x, y, rope, prior=..., nsamples=...)``, when baycomp
  is importable, on the same data (``x = second``, ``y = first``, since baycomp's
  differences are ``y - x``).

It prints the times, the ratio baycomp / ours, and the probabilities each returns: the share
of posterior samples in which (second better, equivalent, first better) is the most
probable region, which is what baycomp reports. The two use different random streams, so
those agree only up to Monte Carlo error. Timings depend on the machine and its load; the
load average is printed with them.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bayescomp.baselines.across_datasets import bayesian_signed_rank_test  # noqa: E402
from bayescomp.rope import Rope, most_probable_shares  # noqa: E402

try:
    from baycomp.multiple import SignedRankTest
except ImportError:
    SignedRankTest = None

ROPE = 0.01
PRIOR = 0.5
DATA_SEED = 20240531
SAMPLE_SEED = 0


def simulate(n_datasets: int, seed: int = DATA_SEED):
    """Mean accuracies of two algorithms on ``n_datasets``, the first slightly better."""
    rng = np.random.default_rng(seed)
    second = rng.uniform(0.70, 0.90, n_datasets)
    first = second + rng.normal(0.005, 0.015, n_datasets)
    return first, second


def matrix_product_samples(d, rope, prior_strength, n_samples, seed, chunk_size=10_000):
    """The signed-rank posterior as dense quadratic forms ``w' L w`` and ``w' R w``.

    Draws the weights exactly as ``bayesian_signed_rank_test`` documents (points sorted,
    stable, the pseudo-observation at 0 first among equals), so the two can be compared
    sample by sample.
    """
    rope = Rope.coerce(rope)
    points = np.concatenate(([0.0], d))
    alpha = np.concatenate(([prior_strength], np.ones(d.size)))
    order = np.argsort(points, kind="stable")
    points, alpha = points[order], alpha[order]
    sums = points[:, None] + points[None, :]
    m = points.size
    indicators = np.hstack([(sums < 2 * rope.low), (sums > 2 * rope.high)]).astype(float)
    rng = np.random.default_rng(seed)
    samples = np.empty((n_samples, 3))
    for start in range(0, n_samples, chunk_size):
        stop = min(start + chunk_size, n_samples)
        weights = rng.dirichlet(alpha, size=stop - start)
        products = weights @ indicators
        samples[start:stop, 0] = np.einsum("si,si->s", products[:, :m], weights)
        samples[start:stop, 2] = np.einsum("si,si->s", products[:, m:], weights)
    samples[:, 1] = np.clip(1.0 - samples[:, 0] - samples[:, 2], 0.0, 1.0)
    return samples


def best_of(function, repeats):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def fmt(probabilities) -> str:
    return "(" + ", ".join(f"{p:.4f}" for p in probabilities) + ")"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", type=int, nargs="+", default=[20, 100])
    args = parser.parse_args(argv)

    print(f"Bayesian signed-rank test, {args.samples} posterior samples, ROPE {ROPE}, "
          f"prior strength {PRIOR} at 0, best of {args.repeats}")
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if SignedRankTest is None:
        print("baycomp is not importable: timing bayescomp only (pip install baycomp)")
    print("probabilities: share of samples in which (second better, equivalent, first "
          "better) is the most probable region\n")

    for n in args.datasets:
        first, second = simulate(n)
        d = first - second
        ours_time, ours = best_of(lambda: bayesian_signed_rank_test(
            d, ROPE, prior_strength=PRIOR, n_samples=args.samples, seed=SAMPLE_SEED),
            args.repeats)
        dense_time, dense = best_of(lambda: matrix_product_samples(
            d, ROPE, PRIOR, args.samples, SAMPLE_SEED), args.repeats)
        print(f"{n} datasets")
        print(f"  bayescomp              {ours_time:8.4f} s   probabilities "
              f"{fmt(ours.most_probable)}   mean masses {fmt(ours.mean_masses)}")
        print(f"  dense matrix products  {dense_time:8.4f} s   probabilities "
              f"{fmt(most_probable_shares(dense))}   largest difference from bayescomp "
              f"{np.max(np.abs(dense - ours.samples)):.1e}")
        if SignedRankTest is not None:
            baycomp_time, baycomp_probs = best_of(lambda: SignedRankTest.probs(
                second, first, ROPE, prior=PRIOR, nsamples=args.samples,
                random_state=SAMPLE_SEED), args.repeats)
            print(f"  baycomp                {baycomp_time:8.4f} s   probabilities "
                  f"{fmt(baycomp_probs)}")
            print(f"  ratio baycomp / bayescomp: {baycomp_time / ours_time:.1f}x "
                  f"(dense matrix products: {baycomp_time / dense_time:.1f}x)")
        print()


if __name__ == "__main__":
    main()
