"""The scores' resolution (bayescomp.data.resolution): known steps of accuracies on test sets
of known sizes, and the same floors in a pair's fit and a joint fit."""
import warnings

import numpy as np
import pytest

import bayescomp as bc
from bayescomp.data.resolution import score_step, steps
from bayescomp.exceptions import ConstantDifferencesWarning
from bayescomp.models import hierarchical_program, joint_program

# 4-fold collections draw the few-scores warning: told elsewhere (tests/test_data.py)
pytestmark = pytest.mark.filterwarnings("ignore::bayescomp.exceptions.InputWarning")


def accuracies(rng, algorithms: int, test_sizes, level: float = 0.8) -> np.ndarray:
    """values[algorithm, split] = correct / n_test of split j, from binomial counts."""
    return np.array([[rng.binomial(n, level) / n for n in test_sizes]
                     for _ in range(algorithms)])


def test_the_step_is_one_test_case_where_folds_differ_in_size():
    """Folds of 342, 342, 342 and 343 cases (1369 rows, 4-fold): scores of different folds
    are multiples of different steps, and their gaps can be far below either; the gaps
    within a fold are not. Every dataset's step is 1/343 or 1/342."""
    rng = np.random.default_rng(1)
    sizes = [342, 342, 342, 343]
    found, across = [], []
    for _ in range(20):
        values = accuracies(rng, 6, sizes)
        found.append(score_step(values))
        across.append(np.diff(np.unique(values)).min())
    assert np.all((np.array(found) > 1 / 343 - 1e-12) & (np.array(found) < 1 / 342 + 1e-12))
    # what the smallest gap between any two scores gives instead: under a quarter of a step
    # on every one of these datasets (a floor four times too small)
    assert max(across) < 0.25 / 343


def test_two_algorithms_take_the_smallest_gap_of_any_two_scores():
    """With two algorithms the only gap within a split is their difference, many steps on
    consistent differences: the step is then the smallest gap between any two distinct
    scores, as percentages too (100 times the step)."""
    values = np.array([[0.80, 0.82, 0.81, 0.80], [0.70, 0.71, 0.73, 0.70]])
    assert score_step(values) == pytest.approx(0.01)
    assert score_step(100 * values) == pytest.approx(1.0)
    # floating-point noise is no step: 0.7 + 0.02 and 0.72
    assert score_step(np.array([[0.7 + 0.02, 0.75], [0.72, 0.75]])) == pytest.approx(0.03)


def test_a_dataset_of_one_number_takes_the_median_step():
    """Every score 1.0 (every algorithm perfect on every fold): no step of its own; it takes
    the median of the other datasets' (the smallest would make that dataset's noise known
    to the finest step of the collection)."""
    perfect = np.ones((3, 4))
    assert np.isnan(score_step(perfect))
    others = [np.array([[0.5, 0.5 + q, 0.5 + 3 * q, 0.5], [0.5, 0.5, 0.5 + q, 0.5 + 2 * q],
                        [0.5, 0.5 + 2 * q, 0.5, 0.5]]) for q in (0.01, 0.02, 0.05)]
    scores = bc.from_arrays({"a": [perfect[0]] + [o[0] for o in others],
                             "b": [perfect[1]] + [o[1] for o in others],
                             "c": [perfect[2]] + [o[2] for o in others]}, n_folds=4)
    np.testing.assert_allclose(steps(scores.datasets), [0.02, 0.01, 0.02, 0.05])


def test_a_pair_and_a_joint_fit_share_every_datasets_floor():
    """The step is the dataset's: narrowing the scores to a pair keeps it, and the pairwise
    and joint models' floors (resolution / sqrt(12)) are the same on every dataset, also
    where the pair scores 1.0 on every fold and only the third algorithm tells the step."""
    rng = np.random.default_rng(2)
    sizes = [[40, 40, 40, 40], [342, 342, 342, 343], [25, 25, 25, 26]]
    tables = [accuracies(rng, 3, s) for s in sizes]
    tables[0][:2] = 1.0                     # a and b perfect on the first dataset
    scores = bc.from_arrays({name: [t[a] for t in tables] for a, name in enumerate("abc")},
                            n_folds=4)
    pair = scores.subset(algorithms=["a", "b"])
    assert [d.step for d in pair.datasets] == [d.step for d in scores.datasets]
    assert scores.datasets[0].step == pytest.approx(1 / 40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantDifferencesWarning)
        pairwise, pair_scale = hierarchical_program.prepare(pair, "a", "b", bc.PRIORS["paper"])
        joint, joint_scale = joint_program.prepare(scores, bc.PRIORS["paper"])
    expected = np.array([d.step for d in scores.datasets]) / np.sqrt(12)
    np.testing.assert_allclose(np.array(pairwise["sigma_lower"]) * pair_scale, expected)
    np.testing.assert_allclose(joint["floor_sd"] * joint_scale, expected)
