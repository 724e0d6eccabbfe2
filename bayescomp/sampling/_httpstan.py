"""Every use of httpstan's internals (pystan's compiler and server), in one place.

pystan's public API (``stan.build``, ``model.sample``) is used by :mod:`.pystan_engine`
directly. What it does not offer is here: where httpstan caches compiled programs and fits,
its compiled driver's defaults for the sampler's arguments, the way it splits data into the
arrays Stan's C++ reads, its stanc and the compiler settings of its own modules (read from
its source, not copied, so that the native driver follows when httpstan changes them), its
process pool, and the socket files its fits leave in the temporary directory. Checked with
the httpstan versions in :data:`CHECKED`; with another version the pystan engine still works
through pystan's public API, and says so.
"""
from __future__ import annotations

import ast
import inspect
import json
import multiprocessing.util
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from ._cache import elf_damage, file_lock, user_cache
from .engine import EngineWarning

CHECKED = ("4.13.0",)
_BUILD_SCRIPT = "import sys, stan; stan.build(sys.stdin.read())"


def version() -> str:
    import httpstan

    return httpstan.__version__


def package_dir() -> Path:
    import httpstan

    return Path(httpstan.__file__).resolve().parent


def internals_usable() -> str | None:
    """None when this httpstan is one the native driver was checked with, else why not."""
    try:
        import httpstan
        import httpstan.build_ext  # noqa: F401
        import httpstan.services.arguments  # noqa: F401
        import httpstan.utils
    except ImportError as exc:
        return f"httpstan is not importable ({exc})"
    if httpstan.__version__ not in CHECKED:
        return (f"httpstan {httpstan.__version__} is not one bayescomp's native driver was checked "
                f"with ({', '.join(CHECKED)})")
    if not (package_dir() / "stanc").is_file():
        return "this httpstan install lacks its stanc"
    if not (package_dir() / "include" / "pybind11").is_dir() or not hasattr(httpstan.utils, "_split_data"):
        return "this httpstan install lacks its C++ headers"
    return None


def stan_version() -> str:
    """Stan's version in httpstan's headers, e.g. ``"2.32.2"``."""
    header = package_dir() / "include" / "stan" / "version.hpp"
    try:
        parts = re.findall(r"#define STAN_(?:MAJOR|MINOR|PATCH) (\d+)", header.read_text())
    except OSError:
        parts = []
    return ".".join(parts) if len(parts) == 3 else f"unknown (httpstan {version()})"


# --- pystan's public route ----------------------------------------------------------------

def compile_public(name: str, code: str, show_progress: bool) -> None:
    """``stan.build`` into httpstan's cache unless there, in a child process in a temp cwd.

    setuptools writes object files to ``./build`` while compiling; the child's working
    directory is a temporary one, so nothing lands in the user's. The same interpreter, so
    that httpstan's cache key (which hashes it) is ours. A cached model that is damaged (no
    ``stderr.log``, on which ``stan.build`` fails with "500 Internal Server Error", or a
    truncated module, which would kill this process with SIGBUS when loaded) is removed and
    rebuilt, with a warning saying so. Builds are serialized by a lock in bayescomp's cache.
    """
    import httpstan.cache
    import httpstan.models

    model_name = httpstan.models.calculate_model_name(code)
    if model_name in _VERIFIED:
        return
    with file_lock(user_cache() / "httpstan" / (model_name.split("/")[-1] + ".lock"),
                   f"Stan program {name!r}"):
        if model_name in httpstan.cache.list_model_names():
            damage = model_damage(model_name)
            if damage is None:
                _VERIFIED.add(model_name)
                return
            warnings.warn(f"bayescomp: pystan's compiled Stan program {name!r} in httpstan's "
                          f"cache ({httpstan.cache.model_directory(model_name)}) is damaged: "
                          f"{damage}; removing it and rebuilding", EngineWarning, stacklevel=5)
            shutil.rmtree(httpstan.cache.model_directory(model_name), ignore_errors=True)
        try:
            with tempfile.TemporaryDirectory(prefix="bayescomp-build-") as cwd:
                # No data: the child fails after compiling when the program has a data block;
                # only the compiled model in the cache tells whether it worked.
                done = subprocess.run([sys.executable, "-c", _BUILD_SCRIPT], input=code, cwd=cwd,
                                      capture_output=True, text=True)
        except BaseException:   # interrupted: httpstan's half-written model is no entry
            shutil.rmtree(httpstan.cache.model_directory(model_name), ignore_errors=True)
            raise
        if show_progress:
            sys.stderr.write(done.stdout + done.stderr)
        if model_name not in httpstan.cache.list_model_names() or model_damage(model_name):
            shutil.rmtree(httpstan.cache.model_directory(model_name), ignore_errors=True)
            raise RuntimeError(f"pystan could not compile Stan program {name!r}:\n"
                               f"{done.stdout}{done.stderr}")
        _VERIFIED.add(model_name)


_VERIFIED: set = set()   # models checked in this process: loaded by httpstan, not re-read


def model_module(model_name: str) -> Path | None:
    """The compiled module of a model in httpstan's cache, or None."""
    import importlib.machinery

    import httpstan.cache

    directory = httpstan.cache.model_directory(model_name)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        found = sorted(directory.glob(f"*{suffix}"))
        if found:
            return found[0]
    return None


def model_damage(model_name: str) -> str | None:
    """None when httpstan can load the model ``model_name`` from its cache, else why not."""
    import httpstan.cache

    directory = httpstan.cache.model_directory(model_name)
    if not (directory / "stderr.log").is_file():
        return "it has no stderr.log (an interrupted build?)"
    module = model_module(model_name)
    if module is None:
        return "it has no compiled module"
    return elf_damage(module)


def forget_fits(model, sample_kwargs: dict) -> None:
    """Delete the fits httpstan cached for one ``model.sample`` call (it caches every seeded
    fit, which would grow its cache by one fit per call).

    httpstan names a fit by hashing its request, so the requests pystan sent are rebuilt. If
    httpstan hashes differently nothing matches and nothing is deleted.
    """
    import httpstan.cache
    import httpstan.fits
    import httpstan.schemas

    kwargs = json.loads(json.dumps(sample_kwargs))
    chains = kwargs.pop("num_chains")
    inits = kwargs.pop("init", [{}] * chains)
    for chain in range(1, chains + 1):
        request = dict(kwargs, function="stan::services::sample::hmc_nuts_diag_e_adapt",
                       chain=chain, data=model.data, init=inits[chain - 1],
                       random_seed=model.random_seed)
        try:
            args = httpstan.schemas.CreateFitRequest().load(request)
            function = args.pop("function")
            httpstan.cache.delete_fit(httpstan.fits.calculate_fit_name(function, model.model_name, args))
        except Exception:  # best effort: a stale cache entry is not worth failing a fit
            pass


_pool_finalized = {"pid": None}


def sockets() -> set[Path]:
    """The Unix sockets httpstan has bound in the temporary directory, by its name pattern."""
    return set(Path(tempfile.gettempdir()).glob("httpstan_*.sock"))


def _is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(path.lstat().st_mode)
    except OSError:   # removed meanwhile
        return False


def _family_sockets() -> set[str]:
    """The inodes of the sockets that this process and its descendants hold (Linux)."""
    held, pids = set(), [os.getpid()]
    while pids:
        pid = pids.pop()
        for task in Path(f"/proc/{pid}/task").glob("*/children"):
            pids.extend(task.read_text().split())
        for fd in Path(f"/proc/{pid}/fd").glob("*"):
            try:
                target = os.readlink(fd)
            except OSError:   # closed meanwhile
                continue
            if target.startswith("socket:["):
                held.add(target[8:-1])
    return held


def remove_closed_sockets(earlier: set[Path]) -> None:
    """Remove the sockets of :func:`sockets` that were not there before a fit (``earlier``)
    and that no other process holds.

    httpstan binds a socket file in the temporary directory for every fit
    (``services_stub.call``), closes it when the fit ends and never removes the file: a
    test run left over a hundred a day. Its process pool's workers, forked while the socket
    was open, hold it on. A file that appeared during a fit may also be another process's
    socket, in use; Linux lists every bound socket's path and inode in /proc/net/unix, and
    a file is removed only when nothing holds it or only this process and its descendants
    do. Elsewhere the files are left.
    """
    try:
        table = Path("/proc/net/unix").read_text()
        # Num RefCount Protocol Flags Type St Inode Path (a path may hold spaces)
        inodes = {fields[7]: fields[6] for fields in
                  (line.split(maxsplit=7) for line in table.splitlines()[1:])
                  if len(fields) > 7}
        ours = _family_sockets()
    except OSError:   # not Linux, or /proc unreadable
        return
    for path in sockets() - earlier:
        inode = inodes.get(str(path))
        # not a socket yet: httpstan's mkstemp file, which it removes itself before binding
        if not _is_socket(path):
            continue
        if inode is None or inode in ours:
            try:
                path.unlink()
            except OSError:   # removed meanwhile
                pass


def shut_pool_at_exit() -> None:
    """Let a worker process that ran pystan exit.

    httpstan samples in a module-level pool of forked processes. When the worker is itself a
    multiprocessing child (loky, dask worker processes), multiprocessing joins the worker's
    children at exit before concurrent.futures shuts that pool down, and the worker hangs
    forever; a finalizer shuts the pool down first.
    """
    services = sys.modules.get("httpstan.services_stub")
    if services is not None and _pool_finalized["pid"] != os.getpid():
        multiprocessing.util.Finalize(None, services.executor.shutdown, exitpriority=100)
        _pool_finalized["pid"] = os.getpid()


def prespawn_pool() -> None:
    """Fork httpstan's sampling processes now, before fits run in threads.

    httpstan's ``ProcessPoolExecutor`` forks its workers lazily, on the first fits; a fork
    while another thread loads a compiled model (``dlopen``) gives children a half-loaded
    library that segfault, breaking the pool for the process ("BrokenProcessPool").
    """
    try:
        import httpstan.services_stub as stub
    except ImportError:
        return
    executor = stub.executor
    missing = getattr(executor, "_max_workers", 0) - len(getattr(executor, "_processes", None) or {})
    if missing > 0:
        import concurrent.futures

        # each submit forks a worker unless one is idle: keep them busy until all exist
        futures = [executor.submit(time.sleep, 0.2) for _ in range(missing)]
        concurrent.futures.wait(futures)


# --- the native driver --------------------------------------------------------------------

def split_data(data: dict):
    """The (names, values, dims) arrays Stan's C++ data context reads, as httpstan makes them."""
    import httpstan.utils

    return httpstan.utils._split_data(data)


def sampler_defaults() -> dict:
    """httpstan's defaults for the arguments pystan does not send."""
    import httpstan.services.arguments as arguments

    names = ("init_radius", "num_thin", "save_warmup", "refresh", "stepsize", "stepsize_jitter",
             "gamma", "kappa", "t0", "init_buffer", "term_buffer", "window")
    return {name: arguments.lookup_default(arguments.Method.SAMPLE, name) for name in names}


def build_settings() -> dict:
    """How httpstan compiles its own modules: macros, compile flags and libraries.

    Read from ``httpstan.models.build_services_extension_module``'s source (literal lists
    there), so that a change of C++ standard or macro in httpstan reaches the native driver.
    RuntimeError when the source no longer has them.
    """
    import httpstan.models

    tree = ast.parse(inspect.getsource(httpstan.models.build_services_extension_module))
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in ("stan_macros", "extra_compile_args",
                                                                  "libraries"):
                    try:
                        found.setdefault(target.id, ast.literal_eval(node.value))
                    except ValueError:
                        pass
    missing = {"stan_macros", "extra_compile_args", "libraries"} - set(found)
    if missing:
        raise RuntimeError(f"httpstan {version()} no longer lists {sorted(missing)} in "
                           "build_services_extension_module")
    libraries = list(found["libraries"])
    if sys.platform == "darwin":  # httpstan adds these under a platform test
        libraries += ["tbbmalloc", "tbbmalloc_proxy"]
    return dict(macros=[tuple(m) for m in found["stan_macros"]],
                flags=list(found["extra_compile_args"]), libraries=libraries,
                include_dirs=[str(package_dir() / "include")],
                library_dirs=[str(package_dir() / "lib")],
                link_args=[f"-Wl,-rpath,{package_dir() / 'lib'}"])


def stanc(code: str, model_name: str, flags: tuple = ()) -> str:
    """C++ of ``code`` from httpstan's stanc, with ``flags`` besides httpstan's own
    (``httpstan.compile.compile`` takes none); ValueError with stanc's message if it refuses."""
    binary = package_dir() / "stanc"
    with tempfile.TemporaryDirectory(prefix="bayescomp-stanc-") as scratch:
        source = Path(scratch) / f"{model_name}.stan"
        source.write_text(code)
        done = subprocess.run([str(binary), "--name", model_name, *flags, "--print-cpp",
                               str(source)], capture_output=True, timeout=120)
    if done.returncode != 0:
        raise ValueError(done.stderr.decode().strip())
    return done.stdout.decode().strip()


def build_extension(extension, directory: str) -> str:
    """Build a setuptools Extension into ``directory`` as httpstan builds its own; the
    compiler's messages."""
    import httpstan.build_ext

    return httpstan.build_ext.run_build_ext([extension], directory)
