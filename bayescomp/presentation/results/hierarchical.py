"""How a :class:`~bayescomp.models.hierarchical_result.HierarchicalResult` reads: its verdicts,
its summary, its report (title, facts, table), its JSON document and, for a posterior whose
chains sit in several modes, the lines and the data that show the modes."""
from __future__ import annotations

import math

import pandas as pd

from bayescomp.decisions import MODES_DISAGREE, THRESHOLD, decide
from bayescomp.formatting import effective_draws, format_number, json_number as num, probability
from bayescomp.presentation.reports import text_table
from bayescomp.presentation.verdicts import SCOPE_OPENINGS, rope_dict, verdict, verdict_dict

#: rows of the per-dataset table a terminal shows; the rest are in to_frame() and the report
SHOWN_DATASETS = 40


def advice(result) -> str:
    """What to do about a fit that failed its diagnostics, in one line."""
    s = result.settings
    steps = ["run longer (iter_warmup, iter_sampling; CLI --iter-warmup, --iter-sampling)",
             f"raise adapt_delta above {s['adapt_delta']:.4g} (--adapt-delta)"]
    if s.get("retries", 0) == 0:
        steps.append("or let the package retry (retries=2, --retries 2)")
    return "; ".join(steps) + "; then check the trace plots (plots.plot_diagnostics)"


def unreliable_lines(result) -> list[str]:
    """The banner of a fit that failed its diagnostics: its problems and what to do."""
    n = len(result.attempts)
    after = f" after {n} attempts" if n > 1 else ""
    return [f"UNRELIABLE: the sampler failed its diagnostics{after}; the numbers below are "
            "not a decision.",
            *[f"  - {problem}" for problem in result.diagnostics.problems],
            f"  What to do: {advice(result)}."]


def attempt_lines(result) -> list[str]:
    """One line per fit made: its settings, how it ran and its diagnostics' verdict."""
    lines = []
    for a in result.attempts:
        outcome = "ok" if a["ok"] else "; ".join(p.split(":")[0] for p in a["problems"])
        how = (f"continued from the last draws at {a['step_scale']:g} times the step size, "
               f"{a['iter_warmup']} + {a['iter_sampling']} new iterations in place of the "
               "earlier draws" if a.get("redraw") else
               f"continued from the last draws, {a['iter_warmup']} + "
               f"{a['iter_sampling']} more iterations ({a['draws']} draws per chain)"
               if a.get("continued") else
               f"{a['iter_warmup']} + {a['iter_sampling']} iterations")
        lines.append(f"  {a['attempt']}. adapt_delta "
                     f"{a['adapt_delta']:.4g}, {how}: {outcome} ({a['seconds']:.1f} s)")
    return lines


def verdicts(result, threshold: float = THRESHOLD) -> list[str]:
    """The verdicts on the population (delta0) and on the next dataset, one sentence each
    (:func:`bayescomp.presentation.verdicts.verdict`); none when the fit is not :attr:`reliable`."""
    return [verdict(estimate.probabilities, result.first, result.second, threshold=threshold,
                    scope=scope, rope=result.rope, reliable=result.reliable,
                    decision=estimate.decision(threshold) if result.modes else None,
                    mcse=estimate.mcse)
            for estimate, scope in ((result.population, SCOPE_OPENINGS["population"]),
                                    (result.next_dataset, SCOPE_OPENINGS["next_dataset"]))]


def dataset_table(result) -> pd.DataFrame:
    """The per-dataset table of the summary and the report, columns named by algorithm."""
    left, equal, right = result.labels
    t = result.datasets
    return pd.DataFrame({
        "n": t.n, "mean": t["mean"], f"P({right}), t-test": t.p_right_ttest,
        "delta_i": t.delta_mean,
        "95% HDI": [f"[{format_number(a)}, {format_number(b)}]" for a, b in zip(t.delta_hdi_low, t.delta_hdi_high)],
        f"P({left})": t.p_left, f"P({equal})": t.p_rope, f"P({right})": t.p_right})


def estimate_lines(result) -> list[str]:
    """Both estimates, each under its name, with every number labelled."""
    left, equal, right = result.labels
    means = result.datasets["mean"]
    kind = "Error (of the quadrature)" if result.by_quadrature else "Monte Carlo error"
    lines = []
    for estimate, title in (
            (result.population, "delta0, the location of the population of mean differences"
             + (" (nu is small: it behaves like a median, not a mean)"
                if result.heavy_tailed() else "")),
            (result.next_dataset, "delta_next, the mean difference on the next dataset")):
        # a Student-t's nu reaches 2 and below, where the next dataset has no variance
        sd = ("infinite (nu can be 2 or less)" if math.isinf(estimate.sd)
              else format_number(estimate.sd))
        lines += [f"{title}: mean {format_number(estimate.mean)}, sd {sd}, 95% HDI "
                  f"[{format_number(estimate.hdi_low)}, {format_number(estimate.hdi_high)}]",
                  f"  P({left}) = {probability(estimate.probabilities[0])}   P({equal}) = "
                  f"{probability(estimate.probabilities[1])}   P({right}) = "
                  f"{probability(estimate.probabilities[2])}   decision at 0.95: "
                  f"{estimate.decision()}",
                  f"  {kind} of these probabilities at most "
                  f"{probability(max(estimate.mcse))}; a decision needs a margin of two"]
    share = result.next_dataset_most_probable
    lines += [f"  share of {'the posterior' if result.by_quadrature else 'draws'} in which each "
              "has the next dataset's largest mass: "
              f"{left} {probability(share[0])}, {equal} {probability(share[1])}, {right} {probability(share[2])}",
              f"Observed: mean of the {len(means)} datasets' mean differences "
              f"{format_number(means.mean())}, median {format_number(means.median())}"]
    return lines


def summary(result) -> str:
    """The fit in text: verdicts, both estimates, the per-dataset table, the modes, the
    baselines, the attempts and the sampler's diagnostics."""
    s = result.settings
    lines = [] if result.reliable else unreliable_lines(result)
    lines += [
        f"Hierarchical model: {result.first} - {result.second} on {len(result.datasets)} datasets, "
        f"ROPE {result.rope}",
        *result.verdicts(),
        f"  prior {s['prior_name']}, backend {s['backend']}, seed {s['seed']}"
        + ("; ESS of the reported quantities "
           + effective_draws(s["ess"], bool(result.modes), result.by_quadrature,
                             result.close_call_by_quadrature)
           if "ess" in s else ""),
        f"  engine {s.get('engine_version')}, route {s.get('route')}, Stan {s.get('stan_version')}",
        *estimate_lines(result),
        "Per dataset (mean and t-test: raw; delta_i: shrunken):",
    ]
    table = dataset_table(result)
    if len(table) > SHOWN_DATASETS:
        lines += [text_table(table.head(SHOWN_DATASETS)),
                  f"  ... {len(table) - SHOWN_DATASETS} more datasets: every row is in "
                  "to_frame(), the report (to_markdown) and the JSON (--json)"]
    else:
        lines.append(text_table(table))
    lines += floor_lines(result)
    if result.modes:
        lines += mode_lines(result)
    if result.quadrature is not None:
        lines += quadrature_lines(result)
    if result.baselines is not None:
        lines.append(result.baselines.summary())
    if len(result.attempts) > 1:
        lines += ["Attempts (a fit that failed its diagnostics was continued when it "
                  "only mixed slowly, with a smaller step after divergences, else run again "
                  "afresh with safer settings):",
                  *attempt_lines(result)]
    lines.append(result.diagnostics.summary())
    if not result.reliable:
        lines.append(f"UNRELIABLE: no decision ({len(result.diagnostics.problems)} sampling "
                     "problem(s), listed at the top)")
    return "\n".join(lines)


def report(result):
    """(title, headline facts, table) of the Markdown, LaTeX and HTML reports."""
    g = result.diagnostics
    table = dataset_table(result)
    facts = [
        f"ROPE {result.rope}; differences are {result.first} - {result.second}; "
        f"prior {result.settings['prior_name']}",
        *(line.strip() for line in estimate_lines(result)),
        # R-hat with three decimals, as the joint and ranking reports write it (significant
        # digits wrote 1.00004 as "1")
        f"sampler: {g.verdict} (max R-hat {g.max_rhat:.3f}, "
        f"min ESS {min(g.min_ess_bulk, g.min_ess_tail):.0f}, {g.divergences} divergences)",
    ]
    facts.extend(line.strip() for line in floor_lines(result))
    if result.modes:
        # one fact a mode (or chain, or stratum): a bullet each in the reports
        facts.extend(line.strip() for line in mode_lines(result))
    if result.quadrature is not None:
        facts.extend(line.strip() for line in quadrature_lines(result))
    if len(result.attempts) > 1:
        facts.append("attempts: " + " / ".join(line.strip() for line in attempt_lines(result)))
    title = (f"Hierarchical model: {result.first} vs {result.second} on "
             f"{len(result.datasets)} datasets")
    if not result.reliable:
        banner = unreliable_lines(result)
        facts.insert(0, banner[0] + " Problems: " + "; ".join(result.diagnostics.problems)
                     + ". What to do: " + advice(result) + ".")
        title += " (UNRELIABLE: sampling problems)"
    return title, facts, table


def to_dict(result, threshold: float = THRESHOLD) -> dict:
    """Every number :func:`summary` shows, JSON-ready (NaN as None), regions keyed by the
    algorithms' names (``"<second> better"``, ``"equivalent"``, ``"<first> better"``)."""
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
        "floored": bool(row["floored"]),
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
                       decision=estimate.decision(threshold) if result.modes else None,
                       mcse=estimate.mcse, **common)}
           for scope, estimate, name in (
               ("population", result.population, SCOPE_OPENINGS["population"]),
               ("next_dataset", result.next_dataset, SCOPE_OPENINGS["next_dataset"]))},
        "next_dataset_most_probable": keyed(result.next_dataset_most_probable),
        "modes": modes_dict(result, threshold),
        "quadrature": quadrature_dict(result),
        "datasets": datasets,
        "baselines": result.baselines.to_dict() if result.baselines is not None else None,
        "diagnostics": {"verdict": g.verdict, "max_rhat": num(g.max_rhat),
                        "min_ess_bulk": num(g.min_ess_bulk),
                        "min_ess_tail": num(g.min_ess_tail), "divergences": int(g.divergences)},
        "attempts": [{k: (num(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
                          else v if isinstance(v, (str, bool)) or v is None else list(v))
                      for k, v in a.items()} for a in result.attempts],
    }


def modes_dict(result, threshold: float = THRESHOLD) -> dict | None:
    """The modes of a hierarchical result whose chains do not mix (None when they do): whether
    they are separate modes or chains crossing slowly between them, and per mode its chains
    (from 1), weight, location, diagnostics and both verdicts' probabilities and decisions."""
    if not result.modes:
        return None
    labels = result.labels
    keyed = lambda masses: {k: num(v) for k, v in zip(labels, masses)}  # noqa: E731
    return {
        "kind": ("separate modes" if result.modes_separate else
                 f"strata of {result.modes[0].stratum[0]}" if result.modes[0].stratum else
                 "chains crossing between modes"),
        "rule": "a decision stands only when every mode makes it; any mixture of the modes "
                "then makes it too",
        "modes": [{
            "chains": [c + 1 for c in m.chains], "weight": num(m.weight),
            "location": {k: num(v) for k, v in m.location.items()},
            "max_rhat": num(m.max_rhat), "min_ess_bulk": num(m.min_ess_bulk),
            "min_ess_tail": num(m.min_ess_tail), "ok": bool(m.ok),
            **({"stratum": {"low": num(m.stratum[1]), "high": num(m.stratum[2])}}
               if m.stratum else {}),
            **{scope: {"probabilities": keyed(getattr(m, scope)),
                       "mcse": keyed(getattr(m, f"{scope}_mcse")),
                       "decision": decide(getattr(m, scope), threshold, labels=labels,
                                          mcse=getattr(m, f"{scope}_mcse"))}
               for scope in ("population", "next_dataset")},
        } for m in result.modes],
    }


def mode_lines(result) -> list[str]:
    """The lines that show the modes of a hierarchical result whose chains settled in
    several: per mode its chains, weight, location, diagnostics and both verdicts."""
    left, equal, right = result.labels
    if result.modes_separate:
        lines = [f"Modes: the chains settled in {len(result.modes)} separate modes of the "
                 "posterior (more sampling does not make chains cross between them); each mode "
                 "passes the diagnostics on its own chains. Weights: posterior mass by "
                 "bridge sampling (nan: not estimable to 0.05; the chains then count "
                 "alike)."]
    elif result.modes[0].stratum:
        locator = result.modes[0].stratum[0]
        lines = [f"Modes: the chains move between modes of the posterior too slowly to be read "
                 f"one by one ({locator} mixes slowest), so the draws are shown in "
                 f"{len(result.modes)} strata of {locator} (its quartiles), unweighed; every "
                 "stratum makes the same decisions with a margin of two Monte Carlo errors, "
                 f"so they hold whatever mass each range of {locator} has. The intervals of "
                 "nu, sigma0 and delta_i are less certain than they look; to weigh the modes, "
                 "run longer."]
    else:
        lines = ["Modes: the chains move slowly between modes of the posterior (nu and sigma0 "
                 "do not mix), so each chain is shown on its own, unweighed; every chain makes "
                 "the same decisions with a margin of two Monte Carlo errors, so any mixture "
                 "of what they sampled does. The intervals of nu, sigma0 and delta_i are "
                 "less certain than they look; to weigh the modes, run longer."]
    lines.append(f"  probabilities: P({left}) / P({equal}) / P({right})")
    name = ("mode" if result.modes_separate else "stratum" if result.modes[0].stratum
            else "chain")
    for k, mode in enumerate(result.modes, 1):
        where = ", ".join(f"{name} {format_number(value)}"
                          for name, value in mode.location.items())
        per_scope = []
        for scope, masses, errors in (
                ("delta0", mode.population, mode.population_mcse),
                ("next dataset", mode.next_dataset, mode.next_dataset_mcse)):
            decision = decide(masses, THRESHOLD, labels=result.labels, mcse=errors)
            per_scope.append(f"{scope} {' / '.join(probability(p) for p in masses)} "
                             f"({decision})")
        # a chain shown on its own is unweighed: its number says which chain it is
        chains = (f"chains {', '.join(str(c + 1) for c in mode.chains)}; weight "
                  f"{format_number(mode.weight)}; " if result.modes_separate else "")
        ess = min(mode.min_ess_bulk, mode.min_ess_tail)
        if mode.stratum:
            # a stratum has no R-hat of its own (chains do not mix across it); its ESS is
            # that of its estimates
            head = (f"{mode.stratum[0]} {format_number(mode.stratum[1])} to "
                    f"{format_number(mode.stratum[2])}, medians {where}; ESS {ess:.0f}")
        else:
            # R-hat to three decimals and ESS whole, as the sampler's line writes them
            head = f"{chains}{where}; R-hat {mode.max_rhat:.3f}, min ESS {ess:.0f}"
        lines.append(f"  {name} {k}: {head}; " + "; ".join(per_scope))
    agreed = [result.population.decision(), result.next_dataset.decision()]
    lines.append("  " + ("Every mode makes the same decisions: any mixture of these modes gives "
                         "them." if MODES_DISAGREE not in agreed else
                         "The modes disagree: no decision where they do."))
    return lines


def floor_lines(result) -> list[str]:
    """The datasets whose sigma_i the floor sets (``datasets.floored``), if any."""
    floored = [str(name) for name in result.datasets.index[result.datasets["floored"]]]
    return ([f"  sigma_i set by the floor (the scores' resolution / sqrt(12)), not by the "
             f"folds, on {len(floored)} dataset(s): {', '.join(floored)}"] if floored else [])


def quadrature_lines(result) -> list[str]:
    """What the quadrature (:mod:`bayescomp.models.quadrature`) did and found."""
    found = result.quadrature
    grid = found.grid
    error = float(max(found.population_error.max(), found.next_dataset_error.max()))
    medians = (f"posterior median of nu {format_number(found.nu_median)}, of sigma0 "
               if math.isfinite(found.nu_median) else "posterior median of sigma0 ")
    # a normal population has no nu
    axes = "delta0, sigma0 and nu" if grid["nu"] else "delta0 and sigma0"
    sizes = " x ".join(str(grid[name]) for name in ("delta0", "sigma0", "nu") if grid[name]) or "no"
    why = ("a probability lay within four Monte Carlo errors of the threshold"
           if result.close_call_by_quadrature else "the chains did not mix")
    lines = [
        f"By quadrature: {why}, so "
        f"{'every probability is' if found.ok else 'the probabilities would be'} a sum over "
        f"a grid of {axes} ({sizes} points, {found.seconds:.1f} s): {medians}"
        f"{format_number(found.sigma0_median)}; error at most {format_number(error)}"
        + ("; every mean and interval is the grid's too." if found.ok else ".")]
    lines += [f"  not reliable: {problem}" for problem in found.problems]
    return lines


def quadrature_dict(result) -> dict | None:
    """The quadrature, JSON-ready (None where the result did not need it)."""
    found = result.quadrature
    if found is None:
        return None
    return {"ok": found.ok, "problems": list(found.problems),
            "population_error": [num(x) for x in found.population_error],
            "next_dataset_error": [num(x) for x in found.next_dataset_error],
            "nu_median": num(found.nu_median), "sigma0_median": num(found.sigma0_median),
            "grid": {key: list(map(num, value)) if isinstance(value, tuple) else num(value)
                     for key, value in found.grid.items()},
            "seconds": num(found.seconds)}
