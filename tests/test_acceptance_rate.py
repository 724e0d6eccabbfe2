"""NUTS's target acceptance rate by the number of datasets, against the leapfrog's error law."""
import warnings

import numpy as np
import pytest

import bayescomp as bc
from bayescomp.models.hierarchical_program import ACCEPTANCE_SIZE, size_adapt_delta
from bayescomp.validation.simulate import benchmark_collection


def test_the_target_holds_one_minus_the_acceptance_over_root_size_from_54_datasets():
    assert ACCEPTANCE_SIZE == 54
    # at and below the size 0.95 was chosen at, 0.95
    assert [size_adapt_delta(q) for q in (1, 2, 10, 54)] == [0.95] * 4
    # above it, 1 - a grows as sqrt(q) (the energy error's spread, sqrt(d) step^2, at a
    # fixed step): four times the datasets, twice the rejection
    assert size_adapt_delta(4 * 54) == pytest.approx(0.90, abs=1e-15)
    for q in (55, 100, 132, 400, 863):
        assert (1 - size_adapt_delta(q)) / np.sqrt(q) == pytest.approx(0.05 / np.sqrt(54),
                                                                       rel=1e-14)
    # never below Stan's default: reached at 16 times 54 datasets
    assert [size_adapt_delta(q) for q in (16 * 54, 1000, 10 ** 6)] == [0.8] * 3
    assert isinstance(size_adapt_delta(400), float)


@pytest.mark.stan
def test_the_step_at_216_datasets_is_the_step_at_54():
    # The premise, on the simulated easy pair: at a fixed target the adapted step falls as
    # the dimension to the -1/4, (433 / 109)^(-1/4) = 0.71 from 54 to 216 datasets; at the
    # size's target (0.90) it stays where 0.95 puts it at 54, and against 0.95 at 216 it is
    # sqrt(0.10 / 0.05) = 1.41 times as large. Measured on fitting seeds 1-3 (the mean step of
    # 4 chains over the 54-dataset fit's): 0.90-1.05 at 0.90, 0.68-0.79 at 0.95, and the
    # two steps at 216 1.22-1.41 apart.
    def step(q, **settings):
        scores = benchmark_collection(q, seed=1, sigma0=0.02).scores
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = bc.hierarchical(scores, "a", "b", seed=2, baselines=False, **settings)
        return result, float(result.idata.sample_stats["step_size"].mean())

    small, small_step = step(54)
    large, large_step = step(216)
    _, fixed_step = step(216, adapt_delta=0.95)
    assert small.settings["adapt_delta"] == 0.95
    assert large.settings["adapt_delta"] == pytest.approx(0.90, abs=1e-15)
    assert large.attempts[0]["adapt_delta"] == large.settings["adapt_delta"]
    assert 0.8 < large_step / small_step < 1.25
    assert fixed_step / small_step < 0.85
    assert large_step / fixed_step > 1.1
