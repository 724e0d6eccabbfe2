"""The seed of an analysis: checked, drawn when missing (here and nowhere else), and the
independent random streams spawned from it.

A user gives one seed (or None) to an entry point (``bayescomp.hierarchical``,
``compare_all``, ``sensitivity``, ``rank_algorithms``, ``sampling.sample``). It is checked and,
when None, drawn once by :func:`check_seed`; it is recorded as given. Every random step of
the analysis then draws from its own stream, a child of ``numpy.random.SeedSequence(seed)``
(as numpy recommends for independent streams; ``SeedSequence.spawn`` numbers children the
same way), so that no two steps share random numbers and adding a step changes no other:

===================  ===========================  ==========================================
stream               ``spawn_key``                what draws from it
===================  ===========================  ==========================================
``"stan"``           ``(0, k)`` for attempt k+1   Stan's seed of each fit, retry or
                                                  continuation (:meth:`Seeds.stan_seed`)
``"initial_values"`` ``(1,)``                     the chains' initial values
``"post_draws"``     ``(2,)``                     the quantities drawn in Python after Stan
``"baselines"``      ``(3,)``                     the Bayesian sign and signed-rank tests
``"tie_orders"``     ``(4,)``                     the rankings' orders of tied algorithms
``"mode_mass"``      ``(5,)``                     the proposals weighing separate modes
``"next_draws"``     ``(6,)``                     the joint model's draws of a new dataset's
                                                  differences (its mean and interval)
===================  ===========================  ==========================================

So ``SeedSequence(seed).spawn(7)[1]`` is the initial values' stream and
``SeedSequence(seed).spawn(1)[0].spawn(k + 1)[k]`` attempt k+1's Stan stream. A Stan seed is
the first 32-bit word of its stream halved, in ``[0, 2**31 - 1]``, the range both engines
accept.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the largest seed: both engines accept [0, 2**31 - 1], which keeps a seed portable
SEED_MAX = 2 ** 31 - 1

#: the streams of an analysis, in the order of their spawn keys
STREAMS = ("stan", "initial_values", "post_draws", "baselines", "tie_orders", "mode_mass",
           "next_draws")


def draw_seed() -> int:
    """A seed from fresh entropy (the operating system's), in ``[0, 2**31 - 1]``."""
    return stan_seed(np.random.SeedSequence())


def check_seed(seed) -> int:
    """``seed`` as an int, checked; one drawn (:func:`draw_seed`) when None.

    The one place a missing seed is drawn: an entry point calls it once and passes the int
    on, so functions it calls draw nothing.

    Raises
    ------
    TypeError
        ``seed`` is neither None nor an integer (a bool is not one).
    ValueError
        ``seed`` is outside ``[0, 2**31 - 1]``.
    """
    if seed is None:
        return draw_seed()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer or None, got {seed!r}")
    if not 0 <= seed <= SEED_MAX:
        raise ValueError(f"seed must be in [0, {SEED_MAX}], got {seed}")
    return int(seed)


def stan_seed(sequence: np.random.SeedSequence) -> int:
    """A seed for Stan from ``sequence``: its first 32-bit word halved, in ``[0, 2**31 - 1]``."""
    return int(sequence.generate_state(1, dtype=np.uint32)[0] >> 1)


@dataclass(frozen=True)
class Seeds:
    """The user's seed and the streams spawned from it (see the module notes).

    Parameters
    ----------
    seed : int or None
        The user's seed; None draws one (:func:`check_seed`). :attr:`seed` is what was
        given, or drawn, and is what a result records.
    """

    seed: int | None

    def __post_init__(self):
        object.__setattr__(self, "seed", check_seed(self.seed))

    def sequence(self, stream: str) -> np.random.SeedSequence:
        """The SeedSequence of ``stream``, one of :data:`STREAMS` other than ``"stan"``."""
        if stream not in STREAMS[1:]:
            raise ValueError(f"unknown random stream {stream!r}; choose from {STREAMS[1:]}")
        return np.random.SeedSequence(self.seed, spawn_key=(STREAMS.index(stream),))

    def generator(self, stream: str) -> np.random.Generator:
        """A new generator on ``stream``: each call starts it from its beginning."""
        return np.random.default_rng(self.sequence(stream))

    def stan_seed(self, attempt: int) -> int:
        """Stan's seed of fit number ``attempt`` (from 1): the first fit, a retry afresh or a
        continuation each run Stan with a seed of its own."""
        if attempt < 1:
            raise ValueError(f"attempts are numbered from 1, got {attempt}")
        return stan_seed(np.random.SeedSequence(self.seed, spawn_key=(0, attempt - 1)))
