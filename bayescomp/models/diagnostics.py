"""Convergence diagnostics of a Stan fit, with a verdict and advice the user sees.

Thresholds follow Vehtari et al. (2021, "Rank-normalization, folding, and localization"):
R-hat at most 1.01 and bulk and tail ESS of at least 100 per chain; E-BFMI below 0.3
signals poor exploration of the energy distribution (Betancourt 2016).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import arviz as az
import numpy as np

from bayescomp.decisions import UNRELIABLE
from bayescomp.exceptions import SamplingWarning
from bayescomp.models.convergence import convergence
from bayescomp.summarised import Summarised

if TYPE_CHECKING:
    from typing import Sequence

RHAT_MAX = 1.01
ESS_PER_CHAIN_MIN = 100
BFMI_MIN = 0.3


@dataclass(frozen=True)
class Diagnostics(Summarised):
    """Sampler health of one fit; ``problems`` lists what went wrong with what to do."""

    max_rhat: float
    min_ess_bulk: float
    min_ess_tail: float
    divergences: int
    treedepth_saturated: int
    min_bfmi: float
    n_chains: int
    n_draws: int
    max_treedepth: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def verdict(self) -> str:
        return "ok" if self.ok else f"{len(self.problems)} problem(s)"

    def summary(self) -> str:
        lines = [
            f"Sampler diagnostics ({self.n_chains} chains x {self.n_draws} draws): {self.verdict}",
            f"  max R-hat {self.max_rhat:.4f}, min ESS bulk {self.min_ess_bulk:.0f}, "
            f"min ESS tail {self.min_ess_tail:.0f}",
            f"  divergences {self.divergences}, draws at max tree depth {self.treedepth_saturated}, "
            f"min E-BFMI {self.min_bfmi:.2f}",
        ]
        lines += [f"  - {problem}" for problem in self.problems]
        return "\n".join(lines)


def posterior_draws(posterior) -> np.ndarray:
    """The variables of an InferenceData group as one (chain, draw, quantity) array."""
    n_chains, n_draws = posterior.sizes["chain"], posterior.sizes["draw"]
    return np.concatenate([variable.values.reshape(n_chains, n_draws, -1)
                           for variable in posterior.data_vars.values()], axis=2)


def variable_convergence(posterior, names: Sequence[str]) -> dict[str, tuple]:
    """R-hat, bulk ESS and tail ESS of every quantity of each variable ``names`` of an
    InferenceData group, computed in one pass over all their draws
    (:func:`~bayescomp.models.convergence.convergence`): ``{name: (rhat, bulk, tail)}``, each
    a flat array over the variable's quantities. A caller that needs both
    :func:`diagnose`'s checks and the ESS of further variables computes them once."""
    statistics = [np.atleast_1d(values)
                  for values in convergence(posterior_draws(posterior[list(names)]))]
    ends = np.cumsum([posterior[name][0, 0].size for name in names])
    return {name: tuple(values[start:end] for values in statistics)
            for name, start, end in zip(names, np.concatenate([[0], ends[:-1]]), ends)}


def diagnose(idata: az.InferenceData, var_names: Sequence[str] | None = None,
             max_treedepth: int = 10, statistics: dict | None = None) -> Diagnostics:
    """Diagnostics of the posterior variables ``var_names`` (default all) of an InferenceData.

    R-hat and ESS are those of :mod:`bayescomp.models.convergence` (ArviZ's, for all
    quantities at once); of a single chain, R-hat compares its halves. Quantities without
    one (a constant's R-hat) are left out of the extremes. ``statistics``, a
    :func:`variable_convergence` of these variables (and maybe more) that the caller already
    has, is used instead of computing them again.
    """
    names = list(idata.posterior.data_vars) if var_names is None else list(var_names)
    if statistics is None:
        statistics = variable_convergence(idata.posterior, names)
    rhat, ess_bulk, ess_tail = (np.concatenate([statistics[name][k] for name in names])
                                for k in range(3))
    n_chains, n_draws = idata.posterior.sizes["chain"], idata.posterior.sizes["draw"]

    def extreme(values, reducer):
        values = values[np.isfinite(values)]
        return float(reducer(values)) if values.size else float("nan")

    stats = idata.sample_stats
    divergences = int(stats["diverging"].sum())
    saturated = int((stats["tree_depth"] >= max_treedepth).sum())
    min_bfmi = float(np.min(az.bfmi(idata))) if "energy" in stats else float("nan")
    max_rhat = extreme(rhat, np.max)
    min_bulk, min_tail = extreme(ess_bulk, np.min), extreme(ess_tail, np.min)

    problems = []
    if divergences:
        problems.append(
            f"{divergences} divergent transition(s): the posterior may be biased; raise "
            "adapt_delta (e.g. 0.99) and run longer")
    if max_rhat > RHAT_MAX:
        problems.append(f"R-hat {max_rhat:.3f} > {RHAT_MAX}: the chains disagree; run longer "
                        "(raise iter_warmup and iter_sampling) and check the trace plots")
    ess_min = ESS_PER_CHAIN_MIN * n_chains
    if min(min_bulk, min_tail) < ess_min:
        problems.append(
            f"effective sample size {min(min_bulk, min_tail):.0f} < {ess_min} "
            f"({ESS_PER_CHAIN_MIN} per chain): draw more (raise iter_sampling)")
    if saturated:
        problems.append(f"{saturated} draw(s) hit the maximum tree depth {max_treedepth}: "
                        "raise max_treedepth")
    if min_bfmi < BFMI_MIN:
        problems.append(f"E-BFMI {min_bfmi:.2f} < {BFMI_MIN}: the sampler explores the energy "
                        "poorly; run longer and check the trace plots of sigma0 and nu")
    return Diagnostics(max_rhat, min_bulk, min_tail, divergences, saturated, min_bfmi,
                       n_chains, n_draws, max_treedepth, tuple(problems))


def warn_if_problems(diagnostics: Diagnostics, what: str = "the Stan fit", stacklevel: int = 3,
                     then: str = ""):
    """Issue one :class:`SamplingWarning` listing every problem, so nothing is swallowed;
    ``then`` says what the result does about them, after the list."""
    if not diagnostics.ok:
        problems = "; ".join(diagnostics.problems) + (f"; {then}" if then else "")
        warnings.warn(f"{what}: {problems}", SamplingWarning, stacklevel=stacklevel)


class SamplerChecked:
    """Mixin of the results of a Stan fit (with a ``diagnostics`` field): a fit that failed
    its diagnostics is not :attr:`reliable`, and its decisions read :attr:`UNRELIABLE`."""

    UNRELIABLE = UNRELIABLE

    @property
    def reliable(self) -> bool:
        """Whether the final fit passed its sampler diagnostics; if not, no decision is made."""
        return self.diagnostics.ok
