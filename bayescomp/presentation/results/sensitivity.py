"""How a :class:`~bayescomp.models.sensitivity_result.SensitivityResult` reads: how each
decision moves with the prior and the ROPE, its summary and its report."""
from __future__ import annotations

from bayescomp.formatting import effective_draws, probability


def describe(result, quantity: str) -> str:
    """How the decision on ``quantity`` moves with the prior and the ROPE, in one sentence."""
    what = "delta0 (the population's mean difference)" if quantity == "delta0" \
        else "the next dataset"
    decisions = result.decisions(quantity)
    widths = decisions.index
    span = f"ROPE half-widths {widths.min():g} to {widths.max():g}"
    if result.stable(quantity):
        return (f"For {what} the decision at {result.threshold} is "
                f"'{decisions.iloc[0, 0]}' under every prior ({', '.join(result.priors)}) "
                f"and {span}.")
    parts = []
    for prior in result.priors:
        column, runs, start = decisions[prior], [], 0
        for i in range(1, len(column) + 1):
            if i == len(column) or column.iloc[i] != column.iloc[start]:
                low, high = widths[start], widths[i - 1]
                where = f"{low:g}" if low == high else f"{low:g}-{high:g}"
                runs.append(f"'{column.iloc[start]}' at {where}")
                start = i
        parts.append(f"{prior}: " + ", ".join(runs))
    return (f"For {what} the decision at {result.threshold} moves with the prior or the "
            f"ROPE ({'; '.join(parts)}).")


def quadrature_error(found) -> float:
    """The largest error of any probability of quadratures ``found`` (one per ROPE)."""
    return max(max(q.population_error.max(), q.next_dataset_error.max()) for q in found)


def fit_line(prior: str, fit) -> str:
    """What one prior's fit rests on: its attempts and the ESS of its reported quantities,
    or, where the quadrature answered, its error."""
    attempts = f"{prior} {len(fit.settings['attempts'])} attempt(s)"
    if fit.by_quadrature:
        error = quadrature_error([fit.quadrature])
        return f"{attempts}, by quadrature (error at most {error:.1g})"
    return f"{attempts}, ESS {effective_draws(fit.settings['ess'], bool(fit.modes))}"


def reweighted_line(prior: str, weights) -> str:
    """What a prior read off another's draws rests on: the Pareto shape and worth of the
    importance weights."""
    return (f"{prior} from {weights.base}'s draws (Pareto k {weights.pareto_k:.2f}, "
            f"importance ESS {weights.ess:.0f})")


def how_read(result) -> str:
    """How the table was made: fits, reweightings, quadratures alone, and the ROPEs off the
    same draws."""
    if result.by_quadrature:
        return (f"{len(result.fits)} fit(s); {', '.join(result.by_quadrature)} by quadrature "
                "alone, without a fit, as the chains of an earlier prior differing only in nu's "
                "did not mix; every ROPE off the same posterior")
    if not result.reweighted:
        return "one fit per prior, every ROPE read off its draws"
    return (f"{len(result.fits)} fit(s); {', '.join(result.reweighted)} read off another "
            "prior's draws by Pareto-smoothed importance sampling; every ROPE off the same draws")


def summary(result) -> str:
    """How each decision moves with the prior and the ROPE, and the long table."""
    left, equal, right = result.labels
    lines = [f"Sensitivity of {result.first} - {result.second} to the prior and the ROPE "
             f"(hierarchical model, seed {result.seed}; {how_read(result)})",
             *(describe(result, q) for q in result.quantities),
             "fits: " + "; ".join(fit_line(prior, fit) for prior, fit in result.fits.items())]
    if result.reweighted:
        lines.append("reweighted: " + "; ".join(reweighted_line(prior, weights) for
                                                prior, weights in result.reweighted.items()))
    if result.by_quadrature:
        lines.append("by quadrature alone: " + "; ".join(
            f"{prior} (error at most {quadrature_error(found):.1g}, {found[-1].seconds:.1f} s)"
            for prior, found in result.by_quadrature.items()))
    unreliable = [p for p, fit in result.fits.items() if not fit.reliable]
    if unreliable:
        lines.append(f"UNRELIABLE fits (no decision): {', '.join(unreliable)}")
    names = {"p_left": f"P({left})", "p_rope": f"P({equal})", "p_right": f"P({right})"}
    # probabilities as every summary writes them (0.9000, 0.0002), the rest with 4 digits
    lines.append(result.table.rename(columns=names).to_string(
        index=False, float_format=lambda v: f"{v:.4g}",
        formatters={name: probability for name in names.values()}))
    return "\n".join(lines)


def report(result):
    """(title, headline facts, table) of the Markdown, LaTeX and HTML reports."""
    left, equal, right = result.labels
    table = result.table.drop(columns=["rope_low", "rope_high"]).rename(columns={
        "p_left": f"P({left})", "p_rope": f"P({equal})", "p_right": f"P({right})"})
    facts = [describe(result, q) for q in result.quantities]
    facts.append(f"differences are {result.first} - {result.second}; hierarchical model, seed "
                 f"{result.seed}: {how_read(result)}")
    return (f"Sensitivity of {result.first} vs {result.second} to the prior and the ROPE",
            facts, table.set_index(["prior", "rope", "quantity"]))
