"""Run a Stan program with NUTS on CmdStan (cmdstanpy) or pystan and get ArviZ InferenceData.

The rest of the package calls :func:`sample` and reads ``posterior`` and ``sample_stats``
with ArviZ's standard names, so that diagnostics are written once. The engine
(``backend=``) and its route (``route=``) are arguments, recorded with the engine's versions
in the result's attrs. Engines implement :class:`~bayescomp.sampling.engine.Engine`; both
return Stan's raw draws, turned into InferenceData by one converter
(:mod:`bayescomp.sampling.inference_data`).

Where compiled programs live (never the working directory, never site-packages), under
``$BAYESCOMP_CACHE_DIR`` when set, else ``platformdirs.user_cache_dir("bayescomp")``
(``~/.cache/bayescomp`` on Linux): ``cmdstan-<version>/<sha256>/`` for CmdStan executables,
``stan-native/`` for the pystan engine's native modules; pystan's public route uses
httpstan's own cache (``~/.cache/httpstan``). :func:`cache_info` lists them and
:func:`clear_cache` removes them.
"""
from __future__ import annotations

import asyncio
import contextlib
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import inference_data
from .cache import CacheEntry, cache_dir, cache_info, clear_cache
from .cmdstanpy_engine import CmdStanPyEngine
from .engine import Draws, Engine, EngineWarning, Settings
from .inference_data import SAMPLE_STATS
from .programs import program_code, stan_file
from .pystan_engine import PystanEngine
from .seeds import Seeds, check_seed

__all__ = ["sample", "resolve_backend", "engine", "stan_file", "program_code", "threaded_fits",
           "cache_info", "clear_cache", "cache_dir", "CacheEntry", "Engine", "EngineWarning", "Draws", "Settings", "SAMPLE_STATS", "ENGINES",
           "Seeds", "check_seed"]

#: the engines by name, in the order ``backend="auto"`` tries them
ENGINES = {"cmdstanpy": CmdStanPyEngine(), "pystan": PystanEngine()}
BACKENDS = tuple(ENGINES)


def engine(backend: str = "auto") -> Engine:
    """The engine :func:`sample` uses for ``backend`` (see :func:`resolve_backend`)."""
    return ENGINES[resolve_backend(backend)]


def resolve_backend(backend: str = "auto") -> str:
    """Name of the engine :func:`sample` will use.

    Parameters
    ----------
    backend : {"auto", "cmdstanpy", "pystan"}
        ``"auto"`` prefers cmdstanpy when CmdStan is installed (the engine most Stan users
        run; it works on Windows), else pystan when importable. An explicit name is
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
        ``"auto"`` and no engine is usable; the message says how to install one.
    """
    if backend in ENGINES:
        return backend
    if backend != "auto":
        raise ValueError(f"unknown Stan backend {backend!r}; choose 'auto', "
                         + " or ".join(map(repr, ENGINES)))
    reasons = []
    for name, candidate in ENGINES.items():
        reason = candidate.unavailable()
        if reason is None:
            return name
        reasons.append(reason)
    raise RuntimeError("No Stan engine available: " + "; ".join(reasons))


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


def sample(program: str, data: dict, *, backend: str = "auto", route: str = "auto",
           chains: int = 4, iter_warmup: int = 1000, iter_sampling: int = 1000,
           seed: int | None = None, adapt_delta: float = 0.8, max_treedepth: int = 10,
           inits=None, step_size=None, inv_metric=None, show_progress: bool = False):
    """Sample a Stan program with NUTS and return the draws as ArviZ InferenceData.

    Parameters
    ----------
    program : str
        Name of a program shipped in ``stan/`` (e.g. ``"correlated"``), or Stan code.
    data : dict
        Values of the program's ``data`` block; numpy arrays and scalars are accepted.
    backend : {"auto", "cmdstanpy", "pystan"}
        The engine; see :func:`resolve_backend`.
    route : str
        How the engine reaches Stan: ``"auto"`` (its fastest), for pystan ``"native"`` (an
        in-memory driver built with pystan's toolchain) or ``"public"`` (pystan's public
        API), for cmdstanpy ``"cmdstan"``. A route that cannot be used falls back to the
        engine's other one with an :class:`EngineWarning`.
    chains : int
        Number of chains, run in parallel.
    iter_warmup, iter_sampling : int
        Adaptation iterations and kept draws, per chain.
    seed : int, optional
        Stan's seed, in ``[0, 2**31 - 1]`` (the same range on both engines keeps a seed
        portable). None draws one (:func:`~bayescomp.sampling.seeds.check_seed`); either way
        it is recorded, and the same seed gives the same draws.
    adapt_delta, max_treedepth
        NUTS target acceptance rate and maximum tree depth.
    inits : None, float, dict or list of dict
        Stan's default (uniform on (-2, 2) unconstrained), a radius instead of 2, values
        for every chain, or one dict per chain.
    step_size, inv_metric : sequence, optional
        One per chain, both or neither: a step size and the inverse metric's diagonal
        (unconstrained parameters) that the chains keep, unadapted (a chain continued from
        where it stopped, e.g. with the ``step_size`` and ``inv_metric`` attrs of its fit and
        its last draw as ``inits``). None: Stan adapts them in warm-up.
    show_progress : bool
        Let the engine print compile and sampling progress; quiet otherwise.

    Returns
    -------
    arviz.InferenceData
        ``posterior``, ``sample_stats`` (``diverging``, ``tree_depth``, ``energy``, ``lp``,
        ``step_size``, ``n_steps``, ``acceptance_rate``) and, for a generated quantity
        ``log_lik``, ``log_likelihood``. The attrs of the object and of both groups hold
        ``backend``, ``engine_version``, ``route``, ``stan_version``, ``seed``,
        ``adapt_delta``, ``max_treedepth``, ``chains``, ``iter_warmup``, ``iter_sampling``,
        ``adapted``, and each chain's ``step_size`` and ``inv_metric`` (adapted or given).

    Notes
    -----
    The first run of a program compiles it (about a minute) into the per-user cache. Inside
    a running event loop (Jupyter) the fit runs in a worker thread, because pystan calls
    ``asyncio.run``; the call still blocks until sampling is done.
    """
    chosen = engine(backend)
    route = chosen.check_route(route)  # refuses an unknown route before any work
    name, code = program_code(program)
    seed = check_seed(seed)
    if isinstance(inits, dict):
        inits = [inits] * chains
    if isinstance(inits, (int, float)) and not isinstance(inits, bool):
        inits = float(inits)
    elif inits is not None:
        inits = [_to_stan_data(i) for i in inits]
        if len(inits) != chains:
            raise ValueError(f"inits has {len(inits)} entries for {chains} chains")
    if (step_size is None) != (inv_metric is None):
        raise ValueError("give both step_size and inv_metric (a continued chain), or neither")
    if inv_metric is not None:
        step_size = tuple(float(s) for s in step_size)
        inv_metric = tuple(tuple(float(v) for v in np.ravel(m)) for m in inv_metric)
        if len(step_size) != chains or len(inv_metric) != chains:
            raise ValueError(f"step_size and inv_metric need one entry per chain ({chains}), "
                             f"got {len(step_size)} and {len(inv_metric)}")
    settings = Settings(chains=int(chains), iter_warmup=int(iter_warmup),
                        iter_sampling=int(iter_sampling), seed=seed,
                        adapt_delta=float(adapt_delta), max_treedepth=int(max_treedepth),
                        inits=inits, step_size=step_size, inv_metric=inv_metric)
    draws = _off_event_loop(chosen, name=name, code=code, data=_to_stan_data(data),
                            settings=settings, route=route, show_progress=show_progress)
    attrs = dict(backend=chosen.name, engine_version=draws.engine_version, route=draws.route,
                 stan_version=draws.stan_version, **settings.recorded())
    idata = inference_data.build(draws, code, dict(attrs, **draws.attrs))
    return idata


def _off_event_loop(chosen: Engine, **call):
    """``chosen.sample(**call)`` here, or in a worker thread when this thread runs an event
    loop (pystan calls ``asyncio.run``, which refuses to start inside a running loop, as in
    Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return chosen.sample(**call)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bayescomp-stan") as pool:
        try:
            return pool.submit(chosen.sample, **call).result()
        except KeyboardInterrupt:  # the fit runs in the worker: stop it rather than wait for it
            chosen.cancel()
            raise


@contextlib.contextmanager
def threaded_fits():
    """Context for running fits in threads (joblib ``prefer="threads"``).

    Forks httpstan's sampling processes first (a fork while another thread loads a compiled
    program crashes them) and puts back ``sys.stdout`` and ``sys.stderr`` afterwards:
    pystan's quieting swaps them process-wide, and threads quieting concurrently can leave
    one another's buffer in place.
    """
    from . import _native
    from ._httpstan import prespawn_pool

    if "httpstan.services_stub" in sys.modules or _native.unavailable() is not None:
        prespawn_pool()   # only pystan's public route samples in httpstan's processes
    stdout, stderr = sys.stdout, sys.stderr
    try:
        yield stdout, stderr
    finally:
        sys.stdout, sys.stderr = stdout, stderr
