"""How the baselines across datasets read: the summary and JSON document of a Bayesian test
(:class:`~bayescomp.baselines.common.BayesianTestResult`) and of all five together
(:class:`~bayescomp.baselines.common.BaselinesResult`), and the latter's report."""
from __future__ import annotations

import numpy as np
import pandas as pd

from bayescomp.decisions import THRESHOLD
from bayescomp.formatting import format_number, json_number, probability
from bayescomp.presentation.verdicts import rope_dict, verdict_dict
from bayescomp.rope import region_labels


def label_width(result) -> int:
    """Width of the column of region labels in a Bayesian test's summary."""
    return max(len(label) for label in result.labels) + 3


def bayesian_summary(result) -> str:
    """A Bayesian test in a few lines: its prior, and per region the posterior mean mass and
    the share of samples in which it is the most probable."""
    lines = [
        f"{result.name}: {result.first} - {result.second} on {result.n_datasets} datasets, "
        f"ROPE {result.rope}, prior strength {result.prior_strength:g} at "
        f"{result.prior_location:g}, {result.n_samples} posterior samples",
        f"  {'':<{label_width(result)}}  mean mass  share of samples where most probable",
    ]
    for label, mass, share in zip(result.labels, result.mean_masses, result.most_probable):
        lines.append(f"  {'P(' + label + ')':<{label_width(result)}}  {probability(mass):>9}  "
                     f"{probability(share)}")
    return "\n".join(lines)


def bayesian_to_dict(result, threshold: float = THRESHOLD) -> dict:
    """The test as JSON-ready data: the verdict from the posterior mean masses and the
    most-probable shares, both keyed by the regions' names."""
    return {"test": result.name, "n_datasets": result.n_datasets, "rope": rope_dict(result.rope),
            "prior_strength": json_number(result.prior_strength),
            "prior_location": json_number(result.prior_location),
            "n_samples": result.n_samples,
            "verdict": verdict_dict(result.mean_masses, result.first, result.second,
                                    threshold=threshold, scope=result.name, rope=result.rope),
            "most_probable_shares": {label: json_number(v) for label, v in
                                     zip(result.labels, result.most_probable)}}


def summary(result) -> str:
    """The five tests' summaries under one header with the mean and median difference."""
    header = (f"Baselines across {len(result.differences)} datasets: {result.first} vs "
              f"{result.second} (differences {result.first} - {result.second}, mean "
              f"{format_number(np.mean(result.differences))}, median "
              f"{format_number(np.median(result.differences))})")
    return "\n\n".join([header] + [test.summary() for test in result.tests])


def to_dict(result, threshold: float = THRESHOLD) -> dict:
    """Every number :meth:`summary` shows, JSON-ready, tests keyed by name."""
    return {"first": result.first, "second": result.second, "rope": rope_dict(result.rope),
            "datasets": list(map(str, result.dataset_names)),
            "mean_difference": json_number(np.mean(result.differences)),
            "median_difference": json_number(np.median(result.differences)),
            "tests": {name: test.to_dict() for name, test in
                      zip(("wilcoxon", "sign", "ttest"), result.tests[:3])}
            | {name: test.to_dict(threshold) for name, test in
               zip(("bayesian_sign", "bayesian_signed_rank"), result.tests[3:])}}


def report(result):
    """(title, headline facts, table) of the Markdown, LaTeX and HTML reports."""
    title = f"Baselines across {len(result.differences)} datasets: {result.first} - {result.second}"
    facts = [f"mean difference {format_number(np.mean(result.differences))}, median "
             f"{format_number(np.median(result.differences))}, ROPE {result.rope}"]
    left, equal, right = region_labels(result.first, result.second)
    rows = [{"test": t.name, "statistic": f"{t.statistic_name} = {format_number(t.statistic)}",
             "p-value": t.p_value} for t in (result.wilcoxon, result.sign, result.ttest)]
    rows += [{"test": t.name, f"P({left})": t.mean_masses[0], f"P({equal})": t.mean_masses[1],
              f"P({right})": t.mean_masses[2],
              "most probable (shares)": " / ".join(probability(v, 3) for v in t.most_probable)}
             for t in (result.bayesian_sign, result.bayesian_signed_rank)]
    return title, facts, pd.DataFrame(rows)
