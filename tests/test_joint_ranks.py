"""The Monte Carlo error of the joint model's P(best) and the best-algorithm rule that reads
it (bayescomp.models.joint_ranks, bayescomp.decisions.best_algorithm): known answers."""
from __future__ import annotations

import dataclasses

import arviz as az
import numpy as np
import pandas as pd
import pytest

from bayescomp.decisions import MC_MARGIN, best_algorithm, leaders
from bayescomp.models.joint_ranks import p_best_mcse, rank_probabilities
from bayescomp.rope import Rope

ROPE = Rope(-0.01, 0.01)


def effects_draws(rng, chains=4, draws=400, copies=16, k=3, lead=0.02):
    """Population means (chain, draw, copy, K): autocorrelated draws, the first algorithm
    ahead by ``lead``, spread 0.03 (no ties within the ROPE are likely to matter: the test
    counts them the same way)."""
    level = np.zeros((chains, draws, 1, k))
    for t in range(1, draws):      # AR(1) over draws, so that the ESS is below the draws
        level[:, t] = 0.8 * level[:, t - 1] + rng.normal(0, 0.02, (chains, 1, k))
    return level + rng.normal(0, 0.02, (chains, draws, copies, k)) + \
        np.r_[lead, np.zeros(k - 1)]


def first_shares(effects):
    """Per draw, each algorithm's share of rank 1 over its copies, ties within the ROPE of
    the top shared: written plainly."""
    top = effects.max(axis=-1, keepdims=True)
    tied = effects >= top - ROPE.high - 1e-12
    return (tied / tied.sum(axis=-1, keepdims=True)).mean(axis=2)


def test_the_error_is_that_of_each_draws_share_of_the_first_rank():
    rng = np.random.default_rng(3)
    effects = effects_draws(rng)
    shares = first_shares(effects)
    expected = [shares[..., a].std() / np.sqrt(float(az.ess(shares[..., a], method="bulk")))
                for a in range(3)]
    errors, gap_errors = p_best_mcse(effects, ROPE, 0)
    np.testing.assert_allclose(errors, expected, rtol=1e-9)
    # the gaps to the first algorithm: the error of the per-draw difference, by arviz
    gaps = shares[..., [0]] - shares
    expected_gaps = [0.0] + [gaps[..., a].std() / np.sqrt(float(az.ess(gaps[..., a],
                                                                        method="bulk")))
                             for a in (1, 2)]
    np.testing.assert_allclose(gap_errors, expected_gaps, rtol=1e-9)
    # the probabilities it is the error of: rank_probabilities' first column
    k = effects.shape[-1]
    ranks = rank_probabilities(effects.reshape(-1, k), ROPE, ["a", "b", "c"])
    np.testing.assert_allclose(ranks[1].to_numpy(), shares.mean(axis=(0, 1)), rtol=1e-12)


def test_an_algorithm_always_first_or_never_has_no_error():
    rng = np.random.default_rng(4)
    effects = effects_draws(rng, lead=1.0)     # a first at every draw and copy
    for errors in p_best_mcse(effects, ROPE, 0):
        np.testing.assert_array_equal(errors, [0.0, 0.0, 0.0])


def test_modes_mixed_by_weights_add_their_errors_and_the_weights_errors():
    rng = np.random.default_rng(5)
    effects = effects_draws(rng)
    effects[2:, ..., 0] -= 0.04            # chains 2 and 3: a mode where a leads less
    parts, weights, errors = ((0, 1), (2, 3)), np.array([0.3, 0.7]), np.array([0.05, 0.05])
    shares = first_shares(effects)
    p = [shares[list(part)].mean(axis=(0, 1)) for part in parts]
    e = [shares[list(part)].reshape(-1, 3).std(axis=0)
         / np.sqrt([float(az.ess(shares[list(part)][..., a], method="bulk")) for a in range(3)])
         for part in parts]
    # two modes: w_2 = 1 - w_1, so P(best) = p_2 + w_1 (p_1 - p_2), whose error from the
    # weight is |p_1 - p_2| err(w_1), beside each mode's own error times its weight
    expected = np.sqrt(0.09 * e[0] ** 2 + 0.49 * e[1] ** 2
                       + (0.05 * (p[0] - p[1])) ** 2)
    np.testing.assert_allclose(p_best_mcse(effects, ROPE, 0, parts, weights, errors)[0],
                               expected, rtol=1e-9)
    # a gap's error is formed alike, from the gap's per-draw values
    gaps = shares[..., [0]] - shares
    g = [gaps[list(part)].mean(axis=(0, 1)) for part in parts]
    ge = [np.r_[0.0, [gaps[list(part)][..., a].std()
                      / np.sqrt(float(az.ess(gaps[list(part)][..., a], method="bulk")))
                      for a in (1, 2)]] for part in parts]
    expected_gaps = np.sqrt(0.09 * ge[0] ** 2 + 0.49 * ge[1] ** 2 + (0.05 * (g[0] - g[1])) ** 2)
    np.testing.assert_allclose(p_best_mcse(effects, ROPE, 0, parts, weights, errors)[1],
                               expected_gaps, rtol=1e-9)


def test_best_algorithm_needs_two_errors_above_the_threshold():
    p_best = pd.Series({"a": 0.955, "b": 0.04, "c": 0.005})
    gaps = pd.Series({"a": 0.0, "b": 0.004, "c": 0.002})
    assert best_algorithm(p_best, pd.Series({"a": 0.002, "b": 0.0, "c": 0.0}),
                          gaps) == ("a", False)
    assert best_algorithm(p_best, pd.Series({"a": 0.003, "b": 0.0, "c": 0.0}),
                          gaps) == (None, True)
    far = pd.Series({"a": 0.90, "b": 0.09, "c": 0.01})
    assert best_algorithm(far, pd.Series({"a": 0.003, "b": 0.0, "c": 0.0}),
                          gaps) == (None, False)
    assert 0.955 - MC_MARGIN * 0.003 < 0.95 <= 0.955 - MC_MARGIN * 0.002
    with pytest.raises(ValueError, match="threshold"):
        best_algorithm(p_best, p_best * 0, gaps, threshold=0.4)


def test_algorithms_sharing_the_largest_p_best_are_named_together():
    """The thesis's decision trees: four inducers tied within the ROPE at almost every draw
    (the joint fit's P(best) and Monte Carlo errors of the gaps at seed 2, below). Which of
    them is largest is noise: they share the lead, and the first of them in the table's
    order is the result's best."""
    from bayescomp.presentation.verdicts import most_probably_best

    p_best = pd.Series({"cart": 0.24996067708333375, "gale": 0.0002562499999999996,
                        "oc1": 0.24987734375000034, "oc1_es": 0.24995286458333374,
                        "oc1_sa": 0.24995286458333374})
    gaps = pd.Series({"cart": 0.0, "gale": 4.240872222411247e-05, "oc1": 2.1939602710406704e-05,
                      "oc1_es": 7.79585336649634e-06, "oc1_sa": 7.79585336649634e-06})
    # oc1 trails cart by 8.3e-5, more than 2 errors of the gap (4.4e-5); oc1_es and oc1_sa
    # by 7.8e-6, less than 2 errors (1.6e-5)
    assert p_best["cart"] - p_best["oc1"] > MC_MARGIN * gaps["oc1"]
    assert p_best["cart"] - p_best["oc1_es"] < MC_MARGIN * gaps["oc1_es"]
    assert leaders(p_best, gaps) == ["cart", "oc1_es", "oc1_sa"]
    assert leaders(p_best) == ["cart"]            # exact values: no tie
    assert best_algorithm(p_best, gaps * 2, gaps) == (None, False)
    assert (most_probably_best(p_best, gaps, lambda v: f"P = {v:.3f}")
            == "cart, oc1_es and oc1_sa share the largest P(best) (P = 0.250 each)")
    assert (most_probably_best(p_best, gaps, lambda v: f"{v:.5f}")
            == "cart, oc1_es and oc1_sa share the largest P(best) (0.24995 to 0.24996)")
    one = pd.Series({"a": 0.6, "b": 0.3, "c": 0.3 + 1e-12})
    assert leaders(one, one * 0) == ["a"]
    assert (most_probably_best(one, one * 0, lambda v: f"{v:.2f}")
            == "a is the most probably best (0.60), then c (0.30)")


def test_the_lead_is_shared_by_the_error_of_the_gap_not_of_two_independent_errors():
    """Independent draws in which a, b or c has the largest worth with probabilities 0.5,
    0.475 and 0.025: one's first rank is another's loss, so var(I_a - I_b) = p_a + p_b -
    (p_a - p_b)^2 per draw, more than p_a (1 - p_a) + p_b (1 - p_b). The gap 0.025 is
    within two of the gap's errors, not within two of the errors taken as independent."""
    from bayescomp.models.ranking import fit_ranks, p_best_estimates

    rng = np.random.default_rng(11)
    chains, draws = 4, 1000
    first = rng.choice(3, size=(chains, draws), p=[0.5, 0.475, 0.025])
    worths = rng.uniform(0.1, 0.2, (chains, draws, 3))
    np.put_along_axis(worths, first[..., None], 0.6, axis=-1)
    fit = az.from_dict(posterior={"worth": worths})
    p_best, mcse, gaps = p_best_estimates(fit_ranks(fit), ("a", "b", "c"))
    indicators = np.stack([first == a for a in range(3)], axis=-1).astype(float)
    np.testing.assert_array_equal(p_best.to_numpy(), indicators.mean(axis=(0, 1)))
    top = int(np.argmax(p_best.to_numpy()))
    assert top == 0
    difference = indicators[..., 0] - indicators[..., 1]
    # two routes: the per-draw difference's error by arviz, and the closed form at the
    # sample's shares over all draws (independent draws: the ESS about the draws)
    assert gaps["b"] == pytest.approx(difference.std() / np.sqrt(float(az.ess(
        difference, method="bulk"))), rel=1e-9)
    pa, pb = p_best["a"], p_best["b"]
    closed = np.sqrt((pa + pb - (pa - pb) ** 2) / (chains * draws))
    assert gaps["b"] == pytest.approx(closed, rel=0.05)
    assert gaps["a"] == 0.0
    independent = np.hypot(mcse["a"], mcse["b"])
    assert gaps["b"] > 1.3 * independent
    # with the same shares exactly: tied by the gap's error, not by independent errors
    shares = pd.Series({"a": 0.5, "b": 0.475, "c": 0.025})
    assert MC_MARGIN * independent < 0.025 < MC_MARGIN * gaps["b"]
    assert leaders(shares, gaps) == ["a", "b"]
    assert leaders(shares, pd.Series({"a": 0.0, "b": independent, "c": 0.0})) == ["a"]


@pytest.mark.stan
def test_the_joint_fits_best_sentence_reads_the_margin(stan_backend):
    import warnings

    import bayescomp as bc
    from bayescomp.models.joint_program import algorithm_effects

    rng = np.random.default_rng(6)
    means = rng.uniform(0.7, 0.9, (8, 1))
    arrays = {name: means + shift + rng.normal(0, 0.01, (8, 10))
              for name, shift in (("a", 0.03), ("b", 0.0), ("c", 0.0))}
    scores = bc.from_arrays(arrays, n_folds=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bc.compare_many(scores, seed=2, backend=stan_backend, iter_warmup=500,
                                 iter_sampling=500)
    # the error is p_best_mcse of the draws as sampled (the chains mixed, no modes)
    assert not result.modes
    copies = result.idata.posterior["delta0_copies"].values
    effects = algorithm_effects(copies.reshape(-1, 2), 3).reshape(copies.shape[:3] + (3,))
    errors, gap_errors = p_best_mcse(effects, result.rope, int(np.argmax(result.p_best)))
    np.testing.assert_allclose(result.p_best_mcse.to_numpy(), errors, rtol=1e-12)
    np.testing.assert_allclose(result.p_best_gap_mcse.to_numpy(), gap_errors, rtol=1e-12)
    # the sentence names a best algorithm exactly where best_algorithm does, with the fit's
    # P(best) and with one set just above the threshold and a wide error
    named, _ = best_algorithm(result.p_best, result.p_best_mcse, result.p_best_gap_mcse)
    assert result.verdicts()[0].startswith(f"{named} has the best" if named else "No algorithm")
    best = result.best
    near = result.p_best.copy() * 0
    near[best], near[near.index != best] = 0.951, 0.049 / 2
    errors = result.p_best_mcse.copy()
    errors[best] = 0.01
    edited = dataclasses.replace(result, p_best=near, p_best_mcse=errors)
    assert edited.verdicts()[0].startswith("No algorithm is best with probability 0.95 (its "
                                           "P(best) is within 2 Monte Carlo errors (0.01 each)")
    # a tie for the lead: both named, and the result's best is the first of them
    tied = pd.Series({"a": 0.5, "b": 0.0, "c": 0.5}, name="p_best")
    shared = dataclasses.replace(result, p_best=tied, p_best_mcse=tied * 0,
                                 p_best_gap_mcse=tied * 0)
    assert shared.best == "a"
    assert "a and c share the largest P(best) (P(rank 1) = 0.500 each)" in shared.verdicts()[0]
