"""The pystan backend's fast route: Stan's sampler in-process, built with httpstan's toolchain.

httpstan's compiled driver writes every draw twice (the sample and the diagnostic writer),
as JSON with a field name per value and one socket write per draw and writer. Measured on
``stan/hierarchical.stan`` with 54 datasets (60 parameters): about 45 microseconds per
iteration against 2 per leapfrog step, i.e. most of a chain's time. This route compiles the
Stan program's C++ (from httpstan's stanc) together with ``_stan_native.cpp``, a small
pybind11 driver that calls the same ``stan::services::sample::hmc_nuts_diag_e_adapt`` with
writers that fill one array and drop the diagnostic copy, and releases the GIL so that the
chains run as threads of this process. Same services function, same arguments (httpstan's
defaults), same seeds: a seed gives the very draws of pystan's public route (the tests check
this bit for bit).

Built modules live in ``platformdirs.user_cache_dir("bayescomp")/stan-native/``, one per
program, driver, httpstan version and interpreter, built once in a child process whose
working directory is a temporary one (setuptools writes ``./build``). What it uses of
httpstan: ``httpstan.compile.compile`` (stanc), its headers, libraries and compiler flags,
``httpstan.utils._split_data`` and ``httpstan.services.arguments`` for the defaults.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

_DRIVER = Path(__file__).with_name("_stan_native.cpp")
_MODULES: dict[str, object] = {}
_BUILD_LOCK = threading.Lock()


def _httpstan_dir() -> Path:
    import httpstan

    return Path(httpstan.__file__).resolve().parent


def _module_name(code: str) -> str:
    import httpstan

    key = hashlib.sha256("\0".join([
        code, _DRIVER.read_text(), " ".join(_compile_flags()), httpstan.__version__,
        sys.version, sysconfig.get_platform(),
    ]).encode()).hexdigest()
    return f"bayescomp_stan_{key[:20]}"


def _module_path(module_name: str) -> Path:
    import platformdirs

    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return Path(platformdirs.user_cache_dir("bayescomp")) / "stan-native" / module_name / (
        module_name + suffix)


def available() -> bool:
    """Whether this route can be used: httpstan 4 with its headers and a C++ driver source."""
    try:
        import httpstan
        import httpstan.compile  # noqa: F401
        import httpstan.utils
    except ImportError:
        return False
    return (httpstan.__version__.startswith("4.") and _DRIVER.is_file()
            and (_httpstan_dir() / "include" / "pybind11").is_dir()
            and hasattr(httpstan.utils, "_split_data"))


class DriverBuildError(RuntimeError):
    """The C++ build of a program that stanc accepted failed (a toolchain problem, not the
    program's): the pystan backend then falls back to httpstan's own compiled module."""


_STANC_REFUSED = 3  # the build's exit code when stanc rejects the program


def _compile_flags() -> list[str]:
    flags = ["-O3", "-std=c++14", "-Wno-sign-compare"]
    if platform.system() == "Linux":
        # Stan's autodiff stack is thread_local (STAN_THREADS). In a shared library every
        # access then calls __tls_get_addr, 7% of a leapfrog step; initial-exec reads it at a
        # fixed offset. The module's 16 bytes of TLS fit the room glibc keeps for modules
        # loaded later; should they not, loading fails and _load falls back.
        flags.append("-ftls-model=initial-exec")
    return flags


def _build(module_name: str, code: str, target: Path) -> None:
    """Compile ``code`` and the driver into the extension module ``target`` (in this process)."""
    import httpstan.build_ext
    import httpstan.compile
    import setuptools

    package = _httpstan_dir()
    try:
        cpp, _ = httpstan.compile.compile(code, f"model_{module_name}")
    except ValueError as exc:  # a syntax or semantic error in the program
        sys.stderr.write(str(exc))
        sys.exit(_STANC_REFUSED)
    libraries = ["sundials_cvodes", "sundials_idas", "sundials_nvecserial", "tbb"]
    if platform.system() == "Darwin":  # as httpstan links its own modules
        libraries += ["tbbmalloc", "tbbmalloc_proxy"]
    with tempfile.TemporaryDirectory(prefix="bayescomp-build-") as scratch:
        source = Path(scratch) / f"{module_name}.cpp"
        source.write_text(cpp + "\n" + _DRIVER.read_text())
        extension = setuptools.Extension(
            module_name, language="c++", sources=[str(source)],
            define_macros=[("BOOST_DISABLE_ASSERTS", None),
                           ("BOOST_PHOENIX_NO_VARIADIC_EXPRESSION", None),
                           ("STAN_THREADS", None), ("_REENTRANT", None),
                           ("_GLIBCXX_USE_CXX11_ABI", "0"), ("BAYESCOMP_MODULE", module_name)],
            include_dirs=[str(package / "include")],
            library_dirs=[str(package / "lib")],
            libraries=libraries,
            extra_compile_args=_compile_flags(),
            extra_link_args=[f"-Wl,-rpath,{package / 'lib'}"],
        )
        output = httpstan.build_ext.run_build_ext([extension], scratch)
        built = next(Path(scratch).glob(f"{module_name}*{importlib.machinery.EXTENSION_SUFFIXES[0]}"),
                     None)
        if built is None:
            raise RuntimeError(f"no module built:\n{output}")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + f".{os.getpid()}.part")
        shutil.copyfile(built, partial)
        os.replace(partial, target)  # atomic: a concurrent build or reader sees all or nothing


def _load(name: str, code: str, show_progress: bool):
    module_name = _module_name(code)
    with _BUILD_LOCK:
        if module_name in _MODULES:
            return _MODULES[module_name]
        target = _module_path(module_name)
        if not target.is_file():
            from .backends import _log

            _log.info("compiling Stan program %r for the pystan backend (once per Stan version)",
                      name)
            with tempfile.TemporaryDirectory(prefix="bayescomp-build-") as cwd:
                done = subprocess.run(
                    [sys.executable, "-m", "bayescomp._stan_native", module_name, str(target)],
                    input=code, cwd=cwd, capture_output=True, text=True,
                    env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                        [str(Path(__file__).resolve().parent.parent)]
                        + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])))
            if show_progress:
                sys.stderr.write(done.stdout + done.stderr)
            if not target.is_file():
                error = RuntimeError if done.returncode == _STANC_REFUSED else DriverBuildError
                raise error(f"pystan's toolchain could not compile Stan program {name!r}:"
                            f"\n{done.stdout}{done.stderr}")
        spec = importlib.util.spec_from_file_location(module_name, target)
        try:   # the shared object is opened by module_from_spec
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except ImportError as exc:   # e.g. "cannot allocate memory in static TLS block"
            raise DriverBuildError(f"the compiled Stan program {name!r} could not be loaded: "
                                   f"{exc}") from exc
        _MODULES[module_name] = module
        return module


def cancel_running() -> None:
    """Stop every chain this route is running in this process, at its next iteration."""
    for module in list(_MODULES.values()):
        module.cancel_all()


def _settings(seed, iter_warmup, iter_sampling, adapt_delta, max_treedepth) -> dict:
    """httpstan's defaults for the sampler's arguments, then what pystan would send."""
    import httpstan.services.arguments as arguments

    names = ("init_radius", "num_thin", "save_warmup", "refresh", "stepsize", "stepsize_jitter",
             "gamma", "kappa", "t0", "init_buffer", "term_buffer", "window")
    settings = {name: arguments.lookup_default(arguments.Method.SAMPLE, name) for name in names}
    settings.update(random_seed=int(seed), num_warmup=int(iter_warmup),
                    num_samples=int(iter_sampling), delta=float(adapt_delta),
                    max_depth=int(max_treedepth))
    return settings


def sample_native(name, code, data, *, chains, iter_warmup, iter_sampling, seed, adapt_delta,
                  max_treedepth, inits, show_progress):
    """Sample like :func:`bayescomp.backends._sample_pystan_public`, in this process.

    Arguments as for :func:`bayescomp._httpstan_direct.sample_direct`; returns
    ``(arviz.InferenceData, stan_version)`` with the same groups, names, shapes and dtypes.
    """
    import httpstan.models
    import httpstan.utils

    from . import backends
    from ._httpstan_direct import _assemble, _chain_inits, _failure_message

    module = _load(name, code, show_progress)
    if not 0 <= int(seed) <= 2**31 - 1:
        raise RuntimeError(f"Stan's sampler takes a seed in [0, 2**31 - 1] (a C int), got {seed}")
    settings = _settings(seed, iter_warmup, iter_sampling, adapt_delta, max_treedepth)
    data_parts = httpstan.utils._split_data(data)
    try:  # the data are checked here, as pystan's build does (e.g. a reject() in transformed data)
        param_names, dims, constrained_names = module.describe(data_parts)
    except Exception as exc:
        raise RuntimeError(f"Stan program {name!r} refused the data: {exc}") from None
    chain_inits = _chain_inits(inits, chains, settings)

    s = settings
    def run(chain):
        return module.sample(
            data_parts, httpstan.utils._split_data(chain_inits[chain - 1]), s["random_seed"], chain,
            s["init_radius"], s["num_warmup"], s["num_samples"], s["num_thin"], s["save_warmup"],
            s["refresh"], s["stepsize"], s["stepsize_jitter"], s["max_depth"], s["delta"],
            s["gamma"], s["kappa"], s["t0"], s["init_buffer"], s["term_buffer"], s["window"],
            generation)

    generation = module.generation()
    pool = ThreadPoolExecutor(max_workers=min(chains, os.cpu_count() or 1))
    try:
        raw = list(pool.map(run, range(1, chains + 1)))
    except BaseException:  # KeyboardInterrupt: stop the chains instead of waiting for them
        module.cancel_all()
        raise
    finally:
        pool.shutdown(wait=True)
    results = [(code, error, list(columns),
                np.frombuffer(table, dtype=np.float64).reshape(-1, max(len(columns), 1)),
                messages, notes)
               for code, error, columns, table, messages, notes in raw]
    failures = [(number, RuntimeError(error) if error else code, messages)
                for number, (code, error, _, _, messages, _) in enumerate(results, 1)
                if code != 0 or error]
    if failures:
        raise RuntimeError(_failure_message(name, failures))
    if show_progress:
        for number, result in enumerate(results, 1):
            for line in result[4]:
                shown = line.split(":", 1)[-1]
                if shown.strip():
                    sys.stderr.write(f"chain {number}: {shown}\n")

    columns = results[0][2]
    for number, result in enumerate(results, 1):
        if result[2] != columns:
            raise RuntimeError(f"chain {number} returned columns {result[2]}, chain 1 {columns}")
    idata = _assemble(name, code, columns, [result[3] for result in results],
                      [result[4] for result in results], settings, list(param_names),
                      [list(d) for d in dims], list(constrained_names),
                      httpstan.models.calculate_model_name(code))
    return idata, backends._pystan_stan_version()


if __name__ == "__main__":  # the child process of _load: python -m bayescomp._stan_native NAME TARGET
    _build(sys.argv[1], sys.stdin.read(), Path(sys.argv[2]))
