"""Known answers for the classical tests (bayescomp.baselines: one_test_set, resampled_ttests,
friedman and multiple_testing).

Reference values are published numbers (McNemar, Cochran's Q and Looney's F examples,
Demšar 2006 Tables 5 and 6) or textbook formulas computed here, independently of the
package, with scipy's distributions.
"""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayescomp.baselines.across_datasets import paired_ttest
from bayescomp.baselines.classical_result import ClassicalTestResult
from bayescomp.baselines.friedman import (
    FriedmanResult, critical_difference, friedman_test, nemenyi_q,
)
from bayescomp.baselines.multiple_testing import adjust_p_values
from bayescomp.presentation.plots import plot_critical_difference
from bayescomp.baselines.one_test_set import (
    cochran_q_test, correctness, looney_f_test, mcnemar_from_correct, mcnemar_table,
    mcnemar_test, two_proportion_test,
)
from bayescomp.baselines.resampled_ttests import (
    combined_ftest_5x2cv, kfold_paired_ttest, paired_ttest_5x2cv, resampled_paired_ttest,
)
from bayescomp.data.readers import from_arrays

# Correctness patterns of three classifiers on 100 test examples (the example of the
# mlxtend user guide for Cochran's Q and the F-test; Raschka 2018, section 4):
# "110": 2 means that on 2 examples classifiers 1 and 2 are right and 3 wrong.
PATTERNS = {"111": 80, "110": 2, "101": 0, "100": 2, "011": 9, "010": 1, "001": 3, "000": 3}


def pattern_matrix(patterns=PATTERNS):
    rows = [[c == "1" for c in key] for key, count in patterns.items() for _ in range(count)]
    return np.array(rows, dtype=bool)


def random_correct(n=200, k=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, k)) < np.linspace(0.7, 0.85, k)


# --------------------------------------------------------------------------- McNemar

def test_mcnemar_11_1_uncorrected():
    result = mcnemar_test(11, 1, correction=False, first="A", second="B")
    assert isinstance(result, ClassicalTestResult)
    assert result.statistic == pytest.approx(100 / 12)
    assert round(result.statistic, 2) == 8.33
    assert round(result.p_value, 4) == 0.0039
    assert result.df == 1 and result.n == 12 and result.significant
    assert result.conclusion == ("At alpha=0.05 the error rates of A and B differ "
                                 "(McNemar chi2 = 8.33, p = 0.0039)")


def test_mcnemar_25_15_uncorrected():
    result = mcnemar_test(25, 15, correction=False)
    assert result.statistic == pytest.approx(2.5)
    assert round(result.p_value, 4) == 0.1138
    assert not result.significant
    assert "do not differ significantly" in result.conclusion


@pytest.mark.parametrize("b, c", [(11, 1), (25, 15), (3, 9), (0, 6), (40, 21)])
def test_mcnemar_corrected_and_exact_by_hand(b, c):
    corrected = mcnemar_test(b, c, correction=True)
    chi2 = (abs(b - c) - 1) ** 2 / (b + c)
    assert corrected.statistic == pytest.approx(chi2)
    assert corrected.p_value == pytest.approx(stats.chi2.sf(chi2, 1))
    assert corrected.df == 1

    exact = mcnemar_test(b, c, exact=True)
    # two-sided binomial p-value of the symmetric Binomial(b + c, 1/2)
    expected = min(1.0, 2 * stats.binom.cdf(min(b, c), b + c, 0.5))
    assert exact.p_value == pytest.approx(expected)
    assert exact.statistic == b and exact.df is None


def test_mcnemar_default_is_continuity_corrected():
    assert mcnemar_test(11, 1).statistic == pytest.approx((10 - 1) ** 2 / 12)


def test_mcnemar_equal_counts_and_no_disagreement():
    assert mcnemar_test(7, 7).statistic == 0.0          # max(|b - c| - 1, 0)^2
    assert mcnemar_test(7, 7).p_value == 1.0
    for exact in (False, True):
        result = mcnemar_test(0, 0, exact=exact)
        assert result.p_value == 1.0 and result.notes and not result.significant


def test_mcnemar_from_correctness_vectors():
    correct = random_correct(k=2, seed=3)
    table = mcnemar_table(correct[:, 0], correct[:, 1])
    assert table.sum() == len(correct)
    assert table[0, 1] == np.sum(correct[:, 0] & ~correct[:, 1])
    assert table[1, 0] == np.sum(~correct[:, 0] & correct[:, 1])
    for options in (dict(correction=False), dict(correction=True), dict(exact=True)):
        from_vectors = mcnemar_from_correct(correct[:, 0], correct[:, 1], **options)
        from_counts = mcnemar_test(int(table[0, 1]), int(table[1, 0]), **options)
        assert from_vectors.statistic == from_counts.statistic
        assert from_vectors.p_value == from_counts.p_value
        assert from_vectors.n == len(correct)


def test_correctness_from_labels():
    y = np.array([0, 1, 1, 0, 2])
    correct = correctness(y, [0, 1, 0, 0, 2], [1, 1, 1, 0, 0])
    assert correct.dtype == bool
    np.testing.assert_array_equal(correct, [[1, 0], [1, 1], [0, 1], [1, 1], [1, 0]])
    with pytest.raises(ValueError, match="shape"):
        correctness(y, [0, 1])


@pytest.mark.parametrize("bad", [-1, 2.5, "3", True])
def test_mcnemar_rejects_bad_counts(bad):
    with pytest.raises(ValueError, match="non-negative integer"):
        mcnemar_test(bad, 4)


def test_alpha_is_checked():
    with pytest.raises(ValueError, match="alpha"):
        mcnemar_test(3, 4, alpha=1.5)


# --------------------------------------------------------------------------- Cochran's Q

def test_cochran_q_known_example():
    result = cochran_q_test(pattern_matrix(), algorithms=["C1", "C2", "C3"])
    assert round(result.statistic, 4) == 7.5294
    assert round(result.p_value, 3) == 0.023
    assert result.df == 2 and result.n == 100
    assert dict(result.details)["accuracies"] == pytest.approx((0.84, 0.92, 0.92))
    assert result.conclusion.startswith("At alpha=0.05 the accuracies of C1, C2 and C3 differ")


def test_cochran_q_by_hand_formula():
    correct = random_correct(n=150, k=4, seed=7).astype(int)
    k = correct.shape[1]
    g, row = correct.sum(axis=0), correct.sum(axis=1)
    q = (k - 1) * (k * np.sum(g ** 2) - g.sum() ** 2) / (k * g.sum() - np.sum(row ** 2))
    result = cochran_q_test(correct)
    assert result.statistic == pytest.approx(q)
    assert result.p_value == pytest.approx(stats.chi2.sf(q, k - 1))
    assert result.algorithms == ("A", "B", "C", "D")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cochran_q_with_two_classifiers_is_mcnemar(seed):
    correct = random_correct(n=120, k=2, seed=seed)
    q = cochran_q_test(correct)
    route_vectors = mcnemar_from_correct(correct[:, 0], correct[:, 1], correction=False)
    table = mcnemar_table(correct[:, 0], correct[:, 1])
    route_counts = mcnemar_test(int(table[0, 1]), int(table[1, 0]), correction=False)
    for mcnemar in (route_vectors, route_counts):
        assert q.statistic == pytest.approx(mcnemar.statistic)
        assert q.p_value == pytest.approx(mcnemar.p_value)
        assert q.df == mcnemar.df == 1


def test_cochran_q_reads_dataframe_names_and_degenerate_data():
    frame = pd.DataFrame(pattern_matrix(), columns=["x", "y", "z"])
    assert cochran_q_test(frame).algorithms == ("x", "y", "z")
    same = np.ones((10, 3), dtype=bool)
    same[:4] = False
    result = cochran_q_test(same)
    assert np.isnan(result.statistic) and result.p_value == 1.0 and result.notes


def test_correctness_matrix_is_validated():
    with pytest.raises(ValueError, match="0/1"):
        cochran_q_test(np.array([[0, 2], [1, 1]]))
    with pytest.raises(ValueError, match="2-D"):
        cochran_q_test(np.array([1, 0, 1]))


# --------------------------------------------------------------------------- Looney's F

def looney_by_hand(correct):
    """Raschka (2018) / mlxtend formulas, with SSAB = SST - SSA - SSB."""
    correct = np.asarray(correct, dtype=int)
    n, k = correct.shape
    acc = correct.mean(axis=0)
    mean = acc.mean()
    ssa = n * np.sum(acc ** 2) - n * k * mean ** 2
    ssb = np.sum(correct.sum(axis=1) ** 2) / k - n * k * mean ** 2
    sst = n * k * mean * (1 - mean)
    ssab = sst - ssa - ssb
    f = (ssa / (k - 1)) / (ssab / ((k - 1) * (n - 1)))
    return f, (k - 1, (k - 1) * (n - 1)), ssa, ssb, ssab


def test_looney_f_published_example():
    # the mlxtend user guide's example on these data: F = 3.873, p = 0.022
    result = looney_f_test(pattern_matrix())
    assert round(result.statistic, 3) == 3.873
    assert round(result.p_value, 3) == 0.022
    assert result.df == (2, 198)


@pytest.mark.parametrize("seed, k", [(0, 3), (1, 4), (2, 2)])
def test_looney_f_by_hand(seed, k):
    correct = random_correct(n=60, k=k, seed=seed)
    f, df, ssa, ssb, ssab = looney_by_hand(correct)
    result = looney_f_test(correct)
    assert result.statistic == pytest.approx(f)
    assert result.df == df
    assert result.p_value == pytest.approx(stats.f.sf(f, *df))
    details = dict(result.details)
    assert details["SSA"] == pytest.approx(ssa)
    assert details["SSB"] == pytest.approx(ssb)
    assert details["SSAB"] == pytest.approx(ssab)


def test_looney_f_without_interaction():
    correct = np.column_stack([np.ones(20, bool), np.zeros(20, bool)])
    result = looney_f_test(correct)
    assert result.statistic == np.inf and result.p_value == 0.0 and result.notes


# --------------------------------------------------------------------------- z-test

def test_two_proportion_z_by_hand():
    acc1, acc2, n = 0.84, 0.92, 100
    p = (acc1 + acc2) / 2
    z = (acc1 - acc2) / math.sqrt(2 * p * (1 - p) / n)
    result = two_proportion_test(acc1, acc2, n)
    assert result.statistic == pytest.approx(z)
    assert result.p_value == pytest.approx(2 * stats.norm.sf(abs(z)))
    assert two_proportion_test(acc1, acc2, n, alternative="less").p_value == \
        pytest.approx(stats.norm.cdf(z))
    assert two_proportion_test(acc1, acc2, n, alternative="greater").p_value == \
        pytest.approx(stats.norm.sf(z))


def test_two_proportion_z_unequal_sizes():
    acc1, acc2, n1, n2 = 0.81, 0.76, 300, 500
    p = (acc1 * n1 + acc2 * n2) / (n1 + n2)
    z = (acc1 - acc2) / math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    assert two_proportion_test(acc1, acc2, n1, n2).statistic == pytest.approx(z)
    with pytest.raises(ValueError, match="fractions"):
        two_proportion_test(84, 92, 100)


# --------------------------------------------------------------------------- t-tests

def test_kfold_paired_ttest_equals_scipy():
    rng = np.random.default_rng(11)
    a, b = rng.normal(0.80, 0.03, 10), rng.normal(0.78, 0.03, 10)
    for alternative in ("two-sided", "greater", "less"):
        result = kfold_paired_ttest(a, b, alternative=alternative)
        expected = stats.ttest_rel(a, b, alternative=alternative)
        assert result.statistic == pytest.approx(expected.statistic)
        assert result.p_value == pytest.approx(expected.pvalue)
        assert result.df == 9
        on_differences = kfold_paired_ttest(a - b, alternative=alternative)
        assert on_differences.p_value == pytest.approx(
            stats.ttest_1samp(a - b, 0.0, alternative=alternative).pvalue)


def test_resampled_paired_ttest_by_hand():
    d = np.random.default_rng(5).normal(0.01, 0.02, 30)
    t = d.mean() * math.sqrt(d.size) / math.sqrt(np.sum((d - d.mean()) ** 2) / (d.size - 1))
    result = resampled_paired_ttest(d)
    assert result.statistic == pytest.approx(t)
    assert result.p_value == pytest.approx(2 * stats.t.sf(abs(t), 29))
    assert result.df == 29 and result.n == 30


def test_split_ttests_validate_input():
    with pytest.raises(ValueError, match="at least 2"):
        kfold_paired_ttest([0.1])
    with pytest.raises(ValueError, match="shapes"):
        kfold_paired_ttest([0.1, 0.2], [0.1, 0.2, 0.3])


# Differences of 5 replications (rows) x 2 folds (columns).
P = np.array([[0.031, 0.012], [-0.004, 0.027], [0.018, 0.009], [0.022, -0.011],
              [0.005, 0.016]])


def five_by_two_by_hand(p):
    s2 = []
    for p1, p2 in p:
        mean = (p1 + p2) / 2
        s2.append((p1 - mean) ** 2 + (p2 - mean) ** 2)
    t = p[0][0] / math.sqrt(sum(s2) / 5)
    f = sum(x ** 2 for row in p for x in row) / (2 * sum(s2))
    return t, f


def test_5x2cv_t_and_f_by_hand():
    t, f = five_by_two_by_hand(P.tolist())
    result_t = paired_ttest_5x2cv(P)
    assert result_t.statistic == pytest.approx(t)
    assert result_t.p_value == pytest.approx(2 * stats.t.sf(abs(t), 5))
    assert result_t.df == 5
    result_f = combined_ftest_5x2cv(P)
    assert result_f.statistic == pytest.approx(f)
    assert result_f.p_value == pytest.approx(stats.f.sf(f, 10, 5))
    assert result_f.df == (10, 5)


def test_5x2cv_from_two_score_arrays():
    first = 0.8 + P / 2
    second = 0.8 - P / 2
    assert paired_ttest_5x2cv(first, second).statistic == pytest.approx(
        paired_ttest_5x2cv(P).statistic)
    assert combined_ftest_5x2cv(first, second).statistic == pytest.approx(
        combined_ftest_5x2cv(P).statistic)
    assert paired_ttest_5x2cv(P, alternative="greater").p_value == pytest.approx(
        stats.t.sf(paired_ttest_5x2cv(P).statistic, 5))


def test_5x2cv_shape_and_degenerate_input():
    with pytest.raises(ValueError, match=r"reshape\(5, 2\)"):
        paired_ttest_5x2cv(P.ravel())
    constant = np.full((5, 2), 0.02)
    assert paired_ttest_5x2cv(constant).statistic == np.inf
    assert paired_ttest_5x2cv(constant).p_value == 0.0
    zero = combined_ftest_5x2cv(np.zeros((5, 2)))
    assert np.isnan(zero.statistic) and zero.p_value == 1.0 and zero.notes


def test_result_summary_and_frame():
    result = combined_ftest_5x2cv(P, first="svm", second="tree")
    frame = result.to_frame()
    assert frame.shape[0] == 1
    assert frame.loc[0, "df1"] == 10 and frame.loc[0, "df2"] == 5
    assert frame.loc[0, "p_value"] == result.p_value
    text = result.summary()
    assert "svm" in text and result.conclusion in text
    assert np.isnan(two_proportion_test(0.8, 0.7, 50).to_frame().loc[0, "df1"])


def test_one_result_type_for_every_frequentist_test():
    # the tests across datasets and the classical ones return the same type: the first
    # report p-values only, the second a conclusion at alpha
    across = paired_ttest(np.array([0.01, 0.02, -0.005, 0.03]), first="svm", second="tree")
    classical = resampled_paired_ttest(np.array([0.01, 0.02, -0.005, 0.03]), first="svm",
                                       second="tree")
    assert type(across) is type(classical) is ClassicalTestResult
    assert across.statistic == classical.statistic and across.p_value == classical.p_value
    assert across.alpha is None and across.significant is None and not across.conclusion
    assert classical.alpha == 0.05 and classical.significant is False
    assert (across.n, across.unit, classical.n, classical.unit) == (4, "datasets", 4, "splits")
    assert across.summary().startswith("Paired t-test: svm - tree on 4 datasets")
    assert classical.summary().splitlines()[0] == "Resampled paired t-test: svm - tree on 4 splits"
    assert classical.conclusion in classical.summary()
    data = classical.to_dict()
    assert data["df"] == 3 and data["conclusion"] == classical.conclusion
    assert data["n"] == 4 and data["unit"] == "splits" and data["significant"] is False
    assert set(across.to_dict()) == {"test", "n_datasets", "n_used", "statistic_name",
                                     "statistic", "p_value", "p_svm_better", "p_tree_better",
                                     "options", "notes"}
    assert cochran_q_test(pattern_matrix()).to_frame().loc[0, "algorithms"] == "A, B, C"


def test_conclusion_numbers():
    # a sentence: the statistic to two decimals, p to four, "p < 0.0001" below
    assert mcnemar_test(300, 2).conclusion.endswith("(McNemar chi2 = 292.08, p < 0.0001)")
    assert mcnemar_test(25, 15, correction=False).conclusion.endswith(
        "(McNemar chi2 = 2.5, p = 0.1138)")


# --------------------------------------------------------------------------- Friedman

DEMSAR_NAMES = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
# Demšar (2006), Table 6: AUC of four variants of C4.5 on 14 datasets
DEMSAR_AUC = np.array([
    [0.763, 0.768, 0.771, 0.798], [0.599, 0.591, 0.590, 0.569], [0.954, 0.971, 0.968, 0.967],
    [0.628, 0.661, 0.654, 0.657], [0.882, 0.888, 0.886, 0.898], [0.936, 0.931, 0.916, 0.931],
    [0.661, 0.668, 0.609, 0.685], [0.583, 0.583, 0.563, 0.625], [0.775, 0.838, 0.866, 0.875],
    [1.000, 1.000, 1.000, 1.000], [0.940, 0.962, 0.965, 0.962], [0.619, 0.666, 0.614, 0.669],
    [0.972, 0.981, 0.975, 0.975], [0.957, 0.978, 0.946, 0.970],
])


def test_friedman_statistic_equals_scipy():
    values = np.random.default_rng(2).normal(size=(12, 5)) + np.arange(5) * 0.3
    result = friedman_test(values)
    expected = stats.friedmanchisquare(*values.T)
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.p_value == pytest.approx(expected.pvalue)
    assert result.df == 4
    n, k = values.shape
    chi2 = result.statistic
    assert result.iman_davenport == pytest.approx((n - 1) * chi2 / (n * (k - 1) - chi2))
    assert result.iman_davenport_p == pytest.approx(
        stats.f.sf(result.iman_davenport, k - 1, (k - 1) * (n - 1)))


def test_friedman_on_scores_uses_mean_per_dataset():
    rng = np.random.default_rng(4)
    folds = {a: [rng.normal(0.8 + 0.01 * j, 0.02, size) for size in (10, 10, 6, 8)]
             for j, a in enumerate(["a", "b", "c"])}
    scores = from_arrays(folds, n_folds=10)
    means = np.array([[np.mean(folds[a][i]) for a in "abc"] for i in range(4)])
    result = friedman_test(scores)
    assert result.algorithms == ("a", "b", "c")
    assert result.dataset_names == ("0", "1", "2", "3")
    np.testing.assert_allclose(result.mean_scores, means)
    assert result.statistic == pytest.approx(stats.friedmanchisquare(*means.T).statistic)


def test_average_ranks_tiny_example():
    values = [[0.9, 0.8, 0.7],     # ranks 1, 2, 3
              [0.6, 0.6, 0.8],     # ranks 2.5, 2.5, 1
              [0.5, 0.7, 0.6]]     # ranks 3, 1, 2
    result = friedman_test(values, algorithms=["x", "y", "z"])
    np.testing.assert_allclose(result.ranks, [[1, 2, 3], [2.5, 2.5, 1], [3, 1, 2]])
    np.testing.assert_allclose(result.average_ranks, [6.5 / 3, 5.5 / 3, 2])
    errors = friedman_test(values, higher_is_better=False)
    np.testing.assert_allclose(errors.average_ranks, 4 - result.average_ranks)


def test_demsar_example_ranks_and_critical_difference():
    result = friedman_test(DEMSAR_AUC, algorithms=DEMSAR_NAMES)
    # as printed (three decimals), "voting" ties C4.5+cf and C4.5+m+cf
    np.testing.assert_allclose(result.average_ranks, [44 / 14, 2.0, 41 / 14, 27 / 14])
    assert result.critical_difference == pytest.approx(2.569 * math.sqrt(4 * 5 / (6 * 14)),
                                                       abs=5e-4)
    assert round(result.critical_difference, 2) == 1.25
    # no pair differs by the CD at 0.05: one group of all four
    assert not result.pairwise["nemenyi_significant"].any()
    assert len(result.groups) == 1 and set(result.groups[0]) == set(DEMSAR_NAMES)

    # Demšar's ranks 3.143, 2.000, 2.893, 1.964 come from unrounded AUCs, in which
    # C4.5+cf is ahead of C4.5+m+cf on "voting"
    auc = DEMSAR_AUC.copy()
    auc[12, 2] = 0.97501
    paper = friedman_test(auc, algorithms=DEMSAR_NAMES, alpha=0.10)
    np.testing.assert_allclose(paper.average_ranks, [3.143, 2.000, 2.893, 1.964], atol=5e-4)
    # Friedman's chi2 without the tie correction (Demšar's formula) is 9.28
    n, k, r = 14, 4, paper.average_ranks
    chi2_f = 12 * n / (k * (k + 1)) * (np.sum(r ** 2) - k * (k + 1) ** 2 / 4)
    assert round(chi2_f, 2) == 9.28
    # at alpha = 0.10 (CD = 1.12) C4.5 is worse than C4.5+m and than C4.5+m+cf
    assert round(paper.critical_difference, 2) == 1.12
    significant = {frozenset((a, b)) for a, b, s in paper.pairwise[
        ["first", "second", "nemenyi_significant"]].itertuples(index=False) if s}
    assert significant == {frozenset(("C4.5", "C4.5+m")), frozenset(("C4.5", "C4.5+m+cf"))}


@pytest.mark.parametrize("alpha, table", [
    (0.05, [1.960, 2.343, 2.569, 2.728, 2.850]),
    (0.10, [1.645, 2.052, 2.291, 2.459, 2.589]),
])
def test_nemenyi_q_matches_demsar_table_5(alpha, table):
    # Table 5 divides 3-decimal studentized range values by sqrt(2), so its last digit
    # can differ by one from the rounded exact quantile (k = 3: 2.3437 against 2.343)
    for k, expected in zip(range(2, 7), table):
        assert abs(nemenyi_q(k, alpha) - expected) < 1e-3
    assert nemenyi_q(2, alpha) == pytest.approx(stats.norm.ppf(1 - alpha / 2))


def test_critical_difference_k4_n14():
    assert critical_difference(4, 14) == pytest.approx(2.569 * math.sqrt(20 / 84), abs=5e-4)
    assert critical_difference(4, 14) == pytest.approx(1.2535, abs=2e-4)


def test_pairwise_wilcoxon_with_holm():
    values = np.random.default_rng(8).normal(size=(15, 4)) + [0, 0.2, 0.5, 0.9]
    result = friedman_test(values, alpha=0.05)
    assert len(result.pairwise) == 6
    for row in result.pairwise.itertuples():
        i, j = result.algorithms.index(row.first), result.algorithms.index(row.second)
        expected = stats.wilcoxon(values[:, i] - values[:, j])
        assert row.wilcoxon_p == pytest.approx(expected.pvalue)
        assert row.wilcoxon_W == pytest.approx(expected.statistic)
    np.testing.assert_allclose(result.pairwise["holm_p"],
                               adjust_p_values(result.pairwise["wilcoxon_p"], "holm"))
    np.testing.assert_array_equal(result.pairwise["holm_significant"],
                                  result.pairwise["holm_p"] < 0.05)
    # the Nemenyi p-value and the CD agree
    np.testing.assert_array_equal(result.pairwise["nemenyi_p"] < 0.05,
                                  result.pairwise["rank_difference"].abs()
                                  > result.critical_difference)


def test_nemenyi_groups_by_hand():
    # average ranks 1, 2, 3 on N datasets with k = 3; CD(3, 30) = 2.343 * sqrt(12/180) = 0.605
    values = np.tile([3.0, 2.0, 1.0], (30, 1))
    values[:10] = [2.0, 3.0, 1.0]          # ranks of the first two swapped on 10 datasets
    result = friedman_test(values, algorithms=["a", "b", "c"])
    np.testing.assert_allclose(result.average_ranks, [4 / 3, 5 / 3, 3])
    assert result.groups == (("a", "b"),)
    summary = result.summary()
    assert "{a, b}" in summary and result.conclusion in summary
    frame = result.to_frame()
    assert list(frame["algorithm"]) == ["a", "b", "c"]


def test_friedman_degenerate_and_invalid_input():
    result = friedman_test(np.ones((5, 3)))
    assert np.isnan(result.statistic) and result.p_value == 1.0 and result.notes
    with pytest.raises(ValueError, match="at least 3 algorithms"):
        friedman_test(np.ones((5, 2)))
    with pytest.raises(ValueError, match="at least 2 datasets"):
        friedman_test(np.ones((1, 3)))


def test_friedman_does_not_freeze_the_callers_array():
    values = np.random.default_rng(0).normal(size=(6, 3))
    friedman_test(values)
    values[0, 0] = 1.0  # still writable


# --------------------------------------------------------------------------- CD diagram

@pytest.fixture
def agg():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    yield plt
    plt.close("all")


def test_cd_diagram_renders(agg):
    result = friedman_test(DEMSAR_AUC, algorithms=DEMSAR_NAMES, alpha=0.10)
    ax = plot_critical_difference(result)
    ax.figure.canvas.draw()
    labels = [t.get_text() for t in ax.texts if t.get_gid() == "algorithm"]
    assert sorted(labels) == sorted(DEMSAR_NAMES)
    texts = [t.get_text() for t in ax.texts]
    assert all(texts.count(name) == 1 for name in DEMSAR_NAMES)
    bars = [line for line in ax.lines if line.get_gid() == "cd_bar"]
    assert len(bars) == 1
    x = bars[0].get_xdata()
    assert max(x) - min(x) == pytest.approx(result.critical_difference)
    groups = [line for line in ax.lines if line.get_gid() == "group"]
    assert len(groups) == len(result.groups) == 2


def test_cd_diagram_on_given_axes(agg):
    values = np.random.default_rng(3).normal(size=(20, 7)) + np.arange(7) * 0.3
    result = friedman_test(values, algorithms=[f"algorithm {j}" for j in range(7)])
    _, ax = agg.subplots()
    assert plot_critical_difference(result, ax=ax) is ax
    assert len([t for t in ax.texts if t.get_gid() == "algorithm"]) == 7
    assert len([line for line in ax.lines if line.get_gid() == "cd_bar"]) == 1


def test_friedman_result_type():
    assert isinstance(friedman_test(np.eye(3) + 0.1), FriedmanResult)
