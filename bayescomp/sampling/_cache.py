"""Helpers shared by the engines' caches of compiled programs: where they live, hashes, a
process lock and staging directories that become an entry only when complete."""
from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import sys
from pathlib import Path

#: environment variable naming bayescomp's cache directory instead of the per-user one
CACHE_ENV = "BAYESCOMP_CACHE_DIR"
_STAGING: set = set()   # this process's unfinished builds, removed at exit (Ctrl-C)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def user_cache() -> Path:
    """bayescomp's cache directory: ``$BAYESCOMP_CACHE_DIR`` when set, else the per-user one
    (``platformdirs.user_cache_dir("bayescomp")``, ``~/.cache/bayescomp`` on Linux)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("bayescomp"))


@contextlib.contextmanager
def file_lock(path: Path, what: str):
    """An exclusive lock between processes, released by the system if the holder dies, so
    that concurrent first runs share one build; a waiting process says what it waits for."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.stderr.write(f"bayescomp: waiting for another process compiling {what}\n")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def is_locked(path: Path) -> bool:
    """Whether another process holds the lock at ``path`` (a build under way)."""
    import fcntl

    if not path.is_file():
        return False
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
    return False


PART = ".part"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a build that may still be writing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_parts(entry: Path) -> None:
    """Remove what killed builds of ``entry`` left (``<entry>.<pid>.part``, pid gone)."""
    for part in entry.parent.glob(f"{entry.name}.*{PART}"):
        pid = part.name[len(entry.name) + 1:-len(PART)]
        if not pid.isdigit() or not pid_alive(int(pid)) or int(pid) == os.getpid():
            shutil.rmtree(part, ignore_errors=True)


@contextlib.contextmanager
def staging(entry: Path):
    """A fresh directory ``<entry>.<pid>.part`` to build in, renamed to ``entry`` by
    :func:`commit`; removed if the build fails or is interrupted (also at exit, for a build
    in a daemon thread that an interrupted main thread leaves behind). Call under the
    entry's lock. An entry exists only complete: a partial build is never found as one."""
    remove_stale_parts(entry)
    part = entry.with_name(f"{entry.name}.{os.getpid()}{PART}")
    part.mkdir(parents=True)
    _STAGING.add(part)
    try:
        yield part
    finally:
        _STAGING.discard(part)
        shutil.rmtree(part, ignore_errors=True)


def commit(part: Path, entry: Path) -> None:
    """Replace ``entry`` (a damaged one, if any) with the finished build in ``part``."""
    shutil.rmtree(entry, ignore_errors=True)
    os.rename(part, entry)   # atomic: readers see the old entry, none, or the new one


@atexit.register
def _remove_staging():
    for part in list(_STAGING):
        shutil.rmtree(part, ignore_errors=True)


def elf_damage(path: Path) -> str | None:
    """None when the ELF shared object at ``path`` holds every segment and section its header
    announces, else what is missing. A truncated library that is loaded anyway is mapped past
    its end and the process dies of SIGBUS; this reads 64 bytes and the program headers.
    Other formats (Mach-O, 32-bit) are not checked: None."""
    import struct

    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            header = fh.read(64)
            if not sys.platform.startswith("linux"):
                return None
            if len(header) < 64 or header[:4] != b"\x7fELF":
                return f"it has {size} bytes and no ELF header"
            if header[4] != 2:   # 32-bit: not checked
                return None
            order = "<" if header[5] == 1 else ">"
            phoff, shoff = struct.unpack_from(order + "QQ", header, 0x20)
            phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", header, 0x36)
            if shoff + shnum * shentsize > size or phoff + phnum * phentsize > size:
                return f"it has {size} bytes, fewer than its header announces (truncated)"
            fh.seek(phoff)
            table = fh.read(phnum * phentsize)
        for i in range(phnum):
            kind, _, offset, _, _, filesz = struct.unpack_from(order + "IIQQQQ", table, i * phentsize)
            if kind == 1 and offset + filesz > size:   # PT_LOAD past the end
                return f"it has {size} bytes, fewer than its segments need (truncated)"
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    return None
