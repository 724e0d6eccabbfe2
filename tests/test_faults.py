"""Faults done for real to the cache of compiled Stan programs (issue 16), each in a child
process with its own cache directory (``BAYESCOMP_CACHE_DIR``): a module truncated at several
sizes, a compile killed with SIGKILL then run again, two concurrent first runs, Ctrl-C during a
compile. The documented outcome each time: a damaged entry is rebuilt with one warning and never
loaded, a killed build leaves no entry and no lock held, one build serves concurrent runs, an
interrupted compile exits 130 and leaves no entry. The program is stan/correlated.stan (the
quickest to compile); it is compiled once per engine into a session template that each test
copies, and only the tests that must rebuild compile again. (Ctrl-C during sampling and
unwritable outputs: tests/test_cli_faults.py.)
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import bayescomp as bc
from bayescomp import sampling

pytestmark = [pytest.mark.slow, pytest.mark.stan]

ENGINES = {"pystan": "native", "cmdstanpy": "cmdstan"}

FIT = """
import json, sys, warnings
import numpy as np
from bayescomp import sampling
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("ignore")
    warnings.simplefilter("always", sampling.EngineWarning)
    idata = sampling.sample("correlated", dict(n=10, rho=0.1, mean_diff=0.004, ss=0.002),
                            backend=sys.argv[1], seed=7, chains=2, iter_warmup=150,
                            iter_sampling=100)
np.save(sys.argv[2], idata.posterior["mu"].values)
print(json.dumps(dict(route=idata.attrs["route"],
                      warnings=[f"{w.category.__name__}: {w.message}" for w in caught])))
"""


def fit_command(backend, out):
    return [sys.executable, "-c", FIT, backend, str(out)]


def environment(cache):
    """The child's environment: ``cache``, and a temporary directory beside it. A child killed
    with SIGKILL cannot remove its temporary files (the build's working directories, the
    compiler's); they land there, inside this test's directory, not in the machine's /tmp."""
    scratch_dir = cache.parent / "tmp"
    scratch_dir.mkdir(exist_ok=True)
    return dict(os.environ, BAYESCOMP_CACHE_DIR=str(cache), TMPDIR=str(scratch_dir))


def fit(backend, cache, out):
    """A fit in a child process on ``cache``; (completed process, its report)."""
    done = subprocess.run(fit_command(backend, out), env=environment(cache), cwd=cache.parent,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-3000:]}"
    return done, json.loads(done.stdout.strip().splitlines()[-1])


def entries(cache):
    """cache_info's entries for ``cache``, read in a child (the cache path is read per call,
    but keeping this process's environment untouched keeps the other tests' caches)."""
    code = "import json; from bayescomp import sampling; print(json.dumps(sampling.cache_info()))"
    done = subprocess.run([sys.executable, "-c", code], env=environment(cache),
                          capture_output=True, text=True, timeout=300, check=True)
    info = json.loads(done.stdout)
    assert info["path"] == str(cache)
    return [e for e in info["entries"] if e["route"] != "public"]


def module_of(entry):
    directory = Path(entry["path"])
    if entry["engine"] == "cmdstanpy":
        return directory / entry["program"]
    return next(p for p in directory.iterdir() if p.name.startswith(directory.name + "."))


@pytest.fixture(scope="session")
def scratch():
    directory = Path(tempfile.mkdtemp(prefix="bayescomp-test-faults-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session", params=list(ENGINES))
def template(request, scratch):
    """(backend, cache directory holding correlated.stan compiled, its draws for the seed)."""
    backend = request.param
    if sampling.ENGINES[backend].unavailable() is not None:
        pytest.skip(sampling.ENGINES[backend].unavailable())
    cache = scratch / f"template-{backend}"
    cache.mkdir()
    _, report = fit(backend, cache, scratch / f"{backend}.npy")
    assert report["route"] == ENGINES[backend] and report["warnings"] == []
    return backend, cache, np.load(scratch / f"{backend}.npy")


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


def copy_of(template, cache):
    backend, source, draws = template
    shutil.copytree(source, cache)
    [entry] = entries(cache)
    assert entry["status"] == "ok" and entry["program"] == "correlated"
    return backend, entry, draws


def truncate(path, size):
    size = path.stat().st_size // 2 if size == "half" else size
    with open(path, "r+b") as fh:
        fh.truncate(size)
    return size


@pytest.mark.parametrize("size", [100_000, "half", 0])
def test_a_truncated_module_is_listed_as_damaged(template, cache, size):
    backend, entry, _ = copy_of(template, cache)
    size = truncate(module_of(entry), size)
    [listed] = entries(cache)
    assert listed["status"].startswith(f"damaged: it has {size} bytes, "), listed


# each rebuild is a compile (a minute on the native route), so one size per engine: the
# listing test above sees every size as damaged, and a damaged module of any size takes the
# same path to its rebuild (the first 100,000 bytes of a module are what would load and fault)
REBUILT_SIZES = {"pystan": (100_000,), "cmdstanpy": ("half",)}


def test_a_truncated_module_is_rebuilt_never_loaded(template, tmp_path):
    backend = template[0]
    for size in REBUILT_SIZES[backend]:
        cache = tmp_path / f"cache-{size}"
        backend, entry, draws = copy_of(template, cache)
        size = truncate(module_of(entry), size)
        done, report = fit(backend, cache, tmp_path / "draws.npy")   # no SIGBUS: exit 0
        damaged = [w for w in report["warnings"] if "damaged" in w]
        assert len(damaged) == 1 and report["warnings"] == damaged, report
        assert f"it has {size} bytes" in damaged[0] and damaged[0].endswith("rebuilding it")
        assert "\n" not in damaged[0]
        assert report["route"] == ENGINES[backend]   # the same route: no silent fallback
        np.testing.assert_array_equal(np.load(tmp_path / "draws.npy"), draws)
        [rebuilt] = entries(cache)
        assert rebuilt["status"] == "ok" and module_of(rebuilt).stat().st_size > size


def wait_for(condition, what, seconds=600):
    for _ in range(int(seconds / 0.2)):
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"waited {seconds} s for {what}")


def parts(cache):
    return sorted(p.name for p in cache.rglob("*.part"))


def test_a_killed_compile_then_two_concurrent_runs_share_one_build(template, cache, tmp_path):
    backend, _, draws = template
    cache.mkdir()
    child = subprocess.Popen(fit_command(backend, tmp_path / "never.npy"), env=environment(cache),
                             cwd=tmp_path, start_new_session=True, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    wait_for(lambda: parts(cache), "the build to start")
    time.sleep(5)   # well into the compiler (waiting only; nothing is timed)
    os.killpg(child.pid, signal.SIGKILL)   # the run and its compiler, as `kill -9 -PGID`
    child.wait()
    assert parts(cache) and entries(cache) == []   # what the build left is no entry

    runs = [subprocess.Popen(fit_command(backend, tmp_path / f"run{i}.npy"), cwd=tmp_path,
                             env=environment(cache), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for i in range(2)]
    outputs = [run.communicate(timeout=1200) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    waited = [err for _, err in outputs if "waiting for another process compiling" in err]
    assert len(waited) == 1, outputs   # one built (the lock was free), the other waited
    assert "bayescomp: waiting for another process compiling Stan program 'correlated'" in waited[0]
    for i, (out, _) in enumerate(outputs):
        report = json.loads(out.strip().splitlines()[-1])
        assert report == dict(route=ENGINES[backend], warnings=[])   # nothing damaged, no fallback
        np.testing.assert_array_equal(np.load(tmp_path / f"run{i}.npy"), draws)
    [entry] = entries(cache)
    assert entry["status"] == "ok" and parts(cache) == []   # the killed build's leftovers went


@pytest.fixture
def scores_csv(tmp_path, write_long_csv):
    sim = bc.simulate.collection(3, 10, delta0=0.02, sigma0=0.01, sigma=0.03, rho=0.1, seed=4)
    path = write_long_csv(sim.scores, tmp_path / "scores.csv")
    return path


@pytest.mark.parametrize("backend", list(ENGINES))
def test_ctrl_c_during_a_compile_exits_130_and_leaves_no_entry(backend, cache, scores_csv,
                                                                tmp_path):
    if sampling.ENGINES[backend].unavailable() is not None:
        pytest.skip(sampling.ENGINES[backend].unavailable())
    cache.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "bayescomp", "compare", str(scores_csv), "--first", "a",
         "--second", "b", "--backend", backend, "--out", str(tmp_path / "report")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, start_new_session=True,
        env=dict(environment(cache), MPLCONFIGDIR=str(tmp_path / "mpl")))
    seen = b""
    while b"compiling the Stan program 'hierarchical'" not in seen:
        chunk = os.read(child.stderr.fileno(), 4096)
        assert chunk, f"the child ended first: {seen!r}"
        seen += chunk
    wait_for(lambda: parts(cache), "the build to start")
    time.sleep(3)   # into the compiler (waiting only; nothing is timed)
    os.killpg(child.pid, signal.SIGINT)   # as Ctrl-C does: the whole foreground group
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == 130, (seen + stderr).decode()
    assert stderr.decode().strip().splitlines()[-1] == \
        "bayescomp: interrupted; nothing was written (exit code 130)"
    assert "Traceback" not in stderr.decode()
    assert entries(cache) == [] and parts(cache) == []
    assert not (tmp_path / "report").exists()
