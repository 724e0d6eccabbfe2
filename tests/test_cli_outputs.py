"""What the command line leaves behind: an --out directory holds one analysis (another one is
refused, or replaced with --overwrite, file by file), outputs take the user's umask, and
every command's JSON is the same envelope."""
import json
import os
import stat

import pytest

import bayescomp as bc
from bayescomp.cli.export import SCHEMA_VERSION
from bayescomp.cli.main import main


@pytest.fixture
def csv(tmp_path, write_long_csv):
    sim = bc.simulate.collection(4, 20, delta0=0.02, sigma0=0.01, sigma=0.03, rho=0.1, seed=4)
    return write_long_csv(sim.scores, tmp_path / "scores.csv")


def contents(directory):
    return {p.name: p.read_bytes() for p in directory.iterdir()}


# --- --out and --overwrite ----------------------------------------------------------------

def test_a_second_analysis_into_the_same_out_needs_overwrite(csv, tmp_path, capsys):
    out = tmp_path / "report"
    one_dataset = ["compare", str(csv), "--first", "a", "--second", "b", "--dataset", "1",
                   "--out", str(out)]
    assert main(one_dataset) == 0
    assert (out / "report.md").read_text().splitlines()[-1] == \
        "<!-- bayescomp analysis: report.md, posterior.png, differences.png -->"
    (out / "notes.txt").write_text("the user's own file")
    before = contents(out)
    capsys.readouterr()

    across = ["compare", str(csv), "--first", "a", "--second", "b", "--no-stan",
              "--out", str(out)]
    assert main(across) == 2
    captured = capsys.readouterr()
    assert captured.err == (f"bayescomp: error: --out {out}: holds another analysis (report.md, "
                            "posterior.png, differences.png); give a new directory, or "
                            "--overwrite to replace that analysis\n")
    assert captured.out == ""   # refused before any work
    assert contents(out) == before

    assert main(across + ["--overwrite"]) == 0
    err = capsys.readouterr().err
    assert err == (f"wrote {out / 'report.md'} and its figures in {out}, replacing the earlier "
                   "analysis there (report.md, posterior.png, differences.png)\n")
    # the earlier figures are gone, the user's file stays; the new report has no figures
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "report.md"]
    assert (out / "notes.txt").read_text() == "the user's own file"
    report = (out / "report.md").read_text()
    assert "Baselines across 4 datasets: a - b" in report
    assert report.splitlines()[-1] == "<!-- bayescomp analysis: report.md -->"


def test_overwrite_removes_only_the_files_its_report_lists(csv, tmp_path, capsys):
    out = tmp_path / "report"
    out.mkdir()
    # a report.md the package did not write: it alone is the earlier analysis; a listed
    # name that leads outside the directory is not followed
    (out / "report.md").write_text("# notes\n\n<!-- bayescomp analysis: report.md, "
                                   "../scores.csv, figure.png -->\n")
    (out / "figure.png").write_bytes(b"png")
    (out / "other.png").write_bytes(b"png")
    assert main(["compare", str(csv), "--first", "a", "--second", "b", "--no-stan", "--out",
                 str(out), "--overwrite"]) == 0
    assert "replacing the earlier analysis there (report.md, figure.png)" in \
        capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["other.png", "report.md"]
    assert csv.is_file()


def test_overwrite_into_an_empty_directory_says_nothing_of_replacing(csv, tmp_path, capsys):
    out = tmp_path / "empty"
    out.mkdir()
    assert main(["compare", str(csv), "--first", "a", "--second", "b", "--no-stan", "--out",
                 str(out), "--overwrite"]) == 0
    assert capsys.readouterr().err == f"wrote {out / 'report.md'} and its figures in {out}\n"


@pytest.mark.parametrize("umask, directory_mode, file_mode",
                         [(0o022, 0o755, 0o644), (0o027, 0o750, 0o640), (0o077, 0o700, 0o600)])
def test_outputs_take_the_users_umask(csv, tmp_path, umask, directory_mode, file_mode):
    parent = tmp_path / "new"
    out, target, table = parent / "report", parent / "one.json", tmp_path / "one.csv"
    previous = os.umask(umask)
    try:
        assert main(["compare", str(csv), "--first", "a", "--second", "b", "--dataset", "1",
                     "--out", str(out), "--json", str(target), "--csv", str(table)]) == 0
    finally:
        os.umask(previous)
    assert [oct(stat.S_IMODE(d.stat().st_mode)) for d in (parent, out)] == \
        [oct(directory_mode)] * 2
    files = [out / "report.md", out / "posterior.png", out / "differences.png", target, table]
    assert [oct(stat.S_IMODE(f.stat().st_mode)) for f in files] == [oct(file_mode)] * 5


# --- the JSON envelope ----------------------------------------------------------------------

def few_scores_csv(tmp_path):
    """One dataset, two algorithms, three scores each, in percent: two warnings."""
    path = tmp_path / "few.csv"
    rows = ["dataset,algorithm,run,fold,score"]
    for algorithm, values in (("a", [81.0, 83.5, 80.2]), ("b", [80.5, 82.0, 81.1])):
        rows += [f"d1,{algorithm},0,{k},{v}" for k, v in enumerate(values)]
    path.write_text("\n".join(rows) + "\n")
    return path


def check_envelope(document, command, code, err):
    assert list(document)[:3] == ["schema_version", "bayescomp", "command"]
    assert list(document)[-2:] == ["exit_code", "warnings"]
    assert (document["schema_version"], document["bayescomp"], document["command"]) == \
        (SCHEMA_VERSION, bc.__version__, command)
    assert document["exit_code"] == code
    assert document["warnings"] == [line[len("warning: "):] for line in err.splitlines()
                                    if line.startswith("warning: ")]


@pytest.mark.parametrize("command", ["compare", "all-pairs", "demo", "cache"])
def test_every_command_writes_the_same_json_envelope(command, tmp_path, capsys):
    few = few_scores_csv(tmp_path)
    target = tmp_path / "out.json"
    arguments = {"compare": ["compare", str(few), "--first", "a", "--second", "b"],
                 "all-pairs": ["all-pairs", str(few)],
                 "demo": ["demo", "--no-stan"],
                 "cache": ["cache"]}[command]
    code = main(arguments + ["--json", str(target)])
    document = json.loads(target.read_text())
    check_envelope(document, command, code, capsys.readouterr().err)
    assert code == 0
    if command in ("compare", "all-pairs"):   # the few scores, then the ROPE in percent
        assert document["warnings"][0].startswith(f"{few}: dataset 'd1' (3 scores): fewer "
                                                  "than 5 scores")
    if command == "cache":
        assert document["cache"] == bc.sampling.cache_info()


@pytest.mark.stan
def test_rank_writes_the_json_envelope(csv, tmp_path, capsys, stan_backend):
    target = tmp_path / "rank.json"
    code = main(["rank", str(csv), "--backend", stan_backend, "--chains", "2",
                 "--iter-warmup", "300", "--iter-sampling", "300", "--json", str(target)])
    document = json.loads(target.read_text())
    check_envelope(document, "rank", code, capsys.readouterr().err)
    assert code == (0 if document["reliable"] else 1)
    assert (document["input"], document["seed"]) == (str(csv), 1)
    assert set(document["algorithms"]) == {"a", "b"}
