"""The mixin that makes a result's text its summary.

Every result class has a ``summary()`` (written in :mod:`bayescomp.presentation`); mixing in
:class:`Summarised` makes ``str(result)`` and ``print(result)`` show it, while ``repr`` stays
the dataclass's field-by-field one. It imports nothing from the package, so any layer can
use it.
"""
from __future__ import annotations


class Summarised:
    """``str(result)`` is ``result.summary()``."""

    def summary(self) -> str:
        """The result in text."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.summary()
