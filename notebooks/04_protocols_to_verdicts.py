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
# # From protocols to verdicts: scikit-learn estimators, Bayesian and classical tests
#
# Notebooks 01 to 03 start from scores that were already computed. This one starts from the raw
# material, three scikit-learn estimators and ten small datasets, and follows it through
#
# 1. a **protocol** that produces paired scores (`bayescomp.data.protocols`): repeated stratified
#    10-fold cross-validation, five replications of 2-fold cross-validation (5x2cv), or a
#    single held-out test set;
# 2. the **verdicts**, Bayesian and classical, on one dataset and across datasets:
#
# | question | protocol | Bayesian | classical |
# |---|---|---|---|
# | two algorithms, one dataset | 3 x 10-fold CV | correlated t-test | Nadeau-Bengio corrected t-test (and the naive t-test it corrects) |
# | two algorithms, one dataset | 5x2cv | | Dietterich's 5x2cv t-test, Alpaydin's 5x2cv F-test |
# | two or more algorithms, one dataset | one train/test split | | McNemar's test, Cochran's Q |
# | two algorithms, many datasets | 3 x 10-fold CV | hierarchical model | Wilcoxon signed-rank test |
# | all algorithms, many datasets | 3 x 10-fold CV | `compare_all` (hierarchical model per pair) | Friedman test, Nemenyi, Holm-corrected Wilcoxon |
#
# and asks where the verdicts agree, where they disagree, and why. The whole notebook runs in
# well under a minute: the estimators are fast and the datasets small; the hierarchical model
# is sampled by Stan (the compiled model is cached).

# %%
import json
import warnings

import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from sklearn.base import clone
from sklearn.datasets import (load_breast_cancer, load_iris, load_wine, make_circles,
                              make_classification, make_gaussian_quantiles, make_moons)
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold, train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

import bayescomp as bc
import bayescomp.presentation.plots as bplots
from bayescomp import protocols
from bayescomp.baselines import one_test_set, resampled_ttests
from bayescomp.models.compare import compare_all
from bayescomp.baselines.friedman import friedman_test
from bayescomp.presentation.plots import plot_critical_difference

pd.set_option("display.float_format", "{:.4g}".format)
pd.set_option("display.width", 160)
# pystan's progress bar looks for ipywidgets, which this notebook does not need
warnings.filterwarnings("ignore", message="IProgress not found")

FIRST, SECOND = "logistic", "tree"  # the pair followed in detail: differences logistic - tree
FOCUS = "wine"                      # the dataset of the one-dataset tests
ROPE = 0.01                         # one accuracy point
ALPHA = 0.05                        # significance level of the classical tests
SEED = 2024                         # the hierarchical model is sampled by MCMC

# %% [markdown]
# ## The raw material: ten datasets and three estimators
#
# Three real datasets that ship with scikit-learn and seven generated ones, all small (150 to
# 569 examples), so that every fit takes milliseconds:
#
# * `breast_cancer`, `wine`, `iris`: classic benchmarks, nearly linearly separable;
# * `moons`: two noisy half-moons, a curved boundary;
# * `circles` and `quantiles`: one class inside the other, a boundary no straight line can draw;
# * four `make_classification` problems: informative features, label noise (`flip_y=0.2`),
#   many redundant (correlated) features, and three classes.

# %%
DATASETS = {
    "breast_cancer": load_breast_cancer(return_X_y=True),
    "wine": load_wine(return_X_y=True),
    "iris": load_iris(return_X_y=True),
    "moons": make_moons(n_samples=300, noise=0.3, random_state=0),
    "circles": make_circles(n_samples=300, noise=0.1, factor=0.5, random_state=0),
    "quantiles": make_gaussian_quantiles(n_samples=300, n_features=2, n_classes=2,
                                         random_state=0),
    "clf_informative": make_classification(n_samples=300, n_features=20, n_informative=5,
                                           n_redundant=2, random_state=0),
    "clf_noisy": make_classification(n_samples=300, n_features=10, n_informative=3,
                                     flip_y=0.2, class_sep=0.8, random_state=1),
    "clf_redundant": make_classification(n_samples=300, n_features=15, n_informative=3,
                                         n_redundant=10, random_state=2),
    "clf_3class": make_classification(n_samples=300, n_features=10, n_informative=4,
                                      n_classes=3, random_state=3),
}
pd.DataFrame([{"dataset": name, "examples": X.shape[0], "features": X.shape[1],
               "classes": len(np.unique(y))} for name, (X, y) in DATASETS.items()]
             ).set_index("dataset")

# %% [markdown]
# Three estimators with different biases: Gaussian naive Bayes (axis-aligned Gaussian classes),
# a logistic regression after standardisation (a linear boundary), and a decision tree of depth
# 3 (axis-parallel cuts). Every estimator that draws random numbers gets an integer
# `random_state`, so every number below is reproducible.

# %%
ESTIMATORS = {
    "naive_bayes": GaussianNB(),
    "logistic": make_pipeline(StandardScaler(), LogisticRegression()),
    "tree": DecisionTreeClassifier(max_depth=3, random_state=0),
}

# %% [markdown]
# ## Protocol 1: repeated stratified 10-fold cross-validation
#
# `protocols.cross_validate_scores` generates the splits of each dataset **once** and fits every
# estimator (a fresh clone per split) on exactly the same training parts and scores it on the
# same test parts: the scores are **paired** split by split, which every test below needs. Three
# repetitions of stratified 10-fold cross-validation give 30 paired accuracies per estimator and
# dataset, 900 fits in all. The function also records the correlation of the splits,
# $\rho = n_{test} / (n_{train} + n_{test}) = 1/10$ (Nadeau & Bengio 2003), which the
# correlated t-test and the hierarchical model need.

# %%
cv = RepeatedStratifiedKFold(n_splits=10, n_repeats=3, random_state=0)
scores = protocols.cross_validate_scores(ESTIMATORS, DATASETS, cv=cv, scoring="accuracy")
print(scores.summary())

# %% [markdown]
# The mean accuracies already tell a story. On most datasets the three estimators are within a
# few points of each other, with a different winner here and there; on `circles` and
# `quantiles` the logistic regression is at chance level (about 0.43 and 0.52) because no
# straight line separates a disc from a ring, while naive Bayes, whose class-conditional
# Gaussians can have different variances, is near perfect.
#
# ## Bayesian verdict on each dataset: the correlated t-test
#
# We follow the pair `logistic - tree` (positive differences favour the logistic regression).
# The boxes show the 30 per-split differences of each dataset, the grey band the ROPE of one
# accuracy point.

# %%
bplots.plot_differences(scores, FIRST, SECOND, rope=ROPE, sort=True)
plt.show()

ttests = bc.correlated_ttests(scores, FIRST, SECOND, rope=ROPE)
per_dataset = pd.concat([t.to_frame() for t in ttests], ignore_index=True).set_index("dataset")
per_dataset[["mean", "hdi_2.5%", "hdi_97.5%", "p_left", "p_rope", "p_right", "decision"]]

# %% [markdown]
# `p_left` is P(tree better by more than a point), `p_rope` P(practically equivalent),
# `p_right` P(logistic better by more than a point). At the 0.95 threshold the logistic
# regression wins on `breast_cancer` and `wine`, the tree on `circles`, `quantiles` and
# `clf_3class`; the other five datasets are undecided. Undecided is not "equivalent": on
# `moons` the tree is better with probability 0.90, on `clf_redundant` the logistic regression
# with probability 0.86. No dataset has enough evidence for practical equivalence: 30 folds of
# 15 to 57 test examples measure an accuracy to a few points, not to one.
#
# ### The correlation correction
#
# The 30 differences are not independent: the training sets of two splits share most of their
# examples. The naive paired t-test ignores this; the Nadeau-Bengio correction, which the
# correlated t-test builds in, inflates the variance of the mean from $s^2/n$ to
# $(1/n + \rho/(1-\rho))\, s^2$, here by a factor $1 + 30/9 \approx 4.3$: the t statistic
# shrinks by $\sqrt{4.3} \approx 2.1$.

# %%
naive = [resampled_ttests.resampled_paired_ttest(d, first=FIRST, second=SECOND)
         for d in scores.differences(FIRST, SECOND)]
correction = pd.DataFrame({
    "mean difference": per_dataset["mean"],
    "naive t": [r.statistic for r in naive], "naive p": [r.p_value for r in naive],
    "corrected t": per_dataset["nb_t"], "corrected p": per_dataset["nb_p_value"],
    "P(logistic better)": per_dataset["p_right"], "P(tree better)": per_dataset["p_left"],
}, index=per_dataset.index)
correction

# %% [markdown]
# On `moons`, `clf_redundant` and `clf_3class` the naive test is "highly significant"
# (p of 0.0007, 0.002 and below 1e-4) while the corrected test is not significant
# (0.08 and 0.11) or much less so (0.02). The naive p-value can be made as small as one
# likes by adding repetitions of the cross-validation, which reuse the same examples and bring
# no new information; the corrected one cannot (notebook 01 shows this).
# Without a ROPE, the Bayesian probability that the logistic regression is better is
# one minus the corrected one-sided p-value: the corrected test and the correlated t-test are
# two readings of the same model. What the Bayesian version adds is the ROPE, and a direct
# statement: "the tree is better on `moons` with probability 0.90".
#
# ## Protocol 2: 5x2cv, and Dietterich's and Alpaydin's tests
#
# Dietterich (1998) proposed five replications of 2-fold cross-validation: each replication
# halves the data at random, trains on one half and tests on the other, then swaps. His 5x2cv
# paired t-test uses all ten differences $p_i^{(j)}$ for the variance but only the first one,
# $p_1^{(1)}$, in the numerator; Alpaydin's (1999) combined F-test uses all ten in both.
# `protocols.five_by_two` runs this protocol (again one set of splits shared by all estimators)
# and `protocols.as_5x2` arranges the differences as the (5, 2) array the tests expect.

# %%
scores_5x2 = protocols.five_by_two(ESTIMATORS, DATASETS, random_state=0)
differences_5x2 = protocols.as_5x2(scores_5x2, FIRST, SECOND, FOCUS)
print(f"{FIRST} - {SECOND} on {FOCUS}, 5x2cv (rows: replications, columns: folds):")
print(pd.DataFrame(differences_5x2, index=[f"replication {i + 1}" for i in range(5)],
                   columns=["fold 1", "fold 2"]).round(4).to_string())
t_5x2 = resampled_ttests.paired_ttest_5x2cv(differences_5x2, first=FIRST, second=SECOND,
                                            alpha=ALPHA)
f_5x2 = resampled_ttests.combined_ftest_5x2cv(differences_5x2, first=FIRST, second=SECOND,
                                              alpha=ALPHA)
focus_test = bc.correlated_ttest(scores, FIRST, SECOND, dataset=FOCUS, rope=ROPE)
print()
print(t_5x2.summary())
print(f_5x2.summary())
print()
print(focus_test.summary())

# %% [markdown]
# On `wine` the verdicts **disagree**. The correlated t-test on the 30 scores of 10-fold
# cross-validation says the logistic regression is better by more than a point with probability
# 0.99 (corrected p = 0.007). Both 5x2cv tests fail to reject: t = 1.46 (p = 0.20) and
# F = 2.31 (p = 0.18), although the ten 5x2cv differences average 0.088, even more than the
# 0.079 of 10-fold cross-validation. Why?
#
# * **Half-size training sets.** 5x2cv trains on 89 of the 178 wines. The depth-3 tree is
#   unstable on so few examples: the fifth replication gives differences of 0.011 and 0.191,
#   and its $s_5^2 = 0.016$ dominates the variance estimate.
# * **Few degrees of freedom.** The variance is estimated from five replications (df = 5), so
#   the t-test needs |t| > 2.57 to reject at 0.05; the correlated t-test has df = 29.
# * **What is compared.** 5x2cv compares the estimators trained on half the data, 10-fold
#   cross-validation trained on 90%; a protocol is part of the question, not only a way of
#   measuring.
#
# The 5x2cv tests were designed to keep the type I error at its level (Dietterich 1998),
# and pay for it with power: a non-rejection here is a lack of evidence, not evidence of
# equivalence.
#
# The same comparison on every dataset:

# %%
rows = []
for name, test in zip(scores.dataset_names, ttests):
    d = protocols.as_5x2(scores_5x2, FIRST, SECOND, name)
    rows.append({"dataset": name, "10x3 mean": test.posterior.mean,
                 "P(tree better)": test.probabilities[0],
                 "P(equivalent)": test.probabilities[1],
                 "P(logistic better)": test.probabilities[2],
                 "Bayesian decision": test.decision(), "corrected p": test.nb_p_value,
                 "5x2 mean": d.mean(), "p_1^(1)": d[0, 0],
                 "5x2cv t p": resampled_ttests.paired_ttest_5x2cv(d).p_value,
                 "5x2cv F p": resampled_ttests.combined_ftest_5x2cv(d).p_value})
verdicts = pd.DataFrame(rows).set_index("dataset")
verdicts

# %% [markdown]
# Where the evidence is strong (`breast_cancer`, `circles`, `quantiles`) every test agrees.
# Elsewhere:
#
# * **`iris`**: the 5x2cv t-test rejects (p = 0.04) but the F-test does not (p = 0.25), nor
#   does the correlated t-test (P(logistic better) = 0.60). The t-test's numerator is the
#   first difference only, $p_1^{(1)} = 0.093$, the largest of the ten; with another seed for
#   the halvings another difference would come first. This dependence on one arbitrary
#   difference is why Alpaydin proposed the F-test. On `clf_redundant` the same happens in a
#   milder form: $p_1^{(1)} = 0.047$ (again the largest, 3.5 times the mean of the ten) gives
#   the t-test p = 0.01; the F-test rejects only just (p = 0.04), and the correlated t-test is
#   undecided (P(logistic better) = 0.86, corrected p = 0.11).
# * **`moons`**: both 5x2cv tests reject, the correlated t-test is undecided at 0.95 with
#   P(tree better) = 0.90. The ten 5x2cv differences happen to be very consistent (all between
#   -0.033 and -0.067), which makes their variance small; the 10-fold test folds of 30 examples
#   are noisier. The two protocols see the same direction; they differ on how sure to be.
# * **`clf_3class`**: the correlated t-test says the tree is better (P = 0.98); the 5x2cv
#   tests do not reject. Same reasons as on `wine`: smaller training sets, fewer degrees of
#   freedom.
#
# ## Protocol 3: one held-out test set, McNemar's test and Cochran's Q
#
# When a model is too expensive to train many times, Dietterich (1998) recommends McNemar's
# test: train once, and compare the two classifiers' errors on one test set. Only the
# examples on which they disagree count: $b$ (only the first right) and $c$ (only the second
# right). `one_test_set.correctness` turns predictions into the (examples x classifiers) 0/1 matrix
# these tests take. We hold out half of `wine`, stratified.

# %%
X, y = DATASETS[FOCUS]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, stratify=y,
                                                    random_state=0)
predictions = {name: clone(estimator).fit(X_train, y_train).predict(X_test)
               for name, estimator in ESTIMATORS.items()}
correct = one_test_set.correctness(y_test, *predictions.values())
names = list(predictions)
print("test accuracies:", dict(zip(names, correct.mean(axis=0).round(4))))
table = one_test_set.mcnemar_table(correct[:, names.index(FIRST)],
                                   correct[:, names.index(SECOND)])
print(pd.DataFrame(table, index=[f"{FIRST} right", f"{FIRST} wrong"],
                   columns=[f"{SECOND} right", f"{SECOND} wrong"]).to_string())
print()
mcnemar = one_test_set.mcnemar_from_correct(correct[:, names.index(FIRST)],
                                            correct[:, names.index(SECOND)], exact=True,
                                            first=FIRST, second=SECOND, alpha=ALPHA)
mcnemar_chi2 = one_test_set.mcnemar_from_correct(correct[:, names.index(FIRST)],
                                                 correct[:, names.index(SECOND)],
                                                 first=FIRST, second=SECOND, alpha=ALPHA)
cochran = one_test_set.cochran_q_test(correct, algorithms=names, alpha=ALPHA)
print(mcnemar.summary())
print(mcnemar_chi2.conclusion)
print()
print(cochran.summary())

# %% [markdown]
# The two classifiers disagree on 13 of the 89 test wines, and the logistic regression is the
# one that is right on all 13 ($b = 13$, $c = 0$). With so few discordant examples the exact
# binomial version is the right one (b + c below 25): p = 0.0002 (the continuity-corrected
# chi-square gives 0.0009). Cochran's Q, the extension to the three classifiers, also rejects
# equal accuracies (naive Bayes is nearly as good as the logistic regression here, the tree
# is worse).
#
# McNemar agrees with the correlated t-test on the direction, and is far more confident than
# the 5x2cv tests. But it answers a narrower question: are **these two fitted models**
# equally accurate on the population the test set was drawn from? The only randomness it
# accounts for is the choice of test examples; a different training set would give a
# different tree, and the depth-3 tree is just the kind of unstable learner for which that
# matters. Dietterich (1998) found McNemar's test acceptable in type I error, but it says
# nothing about the learning *algorithms* beyond this one training set. The cross-validation
# protocols vary the training set; that is what they are for.
#
# ## Across datasets, classical: Friedman, Nemenyi and Holm-corrected Wilcoxon
#
# The usual recipe for several algorithms on several datasets (Demšar 2006): rank the
# algorithms on each dataset by their mean score, test with the Friedman test whether the
# average ranks differ, and then compare pairs, either by the Nemenyi test (two algorithms
# differ if their average ranks differ by more than the critical difference CD) or, as
# Benavoli, Corani & Mangili (2016) advise, by Wilcoxon signed-rank tests on the dataset means
# with Holm's correction. `friedman_test` runs all of it.

# %%
friedman = friedman_test(scores, alpha=ALPHA)
print(friedman.summary())
plot_critical_difference(friedman)
plt.show()

# %% [markdown]
# The Friedman test does not reject (chi-square 0.8, p = 0.67): the average ranks, 1.8 for
# naive Bayes, 2.0 for the logistic regression and 2.2 for the tree, lie well within one
# critical difference (CD = 1.05), so the diagram joins all three with one bar. No post-hoc test
# finds a difference either: the Holm-corrected Wilcoxon p-values are 0.98, 0.73 and 0.98.
#
# **What this does not say.** A non-significant Friedman test does not mean that the three
# algorithms are equivalent, not even "on average". It means that ten datasets do not give
# enough evidence that their *average ranks* differ. Ranks also throw away the sizes of the
# differences: the tree beats the logistic regression by 39 points on `circles` and loses by
# 3 points on `clf_redundant`, and both count as one rank. The table shows the ranks next to
# the mean accuracies:

# %%
ranks = pd.DataFrame(friedman.ranks, index=friedman.dataset_names,
                     columns=[f"rank {a}" for a in friedman.algorithms])
means = pd.DataFrame(friedman.mean_scores, index=friedman.dataset_names,
                     columns=[f"mean {a}" for a in friedman.algorithms])
pd.concat([means, ranks], axis=1)

# %% [markdown]
# Each algorithm is first somewhere and last somewhere: the ranking of the three depends on the
# dataset, and the Friedman test, which asks whether one of them is *consistently* ranked
# better, rightly finds no such algorithm. The question it cannot answer is the practical one:
# on my next dataset, will it matter which one I pick?
#
# ## Across datasets, Bayesian: the hierarchical model for one pair
#
# The hierarchical model (notebook 02) uses all 30 differences of every dataset, with their
# uncertainty and correlation, and treats the datasets as a sample of problems. It estimates
# the typical difference $\delta_0$ and predicts the difference on the **next** dataset.
#
# One sampler setting is written out here rather than left to its default. On `circles` and
# `quantiles` the differences are 34 to 55 points, against a few points elsewhere: the
# population looks like two clusters, and the posterior of $\sigma_0$ and $\nu$ (one wide
# normal-like population, or a narrow one with heavy tails) mixes slowly. 3000 warm-up and
# 3000 sampling iterations per chain give these pairs enough effective draws; we state them
# so that they are visible, here and in `compare_all` below. The diagnostics below check the
# result.

# %%
FIT = dict(iter_warmup=3000, iter_sampling=3000)
hier = bc.hierarchical(scores, FIRST, SECOND, rope=ROPE, seed=SEED, **FIT)
print(hier.diagnostics.summary())
print()
print("delta0, the typical difference:")
print(pd.Series(hier.population.to_dict()).round(3).to_string())
print()
print("the next dataset:")
print(pd.Series(hier.next_dataset.probabilities, index=hier.labels).round(3).to_string())
print("Wilcoxon signed-rank on the dataset means: p =", round(hier.baselines.wilcoxon.p_value, 4))
bplots.plot_posterior(hier, which="next")
plt.show()

# %% [markdown]
# The hierarchical model and the Wilcoxon test (p = 0.51) agree that there is no consistent
# winner: $\delta_0$ is negative on average (the two large losses of the logistic regression pull
# it down) but its 95% HDI spans both sides of zero. They **disagree** on what this means. On
# the next dataset the model gives
#
# * P(tree better by more than a point) about 0.60,
# * P(logistic better by more than a point) about 0.35,
# * P(practically equivalent) only about 0.05.
#
# So the two are almost certainly **not** equivalent on a new problem; which one wins depends on
# the problem. A Wilcoxon p-value of 0.51 cannot say this: it cannot tell "equivalent" from
# "different, in unpredictable directions". Because the ROPE is part of the model, the Bayesian
# analysis can.
#
# The shrinkage plot shows the per-dataset estimates: hollow, each dataset alone (the correlated
# t-test); filled, the hierarchical estimate, pulled toward $\delta_0$ where a dataset's own
# evidence is weak.

# %%
bplots.plot_shrinkage(hier)
plt.show()

# %% [markdown]
# ## All pairs: `compare_all`
#
# `compare_all` runs the hierarchical model on every pair (with the same sampler settings, and
# `SEED` itself as every pair's seed, so that a pair's numbers are those of `bc.hierarchical` on
# that pair with that seed), and reports beside the Bayesian probabilities the
# Wilcoxon signed-rank p-value of each pair with Holm's correction. The heatmap shows, for each
# row and column, P(row better than column by more than the ROPE) on the next dataset.

# %%
pairs = compare_all(scores, rope=ROPE, seed=SEED, **FIT)
print(pairs.summary())
# every pair's three regions on the next dataset, the quantity the prose below reads
bplots.plot_probability_heatmap(pairs, which="next_dataset")
plt.show()

# the frequentist column of compare_all is the Holm-corrected Wilcoxon test of friedman_test
both = pairs.table.merge(friedman.pairwise, on=["first", "second"])
print("Holm-corrected Wilcoxon p-values equal friedman_test's post-hoc ones:",
      np.allclose(both["p_value_corrected"], both["holm_p"]))

# %% [markdown]
# The `logistic - tree` row is the single fit above, number for number (same data, seed and
# settings). The Holm-corrected p-values are the same as in `friedman_test`'s post-hoc table: the
# classical side of `compare_all` *is* the Holm-corrected Wilcoxon test.
#
# Reading the heatmap and the table together:
#
# * **No pair reaches 0.95 in any region**, and no p-value is significant: both sides agree
#   that no algorithm dominates.
# * **The ROPE column separates the pairs.** P(equivalent on the next dataset) is about 0.05 for
#   logistic vs tree, 0.11 for naive Bayes vs tree and 0.16 for naive Bayes vs logistic. These
#   small numbers are the Bayesian answer to the question the Friedman test leaves open: on a
#   new problem the choice of algorithm very probably matters, by more than a point, and the
#   right choice depends on the problem (here visibly: whether the classes are nested, as in
#   `circles` and `quantiles`, where the linear model fails).
# * **naive Bayes vs tree** is the most lopsided pair (P(naive Bayes better) about 0.60,
#   P(tree better) about 0.29), in line with naive Bayes's best average rank.
#
# ## Where the verdicts agree, where they disagree, and why
#
# | situation | classical | Bayesian | why |
# |---|---|---|---|
# | large, consistent difference (`breast_cancer`, `circles`) | every test rejects | P(better) ≈ 1 | the data are clear; all methods see it |
# | naive vs corrected t-test (`moons`, `clf_redundant`) | naive p < 0.01, corrected p ≈ 0.1 | P(better) 0.86 to 0.90, undecided | overlapping training sets make the 30 differences correlated; only the corrected test and the correlated t-test account for it |
# | `wine`, 10-fold vs 5x2cv | 5x2cv t and F do not reject | P(logistic better) = 0.99 | 5x2cv trains on half the data, and its variance has 5 degrees of freedom: less power, and a slightly different question |
# | `iris`, 5x2cv t vs F | t rejects, F does not | undecided (0.60) | the t-test's numerator is one arbitrary difference |
# | `wine`, one test set | McNemar p = 0.0002 | (not applicable) | McNemar ignores the variability of training; it compares two fitted models, not two algorithms |
# | many datasets | Friedman p = 0.67, nothing significant | P(equivalent on the next dataset) 0.05 to 0.16 | a p-value cannot distinguish "equivalent" from "it depends"; the ROPE and the predictive distribution can |
#
# ## Take-home
#
# * A protocol is part of the question: 10-fold and 5x2cv train on different amounts of data,
#   a single test set holds the training set fixed. `bayescomp.data.protocols` produces paired
#   scores for each, with the correlation $\rho$ the tests need.
# * On one dataset, use the correlated t-test (or the corrected t-test): the naive t-test on
#   cross-validation scores is overconfident. The 5x2cv tests are safe but weak; prefer the
#   F-test to the t-test.
# * Across datasets, a non-significant Friedman or Wilcoxon test says "no consistent winner",
#   not "equivalent". The hierarchical model says how probable equivalence is on the next
#   dataset, and here it is improbable.
#
# Machine-readable summary (checked by the test suite):

# %%
pair_row = pairs.table.set_index(["first", "second"]).loc[(FIRST, SECOND)]
print("RESULT " + json.dumps({
    "first": FIRST, "second": SECOND, "focus": FOCUS, "rope": ROPE, "alpha": ALPHA,
    "seed": SEED, "fit": FIT, "datasets": list(scores.dataset_names),
    "ttest_probabilities": [float(p) for p in focus_test.probabilities],
    "nb_p_value": float(focus_test.nb_p_value),
    "t_5x2": float(t_5x2.statistic), "t_5x2_p": float(t_5x2.p_value),
    "f_5x2": float(f_5x2.statistic), "f_5x2_p": float(f_5x2.p_value),
    "mcnemar_b": int(table[0, 1]), "mcnemar_c": int(table[1, 0]),
    "mcnemar_exact_p": float(mcnemar.p_value), "cochran_q": float(cochran.statistic),
    "friedman_chi2": float(friedman.statistic), "friedman_p": float(friedman.p_value),
    "average_ranks": [float(r) for r in friedman.average_ranks],
    "critical_difference": float(friedman.critical_difference),
    "holm_p": [float(p) for p in friedman.pairwise["holm_p"]],
    "next": [float(p) for p in hier.next_dataset.probabilities],
    "hierarchical_ok": bool(hier.diagnostics.ok),
    "pairs": [[row.first, row.second] for row in pairs.table.itertuples()],
    "pairs_p_value_corrected": [float(p) for p in pairs.table["p_value_corrected"]],
    "pairs_ok": bool(pairs.table["reliable"].all()),
    "pair_next": [float(pair_row[f"next_dataset_{k}"]) for k in ("p_left", "p_rope", "p_right")]}))
