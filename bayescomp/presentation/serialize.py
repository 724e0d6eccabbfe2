"""JSON-ready dictionaries of the results (``to_dict()``), for scripts and the CLI's ``--json``.

Numbers are Python floats and ints (NaN and infinities as None); probabilities are keyed by
the regions' names, which name the algorithms: ``"<second> better"``, ``"equivalent"``,
``"<first> better"``; each verdict carries its sentence (:func:`bayescomp.presentation.verdicts.verdict`).
"""
from __future__ import annotations

from bayescomp.decisions import decide
from bayescomp.presentation.verdicts import (SCOPE_OPENINGS, json_number as num, rope_dict,
                                             verdict_dict)


def hierarchical_dict(result, threshold: float = 0.95) -> dict:
    """:meth:`bayescomp.HierarchicalResult.to_dict`."""
    s, g = result.settings, result.diagnostics
    labels = result.labels
    keyed = lambda masses: {k: num(v) for k, v in zip(labels, masses)}  # noqa: E731
    common = dict(threshold=threshold, rope=result.rope, reliable=result.reliable)
    datasets = [{
        "dataset": str(name), "n": int(row["n"]), "rho": num(row["rho"]),
        "mean": num(row["mean"]), "delta_mean": num(row["delta_mean"]),
        "delta_sd": num(row["delta_sd"]),
        "delta_hdi_95": [num(row["delta_hdi_low"]), num(row["delta_hdi_high"])],
        "probabilities": keyed(row[["p_left", "p_rope", "p_right"]]),
        "ttest_probabilities": keyed(row[["p_left_ttest", "p_rope_ttest", "p_right_ttest"]]),
    } for name, row in result.datasets.iterrows()]
    return {
        "test": "hierarchical", "first": result.first, "second": result.second,
        "rope": rope_dict(result.rope), "n_datasets": len(result.datasets),
        "reliable": bool(result.reliable), "problems": list(g.problems),
        "settings": {k: s[k] for k in ("prior_name", "backend", "seed", "stan_seeds", "ess",
                                       "chains", "iter_warmup", "iter_sampling",
                                       "adapt_delta", "max_treedepth") if k in s},
        **{scope: {"quantity": estimate.quantity, "mean": num(estimate.mean),
                   "sd": num(estimate.sd), "hdi_95": [num(estimate.hdi_low), num(estimate.hdi_high)],
                   "verdict": verdict_dict(
                       estimate.probabilities, result.first, result.second, scope=name,
                       decision=estimate.decision(threshold) if result.modes else None, **common)}
           for scope, estimate, name in (
               ("population", result.population, SCOPE_OPENINGS["population"]),
               ("next_dataset", result.next_dataset, SCOPE_OPENINGS["next_dataset"]))},
        "next_dataset_most_probable": keyed(result.next_dataset_most_probable),
        "modes": modes_dict(result, threshold),
        "datasets": datasets,
        "baselines": result.baselines.to_dict() if result.baselines is not None else None,
        "diagnostics": {"verdict": g.verdict, "max_rhat": num(g.max_rhat),
                        "min_ess_bulk": num(g.min_ess_bulk),
                        "min_ess_tail": num(g.min_ess_tail), "divergences": int(g.divergences)},
        "attempts": [{k: (num(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
                          else v if isinstance(v, (str, bool)) or v is None else list(v))
                      for k, v in a.items()} for a in result.attempts],
    }


def modes_dict(result, threshold: float = 0.95) -> dict | None:
    """The modes of a hierarchical result whose chains do not mix (None when they do): whether
    they are separate modes or chains crossing slowly between them, and per mode its chains
    (from 1), weight, location, diagnostics and both verdicts' probabilities and decisions."""
    if not result.modes:
        return None
    labels = result.labels
    keyed = lambda masses: {k: num(v) for k, v in zip(labels, masses)}  # noqa: E731
    return {
        "kind": "separate modes" if result.modes_separate else "chains crossing between modes",
        "rule": "a decision stands only when every mode makes it; any mixture of the modes "
                "then makes it too",
        "modes": [{
            "chains": [c + 1 for c in m.chains], "weight": num(m.weight),
            "location": {k: num(v) for k, v in m.location.items()},
            "max_rhat": num(m.max_rhat), "min_ess_bulk": num(m.min_ess_bulk),
            "min_ess_tail": num(m.min_ess_tail), "ok": bool(m.ok),
            "population": {"probabilities": keyed(m.population),
                       "decision": decide(m.population, threshold, labels=labels)},
            "next_dataset": {"probabilities": keyed(m.next_dataset),
                             "decision": decide(m.next_dataset, threshold, labels=labels)},
        } for m in result.modes],
    }
