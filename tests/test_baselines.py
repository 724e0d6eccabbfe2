"""Known answers for the baselines across datasets (bayescomp.baselines.across_datasets)."""
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayescomp.baselines.across_datasets import (
    BaselinesResult, BayesianTestResult, ClassicalTestResult, baselines,
    bayesian_sign_test, bayesian_signed_rank_test, paired_ttest, sign_test, wilcoxon_test,
)
from bayescomp.data.readers import from_arrays
from bayescomp.rope import Rope, most_probable_shares

try:
    from baycomp.multiple import SignedRankTest as BaycompSignedRank
    from baycomp.multiple import SignTest as BaycompSign
except ImportError:  # pragma: no cover - baycomp is a test extra
    BaycompSignedRank = BaycompSign = None

needs_baycomp = pytest.mark.skipif(BaycompSignedRank is None,
                                   reason="baycomp is not installed (pip install baycomp)")


@pytest.fixture
def differences():
    rng = np.random.default_rng(42)
    # rounded, so that there are ties, plus two exact zeros
    d = np.round(rng.normal(0.004, 0.02, size=18), 3)
    return np.concatenate([d, [0.0, 0.0]])


def scipy_quietly(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


# --------------------------------------------------------------------------- frequentist

@pytest.mark.parametrize("method", ["auto", "exact", "approx"])
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
def test_wilcoxon_equals_scipy(differences, method, zero_method):
    result = wilcoxon_test(differences, first="a", second="b", method=method,
                           zero_method=zero_method)
    for alternative, p in [("two-sided", result.p_value), ("greater", result.p_greater),
                           ("less", result.p_less)]:
        expected = scipy_quietly(stats.wilcoxon, differences, zero_method=zero_method,
                                 alternative=alternative, method=method)
        assert p == expected.pvalue
        if alternative == "two-sided":
            assert result.statistic == expected.statistic
    assert result.n_used == (18 if zero_method == "wilcox" else 20)
    assert result.n == 20 and result.unit == "datasets"
    assert dict(result.options) == {"method": method, "zero_method": zero_method,
                                    "correction": False}


def test_wilcoxon_exact_small_case_by_hand():
    # ranks of |d|: 1..5; positive ranks 2+4+5 = 11, negative 1+3 = 4; W = min = 4.
    # Under H0 each of the 32 sign patterns is equally likely; R+ >= 11 iff the negative
    # ranks sum to <= 4: {}, {1}, {2}, {3}, {4}, {1,2}, {1,3}, so P = 7/32
    d = np.array([-0.1, 0.2, -0.3, 0.4, 0.5])
    result = wilcoxon_test(d, method="exact")
    assert result.statistic == 4
    assert result.p_greater == pytest.approx(7 / 32)
    # P(R+ <= 11) = 1 - P(R+ >= 12); negatives summing to <= 3: {}, {1}, {2}, {3}, {1,2}
    assert result.p_less == pytest.approx(27 / 32)
    assert result.p_value == pytest.approx(14 / 32)


def test_wilcoxon_all_zero_does_not_crash():
    result = wilcoxon_test(np.zeros(6))
    assert np.isnan(result.statistic)
    assert result.p_value == result.p_greater == result.p_less == 1.0
    assert result.n_used == 0
    assert "every difference is zero" in result.summary()


def test_sign_test_equals_hand_binomial():
    d = np.array([0.1] * 9 + [-0.2] * 3 + [0.0] * 2)
    result = sign_test(d, first="a", second="b")
    k, n = 9, 12
    greater = stats.binom.sf(k - 1, n, 0.5)
    less = stats.binom.cdf(k, n, 0.5)
    assert result.statistic == k and result.n_used == n
    assert result.p_greater == pytest.approx(greater, rel=1e-12)
    assert result.p_less == pytest.approx(less, rel=1e-12)
    # the binomial(n, 1/2) is symmetric, so the two-sided p doubles the smaller tail
    assert result.p_value == pytest.approx(min(1.0, 2 * min(greater, less)), rel=1e-12)
    assert result.p_value == stats.binomtest(k, n, 0.5).pvalue
    assert "2 zero difference(s) dropped" in result.notes[0]


@pytest.mark.parametrize("n_zeros, wins, losses", [(2, 10, 4), (3, 10, 4)])
def test_sign_test_split_zeros(n_zeros, wins, losses):
    d = np.array([0.1] * 9 + [-0.2] * 3 + [0.0] * n_zeros)
    result = sign_test(d, zeros="split")
    assert (result.statistic, result.n_used) == (wins, wins + losses)
    assert result.p_value == stats.binomtest(wins, wins + losses, 0.5).pvalue
    assert result.p_greater == pytest.approx(stats.binom.sf(wins - 1, wins + losses, 0.5))
    assert ("1 dropped" in result.notes[0]) == (n_zeros % 2 == 1)


def test_sign_test_all_zero_does_not_crash():
    result = sign_test(np.zeros(4))
    assert result.n_used == 0 and result.p_value == 1.0 and np.isnan(result.statistic)


def test_paired_ttest_equals_scipy():
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0.7, 0.9, 15), rng.uniform(0.7, 0.9, 15)
    result = paired_ttest(a - b, first="a", second="b")
    for alternative, p in [("two-sided", result.p_value), ("greater", result.p_greater),
                           ("less", result.p_less)]:
        assert p == pytest.approx(stats.ttest_rel(a, b, alternative=alternative).pvalue,
                                  rel=1e-12)
        assert p == stats.ttest_1samp(a - b, 0.0, alternative=alternative).pvalue
    assert result.statistic == pytest.approx(stats.ttest_rel(a, b).statistic, rel=1e-12)
    assert dict(result.options) == {"df": 14}


def test_paired_ttest_all_zero_does_not_crash():
    result = paired_ttest(np.zeros(5))
    assert np.isnan(result.statistic) and result.p_value == 1.0


# --------------------------------------------------------------------------- Bayesian sign

def dirichlet_mean_and_se(alpha, n_samples):
    alpha = np.asarray(alpha, dtype=float)
    total = alpha.sum()
    mean = alpha / total
    sd = np.sqrt(alpha * (total - alpha) / (total ** 2 * (total + 1)))
    return mean, sd / np.sqrt(n_samples)


@pytest.mark.parametrize("location, strength, region", [
    (0.0, 0.5, 1), (0.0, 2.0, 1), (-0.5, 1.0, 0), (0.5, 0.5, 2), (0.01, 0.5, 1)])
def test_bayesian_sign_mean_is_dirichlet_mean(differences, location, strength, region):
    rope = Rope.coerce(0.01)
    counts = np.array([np.sum(differences < -0.01),
                       np.sum(np.abs(differences) <= 0.01),
                       np.sum(differences > 0.01)], dtype=float)
    alpha = counts.copy()
    alpha[region] += strength
    n_samples = 20_000
    result = bayesian_sign_test(differences, rope, prior_strength=strength,
                                prior_location=location, n_samples=n_samples, seed=1)
    mean, se = dirichlet_mean_and_se(alpha, n_samples)
    assert np.allclose(mean, (counts + strength * np.eye(3)[region]) / (20 + strength))
    assert np.all(np.abs(result.mean_masses - mean) < 5 * se)
    assert result.samples.shape == (n_samples, 3)
    assert np.allclose(result.samples.sum(axis=1), 1.0)
    assert np.array_equal(result.most_probable, most_probable_shares(result.samples))


def test_bayesian_sign_empty_region_has_no_mass():
    result = bayesian_sign_test([0.05, 0.1, 0.2], 0.01, n_samples=1000, seed=0)
    assert np.all(result.samples[:, 0] == 0.0)
    mean, _ = dirichlet_mean_and_se([0.5, 3], 1)
    assert result.mean_masses[1:] == pytest.approx(mean, abs=0.03)


def test_bayesian_sign_all_zero_is_all_rope():
    result = bayesian_sign_test(np.zeros(5), 0.01, n_samples=100, seed=0)
    assert np.all(result.samples == [0.0, 1.0, 0.0])


@needs_baycomp
def test_bayesian_sign_agrees_with_baycomp(differences):
    # baycomp differences are y - x and it puts a float prior on the ROPE, as a
    # pseudo-observation at 0 does here
    ours = bayesian_sign_test(differences, 0.01, prior_strength=1.0, n_samples=20_000, seed=0)
    theirs = BaycompSign(np.zeros_like(differences), differences, 0.01, prior=1.0,
                         nsamples=20_000, random_state=0).sample
    assert ours.mean_masses == pytest.approx(theirs.mean(axis=0), abs=0.01)


# --------------------------------------------------------------------------- Bayesian signed-rank

def loop_signed_rank(d, rope, strength, location, n_samples, seed):
    """The signed-rank posterior straight from the definition, one pair at a time.

    Follows the documented sampling scheme: points (z0, x_1..x_n) sorted (stable) and
    weights rng.dirichlet in that order.
    """
    rope = Rope.coerce(rope)
    points = [location] + list(d) if strength > 0 else list(d)
    alpha = [strength] + [1.0] * len(d) if strength > 0 else [1.0] * len(d)
    order = np.argsort(points, kind="stable")
    points = [points[i] for i in order]
    alpha = [alpha[i] for i in order]
    weights = np.random.default_rng(seed).dirichlet(alpha, size=n_samples)
    samples = np.zeros((n_samples, 3))
    for s, w in enumerate(weights):
        for i, zi in enumerate(points):
            for j, zj in enumerate(points):
                average = (zi + zj) / 2
                region = 0 if average < rope.low else 2 if average > rope.high else 1
                samples[s, region] += w[i] * w[j]
    return samples


@pytest.mark.parametrize("d, rope, strength, location, chunk_size", [
    (np.array([0.013, -0.004, 0.021, 0.002, -0.015, 0.03]), 0.01, 0.5, 0.0, 7),
    # dyadic values with Walsh averages exactly on the bounds of an asymmetric ROPE
    (np.array([0.25, 0.0, -0.5, 0.125, 0.125, -0.25, 0.375]), (-0.25, 0.125), 1.0, 0.0, 100),
    (np.array([0.02, 0.05, -0.01, 0.0, 0.03]), 0.01, 0.5, 0.04, 1),
    (np.array([0.02, 0.05, -0.01, 0.0, 0.03]), 0.0, 0.5, 0.0, 33),
    (np.array([0.02, 0.05, -0.01, 0.0, 0.03]), 0.01, 0.0, 0.0, 50),
])
def test_bayesian_signed_rank_equals_loop(d, rope, strength, location, chunk_size):
    n_samples = 300
    result = bayesian_signed_rank_test(d, rope, prior_strength=strength,
                                       prior_location=location, n_samples=n_samples, seed=7,
                                       chunk_size=chunk_size)
    expected = loop_signed_rank(d, rope, strength, location, n_samples, seed=7)
    assert np.max(np.abs(result.samples - expected)) < 1e-12
    assert np.allclose(result.mean_masses, expected.mean(axis=0), atol=1e-12)
    assert np.array_equal(result.most_probable,
                          most_probable_shares(result.samples))


def test_bayesian_signed_rank_analytic_cases():
    n, s = 8, 0.5
    # every difference far right: only the pair (z0, z0) has a Walsh average in the ROPE,
    # so the rope mass is w0^2, with E[w0^2] = s (s + 1) / ((n + s)(n + s + 1))
    result = bayesian_signed_rank_test(np.full(n, 0.5), 0.01, prior_strength=s,
                                       n_samples=40_000, seed=3)
    w0_squared = result.samples[:, 1]
    expected = s * (s + 1) / ((n + s) * (n + s + 1))
    assert w0_squared.mean() == pytest.approx(expected, abs=5 * w0_squared.std() / 200)
    assert np.all(result.samples[:, 0] == 0.0)
    # all-zero differences: every Walsh average is 0, inside the ROPE
    zero = bayesian_signed_rank_test(np.zeros(5), 0.01, n_samples=500, seed=0)
    assert np.array_equal(zero.samples, np.tile([0.0, 1.0, 0.0], (500, 1)))
    assert np.array_equal(zero.most_probable, [0.0, 1.0, 0.0])


@needs_baycomp
def test_bayesian_signed_rank_agrees_with_baycomp():
    rng = np.random.default_rng(13)
    second = rng.uniform(0.7, 0.9, 12)
    first = second + rng.normal(0.006, 0.012, 12)
    d = first - second
    n_samples = 20_000
    ours = bayesian_signed_rank_test(d, 0.01, prior_strength=0.5, n_samples=n_samples, seed=0)
    # baycomp's differences are y - x: x = second, y = first gives the same regions
    posterior = BaycompSignedRank(second, first, 0.01, prior=0.5, nsamples=n_samples,
                                  random_state=0)
    theirs = posterior.sample
    se_mass = np.sqrt(ours.samples.var(axis=0) / n_samples + theirs.var(axis=0) / n_samples)
    assert np.all(np.abs(ours.mean_masses - theirs.mean(axis=0)) < 5 * se_mass + 1e-9)
    probs = np.array(posterior.probs())
    se_share = np.sqrt(probs * (1 - probs) * 2 / n_samples)
    assert np.all(np.abs(ours.most_probable - probs) < 5 * se_share + 2e-3)
    # the most probable region is not a foregone conclusion here
    assert 0.05 < probs[1] < 0.95


def test_bayesian_signed_rank_reproducible_and_order_free():
    d = np.random.default_rng(5).normal(0.003, 0.02, 15)
    a = bayesian_signed_rank_test(d, 0.01, n_samples=2000, seed=123)
    b = bayesian_signed_rank_test(d, 0.01, n_samples=2000, seed=123, chunk_size=17)
    c = bayesian_signed_rank_test(d[::-1], 0.01, n_samples=2000, seed=123)
    other = bayesian_signed_rank_test(d, 0.01, n_samples=2000, seed=124)
    assert np.array_equal(a.samples, b.samples)
    assert np.array_equal(a.samples, c.samples)
    assert not np.array_equal(a.samples, other.samples)
    sign = bayesian_sign_test(d, 0.01, n_samples=2000, seed=np.random.default_rng(9))
    assert np.array_equal(sign.samples,
                          bayesian_sign_test(d, 0.01, n_samples=2000, seed=9).samples)


def test_bayesian_samples_are_read_only():
    result = bayesian_signed_rank_test([0.1, -0.02, 0.03], 0.01, n_samples=10, seed=0)
    with pytest.raises(ValueError):
        result.samples[0, 0] = 1.0


# --------------------------------------------------------------------------- bad input

ALL_TESTS = [wilcoxon_test, sign_test, paired_ttest, bayesian_sign_test,
             bayesian_signed_rank_test]


@pytest.mark.parametrize("test", ALL_TESTS)
@pytest.mark.parametrize("bad, message", [
    ([0.1, np.nan, 0.2], "NaN or infinite"),
    ([0.1, np.inf, 0.2], "NaN or infinite"),
    ([0.1], "at least 2 datasets"),
    ([], "at least 2 datasets"),
    ([[0.1, 0.2], [0.3, 0.4]], "1-D"),
    (["a", "b"], "numbers"),
])
def test_bad_differences_raise(test, bad, message):
    with pytest.raises(ValueError, match=message):
        test(bad)


@pytest.mark.parametrize("call, message", [
    (lambda d: wilcoxon_test(d, method="fast"), "method"),
    (lambda d: wilcoxon_test(d, zero_method="drop"), "zero_method"),
    (lambda d: sign_test(d, zeros="half"), "zeros"),
    (lambda d: bayesian_sign_test(d, prior_strength=-1), "prior_strength"),
    (lambda d: bayesian_signed_rank_test(d, prior_location=np.nan), "prior_location"),
    (lambda d: bayesian_signed_rank_test(d, n_samples=0), "n_samples"),
    (lambda d: bayesian_signed_rank_test(d, n_samples=10.5), "n_samples"),
    (lambda d: bayesian_sign_test(d, n_samples="many"), "n_samples"),
    (lambda d: bayesian_signed_rank_test(d, chunk_size=0), "chunk_size"),
    (lambda d: bayesian_signed_rank_test(d, rope=-0.1), "half-width"),
    (lambda d: bayesian_sign_test(d, rope=(0.01, 0.02)), "contain 0"),
])
def test_bad_options_raise(call, message):
    with pytest.raises(ValueError, match=message):
        call(np.array([0.1, -0.05, 0.02]))


def test_counts_and_sizes_are_whole_numbers():
    """One rule for every count of the package (bayescomp.arguments.check_count): a whole
    number (an integral float too, read from a table; never a bool or a string) of at least
    0 for counts, 1 for sizes and targets; the message names the argument and the rule. The
    baselines' counts here; the samplers' ``retries`` and ``ess`` in test_joint_runs."""
    from bayescomp.baselines.one_test_set import mcnemar_test

    d = np.array([0.1, -0.05, 0.02, 0.03])
    for bad in (0, 2.5, True, "many"):
        with pytest.raises(ValueError, match="n_samples must be a positive integer"):
            bayesian_signed_rank_test(d, n_samples=bad)
    with pytest.raises(ValueError, match="b must be a non-negative integer"):
        mcnemar_test(-1, 3)
    with pytest.raises(ValueError, match="c must be a non-negative integer"):
        mcnemar_test(2, True)
    # an integral float is the integer
    as_int = bayesian_signed_rank_test(d, n_samples=500, seed=1)
    as_float = bayesian_signed_rank_test(d, n_samples=500.0, seed=1)
    np.testing.assert_array_equal(as_int.samples, as_float.samples)
    assert mcnemar_test(2.0, 7.0).p_value == mcnemar_test(2, 7).p_value
    from bayescomp.arguments import check_count

    assert check_count(np.int64(3), "k") == 3 and check_count(4.0, "k", 1) == 4
    assert type(check_count(4.0, "k")) is int
    for bad, least in ((-1, 0), (0, 1), (2.5, 0), (True, 0), ("2", 0), (None, 0),
                       (float("nan"), 0), (float("inf"), 0), (1, 2)):
        with pytest.raises(ValueError, match="k must be (a|an) .*integer"):
            check_count(bad, "k", least)


# --------------------------------------------------------------------------- all five

@pytest.fixture
def scores():
    rng = np.random.default_rng(0)
    nbc = rng.uniform(0.7, 0.9, (10, 1)) + rng.normal(0, 0.01, (10, 10))
    hnb = nbc + rng.normal(0.008, 0.015, (10, 1)) + rng.normal(0, 0.005, (10, 10))
    return from_arrays({"hnb": hnb, "nbc": nbc}, n_folds=10)


def test_baselines_runs_every_test(scores):
    result = baselines(scores, "hnb", "nbc", rope=0.01, n_samples=5000, seed=4)
    d = scores.mean_differences("hnb", "nbc")
    assert isinstance(result, BaselinesResult)
    assert np.array_equal(result.differences, d)
    assert result.wilcoxon == wilcoxon_test(d, first="hnb", second="nbc")
    assert result.sign == sign_test(d, first="hnb", second="nbc")
    assert result.ttest == paired_ttest(d, first="hnb", second="nbc")
    # one generator feeds the sign test, then the signed-rank test
    rng = np.random.default_rng(4)
    sign = bayesian_sign_test(d, 0.01, n_samples=5000, seed=rng)
    signed_rank = bayesian_signed_rank_test(d, 0.01, n_samples=5000, seed=rng)
    assert np.array_equal(result.bayesian_sign.samples, sign.samples)
    assert np.array_equal(result.bayesian_signed_rank.samples, signed_rank.samples)
    assert all(isinstance(t, ClassicalTestResult) for t in result.tests[:3])
    assert all(isinstance(t, BayesianTestResult) for t in result.tests[3:])

    again = baselines(scores, "hnb", "nbc", rope=0.01, n_samples=5000, seed=4)
    assert np.array_equal(again.bayesian_signed_rank.samples,
                          result.bayesian_signed_rank.samples)


def test_baselines_summary_and_frame(scores):
    result = baselines(scores, "hnb", "nbc", n_samples=2000, seed=0)
    text = result.summary()
    for needle in ["Wilcoxon signed-rank test", "Sign test", "Paired t-test",
                   "Bayesian sign test", "Bayesian signed-rank test", "P(hnb better)",
                   "P(nbc better)", "P(equivalent)", "H1: hnb better"]:
        assert needle in text
    frame = result.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 5
    assert list(frame["test"]) == [t.name for t in result.tests]
    bayes = frame.iloc[4]
    assert bayes[["mass_left", "mass_rope", "mass_right"]].to_numpy(float) == pytest.approx(
        result.bayesian_signed_rank.mean_masses)
    assert frame.loc[0, "p_value"] == result.wilcoxon.p_value
    assert np.isnan(frame.loc[0, "mass_rope"]) and np.isnan(frame.loc[3, "p_value"])


def test_baselines_needs_two_datasets(scores):
    with pytest.raises(ValueError, match="at least 2 datasets"):
        baselines(scores.subset(datasets=["0"]), "hnb", "nbc")
    with pytest.raises(ValueError, match="unknown algorithm"):
        baselines(scores, "hnb", "svm")
