"""The pystan engine's "native" route: Stan's sampler in this process, built with pystan's toolchain.

httpstan's compiled driver writes every draw twice (sample and diagnostic writers) as JSON
with a field name per value, one socket write per draw and writer: for the 54-dataset
hierarchical model most of a chain's time. Here the Stan program's C++ (from httpstan's
stanc) is compiled together with ``_native_driver.cpp``, a small pybind11 driver calling
the same ``stan::services::sample::hmc_nuts_diag_e_adapt`` with writers that fill one array
and drop the diagnostic copy, and the chains run as threads of this process. Same services
function, arguments (httpstan's defaults) and seeds, and the C++ that CmdStan's stanc writes
with the same flags (:data:`~bayescomp.sampling.programs.STANC_FLAGS`): a seed gives the very
draws of the cmdstanpy engine (tested bit for bit). pystan's public route compiles without
those flags: the same draws where they change no arithmetic (tested), else the same posterior
with draws that part in rounding.

The cache heals: each module sits in ``<user cache>/stan-native/<module>/`` beside a record
of its size, SHA-256, program and toolchain; the entry is built in a staging directory and
renamed into place complete, so an interrupted or killed build leaves no entry. A module
whose record is missing or does not match is rebuilt (one warning saying so), never loaded. A lock file
per module makes concurrent first runs share one build. Modules are built without debug
information (``-g0``): 1 MB of code instead of 100 MB with it.

Static TLS. On Linux a module reads Stan's thread-local autodiff stack with the initial-exec
TLS model, which puts its 392 bytes of thread-local data in glibc's static TLS block: sized
when the process starts, it holds 4 such modules. The fifth fails to load ("cannot allocate
memory in static TLS block"), and that program is then built a second time with the default
(global-dynamic) model, which needs no static TLS, and loaded instead: a one-time compile,
and each of its leapfrog steps about 7% dearer.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from . import _httpstan
from ._cache import commit, file_lock, sha256, staging, user_cache
from .engine import Draws, EngineWarning, adaptation, adapted_metric
from .programs import STANC_FLAGS

_DRIVER = Path(__file__).with_name("_native_driver.cpp")
_MODULES: dict = {}
_BUILD_LOCK = threading.Lock()
_STANC_REFUSED = 3  # the build's exit code when stanc rejects the program
_INTERRUPTED = 130  # the build's exit code on SIGINT, whatever it was doing


class DriverBuildError(RuntimeError):
    """The driver could not be built or loaded (a toolchain problem, not the program's): the
    pystan engine then samples through pystan's public API."""


def unavailable() -> str | None:
    if not _DRIVER.is_file():
        return f"the driver's source {_DRIVER} is missing"
    return _httpstan.internals_usable()


def _toolchain(initial_exec: bool = True) -> dict:
    """Everything besides the program that the module depends on; ``initial_exec=False``:
    the default TLS model (module notes)."""
    try:
        settings = _httpstan.build_settings()
    except (RuntimeError, OSError, TypeError, SyntaxError) as exc:
        raise DriverBuildError(f"cannot read how httpstan builds its modules: {exc}") from exc
    flags = settings["flags"] + ["-g0"]  # after sysconfig's -g: no 100 MB of debug information
    if initial_exec and platform.system() == "Linux":
        # Stan's autodiff stack is thread_local (STAN_THREADS). In a shared library every
        # access then calls __tls_get_addr, 7% of a leapfrog step; initial-exec reads it at a
        # fixed offset. Should glibc lack the room for it, load() builds a copy without it.
        flags.append("-ftls-model=initial-exec")
    toolchain = dict(settings, flags=flags, stanc_flags=list(STANC_FLAGS),
                     httpstan=_httpstan.version(), python=sys.version,
                     platform=sysconfig.get_platform(),
                     driver=hashlib.sha256(_DRIVER.read_bytes()).hexdigest())
    return json.loads(json.dumps(toolchain))   # as the record will hold it: tuples are lists


def cache_dir() -> Path:
    return user_cache() / "stan-native"


def _paths(code: str, toolchain: dict):
    key = hashlib.sha256(json.dumps([code, toolchain], sort_keys=True).encode()).hexdigest()
    module_name = f"bayescomp_stan_{key[:20]}"
    directory = cache_dir() / module_name
    return module_name, directory / (module_name + importlib.machinery.EXTENSION_SUFFIXES[0]), \
        directory / "record.json"


def _damage(target: Path, record_path: Path, code: str, toolchain: dict) -> str | None:
    """None when ``target`` is the module its record describes, else what is wrong."""
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError):
        return "it has no readable record of its build (an interrupted build?)"
    size = target.stat().st_size
    if size != record.get("size"):
        return f"it has {size} bytes, {record.get('size')} when built"
    if record.get("program") != hashlib.sha256(code.encode()).hexdigest() \
            or record.get("toolchain") != toolchain:
        return "it was built from another program or toolchain"
    if sha256(target) != record.get("sha256"):
        return "its contents changed since it was built"
    return None


def _compile(name: str, code: str, show_progress: bool, initial_exec: bool = True) -> Path:
    """The verified module of ``code``, built first if missing or damaged."""
    toolchain = _toolchain(initial_exec)
    module_name, target, record_path = _paths(code, toolchain)
    if target.is_file() and _damage(target, record_path, code, toolchain) is None:
        return target
    with file_lock(target.parent.with_name(module_name + ".lock"), f"Stan program {name!r}"):
        if target.is_file():
            damage = _damage(target, record_path, code, toolchain)
            if damage is None:   # another process built it meanwhile
                return target
            warnings.warn(f"bayescomp: the compiled Stan program {name!r} in the cache "
                          f"({target}) is damaged: {damage}; rebuilding it", EngineWarning,
                          stacklevel=4)
        with staging(target.parent) as part:   # an entry exists only once complete
            built = part / target.name
            with tempfile.TemporaryDirectory(prefix="bayescomp-build-") as cwd:
                # a child process in an empty working directory: setuptools writes ./build
                done = subprocess.run(
                    [sys.executable, "-m", "bayescomp.sampling._native", module_name, str(built),
                     "initial-exec" if initial_exec else "default"],
                    input=code, cwd=cwd, capture_output=True, text=True,
                    env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                        [str(Path(__file__).resolve().parents[2])]
                        + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])))
            if show_progress:
                sys.stderr.write(done.stdout + done.stderr)
            if done.returncode in (-signal.SIGINT, _INTERRUPTED):   # Ctrl-C reached it too
                raise KeyboardInterrupt
            if done.returncode < 0:   # killed: not a toolchain problem, so no fallback build
                raise RuntimeError(f"the compile of Stan program {name!r} was killed by signal "
                                   f"{-done.returncode}; run again to rebuild it")
            if done.returncode != 0 or not built.is_file():
                error = RuntimeError if done.returncode == _STANC_REFUSED else DriverBuildError
                raise error(f"pystan's toolchain could not compile Stan program {name!r}:"
                            f"\n{done.stdout}{done.stderr}")
            record = dict(size=built.stat().st_size, sha256=sha256(built), name=name,
                          program=hashlib.sha256(code.encode()).hexdigest(), toolchain=toolchain)
            (part / record_path.name).write_text(json.dumps(record, indent=1))
            commit(part, target.parent)
    return target


def _build(module_name: str, code: str, target: Path, initial_exec: bool = True) -> None:
    """In the child process: stanc, then the program and the driver into one module."""
    import setuptools

    toolchain = _toolchain(initial_exec)
    try:
        cpp = _httpstan.stanc(code, f"model_{module_name}", tuple(toolchain["stanc_flags"]))
    except ValueError as exc:  # a syntax or semantic error in the program
        sys.stderr.write(str(exc))
        sys.exit(_STANC_REFUSED)
    with tempfile.TemporaryDirectory(prefix="bayescomp-build-") as scratch:
        source = Path(scratch) / f"{module_name}.cpp"
        source.write_text(cpp + "\n" + _DRIVER.read_text())
        extension = setuptools.Extension(
            module_name, language="c++", sources=[str(source)],
            define_macros=[tuple(m) for m in toolchain["macros"]] + [("BAYESCOMP_MODULE", module_name)],
            include_dirs=toolchain["include_dirs"], library_dirs=toolchain["library_dirs"],
            libraries=toolchain["libraries"], extra_compile_args=toolchain["flags"],
            extra_link_args=toolchain["link_args"])
        output = _httpstan.build_extension(extension, scratch)
        built = next(Path(scratch).glob(f"{module_name}*{importlib.machinery.EXTENSION_SUFFIXES[0]}"),
                     None)
        if built is None:
            sys.stderr.write(f"no module built:\n{output}")
            sys.exit(1)
        partial = target.with_name(target.name + f".{os.getpid()}.part")
        shutil.copyfile(built, partial)
        os.replace(partial, target)  # atomic: a reader sees all or nothing


def load(name: str, code: str, show_progress: bool = False):
    """The loaded module of ``code`` (compiled first if needed); DriverBuildError if it
    cannot be built or loaded, RuntimeError if stanc refuses the program."""
    with _BUILD_LOCK:
        key = hashlib.sha256(code.encode()).hexdigest()
        if key in _MODULES:
            return _MODULES[key]
        for initial_exec in (True, False):
            try:
                target = _compile(name, code, show_progress, initial_exec)
            except OSError as exc:   # e.g. a cache directory that cannot be written
                raise DriverBuildError(f"cannot build the native module of {name!r}: "
                                       f"{exc}") from exc
            try:
                module = _open(target)
                break
            except ImportError as exc:
                if initial_exec and "static TLS" in str(exc):
                    continue   # the process's static TLS is full: a copy that needs none
                raise DriverBuildError(f"the compiled Stan program {name!r} could not be "
                                       f"loaded: {exc}") from exc
        _MODULES[key] = module
        return module


def _open(target: Path):
    """The module in the shared object ``target``, loaded (ImportError if it cannot be)."""
    spec = importlib.util.spec_from_file_location(target.stem.split(".")[0], target)
    module = importlib.util.module_from_spec(spec)   # opens the shared object
    spec.loader.exec_module(module)
    return module


def cancel_running() -> None:
    """Stop every chain this route runs in this process, at its next iteration."""
    for module in list(_MODULES.values()):
        module.cancel_all()


def sample(name, code, data, settings, show_progress, engine_version) -> Draws:
    module = load(name, code, show_progress)
    arguments = dict(_httpstan.sampler_defaults(), random_seed=settings.seed,
                     num_warmup=settings.iter_warmup, num_samples=settings.iter_sampling,
                     delta=settings.adapt_delta, max_depth=settings.max_treedepth)
    inits = settings.inits
    if isinstance(inits, float):
        arguments["init_radius"], inits = inits, None
    inits = inits or [{}] * settings.chains
    data_parts = _httpstan.split_data(data)
    try:  # the data are checked here, as pystan's build does (e.g. a reject() in transformed data)
        module.describe(data_parts)
    except Exception as exc:
        raise RuntimeError(f"Stan program {name!r} refused the data: {exc}") from None

    def run(chain):
        if settings.adapt:
            metric, step_size = (), arguments["stepsize"]
        else:
            metric = _httpstan.split_data({"inv_metric": list(settings.inv_metric[chain - 1])})
            step_size = settings.step_size[chain - 1]
        return module.sample(data_parts=data_parts,
                             init_parts=_httpstan.split_data(inits[chain - 1]),
                             metric_parts=metric, adapt=settings.adapt, chain=chain,
                             generation=generation, **dict(arguments, stepsize=step_size))

    generation = module.generation()
    pool = ThreadPoolExecutor(max_workers=min(settings.chains, os.cpu_count() or 1))
    try:
        raw = list(pool.map(run, range(1, settings.chains + 1)))
    except BaseException:  # KeyboardInterrupt: stop the chains instead of waiting for them
        module.cancel_all()
        raise
    finally:
        pool.shutdown(wait=True)
    failures = [(number, error or f"return code {rc}", messages)
                for number, (rc, error, _, _, messages, _) in enumerate(raw, 1) if rc != 0 or error]
    if failures:
        raise RuntimeError(failure_message(name, failures))
    if show_progress:
        for number, (_, _, _, _, messages, _) in enumerate(raw, 1):
            for line in messages:
                shown = line.split(":", 1)[-1]
                if shown.strip():
                    sys.stderr.write(f"chain {number}: {shown}\n")
    columns = list(raw[0][2])
    tables = []
    for number, (_, _, chain_columns, table, _, _) in enumerate(raw, 1):
        if list(chain_columns) != columns:
            raise RuntimeError(f"chain {number} returned columns {chain_columns}, chain 1 {columns}")
        values = np.frombuffer(table, dtype=np.float64).reshape(-1, max(len(columns), 1))
        if values.shape[0] != settings.iter_sampling:
            raise RuntimeError(f"chain {number} of Stan program {name!r} returned "
                               f"{values.shape[0]} draws, expected {settings.iter_sampling}")
        tables.append(values)
    seconds = [_stan_seconds(messages) for (_, _, _, _, messages, _) in raw]
    attrs = {"stan_seconds": seconds} if None not in seconds else {}
    attrs.update(adapted_metric([adaptation(notes) for (*_, notes) in raw], settings))
    return Draws(columns, np.stack(tables), "native", engine_version, _httpstan.stan_version(), attrs)


def _stan_seconds(messages):
    """Stan's reported total time of one chain ("... seconds (Total)"), or None."""
    for message in messages:
        if "seconds (Total)" in message:
            try:
                return float(message.split("seconds (Total)")[0].split()[-1])
            except (ValueError, IndexError):
                return None
    return None


def failure_message(name, failures, max_lines=8):
    """Like httpstan's: Stan's error and warning messages, else its other notes, and the error."""
    number, error, messages = min(failures, key=lambda failure: failure[0])
    problems = [m.split(":", 1)[1].strip() for m in messages
                if m.startswith(("error:", "warn:")) and m.split(":", 1)[1].strip()]
    if not problems:  # e.g. "Rejecting initial value: ..." is logged as info
        problems = [m.split(":", 1)[1].strip() for m in messages
                    if m.startswith("info:") and m.split(":", 1)[1].strip()
                    and not m.startswith(("info:Iteration:", "info: Elapsed Time:", "info:" + " " * 15))]
    unique = list(dict.fromkeys(problems))
    if len(unique) > max_lines:
        unique = unique[:max_lines] + [f"... ({len(unique) - max_lines} more messages)"]
    text = f"Stan sampling of {name!r} failed on chain {number} ({error})"
    return text + (":\n  " + "\n  ".join(unique) if unique else "")


if __name__ == "__main__":  # the child process of _compile: python -m ... MODULE TARGET TLS
    # Ctrl-C (to the whole group) must read as an interrupt, not as a failed compile that
    # the engine would answer by falling back to another build
    def _stop(*_):   # SystemExit unwinds, removing the build's temporary directories
        raise SystemExit(_INTERRUPTED)

    signal.signal(signal.SIGINT, _stop)
    _build(sys.argv[1], sys.stdin.read(), Path(sys.argv[2]), sys.argv[3] == "initial-exec")
