"""bayescomp.sampling.threads: the count of usable cores, and a map in threads that gives the
serial map's results in the same order."""
import os

import numpy as np
import pytest

from bayescomp.sampling.threads import map_on_cores, usable_cores


def test_usable_cores_are_the_affinity_of_this_process():
    expected = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                else os.cpu_count())
    assert usable_cores() == expected >= 1


def test_the_map_in_threads_is_the_serial_map_in_order():
    blocks = [np.random.default_rng(seed).normal(size=(64, 4000)) for seed in range(7)]
    serial = [np.sort(block, axis=1) for block in blocks]
    for found, expected in zip(map_on_cores(lambda b: np.sort(b, axis=1), iter(blocks)), serial):
        np.testing.assert_array_equal(found, expected)
    assert map_on_cores(abs, []) == [] and map_on_cores(abs, [-3]) == [3]


def test_an_exception_in_a_thread_reaches_the_caller():
    def fails_on_two(x):
        if x == 2:
            raise ValueError("two")
        return x

    with pytest.raises(ValueError, match="two"):
        map_on_cores(fails_on_two, range(5))
