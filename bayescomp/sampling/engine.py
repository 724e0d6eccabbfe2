"""The interface every Stan engine implements, and what passes between an engine and the rest.

An engine compiles a Stan program and runs Stan's NUTS sampler (diagonal metric, adapted)
with given settings, returning the raw draws as a :class:`Draws`; turning those into ArviZ
InferenceData is done once for every engine, by :mod:`bayescomp.sampling.inference_data`.
An engine may reach Stan by several *routes* (the pystan engine: an in-memory driver or
pystan's public API); the route used is reported in :attr:`Draws.route` and recorded.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field

import numpy as np


class EngineWarning(RuntimeWarning):
    """Something about how Stan runs changed on its own: a route fell back to another, or a
    damaged compiled module in the cache is rebuilt. The draws are still valid."""


@dataclass(frozen=True)
class Settings:
    """NUTS settings of one call, checked by :func:`bayescomp.sampling.sample`.

    ``seed`` is Stan's, checked (or drawn) by :func:`bayescomp.sampling.seeds.check_seed`.
    ``inits`` is None (Stan's default, uniform on (-2, 2) unconstrained), a float (that radius
    instead of 2) or a list of one dict per chain, already plain JSON-able values.
    ``step_size`` and ``inv_metric`` (one per chain: a float, a list of the diagonal's
    values) are None for Stan's adaptation in warm-up, or what the chains keep, unadapted
    (a continued chain: its adapted step size and metric).
    """

    chains: int
    iter_warmup: int
    iter_sampling: int
    seed: int
    adapt_delta: float
    max_treedepth: int
    inits: object = None
    step_size: tuple | None = None
    inv_metric: tuple | None = None

    @property
    def adapt(self) -> bool:
        """Whether warm-up adapts the step size and metric (none given)."""
        return self.inv_metric is None

    def recorded(self) -> dict:
        """The settings as recorded in the InferenceData's attrs (inits are not)."""
        return dict(chains=self.chains, iter_warmup=self.iter_warmup,
                    iter_sampling=self.iter_sampling, seed=self.seed,
                    adapt_delta=self.adapt_delta, max_treedepth=self.max_treedepth,
                    adapted=self.adapt)


def adaptation(lines) -> dict:
    """The step size and inverse metric (the diagonal) Stan reports after its warm-up, from
    its notes (CmdStan's CSV comments with their ``#`` stripped, or the native driver's);
    empty when there are none (no adaptation)."""
    lines = [line.strip().lstrip("#").strip() for line in lines]
    found = {}
    for number, line in enumerate(lines):
        if line.startswith("Step size ="):
            found["step_size"] = float(line.split("=", 1)[1])
        elif line.startswith("Diagonal elements of inverse mass matrix") and number + 1 < len(lines):
            found["inv_metric"] = [float(v) for v in lines[number + 1].split(",")]
    return found


@dataclass
class Draws:
    """What an engine returns: every chain's draws of Stan's output columns.

    ``columns`` are Stan's names, the sampler's (``lp__``, ``accept_stat__``, ...) first,
    then the constrained parameters, transformed parameters and generated quantities as Stan
    flattens them (``B.1.2``, column-major). ``values`` has shape (chains, draws, columns).
    """

    columns: list
    values: np.ndarray
    route: str
    engine_version: str
    stan_version: str
    attrs: dict = field(default_factory=dict)


class Engine(abc.ABC):
    """A way to run Stan. Subclasses are stateless apart from caches of compiled programs."""

    #: the name users pass as ``backend=``
    name: str = ""
    #: the routes this engine can take, the preferred one first
    routes: tuple = ()

    @abc.abstractmethod
    def unavailable(self) -> str | None:
        """None when the engine can run here, else why not and what to install."""

    @abc.abstractmethod
    def version(self) -> str:
        """The engine's software and versions, e.g. ``"cmdstanpy 1.3.2, CmdStan 2.35.0"``."""

    @abc.abstractmethod
    def compile(self, name: str, code: str, *, route: str = "auto",
                show_progress: bool = False) -> str:
        """Compile ``code`` into the engine's cache unless it is there; return the route that
        will sample it. Raises RuntimeError with the compiler's messages if it cannot."""

    @abc.abstractmethod
    def sample(self, name: str, code: str, data: dict, settings: Settings, *,
               route: str = "auto", show_progress: bool = False) -> Draws:
        """Compile if needed and sample ``code`` on ``data`` (plain JSON-able values)."""

    def cancel(self) -> None:
        """Stop the chains this engine runs in this process (KeyboardInterrupt in a worker
        thread); engines whose chains run in child processes stop with them."""

    def check_route(self, route: str) -> str:
        """``route`` itself if this engine has it; "auto" is its preferred route."""
        if route == "auto":
            return self.routes[0]
        if route not in self.routes:
            raise ValueError(f"the {self.name} engine has no route {route!r}; choose 'auto' or "
                             + " or ".join(map(repr, self.routes)))
        return route


def adapted_metric(found: list, settings: Settings) -> dict:
    """``step_size`` and ``inv_metric`` per chain for :attr:`Draws.attrs`: those the chains
    adapted (``found``, one :func:`adaptation` per chain), or those they were given."""
    if not settings.adapt:
        return dict(step_size=list(settings.step_size),
                    inv_metric=[list(m) for m in settings.inv_metric])
    if not all("step_size" in f and "inv_metric" in f for f in found):
        return {}
    return dict(step_size=[f["step_size"] for f in found],
                inv_metric=[f["inv_metric"] for f in found])
