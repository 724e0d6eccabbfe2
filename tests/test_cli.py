"""The command line: outputs carry the library's numbers, errors name file, line and column."""
import re

import numpy as np
import pandas as pd
import pytest

import bayescomp as bc
from bayescomp import sampling
from bayescomp.cli.main import main


@pytest.fixture
def csv(tmp_path, write_long_csv):
    sim = bc.simulate.collection(4, 20, delta0=0.02, sigma0=0.01, sigma=0.03, rho=0.1, seed=4)
    path = write_long_csv(sim.scores, tmp_path / "scores.csv")
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
def test_a_wide_file_is_read_without_format(csv, capsys, tmp_path):
    """A wide CSV (dataset, run, fold, one column per algorithm) needs no --format: the
    same correlated t-test as the long file's."""
    path, scores = csv
    long = pd.read_csv(path)
    wide = long.pivot(index=["dataset", "run", "fold"], columns="algorithm",
                      values="score").reset_index()
    wide.to_csv(tmp_path / "wide.csv", index=False)
    assert main(["compare", str(tmp_path / "wide.csv"), "--first", "a", "--second", "b",
                 "--dataset", "1", "--n-folds", "10", "--rope", "0.01"]) == 0
    expected = bc.correlated_ttest(scores, "a", "b", dataset="1", rope=0.01).probabilities
    np.testing.assert_allclose(probabilities_in(capsys.readouterr().out), expected, atol=1e-4)


@pytest.mark.stan
def test_compare_across_datasets_runs_the_hierarchical_model(csv, capsys, tmp_path):
    path, scores = csv
    out = tmp_path / "many"
    code = main(["compare", str(path), "--first", "a", "--second", "b", "--n-folds", "10",
                 "--seed", "3", "--out", str(out)])
    printed = capsys.readouterr().out
    direct = bc.hierarchical(scores, "a", "b", rope=0.01, seed=3)
    assert code == (0 if direct.diagnostics.ok else 1)
    assert f"mean {direct.population.mean:.4g}" in printed
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


def test_unknown_names_are_input_errors_naming_the_file(csv, capsys):
    path, _ = csv
    assert main(["compare", str(path), "--first", "a", "--second", "zz", "--no-stan"]) == 2
    assert capsys.readouterr().err == (f"bayescomp: error: {path}: unknown algorithm 'zz'; the "
                                       "scores hold ['a', 'b']\n")
    # a name that differs only in case is suggested
    assert main(["compare", str(path), "--first", "A", "--second", "b", "--no-stan"]) == 2
    assert capsys.readouterr().err == (f"bayescomp: error: {path}: unknown algorithm 'A' (did "
                                       "you mean 'a'?); the scores hold ['a', 'b']\n")
    assert main(["compare", str(path), "--first", "a", "--second", "b", "--dataset", "9"]) == 2
    assert capsys.readouterr().err == (f"bayescomp: error: {path}: unknown dataset '9'; the "
                                       "scores hold ['0', '1', '2', '3']\n")


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for command in ("demo", "compare", "all-pairs", "rank", "report", "cache"):
        assert command in text


def test_demo_without_stan_prints_t_test_and_baselines(capsys):
    assert main(["demo", "--no-stan"]) == 0
    text = capsys.readouterr().out
    scores = bc.datasets.load_classifiers()
    expected = bc.baselines(scores, "forest", "tree", rope=0.01, seed=1)
    assert expected.wilcoxon.summary() in text
    assert "Bayesian signed-rank test" in text


@pytest.mark.stan
def test_all_pairs_writes_the_table_and_heatmap(tmp_path, capsys, write_long_csv):
    rng = np.random.default_rng(8)
    base = [rng.uniform(0.7, 0.9, 20) for _ in range(3)]
    scores = bc.from_arrays({"x": base, "y": [b - 0.02 + rng.normal(0, 0.02, 20) for b in base],
                             "z": [b + rng.normal(0, 0.02, 20) for b in base]},
                            n_folds=10, datasets=["p", "q", "r"])
    path = write_long_csv(scores, tmp_path / "three.csv")
    out = tmp_path / "pairs"
    code = main(["all-pairs", str(path), "--seed", "2", "--out", str(out)])
    direct = bc.compare_all(scores, rope=0.01, seed=2)
    assert code == (0 if direct.table.reliable.all() else 1)
    report = (out / "report.md").read_text()
    for row in direct.table.itertuples():
        line, = [x for x in report.splitlines() if x.startswith(f"| {row.first} | {row.second} |")]
        # whose probability: P(first better), P(equivalent), P(second better), for delta0
        # and then for the next dataset
        assert (f" {row.population_p_right:.4f} | {row.population_p_rope:.4f} | "
                f"{row.population_p_left:.4f} |") in line, line
        assert (f" {row.next_dataset_p_right:.4f} | {row.next_dataset_p_rope:.4f} | "
                f"{row.next_dataset_p_left:.4f} |") in line, line
    assert (out / "pairs.png").exists()


@pytest.mark.stan
def test_all_pairs_joint_is_compare_many_with_the_same_seed(tmp_path, capsys, write_long_csv,
                                                            three_algorithms, stan_backend):
    from bayescomp.cli.export import plain

    path = write_long_csv(three_algorithms, tmp_path / "three.csv")
    out, target = tmp_path / "joint", tmp_path / "joint.json"
    code = main(["all-pairs", str(path), "--joint", "--seed", "2", "--backend", stan_backend,
                 "--iter-warmup", "300", "--iter-sampling", "300", "--ess", "400",
                 "--json", str(target), "--out", str(out)])
    captured = capsys.readouterr()
    direct = bc.compare_many(three_algorithms, rope=0.01, seed=2, backend=stan_backend,
                             iter_warmup=300, iter_sampling=300, ess=400)
    assert code == (0 if direct.reliable else 1)
    document = json.loads(target.read_text())
    expected = plain(direct.to_dict())
    for key in ("method", "algorithms", "n_datasets", "rope", "seed", "reliable", "best",
                "pairs", "p_best", "rank_probabilities", "diagnostics"):
        assert document["joint"][key] == expected[key], key
    assert document["joint"]["settings"]["ess"] == expected["settings"]["ess"]
    assert document["joint"]["settings"]["ess"]["target"] == 400
    assert document["command"] == "all-pairs" and document["exit_code"] == code
    for sentence in direct.verdicts():
        assert sentence in captured.out
    assert {p.name for p in out.iterdir()} == {"report.md", "pairs.png", "bayesian_cd.png"}
    assert (out / "report.md").read_text().startswith("### Joint comparison of 3 algorithms")


def test_all_pairs_joint_faults_are_one_line(tmp_path, capsys, write_long_csv,
                                             three_algorithms):
    path = write_long_csv(three_algorithms, tmp_path / "three.csv")
    assert main(["all-pairs", str(path), "--joint", "--prior", "gaussian"]) == 2
    line, = capsys.readouterr().err.splitlines()
    assert line.startswith(f"bayescomp: error: {path}: the joint model takes a Student-t prior")


# --- sampler options, retries and unreliable fits ------------------------------------------

# --no-quadrature: fits that fail to the end (UNRELIABLE), which the quadrature would
# otherwise answer for (tests/test_quadrature.py)
STARVED = ["--chains", "2", "--iter-warmup", "20", "--iter-sampling", "20", "--no-quadrature"]


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
    calls = spy_on_hierarchical(monkeypatch, "bayescomp.models.hierarchical")
    main(["compare", str(path), "--first", "a", "--second", "b", "--n-folds", "10",
          "--chains", "2", "--iter-warmup", "150", "--iter-sampling", "300",
          "--adapt-delta", "0.9", "--max-treedepth", "8",
          "--prior", "baycomp", "--seed", "7", "--retries", "0"])
    (options, result), = calls
    # --backend auto reaches the model as the engine it stands for, resolved once
    assert options == dict(rope=bc.Rope(-0.01, 0.01), seed=7,
                           backend=sampling.resolve_backend("auto"),
                           show_progress=False, chains=2,
                           iter_warmup=150, iter_sampling=300, adapt_delta=0.9,
                           max_treedepth=8, prior="baycomp",
                           retries=0)
    assert dict(result.idata.posterior.sizes)["chain"] == 2
    # the first fit is the one the options describe (the ESS target may extend it)
    first = result.attempts[0]
    assert (first["iter_warmup"], first["iter_sampling"], first["draws"]) == (150, 300, 300)
    s = result.settings
    assert (s["prior_name"], s["adapt_delta"], s["max_treedepth"],
            s["seed"], s["retries"]) == ("baycomp", 0.9, 8, 7, 0)
    assert "prior baycomp, backend" in capsys.readouterr().out


@pytest.mark.stan
def test_no_quadrature_reaches_the_pairwise_fits_only(csv, capsys, monkeypatch):
    path, _ = csv
    calls = spy_on_hierarchical(monkeypatch, "bayescomp.models.hierarchical")
    # the package's draws (4 x (500 + 1000)), with which these chains mix: their diagnostics
    # passed on fitting seeds 7-14, where 2 chains of 150 + 300 failed them on 5-6 seeds of 8
    # and the quadrature answered
    options = ["--n-folds", "10", "--retries", "0", "--seed", "7"]
    main(["compare", str(path), "--first", "a", "--second", "b", *options, "--no-quadrature"])
    main(["compare", str(path), "--first", "a", "--second", "b", *options])
    (given, without), (unset, default) = calls
    assert given["quadrature"] is False and "quadrature" not in unset
    # the quadrature is not needed, and the flag changes no number
    assert without.quadrature is None and default.quadrature is None
    np.testing.assert_array_equal(without.population.probabilities,
                                  default.population.probabilities)
    # the joint model has no quadrature: a usage error, before any fit
    capsys.readouterr()
    assert main(["all-pairs", str(path), "--joint", "--no-quadrature", "--n-folds", "10"]) == 2
    assert "--no-quadrature is an option of the pairwise fits" in capsys.readouterr().err
    assert len(calls) == 2


def test_sampler_options_are_checked(csv, capsys):
    path, _ = csv
    base = ["compare", str(path), "--first", "a", "--second", "b"]
    for bad in (["--adapt-delta", "1.5"], ["--chains", "0"], ["--retries", "-1"],
                ["--prior", "flat"]):
        with pytest.raises(SystemExit) as exit_info:
            main(base + bad)
        assert exit_info.value.code == 2, bad


@pytest.mark.stan
def test_the_engine_is_resolved_once_per_command(csv, capsys, monkeypatch, pystan_backend):
    # as when CmdStan's build ended during a demo: 'auto' finds no CmdStan when the command
    # starts, and would find one at any later look
    path, _ = csv
    answers = iter(["CmdStan not installed (no directory): install_cmdstan"])
    monkeypatch.setattr(sampling.ENGINES["cmdstanpy"], "unavailable",
                        lambda: next(answers, None))
    calls = spy_on_hierarchical(monkeypatch, "bayescomp.models.hierarchical")
    main(["compare", str(path), "--first", "a", "--second", "b", "--n-folds", "10",
          "--chains", "2", "--iter-warmup", "150", "--iter-sampling", "150", "--retries", "0"])
    (options, result), = calls
    assert options["backend"] == result.settings["backend"] == "pystan"
    assert ", backend pystan, seed 1" in capsys.readouterr().out
    assert sampling.resolve_backend("auto") == "cmdstanpy"   # what a second look gives


@pytest.mark.stan
def test_auto_says_when_it_passes_over_an_unfinished_cmdstan(csv, capsys, tmp_path,
                                                             monkeypatch, pystan_backend):
    path, _ = csv
    home = tmp_path / "cmdstan-9.9.9"   # what cmdstanpy accepts: a directory with a makefile
    home.mkdir()
    (home / "makefile").write_text("CMDSTAN_VERSION := 9.9.9\n")
    (tmp_path / "cmdstan-9.9.9.lock").touch()   # a build started, killed before its end marker
    monkeypatch.setenv("CMDSTAN", str(home))
    main(["compare", str(path), "--first", "a", "--second", "b", "--n-folds", "10",
          "--chains", "2", "--iter-warmup", "150", "--iter-sampling", "150", "--retries", "0"])
    captured = capsys.readouterr()
    assert captured.err.splitlines()[0] == (
        f"bayescomp: Stan engine pystan, not cmdstanpy: the CmdStan in {home} is unfinished: "
        f"its build was interrupted (run the build again); {tmp_path / 'cmdstan-9.9.9.lock'} "
        f"is there and {home / '.bayescomp-built'} is not")
    assert ", backend pystan, seed 1" in captured.out


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
                                                                   monkeypatch, write_long_csv):
    sim = bc.simulate.collection(3, 20, delta0=0.02, sigma0=0.01, sigma=0.03, rho=0.1,
                                 seed=6).scores
    rng = np.random.default_rng(0)
    scores = bc.from_arrays({"a": [d.values[0] for d in sim.datasets],
                             "b": [d.values[1] for d in sim.datasets],
                             "c": [d.values[1] + rng.normal(0, 0.02, d.n_scores)
                                   for d in sim.datasets]}, n_folds=10)
    path = write_long_csv(scores, tmp_path / "three.csv")
    calls = spy_on_hierarchical(monkeypatch, "bayescomp.models.hierarchical")  # compare imports it lazily
    out = tmp_path / "pairs"
    code = main(["all-pairs", str(path), "--seed", "2", *STARVED, "--retries", "1",
                 "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1
    assert len(calls) == 3
    for options, result in calls:
        assert (options["chains"], options["iter_warmup"], options["iter_sampling"],
                options["retries"]) == (2, 20, 20, 1)
        first = result.settings["attempts"][0]
        # slow mixing alone is continued (20 more draws, no second warm-up: the chains keep
        # their adapted step size and metric), and so are divergences (at half the step,
        # 10 new draws); a sampler that struggles otherwise refits afresh with twice the
        # iterations (safer_run)
        struggled = any(word in p for p in first["problems"]
                        for word in ("divergent", "tree depth", "E-BFMI"))
        diverged = any("divergent" in p for p in first["problems"])
        refit = (0.99, 0, 10, True) if diverged else (0.95, 40, 40, False)
        assert [(a["adapt_delta"], a["iter_warmup"], a["iter_sampling"], a["continued"])
                for a in result.settings["attempts"]] == [
            (0.95, 20, 20, False), refit if struggled else (0.95, 0, 20, True)]
    assert captured.out.startswith("UNRELIABLE: 3 of 3 fits failed their sampler diagnostics")
    assert len(re.findall(r"(retried with adapt_delta 0\.95, 40 \+ 40 iterations|continued "
                          r"every chain from its last draw(, 20 more draws| at 0\.5 times its "
                          r"step size, 10 new draws in place of the earlier ones)) after",
                          captured.err)) == 3
    assert re.search(r"warning: a vs b: hierarchical model a - b: (retried|continued) ",
                     captured.err)
    assert "bayescomp: UNRELIABLE: a vs b, a vs c, b vs c" in captured.err
    report = (out / "report.md").read_text()
    assert "- UNRELIABLE: 3 fit(s) failed" in report
    # no decision for delta0 nor for the next dataset, on each of the three pairs
    assert report.count("| unreliable (sampling problems) |") == 6
    assert (out / "pairs.png").stat().st_size > 1000


# --- version, ROPE, seed, --json and --csv -------------------------------------------------

import json  # noqa: E402
import warnings  # noqa: E402

# a number printed as a bound ("p < 0.0001", "R-hat 1.036 > 1.01") is not a value
NUMBER = re.compile(r"(?<![<>] )(?<![\w.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?%?", re.I)


def numbers_in(text):
    """(value, tolerance) of every number printed in ``text``, from the digits shown."""
    found = []
    for token in NUMBER.findall(text):
        percent = token.endswith("%")
        token = token.rstrip("%")
        mantissa = token.lower().split("e")[0]
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        exponent = int(token.lower().split("e")[1]) if "e" in token.lower() else 0
        value = float(token) / (100 if percent else 1)
        tolerance = 0.5 * 10.0 ** (exponent - decimals) / (100 if percent else 1)
        found.append((value, tolerance * 1.001 + 1e-15))
    return found


def leaves(document):
    """Every number in a JSON document, numbers inside strings (names, messages) too."""
    from bayescomp.cli.export import flatten

    values = []
    for path, value in flatten(document):
        for part in (*path, value):
            if isinstance(part, bool) or part is None:
                continue
            if isinstance(part, (int, float)):
                values.append(float(part))
            else:
                values += [v for v, _ in numbers_in(str(part))]
    return np.array(values)


def assert_every_number_in(text, document):
    pool = leaves(document)
    missing = [(v, t) for v, t in numbers_in(text) if not np.any(np.abs(pool - v) <= t)]
    assert not missing, missing


def test_version_is_the_package_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"bayescomp {bc.__version__}"


@pytest.mark.parametrize("rope_args", [["--rope", "-0.01,0.02"], ["--rope=[-0.01,0.02]"],
                                       ["--rope-low", "-0.01", "--rope-high", "0.02"],
                                       ["--rope", "0.01", "--rope-high", "0.02"]])
def test_asymmetric_rope_reaches_the_test(csv, tmp_path, capsys, rope_args):
    path, scores = csv
    out = tmp_path / "one.json"
    assert main(["compare", str(path), "--first", "a", "--second", "b", "--dataset", "2",
                 *rope_args, "--json", str(out)]) == 0
    expected = bc.correlated_ttest(scores, "a", "b", dataset="2", rope=(-0.01, 0.02))
    comparison = json.loads(out.read_text())["comparison"]
    assert comparison["rope"] == {"low": -0.01, "high": 0.02}
    probabilities = comparison["verdict"]["probabilities"]
    np.testing.assert_allclose([probabilities["b better"], probabilities["equivalent"],
                                probabilities["a better"]], expected.probabilities, rtol=1e-12)
    assert "ROPE = [-0.01, 0.02]" in capsys.readouterr().out


def test_a_rope_without_zero_is_a_one_line_usage_error(csv, capsys):
    path, _ = csv
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", str(path), "--first", "a", "--second", "b", "--rope", "0.01,0.02"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == ("bayescomp compare: error: argument --rope: ROPE "
                                       "[0.01, 0.02] must contain 0 (see bayescomp compare "
                                       "--help)\n")


def test_json_and_csv_hold_every_number_of_one_dataset(csv, tmp_path, capsys):
    path, scores = csv
    target, table = tmp_path / "out" / "one.json", tmp_path / "one.csv"
    assert main(["compare", str(path), "--first", "a", "--second", "b", "--dataset", "0",
                 "--json", str(target), "--csv", str(table)]) == 0
    text = capsys.readouterr().out
    document = json.loads(target.read_text())
    assert (document["command"], document["input"], document["exit_code"]) == \
        ("compare", str(path), 0)
    assert_every_number_in(text, document)
    expected = bc.correlated_ttest(scores, "a", "b", dataset="0", rope=0.01)
    rows = dict(line.rsplit(",", 1) for line in table.read_text().splitlines()[1:])
    assert float(rows["comparison/verdict/probabilities/a better"]) == \
        pytest.approx(expected.probabilities[2], rel=1e-12)
    assert float(rows["comparison/nadeau_bengio/p_value"]) == \
        pytest.approx(expected.nb_p_value, rel=1e-12)


def test_json_of_the_demo_without_stan_and_its_seed(tmp_path, capsys):
    runs = []
    for name in ("first.json", "second.json"):
        assert main(["demo", "--no-stan", "--seed", "5", "--json", str(tmp_path / name)]) == 0
        runs.append(json.loads((tmp_path / name).read_text()))
    text = capsys.readouterr().out
    assert runs[0] == runs[1]   # the Bayesian sign and signed-rank tests draw from the seed
    assert_every_number_in(text, runs[0])
    scores = bc.datasets.load_classifiers()
    expected = bc.baselines(scores, "forest", "tree", rope=0.01, seed=5)
    tests = runs[0]["comparison"]["baselines"]["tests"]
    probabilities = tests["bayesian_signed_rank"]["verdict"]["probabilities"]
    np.testing.assert_allclose([probabilities[k] for k in ("tree better", "equivalent",
                                                           "forest better")],
                               expected.bayesian_signed_rank.mean_masses, rtol=1e-12)
    assert tests["wilcoxon"]["p_value"] == pytest.approx(expected.wilcoxon.p_value, rel=1e-12)
    assert [d["dataset"] for d in runs[0]["comparison"]["datasets"]] == \
        list(scores.dataset_names)


def test_json_to_stdout_is_the_only_output(csv, capsys):
    path, _ = csv
    assert main(["compare", str(path), "--first", "a", "--second", "b", "--dataset", "1",
                 "--json", "-"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["comparison"]["dataset"] == "1"


def one_dataset_csv(tmp_path, scores_a, scores_b, name="few.csv"):
    rows = ["dataset,algorithm,run,fold,score"]
    for algorithm, values in (("a", scores_a), ("b", scores_b)):
        rows += [f"d1,{algorithm},0,{k},{v}" for k, v in enumerate(values)]
    path = tmp_path / name
    path.write_text("\n".join(rows) + "\n")
    return path


def test_all_pairs_on_one_dataset_json_names_each_pair(tmp_path, capsys):
    rng = np.random.default_rng(3)
    base = rng.uniform(0.7, 0.8, 10)
    scores = bc.from_arrays({"x": base, "y": base - 0.03 + rng.normal(0, 0.01, 10),
                             "z": base + rng.normal(0, 0.01, 10)}, n_folds=10, datasets=["d"])
    path = tmp_path / "pairs.csv"
    scores.to_frame().to_csv(path, index=False)
    target = tmp_path / "pairs.json"
    assert main(["all-pairs", str(path), "--json", str(target), "--progress"]) == 0
    captured = capsys.readouterr()
    assert "all pairs" in captured.err and "3/3" in captured.err   # the bar reached the end
    document = json.loads(target.read_text())["all_pairs"]
    direct = bc.compare_all(scores, rope=0.01, seed=1)
    for row in direct.table.itertuples():
        pair, = [p for p in document["pairs"] if (p["first"], p["second"]) ==
                 (row.first, row.second)]
        probabilities = pair["dataset"]["probabilities"]
        assert probabilities[f"{row.first} better"] == pytest.approx(row.dataset_p_right)
        assert probabilities[f"{row.second} better"] == pytest.approx(row.dataset_p_left)
        assert pair["p_value_corrected"] == pytest.approx(row.p_value_corrected)
    assert_every_number_in(captured.out, document)


# --- warnings where the input is probably wrong (library and command line) -----------------

def test_few_scores_warn_naming_the_dataset():
    with pytest.warns(bc.exceptions.InputWarning, match=r"dataset 'tiny' \(3 scores\): "
                      "fewer than 5 scores"):
        bc.from_arrays({"a": [[0.8, 0.82, 0.81]], "b": [[0.7, 0.75, 0.71]]}, n_folds=3,
                       datasets=["tiny"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bc.from_arrays({"a": np.ones(5), "b": np.arange(5.0)}, n_folds=5)   # 5 is enough


def test_a_rope_holding_every_difference_warns():
    scores = bc.from_arrays({"a": [0.80, 0.82, 0.81, 0.83, 0.79],
                             "b": [0.78, 0.81, 0.82, 0.80, 0.80]}, n_folds=5, datasets=["d"])
    with pytest.warns(bc.exceptions.InputWarning, match=r"ROPE \[-0.5, 0.5\] contains every "
                      r"difference a - b on dataset 'd' \(they range over \[-0.01, 0.03\]\)"):
        bc.rope.check_rope(0.5, scores, "a", "b")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bc.rope.check_rope(0.02, scores, "a", "b")   # 0.03 lies outside: no warning
        bc.rope.check_rope(0.0, scores, "a", "b")    # no ROPE is a choice, not a mistake


def test_a_fraction_rope_on_percent_scores_warns():
    rng = np.random.default_rng(1)
    percent = bc.from_arrays({"a": rng.uniform(80, 90, (3, 10)),
                              "b": rng.uniform(80, 90, (3, 10))}, n_folds=10,
                             datasets=["p", "q", "r"])
    with pytest.warns(bc.exceptions.InputWarning, match=r"tiny next to the scores of a and b "
                      r"on all 3 datasets .*a ROPE of one point is 1, not 0.01"):
        bc.rope.check_rope(0.01, percent, "a", "b")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bc.rope.check_rope(1, percent, "a", "b")


def test_cli_warnings_are_one_line_each_once_naming_file_and_dataset(tmp_path, capsys):
    path = one_dataset_csv(tmp_path, [81.0, 83.5, 80.2], [80.5, 82.0, 81.1])
    assert main(["compare", str(path), "--first", "a", "--second", "b"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"warning: {path}: dataset 'd1' (3 scores): fewer than 5 scores per algorithm (n "
        "scores give n - 1 degrees of freedom); the variance is barely estimated; use more "
        "runs or folds (e.g. 10 x 10-fold cross-validation)",
        "warning: the ROPE [-0.01, 0.01] is tiny next to the scores of a and b on dataset(s) "
        "'d1' (mean |score| 81.38): if the scores are percentages, a ROPE of one point is "
        "1, not 0.01"]


def test_other_algorithms_faults_do_not_stop_a_comparison(tmp_path, capsys):
    """compare checks only its two algorithms, all-pairs and rank those of --algorithms: a
    third algorithm's NaN scores fail a whole-file read but not these, whose numbers are
    those of the file without it (the one-dataset tests read no step from the others)."""
    rng = np.random.default_rng(5)
    base = rng.uniform(0.7, 0.8, 10)
    scores = bc.from_arrays({"x": base, "y": base - 0.03 + rng.normal(0, 0.01, 10),
                             "z": base + rng.normal(0, 0.01, 10)}, n_folds=10, datasets=["d"])
    clean = tmp_path / "clean.csv"
    scores.subset(algorithms=["x", "y"]).to_frame().to_csv(clean, index=False)
    frame = scores.to_frame()
    frame.loc[(frame.algorithm == "z") & (frame.fold == 4), "score"] = np.nan
    broken = tmp_path / "broken.csv"
    frame.to_csv(broken, index=False)
    assert main(["all-pairs", str(broken)]) == 2
    assert "algorithm 'z': 1 NaN" in capsys.readouterr().err

    def document(*args):
        target = tmp_path / "out.json"
        assert main([*args, "--json", str(target)]) == 0
        capsys.readouterr()
        return json.loads(target.read_text())

    pair = ["--first", "x", "--second", "y", "--no-stan"]
    assert (document("compare", str(broken), *pair)["comparison"]
            == document("compare", str(clean), *pair)["comparison"])
    pairs = document("all-pairs", str(broken), "--algorithms", "y,x")["all_pairs"]["pairs"]
    assert [(p["first"], p["second"]) for p in pairs] == [("y", "x")]
    direct = bc.compare_all(scores.subset(algorithms=["y", "x"]), rope=0.01, seed=1)
    assert (pairs[0]["dataset"]["probabilities"]["y better"]
            == pytest.approx(direct.table.dataset_p_right.iloc[0]))
    # an unknown name fails before any fit, as the names of compare do
    assert main(["rank", str(broken), "--algorithms", "x,Y"]) == 2
    assert "unknown algorithm 'Y' (did you mean 'y'?)" in capsys.readouterr().err
