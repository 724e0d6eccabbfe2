"""What the compiled-program caches hold, and clearing them (``bayescomp cache`` on the CLI).

bayescomp's own cache (:func:`cache_dir`: ``$BAYESCOMP_CACHE_DIR``, else
``platformdirs.user_cache_dir("bayescomp")``, ``~/.cache/bayescomp`` on Linux) holds the
cmdstanpy engine's executables (``cmdstan-<version>/<sha256>/``) and the pystan engine's
native modules (``stan-native/<module>/``), each beside a ``record.json`` of its build.
pystan's public route compiles into httpstan's own cache (``~/.cache/httpstan/<version>/``,
following ``XDG_CACHE_HOME``), shared with every other pystan user: only the models of
bayescomp's own programs there are bayescomp's to list as its entries and to clear.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from ._cache import PART, is_locked, pid_alive, sha256, user_cache
from .programs import program_code, stan_file

__all__ = ["CacheEntry", "cache_dir", "httpstan_cache_dir", "cache_info", "clear_cache"]


def _programs() -> list:
    """The names of the Stan programs shipped with bayescomp."""
    return sorted(p.stem for p in stan_file("correlated").parent.glob("*.stan"))


@dataclass(frozen=True)
class CacheEntry:
    """One compiled program in a cache.

    Attributes
    ----------
    engine : str
        ``"cmdstanpy"`` or ``"pystan"``.
    route : str
        ``"cmdstan"``, ``"native"`` or ``"public"`` (httpstan's cache).
    program : str
        The program's name (``"correlated"``, ...), ``"?"`` when its record does not say.
    path : str
        The entry's directory.
    size : int
        Bytes in the entry.
    status : str
        ``"ok"``, ``"building"`` (a build holds its lock), or what is wrong, e.g.
        ``"damaged: it has 100000 bytes, 812344 when built"``; a damaged entry is rebuilt by
        the next run that needs it, never loaded.
    """

    engine: str
    route: str
    program: str
    path: str
    size: int
    status: str


def cache_dir() -> Path:
    """bayescomp's cache directory (it may not exist yet)."""
    return user_cache()


def httpstan_cache_dir() -> Path | None:
    """httpstan's cache directory for its installed version, or None without httpstan."""
    try:
        import httpstan.cache
    except ImportError:
        return None
    return httpstan.cache.cache_directory()


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _recorded_damage(module: Path | None, directory: Path) -> str | None:
    if module is None or not module.is_file():
        return "no compiled program (an interrupted build?)"
    try:
        record = json.loads((directory / "record.json").read_text())
    except (OSError, ValueError):
        return "no readable record of its build"
    if module.stat().st_size != record.get("size"):
        return f"it has {module.stat().st_size} bytes, {record.get('size')} when built"
    if sha256(module) != record.get("sha256"):
        return "its contents changed since it was built"
    return None


def _status(damage: str | None, lock: Path) -> str:
    if is_locked(lock):
        return "building"
    return "ok" if damage is None else f"damaged: {damage}"


def _record_name(directory: Path) -> str:
    """The program's name in the record, else the shipped program whose code it hashed."""
    import hashlib

    try:
        record = json.loads((directory / "record.json").read_text())
    except (OSError, ValueError):
        return "?"
    if record.get("name"):
        return record["name"]
    for program in _programs():
        if hashlib.sha256(program_code(program)[1].encode()).hexdigest() == record.get("program"):
            return program
    return "?"


def _bayescomp_entries(root: Path) -> list:
    import importlib.machinery

    entries = []
    for directory in sorted(root.glob("cmdstan-*/*")):
        if not directory.is_dir() or directory.name.endswith(PART):
            continue
        sources = sorted(directory.glob("*.stan"))
        program = sources[0].stem if sources else _record_name(directory)
        exe = directory / program if sources else None
        entries.append(CacheEntry("cmdstanpy", "cmdstan", program, str(directory),
                                  _size(directory), _status(_recorded_damage(exe, directory),
                                  directory.with_name(directory.name + ".lock"))))
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for directory in sorted((root / "stan-native").glob("*")):
        if not directory.is_dir() or directory.name.endswith(PART):
            continue
        module = directory / (directory.name + suffix)
        entries.append(CacheEntry("pystan", "native", _record_name(directory), str(directory),
                                  _size(directory), _status(_recorded_damage(module, directory),
                                  directory.with_name(directory.name + ".lock"))))
    return entries


def _httpstan_entries() -> list:
    """httpstan's models of bayescomp's programs."""
    try:
        import httpstan.cache
        import httpstan.models
    except ImportError:
        return []
    from . import _httpstan

    entries = []
    for program in _programs():
        try:
            model_name = httpstan.models.calculate_model_name(program_code(program)[1])
        except FileNotFoundError:
            continue
        directory = httpstan.cache.model_directory(model_name)
        if directory.is_dir():
            lock = user_cache() / "httpstan" / (directory.name + ".lock")
            entries.append(CacheEntry("pystan", "public", program, str(directory),
                                      _size(directory),
                                      _status(_httpstan.model_damage(model_name), lock)))
    return entries


def cache_info() -> dict:
    """The caches' paths, sizes and entries.

    Returns
    -------
    dict
        ``path`` (bayescomp's cache directory), ``size`` (its bytes, lock files and
        leftovers of killed builds included), ``httpstan_path`` (httpstan's cache, or None),
        ``entries`` (list of :class:`CacheEntry` as dicts: bayescomp's entries, then
        httpstan's models of bayescomp's programs).
    """
    root = cache_dir()
    entries = _bayescomp_entries(root) if root.is_dir() else []
    entries += _httpstan_entries()
    httpstan_dir = httpstan_cache_dir()
    return dict(path=str(root), size=_size(root) if root.is_dir() else 0,
                httpstan_path=None if httpstan_dir is None else str(httpstan_dir),
                entries=[asdict(entry) for entry in entries])


def clear_cache() -> dict:
    """Remove every compiled program of bayescomp: its cache directory and httpstan's models of
    bayescomp's programs. Entries being built (their lock held) are left alone.

    Returns
    -------
    dict
        ``removed`` (entries removed), ``freed`` (bytes), ``skipped`` (paths of entries
        being built by another process).
    """
    info = cache_info()
    removed, freed, skipped = 0, 0, []
    for entry in info["entries"]:
        if entry["status"] == "building":
            skipped.append(entry["path"])
            continue
        freed += entry["size"]
        shutil.rmtree(entry["path"], ignore_errors=True)
        removed += 1
    root = Path(info["path"])
    if root.is_dir():   # leftovers of killed builds, lock files nobody holds, records
        # staging directories of builds under way (their process alive) stay
        kept = [Path(s) for s in skipped] + [
            part for part in root.rglob(f"*{PART}") if part.is_dir()
            and part.name[:-len(PART)].rsplit(".", 1)[-1].isdigit()
            and pid_alive(int(part.name[:-len(PART)].rsplit(".", 1)[-1]))]
        for path in sorted(root.rglob("*"), key=lambda p: -len(p.parts)):
            if any(path == k or k in path.parents for k in kept):
                continue
            if path.name.endswith(".lock") and is_locked(path):
                continue
            if path.is_file() or path.is_symlink():
                freed += path.stat().st_size if path.is_file() else 0
                path.unlink(missing_ok=True)
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    return dict(removed=removed, freed=freed, skipped=skipped)
