"""The scores' resolution (bayescomp.data.resolution): known steps of accuracies on test sets
of known sizes, and the same floors in a pair's fit and a joint fit."""
import warnings

import numpy as np
import pytest

import bayescomp as bc
from bayescomp.data.resolution import common_steps, score_step, steps
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


def test_gaps_of_two_and_three_cases_give_one_case():
    """Three algorithms on 5 x 2 folds of 313 test cases (balance, 625 rows): within a fold
    the smallest gap is often 2 or more cases; their common step is 1 / 313 on every
    dataset. Percentages rounded to 2 decimals share 0.01, far below their step (100 / 313),
    and accuracies on 4000 cases written to 4 decimals share their last decimal: the
    smallest gap is kept; so are continuous scores'."""
    rng = np.random.default_rng(4)
    smallest, found = [], []
    for _ in range(20):
        values = accuracies(rng, 3, [313] * 10, level=0.85)
        found.append(score_step(values))
        within = np.diff(np.sort(values, axis=0), axis=0)
        smallest.append(within[within > 1e-9].min())
    np.testing.assert_allclose(found, 1 / 313, rtol=1e-9)
    assert max(smallest) >= 2 / 313 - 1e-12        # the smallest gap alone: 2 cases or more
    rounded = np.round(100 * np.array([[291, 280, 270], [285, 290, 271], [279, 279, 266]])
                       / 313, 2)
    assert score_step(rounded) == pytest.approx(np.diff(np.sort(rounded, axis=0), axis=0)
                                                .min())
    # 3400, 3402 and 3405 cases of 4000 (gaps of 2 and 3 cases): written in full, 1 / 4000;
    # written to 4 decimals (0.85, 0.8505, 0.8512), gaps of 5 and 7 units of 0.0001 share
    # 0.0001, the rounding's: the smallest gap is kept
    cases = np.array([[3400], [3402], [3405]])
    assert score_step(cases / 4000) == pytest.approx(1 / 4000)
    written = np.round(cases / 4000, 4)
    assert score_step(written) == pytest.approx(np.diff(np.sort(written, axis=0), axis=0).min())
    # on 500 cases, 3 decimals are exact: gaps of 2 and 3 cases share 0.002, two units, the step
    assert score_step(np.round(np.array([[400], [402], [405]]) / 500, 3)) == pytest.approx(0.002)
    continuous = rng.uniform(0.8, 0.9, (4, 6))
    within = np.diff(np.sort(continuous, axis=0), axis=0)
    assert score_step(continuous) == within.min()


def test_every_split_gets_its_own_common_step():
    """Splits read at once, each its own answer: gaps of 2 and 3 cases of 313 (1 / 313), of
    4 and 6 cases of 200 (2 / 200: their common step), of 5 and 7 cases of 400, of 9 and 20
    cases of 500 (1 / 9 of the smallest gap, below MULTIPLE's eighth: the smallest gap
    stands); a gap between equal scores (0) is no gap."""
    gaps = np.array([[2 / 313, 4 / 200, 5 / 400, 9 / 500],
                     [3 / 313, 6 / 200, 7 / 400, 20 / 500],
                     [0.0, 0.0, 0.0, 0.0]])
    distinct = gaps > 0
    np.testing.assert_allclose(common_steps(gaps, distinct), [1 / 313, 2 / 200, 1 / 400, 9 / 500],
                               rtol=1e-9)


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


def three_on_ragged_folds(seed: int = 3):
    """Accuracies of x, y and z on 6 datasets of 10 folds, every third fold one test case
    larger (41 and 40 cases): the pair's scores alone give a step of a fraction of 1/n
    (gaps across folds of different sizes), all three algorithms' give 1/n."""
    rng = np.random.default_rng(seed)
    sizes = [[n + (j % 3 == 0) for j in range(10)] for n in (40, 25, 60, 33, 50, 80)]
    tables = [accuracies(rng, 3, s, level) for s, level in zip(sizes, rng.uniform(0.7, 0.9, 6))]
    return bc.from_arrays({name: [t[a] for t in tables] for a, name in enumerate("xyz")},
                          n_folds=10), sizes


@pytest.mark.parametrize("layout", ["long", "wide"])
def test_reading_a_pair_of_a_file_keeps_every_datasets_step(tmp_path, layout):
    """The step is read from every algorithm of the file, the ones not asked for too (z's
    missing score on one dataset makes no gap and is not checked): a pair read from the
    file has the steps of the whole file, 1/(n+1) to 1/n, where the pair's own scores
    give less than half of that."""
    scores, sizes = three_on_ragged_folds()
    frame = scores.to_frame()
    frame.loc[(frame.algorithm == "z") & (frame.dataset == "2") & (frame.fold == 3),
              "score"] = np.nan
    if layout == "wide":
        frame = frame.pivot(index=["dataset", "run", "fold"], columns="algorithm",
                            values="score").reset_index()
    path = tmp_path / "three.csv"
    frame.to_csv(path, index=False)
    pair = bc.read_csv(path, algorithms=["y", "x"], n_folds=10)
    found = np.array([d.step for d in pair.datasets])
    np.testing.assert_allclose(found, [d.step for d in scores.datasets], rtol=1e-12)
    smallest = np.array([1 / max(s) for s in sizes])
    largest = np.array([1 / min(s) for s in sizes])
    assert np.all((found > smallest - 1e-12) & (found < largest + 1e-12))
    own = np.array([score_step(d.values) for d in pair.datasets])
    assert np.all(own < 0.5 * found)


@pytest.mark.stan
def test_compare_all_pairs_and_the_api_give_a_pair_the_same_numbers(tmp_path, capsys):
    """One question, one answer: ``compare`` reads the pair's columns, ``all-pairs`` the
    three, the API narrows a Scores of three; all fit the same floors, so with one seed the
    pair's population and next-dataset probabilities are the same to the last digit."""
    import json

    from bayescomp.cli.main import main

    scores, _ = three_on_ragged_folds()
    path = tmp_path / "three.csv"
    scores.to_frame().to_csv(path, index=False)

    def document(*args):
        target = tmp_path / "out.json"
        assert main([*args, str(path), "--seed", "1", "--json", str(target)]) == 0
        capsys.readouterr()
        return json.loads(target.read_text())

    compared = document("compare", "--first", "x", "--second", "y")["comparison"]
    pair, = [p for p in document("all-pairs")["all_pairs"]["pairs"]
             if (p["first"], p["second"]) == ("x", "y")]
    direct = bc.hierarchical(scores, "x", "y", seed=1)
    for scope, estimate in (("population", direct.population),
                            ("next_dataset", direct.next_dataset)):
        expected = dict(zip(estimate.labels, estimate.probabilities))
        assert compared[scope]["verdict"]["probabilities"] == pytest.approx(expected, abs=1e-12)
        assert pair[scope]["probabilities"] == pytest.approx(expected, abs=1e-12)


def sparse_dense_same():
    """a, b and c on 30-case test sets (step 1/30), 10 x 10 folds, rho 0.1: a - b differs by
    one case on 1 fold of 100 ("sparse"), on 30 ("dense"), on none ("same"); c differs from
    both by several cases on every fold."""
    b = (20 + np.arange(100) % 5) / 30
    sparse, dense = b.copy(), b.copy()
    sparse[0] += 1 / 30
    dense[:30] += 1 / 30
    c = b + (np.arange(100) * 7 % 11) / 30
    return bc.from_arrays({"a": [sparse, dense, b], "b": [b, b, b], "c": [c, c, c]},
                          rho=0.1, datasets=["sparse", "dense", "same"])


def test_the_warnings_name_datasets_whose_folds_alone_put_the_noise_below_the_floor():
    """Accuracies on 30 test cases (step 1/30, floor 1/(30 sqrt(12)) = 0.00962), 10 x 10
    folds, rho 0.1: where a and b differ by one case on 1 fold of 100, sigma_i's mode from
    the folds alone is sqrt(ss / (0.9 x 99)) = 0.00350 (ss = (1/30)^2 x 0.99), below the floor;
    on 30 folds of 100 it is 0.0161 (ss = 30 (1/30)^2 x 0.7), above it; on none the dataset is
    constant. The pairwise warning names the first and the last, not the second, and the
    floor is above the first's mode as it says; the joint model's, from its own pass over
    every pair, names the same datasets for a - b and none for c, whose differences from
    both vary by several cases on every fold."""
    scores = sparse_dense_same()
    named = ("is constant on dataset(s) ['same'] and has folds that alone would put its "
             "noise below the floor on dataset(s) ['sparse']; ")
    with pytest.warns(ConstantDifferencesWarning) as caught:
        data, scale = hierarchical_program.prepare(scores, "a", "b", bc.PRIORS["paper"])
    assert [str(w.message) for w in caught] == [
        f"a - b {named}there sigma_i is bounded below by the floor, the scores' resolution "
        "/ sqrt(12) (see bayescomp.hierarchical)"]
    floor = np.array(data["sigma_lower"]) * scale
    np.testing.assert_allclose(floor, 1 / 30 / np.sqrt(12))
    alone = np.sqrt(np.array(data["ss"]) * scale ** 2 / (0.9 * 99))
    np.testing.assert_allclose(alone[:2], [np.sqrt((1 / 30) ** 2 * 0.99 / (0.9 * 99)),
                                           np.sqrt(30 * (1 / 30) ** 2 * 0.7 / (0.9 * 99))])
    assert alone[0] < floor[0] < alone[1]
    with pytest.warns(ConstantDifferencesWarning) as caught:
        joint_program.prepare(scores, bc.PRIORS["paper"])
    assert [str(w.message) for w in caught] == [
        f"a - b {named}the joint model's noise there is bounded below by the scores' "
        "resolution / sqrt(12) (see bayescomp.compare_many)"]


@pytest.mark.stan
def test_the_result_holds_the_datasets_the_floor_sets(stan_backend):
    """The collection above fitted: ``datasets.floored`` marks the constant and the sparse
    dataset, not the dense one (the warning's datasets, by the arithmetic of the test above),
    and the summary, the report's facts and the JSON say so."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")    # the warning is the test above's
        result = bc.hierarchical(sparse_dense_same(), "a", "b", seed=1, baselines=False,
                                 backend=stan_backend)
    assert result.datasets["floored"].tolist() == [True, False, True]
    line = ("sigma_i set by the floor (the scores' resolution / sqrt(12)), not by the folds, "
            "on 2 dataset(s): sparse, same")
    assert line in result.summary() and line in result.to_markdown()
    assert [d["floored"] for d in result.to_dict()["datasets"]] == [True, False, True]


@pytest.mark.stan
def test_the_joint_result_holds_each_pairs_floored_datasets(stan_backend):
    """The same collection in one joint fit: ``datasets.floored`` marks a - b's constant
    and sparse datasets, as the pairwise result does, and no dataset of a - c or b - c
    (their differences vary by several cases on every fold); the summary, the report's facts
    and the JSON name them per pair, and so does a paper's report of the same fit."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")    # the warning is the test above's
        result = bc.compare_many(sparse_dense_same(), seed=1, backend=stan_backend)
        paper = bc.paper_analysis(sparse_dense_same(), seed=1, prior_sensitivity=False,
                                  backend=stan_backend)
    frame = result.datasets
    flags = {pair: frame["floored"][(frame["first"] == pair[0])
                                    & (frame["second"] == pair[1])].tolist()
             for pair in (("a", "b"), ("a", "c"), ("b", "c"))}
    assert flags == {("a", "b"): [True, False, True], ("a", "c"): [False] * 3,
                     ("b", "c"): [False] * 3}
    line = ("a - b: noise set by the floor (the scores' resolution / sqrt(12)), not by the "
            "splits, on 2 dataset(s): sparse, same")
    assert line in result.summary() and line in result.to_markdown()
    assert line in paper.summary() and line in paper.to_markdown()
    floored = {("a", "b"): ["sparse", "same"], ("a", "c"): [], ("b", "c"): []}
    for joint in (result.to_dict(), paper.to_dict()["joint"]):
        assert {(p["first"], p["second"]): p["floored"] for p in joint["pairs"]} == floored
