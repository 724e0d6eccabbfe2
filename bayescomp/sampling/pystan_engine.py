"""The pystan engine: Stan through pystan's toolchain (httpstan's stanc, headers and compiler).

Two routes, giving the same draws for a seed:

* ``"native"`` (:mod:`._native`): the program and a small driver compiled into one module,
  run in this process; several times faster for cheap programs. Relies on httpstan
  internals (:mod:`._httpstan`), so it is used only with a checked httpstan version;
* ``"public"``: pystan's public ``stan.build(...).sample(...)``.

``route="auto"`` takes the native route and falls back to the public one, with an
:class:`~.engine.EngineWarning` saying why, when the driver cannot be built or loaded.
"""
from __future__ import annotations

import contextlib
import importlib.metadata
import io
import sys
import warnings

import numpy as np

from . import _httpstan, _native
from .engine import Draws, Engine, EngineWarning


def _pystan_importable() -> str | None:
    try:
        import stan  # noqa: F401
    except ImportError as exc:
        return f"pystan is not importable ({exc}): `pip install pystan` (Linux and macOS)"
    return None


@contextlib.contextmanager
def _quiet(show_progress: bool, replay_on_error: bool = False):
    """Swallow what pystan prints; replay it on error when it explains the error.

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


class PystanEngine(Engine):
    name = "pystan"
    routes = ("native", "public")

    def unavailable(self):
        return _pystan_importable()

    def version(self):
        return f"pystan {importlib.metadata.version('pystan')}, httpstan {_httpstan.version()}"

    def _route(self, route):
        route = self.check_route(route)
        if route == "native":
            reason = _native.unavailable()
            if reason is not None:
                warnings.warn(f"bayescomp: the pystan engine samples through pystan's public API "
                              f"(slower, the same draws): {reason}", EngineWarning, stacklevel=4)
                return "public"
        return route

    def compile(self, name, code, *, route="auto", show_progress=False):
        route = self._route(route)
        if route == "native":
            try:
                _native.load(name, code, show_progress)
                return "native"
            except _native.DriverBuildError as exc:
                self._announce_fallback(exc)
        _httpstan.compile_public(name, code, show_progress)
        return "public"

    @staticmethod
    def _announce_fallback(exc):
        warnings.warn(f"{exc}\nbayescomp: the pystan engine falls back to pystan's public API "
                      "(slower for small programs, the same draws).", EngineWarning, stacklevel=5)

    def sample(self, name, code, data, settings, *, route="auto", show_progress=False):
        route = self._route(route)
        if route == "native":
            try:
                return _native.sample(name, code, data, settings, show_progress, self.version())
            except _native.DriverBuildError as exc:
                self._announce_fallback(exc)
        return self._sample_public(name, code, data, settings, show_progress)

    def cancel(self):
        _native.cancel_running()

    def _sample_public(self, name, code, data, settings, show_progress):
        import stan

        if not settings.adapt:
            raise RuntimeError("pystan's public API cannot keep a given step size and metric "
                               "(a continued chain); use route='native' or backend='cmdstanpy'")

        _httpstan.compile_public(name, code, show_progress)
        kwargs = dict(num_chains=settings.chains, num_warmup=settings.iter_warmup,
                      num_samples=settings.iter_sampling, delta=settings.adapt_delta,
                      max_depth=settings.max_treedepth)
        if isinstance(settings.inits, float):
            kwargs["init_radius"] = settings.inits
        elif settings.inits is not None:
            kwargs["init"] = list(settings.inits)
        with _quiet(show_progress):  # errors in the data come back in the exception itself
            model = stan.build(code, data=data, random_seed=settings.seed)  # cached: no compile
        # pystan only prints the sampler's messages (e.g. why initialization failed): replay them
        earlier_sockets = _httpstan.sockets()
        with _quiet(show_progress, replay_on_error=True):
            try:
                fit = model.sample(**kwargs)
            finally:
                _httpstan.forget_fits(model, kwargs)
                _httpstan.remove_closed_sockets(earlier_sockets)
                _httpstan.shut_pool_at_exit()
        if fit is None:  # pystan swallows KeyboardInterrupt and returns None
            raise KeyboardInterrupt
        frame = fit.to_frame()   # rows: draw-major, chains interleaved (pystan's layout)
        values = frame.to_numpy(dtype=np.float64)
        values = values.reshape(-1, fit.num_chains, values.shape[1]).transpose(1, 0, 2)
        return Draws(list(frame.columns), np.ascontiguousarray(values), "public", self.version(),
                     _httpstan.stan_version())
