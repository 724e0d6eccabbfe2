"""The Plackett-Luce ranking's ESS target, its extensions from where the chains are, and its
verdict's Monte Carlo margin (bayescomp.models.ranking): known answers."""
from __future__ import annotations

import dataclasses

import arviz as az
import numpy as np
import pandas as pd
import pytest

import bayescomp as bc
from bayescomp.decisions import MC_MARGIN, THRESHOLD
from bayescomp.models.ranking import mean_scores, rank_algorithms, tie_groups


@pytest.fixture(scope="module")
def short_and_extended(stan_backend):
    """The example ranked from 150 draws per chain without a target or retries, and with the
    default target and retries, which go on from the same first fit."""
    scores = bc.datasets.load_classifiers()
    settings = dict(seed=5, backend=stan_backend, chains=2, iter_sampling=150)
    with pytest.warns(bc.SamplingWarning):   # 2 x 150 draws are too few for the checks
        short = rank_algorithms(scores, ess=1, retries=0, **settings)
    return scores, short, rank_algorithms(scores, **settings)


@pytest.mark.stan
def test_a_short_fit_is_extended_from_where_its_chains_stopped(short_and_extended):
    _, short, extended = short_and_extended
    first, *more = extended.settings["attempts"]
    assert len(short.settings["attempts"]) == 1 and more
    # the first fit is the short fit, draw for draw; the chunks after it go on without a
    # warm-up (the engine keeps the step size and metric) on the same chains
    short_draws = short.idata.posterior["worth"].values
    extended_draws = extended.idata.posterior["worth"].values
    np.testing.assert_array_equal(extended_draws[:, :150], short_draws)
    assert all(a["continued"] and a["iter_warmup"] == 0 for a in more)
    assert extended_draws.shape[1] == 150 + sum(a["iter_sampling"] for a in more)
    # the ESS reported is the worths' ESS as ArviZ computes it, and it reached the target
    # or the draws reached their cap (4 times iter_sampling)
    ess = extended.settings["ess"]
    draws = extended.idata.posterior[["worth"]]
    assert ess["bulk"] == pytest.approx(float(az.ess(draws, method="bulk")["worth"].min()))
    assert ess["tail"] == pytest.approx(float(az.ess(draws, method="tail")["worth"].min()))
    assert ess["target"] == 1000
    assert min(ess["bulk"], ess["tail"]) >= 1000 or extended_draws.shape[1] == 600
    assert f"target {ess['target']}" in extended.summary()


@pytest.mark.stan
def test_the_log_likelihood_follows_the_extended_draws(short_and_extended):
    """The engine's log-likelihood group is joined with the posterior: each draw's log_lik
    of a dataset without ties is the Plackett-Luce probability of its order at that draw's
    worths, written plainly."""
    scores, _, extended = short_and_extended
    worths = extended.worths.to_numpy()
    log_lik = extended.idata.log_likelihood["log_lik"].values.reshape(len(worths), -1)
    means = mean_scores(scores).to_numpy()
    untied = [d for d, row in enumerate(means)
              if all(len(g) == 1 for g in tie_groups(row, rope=0.01))]
    assert untied
    for d in untied:
        order = np.argsort(-means[d])
        ordered = worths[:, order]
        tails = np.cumsum(ordered[:, ::-1], axis=1)[:, ::-1]
        expected = np.sum(np.log(ordered[:, :-1] / tails[:, :-1]), axis=1)
        np.testing.assert_allclose(log_lik[:, d], expected, rtol=1e-5)


@pytest.mark.stan
def test_p_best_errors_are_the_indicators_monte_carlo_errors(short_and_extended):
    _, _, extended = short_and_extended
    chains = extended.idata.posterior.sizes["chain"]
    worths = extended.worths.to_numpy()
    first = (worths == worths.max(axis=1, keepdims=True)).astype(float)
    for a, name in enumerate(extended.algorithms):
        indicator = first[:, a].reshape(chains, -1)
        expected = (0.0 if indicator.std() == 0 else
                    indicator.std() / np.sqrt(float(az.ess(indicator, method="bulk"))))
        assert extended.p_best_mcse[name] == pytest.approx(expected, rel=1e-6, abs=1e-12)
        # the gap to the largest P(best): the error of the indicators' difference, draw by draw
        gap = (first[:, list(extended.algorithms).index(extended.p_best.idxmax())]
               - first[:, a]).reshape(chains, -1)
        expected = (0.0 if gap.std() == 0 else
                    gap.std() / np.sqrt(float(az.ess(gap, method="bulk"))))
        assert extended.p_best_gap_mcse[name] == pytest.approx(expected, rel=1e-6, abs=1e-12)


@pytest.mark.stan
def test_the_verdict_needs_two_monte_carlo_errors_above_the_threshold(short_and_extended):
    _, _, result = short_and_extended
    names = pd.Index(result.algorithms, name="algorithm")
    p_best = pd.Series([0.955, 0.045, 0.0, 0.0], index=names, name="p_best")

    def verdict(error):
        mcse = pd.Series([error, error, 0.0, 0.0], index=names)
        return dataclasses.replace(result, p_best=p_best, p_best_mcse=mcse).verdict()

    best = names[0]
    # 0.955 - 2 x 0.002 = 0.951 clears 0.95; 0.955 - 2 x 0.003 = 0.949 does not
    assert 0.955 - MC_MARGIN * 0.002 >= THRESHOLD > 0.955 - MC_MARGIN * 0.003
    assert verdict(0.002).startswith(f"{best} is the best of the 4 algorithms")
    undecided = verdict(0.003)
    assert undecided.startswith("No algorithm is best with probability 0.95 (its P(best) is "
                                "within 2 Monte Carlo errors (0.003 each) of the threshold")
    assert f"{best} is the most probably best (P = 0.955" in undecided


def test_the_targets_are_checked():
    scores = bc.datasets.load_classifiers()
    for ess in (0, 1.5, True):
        with pytest.raises(ValueError, match="ess must be a positive integer"):
            rank_algorithms(scores, ess=ess)
    with pytest.raises(ValueError, match="retries must be a non-negative integer"):
        rank_algorithms(scores, retries=-1)
