# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Comparing the candidates of a grid search on one dataset
#
# A grid search reports a ranking of the candidates by their mean cross-validation score, and
# `best_params_` names the winner. This notebook asks the question a ranking cannot answer:
# **is the winner really better than the runner-up, and by how much?**
#
# It follows scikit-learn's example *Statistical comparison of models using grid search*
# (`plot_grid_search_stats`): a support vector classifier with four kernels on a noisy
# two-moons problem, scored by ROC AUC over 10 repetitions of stratified 10-fold
# cross-validation. Instead of writing the corrected t-test and its Bayesian counterpart by
# hand, as the scikit-learn example does, we read the grid search into `bayescomp` and use
#
# * the **Nadeau-Bengio corrected t-test** (frequentist), and
# * the **Bayesian correlated t-test** of Corani & Benavoli (2015), which gives the
#   probabilities that the difference is negative, practically zero, or positive.
#
# Everything runs in a few seconds.

# %%
import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from scipy import stats
from sklearn.datasets import make_moons
from sklearn.model_selection import GridSearchCV, RepeatedStratifiedKFold
from sklearn.svm import SVC

import bayescomp as bc
import bayescomp.presentation.plots as bplots
from bayescomp.models.compare import compare_all

pd.set_option("display.float_format", "{:.4g}".format)
pd.set_option("display.width", 120)
print("bayescomp", bc.__version__)

# %% [markdown]
# ## The data and the grid search
#
# 100 points of two interleaved half-moons with noise 0.352 (scikit-learn's example, exactly):
# the ideal boundary is curved, so a linear kernel should struggle a little, but with 100 noisy
# points it is not obvious how much a flexible kernel can gain.

# %%
X, y = make_moons(noise=0.352, random_state=1, n_samples=100)

fig, ax = plt.subplots(figsize=(4.5, 3.5), layout="constrained")
ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=25, edgecolor="k")
ax.set_title("make_moons(n_samples=100, noise=0.352)")
plt.show()

# %% [markdown]
# Four candidates: a linear kernel, polynomial kernels of degree 2 and 3, and an RBF kernel.
# Every candidate is evaluated on the **same** 100 train/test splits
# (`RepeatedStratifiedKFold(n_splits=10, n_repeats=10)`): the scores are *paired* split by
# split, which is what makes a paired comparison possible.

# %%
param_grid = [
    {"kernel": ["linear"]},
    {"kernel": ["poly"], "degree": [2, 3]},
    {"kernel": ["rbf"]},
]
cv = RepeatedStratifiedKFold(n_splits=10, n_repeats=10, random_state=0)
search = GridSearchCV(SVC(random_state=0), param_grid=param_grid, scoring="roc_auc", cv=cv)
search.fit(X, y)

results = pd.DataFrame(search.cv_results_)
results["candidate"] = [p["kernel"] + str(p.get("degree", "")) for p in results["params"]]
results[["candidate", "rank_test_score", "mean_test_score", "std_test_score"]].sort_values(
    "rank_test_score")

# %% [markdown]
# The RBF kernel wins with a mean AUC about one point above the linear kernel. The standard
# deviations over the splits are around 0.08, eight times the gap: looked at one model at a
# time, the two are indistinguishable. But the split-to-split variation is largely shared by
# all candidates (a test fold with hard points is hard for every kernel), so the right object
# is the **paired difference** on each split.
#
# ## From the grid search to `bayescomp`
#
# `bc.from_cv_results` reads the `split<i>_test_score` columns of `cv_results_`: each candidate
# becomes an "algorithm" with 100 paired scores. It also reads the splitter to find the
# correlation `rho` between splits (below). We give the candidates short names.

# %%
names = [p["kernel"] + str(p.get("degree", "")) for p in search.cv_results_["params"]]
scores = bc.from_cv_results(search, names=names, dataset="moons")
print(scores.summary())

# %% [markdown]
# Two different correlations matter here, and they pull in opposite directions:
#
# 1. **Between candidates on the same split.** The scores of the four kernels rise and fall
#    together from split to split (table below). A paired analysis of the differences removes
#    this shared variation: it is why a paired test is far more sensitive than comparing two
#    means with their standard deviations.
# 2. **Between the differences of different splits.** Two training sets of 10-fold
#    cross-validation share 8/9 of their points, and the repetitions reuse the same 100 points
#    over and over; the 100 differences are therefore *not* 100 independent observations.
#    Nadeau & Bengio (2003) model this by a correlation
#    $\rho = n_{test} / (n_{train} + n_{test})$ between any two differences: $\rho = 1/10$
#    for 10-fold cross-validation. `bayescomp` read it from the splitter:
#    `scores.rho` is 0.1.

# %%
per_split = pd.DataFrame(scores.dataset("moons").values.T, columns=scores.algorithms)
print("rho read from the splitter:", scores.rho)
per_split.corr().round(2)

# %% [markdown]
# ## Best against second best
#
# We compare the best candidate (first) with the runner-up (second). Differences are always
# `first - second`, so positive values favour the best candidate.

# %%
order = np.argsort(search.cv_results_["rank_test_score"], kind="stable")
best, second = names[order[0]], names[order[1]]
differences = scores.differences(best, second)[0]
print(f"best = {best}, second = {second}")
print(f"mean difference {differences.mean():.4f}, sd {differences.std(ddof=1):.4f}, "
      f"{(differences > 0).sum()} wins, {(differences < 0).sum()} losses, "
      f"{(differences == 0).sum()} ties over {differences.size} splits")

# %% [markdown]
# Half of the splits are ties: with 10 test points (5 per class) the AUC of a fold takes few
# values, and on easy folds both kernels rank every pair correctly. Where they differ, RBF wins
# more often than it loses.

# %% [markdown]
# ### The frequentist view: naive versus corrected t-test
#
# A naive paired t-test treats the 100 differences as independent. The Nadeau-Bengio corrected
# t-test replaces the variance of the mean, $s^2/n$, by
# $$\left(\frac{1}{n} + \frac{\rho}{1-\rho}\right) s^2 ,$$
# which here is $1/100 + 1/9 \approx 0.121$ instead of $0.01$: the variance is about 12 times
# larger, the standard error 3.5 times larger, the t statistic 3.5 times smaller.
# `bc.correlated_ttest` reports this corrected test beside its Bayesian result
# (`nb_statistic`, `nb_p_value`, and the one-sided `nb_p_greater`).

# %%
with_rope0 = bc.correlated_ttest(scores, best, second, rope=0)
naive = stats.ttest_rel(per_split[best], per_split[second], alternative="greater")

n, rho = differences.size, scores.rho[0]
print(f"variance inflation of the correction: (1/n + rho/(1-rho)) / (1/n) = "
      f"{(1 / n + rho / (1 - rho)) * n:.2f}")
pd.DataFrame({
    "t": [naive.statistic, with_rope0.nb_statistic],
    "one-sided p (H1: best is better)": [naive.pvalue, with_rope0.nb_p_greater],
}, index=["naive paired t-test", "Nadeau-Bengio corrected t-test"])

# %% [markdown]
# The naive test finds the RBF kernel "significantly" better (p about 0.005); the corrected
# test does not (p about 0.23, the value scikit-learn's example prints). The naive test is
# **overconfident**: its variance of the mean shrinks like $1/n$, as if more repetitions of
# cross-validation on the same 100 points brought new information. They do not; only new data
# would. The correction keeps a floor $\frac{\rho}{1-\rho} s^2$ that no number of repetitions
# removes. The table below redoes both tests on the first 1, 2, ..., 10 repetitions: the naive
# p-value sinks as repetitions are added (from 0.6 to 0.005), the corrected one stays between
# 0.2 and 0.6.

# %%
rows = []
for repeats in (1, 2, 3, 5, 7, 10):
    k = 10 * repeats
    part = bc.from_arrays({best: per_split[best][:k], second: per_split[second][:k]},
                          rho=0.1, datasets=["moons"])
    test = bc.correlated_ttest(part, best, second)
    rows.append({"repetitions": repeats, "n splits": k,
                 "naive p": stats.ttest_rel(per_split[best][:k], per_split[second][:k],
                                            alternative="greater").pvalue,
                 "corrected p": test.nb_p_greater})
pd.DataFrame(rows).set_index("repetitions")

# %% [markdown]
# ### The Bayesian correlated t-test
#
# The Bayesian correlated t-test uses the same model of the differences (normal, with
# correlation $\rho$ between splits) and gives a posterior for their mean $\mu$: a Student-t
# with $n-1$ degrees of freedom centred on the mean difference, with the corrected scale.
# Without a ROPE, the posterior probability that the best candidate is better is exactly one
# minus the corrected one-sided p-value:

# %%
p_left, p_rope, p_right = with_rope0.probabilities
print(f"P({best} better) = {p_right:.4f};  1 - corrected one-sided p = "
      f"{1 - with_rope0.nb_p_greater:.4f}")

# %% [markdown]
# A probability of 0.77 is a statement the p-value cannot make: given the data, the RBF kernel
# is better than the linear one with probability about 3/4. That is not enough to be sure.
#
# ### The region of practical equivalence (ROPE)
#
# A "better" AUC by 0.0001 is of no practical interest. The ROPE is the interval of differences
# we consider **practically equivalent**, in the units of the scores: here
# $[-0.01, 0.01]$, one AUC point. The posterior is then split in three regions:
#
# * **left**: the second candidate is better by more than the ROPE,
# * **rope**: the two are practically equivalent,
# * **right**: the best candidate is better by more than the ROPE.

# %%
ROPE = 0.01
result = bc.correlated_ttest(scores, best, second, rope=ROPE)
print("95% credible interval of the mean difference:", np.round(result.interval(), 4))
result  # rendered as a table in the notebook; result.summary() gives the same as text

# %% [markdown]
# How to read these numbers:
#
# * **P(rbf better)** is 0.50: half the posterior lies above +0.01. That is no coincidence
#   of rounding: the AUC of a fold of 10 points is a multiple of 1/25, the mean difference
#   turned out to be 0.0100 (up to floating-point error), so the posterior is centred on the
#   ROPE's upper bound.
# * **P(equivalent)** is 0.43 and **P(linear better)** only 0.07: the probability that the
#   RBF kernel is *practically no worse* than the linear one is
#   $0.43 + 0.50 \approx 0.93$.
# * No region reaches 0.95, so `result.decision()` says `undecided`: 100 noisy points cannot
#   tell whether RBF's gain is real and larger than one point. That is the honest answer; the
#   ranking of the grid search hid it.
# * The 95% credible interval runs from about -0.016 to +0.036: a loss of 1.6 AUC points
#   and a gain of 3.6 are both compatible with the data.
#
# The posterior plot shows the three regions:

# %%
bplots.plot_posterior(result)
plt.show()

# %% [markdown]
# ### How much does the answer depend on the ROPE?
#
# The ROPE is a modelling choice and should be stated before looking at the data; but it is
# worth seeing how the answer moves with it. With a ROPE of 0 we are back to
# "better or worse"; with a wide one almost everything becomes "equivalent".

# %%
rows = []
for width in (0.0, 0.005, 0.01, 0.02, 0.05):
    test = bc.correlated_ttest(scores, best, second, rope=width)
    rows.append({"ROPE half-width": width, **dict(zip(test.labels, test.probabilities)),
                 "decision at 0.95": test.decision()})
pd.DataFrame(rows).set_index("ROPE half-width")

# %% [markdown]
# ## Every candidate against the best
#
# The same test, the best candidate against each of the others:

# %%
against_best = pd.concat(
    [bc.correlated_ttest(scores, best, other, rope=ROPE).to_frame()
     for other in scores.algorithms if other != best], ignore_index=True)
against_best[["first", "second", "mean", "hdi_2.5%", "hdi_97.5%", "p_left", "p_rope",
              "p_right", "nb_p_value", "decision"]]

# %% [markdown]
# The RBF kernel is certainly better than the degree-2 polynomial (P(rbf better) near 1), and
# probably (about 0.88) better than the degree-3 polynomial by more than a point; against the
# linear kernel it is undecided.
#
# ### All pairs
#
# `compare_all` runs the correlated t-test on every pair (the hierarchical model would be used
# if there were several datasets). Beside the Bayesian probabilities it reports the corrected
# t-test's p-values with Holm's correction for the six comparisons. The heatmap shows, for each
# row and column, P(row candidate better than column candidate by more than the ROPE).

# %%
pairs = compare_all(scores, rope=ROPE, method="correlated", seed=0)
print(pairs.summary())
bplots.plot_probability_heatmap(pairs.probability_matrix())
plt.show()

# %% [markdown]
# Two remarks on many comparisons.
#
# * The posterior probabilities of each pair are what they are: there is no "Bayesian
#   correction" for the number of pairs. What inflates is the chance that *some* pair shows an
#   extreme value by luck; the frequentist answer is the Holm-corrected p-value column.
# * The "best" candidate was chosen by looking at these very scores. Its advantage over the
#   runner-up is therefore biased upwards (the winner's curse): an honest estimate of the
#   chosen model's performance needs nested cross-validation or a held-out set.
#
# ## Take-home
#
# * The grid search's ranking says RBF is first; the Bayesian correlated t-test says that,
#   with this little data, RBF is better than the linear kernel with probability 0.77, better
#   by more than one AUC point with probability 0.50, and practically no worse with probability
#   0.93.
# * Cross-validation scores of different splits are correlated; ignoring it (naive t-test)
#   makes any difference "significant" given enough repetitions. `rho = 1/k` fixes it, and
#   `bc.from_cv_results` reads it from the splitter.
#
# The last line is a machine-readable summary (the test suite checks it against the library).

# %%
import json

print("RESULT " + json.dumps({
    "first": result.first, "second": result.second, "rope": ROPE,
    "p_left": float(result.probabilities[0]), "p_rope": float(result.probabilities[1]),
    "p_right": float(result.probabilities[2]), "nb_p_value": float(result.nb_p_value)}))
