"""The wheel carries the Stan sources and nothing a compiler wrote beside them (issue 30).

cmdstanpy writes an executable (and a .hpp) next to a program it compiles; a developer who
compiled ``stan/hierarchical.stan`` in place once committed two such executables, and the
wheel shipped them. The wheel is built here from a copy of the project with such build
output planted in ``stan/``.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def sources() -> set[str]:
    return {p.name for p in (ROOT / "stan").iterdir() if p.suffix in (".stan", ".stanfunctions")}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    project = tmp_path_factory.mktemp("project")
    for name in ("pyproject.toml", "README.md", "LICENSE", ".gitignore"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "bayescomp", project / "bayescomp",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "stan", project / "stan",
                    ignore=lambda _, names: [n for n in names if Path(n).suffix not in
                                             (".stan", ".stanfunctions")])
    # what cmdstanpy leaves after compiling in place
    (project / "stan" / "hierarchical").write_bytes(b"\x7fELF build output")
    (project / "stan" / "hierarchical.hpp").write_text("// generated C++")
    out = project / "dist"
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                             str(out), str(project)], capture_output=True, text=True)
    if result.returncode != 0 and "hatchling" in result.stderr and "No matching" in result.stderr:
        pytest.skip("no package index to fetch the build backend from")
    assert result.returncode == 0, result.stderr
    (built,) = out.glob("bayescomp-*.whl")
    return built


def test_pyproject_lists_every_stan_source():
    text = (ROOT / "pyproject.toml").read_text()
    for name in sources():
        assert f'"stan/{name}" = "bayescomp/stan/{name}"' in text


def test_wheel_ships_stan_sources_only(wheel):
    with zipfile.ZipFile(wheel) as archive:
        shipped = {Path(name).name for name in archive.namelist()
                   if name.startswith("bayescomp/stan/")}
    assert shipped == sources()


def test_repository_tracks_no_build_output():
    listed = subprocess.run(["git", "ls-files", "stan"], cwd=ROOT, capture_output=True,
                            text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    tracked = {Path(name).name for name in listed.stdout.split()}
    assert tracked == sources()
