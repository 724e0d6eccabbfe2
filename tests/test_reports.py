"""Markdown, LaTeX and HTML renderings carry the result's own numbers."""
import numpy as np
import pandas as pd
import pytest

import bayescomp as bc
from bayescomp.presentation.reports import latex_escape, latex_table, markdown_table


@pytest.fixture(scope="module")
def ttest():
    rng = np.random.default_rng(0)
    a = rng.normal(0.8, 0.02, 100)
    scores = bc.from_arrays({"hnb": a, "nbc": a - 0.005 + rng.normal(0, 0.01, 100)},
                            n_folds=10, datasets=["iris_2"])
    return bc.correlated_ttest(scores, "hnb", "nbc", rope=0.01)


def test_markdown_has_the_probabilities(ttest):
    text = ttest.to_markdown()
    header, rule, row = text.splitlines()[-3:]
    cells = [c.strip() for c in row.strip("|").split("|")]
    names = [c.strip() for c in header.strip("|").split("|")]
    assert names[5:8] == ["P(nbc better)", "P(equivalent)", "P(hnb better)"]
    # probabilities with 4 decimals, P(nbc better) = 5.4e-6 as 0.0000
    assert cells[5:8] == [f"{p:.4f}" for p in ttest.probabilities] == ["0.0000", "0.9091",
                                                                      "0.0909"]
    assert rule.count("---") == len(names)
    # the verdict opens the report, in bold, with the threshold and why it is undecided
    assert text.splitlines()[2] == ("**On dataset 'iris_2': undecided, P(equivalent) = 0.9091 "
                                    "< 0.95.**")


def test_latex_is_a_booktabs_table_with_escaped_names(ttest):
    text = ttest.to_latex(label="tab:x")
    lines = text.splitlines()
    assert lines[0] == r"\begin{table}[ht]" and lines[-1] == r"\end{table}"
    assert r"\toprule" in lines and r"\midrule" in lines and r"\bottomrule" in lines
    assert r"\label{tab:x}" in lines
    body = lines[lines.index(r"\midrule") + 1]
    assert body.startswith(r"iris\_2 & 100 & 0.1 & ")
    assert body.split(" & ")[5:8] == [f"{p:.4f}" for p in ttest.probabilities]
    # the caption is the title and the verdict
    assert (r"\caption{Bayesian correlated t-test: hnb vs nbc on iris\_2. On dataset 'iris\_2': "
            r"undecided, P(equivalent) = 0.9091 < 0.95.}") in lines
    assert latex_escape("a_b & 50%") == r"a\_b \& 50\%"


def test_html_repr_for_notebooks(ttest):
    html = ttest._repr_html_()
    assert html.startswith("<div><h4>Bayesian correlated t-test: hnb vs nbc on iris_2</h4>")
    assert f"{ttest.probabilities[1]:.4f}" in html
    assert "<p><b>On dataset &#x27;iris_2&#x27;: undecided" in html


def test_table_helpers_align_and_format():
    frame = pd.DataFrame({"name": ["a|b", "c"], "value": [1 / 3, np.nan], "count": [1, 2]})
    md = markdown_table(frame).splitlines()
    assert md[2] == r"| a\|b | 0.3333 | 1 |"
    assert md[3] == "| c |  | 2 |"
    tex = latex_table(frame)
    assert r"\begin{tabular}{lrr}" in tex


def test_baselines_report_lists_all_five_tests():
    sim = bc.simulate.collection(12, 20, delta0=0.02, sigma0=0.01, seed=1)
    result = bc.baselines(sim.scores, "a", "b", rope=0.01, seed=0)
    text = result.to_markdown()
    for test in result.tests:
        assert test.name in text
    assert result.wilcoxon.p_value == 2 ** -11 and "| 0.0004883 |" in text  # exact, 12 datasets
    assert f"{result.bayesian_signed_rank.mean_masses[2]:.4f}" in text


def test_every_result_prints_as_its_summary(ttest):
    """``str`` of a result is its ``summary()`` (bayescomp.summarised), the baselines' and
    the cost decision's included, whose ``repr`` is the dataclass's field by field."""
    sim = bc.simulate.collection(12, 20, delta0=0.02, sigma0=0.01, seed=1)
    baselines = bc.baselines(sim.scores, "a", "b", rope=0.01, seed=0)
    decision = bc.expected_cost_decision([0.2, 0.5, 0.3], [[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    friedman = bc.friedman.friedman_test(bc.datasets.load_classifiers())
    for result in (ttest, baselines, baselines.wilcoxon, baselines.bayesian_signed_rank,
                   decision, friedman):
        assert str(result) == result.summary() != repr(result)
    # the decision's expected costs: 1 - P(region) for a 0-1 cost
    assert str(decision).splitlines() == ["Expected cost of each decision:",
                                          "  decision 0                0.8000",
                                          "  decision 1                0.5000",
                                          "  decision 2                0.7000",
                                          "Best decision: decision 1"]


def test_every_class_with_a_summary_is_summarised():
    """Read from the sources: a class of the package that defines ``summary`` derives from
    Summarised (directly or through Reportable) and defines no ``__str__`` of its own.
    ``Scores`` is the one exception: data, whose ``repr`` (and so ``str``) is one line naming
    its algorithms and sizes; its ``summary()`` adds each dataset's mean scores."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "bayescomp"
    found = {}
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                methods = {item.name for item in node.body if isinstance(item, ast.FunctionDef)}
                bases = {getattr(base, "id", getattr(base, "attr", "")) for base in node.bases}
                found[node.name] = (methods, bases)
    summarised = {"Summarised", "Reportable"}

    def derives(name: str) -> bool:
        methods, bases = found.get(name, (set(), set()))
        return bool(bases & summarised) or any(derives(base) for base in bases)

    with_summary = {name for name, (methods, _) in found.items()
                    if "summary" in methods and name not in {"Summarised", "Scores"}}
    assert len(with_summary) >= 14
    assert {name for name in with_summary if not derives(name)} == set()
    assert {name for name in with_summary if "__str__" in found[name][0]} == set()
