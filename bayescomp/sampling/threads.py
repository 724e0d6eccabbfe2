"""Threads on the cores this process may use: the one place that counts them.

numpy's sorts, FFTs and elementwise operations and pandas' CSV parser release the GIL, so
work split into independent pieces (chains, blocks of quantities, blocks of datasets) runs
on every core in threads, without the copies that processes would need.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the system reports one (a
    container or ``taskset`` may allow fewer than the machine has), else all of them."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def map_on_cores(function, items) -> list:
    """``[function(item) for item in items]``, in threads, one per usable core (at most one
    per item); the results in the items' order, the first exception raised here."""
    items = list(items)
    if len(items) <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(len(items), usable_cores())) as pool:
        return list(pool.map(function, items))
