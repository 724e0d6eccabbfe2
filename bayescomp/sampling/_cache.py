"""Helpers shared by the engines' caches of compiled programs: hashes and a process lock."""
from __future__ import annotations

import contextlib
import hashlib
import sys
from pathlib import Path


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def user_cache() -> Path:
    """bayescomp's per-user cache directory (``~/.cache/bayescomp`` on Linux)."""
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
