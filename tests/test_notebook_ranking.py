"""notebooks/05_ranking_and_sensitivity.py (jupytext percent format) runs from top to bottom.

It is executed as a script with runpy, in a temporary working directory with matplotlib's
Agg backend (no kernel, no network; jupytext is not needed). Its objects must equal the
library called here directly on the same scores and settings, and it writes no file.
"""
import io
import runpy
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest

import bayescomp as bc

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "05_ranking_and_sensitivity.py"


@pytest.mark.stan
def test_notebook_runs_and_matches_the_library(stan_backend, tmp_path, monkeypatch):
    pytest.importorskip("sklearn", reason="the notebook cross-validates scikit-learn models")
    if not NOTEBOOK.is_file():
        pytest.skip(f"{NOTEBOOK} not found: the notebooks live in the source checkout")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with redirect_stdout(printed):
        names = runpy.run_path(str(NOTEBOOK), run_name="__main__")
    plt.close("all")
    assert list(tmp_path.iterdir()) == []
    text = printed.getvalue()

    scores, ranking, robustness = names["scores"], names["ranking"], names["robustness"]
    assert len(scores.algorithms) >= 5 and len(scores) >= 5
    assert ranking.reliable and ranking.verdict() in text
    # the same call here gives the same draws: the notebook is the library, nothing more
    direct = bc.rank_algorithms(scores, seed=names["SEED"], **names["FIT"])
    np.testing.assert_array_equal(direct.worths, ranking.worths)
    np.testing.assert_allclose(ranking.rank_probabilities.sum(axis=0), 1, atol=1e-12)
    # pairwise verdicts: the best against every other algorithm
    assert set(names["pairwise"]) == set(scores.algorithms) - {ranking.best}
    assert robustness.priors == list(bc.PRIORS)
    assert (robustness.first, robustness.second) == (ranking.best, names["runner_up"])
    # the drafted paragraph carries the numbers of the results
    paragraph = "\n".join(names["lines"])
    assert paragraph in text and f"{ranking.p_best[ranking.best]:.2f}" in paragraph
    for other, result in names["pairwise"].items():
        assert f"Against {other}" in paragraph and result.next_dataset.decision() in paragraph
    # the report's paragraph (section 6) is printed as written, from the joint fit's numbers
    analysis = names["analysis"]
    assert analysis.reliable and analysis.paragraph() in text
    assert list(analysis.algorithms) == list(scores.algorithms)
    assert f"P(best) = {analysis.joint.p_best.max():.3f}" in analysis.paragraph() or \
        f"with probability {analysis.joint.p_best.max():.3f}" in analysis.paragraph()
    assert list(analysis.prior_tables) == ["paper", "baycomp"]
