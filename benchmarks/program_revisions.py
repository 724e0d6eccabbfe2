"""What the step-cost benchmarks share: a Stan program at a git revision, and CmdStan's
sampling seconds as the engine's recorded time.

Used by ``bench_step_cost.py`` (stan/hierarchical.stan) and ``bench_joint_step_cost.py``
(stan/joint.stan).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from bayescomp.sampling import cmdstanpy_engine

ROOT = Path(__file__).resolve().parents[1]


def program(name: str, revision: str) -> str:
    """Stan code of ``stan/<name>.stan`` at a git revision, or in the working tree
    (``revision="work"``). Its ``#include`` lines are resolved against the working tree's
    ``stan/`` when it is compiled."""
    if revision == "work":
        return (ROOT / "stan" / f"{name}.stan").read_text()
    return subprocess.run(["git", "-C", str(ROOT), "show", f"{revision}:stan/{name}.stan"],
                          check=True, capture_output=True, text=True).stdout


def record_sampling_seconds() -> None:
    """Point the cmdstanpy engine at CmdStan's sampling seconds (warm-up excluded) instead of
    its total, so that ``idata.attrs["stan_seconds"]`` over the kept draws' leapfrog steps is
    the cost of a step."""
    cmdstanpy_engine._TOTAL_TIME = re.compile(rb"([0-9.eE+-]+) seconds \(Sampling\)")
