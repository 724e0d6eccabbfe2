"""The cmdstanpy engine: CmdStan through cmdstanpy's public API.

Programs are compiled once per Stan source and CmdStan version into
``<user cache>/cmdstan-<version>/<sha256 of the code>/``, beside a record of the executable's
size and SHA-256; an executable that does not match its record is rebuilt (one warning), a
lock file makes concurrent first runs share one build, and the entry is compiled in a
staging directory renamed into place when complete (an interrupted compile leaves none). Sampling writes CmdStan's CSV files
to a temporary directory, read with pandas' C parser: cmdstanpy's and ArviZ's readers cost
about 0.3 s per fit of the 54-dataset hierarchical model, a tenth of the fit.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
import warnings
from pathlib import Path

import numpy as np

from ._cache import commit, file_lock, sha256, staging, user_cache
from .engine import Draws, Engine, EngineWarning, adaptation, adapted_metric
from .programs import STANC_FLAGS
from .threads import map_on_cores

_FIX = "install CmdStan with `pip install cmdstanpy && python -m cmdstanpy.install_cmdstan`"
_TOTAL_TIME = re.compile(rb"([0-9.eE+-]+) seconds \(Total\)")
#: the chain in the name of an output file, ``<model>-<time>_<chain>`` (absent for one chain)
_CHAIN = re.compile(r"_(\d+)$")
_MODELS: dict = {}
#: CmdStan make options of every executable (part of the cache key when not empty)
CPP_OPTIONS: dict = {}
#: stanc options of every executable (part of the cache key when not empty): cmdstanpy's
#: form of :data:`~bayescomp.sampling.programs.STANC_FLAGS`
STANC_OPTIONS: dict = {flag.lstrip("-"): True for flag in STANC_FLAGS}
#: significant digits of the draws CmdStan writes: 17 give back every double to the last
#: bit (18 gave the same draws from files 5% larger)
SIG_FIGS = 17
_LOCK = threading.Lock()


#: the file the developers' offline builder (``shared/cmdstan/install.sh``) writes into a
#: CmdStan directory when ``make build`` has finished; it holds ``<dir>.lock`` while building
BUILT_MARKER = ".bayescomp-built"


class UnfinishedCmdStan(RuntimeError):
    """The CmdStan directory found is a build under way or an interrupted one."""


def unfinished_build(home: str | os.PathLike) -> str | None:
    """Why the CmdStan directory ``home`` must not be used, or None when it may be.

    cmdstanpy accepts any directory with a makefile, so a CmdStan that the developers'
    builder is still building, or whose build was interrupted, would be used half-built
    (its compiles fail, or use a toolchain that is being replaced). The builder marks both:
    a lock file ``<home>.lock`` beside the directory from its start, and the end marker
    ``<home>/.bayescomp-built`` once finished. A lock file without the marker is a build
    under way while a process holds the lock, else an interrupted one. A CmdStan installed
    otherwise (``install_cmdstan``, a release tarball) has neither file and is used.

    Parameters
    ----------
    home : str or path-like
        A CmdStan directory.

    Returns
    -------
    str or None
        One sentence naming the directory and what to do, or None.
    """
    home = Path(home)
    lock = home.with_name(home.name + ".lock")
    if not lock.exists() or (home / BUILT_MARKER).is_file():
        return None
    state = "its build was interrupted (run the build again)"
    try:
        import fcntl

        with open(lock, "rb") as fh:   # read-only: the lock may belong to another user
            try:
                fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
                fcntl.flock(fh, fcntl.LOCK_UN)
            except BlockingIOError:
                state = "it is still being built (wait until the build finishes)"
    except (ImportError, OSError):   # no flock here, or an unreadable lock: either may hold
        state = "it is still being built or its build was interrupted"
    return (f"the CmdStan in {home} is unfinished: {state}; {lock} is there and "
            f"{home / BUILT_MARKER} is not")


def cmdstan_home() -> str:
    """The CmdStan directory cmdstanpy uses; RuntimeError saying why there is none.

    An unfinished build (:func:`unfinished_build`) counts as none.
    """
    try:
        import cmdstanpy
    except ImportError as exc:
        raise RuntimeError(f"cmdstanpy is not importable ({exc})") from None
    try:
        # $CMDSTAN, then ~/.cmdstan, validated by cmdstanpy
        home = cmdstanpy.cmdstan_path()
    except Exception as exc:  # ValueError, but any failure means "not usable"
        raise RuntimeError(str(exc)) from None
    unfinished = unfinished_build(home)
    if unfinished is not None:
        raise UnfinishedCmdStan(unfinished)
    return home


def cmdstan_version(home: str) -> str:
    try:
        text = (Path(home) / "makefile").read_text()
        return re.search(r"^CMDSTAN_VERSION := (\S+)", text, re.M).group(1)
    except (OSError, AttributeError):
        return Path(home).name.removeprefix("cmdstan-") or "unknown"


def _quiet(show_progress):
    import cmdstanpy

    return contextlib.nullcontext() if show_progress else cmdstanpy.disable_logging()


class CmdStanPyEngine(Engine):
    name = "cmdstanpy"
    routes = ("cmdstan",)

    def unavailable(self):
        try:
            cmdstan_home()
        except UnfinishedCmdStan as exc:   # installing again would not help
            return str(exc)
        except RuntimeError as exc:
            return f"CmdStan not installed ({exc}): {_FIX}"
        return None

    def version(self):
        import cmdstanpy

        return f"cmdstanpy {cmdstanpy.__version__}, CmdStan {self._cmdstan()}"

    def _cmdstan(self) -> str:
        try:
            return cmdstan_version(cmdstan_home())
        except UnfinishedCmdStan as exc:
            raise RuntimeError(f"{exc}; or choose backend='pystan'") from None
        except RuntimeError as exc:
            raise RuntimeError(f"CmdStan not installed: {exc}. To use the cmdstanpy engine, "
                               f"{_FIX}; or choose backend='pystan'.") from None

    def compile(self, name, code, *, route="auto", show_progress=False):
        self._model(name, code, show_progress)
        return self.check_route(route)

    def _model(self, name, code, show_progress):
        import cmdstanpy

        version = self._cmdstan()
        key = (code, version, json.dumps([CPP_OPTIONS, STANC_OPTIONS], sort_keys=True))
        with _LOCK:
            if key in _MODELS:
                return _MODELS[key]
            directory = entry_dir(code, version)
            source = directory / f"{name}.stan"
            exe = source.with_suffix(".exe" if os.name == "nt" else "")
            record_path = directory / "record.json"
            with file_lock(directory.with_name(directory.name + ".lock"),
                           f"Stan program {name!r}"):
                damage = _damage(exe, record_path) if exe.is_file() else "missing"
                if damage != "missing" and damage is not None:
                    warnings.warn(f"bayescomp: the compiled Stan program {name!r} in the cache "
                                  f"({exe}) is damaged: {damage}; rebuilding it",
                                  EngineWarning, stacklevel=5)
                if damage is not None:
                    _build(cmdstanpy, name, code, directory, show_progress)
                with _quiet(show_progress):   # both files given and the exe newer: no compile
                    model = cmdstanpy.CmdStanModel(stan_file=source, exe_file=exe,
                                                   cpp_options=CPP_OPTIONS or None,
                                                   stanc_options=STANC_OPTIONS or None)
            _MODELS[key] = model
            return model

    def sample(self, name, code, data, settings, *, route="auto", show_progress=False):
        route = self.check_route(route)
        model = self._model(name, code, show_progress)
        inits = settings.inits
        # a continued chain keeps the step size and metric given (adapt engaged=0)
        fixed = dict(adapt_delta=settings.adapt_delta) if settings.adapt else dict(
            adapt_engaged=False, step_size=list(settings.step_size),
            metric=[{"inv_metric": list(m)} for m in settings.inv_metric])
        with tempfile.TemporaryDirectory(prefix="bayescomp-cmdstan-") as output_dir, \
                _quiet(show_progress):
            try:
                model.sample(
                    data=data, chains=settings.chains, parallel_chains=settings.chains,
                    iter_warmup=settings.iter_warmup, iter_sampling=settings.iter_sampling,
                    seed=settings.seed, max_treedepth=settings.max_treedepth, inits=inits,
                    output_dir=output_dir, show_progress=show_progress, show_console=False,
                    # the draws as doubles, as pystan returns them: with CmdStan's default
                    # of 6 significant digits a sigma_i next to its floor loses its place
                    # in the interval, and the log density at the draws is off by nats
                    sig_figs=SIG_FIGS, **fixed)
            except RuntimeError as exc:
                raise RuntimeError(f"Stan sampling of {name!r} failed: {exc}") from None
            columns, values, seconds, found = _read_csv(Path(output_dir), settings.chains)
        attrs = {"stan_seconds": seconds} if None not in seconds else {}
        attrs.update(adapted_metric(found, settings))
        return Draws(columns, values, route, self.version(), self._cmdstan(), attrs)


def entry_dir(code: str, version: str) -> Path:
    """The cache entry of ``code`` for CmdStan ``version``."""
    key = code if not CPP_OPTIONS else json.dumps([code, CPP_OPTIONS], sort_keys=True)
    if STANC_OPTIONS:
        key = json.dumps([key, STANC_OPTIONS], sort_keys=True)
    return user_cache() / f"cmdstan-{version}" / hashlib.sha256(key.encode()).hexdigest()


def _build(cmdstanpy, name: str, code: str, directory: Path, show_progress: bool) -> None:
    """Compile ``code`` in a staging directory and make it the entry ``directory``, with the
    record of its executable: an interrupted or killed compile leaves no entry."""
    with staging(directory) as part:
        source = part / f"{name}.stan"
        source.write_text(code)
        with _quiet(show_progress):
            try:   # compiles next to the source
                model = cmdstanpy.CmdStanModel(stan_file=source, cpp_options=CPP_OPTIONS or None,
                                               stanc_options=STANC_OPTIONS or None)
            except (ValueError, RuntimeError) as exc:
                raise RuntimeError(f"CmdStan could not compile Stan program {name!r}: "
                                   f"{exc}") from None
        exe = Path(model.exe_file)
        record = dict(size=exe.stat().st_size, sha256=sha256(exe), name=name,
                      cpp_options=CPP_OPTIONS, stanc_options=STANC_OPTIONS)
        (part / "record.json").write_text(json.dumps(record))
        commit(part, directory)


def _damage(exe: Path, record_path: Path) -> str | None:
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError):
        return "it cannot be verified: it has no readable record of its build"
    if exe.stat().st_size != record.get("size"):
        return f"it has {exe.stat().st_size} bytes, {record.get('size')} when built"
    if sha256(exe) != record.get("sha256"):
        return "its contents changed since it was built"
    return None


def _read_csv(directory: Path, chains: int):
    """Columns, draws (chains, draws, columns), Stan's time per chain and each chain's
    :func:`adaptation` from CmdStan's CSVs.

    cmdstanpy names them ``<model>-<time>_<chain>.csv``, or ``<model>-<time>.csv`` for a
    single chain. The chains are read in threads, one per core (pandas' C parser releases
    the GIL: 4 chains of 400 datasets, 17 MB each, took 0.15-0.18 s on 2 cores against
    0.30-0.36 s one after another).
    """
    files = sorted(directory.glob("*.csv"),
                   key=lambda p: int(m.group(1)) if (m := _CHAIN.search(p.stem)) else 0)
    if len(files) != chains:
        raise RuntimeError(f"CmdStan wrote {len(files)} output files for {chains} chains")
    read = map_on_cores(_read_chain, files)
    columns = read[0][0]
    if any(chain[0] != columns for chain in read):
        raise RuntimeError("CmdStan's chains wrote different columns")
    return (columns, np.stack([chain[1] for chain in read]), [chain[2] for chain in read],
            [chain[3] for chain in read])


def _read_chain(path: Path):
    """One chain's columns, draws (draws, columns), Stan's time and :func:`adaptation`; the
    comment lines (configuration, adaptation, timing) are skipped by the C parser, which
    types the columns itself (cheaper than a float dtype for each: integers such as
    ``n_leapfrog__`` are made floats, exactly, after)."""
    import pandas as pd

    frame = pd.read_csv(path, comment="#", engine="c")
    with open(path) as fh:   # the adaptation's comments: between the header and a draw
        header, comments = False, []
        for line in fh:
            if not line.startswith("#"):
                if header:
                    break
                header = True
            elif header:
                comments.append(line)
    with open(path, "rb") as fh:
        fh.seek(max(0, path.stat().st_size - 400))
        match = _TOTAL_TIME.search(fh.read())
    return (list(frame.columns), frame.to_numpy(dtype=np.float64), float(match.group(1))
            if match else None, adaptation(comments))
