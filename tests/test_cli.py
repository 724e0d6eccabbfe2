"""The command line: outputs carry the library's numbers, errors name file, line and column."""
import re

import numpy as np
import pytest

import bayescomp as bc
from bayescomp.cli import main


@pytest.fixture
def csv(tmp_path):
    sim = bc.simulate.collection(4, 20, delta0=0.02, sigma0=0.01, sigma=0.03, rho=0.1, seed=4)
    frame = sim.scores.to_frame()
    frame["run"], frame["fold"] = frame.split // 10, frame.split % 10
    path = tmp_path / "scores.csv"
    frame.drop(columns=["rho", "split"]).to_csv(path, index=False)
    return path, sim.scores


def probabilities_in(text):
    match = re.search(r"P\(b better\) = ([\d.]+)\s+P\(equivalent\) = ([\d.]+)\s+"
                      r"P\(a better\) = ([\d.]+)", text)
    return np.array([float(g) for g in match.groups()])


def test_compare_one_dataset_prints_the_correlated_t_test(csv, capsys, tmp_path):
    path, scores = csv
    out = tmp_path / "report"
    code = main(["compare", str(path), "--first", "a", "--second", "b", "--dataset", "1",
                 "--n-folds", "10", "--rope", "0.01", "--out", str(out)])
    assert code == 0
    expected = bc.correlated_ttest(scores, "a", "b", dataset="1", rope=0.01).probabilities
    np.testing.assert_allclose(probabilities_in(capsys.readouterr().out), expected, atol=1e-4)
    report = (out / "report.md").read_text()
    assert "Bayesian correlated t-test: a vs b on 1" in report
    assert "![posterior.png](posterior.png)" in report
    assert (out / "posterior.png").stat().st_size > 1000 and (out / "differences.png").exists()


@pytest.mark.stan
def test_compare_across_datasets_runs_the_hierarchical_model(csv, capsys, tmp_path):
    path, scores = csv
    out = tmp_path / "many"
    code = main(["compare", str(path), "--first", "a", "--second", "b", "--n-folds", "10",
                 "--seed", "3", "--out", str(out)])
    printed = capsys.readouterr().out
    direct = bc.hierarchical(scores, "a", "b", rope=0.01, seed=3)
    assert code == (0 if direct.diagnostics.ok else 1)
    assert f"mean {direct.delta0['mean']:.4g}" in printed
    for name in ("posterior_delta0.png", "posterior_next.png", "simplex.png", "shrinkage.png",
                 "diagnostics.png", "differences.png", "report.md"):
        assert (out / name).exists(), name


def test_input_errors_name_file_line_and_column(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("dataset,algorithm,run,fold,score\nd,a,0,0,0.5\nd,b,0,0,x\n"
                    "d,a,0,1,0.6\nd,b,0,1,0.7\n")
    assert main(["compare", str(path), "--first", "a", "--second", "b"]) == 2
    error = capsys.readouterr().err
    assert "bad.csv" in error and "line 3, column 'score'" in error
    assert main(["compare", str(tmp_path / "missing.csv"), "--first", "a", "--second", "b"]) == 2
    assert main(["compare", str(path), "--first", "a", "--second", "b",
                 "--column", "nonsense"]) == 2


def test_unknown_algorithm_is_an_input_error(csv, capsys):
    path, _ = csv
    assert main(["compare", str(path), "--first", "a", "--second", "zz", "--no-stan"]) == 2
    assert "unknown algorithm 'zz'" in capsys.readouterr().err


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for command in ("demo", "compare", "all-pairs"):
        assert command in text


def test_demo_without_stan_prints_t_test_and_baselines(capsys):
    assert main(["demo", "--no-stan"]) == 0
    text = capsys.readouterr().out
    scores = bc.datasets.load_classifiers()
    expected = bc.baselines(scores, "forest", "tree", rope=0.01, seed=1)
    assert f"p = {expected.wilcoxon.p_value:.4g}" in text
    assert "Bayesian signed-rank test" in text


@pytest.mark.stan
def test_all_pairs_writes_the_table_and_heatmap(tmp_path, capsys):
    rng = np.random.default_rng(8)
    base = [rng.uniform(0.7, 0.9, 20) for _ in range(3)]
    scores = bc.from_arrays({"x": base, "y": [b - 0.02 + rng.normal(0, 0.02, 20) for b in base],
                             "z": [b + rng.normal(0, 0.02, 20) for b in base]},
                            n_folds=10, datasets=["p", "q", "r"])
    frame = scores.to_frame()
    frame["run"], frame["fold"] = frame.split // 10, frame.split % 10
    path = tmp_path / "three.csv"
    frame.drop(columns=["rho", "split"]).to_csv(path, index=False)
    out = tmp_path / "pairs"
    code = main(["all-pairs", str(path), "--seed", "2", "--out", str(out)])
    direct = bc.compare_all(scores, rope=0.01, seed=2)
    assert code == (0 if direct.table.diagnostics_ok.all() else 1)
    report = (out / "report.md").read_text()
    for row in direct.table.itertuples():
        assert f"| {row.first} | {row.second} | {row.p_left:.4g} | {row.p_rope:.4g} |" in report
    assert (out / "probability_better.png").exists()


# --- sampler options, retries and unreliable fits ------------------------------------------

STARVED = ["--chains", "2", "--iter-warmup", "20", "--iter-sampling", "20"]


def spy_on_hierarchical(monkeypatch, module_name):
    """Record the keyword arguments and result of every hierarchical() call made through
    ``module_name``."""
    import importlib

    module = importlib.import_module(module_name)
    real, calls = module.hierarchical, []

    def hierarchical(*args, **kwargs):
        result = real(*args, **kwargs)
        calls.append((kwargs, result))
        return result

    monkeypatch.setattr(module, "hierarchical", hierarchical)
    return calls


@pytest.mark.stan
def test_sampler_options_reach_the_hierarchical_model(csv, capsys, monkeypatch):
    path, _ = csv
    calls = spy_on_hierarchical(monkeypatch, "bayescomp.hierarchical")
    main(["compare", str(path), "--first", "a", "--second", "b", "--n-folds", "10",
          "--chains", "2", "--iter-warmup", "150", "--iter-sampling", "300",
          "--adapt-delta", "0.9", "--max-treedepth", "8", "--parameterization", "noncentered",
          "--prior", "baycomp", "--seed", "7", "--retries", "0"])
    (options, result), = calls
    assert options == dict(rope=0.01, seed=7, backend="auto", show_progress=False, chains=2,
                           iter_warmup=150, iter_sampling=300, adapt_delta=0.9,
                           max_treedepth=8, parameterization="noncentered", prior="baycomp",
                           retries=0)
    assert dict(result.idata.posterior.sizes)["chain"] == 2
    assert dict(result.idata.posterior.sizes)["draw"] == 300
    s = result.settings
    assert (s["prior_name"], s["parameterization"], s["adapt_delta"], s["max_treedepth"],
            s["seed"], s["retries"]) == ("baycomp", "noncentered", 0.9, 8, 7, 0)
    assert "prior baycomp, noncentered delta_i" in capsys.readouterr().out


def test_sampler_options_are_checked(csv, capsys):
    path, _ = csv
    base = ["compare", str(path), "--first", "a", "--second", "b"]
    for bad in (["--adapt-delta", "1.5"], ["--chains", "0"], ["--retries", "-1"],
                ["--prior", "flat"]):
        with pytest.raises(SystemExit) as exit_info:
            main(base + bad)
        assert exit_info.value.code == 2, bad
    # an unknown parameterization is the library's ValueError, raised before any sampling
    assert main(base + ["--parameterization", "sideways"]) == 2
    assert "parameterization" in capsys.readouterr().err


@pytest.mark.stan
def test_unreliable_fit_exits_1_with_the_banner(csv, capsys, tmp_path):
    path, _ = csv
    out = tmp_path / "bad"
    code = main(["compare", str(path), "--first", "a", "--second", "b", "--n-folds", "10",
                 *STARVED, "--retries", "0", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out.startswith("UNRELIABLE: the sampler failed its diagnostics;")
    assert "decision at 0.95: unreliable (sampling problems)" in captured.out
    warned = [line for line in captured.err.splitlines()
              if line.startswith("warning: hierarchical model a - b: ")]
    assert len(warned) == 1 and "effective sample size" in warned[0]
    assert "bayescomp: UNRELIABLE: a vs b failed the sampler diagnostics" in captured.err
    report = (out / "report.md").read_text()
    assert report.startswith("### Hierarchical model: a vs b on 4 datasets (UNRELIABLE")


@pytest.mark.stan
def test_all_pairs_retries_then_exits_1_naming_the_unreliable_pairs(tmp_path, capsys,
                                                                   monkeypatch):
    sim = bc.simulate.collection(3, 20, delta0=0.02, sigma0=0.01, sigma=0.03, rho=0.1,
                                 seed=6).scores
    rng = np.random.default_rng(0)
    scores = bc.from_arrays({"a": [d.values[0] for d in sim.datasets],
                             "b": [d.values[1] for d in sim.datasets],
                             "c": [d.values[1] + rng.normal(0, 0.02, d.n_scores)
                                   for d in sim.datasets]}, n_folds=10)
    frame = scores.to_frame()
    frame["run"], frame["fold"] = frame.split // 10, frame.split % 10
    path = tmp_path / "three.csv"
    frame.drop(columns=["rho", "split"]).to_csv(path, index=False)
    calls = spy_on_hierarchical(monkeypatch, "bayescomp.compare")
    out = tmp_path / "pairs"
    code = main(["all-pairs", str(path), "--seed", "2", *STARVED, "--retries", "1",
                 "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1
    assert len(calls) == 3
    for options, result in calls:
        assert (options["chains"], options["iter_warmup"], options["iter_sampling"],
                options["retries"]) == (2, 20, 20, 1)
        assert [(a["adapt_delta"], a["iter_warmup"], a["iter_sampling"])
                for a in result.settings["attempts"]] == [(0.95, 20, 20), (0.99, 40, 40)]
    assert captured.out.startswith("UNRELIABLE: 3 of 3 fits failed their sampler diagnostics")
    assert captured.err.count("retried with adapt_delta 0.99, 40 + 40 iterations after") == 3
    assert "warning: a vs b: hierarchical model a - b: retried with" in captured.err
    assert "bayescomp: UNRELIABLE: a vs b, a vs c, b vs c" in captured.err
    report = (out / "report.md").read_text()
    assert "- UNRELIABLE: 3 fit(s) failed" in report
    assert report.count("| unreliable (sampling problems) |") == 3
    assert (out / "probability_better.png").stat().st_size > 1000
