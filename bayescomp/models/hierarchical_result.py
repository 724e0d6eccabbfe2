"""The result of :func:`bayescomp.hierarchical`: the posterior of the hierarchical model, its
decisions on the population and the next dataset, and how it renders."""
from __future__ import annotations

from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pandas as pd

from bayescomp.models.diagnostics import Diagnostics, SamplerChecked
from bayescomp.models.estimate import Estimate
from bayescomp.presentation.reports import Reportable
from bayescomp.rope import Rope, most_probable_shares, region_labels

#: rows of the per-dataset table a terminal shows; the rest are in to_frame() and the report
SHOWN_DATASETS = 40


@dataclass(frozen=True)
class HierarchicalResult(SamplerChecked, Reportable):
    """Posterior of the hierarchical model for ``first - second``.

    It answers two questions, each under its own name, with its own probabilities, interval
    and decision (:class:`~bayescomp.models.estimate.Estimate`):

    Attributes
    ----------
    population : Estimate
        delta0, the location of the population of mean differences (with a heavy-tailed
        population, small nu, it behaves like a median of the datasets' differences, not
        their mean: a few datasets far out move it little).
    next_dataset : Estimate
        delta_next, the mean difference on a new dataset from the same population; its
        probabilities are the posterior mean of the Student-t masses.
    next_masses : ndarray (draws, 3)
        Per draw, the next dataset's Student-t mass left of, inside and right of the ROPE.
    draw_order : ndarray of int
        The chain-major draws of ``idata`` that make the reported posterior, in order: every
        draw once, or, where the chains sit in separate modes, the modes mixed by their
        weights. ``next_masses`` and every summary are of these draws.
    modes : tuple of Mode
        Empty when the chains mix, or when they do not and nothing can be decided. When
        they settle in separate modes of the posterior (as on near-identical algorithms)
        that each pass their own diagnostics (``modes_separate``), one
        :class:`~bayescomp.models.modes.Mode` per mode, largest first, weighed by its
        estimated mass; when they move slowly between modes but every chain makes the same
        decisions, one per chain, unweighed. The probabilities then mix the modes by their
        weights (every draw alike where there are none), and a decision stands only when
        every mode makes it (:mod:`bayescomp.models.modes`).
    datasets : pandas.DataFrame
        Per dataset (index): ``n``, ``rho``, raw ``mean`` difference with its correlated
        t-test (``p_left_ttest``, ``p_rope_ttest``, ``p_right_ttest``, 95% ``ttest_hdi_low``,
        ``ttest_hdi_high``) and the shrunken delta_i (``delta_mean``, ``delta_sd``,
        ``delta_hdi_low``, ``delta_hdi_high``, ``p_left``, ``p_rope``, ``p_right``).
    """

    first: str
    second: str
    rope: Rope
    idata: az.InferenceData = field(repr=False)
    population: Estimate = field(repr=False)
    next_dataset: Estimate = field(repr=False)
    next_masses: np.ndarray = field(repr=False)
    draw_order: np.ndarray = field(repr=False)
    datasets: pd.DataFrame = field(repr=False)
    baselines: object = field(repr=False)
    diagnostics: Diagnostics = field(repr=False)
    settings: dict = field(repr=False)
    modes: tuple = field(default=(), repr=False)
    modes_separate: bool = False

    @property
    def labels(self) -> tuple[str, str, str]:
        return region_labels(self.first, self.second)

    @property
    def next_dataset_most_probable(self) -> np.ndarray:
        """Share of draws in which left, rope or right has the next dataset's largest mass
        (the numbers baycomp and the paper print beside the probabilities)."""
        return most_probable_shares(self.next_masses)

    @property
    def attempts(self) -> tuple:
        """Every fit made, in order: its settings, diagnostics verdict, problems and seconds."""
        return tuple(self.settings.get("attempts", ()))

    @property
    def reliable(self) -> bool:
        """Whether the fit passed its sampler diagnostics, or its chains, though they do not
        mix, can decide (:attr:`modes`); if not, no decision is made."""
        return self.diagnostics.ok or bool(self.modes)

    def _advice(self) -> str:
        s = self.settings
        steps = ["run longer (iter_warmup, iter_sampling; CLI --iter-warmup, --iter-sampling)",
                 f"raise adapt_delta above {s['adapt_delta']} (--adapt-delta)"]
        if s.get("retries", 0) == 0:
            steps.append("or let the package retry (retries=2, --retries 2)")
        return "; ".join(steps) + "; then check the trace plots (plots.plot_diagnostics)"

    def _unreliable_lines(self) -> list[str]:
        n = len(self.attempts)
        after = f" after {n} attempts" if n > 1 else ""
        return [f"UNRELIABLE: the sampler failed its diagnostics{after}; the numbers below are "
                "not a decision.",
                *[f"  - {problem}" for problem in self.diagnostics.problems],
                f"  What to do: {self._advice()}."]

    def _attempt_lines(self) -> list[str]:
        lines = []
        for a in self.attempts:
            verdict = "ok" if a["ok"] else "; ".join(p.split(":")[0] for p in a["problems"])
            how = (f"continued from the last draws, {a['iter_warmup']} + "
                   f"{a['iter_sampling']} more iterations ({a['draws']} draws per chain)"
                   if a.get("continued") else
                   f"{a['iter_warmup']} + {a['iter_sampling']} iterations")
            lines.append(f"  {a['attempt']}. adapt_delta "
                         f"{a['adapt_delta']}, {how}: {verdict} ({a['seconds']:.1f} s)")
        return lines

    def to_frame(self) -> pd.DataFrame:
        """One row per dataset (see :attr:`datasets`)."""
        return self.datasets.copy()

    def verdicts(self, threshold: float = 0.95) -> list[str]:
        """The verdicts on the population (delta0) and on the next dataset, one sentence each
        (:func:`bayescomp.presentation.verdicts.verdict`); none when the fit is not :attr:`reliable`."""
        from bayescomp.presentation.verdicts import SCOPE_OPENINGS, verdict
        return [verdict(estimate.probabilities, self.first, self.second, threshold=threshold,
                        scope=scope, rope=self.rope, reliable=self.reliable,
                        decision=estimate.decision(threshold) if self.modes else None)
                for estimate, scope in ((self.population, SCOPE_OPENINGS["population"]),
                                        (self.next_dataset, SCOPE_OPENINGS["next_dataset"]))]

    def to_dict(self, threshold: float = 0.95) -> dict:
        """Every number :meth:`summary` shows, JSON-ready (NaN as None), regions keyed by the
        algorithms' names (``"<second> better"``, ``"equivalent"``, ``"<first> better"``)."""
        from bayescomp.presentation.serialize import hierarchical_dict
        return hierarchical_dict(self, threshold)

    def _table(self) -> pd.DataFrame:
        """The per-dataset table of the summary and the report, columns named by algorithm."""
        from bayescomp.presentation.verdicts import format_number as n
        left, equal, right = self.labels
        t = self.datasets
        return pd.DataFrame({
            "n": t.n, "mean": t["mean"], f"P({right}), t-test": t.p_right_ttest,
            "delta_i": t.delta_mean,
            "95% HDI": [f"[{n(a)}, {n(b)}]" for a, b in zip(t.delta_hdi_low, t.delta_hdi_high)],
            f"P({left})": t.p_left, f"P({equal})": t.p_rope, f"P({right})": t.p_right})

    def _estimate_lines(self) -> list[str]:
        """Both estimates, each under its name, with every number labelled."""
        from bayescomp.presentation.verdicts import format_number as n, probability as pr
        left, equal, right = self.labels
        means = self.datasets["mean"]
        lines = []
        for estimate, title in (
                (self.population, "delta0, the location of the population of mean differences"
                 + (" (nu is small: it behaves like a median, not a mean)"
                    if self._heavy_tailed() else "")),
                (self.next_dataset, "delta_next, the mean difference on the next dataset")):
            lines += [f"{title}: mean {n(estimate.mean)}, sd {n(estimate.sd)}, 95% HDI "
                      f"[{n(estimate.hdi_low)}, {n(estimate.hdi_high)}]",
                      f"  P({left}) = {pr(estimate.probabilities[0])}   P({equal}) = "
                      f"{pr(estimate.probabilities[1])}   P({right}) = "
                      f"{pr(estimate.probabilities[2])}   decision at 0.95: "
                      f"{estimate.decision()}"]
        share = self.next_dataset_most_probable
        lines += [f"  share of draws in which each has the next dataset's largest mass: "
                  f"{left} {pr(share[0])}, {equal} {pr(share[1])}, {right} {pr(share[2])}",
                  f"Observed: mean of the {len(means)} datasets' mean differences "
                  f"{n(means.mean())}, median {n(means.median())}"]
        return lines

    def _heavy_tailed(self) -> bool:
        """Whether most of nu's posterior lies below 3, where the population is heavy-tailed."""
        posterior = self.idata.posterior
        return "nu" in posterior and float(np.median(posterior["nu"].values)) < 3

    def summary(self) -> str:
        from bayescomp.presentation.reports import text_table
        s = self.settings
        lines = [] if self.reliable else self._unreliable_lines()
        lines += [
            f"Hierarchical model: {self.first} - {self.second} on {len(self.datasets)} datasets, "
            f"ROPE {self.rope}",
            *self.verdicts(),
            f"  prior {s['prior_name']}, backend {s['backend']}, seed {s['seed']}"
            + (f"; ESS of the reported quantities {s['ess']['bulk']:.0f} bulk, "
               f"{s['ess']['tail']:.0f} tail (target {s['ess']['target']})" if "ess" in s else ""),
            f"  engine {s.get('engine_version')}, route {s.get('route')}, Stan {s.get('stan_version')}",
            *self._estimate_lines(),
            "Per dataset (mean and t-test: raw; delta_i: shrunken):",
        ]
        table = self._table()
        if len(table) > SHOWN_DATASETS:
            lines += [text_table(table.head(SHOWN_DATASETS)),
                      f"  ... {len(table) - SHOWN_DATASETS} more datasets: every row is in "
                      "to_frame(), the report (to_markdown) and the JSON (--json)"]
        else:
            lines.append(text_table(table))
        if self.modes:
            from bayescomp.presentation.verdicts import mode_lines
            lines += mode_lines(self)
        if self.baselines is not None:
            lines.append(self.baselines.summary())
        if len(self.attempts) > 1:
            lines += ["Attempts (a fit that failed its diagnostics was continued when it "
                      "only mixed slowly, else run again afresh with safer settings):",
                      *self._attempt_lines()]
        lines.append(self.diagnostics.summary())
        if not self.reliable:
            lines.append(f"UNRELIABLE: no decision ({len(self.diagnostics.problems)} sampling "
                         "problem(s), listed at the top)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _report(self):
        from bayescomp.presentation.verdicts import format_number as n
        g = self.diagnostics
        table = self._table()
        facts = [
            f"ROPE {self.rope}; differences are {self.first} - {self.second}; "
            f"prior {self.settings['prior_name']}",
            *(line.strip() for line in self._estimate_lines()),
            f"sampler: {g.verdict} (max R-hat {n(g.max_rhat)}, "
            f"min ESS {n(min(g.min_ess_bulk, g.min_ess_tail))}, {g.divergences} divergences)",
        ]
        if self.modes:
            from bayescomp.presentation.verdicts import mode_lines
            facts.append(" ".join(line.strip() for line in mode_lines(self)))
        if len(self.attempts) > 1:
            facts.append("attempts: " + " / ".join(line.strip() for line in self._attempt_lines()))
        title = (f"Hierarchical model: {self.first} vs {self.second} on "
                 f"{len(self.datasets)} datasets")
        if not self.reliable:
            banner = self._unreliable_lines()
            facts.insert(0, banner[0] + " Problems: " + "; ".join(self.diagnostics.problems)
                         + ". What to do: " + self._advice() + ".")
            title += " (UNRELIABLE: sampling problems)"
        return title, facts, table


def region_summary(draws, rope: Rope, hdi_prob: float = 0.95) -> dict:
    """Mean, sd, HDI and P(left / rope / right) of draws."""
    low, high = az.hdi(np.asarray(draws).reshape(-1), hdi_prob=hdi_prob)
    left, inside, right = rope.shares(draws)
    return dict(mean=float(np.mean(draws)), sd=float(np.std(draws, ddof=1)), hdi_low=low,
                hdi_high=high, p_left=left, p_rope=inside, p_right=right)
