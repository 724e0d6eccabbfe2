"""Type aliases of the public signatures, for readers and type checkers (``py.typed``).

Imported by the modules under ``typing.TYPE_CHECKING`` only: annotations are strings
(``from __future__ import annotations``), so none of this runs when the package is used.
"""
from __future__ import annotations

from typing import Union

import numpy as np
from numpy.typing import ArrayLike

from bayescomp.rope import Rope

__all__ = ["ArrayLike", "RopeLike", "SeedLike"]

#: A ROPE: a half-width ``w`` for ``[-w, w]``, a ``(low, high)`` pair, or a :class:`Rope`.
RopeLike = Union[float, "tuple[float, float]", Rope]

#: What seeds a random draw: an integer, numpy's generator or seed sequence, or None
#: (fresh entropy, or a seed drawn and recorded, as each function says).
SeedLike = Union[int, np.random.Generator, np.random.SeedSequence, None]
