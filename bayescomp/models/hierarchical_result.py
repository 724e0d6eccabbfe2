"""The result of :func:`bayescomp.hierarchical`: the posterior of the hierarchical model, its
decisions on the population and the next dataset, and how it renders."""
from __future__ import annotations

from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pandas as pd

from bayescomp.decisions import MODES_DISAGREE, decide
from bayescomp.models.diagnostics import Diagnostics, SamplerChecked
from bayescomp.models.modes import agreed_decision
from bayescomp.presentation.reports import Reportable
from bayescomp.rope import Rope, most_probable_shares, region_labels


@dataclass(frozen=True)
class HierarchicalResult(SamplerChecked, Reportable):
    """Posterior of the hierarchical model for ``first - second``.

    Attributes
    ----------
    probabilities : ndarray
        For the next dataset: the posterior mean of the Student-t mass left of, inside and
        right of the ROPE.
    most_probable : ndarray
        Share of posterior draws in which left, rope or right has the largest mass
        (the numbers baycomp and the paper print).
    delta0 : pandas.Series
        Mean, sd, 95% HDI and P(left / rope / right) of the population mean difference.
    modes : tuple of Mode
        Empty when the chains mix, or when they do not and nothing can be decided. When
        they settle in separate modes of the posterior (as on near-identical algorithms)
        that each pass their own diagnostics (``modes_separate``), one
        :class:`~bayescomp.models.modes.Mode` per mode, largest first, weighed by its
        estimated mass; when they move slowly between modes but every chain makes the same
        decisions, one per chain, unweighed. The probabilities above then mix the modes by
        their weights (every draw alike where there are none), and a decision stands only
        when every mode makes it (:mod:`bayescomp.models.modes`).
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
    next_masses: np.ndarray = field(repr=False)
    delta0: pd.Series = field(repr=False)
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
    def probabilities(self) -> np.ndarray:
        return self.next_masses.mean(axis=0)

    @property
    def most_probable(self) -> np.ndarray:
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

    @property
    def population_probabilities(self) -> np.ndarray:
        """P(left), P(rope), P(right) of delta0, the population's mean difference."""
        return self.delta0[["p_left", "p_rope", "p_right"]].to_numpy(dtype=float)

    def _decide(self, probabilities, scope: str, threshold: float) -> str:
        if not self.reliable:
            return self.UNRELIABLE
        if self.modes:
            # a mixture's probability of a region lies between its modes': when every mode
            # decides the same, so does every mixture, whatever the weights
            agreed = agreed_decision([decide(getattr(m, scope), threshold, labels=self.labels)
                                      for m in self.modes])
            return MODES_DISAGREE if agreed is None else agreed
        return decide(probabilities, threshold, labels=self.labels)

    def decision(self, threshold: float = 0.95) -> str:
        """Decision for the next dataset from :attr:`probabilities`; ``"unreliable (sampling
        problems)"`` when the fit is not :attr:`reliable`; when the chains sit in several
        modes, the decision every mode makes, else ``"undecided (the modes disagree)"``."""
        return self._decide(self.probabilities, "next_dataset", threshold)

    def population_decision(self, threshold: float = 0.95) -> str:
        """Decision on delta0, the population's mean difference, by the rules of
        :meth:`decision`."""
        return self._decide(self.population_probabilities, "population", threshold)

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
            lines.append(f"  {a['attempt']}. {a['parameterization']}, adapt_delta "
                         f"{a['adapt_delta']}, {how}: {verdict} ({a['seconds']:.1f} s)")
        return lines

    def to_frame(self) -> pd.DataFrame:
        """One row per dataset (see :attr:`datasets`)."""
        return self.datasets.copy()

    def verdicts(self, threshold: float = 0.95) -> list[str]:
        """The verdicts on the population (delta0) and on the next dataset, one sentence each
        (:func:`bayescomp.presentation.verdicts.verdict`); none when the fit is not :attr:`reliable`."""
        from bayescomp.presentation.verdicts import verdict
        return [verdict(masses, self.first, self.second, threshold=threshold, scope=scope,
                        rope=self.rope, reliable=self.reliable,
                        decision=decision if self.modes else None)
                for masses, scope, decision in (
                    (self.population_probabilities, "On the population of datasets (delta0)",
                     self.population_decision(threshold)),
                    (self.probabilities, "On the next dataset", self.decision(threshold)))]

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

    def summary(self) -> str:
        from bayescomp.presentation.reports import text_table
        from bayescomp.presentation.verdicts import format_number as n, probability as pr
        left, equal, right = self.labels
        d0 = self.delta0
        p, share = self.probabilities, self.most_probable
        s = self.settings
        lines = [] if self.reliable else self._unreliable_lines()
        lines += [
            f"Hierarchical model: {self.first} - {self.second} on {len(self.datasets)} datasets, "
            f"ROPE {self.rope}",
            *self.verdicts(),
            f"  prior {s['prior_name']}, delta_i {s['parameterization']}, backend {s['backend']}, "
            f"seed {s['seed']}",
            f"  engine {s.get('engine_version')}, route {s.get('route')}, Stan {s.get('stan_version')}",
            f"delta0 (mean difference of the population): mean {n(d0['mean'])}, sd {n(d0['sd'])}, "
            f"95% HDI [{n(d0['hdi_low'])}, {n(d0['hdi_high'])}]",
            f"  P({left}) = {pr(d0['p_left'])}   P({equal}) = {pr(d0['p_rope'])}   "
            f"P({right}) = {pr(d0['p_right'])}",
            "Next dataset (posterior mean of the probabilities):",
            f"  P({left}) = {pr(p[0])}   P({equal}) = {pr(p[1])}   P({right}) = {pr(p[2])}"
            f"   decision at 0.95: {self.decision()}",
            f"  share of draws where each is most probable: {pr(share[0])} / {pr(share[1])} / "
            f"{pr(share[2])}",
            "Per dataset (mean and t-test: raw; delta_i: shrunken):",
            text_table(self._table()),
        ]
        if self.modes:
            from bayescomp.presentation.verdicts import mode_lines
            lines += mode_lines(self)
        if self.baselines is not None:
            lines += ["Baselines on the dataset means:", self.baselines.summary()]
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
        from bayescomp.presentation.verdicts import format_number as n, probability as pr
        left, equal, right = self.labels
        d0, p, share = self.delta0, self.probabilities, self.most_probable
        g = self.diagnostics
        table = self._table()
        facts = [
            f"ROPE {self.rope}; differences are {self.first} - {self.second}; "
            f"prior {self.settings['prior_name']}",
            f"delta0: mean {n(d0['mean'])}, 95% HDI [{n(d0['hdi_low'])}, {n(d0['hdi_high'])}]; "
            f"P({left}) {pr(d0['p_left'])}, P({equal}) {pr(d0['p_rope'])}, "
            f"P({right}) {pr(d0['p_right'])}",
            f"next dataset: P({left}) {pr(p[0])}, P({equal}) {pr(p[1])}, P({right}) {pr(p[2])} "
            f"(most probable in {pr(share[0])} / {pr(share[1])} / {pr(share[2])} of draws)",
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
