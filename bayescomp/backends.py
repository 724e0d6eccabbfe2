"""Run a Stan program on PyStan or CmdStanPy and get the same ArviZ InferenceData from either.

The rest of the package calls :func:`sample` and reads ``posterior`` and ``sample_stats``
with ArviZ's standard names, so that convergence diagnostics are written once.

Where compiled models live (never the working directory, never site-packages):

* cmdstanpy: ``platformdirs.user_cache_dir("bayescomp")/cmdstan-<version>/<sha256>/``, one
  directory per Stan source and CmdStan version, holding a copy of the source and its exe.
* pystan: httpstan's own per-user cache (``~/.cache/httpstan/<httpstan version>/models/``),
  keyed by a hash of the program code, the httpstan version and the Python interpreter.
  setuptools drops object files in ``./build`` while compiling, so the one-off compile runs
  in a child process whose working directory is a temporary one. httpstan also caches every
  seeded fit; those are deleted after reading, or the cache would grow by one fit per call.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import importlib.resources
import io
import json
import logging
import multiprocessing.util
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

BACKENDS = ("pystan", "cmdstanpy")
SAMPLE_STATS = ("diverging", "tree_depth", "energy", "lp", "step_size", "n_steps", "acceptance_rate")
# Stan's own names, in case a converter leaves them as they are.
_STAT_RENAMES = {
    "divergent__": "diverging", "treedepth__": "tree_depth", "energy__": "energy", "lp__": "lp",
    "stepsize__": "step_size", "n_leapfrog__": "n_steps", "accept_stat__": "acceptance_rate",
}
_FIX_HINT = (
    "Install a Stan backend: `pip install pystan` (Linux and macOS), or CmdStan with "
    "`pip install cmdstanpy && python -m cmdstanpy.install_cmdstan` (any platform)."
)
_log = logging.getLogger("bayescomp")


def _find_stan(filename: str) -> Path:
    candidates = []
    try:
        candidates.append(Path(str(importlib.resources.files("bayescomp") / "stan" / filename)))
    except (ModuleNotFoundError, TypeError):  # namespace package or odd loader: use the checkout
        pass
    candidates.append(Path(__file__).resolve().parent.parent / "stan" / filename)
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"Stan file {filename!r} not found; looked in: " + ", ".join(map(str, candidates))
    )


def stan_file(name: str) -> Path:
    """Path of the Stan program ``<name>.stan`` shipped with bayescomp.

    Parameters
    ----------
    name : str
        Program name without extension, e.g. ``"correlated"``.

    Returns
    -------
    pathlib.Path
        From the installed package (``bayescomp/stan/``) if there, else from the repository's
        ``stan/`` in a source checkout.

    Raises
    ------
    FileNotFoundError
        If neither place has it.
    """
    return _find_stan(f"{name}.stan")


_INCLUDE = re.compile(r'^[ \t]*#include[ \t]+[<"]?([^<>"\s]+)[>"]?[ \t]*$', re.M)


def _expand_includes(code: str, _seen: tuple = ()) -> str:
    """Inline ``#include file`` lines from the shipped ``stan/`` directory.

    Done here rather than by stanc because httpstan compiles a copy of the code in a
    temporary directory, where no include path leads back to ``stan/``; it also makes the
    cache keys (hashes of the code) change when an included file does.
    """
    def inline(match):
        filename = match.group(1)
        if filename in _seen:
            raise ValueError(f"circular #include of {filename!r}")
        return _expand_includes(_find_stan(filename).read_text(), _seen + (filename,))

    return _INCLUDE.sub(inline, code)


def _cmdstan_home() -> str:
    """The CmdStan directory cmdstanpy would use; RuntimeError saying why there is none."""
    try:
        import cmdstanpy
    except ImportError as exc:
        raise RuntimeError(f"cmdstanpy is not importable ({exc})") from None
    try:
        # Looks at $CMDSTAN, then ~/.cmdstan, and validates what it finds.
        return cmdstanpy.cmdstan_path()
    except Exception as exc:  # cmdstanpy raises ValueError, but any failure means "not usable"
        raise RuntimeError(str(exc)) from None


def _pystan_importable() -> bool:
    try:
        import stan  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_backend(backend: str = "auto") -> str:
    """Name of the backend :func:`sample` will use.

    Parameters
    ----------
    backend : {"auto", "cmdstanpy", "pystan"}
        ``"auto"`` prefers cmdstanpy when a CmdStan install is found (it is faster to sample
        and works on Windows), otherwise pystan when importable. An explicit name is
        returned as is; whether it works shows when sampling.

    Returns
    -------
    str
        ``"cmdstanpy"`` or ``"pystan"``.

    Raises
    ------
    ValueError
        Unknown backend name.
    RuntimeError
        ``"auto"`` and neither backend is usable; the message says how to fix it.
    """
    if backend in BACKENDS:
        return backend
    if backend != "auto":
        raise ValueError(f"unknown Stan backend {backend!r}; choose 'auto', " + " or ".join(map(repr, BACKENDS)))
    try:
        _cmdstan_home()
        return "cmdstanpy"
    except RuntimeError as exc:
        cmdstan_reason = str(exc)
    if _pystan_importable():
        return "pystan"
    raise RuntimeError(
        f"No Stan backend available: CmdStan not found ({cmdstan_reason}) and pystan is not "
        f"importable. {_FIX_HINT}"
    )


def _program(program: str) -> tuple[str, str]:
    """(name, code): a bare identifier names a shipped program, anything else is Stan code."""
    if re.fullmatch(r"[A-Za-z_]\w*", program):
        return program, _expand_includes(stan_file(program).read_text())
    return "model", _expand_includes(program)


def _to_stan_data(data: dict) -> dict:
    """Plain JSON-able values; integer arrays and numpy ints stay ints (Stan's int needs them)."""
    out = {}
    for key, value in data.items():
        array = np.asarray(value)
        if array.dtype == bool:
            array = array.astype(int)
        if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
            raise TypeError(f"Stan data {key!r} must be numeric, got {array.dtype}")
        out[key] = array.tolist()  # numpy int -> int, float -> float, arrays -> nested lists
    return out


def sample(
    program: str,
    data: dict,
    *,
    backend: str = "auto",
    chains: int = 4,
    iter_warmup: int = 1000,
    iter_sampling: int = 1000,
    seed: int | None = None,
    adapt_delta: float = 0.8,
    max_treedepth: int = 10,
    inits=None,
    show_progress: bool = False,
):
    """Sample a Stan program with NUTS and return the draws as ArviZ InferenceData.

    Parameters
    ----------
    program : str
        Name of a program shipped in ``stan/`` (e.g. ``"correlated"``), or Stan code.
    data : dict
        Values of the program's ``data`` block; numpy arrays and scalars are accepted.
    backend : {"auto", "cmdstanpy", "pystan"}
        See :func:`resolve_backend`.
    chains : int
        Number of chains, run in parallel processes.
    iter_warmup, iter_sampling : int
        Adaptation iterations and kept draws, per chain.
    seed : int, optional
        In ``[0, 2**31 - 1]`` (httpstan's sampler takes a C int; the same range on both
        backends keeps a seed portable). None draws one from numpy; either way it is stored in
        ``attrs["seed"]``, and the same seed gives the same draws on the same backend.
    adapt_delta, max_treedepth
        NUTS target acceptance rate and maximum tree depth.
    inits : None, float, dict or list of dict
        Stan's default (uniform on (-2, 2) unconstrained), a radius instead of 2, values
        for every chain, or one dict per chain.
    show_progress : bool
        Let the backend print compile and sampling progress; quiet otherwise.

    Returns
    -------
    arviz.InferenceData
        Groups ``posterior`` and ``sample_stats``; the latter has ``diverging``,
        ``tree_depth``, ``energy``, ``lp``, ``step_size``, ``n_steps``, ``acceptance_rate``.
        A generated quantity ``log_lik`` goes to a ``log_likelihood`` group (ArviZ's rule,
        on both backends). ``attrs`` of both groups (and of the object) hold ``backend``, ``stan_version``,
        ``seed``, ``adapt_delta``, ``max_treedepth``, ``chains``, ``iter_warmup``,
        ``iter_sampling``.

    Notes
    -----
    The first run of a program compiles it (about a minute) into a per-user cache; later
    runs reuse it. Inside a running event loop (Jupyter) pystan runs in a worker thread,
    because it calls ``asyncio.run``; the call still blocks until sampling is done.
    """
    backend = resolve_backend(backend)
    name, code = _program(program)
    if seed is None:
        seed = int(np.random.default_rng().integers(0, 2**31 - 1))
    seed = int(seed)
    if not 0 <= seed <= 2**31 - 1:
        raise ValueError(f"seed must be in [0, 2**31 - 1], got {seed}")
    if isinstance(inits, dict):
        inits = [inits] * chains
    elif inits is not None and not isinstance(inits, (int, float)):
        inits = list(inits)
        if len(inits) != chains:
            raise ValueError(f"inits has {len(inits)} entries for {chains} chains")
    settings = dict(
        chains=int(chains), iter_warmup=int(iter_warmup), iter_sampling=int(iter_sampling),
        seed=seed, adapt_delta=float(adapt_delta), max_treedepth=int(max_treedepth),
    )
    run = _sample_pystan if backend == "pystan" else _sample_cmdstanpy
    idata, stan_version = _off_event_loop(
        run, name, code, _to_stan_data(data), inits=inits, show_progress=show_progress, **settings
    )
    return _standardize(idata, dict(backend=backend, stan_version=stan_version, **settings))


def _off_event_loop(function, *args, **kwargs):
    """Call ``function`` here, or in a worker thread when this thread runs an event loop.

    pystan calls ``asyncio.run``, which refuses to start inside a running loop (Jupyter).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return function(*args, **kwargs)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bayescomp-stan") as pool:
        try:
            return pool.submit(function, *args, **kwargs).result()
        except KeyboardInterrupt:  # the fit runs in the worker: stop it rather than wait for it
            native = sys.modules.get("bayescomp._stan_native")
            if native is not None:
                native.cancel_running()
            raise


@contextlib.contextmanager
def _quiet(show_progress: bool, replay_on_error: bool = False):
    """Swallow what pystan prints to stdout and stderr; replay it on error if it explains it.

    The redirection is process-wide (sys.stdout), so other threads are silenced meanwhile.
    """
    if show_progress:
        yield
        return
    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            yield
    except BaseException:
        if replay_on_error:
            sys.stderr.write(captured.getvalue())
        raise


def _standardize(idata, attrs: dict):
    for group in ("posterior", "sample_stats"):
        if group not in idata.groups():
            raise RuntimeError(f"the {attrs['backend']} fit has no {group} group")
    stats = idata.sample_stats
    renames = {old: new for old, new in _STAT_RENAMES.items() if old in stats}
    if renames:
        idata.sample_stats = stats = stats.rename(renames)
    missing = [name for name in SAMPLE_STATS if name not in stats]
    if missing:
        raise RuntimeError(f"the {attrs['backend']} fit lacks sampler statistics {missing}")
    for group in ("posterior", "sample_stats"):
        idata[group].attrs.update(attrs)
    idata.attrs.update(attrs)
    return idata


# --- pystan -------------------------------------------------------------------------------

_BUILD_SCRIPT = "import sys, stan; stan.build(sys.stdin.read())"


def _pystan_stan_version() -> str:
    import httpstan

    header = Path(httpstan.__file__).parent / "include" / "stan" / "version.hpp"
    try:
        parts = re.findall(r"#define STAN_(?:MAJOR|MINOR|PATCH) (\d+)", header.read_text())
    except OSError:
        parts = []
    return ".".join(parts) if len(parts) == 3 else f"unknown (httpstan {httpstan.__version__})"


def _pystan_compile(name: str, code: str, show_progress: bool) -> None:
    """Compile into httpstan's cache, unless there already, in a child process in a temp cwd."""
    import httpstan.cache
    import httpstan.models

    if httpstan.models.calculate_model_name(code) in httpstan.cache.list_model_names():
        return
    _log.info("compiling Stan program %r with pystan (once per Stan version)", name)
    with tempfile.TemporaryDirectory(prefix="bayescomp-build-") as cwd:
        # The same interpreter, so that httpstan's cache key (which hashes it) matches ours.
        # The child builds with no data, so it fails after compiling when the program has a
        # data block; only the presence of the compiled model tells whether it worked.
        done = subprocess.run(
            [sys.executable, "-c", _BUILD_SCRIPT], input=code, cwd=cwd,
            capture_output=True, text=True,
        )
    if show_progress:
        sys.stderr.write(done.stdout + done.stderr)
    if httpstan.models.calculate_model_name(code) not in httpstan.cache.list_model_names():
        raise RuntimeError(f"pystan could not compile Stan program {name!r}:\n{done.stdout}{done.stderr}")


def _forget_fits(model, sample_kwargs: dict) -> None:
    """Delete the fits httpstan cached for this call (it caches every seeded fit).

    httpstan names a fit by hashing its request, so rebuild the requests pystan sent. If
    httpstan ever hashes differently nothing matches and nothing is deleted: only this
    call's fits (or an identical request's) can go.
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


def _direct_route_available() -> bool:
    """Whether httpstan has what :mod:`bayescomp._httpstan_direct` relies on."""
    try:
        import httpstan
        import httpstan.services_stub as stub
    except ImportError:
        return False
    return (httpstan.__version__.startswith("4.")
            and hasattr(stub, "_make_lazy_function_wrapper_helper") and hasattr(stub, "executor"))


def pystan_route() -> str:
    """How the pystan backend runs Stan: ``"native"``, ``"direct"`` or ``"http"``.

    All three compile with pystan's toolchain (httpstan's stanc, headers and flags), call the
    same Stan sampler with the same arguments and give the same draws for a seed:

    * ``"native"`` (:mod:`bayescomp._stan_native`): the program and a small driver compiled
      into one module; draws go straight into an array and the chains run as threads;
    * ``"direct"`` (:mod:`bayescomp._httpstan_direct`): httpstan's compiled module, read
      from its sockets without the HTTP server;
    * ``"http"``: pystan's public ``stan.build(...).sample(...)``.

    The first available in that order, or the one named by the environment variable
    ``BAYESCOMP_PYSTAN_ROUTE``; the first two rely on httpstan 4 internals.
    """
    from . import _stan_native

    wanted = os.environ.get("BAYESCOMP_PYSTAN_ROUTE", "")
    if wanted not in ("", "native", "direct", "http"):
        raise ValueError(f"BAYESCOMP_PYSTAN_ROUTE must be native, direct or http, got {wanted!r}")
    if wanted in ("", "native") and _stan_native.available():
        return "native"
    if wanted in ("", "native", "direct") and _direct_route_available():
        return "direct"
    return "http"


def _sample_pystan(name, code, data, **settings):
    """pystan's toolchain and Stan's sampler, by the fastest route available (:func:`pystan_route`).

    pystan's public route (HTTP, gzip-compressed output, re-parsed in Python) costs several
    times the sampling of a cheap model.
    """
    route = pystan_route()
    if route == "native":
        from ._stan_native import DriverBuildError, sample_native

        try:
            return sample_native(name, code, data, **settings)
        except DriverBuildError as exc:
            if not _direct_route_available():
                raise
            warnings.warn(f"{exc}\nbayescomp falls back to httpstan's compiled module (slower "
                          "for small programs, the same draws).", RuntimeWarning, stacklevel=2)
            route = "direct"
    if route == "direct":
        from ._httpstan_direct import sample_direct

        return sample_direct(name, code, data, **settings)
    return _sample_pystan_public(name, code, data, **settings)


def _sample_pystan_public(name, code, data, *, chains, iter_warmup, iter_sampling, seed,
                          adapt_delta, max_treedepth, inits, show_progress):
    import arviz as az
    import stan

    _pystan_compile(name, code, show_progress)
    kwargs = dict(num_chains=chains, num_warmup=iter_warmup, num_samples=iter_sampling,
                  delta=adapt_delta, max_depth=max_treedepth)
    if isinstance(inits, (int, float)):
        kwargs["init_radius"] = float(inits)
    elif inits is not None:
        kwargs["init"] = [_to_stan_data(i) for i in inits]
    with _quiet(show_progress):  # errors in the data come back in the exception itself
        model = stan.build(code, data=data, random_seed=seed)  # cached: no compile, no ./build
    # pystan only prints the sampler's messages (e.g. why initialization failed): replay them.
    with _quiet(show_progress, replay_on_error=True):
        try:
            fit = model.sample(**kwargs)
        finally:
            _forget_fits(model, kwargs)
            _shut_pystan_pool_at_exit()
    if fit is None:  # pystan swallows KeyboardInterrupt and returns None
        raise KeyboardInterrupt
    return az.from_pystan(posterior=fit, posterior_model=model), _pystan_stan_version()


_pool_finalized = {"pid": None}


def _shut_pystan_pool_at_exit():
    """Let a worker process that ran pystan exit.

    httpstan samples in a module-level pool of forked processes. When the worker is itself
    a multiprocessing child (loky, dask worker processes), multiprocessing joins the
    worker's children at exit before concurrent.futures shuts that pool down, and the
    worker hangs forever; a finalizer shuts the pool down first.
    """
    services = sys.modules.get("httpstan.services_stub")
    if services is not None and _pool_finalized["pid"] != os.getpid():
        multiprocessing.util.Finalize(None, services.executor.shutdown, exitpriority=100)
        _pool_finalized["pid"] = os.getpid()


def prespawn_pystan_pool() -> None:
    """Start httpstan's sampling processes now, from the calling thread, before fits run in threads.

    httpstan samples in a ``ProcessPoolExecutor`` with the "fork" start method, whose workers
    are forked lazily, on the first fits. When that fork happens while another thread is
    loading a compiled model (``dlopen`` in ``httpstan.models.import_services_extension_module``)
    the children inherit a half-loaded library and segfault, which breaks the pool for the
    rest of the process ("BrokenProcessPool"): seen here on the first threaded fits of a
    study. Forking every worker up front, while no fit runs, avoids it. No-op without pystan
    or once the pool is full.
    """
    try:
        import httpstan.services_stub as stub
    except ImportError:
        return
    executor = stub.executor
    missing = getattr(executor, "_max_workers", 0) - len(getattr(executor, "_processes", None) or {})
    if missing > 0:
        # each submit forks a worker unless one is idle: keep them busy until all exist
        futures = [executor.submit(time.sleep, 0.2) for _ in range(missing)]
        concurrent.futures.wait(futures)


@contextlib.contextmanager
def threaded_fits():
    """Context for running fits in threads (joblib ``prefer="threads"``).

    Forks httpstan's sampling processes first (see :func:`prespawn_pystan_pool`) and puts
    back ``sys.stdout`` and ``sys.stderr`` afterwards: pystan's quieting swaps them
    process-wide, and threads quieting concurrently can leave one another's buffer in place.
    """
    prespawn_pystan_pool()
    stdout, stderr = sys.stdout, sys.stderr
    try:
        yield stdout, stderr
    finally:
        sys.stdout, sys.stderr = stdout, stderr


# --- cmdstanpy ----------------------------------------------------------------------------

def _cmdstan_version(home: str) -> str:
    try:
        text = (Path(home) / "makefile").read_text()
        return re.search(r"^CMDSTAN_VERSION := (\S+)", text, re.M).group(1)
    except (OSError, AttributeError):
        return Path(home).name.removeprefix("cmdstan-") or "unknown"


def _sample_cmdstanpy(name, code, data, *, chains, iter_warmup, iter_sampling, seed, adapt_delta,
                      max_treedepth, inits, show_progress):
    import arviz as az
    import cmdstanpy
    import platformdirs

    try:
        version = _cmdstan_version(_cmdstan_home())
    except RuntimeError as exc:
        raise RuntimeError(f"CmdStan not installed: {exc}. {_FIX_HINT}") from None
    digest = hashlib.sha256(code.encode()).hexdigest()
    model_dir = Path(platformdirs.user_cache_dir("bayescomp")) / f"cmdstan-{version}" / digest
    source = model_dir / f"{name}.stan"
    if not source.is_file():
        model_dir.mkdir(parents=True, exist_ok=True)
        # Write then rename so a concurrent process never compiles a half-written file.
        with tempfile.NamedTemporaryFile("w", dir=model_dir, suffix=".tmp", delete=False) as fh:
            fh.write(code)
        os.replace(fh.name, source)
    logging_switch = contextlib.nullcontext() if show_progress else cmdstanpy.disable_logging()
    with logging_switch:
        # Compiles next to the source unless an up-to-date exe is already there.
        model = cmdstanpy.CmdStanModel(stan_file=source)
        with tempfile.TemporaryDirectory(prefix="bayescomp-cmdstan-") as output_dir:
            fit = model.sample(
                data=data, chains=chains, parallel_chains=chains, iter_warmup=iter_warmup,
                iter_sampling=iter_sampling, seed=seed, adapt_delta=adapt_delta,
                max_treedepth=max_treedepth, inits=inits, output_dir=output_dir,
                show_progress=show_progress, show_console=False,
            )
            # Converted while the CSV files still exist (arviz copies the draws into memory).
            idata = az.from_cmdstanpy(fit)
    return idata, version
