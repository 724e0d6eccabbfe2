"""Honest output when sampling fails: retries with safer settings, said aloud; a fit that still
fails is UNRELIABLE in every output and makes no decision."""
import dataclasses
import importlib
import warnings

import arviz as az
import numpy as np
import pytest

import bayescomp as bc
from bayescomp import plots
from bayescomp.models.diagnostics import BFMI_MIN, diagnose
from bayescomp.models.hierarchical_runs import (Retries, energy_explained, safer_run,
                                                steps_failed, struggles)

hierarchical_module = importlib.import_module("bayescomp.models.hierarchical")
runs_module = importlib.import_module("bayescomp.models.hierarchical_runs")

# 2 chains x 10 draws: the ESS threshold is 100 per chain = 200, and even the twice doubled
# 2 x 40 draws cannot reach it (ArviZ caps ESS at n log10 n = 152 for n = 80)
# quadrature=False: these tests follow a fit that fails to the end (UNRELIABLE); the
# quadrature would answer for it (tests/test_quadrature.py)
STARVED = dict(chains=2, iter_warmup=10, iter_sampling=10, baselines=False, quadrature=False)


@pytest.fixture(scope="module")
def scores():
    return bc.simulate.collection(4, 20, delta0=0.02, sigma0=0.01, sigma=0.03, rho=0.1,
                                  seed=4).scores


def caught_by_kind(caught):
    kinds = {"retry": bc.RetryWarning, "sampling": bc.SamplingWarning}
    return {k: [str(w.message) for w in caught if issubclass(w.category, c)]
            for k, c in kinds.items()}


# --- the retry ladder, without Stan -------------------------------------------------------

def _diagnostics(divergences):
    return bc.Diagnostics(1.02, 150.0, 150.0, divergences, 0, 0.8, 2, 100, 10,
                          ("a problem made up by the test",))


def test_safer_settings_ladder():
    first = dict(adapt_delta=0.95, iter_warmup=1000, iter_sampling=500, continued=False,
                 redraw=False, step_scale=1.0)
    # slow mixing without a sampler problem: the chains continue (a short warm-up where the
    # engine cannot keep the step size and metric), as many draws again, pooled
    assert safer_run(first, 1, _diagnostics(0)) == dict(first, continued=True, iter_warmup=300)
    # the second continuation draws twice as many: four times the first fit's draws in all
    assert safer_run(first, 2, _diagnostics(0)) == dict(first, continued=True, iter_warmup=300,
                                                         iter_sampling=1000)
    # never a longer warm-up than the user's own
    assert safer_run(dict(first, iter_warmup=100), 1, _diagnostics(0))["iter_warmup"] == 100
    # divergences: the chains go on at half the step (adapt_delta 0.99 where the engine
    # adapts again), half as many new draws (as many leapfrog steps) replacing the
    # divergent ones, rounded up ...
    second = safer_run(first, 1, _diagnostics(3))
    assert second == dict(first, adapt_delta=0.99, iter_warmup=300, continued=True,
                          redraw=True, step_scale=0.5, iter_sampling=250)
    assert safer_run(dict(first, iter_sampling=51), 1, _diagnostics(1))["iter_sampling"] == 26
    # ... and if they diverge again, afresh with adapt_delta 0.99 and twice the iterations
    # of the last fresh fit (the first)
    assert safer_run(first, 2, _diagnostics(1)) == dict(first, adapt_delta=0.99,
                                                         iter_warmup=2000, iter_sampling=1000)
    # saturated tree depth or a low E-BFMI: afresh too, the step size left alone
    deep = dataclasses.replace(_diagnostics(0), treedepth_saturated=7)
    assert safer_run(first, 1, deep) == dict(first, iter_warmup=2000, iter_sampling=1000)
    flat = dataclasses.replace(_diagnostics(0), min_bfmi=0.2)
    assert safer_run(first, 1, flat) == dict(first, iter_warmup=2000, iter_sampling=1000)
    assert safer_run(first, 3, _diagnostics(1)) is None   # only two retries are defined
    # adapt_delta is never lowered
    assert safer_run(dict(first, adapt_delta=0.995), 1, _diagnostics(2))["adapt_delta"] == 0.995


def _taken(retries, diagnostics):
    """The retry that ``retries`` offers after ``diagnostics`` (asking does not count it),
    then made (counted), as run_fits does; None where none is offered."""
    run, made = retries.upcoming(diagnostics), retries.made
    assert retries.upcoming(diagnostics) == run and retries.made == made
    return None if run is None else retries.take(run)


def test_retries_count_against_the_budget_and_start_from_the_last_fresh_fit():
    """Both models' loops take their retries from Retries: a continuation after divergences
    keeps the first fit as the one later retries start from; a fresh start replaces it;
    nothing is offered once the budget is spent."""
    first = dict(adapt_delta=0.95, iter_warmup=1000, iter_sampling=500, continued=False,
                 redraw=False, step_scale=1.0)
    retries = Retries(first, budget=2)
    assert _taken(retries, _diagnostics(3)) == dict(
        first, adapt_delta=0.99, iter_warmup=300, continued=True, redraw=True, step_scale=0.5,
        iter_sampling=250)
    assert retries.fresh == first and retries.made == 1 and not retries.spent
    # twice the first fit's warm-up and draws, not the continuation's
    again = _taken(retries, _diagnostics(1))
    assert again == dict(first, adapt_delta=0.99, iter_warmup=2000, iter_sampling=1000)
    assert retries.fresh == again and retries.spent
    assert _taken(retries, _diagnostics(1)) is None and retries.made == 2
    assert _taken(Retries(first, budget=0), _diagnostics(1)) is None
    # a budget above the two retries safer_run defines is spent after those two, so that
    # what waits for the last retry (the joint model's reading of chains in one group as
    # modes) still comes
    generous = Retries(first, budget=5)
    assert _taken(generous, _diagnostics(1)) is not None and not generous.spent
    assert _taken(generous, _diagnostics(1)) is not None and generous.spent
    assert _taken(generous, _diagnostics(1)) is None and generous.made == 2


def test_a_low_e_bfmi_from_a_crossing_between_modes_lets_the_modes_be_read():
    """A chain that moves once between two modes whose energies differ by ``gap`` has a low
    E-BFMI though each stretch is explored well. With energies iid N(level, s^2) within each
    stretch, a move after a share ``q`` of the draws gives E-BFMI = mean squared step /
    variance = (2 s^2 + gap^2 / n) / (s^2 + q (1 - q) gap^2): on the near-identical pair
    of 1,000 datasets, s about 50 and gap 350 (benchmarks/results/warmup.md)."""
    rng = np.random.default_rng(3)
    n_chains, n_draws, spread, gap, share = 4, 1000, 50.0, 350.0, 0.3
    energy = rng.normal(0.0, spread, (n_chains, n_draws))
    energy[2, :int(share * n_draws)] += gap
    idata = az.from_dict(
        posterior={"delta0": rng.normal(size=(n_chains, n_draws))},
        sample_stats={"energy": energy, "diverging": np.zeros((n_chains, n_draws), bool),
                      "tree_depth": np.full((n_chains, n_draws), 4)})
    found = diagnose(idata)
    expected = ((2 * spread ** 2 + gap ** 2 / n_draws)
                / (spread ** 2 + share * (1 - share) * gap ** 2))
    assert found.min_bfmi == pytest.approx(expected, rel=0.1)
    assert found.min_bfmi < BFMI_MIN and struggles(found) and not steps_failed(found)
    # read as modes only where the chains form several groups; the sampler's trouble in one
    assert energy_explained(found, groups=2) and not energy_explained(found, groups=1)
    # within each stretch the chain explores the energy well
    for stretch in (slice(0, int(share * n_draws)), slice(int(share * n_draws), None)):
        assert az.bfmi(energy[2:3, stretch])[0] > 1.5
    # a healthy fit is never held back, and divergences always are
    healthy = dataclasses.replace(found, min_bfmi=0.9)
    assert energy_explained(healthy, groups=1)
    assert steps_failed(dataclasses.replace(found, divergences=1))


def test_bad_retries(scores):
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="retries"):
            bc.hierarchical(scores, "a", "b", retries=bad)


def test_heatmap_hatches_both_cells_of_unreliable_pairs():
    names = ["forest", "tree", "svm"]
    values = np.array([[np.nan, 0.9, 0.2], [0.05, np.nan, 0.5], [0.7, 0.4, np.nan]])
    import pandas as pd
    matrix = pd.DataFrame(values, index=names, columns=names)
    ax = plots.plot_probability_heatmap(matrix, unreliable=[("tree", "svm")])
    cells = sorted(p.get_xy() for p in ax.patches if p.get_gid() == "unreliable")
    # (row tree=1, column svm=2) at x = 2, y = 1 and its mirror, as lower-left corners
    assert cells == [(0.5, 1.5), (1.5, 0.5)]
    assert "UNRELIABLE (1 pair(s)" in ax.get_title()
    clean = plots.plot_probability_heatmap(matrix)
    assert not [p for p in clean.patches if p.get_gid() == "unreliable"]
    assert "UNRELIABLE" not in clean.get_title()
    with pytest.raises(ValueError, match="not in the matrix"):
        plots.plot_probability_heatmap(matrix, unreliable=[("tree", "knn")])


# --- with Stan ------------------------------------------------------------------------------

@pytest.mark.stan
def test_without_retries_a_failed_fit_is_unreliable_everywhere(scores):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = bc.hierarchical(scores, "a", "b", seed=3, retries=0, **STARVED)
    said = caught_by_kind(caught)
    assert said["retry"] == [] and len(said["sampling"]) == 1
    assert said["sampling"][0].startswith("hierarchical model a - b: ")
    assert "effective sample size" in said["sampling"][0]
    assert not result.reliable
    for estimate in (result.population, result.next_dataset):
        assert estimate.decision() == estimate.decision(0.5) == "unreliable (sampling problems)"
    (attempt,) = result.settings["attempts"]
    assert (attempt["attempt"], attempt["adapt_delta"], attempt["iter_warmup"],
            attempt["iter_sampling"], attempt["ok"]) == (1, 0.95, 10, 10, False)
    assert attempt["problems"] == list(result.diagnostics.problems)
    summary = result.summary()
    assert summary.startswith("UNRELIABLE: the sampler failed its diagnostics;")
    assert summary.splitlines()[1:1 + len(result.diagnostics.problems)] == \
        [f"  - {problem}" for problem in result.diagnostics.problems]
    assert "let the package retry" in summary            # retries=0: the advice says so
    assert "decision at 0.95: unreliable (sampling problems)" in summary
    assert "Attempts" not in summary                     # one fit only
    markdown = result.to_markdown()
    assert markdown.startswith("### Hierarchical model: a vs b on 4 datasets (UNRELIABLE")
    assert "- UNRELIABLE: the sampler failed" in markdown
    assert r"\caption{Hierarchical model: a vs b on 4 datasets (UNRELIABLE" in result.to_latex()


@pytest.mark.stan
def test_two_retries_then_unreliable_and_reproducible(scores):
    def fit():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = bc.hierarchical(scores, "a", "b", seed=3, **STARVED)   # retries=2
        return result, caught_by_kind(caught)

    result, said = fit()
    attempts = result.settings["attempts"]
    assert [(a["attempt"], a["ok"]) for a in attempts] == [(1, False), (2, False), (3, False)]
    assert (attempts[0]["continued"], attempts[0]["draws"]) == (False, 10)
    fresh_draws = 10
    for retry, (before, after) in enumerate(zip(attempts, attempts[1:]), start=1):
        struggled = any(word in problem for problem in before["problems"]
                        for word in ("divergent", "tree depth", "E-BFMI"))
        # continued after slow mixing alone (retry times the last fresh fit's draws, pooled),
        # else afresh with twice the draws of the last fresh fit
        assert after["continued"] == (not struggled)
        if after["continued"]:
            assert after["draws"] == before["draws"] + retry * fresh_draws
        else:
            assert after["draws"] == after["iter_sampling"] == 2 * fresh_draws
            fresh_draws = after["iter_sampling"]
    assert len(said["retry"]) == 2
    assert all(s.startswith("hierarchical model a - b: ") for s in said["retry"])
    assert "effective sample size" in said["retry"][0]
    assert said["sampling"] == [s for s in said["sampling"]
                                if s.startswith("hierarchical model a - b (after 3 attempts): ")]
    assert len(said["sampling"]) == 1
    # the result holds the last fit's draws (pooled when it continued)
    assert result.idata.posterior.sizes["draw"] == attempts[-1]["draws"]
    assert result.settings["iter_sampling"] == attempts[-1]["draws"]
    summary = result.summary()
    assert summary.startswith("UNRELIABLE: the sampler failed its diagnostics after 3 attempts")
    assert "let the package retry" not in summary
    # same call, same seed: the same draws, continuations included
    again, _ = fit()
    np.testing.assert_array_equal(again.idata.posterior["delta"].values,
                                  result.idata.posterior["delta"].values)


def fit_with_made_up_verdicts(scores, monkeypatch, made_up_diagnostics, verdicts,
                              quadrature=False):
    """``bc.hierarchical`` (2 chains x (100 + 50), adapt_delta 0.9) whose diagnostics of fit
    k are replaced by ``verdicts[k]`` (:func:`conftest.made_up_diagnostics`). Returns the
    result, the warnings by kind and the InferenceData diagnosed, in order. Without the
    quadrature unless asked: it would answer for a refit afresh."""
    seen = made_up_diagnostics(hierarchical_module, verdicts)
    # the test is of the retries: no extension towards the ESS target
    monkeypatch.setattr(runs_module, "extension", lambda *args, **options: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = bc.hierarchical(scores, "a", "b", seed=5, chains=2, iter_warmup=100,
                                 iter_sampling=50, adapt_delta=0.9, baselines=False,
                                 quadrature=quadrature)
    return result, caught_by_kind(caught), seen


@pytest.mark.stan
def test_a_continued_fit_keeps_the_first_draws_then_a_struggling_one_starts_afresh(
        scores, monkeypatch, made_up_diagnostics):
    """Made-up verdicts: the first fit mixes slowly (continued), the continuation diverges
    (afresh, longer, smaller step), the third passes."""
    result, said, seen = fit_with_made_up_verdicts(
        scores, monkeypatch, made_up_diagnostics, [
        dict(problems=("effective sample size 99 < 200: made up by the test",)),
        dict(problems=("1 divergent transition(s): made up by the test",), divergences=1),
        dict(problems=())])
    assert [i.posterior.sizes["draw"] for i in seen] == [50, 100, 100]
    # the continued fit begins with the first fit's draws, unchanged
    for name in ("delta0", "sigma0", "nu"):
        np.testing.assert_array_equal(seen[1].posterior[name].values[:, :50],
                                      seen[0].posterior[name].values)
    assert said == {"retry": [
        "hierarchical model a - b: continued every chain from its last draw, 50 more "
        "draws after: effective sample size 99 < 200: made up by the test",
        "hierarchical model a - b: retried with adapt_delta 0.99, 200 + 100 iterations "
        "after: 1 divergent transition(s): made up by the test"], "sampling": []}
    assert [(a["continued"], a["adapt_delta"], a["iter_warmup"], a["iter_sampling"],
             a["draws"], a["ok"]) for a in result.settings["attempts"]] == [
        (False, 0.9, 100, 50, 50, False), (True, 0.9, 0, 50, 100, False),
        (False, 0.99, 200, 100, 100, True)]
    assert result.reliable and result.idata.posterior.sizes["draw"] == 100
    summary = result.summary()
    # continued with the first fit's step size and metric: no second warm-up
    assert ("  2. adapt_delta 0.9, continued from the last draws, 0 + 50 more "
            "iterations (100 draws per chain): 1 divergent transition(s)") in summary
    steps = seen[1].sample_stats["step_size"].values
    np.testing.assert_allclose(steps[:, 50:], np.repeat(steps[:, 49:50], 50, axis=1), rtol=1e-5)
    assert "  3. adapt_delta 0.99, 200 + 100 iterations: ok" in summary


@pytest.mark.stan
def test_the_quadrature_answers_in_place_of_a_refit_afresh(scores, monkeypatch,
                                                           made_up_diagnostics):
    """Made-up verdicts as above (slow mixing, then a divergent continuation), with the
    quadrature: the refit afresh that follows without it is not made; the quadrature answers
    at the second fit, its probabilities those of the quadrature called alone, to the digit,
    and one RetryWarning (the continuation's) is said."""
    from bayescomp.models.hierarchical_program import prepare
    from bayescomp.models.quadrature import quadrature_probabilities

    verdicts = [dict(problems=("effective sample size 99 < 200: made up by the test",)),
                dict(problems=("1 divergent transition(s): made up by the test",),
                     divergences=1),
                dict(problems=())]
    result, said, seen = fit_with_made_up_verdicts(scores, monkeypatch, made_up_diagnostics,
                                                   verdicts, quadrature=True)
    assert [i.posterior.sizes["draw"] for i in seen] == [50, 100]
    assert [(a["continued"], a["verdict"]) for a in result.settings["attempts"]] == [
        (False, "1 problem(s)"), (True, "1 problem(s); by quadrature, no retry")]
    assert said["retry"] == [
        "hierarchical model a - b: continued every chain from its last draw, 50 more "
        "draws after: effective sample size 99 < 200: made up by the test"]
    assert len(said["sampling"]) == 1 and "by quadrature instead" in said["sampling"][0]
    assert result.reliable and result.by_quadrature
    # the draws are the divergent fit's, as sampled (the warning says so)
    assert result.idata.posterior.sizes["draw"] == 100
    data, scale = prepare(scores, "a", "b", bc.PRIORS["paper"])
    alone = quadrature_probabilities(data, scale, bc.Rope(-0.01, 0.01))
    np.testing.assert_array_equal(result.population.probabilities, alone.population)
    np.testing.assert_array_equal(result.next_dataset.probabilities, alone.next_dataset)


@pytest.mark.stan
def test_chains_that_do_not_decide_alike_go_to_the_quadrature_without_a_retry(
        scores, monkeypatch, made_up_diagnostics):
    """Made-up verdicts: the first fit fails (R-hat), its chains hold their 100 effective
    draws of delta0 each but are made not to decide alike (neither chain by chain nor in
    strata): the quadrature answers at once, with no retry and no RetryWarning, its
    probabilities those of the quadrature called alone, to the digit. Without the quadrature
    the same fit is retried. (A fit too short for its chains to be trusted is retried with
    the quadrature too: the tests above.)"""
    from bayescomp.models.hierarchical_program import prepare
    from bayescomp.models.quadrature import quadrature_probabilities

    seen = made_up_diagnostics(hierarchical_module, [
        dict(problems=("R-hat 1.05 > 1.01: made up by the test",))] * 2 + [dict(problems=())])
    monkeypatch.setattr(hierarchical_module, "settled_decisions", lambda *args: False)
    monkeypatch.setattr(hierarchical_module, "strata_decide", lambda *args: False)
    monkeypatch.setattr(runs_module, "extension", lambda *args, **options: None)
    results, said = [], []
    for quadrature in (True, False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(bc.hierarchical(scores, "a", "b", seed=5, chains=2,
                                           iter_warmup=300, iter_sampling=1000,
                                           baselines=False, quadrature=quadrature))
        said.append(caught_by_kind(caught))
    answered, retried = results
    assert len(seen) == 3    # the first call diagnosed one fit, the second two
    assert [(a["attempt"], a["verdict"]) for a in answered.settings["attempts"]] == [
        (1, "1 problem(s); by quadrature, no retry")]
    assert said[0]["retry"] == [] and answered.reliable and answered.by_quadrature
    data, scale = prepare(scores, "a", "b", bc.PRIORS["paper"])
    alone = quadrature_probabilities(data, scale, bc.Rope(-0.01, 0.01))
    np.testing.assert_array_equal(answered.population.probabilities, alone.population)
    np.testing.assert_array_equal(answered.next_dataset.probabilities, alone.next_dataset)
    assert [a["ok"] for a in retried.settings["attempts"]] == [False, True]
    assert len(said[1]["retry"]) == 1 and not retried.by_quadrature


@pytest.mark.stan
def test_a_retry_that_passes_is_announced_but_not_flagged(scores, monkeypatch,
                                                         made_up_diagnostics):
    """The first fit is declared failed (a made-up problem), the retry passes: a RetryWarning,
    no SamplingWarning, a reliable result from the retry's draws."""
    result, said, seen = fit_with_made_up_verdicts(
        scores, monkeypatch, made_up_diagnostics, [
        dict(problems=("1 divergent transition(s): made up by the test",), divergences=1),
        dict(problems=())])
    calls = [idata.posterior.sizes["draw"] for idata in seen]
    # stopped at the first fit that passed; after divergences the chains went on at half
    # their step, half as many new draws replacing the divergent ones
    assert calls == [50, 25]
    assert said == {"retry": ["hierarchical model a - b: continued every chain from its last "
                              "draw at 0.5 times its step size, 25 new draws in place of the "
                              "earlier ones after: 1 divergent transition(s): made up by the "
                              "test"], "sampling": []}
    assert result.reliable
    assert result.next_dataset.decision() in ("b better", "equivalent", "a better", "undecided")
    assert result.population.decision() in ("b better", "equivalent", "a better", "undecided")
    assert [(a["continued"], a["redraw"], a["adapt_delta"], a["iter_warmup"],
             a["iter_sampling"], a["ok"]) for a in result.settings["attempts"]] == [
        (False, False, 0.9, 100, 50, False), (True, True, 0.99, 0, 25, True)]
    # the step is half the adapted one, and no draw of the first fit is kept
    first_step = seen[0].sample_stats["step_size"].values[:, -1]
    np.testing.assert_allclose(seen[1].sample_stats["step_size"].values,
                               np.repeat(0.5 * first_step[:, None], 25, axis=1), rtol=1e-5)
    np.testing.assert_array_equal(result.idata.posterior["delta0"].values,
                                  seen[1].posterior["delta0"].values)
    assert result.idata.posterior.sizes["draw"] == 25
    summary = result.summary()
    assert "UNRELIABLE" not in summary and "UNRELIABLE" not in result.to_markdown()
    assert "  1. adapt_delta 0.9, 100 + 50 iterations: 1 divergent transition(s)" in summary
    assert ("  2. adapt_delta 0.99, continued from the last draws at 0.5 times the step "
            "size, 0 + 25 new iterations in place of the earlier draws: ok") in summary


@pytest.mark.stan
def test_all_pairs_flags_unreliable_fits(three_algorithms):
    three = three_algorithms
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.compare_all(three, rope=0.01, seed=2, retries=0, **STARVED)
    table = result.table
    assert not result.reliable and result.unreliable_pairs() == [("a", "b"), ("a", "c"),
                                                                 ("b", "c")]
    assert (table.population_decision == "unreliable (sampling problems)").all()
    assert (table.next_dataset_decision == "unreliable (sampling problems)").all()
    assert not table.reliable.any()
    assert (table.attempts == 1).all()
    # the probabilities stay, for inspection
    direct = result.results[("a", "b")]
    assert result.probability_matrix().loc["a", "b"] == direct.population.probabilities[2]
    summary = result.summary()
    assert summary.startswith("UNRELIABLE: 3 of 3 fits failed their sampler diagnostics")
    assert "a vs b, a vs c, b vs c" in summary.splitlines()[0]
    assert "(3 UNRELIABLE fit(s))" in result.to_markdown().splitlines()[0]


def _with_problems(*problems):
    """Sampler diagnostics with the given problems (none: a clean fit)."""
    from bayescomp.models.diagnostics import Diagnostics

    return Diagnostics(max_rhat=1.0, min_ess_bulk=1000.0, min_ess_tail=1000.0,
                       divergences=0, treedepth_saturated=0, min_bfmi=1.0,
                       n_chains=2, n_draws=100, max_treedepth=10, problems=tuple(problems))


def test_the_loop_of_fits_follows_its_rules():
    """run_fits with a made-up engine and made-up assessments, whose settings the module's
    rules give in closed form. First fit (100 draws per chain) mixes slowly: retried as a
    continuation of 100 more (on_retry told); then clean with ESS 500 of a target of 1000:
    extended by 100 * (1000 / 500 - 1) * 1.1 = 220 draws per chain at 200, capped at
    4 x 100 - 200 = 200; then enough ESS but a probability too close to call: doubled, 400
    more, up to 8 x 100; then done. Every fit has a Stan seed of its own, and the draws are
    joined chain by chain."""
    from bayescomp.models.hierarchical_runs import Assessment, run_fits
    from bayescomp.sampling import Seeds

    scripted = [Assessment(_with_problems("effective sample size 99 < 200"), (99.0, 150.0)),
                Assessment(_with_problems(), (500.0, 700.0)),
                Assessment(_with_problems(), (1200.0, 1500.0), close=True),
                Assessment(_with_problems(), (2400.0, 3000.0), record=dict(modes=0))]
    runs_seen, retried, spent = [], [], []

    def sample(fit, run, adapted, stan_seed):
        runs_seen.append((dict(run), dict(adapted), stan_seed))
        start = 0 if fit is None else fit.posterior.sizes["draw"]
        draws = np.arange(start, start + run["iter_sampling"], dtype=float)
        return az.from_dict(posterior={"x": np.stack([draws, -draws])})

    def assess(fit, no_retry_left):
        spent.append(no_retry_left)
        return scripted[len(spent) - 1]

    seeds = Seeds(7)
    runs = run_fits(sample, assess, seeds, adapt_delta=0.9, iter_warmup=200, iter_sampling=100,
                    retries=1, ess=1000, on_retry=lambda run, diag: retried.append(run))
    assert [run["iter_sampling"] for run, _, _ in runs_seen] == [100, 100, 200, 400]
    assert [run["continued"] for run, _, _ in runs_seen] == [False, True, True, True]
    # no engine here keeps a metric: a continuation adapts again for at most 300 iterations
    assert [adapted["iter_warmup"] for _, adapted, _ in runs_seen] == [200, 200, 200, 200]
    assert [seed for _, _, seed in runs_seen] == [seeds.stan_seed(k) for k in (1, 2, 3, 4)]
    assert len(set(seed for _, _, seed in runs_seen)) == 4
    assert len(retried) == 1 and retried[0]["continued"] and retried[0]["iter_sampling"] == 100
    assert spent == [False, True, True, True]
    assert [a["draws"] for a in runs.attempts] == [100, 200, 400, 800]
    assert [a["ok"] for a in runs.attempts] == [False, True, True, True]
    assert [a["verdict"] for a in runs.attempts] == ["1 problem(s)", "ok", "ok", "ok"]
    assert runs.attempts[0]["problems"] == ["effective sample size 99 < 200"]
    assert runs.attempts[-1]["modes"] == 0 and "modes" not in runs.attempts[0]
    np.testing.assert_array_equal(runs.fit.posterior["x"].values[0], np.arange(800.0))
    assert runs.assessment is scripted[-1] and runs.last is not runs.fresh
    assert runs.fresh["continued"] is False and runs.last["iter_sampling"] == 400


def test_the_loop_asks_for_an_answer_only_in_place_of_a_costly_retry():
    """run_fits with a made-up engine. The first fit diverges (the retry is a redraw, half
    the draws: instead_of_retry is not asked), the redraw diverges again (the next retry
    would start afresh: asked); or the first fit mixes slowly (a continuation of as many
    draws as the first fit's: not asked) and so does the continuation (the next, of twice
    the draws: asked). Where it answers, the loop stops there, the retry is neither made
    nor counted (the last fresh fit is still the first), and the last attempt says which
    route answered; where it does not, the retry is made (afresh: twice the warm-up and the
    draws, adapt_delta 0.99) and announced."""
    from bayescomp.models.hierarchical_runs import Assessment, run_fits
    from bayescomp.sampling import Seeds

    divergent = Assessment(dataclasses.replace(_with_problems("1 divergent transition(s)"),
                                               divergences=1), (900.0, 900.0))
    slow = Assessment(_with_problems("R-hat 1.05 > 1.01"), (900.0, 900.0))
    clean = Assessment(_with_problems(), (1500.0, 1500.0))

    def loop(failed, answer):
        runs_seen, asked, retried = [], [], []

        def sample(fit, run, adapted, stan_seed):
            runs_seen.append(dict(run))
            return az.from_dict(posterior={"x": np.zeros((2, run["iter_sampling"]))})

        def instead():
            asked.append(len(runs_seen))
            return answer

        scripted = [failed, failed, clean]
        runs = run_fits(sample, lambda fit, spent: scripted[len(runs_seen) - 1], Seeds(3),
                        adapt_delta=0.9, iter_warmup=200, iter_sampling=100, retries=2,
                        ess=1000, on_retry=lambda run, diag: retried.append(run),
                        instead_of_retry=instead)
        return runs, runs_seen, asked, retried

    for failed, first_retry in ((divergent, (True, True, 50)), (slow, (True, False, 100))):
        runs, runs_seen, asked, retried = loop(failed, "quadrature")
        assert asked == [2] and len(runs_seen) == 2 and len(retried) == 1
        assert (runs_seen[1]["continued"], runs_seen[1]["redraw"],
                runs_seen[1]["iter_sampling"]) == first_retry
        assert [a["verdict"] for a in runs.attempts] == [
            "1 problem(s)", "1 problem(s); by quadrature, no retry"]
        assert runs.assessment.answered == "quadrature"
        assert runs.assessment.diagnostics is failed.diagnostics
        assert runs.fresh == runs_seen[0] and runs.fresh["iter_warmup"] == 200
    runs, runs_seen, asked, retried = loop(divergent, "")
    assert asked == [2] and len(runs_seen) == 3 and len(retried) == 2
    assert (runs_seen[2]["continued"], runs_seen[2]["adapt_delta"], runs_seen[2]["iter_warmup"],
            runs_seen[2]["iter_sampling"]) == (False, 0.99, 400, 200)
    assert runs.fresh == runs_seen[2] and runs.assessment is clean
    runs, runs_seen, asked, retried = loop(slow, "")
    assert asked == [2] and len(runs_seen) == 3 and len(retried) == 2
    assert (runs_seen[2]["continued"], runs_seen[2]["iter_sampling"]) == (True, 200)
    assert runs.fresh == runs_seen[0] and runs.assessment is clean
