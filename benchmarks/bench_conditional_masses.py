"""Probabilities read from conditional masses against the draws they replaced: their Monte
Carlo errors on the same fit.

- The next dataset (pairwise and joint model): each posterior draw's masses are a
  Student-t's given delta0; the package averages them over the drawn delta0 and its
  antithetic partner, the draw mirrored in delta0's conditional
  (``bayescomp.models.region_masses``, ``joint_posterior.next_dataset_masses``), where it
  used the drawn delta0 alone.
- Every dataset's shrunken delta_i: the masses of delta_i's normal conditional per draw
  (pairwise: ``region_masses.dataset_masses``; joint: each pair's normal from
  ``joint_program.delta_pair_conditional``, ``joint_posterior.dataset_masses``, averaged by
  ``joint_posterior.dataset_probabilities``, whose arguments are caught here to read the
  per-draw masses of the first 5 pairs), where it took the shares of the draws of delta_i.

Both estimators are read off the same draws, so their errors compare without a second fit.
Run from the repository root with a clone of one of the collections ``bench_real_pairs.py``
reads, or a CSV file of scores::

    python benchmarks/bench_conditional_masses.py /tmp/tutorial /tmp/amlb --seeds 2

One line per collection, model, pair and seed: P(left / rope / right) of the next dataset,
the errors of one draw and of the antithetic pair, their ratios, and the time the masses
took against one draw's (the same posterior, every pair of it, best of 5); for a pairwise
fit a second line: the datasets' error ratios (conditional over shares; median and range
over the datasets whose shares' error exceeds 0.001) and the largest difference between
the two estimates in units of the shares' error; for a joint fit one line: the same ratios'
median and quartiles over its datasets, first 5 pairs and regions.
"""
from __future__ import annotations

import argparse
import itertools
import time
import warnings

import numpy as np
from scipy import stats

import bayescomp as bc
from bayescomp.models import joint as joint_module, joint_posterior, region_masses
from bayescomp.models.joint_program import pair_vectors
from bayescomp.models.modes import probability_mcse
from bench_real_pairs import read_collection

#: the arguments of the joint fit's last joint_posterior.dataset_probabilities call
CAUGHT: dict = {}


def catching(function):
    def caught(*args, **kwargs):
        CAUGHT["args"] = args
        return function(*args, **kwargs)
    return caught


joint_module.dataset_probabilities = catching(joint_posterior.dataset_probabilities)


def report_joint_datasets(label: str, result, pairs: int = 5) -> None:
    """Print the joint fit's datasets' error ratios (conditional over shares) for its first
    ``pairs`` pairs, from the arguments of its dataset_probabilities call."""
    fit, data, scale, rotation, rope, _ = CAUGHT["args"]
    post = fit.posterior
    chains, draws = post.sizes["chain"], post.sizes["draw"]
    vectors = pair_vectors(data["d"] + 1)[1][:pairs]
    masses = joint_posterior.dataset_masses(fit, data, scale, rotation, rope, slice(None),
                                            vectors)
    masses = masses.reshape((chains, draws) + masses.shape[1:])     # chain, draw, n, pair, 3
    shares = rope.indicators(result.idata.posterior["delta"].values[..., :len(vectors)])
    ratios = []
    for i in range(masses.shape[2]):
        for p in range(len(vectors)):
            e_masses = probability_mcse(masses[:, :, i, p])
            e_shares = probability_mcse(shares[:, :, i, p])
            ratios.extend((e_masses / e_shares)[e_shares > 1e-3].tolist())
    print(f"{label} datasets: error ratio median {np.median(ratios):.2f}, quartiles "
          f"{np.quantile(ratios, 0.25):.2f}-{np.quantile(ratios, 0.75):.2f}, range "
          f"{min(ratios):.2f}-{max(ratios):.2f} ({len(ratios)} dataset, pair and region)",
          flush=True)


def one_draw(post, rope, joint: bool) -> np.ndarray:
    """The replaced estimator: the masses at the drawn delta0 alone."""
    nu = post["nu"].values[..., None] if joint else post["nu"].values
    scale = post["population_sd"].values if joint else post["sigma0"].values
    return rope.probabilities(stats.t(nu, loc=post["delta0"].values, scale=scale))


def best_of(function, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def report_datasets(label: str, post, rope) -> None:
    """Print the datasets' error ratios of a pairwise fit's ``post``."""
    masses = region_masses.dataset_masses(post, rope)          # chain, draw, dataset, 3
    shares = rope.indicators(post["delta"].values)
    ratios, gaps = [[], [], []], []
    for i in range(masses.shape[2]):
        e_masses, e_shares = probability_mcse(masses[:, :, i]), probability_mcse(shares[:, :, i])
        for region in range(3):
            if e_shares[region] > 1e-3:
                ratios[region].append(e_masses[region] / e_shares[region])
                gaps.append(abs(masses[:, :, i, region].mean() - shares[:, :, i, region].mean())
                            / e_shares[region])
    text = "; ".join(f"{name} {np.median(r):.2f} ({min(r):.2f}-{max(r):.2f}, {len(r)} datasets)"
                     for name, r in zip(("P(left)", "P(rope)", "P(right)"), ratios) if r)
    print(f"{label} datasets: error ratio, median (range): {text}; largest difference "
          f"{max(gaps, default=0):.1f} shares' errors", flush=True)


def report(label: str, post, rope, joint: bool) -> None:
    """Print one line per pair of ``post`` (the joint model's pairs, or one pairwise fit)."""
    masses_of = joint_posterior.next_dataset_masses if joint else region_masses.next_dataset_masses
    now, before = masses_of(post, rope), one_draw(post, rope, joint)
    seconds = best_of(lambda: masses_of(post, rope)), best_of(lambda: one_draw(post, rope, joint))
    pairs = post["pair"].values if joint else [label]
    for p, pair in enumerate(pairs):
        m_now, m_before = (m[..., p, :] if joint else m for m in (now, before))
        e_now, e_before = probability_mcse(m_now), probability_mcse(m_before)
        print(f"{label if not joint else label + ' ' + str(pair)}: "
              f"P {np.round(m_now.reshape(-1, 3).mean(axis=0), 4)} "
              f"one draw e {np.round(e_before, 5)}, antithetic e {np.round(e_now, 5)}, "
              f"ratio {np.round(e_now / e_before, 2)}; masses of all pairs in "
              f"{1e3 * seconds[0]:.1f} ms against {1e3 * seconds[1]:.1f} ms", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", nargs="+", help="clones or CSV files")
    parser.add_argument("--seeds", type=int, default=1, help="fitting seeds 1..N")
    parser.add_argument("--pairs", type=int, default=None, help="the first N pairs only")
    parser.add_argument("--no-joint", action="store_true", help="the pairwise fits only")
    args = parser.parse_args(argv)
    for source in args.collections:
        scores = read_collection(source)
        pairs = list(itertools.combinations(scores.algorithms, 2))[:args.pairs]
        for seed in range(1, args.seeds + 1):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for first, second in pairs:
                    result = bc.hierarchical(scores, first, second, rope=0.01, seed=seed,
                                             baselines=False)
                    label = f"{source} pairwise {first} - {second} seed {seed}"
                    report(label, result.idata.posterior, result.rope, joint=False)
                    report_datasets(label, result.idata.posterior, result.rope)
                if not args.no_joint:
                    result = bc.compare_many(scores, rope=0.01, seed=seed)
                    report(f"{source} joint seed {seed}", result.idata.posterior,
                           result.rope, joint=True)
                    report_joint_datasets(f"{source} joint seed {seed}", result)


if __name__ == "__main__":
    main()
