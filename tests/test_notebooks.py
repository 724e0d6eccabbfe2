"""The example notebooks in notebooks/ run from top to bottom and print what the library computes.

Each notebook is executed with nbclient, on the Python that runs the tests (a private kernel
spec points at ``sys.executable``; a last cell added here checks it), in a temporary working
directory so that nothing is written into the repository. No cell may raise, and the
machine-readable line ``RESULT {...}`` of the notebook's last cell must equal the library
called here directly on the same data. The notebooks themselves assert nothing and are kept
in the repository without outputs. Their one source is the percent-format ``.py`` file beside
each ``.ipynb``: the committed ``.ipynb`` must equal what ``notebooks/build_notebooks.py``
builds from it, and every source is built. The sources also run as plain Python scripts: they
compile without IPython's syntax and use no name they do not define (``display`` and
``get_ipython`` exist only in a kernel).
"""
import builtins
import json
import os
import symtable
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import bayescomp as bc

_NEEDS = ("executing the example notebooks needs nbformat, nbclient and ipykernel: "
          "`pip install '.[notebooks]'` (also in the test extra)")
nbformat = pytest.importorskip("nbformat", reason=_NEEDS)
nbclient = pytest.importorskip("nbclient", reason=_NEEDS)
pytest.importorskip("ipykernel", reason=_NEEDS)

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
KERNEL = "bayescomp-notebook-test"
CELL_TIMEOUT = 300  # seconds per cell; a whole notebook takes well under a minute



def _builder():
    """notebooks/build_notebooks.py as a module (notebooks/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_notebooks",
                                                  NOTEBOOKS / "build_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_notebooks_equal_their_sources():
    """Each .ipynb is the build of its .py, byte for byte: edit the .py, run the builder."""
    builder = _builder()
    for name in builder.NOTEBOOKS:
        built = nbformat.writes(builder.build(NOTEBOOKS / f"{name}.py")) + "\n"
        committed = (NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8")
        assert committed == built, (f"notebooks/{name}.ipynb differs from its source {name}.py: "
                                    "run python notebooks/build_notebooks.py notebooks")


def test_every_source_is_built():
    """No notebook is left without its .ipynb: the builder's list is every NN_*.py source."""
    sources = sorted(path.stem for path in NOTEBOOKS.glob("[0-9][0-9]_*.py"))
    assert list(_builder().NOTEBOOKS) == sources and len(sources) == 5


def undefined_names(source: str, filename: str) -> list:
    """Names a module reads, at its top level or as a global inside its functions, that it
    neither assigns, imports, defines nor finds among the builtins: a NameError in plain
    Python (``compile`` already refuses IPython's magics and shell escapes)."""
    top = symtable.symtable(source, filename, "exec")
    known = set(dir(builtins)) | {symbol.get_name() for symbol in top.get_symbols()
                                  if symbol.is_assigned() or symbol.is_imported()
                                  or symbol.is_namespace()}
    missing, tables = set(), [top]
    while tables:
        table = tables.pop()
        tables += table.get_children()
        missing |= {symbol.get_name() for symbol in table.get_symbols()
                    if (symbol.is_referenced() if table is top else symbol.is_global())
                    and symbol.get_name() not in known}
    return sorted(missing)


def test_undefined_names_finds_what_plain_python_lacks():
    """The checker on snippets whose answer is known: IPython's display, a name used in a
    function and never defined, a comprehension's source; defined names pass."""
    assert undefined_names("import pandas as pd\ndisplay(pd.DataFrame())\n", "a") == ["display"]
    assert undefined_names("def f():\n    return g(x)\nx = 1\n", "b") == ["g"]
    assert undefined_names("[y for y in z]\n", "c") == ["z"]
    assert undefined_names("import os.path\nclass A:\n    n = os.sep\nfor i in range(2):\n"
                           "    print(A.n, i, __name__)\n", "d") == []
    with pytest.raises(SyntaxError):
        compile("%matplotlib inline\n", "e", "exec")


def test_sources_run_as_plain_python():
    """Each source is a Python script as well as a notebook: it compiles, and every name it
    reads is its own or a builtin (``python notebooks/02_*.py`` stopped at ``display``)."""
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py")):
        source = path.read_text(encoding="utf-8")
        compile(source, str(path), "exec")
        assert undefined_names(source, str(path)) == [], path.name


def test_percent_format_round_trips():
    """Writing a notebook as percent format and reading it back gives the same cells."""
    builder = _builder()
    for name in builder.NOTEBOOKS:
        nb = builder.build(NOTEBOOKS / f"{name}.py")
        again = builder.read_percent(builder.write_percent(nb))
        assert [(c.cell_type, c.source) for c in again] == \
            [(c.cell_type, c.source) for c in nb.cells]


PROBE = ("import json, sys, bayescomp\n"
         "print('KERNEL ' + json.dumps({'executable': sys.executable, "
         "'bayescomp': bayescomp.__file__}))")


def _lines(nb, prefix):
    """Payloads of the stdout lines starting with ``prefix`` in the executed notebook."""
    found = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                found += [line[len(prefix):] for line in output["text"].splitlines()
                          if line.startswith(prefix)]
    return found


def _stderr(nb) -> str:
    return "".join(output["text"] for cell in nb.cells for output in cell.get("outputs", [])
                   if output.get("output_type") == "stream" and output.get("name") == "stderr")


def run_notebook(name, tmp_path, monkeypatch):
    """Execute notebooks/<name> in tmp_path and return (its RESULT payload, the executed notebook)."""
    path = NOTEBOOKS / name
    if not path.is_file():
        pytest.skip(f"{path} not found: the notebooks live in the source checkout, not the package")

    # A kernel spec of our own, so that the kernel is this very interpreter whatever
    # "python3" kernels the machine has; JUPYTER_PATH is searched before the user's dirs.
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "bayescomp tests", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))  # no history in the user's home
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend draws the figures
    # the kernel imports the bayescomp these tests import (installed, or the checkout)
    root = str(Path(bc.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))

    work = tmp_path / "work"
    work.mkdir()
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name=KERNEL,
                                     allow_errors=False,
                                     resources={"metadata": {"path": str(work)}})
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError, with the traceback, if a cell raised
    print(f"{name}: executed in {time.perf_counter() - start:.1f} s")

    errors = [output for cell in nb.cells for output in cell.get("outputs", [])
              if output.get("output_type") == "error"]
    assert not errors, errors
    assert "Traceback" not in _stderr(nb)
    kernel, = (json.loads(line) for line in _lines(nb, "KERNEL "))
    assert os.path.realpath(kernel["executable"]) == os.path.realpath(sys.executable)
    assert Path(kernel["bayescomp"]).resolve() == Path(bc.__file__).resolve()
    assert list(work.iterdir()) == [], "the notebook wrote files into its working directory"
    results = _lines(nb, "RESULT ")
    assert len(results) == 1, f"expected one RESULT line, got {results}"
    return json.loads(results[0]), nb


def test_01_grid_search_one_dataset(tmp_path, monkeypatch):
    pytest.importorskip("sklearn", reason="notebook 01 runs a scikit-learn grid search")
    from sklearn.datasets import make_moons
    from sklearn.model_selection import GridSearchCV, RepeatedStratifiedKFold
    from sklearn.svm import SVC

    got, _ = run_notebook("01_grid_search_one_dataset.ipynb", tmp_path, monkeypatch)

    # the same grid search, run here
    X, y = make_moons(noise=0.352, random_state=1, n_samples=100)
    grid = [{"kernel": ["linear"]}, {"kernel": ["poly"], "degree": [2, 3]}, {"kernel": ["rbf"]}]
    cv = RepeatedStratifiedKFold(n_splits=10, n_repeats=10, random_state=0)
    search = GridSearchCV(SVC(random_state=0), param_grid=grid, scoring="roc_auc", cv=cv).fit(X, y)
    names = [p["kernel"] + str(p.get("degree", "")) for p in search.cv_results_["params"]]
    scores = bc.from_cv_results(search, names=names, dataset="moons")
    order = np.argsort(search.cv_results_["rank_test_score"], kind="stable")

    # scikit-learn's example: RBF first, linear second
    assert (got["first"], got["second"]) == (names[order[0]], names[order[1]]) == ("rbf", "linear")
    expected = bc.correlated_ttest(scores, "rbf", "linear", rope=got["rope"])
    assert got["rope"] == 0.01
    np.testing.assert_allclose([got["p_left"], got["p_rope"], got["p_right"]],
                               expected.probabilities, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got["nb_p_value"], expected.nb_p_value, rtol=1e-12)


@pytest.mark.stan
def test_02_two_classifiers_many_datasets(tmp_path, monkeypatch, stan_backend):
    got, nb = run_notebook("02_two_classifiers_many_datasets.ipynb", tmp_path, monkeypatch)
    assert "SamplingWarning" not in _stderr(nb)  # the prose says the chains mixed

    scores = bc.datasets.load_classifiers()
    assert (got["first"], got["second"], got["rope"]) == ("forest", "tree", 0.01)
    expected = bc.hierarchical(scores, "forest", "tree", rope=got["rope"], seed=got["seed"])
    # same data, seed and settings: the same draws (Stan is reproducible under a seed)
    np.testing.assert_allclose(got["next"], expected.next_dataset.probabilities, rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        got["delta0"], expected.population.probabilities,
        rtol=0, atol=1e-9)
    np.testing.assert_allclose(got["delta0_mean"], expected.population.mean, rtol=1e-9)
    assert got["diagnostics_ok"] and expected.diagnostics.ok
    baseline = bc.baselines(scores, "forest", "tree", rope=got["rope"])
    assert got["wilcoxon_p"] == pytest.approx(baseline.wilcoxon.p_value, rel=1e-12)


@pytest.mark.stan
def test_03_cost_sensitive_choice(tmp_path, monkeypatch, stan_backend):
    got, nb = run_notebook("03_cost_sensitive_choice.ipynb", tmp_path, monkeypatch)
    assert "SamplingWarning" not in _stderr(nb)

    # the cost matrix the prose describes: c = 1, V = 5, a = 1
    assert got["costs"] == [[0, 0, 0], [6, 1, -4], [1, 1, -3]]
    assert got["decisions"] == ["keep logistic", "deploy forest", "A/B test first"]
    test = bc.correlated_ttest(bc.datasets.load_classifiers(), got["first"], got["second"],
                               dataset=got["dataset"], rope=got["rope"])
    assert (got["first"], got["second"], got["dataset"], got["rope"]) == \
        ("forest", "logistic", "moons_noisy", 0.01)
    np.testing.assert_allclose(got["probabilities"], test.probabilities, rtol=1e-12, atol=1e-15)
    decision = test.expected_costs(got["costs"], got["decisions"])
    np.testing.assert_allclose(got["expected_costs"], decision.expected_costs, rtol=1e-12,
                               atol=1e-12)
    assert got["best"] == decision.best == "deploy forest"


def _notebook_04_data():
    """The ten datasets and three estimators of notebook 04, built as the notebook builds them."""
    from sklearn.datasets import (load_breast_cancer, load_iris, load_wine, make_circles,
                                  make_classification, make_gaussian_quantiles, make_moons)
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    datasets = {
        "breast_cancer": load_breast_cancer(return_X_y=True),
        "wine": load_wine(return_X_y=True),
        "iris": load_iris(return_X_y=True),
        "moons": make_moons(n_samples=300, noise=0.3, random_state=0),
        "circles": make_circles(n_samples=300, noise=0.1, factor=0.5, random_state=0),
        "quantiles": make_gaussian_quantiles(n_samples=300, n_features=2, n_classes=2,
                                             random_state=0),
        "clf_informative": make_classification(n_samples=300, n_features=20, n_informative=5,
                                               n_redundant=2, random_state=0),
        "clf_noisy": make_classification(n_samples=300, n_features=10, n_informative=3,
                                         flip_y=0.2, class_sep=0.8, random_state=1),
        "clf_redundant": make_classification(n_samples=300, n_features=15, n_informative=3,
                                             n_redundant=10, random_state=2),
        "clf_3class": make_classification(n_samples=300, n_features=10, n_informative=4,
                                          n_classes=3, random_state=3),
    }
    estimators = {
        "naive_bayes": GaussianNB(),
        "logistic": make_pipeline(StandardScaler(), LogisticRegression()),
        "tree": DecisionTreeClassifier(max_depth=3, random_state=0),
    }
    return datasets, estimators


@pytest.mark.stan
def test_04_protocols_to_verdicts(tmp_path, monkeypatch, stan_backend):
    pytest.importorskip("sklearn", reason="notebook 04 runs scikit-learn estimators")
    from sklearn.base import clone
    from sklearn.model_selection import RepeatedStratifiedKFold, train_test_split

    from bayescomp import protocols
    from bayescomp.baselines import one_test_set, resampled_ttests
    from bayescomp.baselines.friedman import friedman_test

    got, nb = run_notebook("04_protocols_to_verdicts.ipynb", tmp_path, monkeypatch)
    assert "SamplingWarning" not in _stderr(nb)  # the prose says the chains mixed

    datasets, estimators = _notebook_04_data()
    assert (got["first"], got["second"], got["focus"], got["rope"], got["alpha"]) == \
        ("logistic", "tree", "wine", 0.01, 0.05)
    assert got["datasets"] == list(datasets)
    first, second, focus, rope, alpha = (got[k] for k in ("first", "second", "focus", "rope",
                                                          "alpha"))

    # protocol 1 (3 x stratified 10-fold) and the correlated t-test on the focus dataset
    cv = RepeatedStratifiedKFold(n_splits=10, n_repeats=3, random_state=0)
    scores = protocols.cross_validate_scores(estimators, datasets, cv=cv, scoring="accuracy")
    test = bc.correlated_ttest(scores, first, second, dataset=focus, rope=rope)
    np.testing.assert_allclose(got["ttest_probabilities"], test.probabilities, rtol=1e-12,
                               atol=1e-15)
    assert got["nb_p_value"] == pytest.approx(test.nb_p_value, rel=1e-12)
    assert test.decision() == "logistic better"  # the prose: the Bayesian verdict on wine

    # protocol 2 (5x2cv): Dietterich's t-test and Alpaydin's F-test on the focus dataset
    differences = protocols.as_5x2(protocols.five_by_two(estimators, datasets, random_state=0),
                                   first, second, focus)
    t_test = resampled_ttests.paired_ttest_5x2cv(differences, alpha=alpha)
    f_test = resampled_ttests.combined_ftest_5x2cv(differences, alpha=alpha)
    assert got["t_5x2"] == pytest.approx(t_test.statistic, rel=1e-12)
    assert got["t_5x2_p"] == pytest.approx(t_test.p_value, rel=1e-12)
    assert got["f_5x2"] == pytest.approx(f_test.statistic, rel=1e-12)
    assert got["f_5x2_p"] == pytest.approx(f_test.p_value, rel=1e-12)
    assert not t_test.significant and not f_test.significant  # the disagreement the prose explains

    # protocol 3: one held-out half of the focus dataset, McNemar and Cochran's Q
    X, y = datasets[focus]
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, stratify=y,
                                                        random_state=0)
    names = list(estimators)
    correct = one_test_set.correctness(y_test, *(clone(e).fit(X_train, y_train).predict(X_test)
                                              for e in estimators.values()))
    table = one_test_set.mcnemar_table(correct[:, names.index(first)],
                                    correct[:, names.index(second)])
    assert (got["mcnemar_b"], got["mcnemar_c"]) == (table[0, 1], table[1, 0])
    mcnemar = one_test_set.mcnemar_test(int(table[0, 1]), int(table[1, 0]), exact=True, alpha=alpha)
    assert got["mcnemar_exact_p"] == pytest.approx(mcnemar.p_value, rel=1e-12)
    assert mcnemar.significant
    cochran = one_test_set.cochran_q_test(correct, algorithms=names, alpha=alpha)
    assert got["cochran_q"] == pytest.approx(cochran.statistic, rel=1e-12)

    # across datasets, classical: Friedman, Nemenyi's CD, Holm-corrected Wilcoxon
    friedman = friedman_test(scores, alpha=alpha)
    assert got["friedman_chi2"] == pytest.approx(friedman.statistic, rel=1e-12)
    assert got["friedman_p"] == pytest.approx(friedman.p_value, rel=1e-12)
    np.testing.assert_allclose(got["average_ranks"], friedman.average_ranks, rtol=1e-12)
    assert got["critical_difference"] == pytest.approx(friedman.critical_difference, rel=1e-12)
    np.testing.assert_allclose(got["holm_p"], friedman.pairwise["holm_p"], rtol=1e-12)
    assert not friedman.significant  # "what a non-significant Friedman test does not say"
    # compare_all's frequentist column is the same Holm-corrected Wilcoxon test
    assert got["pairs"] == friedman.pairwise[["first", "second"]].values.tolist()
    np.testing.assert_allclose(got["pairs_p_value_corrected"], friedman.pairwise["holm_p"],
                               rtol=1e-12)

    # across datasets, Bayesian: the hierarchical model of the pair, same data, seed, settings
    assert got["fit"] == {"iter_warmup": 3000, "iter_sampling": 3000}
    hier = bc.hierarchical(scores, first, second, rope=rope, seed=got["seed"], **got["fit"])
    np.testing.assert_allclose(got["next"], hier.next_dataset.probabilities, rtol=0, atol=1e-9)
    # compare_all fits the pair with the same seed: its row is the single fit, number for number
    assert got["pair_next"] == got["next"]
    assert got["hierarchical_ok"] and hier.diagnostics.ok and got["pairs_ok"]
    assert hier.next_dataset.probabilities[1] < 0.1  # the prose: practical equivalence is improbable


def _notebook_05_data():
    """The scores of notebook 05: five classifiers, ten built-in datasets, 2 x 5-fold CV."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import RepeatedStratifiedKFold
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    from bayescomp.data.datasets.make_classifiers import load_dataset

    estimators = {
        "naive_bayes": GaussianNB(),
        "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        "knn": make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=7)),
        "tree": DecisionTreeClassifier(random_state=0),
        "forest": RandomForestClassifier(n_estimators=50, random_state=0, n_jobs=1),
    }
    names = ["iris", "wine", "breast_cancer", "clf_hard", "clf_label_noise", "clf_wide",
             "moons_noisy", "circles", "gaussian_quantiles", "hastie"]
    return bc.protocols.cross_validate_scores(
        estimators, {name: load_dataset(name) for name in names},
        cv=RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=0))


@pytest.mark.stan
def test_05_ranking_and_sensitivity(tmp_path, monkeypatch, stan_backend):
    pytest.importorskip("sklearn", reason="notebook 05 cross-validates scikit-learn models")
    got, nb = run_notebook("05_ranking_and_sensitivity.ipynb", tmp_path, monkeypatch)
    assert "SamplingWarning" not in _stderr(nb)

    scores = _notebook_05_data()
    assert got["algorithms"] == list(scores.algorithms) and got["datasets"] == list(
        scores.dataset_names)
    seed, fit = got["seed"], got["fit"]
    assert (seed, fit) == (2024, {"chains": 4, "iter_warmup": 500, "iter_sampling": 1000})

    # the ranking: the same scores, seed and settings give the same draws
    ranking = bc.rank_algorithms(scores, seed=seed, **fit)
    assert got["best"] == ranking.best
    np.testing.assert_allclose([got["p_best"][a] for a in scores.algorithms],
                               ranking.p_best[list(scores.algorithms)], rtol=0, atol=1e-12)

    # best against the runner-up: the notebook's pairwise fit, bc.hierarchical here and the
    # sensitivity analysis's "paper" prior are one fit (one seed), number for number
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bc.ConstantDifferencesWarning)
        direct = bc.hierarchical(scores, got["best"], got["runner_up"], rope=0.01, seed=seed,
                                 baselines=False, **fit)
    delta0 = direct.population.probabilities
    np.testing.assert_allclose(got["next"][got["runner_up"]], direct.next_dataset.probabilities, rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(got["delta0"][got["runner_up"]], delta0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["sensitivity_paper"]["next"], direct.next_dataset.probabilities,
                               rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(got["sensitivity_paper"]["delta0"], delta0, rtol=0, atol=1e-12)
    assert set(got["next"]) == set(scores.algorithms) - {got["best"]}

    # the report's joint fit is bc.compare_many with the same seed and settings
    joint = bc.compare_many(scores, rope=0.01, seed=seed, **fit)
    assert got["report"]["best"] == joint.best and got["report"]["reliable"] == joint.reliable
    np.testing.assert_allclose([got["report"]["p_best"][a] for a in scores.algorithms],
                               joint.p_best[list(scores.algorithms)], rtol=0, atol=1e-12)
    assert got["report"]["decisions"] == {f"{row.first} - {row.second}": row.population_decision
                                          for row in joint.to_frame().itertuples()}
