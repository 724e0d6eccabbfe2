"""Deprecated: use :mod:`bayescomp.sampling`. Kept for one release as an alias of its public API."""
from __future__ import annotations

import warnings

from .sampling import (BACKENDS, SAMPLE_STATS, resolve_backend, sample, stan_file,  # noqa: F401
                       threaded_fits)

warnings.warn("bayescomp.backends is deprecated and will be removed in the next release; "
              "use bayescomp.sampling", DeprecationWarning, stacklevel=2)
