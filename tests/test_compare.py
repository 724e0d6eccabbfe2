"""compare_all: every pair against the single-pair functions, corrections by hand, parallel runs."""
import sys
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest

import bayescomp as bc
from bayescomp.models.compare import AllPairsResult, compare_all

PAIRS = [("x", "y"), ("x", "z"), ("y", "z")]


@pytest.fixture(scope="module")
def one_dataset():
    """x beats y and z by 0.05; y and z are practically equivalent."""
    rng = np.random.default_rng(0)
    base = rng.uniform(0.7, 0.8, 10)
    return bc.from_arrays({"x": base + 0.05 + rng.normal(0, 0.01, 10),
                           "y": base + rng.normal(0, 0.01, 10),
                           "z": base + rng.normal(0, 0.01, 10)}, rho=0.1)


@pytest.fixture(scope="module")
def single(one_dataset):
    return compare_all(one_dataset, rope=0.01, seed=1)


# --- one dataset: the correlated t-test, no Stan ----------------------------------------

def test_correlated_rows_equal_direct_tests(single, one_dataset):
    table = single.table
    assert isinstance(single, AllPairsResult) and single.method == "correlated"
    assert list(zip(table["first"], table["second"])) == PAIRS
    for row in table.itertuples():
        direct = bc.correlated_ttest(one_dataset, row.first, row.second, rope=0.01)
        assert [row.dataset_p_left, row.dataset_p_rope, row.dataset_p_right] == \
            list(direct.probabilities)
        assert row.p_value == direct.nb_p_value and row.test == "nadeau-bengio"
        assert row.dataset_decision == direct.decision()
        assert row.reliable and "population_p_right" not in single.table
        assert single.results[(row.first, row.second)].probabilities.tolist() == \
            direct.probabilities.tolist()
    assert table.dataset_decision.tolist() == ["x better", "x better", "equivalent"]


def test_probability_matrix_positions(single):
    table = single.table.set_index(["first", "second"])
    better = single.probability_matrix()
    assert list(better.index) == list(better.columns) == ["x", "y", "z"]
    assert np.isnan(np.diag(better.to_numpy())).all()
    for first, second in PAIRS:
        assert better.loc[first, second] == table.loc[(first, second), "dataset_p_right"]
        assert better.loc[second, first] == table.loc[(first, second), "dataset_p_left"]
    # known answer: x is better than y (row x, column y), not the other way round
    assert better.loc["x", "y"] > 0.99 and better.loc["y", "x"] < 0.01
    rope = single.probability_matrix("rope")
    assert np.isnan(np.diag(rope.to_numpy())).all()
    assert rope.loc["y", "z"] == rope.loc["z", "y"] == table.loc[("y", "z"), "dataset_p_rope"] > 0.9
    pd.testing.assert_frame_equal(rope, rope.T)
    with pytest.raises(ValueError, match="kind"):
        single.probability_matrix("worse")
    with pytest.raises(ValueError, match="scope"):   # one dataset has no population
        single.probability_matrix(scope="population")


@pytest.mark.parametrize("correction", ["holm", "bonferroni", None])
def test_table_correction_by_hand(one_dataset, correction):
    table = compare_all(one_dataset, rope=0.01, seed=1, correction=correction).table
    p = table.p_value.to_numpy()
    m = len(p)
    if correction == "bonferroni":
        expected = np.minimum(1, m * p)
    elif correction == "holm":
        expected, running = np.empty(m), 0.0
        for rank, i in enumerate(np.argsort(p)):
            running = max(running, min(1.0, (m - rank) * p[i]))
            expected[i] = running
    else:
        expected = p
    np.testing.assert_allclose(table.p_value_corrected, expected, rtol=1e-12)
    assert (table.reject == (expected <= 0.05)).all()
    assert table.reject.tolist()[:2] == [True, True] and not table.reject.iloc[2]


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_same_results_whatever_n_jobs(one_dataset, single, backend):
    with joblib.parallel_backend(backend, n_jobs=2):
        parallel = compare_all(one_dataset, rope=0.01, seed=1)
    pd.testing.assert_frame_equal(parallel.table, single.table)
    assert compare_all(one_dataset, rope=0.01, seed=1, n_jobs=2).table.equals(single.table)


def test_every_pair_has_the_users_seed(one_dataset, single):
    # the seed that reproduces a row with a single-pair call is the user's, in every row
    assert single.seed == 1 and single.table.seed.tolist() == [1, 1, 1]
    assert compare_all(one_dataset, rope=0.01, seed=2).table.seed.tolist() == [2, 2, 2]
    # None: one seed is drawn, once, and recorded in the result and every row
    drawn = compare_all(one_dataset, rope=0.01)
    assert isinstance(drawn.seed, int) and drawn.table.seed.tolist() == [drawn.seed] * 3
    assert drawn.to_dict()["seed"] == drawn.seed
    with pytest.raises(TypeError, match="seed must be an integer"):
        compare_all(one_dataset, rope=0.01, seed=np.random.SeedSequence(1))


def test_summary_frame_and_progress(single, one_dataset, capsys):
    assert "x better" in single.summary() and "holm" in str(single)
    frame = single.to_frame()
    frame.loc[0, "dataset_p_left"] = -1
    assert single.table.loc[0, "dataset_p_left"] >= 0
    compare_all(one_dataset, show_progress=True)
    assert capsys.readouterr().err.splitlines() == ["fit 1/3: x vs y", "fit 2/3: x vs z",
                                                    "fit 3/3: y vs z"]


def test_bad_arguments(one_dataset):
    with pytest.raises(ValueError, match="unknown method"):
        compare_all(one_dataset, method="bayes")
    with pytest.raises(ValueError, match="at least 2 algorithms"):
        compare_all(one_dataset.subset(algorithms=["x"]))
    with pytest.raises(ValueError, match="correction"):
        compare_all(one_dataset, correction="fdr")
    with pytest.raises(ValueError, match="at least 2 datasets"):
        compare_all(one_dataset, method="hierarchical")
    two = bc.concat([one_dataset, bc.from_arrays(
        {a: one_dataset.datasets[0].values[i] for i, a in enumerate("xyz")}, rho=0.1,
        datasets=["other"])])
    with pytest.raises(ValueError, match="one dataset"):
        compare_all(two, method="correlated")


def test_failure_names_the_pair():
    rng = np.random.default_rng(1)
    constant = np.full((5, 10), 0.8)  # a and b identical everywhere: nothing to compare
    scores = bc.from_arrays({"a": constant, "b": constant, "c": rng.uniform(0.7, 0.9, (5, 10))},
                            rho=0.1)
    with pytest.raises(ValueError, match="nothing to compare") as error:
        compare_all(scores, seed=3)
    assert "comparing a vs b" in "".join(error.value.__notes__)


# --- several datasets: the hierarchical model (Stan) -------------------------------------

SMALL = dict(chains=2, iter_warmup=300, iter_sampling=300)


@pytest.fixture(scope="module")
def collection():
    """Three algorithms on 5 simulated datasets: a - b from the model, c = b + noise."""
    rng = np.random.default_rng(0)
    sim = bc.simulate.collection(5, 10, delta0=0.02, seed=1).scores
    rows = {"a": [d.values[0] for d in sim.datasets], "b": [d.values[1] for d in sim.datasets],
            "c": [d.values[1] + rng.normal(0, 0.02, d.n_scores) for d in sim.datasets]}
    return bc.from_arrays(rows, rho=0.1)


@pytest.fixture(scope="module")
def serial(collection, stan_backend):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare_all(collection, rope=0.01, seed=5, backend=stan_backend, **SMALL)


@pytest.mark.stan
def test_hierarchical_row_equals_direct_fit(serial, collection, stan_backend):
    table = serial.table
    assert serial.method == "hierarchical" and (table.method == "hierarchical").all()
    row = table.iloc[2]
    assert (row["first"], row["second"]) == ("b", "c")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = bc.hierarchical(collection, "b", "c", rope=0.01, seed=5,
                                 backend=stan_backend, **SMALL)
    assert [row.next_dataset_p_left, row.next_dataset_p_rope, row.next_dataset_p_right] == \
        direct.next_dataset.probabilities.tolist()
    assert [row.population_p_left, row.population_p_rope, row.population_p_right] == \
        direct.population.probabilities.tolist()
    assert row.p_value == direct.baselines.wilcoxon.p_value and row.test == "wilcoxon"
    assert row.next_dataset_decision == direct.next_dataset.decision()
    assert row.population_decision == direct.population.decision()
    assert row.reliable == direct.reliable
    # the ESS the pair's probabilities rest on, as the direct fit reports it, in the table,
    # the summary and the JSON
    assert (row.ess_bulk, row.ess_tail) == (direct.settings["ess"]["bulk"],
                                            direct.settings["ess"]["tail"])
    from bayescomp.presentation.results.all_pairs import display_table

    assert display_table(serial)["ESS"].iloc[2] == round(min(row.ess_bulk, row.ess_tail))
    entry = serial.to_dict()["pairs"][2]
    assert entry["ess"] == {"target": 1000, "bulk": row.ess_bulk, "tail": row.ess_tail}
    better = serial.probability_matrix()   # the population's, by default
    assert better.loc["b", "c"] == row.population_p_right
    assert better.loc["c", "b"] == row.population_p_left
    better = serial.probability_matrix(scope="next_dataset")
    assert better.loc["b", "c"] == row.next_dataset_p_right
    assert better.loc["c", "b"] == row.next_dataset_p_left
    assert "hierarchical" in serial.summary()
    assert "The joint model of all 3 algorithms (bc.compare_many" in serial.summary()


@pytest.mark.stan
def test_cell_equals_hierarchical_with_the_users_seed(stan_backend):
    """A cell of compare_all is bc.hierarchical on that pair with the user's seed, number for
    number: the pair's seed depends neither on its position (the last of three pairs here)
    nor on the other algorithms (the direct fit sees all four, compare_all three)."""
    scores = bc.datasets.load_classifiers()
    options = dict(rope=0.01, seed=1, backend=stan_backend, **SMALL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = compare_all(scores.subset(algorithms=["logistic", "tree", "forest"]), **options)
        direct = bc.hierarchical(scores, "tree", "forest", **options)
    row = pairs.table.iloc[2]
    assert (row["first"], row["second"], row["seed"], pairs.seed) == ("tree", "forest", 1, 1)
    assert [row.population_p_left, row.population_p_rope, row.population_p_right] == \
        direct.population.probabilities.tolist()
    assert [row.next_dataset_p_left, row.next_dataset_p_rope, row.next_dataset_p_right] == \
        direct.next_dataset.probabilities.tolist()
    np.testing.assert_array_equal(pairs.results[("tree", "forest")].idata.posterior["delta0"],
                                  direct.idata.posterior["delta0"])
    assert row.p_value == direct.baselines.wilcoxon.p_value


@pytest.mark.stan
def test_hierarchical_in_threads_equals_serial(serial, collection, stan_backend):
    stdout, stderr, show = sys.stdout, sys.stderr, warnings._showwarnmsg
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        threaded = compare_all(collection, rope=0.01, seed=5, n_jobs=2, backend=stan_backend,
                               **SMALL)
    pd.testing.assert_frame_equal(threaded.table, serial.table)
    # pystan's quieting swaps sys.stdout/err process-wide; concurrent fits must not leak it
    assert sys.stdout is stdout and sys.stderr is stderr
    assert warnings._showwarnmsg is show  # the per-thread recorder is gone


@pytest.mark.stan
@pytest.mark.parametrize("backend", ["sequential", "threading"])
def test_sampling_warnings_reach_the_caller_naming_the_pair(collection, stan_backend, backend):
    # 2 x 30 draws without retries fail on every seed: ArviZ caps the ESS of 60 draws at
    # 60 log10(60) = 107, below the 200 required
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with joblib.parallel_backend(backend, n_jobs=2):
            result = compare_all(collection, seed=1, backend=stan_backend, chains=2,
                                 iter_warmup=30, iter_sampling=30, baselines=False, retries=0,
                                 quadrature=False)
    sampling = [str(w.message) for w in caught if issubclass(w.category, bc.SamplingWarning)]
    for first, second in [("a", "b"), ("a", "c"), ("b", "c")]:
        assert any(m.startswith(f"{first} vs {second}: ") for m in sampling), sampling
    assert not result.table.reliable.any() and result.table.p_value.isna().all()
    assert "sampling problems, a vs b" in result.summary()


@pytest.mark.stan
@pytest.mark.parametrize("processes", [False, True], ids=["threads", "processes"])
def test_dask_cluster_equals_serial(serial, collection, stan_backend, processes):
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed not installed: pip install 'dask[distributed]'")
    import dask

    # pystan starts a process pool, which daemonic processes (dask's default) cannot
    with dask.config.set({"distributed.worker.daemon": False}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=processes,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster), joblib.parallel_backend("dask"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        remote = compare_all(collection, rope=0.01, seed=5, backend=stan_backend, **SMALL)
    pd.testing.assert_frame_equal(remote.table, serial.table)
    assert remote.results[("a", "b")].next_dataset.probabilities.tolist() == \
        serial.results[("a", "b")].next_dataset.probabilities.tolist()
