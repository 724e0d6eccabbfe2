"""Where the native route keeps its compiled modules, and that a new process reuses them.

Its draws, errors and threading are tested against pystan's public route in
test_httpstan_direct.py (every test there runs for both fast routes).
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bayescomp import backends

pytestmark = pytest.mark.stan

DATA = {"n": 10, "rho": 0.1, "mean_diff": 0.01, "ss": 0.004}


@pytest.fixture(scope="module")
def native(pystan_backend):
    from bayescomp import _stan_native

    if not _stan_native.available():
        pytest.skip("httpstan 4 with its headers is needed for the native route")
    return _stan_native


def test_modules_live_in_the_user_cache_one_per_program(native, tmp_path, monkeypatch):
    import platformdirs

    monkeypatch.chdir(tmp_path)
    name, code = backends._program("correlated")
    native.sample_native(name, code, backends._to_stan_data(DATA), chains=2, iter_warmup=50,
                         iter_sampling=50, seed=1, adapt_delta=0.8, max_treedepth=10,
                         inits=None, show_progress=False)
    path = native._module_path(native._module_name(code))
    assert path.is_file()
    assert Path(platformdirs.user_cache_dir("bayescomp")) in path.parents
    assert native._module_name(code) != native._module_name(code + "\n// another program")
    assert list(tmp_path.iterdir()) == []  # nothing built or left in the working directory


def test_a_new_process_does_not_recompile(native, tmp_path):
    name, code = backends._program("correlated")
    native._load(name, code, False)  # built here (or earlier), if not cached yet
    # In a fresh interpreter any build would start a child process: forbid it, then sample.
    script = (
        "import subprocess, sys\n"
        "def refuse(*args, **kwargs):\n"
        "    raise AssertionError('recompiled: ' + repr(args))\n"
        "subprocess.run = refuse\n"
        "from bayescomp import backends\n"
        "from bayescomp._stan_native import sample_native\n"
        "name, code = backends._program('correlated')\n"
        f"idata, _ = sample_native(name, code, {DATA!r}, chains=2, iter_warmup=50,\n"
        "    iter_sampling=50, seed=3, adapt_delta=0.8, max_treedepth=10, inits=None,\n"
        "    show_progress=False)\n"
        "print(idata.posterior['mu'].shape)\n"
    )
    import bayescomp

    # the bayescomp under test, whether installed or a checkout on a relative PYTHONPATH
    path = os.pathsep.join([str(Path(bayescomp.__file__).parent.parent),
                            os.environ.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, env=dict(os.environ, BAYESCOMP_PYSTAN_ROUTE="native",
                                              PYTHONPATH=path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(2, 50)"


def test_a_module_that_does_not_load_is_a_failed_build(native, tmp_path, monkeypatch):
    """Loading can fail where the build succeeded (on Linux the module uses initial-exec TLS,
    which needs room glibc may lack): that is a DriverBuildError, which backends.sample
    answers with httpstan's own module (test above), not a crash."""
    import importlib.machinery

    broken = tmp_path / ("broken" + importlib.machinery.EXTENSION_SUFFIXES[0])
    broken.write_bytes(b"not a shared object")
    monkeypatch.setattr(native, "_module_path", lambda module_name: broken)
    with pytest.raises(native.DriverBuildError, match="'broken' could not be loaded"):
        native._load("broken", "// a program that is never compiled\n", False)


def test_a_program_stanc_rejects_is_an_error_not_a_fallback(native):
    with pytest.raises(RuntimeError, match=r"(?s)could not compile.*Syntax error.*expected after variable declaration") as error:
        native._load("broken", "parameters { real x } model { }", False)
    assert not isinstance(error.value, native.DriverBuildError)


def test_a_failed_driver_build_falls_back_to_httpstans_module(native, monkeypatch):
    from bayescomp import _httpstan_direct

    def failed_build(*args, **kwargs):
        raise native.DriverBuildError("pystan's toolchain could not compile: (a linker error)")

    settings = dict(chains=2, iter_warmup=50, iter_sampling=50, seed=4)
    monkeypatch.setattr(native, "sample_native", failed_build)
    with pytest.warns(RuntimeWarning, match="falls back to httpstan's compiled module"):
        idata = backends.sample("correlated", DATA, backend="pystan", **settings)
    name, code = backends._program("correlated")
    expected, _ = _httpstan_direct.sample_direct(
        name, code, backends._to_stan_data(DATA), adapt_delta=0.8, max_treedepth=10,
        inits=None, show_progress=False, **settings)
    np.testing.assert_array_equal(idata.posterior["mu"], expected.posterior["mu"])


INTERRUPT_SCRIPT = """
import asyncio, os, signal, threading, time
from bayescomp import backends
from bayescomp._stan_native import sample_native
data = {data!r}
name, code = backends._program("correlated")
long_fit = dict(chains=2, iter_warmup=20_000_000, iter_sampling=10, seed=1)  # minutes
sample_native(name, code, data, chains=1, iter_warmup=10, iter_sampling=10, seed=1,
              adapt_delta=0.8, max_treedepth=10, inits=None, show_progress=False)  # loaded

def interrupted_after(call):
    threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
    start = time.perf_counter()
    try:
        call()
    except KeyboardInterrupt:
        return time.perf_counter() - start
    raise AssertionError("not interrupted")

print(interrupted_after(lambda: sample_native(
    name, code, data, adapt_delta=0.8, max_treedepth=10, inits=None, show_progress=False,
    **long_fit)))

async def in_a_running_loop():  # as in Jupyter: the fit runs in a worker thread
    # asyncio.run turns the first SIGINT into a task cancellation, which a blocked loop never
    # sees; ipykernel raises KeyboardInterrupt, as Python's default handler does
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return backends.sample("correlated", data, backend="pystan", **long_fit)

print(interrupted_after(lambda: asyncio.run(in_a_running_loop())))
print(threading.active_count())
"""


def test_keyboard_interrupt_stops_the_chains(native, tmp_path):
    import bayescomp

    path = os.pathsep.join([str(Path(bayescomp.__file__).parent.parent),
                            os.environ.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", INTERRUPT_SCRIPT.format(data=DATA)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, BAYESCOMP_PYSTAN_ROUTE="native", PYTHONPATH=path))
    assert done.returncode == 0, done.stderr
    direct, in_loop, threads = done.stdout.split()
    # 20 million warm-up iterations take minutes; the interrupt lands after 1 s and the
    # chains stop at their next iteration
    assert 0.9 < float(direct) < 10 and 0.9 < float(in_loop) < 10
    assert int(threads) == 1  # no chain left running
