"""Writes the four example notebooks of bayescomp, without outputs, with nbformat.

Run from the repository root: python notebooks/build_notebooks.py notebooks
"""
import sys
from pathlib import Path
from textwrap import dedent

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def md(text):
    return new_markdown_cell(dedent(text).strip("\n"))


def code(text):
    return new_code_cell(dedent(text).strip("\n"))


def notebook(cells, prefix):
    for i, cell in enumerate(cells):
        cell["id"] = f"{prefix}-{i:02d}"  # stable ids: regenerating gives the same file
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    return nb


# ============================================================================ 01

NB1 = [
md("""
# Comparing the candidates of a grid search on one dataset

A grid search reports a ranking of the candidates by their mean cross-validation score, and
`best_params_` names the winner. This notebook asks the question a ranking cannot answer:
**is the winner really better than the runner-up, and by how much?**

It follows scikit-learn's example *Statistical comparison of models using grid search*
(`plot_grid_search_stats`): a support vector classifier with four kernels on a noisy
two-moons problem, scored by ROC AUC over 10 repetitions of stratified 10-fold
cross-validation. Instead of writing the corrected t-test and its Bayesian counterpart by
hand, as the scikit-learn example does, we read the grid search into `bayescomp` and use

* the **Nadeau-Bengio corrected t-test** (frequentist), and
* the **Bayesian correlated t-test** of Corani & Benavoli (2015), which gives the
  probabilities that the difference is negative, practically zero, or positive.

Everything runs in a few seconds.
"""),
code("""
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
"""),
md("""
## The data and the grid search

100 points of two interleaved half-moons with noise 0.352 (scikit-learn's example, exactly):
the ideal boundary is curved, so a linear kernel should struggle a little, but with 100 noisy
points it is not obvious how much a flexible kernel can gain.
"""),
code("""
X, y = make_moons(noise=0.352, random_state=1, n_samples=100)

fig, ax = plt.subplots(figsize=(4.5, 3.5), layout="constrained")
ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=25, edgecolor="k")
ax.set_title("make_moons(n_samples=100, noise=0.352)")
plt.show()
"""),
md("""
Four candidates: a linear kernel, polynomial kernels of degree 2 and 3, and an RBF kernel.
Every candidate is evaluated on the **same** 100 train/test splits
(`RepeatedStratifiedKFold(n_splits=10, n_repeats=10)`): the scores are *paired* split by
split, which is what makes a paired comparison possible.
"""),
code("""
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
"""),
md("""
The RBF kernel wins with a mean AUC about one point above the linear kernel. The standard
deviations over the splits are around 0.08, eight times the gap: looked at one model at a
time, the two are indistinguishable. But the split-to-split variation is largely shared by
all candidates (a test fold with hard points is hard for every kernel), so the right object
is the **paired difference** on each split.

## From the grid search to `bayescomp`

`bc.from_cv_results` reads the `split<i>_test_score` columns of `cv_results_`: each candidate
becomes an "algorithm" with 100 paired scores. It also reads the splitter to find the
correlation `rho` between splits (below). We give the candidates short names.
"""),
code("""
names = [p["kernel"] + str(p.get("degree", "")) for p in search.cv_results_["params"]]
scores = bc.from_cv_results(search, names=names, dataset="moons")
print(scores.summary())
"""),
md("""
Two different correlations matter here, and they pull in opposite directions:

1. **Between candidates on the same split.** The scores of the four kernels rise and fall
   together from split to split (table below). A paired analysis of the differences removes
   this shared variation: it is why a paired test is far more sensitive than comparing two
   means with their standard deviations.
2. **Between the differences of different splits.** Two training sets of 10-fold
   cross-validation share 8/9 of their points, and the repetitions reuse the same 100 points
   over and over; the 100 differences are therefore *not* 100 independent observations.
   Nadeau & Bengio (2003) model this by a correlation
   $\\rho = n_{test} / (n_{train} + n_{test})$ between any two differences: $\\rho = 1/10$
   for 10-fold cross-validation. `bayescomp` read it from the splitter:
   `scores.rho` is 0.1.
"""),
code("""
per_split = pd.DataFrame(scores.dataset("moons").values.T, columns=scores.algorithms)
print("rho read from the splitter:", scores.rho)
per_split.corr().round(2)
"""),
md("""
## Best against second best

We compare the best candidate (first) with the runner-up (second). Differences are always
`first - second`, so positive values favour the best candidate.
"""),
code("""
order = np.argsort(search.cv_results_["rank_test_score"], kind="stable")
best, second = names[order[0]], names[order[1]]
differences = scores.differences(best, second)[0]
print(f"best = {best}, second = {second}")
print(f"mean difference {differences.mean():.4f}, sd {differences.std(ddof=1):.4f}, "
      f"{(differences > 0).sum()} wins, {(differences < 0).sum()} losses, "
      f"{(differences == 0).sum()} ties over {differences.size} splits")
"""),
md("""
Half of the splits are ties: with 10 test points (5 per class) the AUC of a fold takes few
values, and on easy folds both kernels rank every pair correctly. Where they differ, RBF wins
more often than it loses.
"""),
md("""
### The frequentist view: naive versus corrected t-test

A naive paired t-test treats the 100 differences as independent. The Nadeau-Bengio corrected
t-test replaces the variance of the mean, $s^2/n$, by
$$\\left(\\frac{1}{n} + \\frac{\\rho}{1-\\rho}\\right) s^2 ,$$
which here is $1/100 + 1/9 \\approx 0.121$ instead of $0.01$: the variance is about 12 times
larger, the standard error 3.5 times larger, the t statistic 3.5 times smaller.
`bc.correlated_ttest` reports this corrected test beside its Bayesian result
(`nb_statistic`, `nb_p_value`, and the one-sided `nb_p_greater`).
"""),
code("""
with_rope0 = bc.correlated_ttest(scores, best, second, rope=0)
naive = stats.ttest_rel(per_split[best], per_split[second], alternative="greater")

n, rho = differences.size, scores.rho[0]
print(f"variance inflation of the correction: (1/n + rho/(1-rho)) / (1/n) = "
      f"{(1 / n + rho / (1 - rho)) * n:.2f}")
pd.DataFrame({
    "t": [naive.statistic, with_rope0.nb_statistic],
    "one-sided p (H1: best is better)": [naive.pvalue, with_rope0.nb_p_greater],
}, index=["naive paired t-test", "Nadeau-Bengio corrected t-test"])
"""),
md("""
The naive test finds the RBF kernel "significantly" better (p about 0.005); the corrected
test does not (p about 0.23, the value scikit-learn's example prints). The naive test is
**overconfident**: its variance of the mean shrinks like $1/n$, as if more repetitions of
cross-validation on the same 100 points brought new information. They do not; only new data
would. The correction keeps a floor $\\frac{\\rho}{1-\\rho} s^2$ that no number of repetitions
removes. The table below redoes both tests on the first 1, 2, ..., 10 repetitions: the naive
p-value sinks as repetitions are added (from 0.6 to 0.005), the corrected one stays between
0.2 and 0.6.
"""),
code("""
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
"""),
md("""
### The Bayesian correlated t-test

The Bayesian correlated t-test uses the same model of the differences (normal, with
correlation $\\rho$ between splits) and gives a posterior for their mean $\\mu$: a Student-t
with $n-1$ degrees of freedom centred on the mean difference, with the corrected scale.
Without a ROPE, the posterior probability that the best candidate is better is exactly one
minus the corrected one-sided p-value:
"""),
code("""
p_left, p_rope, p_right = with_rope0.probabilities
print(f"P({best} better) = {p_right:.4f};  1 - corrected one-sided p = "
      f"{1 - with_rope0.nb_p_greater:.4f}")
"""),
md("""
A probability of 0.77 is a statement the p-value cannot make: given the data, the RBF kernel
is better than the linear one with probability about 3/4. That is not enough to be sure.

### The region of practical equivalence (ROPE)

A "better" AUC by 0.0001 is of no practical interest. The ROPE is the interval of differences
we consider **practically equivalent**, in the units of the scores: here
$[-0.01, 0.01]$, one AUC point. The posterior is then split in three regions:

* **left**: the second candidate is better by more than the ROPE,
* **rope**: the two are practically equivalent,
* **right**: the best candidate is better by more than the ROPE.
"""),
code("""
ROPE = 0.01
result = bc.correlated_ttest(scores, best, second, rope=ROPE)
print("95% credible interval of the mean difference:", np.round(result.interval(), 4))
result  # rendered as a table in the notebook; result.summary() gives the same as text
"""),
md("""
How to read these numbers:

* **P(rbf better)** is 0.50: half the posterior lies above +0.01. That is no coincidence
  of rounding: the AUC of a fold of 10 points is a multiple of 1/25, the mean difference
  turned out to be 0.0100 (up to floating-point error), so the posterior is centred on the
  ROPE's upper bound.
* **P(equivalent)** is 0.43 and **P(linear better)** only 0.07: the probability that the
  RBF kernel is *practically no worse* than the linear one is
  $0.43 + 0.50 \\approx 0.93$.
* No region reaches 0.95, so `result.decision()` says `undecided`: 100 noisy points cannot
  tell whether RBF's gain is real and larger than one point. That is the honest answer; the
  ranking of the grid search hid it.
* The 95% credible interval runs from about -0.016 to +0.036: a loss of 1.6 AUC points
  and a gain of 3.6 are both compatible with the data.

The posterior plot shows the three regions:
"""),
code("""
bplots.plot_posterior(result)
plt.show()
"""),
md("""
### How much does the answer depend on the ROPE?

The ROPE is a modelling choice and should be stated before looking at the data; but it is
worth seeing how the answer moves with it. With a ROPE of 0 we are back to
"better or worse"; with a wide one almost everything becomes "equivalent".
"""),
code("""
rows = []
for width in (0.0, 0.005, 0.01, 0.02, 0.05):
    test = bc.correlated_ttest(scores, best, second, rope=width)
    rows.append({"ROPE half-width": width, **dict(zip(test.labels, test.probabilities)),
                 "decision at 0.95": test.decision()})
pd.DataFrame(rows).set_index("ROPE half-width")
"""),
md("""
## Every candidate against the best

The same test, the best candidate against each of the others:
"""),
code("""
against_best = pd.concat(
    [bc.correlated_ttest(scores, best, other, rope=ROPE).to_frame()
     for other in scores.algorithms if other != best], ignore_index=True)
against_best[["first", "second", "mean", "hdi_2.5%", "hdi_97.5%", "p_left", "p_rope",
              "p_right", "nb_p_value", "decision"]]
"""),
md("""
The RBF kernel is certainly better than the degree-2 polynomial (P(rbf better) near 1), and
probably (about 0.88) better than the degree-3 polynomial by more than a point; against the
linear kernel it is undecided.

### All pairs

`compare_all` runs the correlated t-test on every pair (the hierarchical model would be used
if there were several datasets). Beside the Bayesian probabilities it reports the corrected
t-test's p-values with Holm's correction for the six comparisons. The heatmap shows, for each
row and column, P(row candidate better than column candidate by more than the ROPE).
"""),
code("""
pairs = compare_all(scores, rope=ROPE, method="correlated", seed=0)
print(pairs.summary())
bplots.plot_probability_heatmap(pairs.probability_matrix())
plt.show()
"""),
md("""
Two remarks on many comparisons.

* The posterior probabilities of each pair are what they are: there is no "Bayesian
  correction" for the number of pairs. What inflates is the chance that *some* pair shows an
  extreme value by luck; the frequentist answer is the Holm-corrected p-value column.
* The "best" candidate was chosen by looking at these very scores. Its advantage over the
  runner-up is therefore biased upwards (the winner's curse): an honest estimate of the
  chosen model's performance needs nested cross-validation or a held-out set.

## Take-home

* The grid search's ranking says RBF is first; the Bayesian correlated t-test says that,
  with this little data, RBF is better than the linear kernel with probability 0.77, better
  by more than one AUC point with probability 0.50, and practically no worse with probability
  0.93.
* Cross-validation scores of different splits are correlated; ignoring it (naive t-test)
  makes any difference "significant" given enough repetitions. `rho = 1/k` fixes it, and
  `bc.from_cv_results` reads it from the splitter.

The last line is a machine-readable summary (the test suite checks it against the library).
"""),
code("""
import json

print("RESULT " + json.dumps({
    "first": result.first, "second": result.second, "rope": ROPE,
    "p_left": float(result.probabilities[0]), "p_rope": float(result.probabilities[1]),
    "p_right": float(result.probabilities[2]), "nb_p_value": float(result.nb_p_value)}))
"""),
]

# ============================================================================ 02

NB2 = [
md("""
# Two classifiers across many datasets: the hierarchical model

Is a random forest better than a single decision tree? On one dataset the Bayesian correlated
t-test answers (see notebook 01). Across many datasets the question becomes: **how large is
the difference on a typical dataset, and what should we expect on the next one?**

This notebook uses the example scores that ship with `bayescomp`: four scikit-learn
classifiers (`naive_bayes`, `logistic`, `tree`, `forest`) on 17 datasets, each evaluated by
10 repetitions of stratified 10-fold cross-validation (100 paired accuracies per classifier
and dataset, $\\rho = 0.1$). We compare

1. per-dataset correlated t-tests,
2. the **hierarchical model** of Corani, Benavoli, Demšar, Mangili & Zaffalon (2017),
3. the classical baselines on the dataset means (Wilcoxon signed-rank, sign test, t-test)
   and their Bayesian versions.

The hierarchical model is sampled by Stan (a few seconds; the compiled model is cached).
"""),
code("""
import warnings

import numpy as np
import pandas as pd
import matplotlib.pyplot as plt

import bayescomp as bc
import bayescomp.presentation.plots as bplots

pd.set_option("display.float_format", "{:.4g}".format)
pd.set_option("display.width", 140)
# pystan's progress bar looks for ipywidgets, which these notebooks do not need
warnings.filterwarnings("ignore", message="IProgress not found")

scores = bc.datasets.load_classifiers()
FIRST, SECOND = "forest", "tree"
ROPE = 0.01          # one accuracy point: accuracies are fractions in [0, 1]
SEED = 2024          # the hierarchical model is sampled by MCMC: a seed makes it reproducible
print(scores.summary())
"""),
md("""
Differences are `forest - tree` throughout: positive values favour the forest. The ROPE
$[-0.01, 0.01]$ says that classifiers within one accuracy point of each other are
practically equivalent.

## The data, dataset by dataset

Each row is a dataset; the box shows the 100 per-split differences, the grey band the ROPE.
The forest is ahead on almost every dataset, by very different amounts, and the noise
(width of the boxes) also varies from dataset to dataset.
"""),
code("""
bplots.plot_differences(scores, FIRST, SECOND, rope=ROPE, sort=True)
plt.show()
"""),
md("""
## One correlated t-test per dataset

The correlated t-test on each dataset gives P(tree better), P(equivalent), P(forest better)
for that dataset alone, with the Nadeau-Bengio correction for the overlap of the training
sets.
"""),
code("""
per_dataset = pd.concat([t.to_frame() for t in bc.correlated_ttests(scores, FIRST, SECOND,
                                                                     rope=ROPE)],
                        ignore_index=True).set_index("dataset")
per_dataset[["mean", "hdi_2.5%", "hdi_97.5%", "p_left", "p_rope", "p_right", "decision"]]
"""),
code("""
per_dataset["decision"].value_counts()
"""),
md("""
On 10 of the 17 datasets the forest is better by more than a point with probability above
0.95; on the other 7 the test is undecided. This is 17 separate answers; none of them says
what to expect of the two algorithms *in general*. Counting the "wins" is what the sign test does,
and it throws away both the size of each difference and its uncertainty.

## The hierarchical model

The hierarchical model treats the datasets as a sample from a population of problems:

* on dataset $i$ the 100 differences are normal with mean $\\delta_i$, their own standard
  deviation $\\sigma_i$, and correlation $\\rho$ between splits (as in the correlated
  t-test);
* the $\\delta_i$ themselves are drawn from a Student-t with location $\\delta_0$, scale
  $\\sigma_0$ and degrees of freedom $\\nu$ (heavy tails let a few unusual datasets exist
  without dragging everything else).

It answers two population questions:

* **$\\delta_0$**: the mean difference on a typical dataset of the population;
* **the next dataset**: the difference $\\delta_{next}$ on a new dataset drawn from the same
  population, which includes the spread $\\sigma_0$ between datasets.

It also re-estimates every $\\delta_i$, borrowing strength from the other datasets
(*shrinkage*).
"""),
code("""
result = bc.hierarchical(scores, FIRST, SECOND, rope=ROPE, seed=SEED)
result  # a table in the notebook; print(result.summary()) gives the full text report
"""),
md("""
### The population mean $\\delta_0$

On a typical dataset the forest is ahead by about 5.7 accuracy points (95% HDI roughly
3 to 8 points), and the posterior probability that $\\delta_0$ lies right of the ROPE is
practically 1.
"""),
code("""
print(result.delta0)
bplots.plot_posterior(result, which="delta0")
plt.show()
"""),
md("""
### The next dataset

$\\delta_0$ is an average; a practitioner faces one new dataset. The predictive distribution
of $\\delta_{next}$ adds the spread between datasets, and the probabilities of the three
regions become much less extreme: the forest is better by more than a point with probability
about 0.84, the two are equivalent with probability about 0.07, and the tree is better with
probability about 0.08. No region reaches 0.95: **on average the forest is clearly better, but
on a given new dataset it is not guaranteed to be**, because several datasets (iris, moons,
circles, Gaussian quantiles) show practically no difference.
"""),
code("""
print(pd.Series(result.probabilities, index=result.labels).round(4).to_string())
print("decision at 0.95:", result.decision())
bplots.plot_posterior(result, which="next")
plt.show()
"""),
md("""
### The simplex

Each posterior draw of $(\\delta_0, \\sigma_0, \\nu)$ gives three probabilities for the next
dataset; a draw is a point of the triangle whose corners are the three regions. The numbers
at the corners are the share of draws in which that region is the most probable, the summary
that baycomp and Benavoli et al. (2017) report (`result.most_probable`); the cross is the
posterior mean, `result.probabilities`. Nearly all draws lie in the "forest better" part:
whatever the exact values of the hyper-parameters, the forest is the most probable winner on
the next dataset.
"""),
code("""
print("share of draws where each region is the most probable:")
print(pd.Series(result.most_probable, index=result.labels).round(4).to_string())
bplots.plot_simplex(result)
plt.show()
"""),
md("""
### Shrinkage of the per-dataset estimates

For each dataset the plot shows the raw mean difference with the correlated t-test's 95%
interval (hollow) and the hierarchical estimate of $\\delta_i$ with its 95% HDI (filled).
The hierarchical estimates are pulled toward $\\delta_0$ (dashed line), the more so the
noisier the dataset and the farther from the others: information from 16 datasets sharpens
the 17th.
"""),
code("""
bplots.plot_shrinkage(result)
plt.show()
"""),
code("""
table = result.datasets
shrinkage = pd.DataFrame({
    "raw mean": table["mean"], "shrunken mean": table["delta_mean"],
    "shift": table["delta_mean"] - table["mean"],
    "P(forest better), t-test": table["p_right_ttest"],
    "P(forest better), hierarchical": table["p_right"],
}).sort_values("shift", key=abs, ascending=False)
shrinkage.head(8)
"""),
md("""
Take `iris`: alone, the mean difference is +0.003 and the correlated t-test gives the forest
a 0.32 probability of being better by more than a point. In the hierarchical model, knowing
that the forest usually wins by several points, the estimate moves up and that probability
rises to about 0.5. The datasets with the largest differences (multiclass, Gaussian
quantiles with 3 classes, Hastie) are pulled down by about one point; `digits`, whose
difference is measured very precisely, barely moves. Shrinkage is not a fudge: in
simulations it makes the estimates of the $\\delta_i$ more accurate on average (Corani et al.
2017).

## The baselines side by side

The usual practice (Demšar 2006) is the Wilcoxon signed-rank test on the 17 dataset means.
`result.baselines` ran it together with the sign test, the paired t-test, and the Bayesian
sign and signed-rank tests of Benavoli et al. (2014, 2017), which use the same ROPE.
"""),
code("""
base = result.baselines
print(base.summary())
"""),
code("""
left, equal, right = result.labels
frequentist = pd.DataFrame([
    {"analysis": t.name, "statistic": f"{t.statistic_name} = {t.statistic:.4g}",
     "p-value (two-sided)": t.p_value}
    for t in (base.wilcoxon, base.sign, base.ttest)]).set_index("analysis")
bayesian = pd.DataFrame(
    [{"analysis": t.name, f"P({left})": t.mean_masses[0], f"P({equal})": t.mean_masses[1],
      f"P({right})": t.mean_masses[2]} for t in (base.bayesian_sign, base.bayesian_signed_rank)]
    + [{"analysis": "hierarchical: delta0", f"P({left})": result.delta0["p_left"],
        f"P({equal})": result.delta0["p_rope"], f"P({right})": result.delta0["p_right"]},
       {"analysis": "hierarchical: next dataset",
        **dict(zip([f"P({left})", f"P({equal})", f"P({right})"], result.probabilities))}]
).set_index("analysis")
display(frequentist)
display(bayesian)
"""),
md("""
What each one says:

* **Wilcoxon signed-rank, p ≈ 1.5e-5** (and the sign test: the forest wins on all 17
  datasets): the null hypothesis "the differences are centred on zero" is rejected. That is
  all.
  The p-value says nothing about the *size* of the difference, nothing about whether it
  exceeds one point, and a small p-value is not the probability of anything about the
  classifiers. It also uses only the 17 means, ignoring how precisely each was measured.
* **Bayesian sign and signed-rank tests** work on the same 17 means but with a ROPE: they
  estimate how the population of mean differences (for the signed-rank test, of averages of
  pairs of them) splits among the three regions. Like the Wilcoxon test, they ignore how
  precisely each mean was measured.
* **Hierarchical model, $\\delta_0$**: the *average* difference exceeds one point with
  probability about 1.
* **Hierarchical model, next dataset**: on a new dataset the forest is better by more than a
  point with probability about 0.84; a tie or a loss remain possible.

The Wilcoxon test and the hierarchical model do not contradict each other: they answer
different questions. The hierarchical model answers the one a practitioner asks.

## Sampler diagnostics

MCMC results are trustworthy only if the chains mixed. `result.diagnostics` checks R-hat
(agreement between chains, should be below 1.01), the effective sample sizes (at least 100
per chain), divergent transitions (should be 0) and the energy (E-BFMI). A problem would
also have been raised as a `SamplingWarning` with advice. Rank plots should be flat:
each chain visits every part of the posterior equally often.
"""),
code("""
print(result.diagnostics.summary())
bplots.plot_diagnostics(result, kind="rank")
plt.show()
"""),
md("""
## A contrast: naive Bayes versus logistic regression

The same analysis on a pair whose ranking depends on the dataset. Logistic regression is a
linear model and fails on the rotation-invariant problems (circles, Gaussian quantiles,
Hastie), where naive Bayes excels; elsewhere logistic regression is often better. The 17
differences are spread over both sides of zero, with a few very large ones. The posterior of
such a heterogeneous population is harder to sample, so we draw longer chains and check the
diagnostics.
"""),
code("""
nb_lr = bc.hierarchical(scores, "naive_bayes", "logistic", rope=ROPE, seed=SEED,
                        iter_warmup=2000, iter_sampling=2000)
print(nb_lr.diagnostics.summary())
print()
print("Wilcoxon signed-rank: p =", round(nb_lr.baselines.wilcoxon.p_value, 4))
print("next dataset:")
print(pd.Series(nb_lr.probabilities, index=nb_lr.labels).round(3).to_string())
print("delta0:")
print(nb_lr.delta0[["mean", "hdi_low", "hdi_high", "p_left", "p_rope", "p_right"]].round(3)
      .to_string())
bplots.plot_shrinkage(nb_lr)
plt.show()
"""),
md("""
The Wilcoxon test is not significant (p ≈ 0.24). A common misreading is "the two are
equivalent". The hierarchical model says otherwise: on the next dataset P(equivalent) is
only about 0.13, while one of the two is better by more than a point with probability almost
0.9, split about 0.41 / 0.47 between them. **Which classifier wins depends on the
dataset**: the shrinkage plot shows four rotation-invariant problems where naive Bayes wins
by 40 points or more, while the other datasets lie within a few points of zero, with logistic
regression clearly ahead on `digits`, `clf_redundant` and `breast_cancer`. The average
$\\delta_0$ is correspondingly uncertain (95% HDI from about -4 to +15 points). The right
conclusion is not "no difference" but "choose per problem", e.g. by looking at whether the
problem is rotation-invariant.

## Take-home

* Per-dataset tests answer 17 separate questions; the hierarchical model answers the
  population question and predicts the next dataset.
* "Forest better on average" (P ≈ 1) and "forest better on the next dataset" (P ≈ 0.84) are
  different statements; both are useful.
* A tiny signed-rank p-value states that the median difference is not zero; a large one does
  not mean equivalence.
* Always check the sampler diagnostics.

Machine-readable summary of the forest-versus-tree analysis (checked by the test suite):
"""),
code("""
import json

print("RESULT " + json.dumps({
    "first": FIRST, "second": SECOND, "rope": ROPE, "seed": SEED,
    "next": [float(p) for p in result.probabilities],
    "delta0": [float(result.delta0[k]) for k in ("p_left", "p_rope", "p_right")],
    "delta0_mean": float(result.delta0["mean"]),
    "wilcoxon_p": float(result.baselines.wilcoxon.p_value),
    "diagnostics_ok": bool(result.diagnostics.ok)}))
"""),
]

# ============================================================================ 03

NB3 = [
md("""
# A cost-sensitive choice: keep the cheap model or deploy the expensive one?

A team serves a **logistic regression** in production. A colleague proposes a **random
forest**: it may be more accurate, but it is more expensive to serve and maintain. The
posterior probabilities of the Bayesian tests are exactly what a decision needs: combined with
the costs of each action in each state of the world, they give the **expected cost** of
every action, and the rational choice is the cheapest.

This notebook

1. writes the costs as a matrix over the three regions (left, rope, right),
2. takes the probabilities from the correlated t-test on the team's dataset, from the
   hierarchical model (which also uses 16 related datasets), and from the hierarchical
   model's prediction for a brand-new problem,
3. shows how the decision changes with the ROPE and with the costs.

The scores are the example that ships with `bayescomp` (10 x 10-fold cross-validation of
four classifiers on 17 datasets). The team's problem is the dataset `moons_noisy`; in your
own work the scores would come from `bc.from_cross_validate` or `bc.from_cv_results`.
"""),
code("""
import warnings

import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from scipy import stats

import bayescomp as bc
import bayescomp.presentation.plots as bplots

pd.set_option("display.float_format", "{:.4g}".format)
pd.set_option("display.width", 160)
# pystan's progress bar looks for ipywidgets, which this notebook does not need
warnings.filterwarnings("ignore", message="IProgress not found")

scores = bc.datasets.load_classifiers()
FIRST, SECOND = "forest", "logistic"    # differences forest - logistic: > 0 favours the forest
DATASET = "moons_noisy"
ROPE = 0.01                             # one accuracy point
SEED = 2024
print(scores.summary())
"""),
md("""
## The costs

Differences are `forest - logistic`, so the three regions are

* **left**: logistic regression better by more than one point,
* **rope**: practically equivalent,
* **right**: the forest better by more than one point.

The actions, with costs in thousands of euros over the model's life (negative costs are
gains), relative to keeping things as they are:

| action | left (logistic better) | rope (equivalent) | right (forest better) |
|---|---|---|---|
| keep the logistic regression | 0 | 0 | 0 |
| deploy the forest | $c + V$ | $c$ | $c - V$ |
| run an A/B test, then decide | $a$ | $a$ | $a + c - V$ |

* $c$ = 1: the extra cost of serving and maintaining the forest;
* $V$ = 5: the value of a practically relevant change of accuracy (gained if the forest is
  better, lost if it is worse);
* $a$ = 1: the cost of an A/B test in production, which (we assume, for simplicity) reveals
  the truth, after which the forest is deployed only if it is better.

Keeping the logistic regression when the forest is better is an *opportunity* cost: it
appears as the gain $V - c$ the other actions can earn.
"""),
code("""
DECISIONS = ["keep logistic", "deploy forest", "A/B test first"]


def cost_matrix(run_cost=1.0, value=5.0, ab_cost=1.0):
    \"\"\"Costs of each decision (rows) in each region (left, rope, right).\"\"\"
    c, v, a = run_cost, value, ab_cost
    return np.array([[0.0, 0.0, 0.0],
                     [c + v, c, c - v],
                     [a, a, a + c - v]])


COSTS = cost_matrix()
pd.DataFrame(COSTS, index=DECISIONS,
             columns=["left: logistic better", "rope: equivalent", "right: forest better"])
"""),
md("""
## Evidence from the team's dataset: the correlated t-test

The 100 paired accuracies on `moons_noisy`: the forest is ahead by 1.7 points on average,
barely more than the ROPE.
"""),
code("""
ttest = bc.correlated_ttest(scores, FIRST, SECOND, dataset=DATASET, rope=ROPE)
print(ttest.summary())
bplots.plot_posterior(ttest)
plt.show()
"""),
md("""
P(forest better) ≈ 0.64, P(equivalent) ≈ 0.28, P(logistic better) ≈ 0.07. At the usual 0.95
threshold the test is **undecided**, and a threshold rule would stop here. A decision does not
need certainty; it needs the expected cost of each action:
$$E[\\text{cost}(d)] = \\sum_{r \\in \\{left, rope, right\\}} \\text{cost}(d, r)\\, P(r).$$
"""),
code("""
decision = ttest.expected_costs(COSTS, DECISIONS)
print(decision.summary())
"""),
md("""
Deploying the forest has the lowest expected cost (a gain of about 1.8), ahead of the A/B test
(about 1.6): with only a 7% chance that the forest is worse, the A/B test is not worth its
price. Note that the decision rests on all three probabilities and on the costs, not on
whether any probability crossed 0.95.

## Evidence from related problems: the hierarchical model

The team has also benchmarked the two models on 16 other problems. The hierarchical model uses
all 17 datasets; it gives two further sets of probabilities:

* the **shrunken estimate for `moons_noisy`** ($\\delta_i$ of that dataset, informed by the
  other 16): the relevant one for the decision about this problem;
* the **next dataset**: for a *new* problem on which no cross-validation has been run yet.
"""),
code("""
hier = bc.hierarchical(scores, FIRST, SECOND, rope=ROPE, seed=SEED)
print(hier.diagnostics.summary())
shrunk = hier.datasets.loc[DATASET, ["p_left", "p_rope", "p_right"]].to_numpy(dtype=float)

sources = {
    f"t-test, {DATASET}": ttest.probabilities,
    f"hierarchical, {DATASET}": shrunk,
    "hierarchical, new problem": hier.probabilities,
}
rows = []
for name, probabilities in sources.items():
    choice = bc.expected_cost_decision(probabilities, COSTS, DECISIONS)
    rows.append({"evidence": name, **dict(zip(("P(left)", "P(rope)", "P(right)"), probabilities)),
                 **{f"E[{d}]": c for d, c in zip(DECISIONS, choice.expected_costs)},
                 "best": choice.best})
evidence = pd.DataFrame(rows).set_index("evidence")
evidence
"""),
md("""
* For `moons_noisy`, the shrunken estimate agrees with the dataset's own test (forest better
  with probability about 0.67): **deploy the forest**.
* For a *new* problem, the model predicts a forest win with probability about 0.73, but the
  probability that logistic regression is better by more than a point is about 0.23. The
  differences between datasets are very spread (from -1.7 points on breast cancer to +54 on
  circles), so the predictive distribution for a new problem is wide and keeps substantial
  mass below -1 point. With that much risk the A/B test is the cheapest action: **test
  first** on a new problem.

## How the decision depends on the ROPE

The ROPE defines the regions, so it changes the probabilities and hence the expected costs.
The next-dataset probabilities for any ROPE can be computed from the same posterior draws
without refitting: for each draw of $(\\delta_0, \\sigma_0, \\nu)$, the masses of the
Student-t $t_\\nu(\\delta_0, \\sigma_0)$ left of, inside and right of the ROPE, averaged over
the draws. (At the fitted ROPE this reproduces `hier.probabilities`.)

A caveat: the costs attach to *regions*, so when the ROPE widens, "forest better" means a
larger gain, and in a real analysis $V$ should be re-elicited with the ROPE. Here the costs
are held fixed to isolate the ROPE's effect.
"""),
code("""
post = hier.idata.posterior
nu, delta0, sigma0 = (post[v].values.reshape(-1) for v in ("nu", "delta0", "sigma0"))
predictive = stats.t(nu, loc=delta0, scale=sigma0)


def next_dataset_probabilities(rope):
    return bc.Rope.coerce(rope).probabilities(predictive).mean(axis=0)


print("reproduces hier.probabilities at the fitted ROPE:",
      np.allclose(next_dataset_probabilities(ROPE), hier.probabilities))

rows = []
for width in (0.0, 0.005, 0.01, 0.02, 0.03):
    local = bc.correlated_ttest(scores, FIRST, SECOND, dataset=DATASET, rope=width)
    new = next_dataset_probabilities(width)
    rows.append({"ROPE": width,
                 **{f"{DATASET} P({r})": p for r, p in zip(("left", "rope", "right"),
                                                           local.probabilities)},
                 f"best for {DATASET}": local.expected_costs(COSTS, DECISIONS).best,
                 **{f"new P({r})": p for r, p in zip(("left", "rope", "right"), new)},
                 "best for a new problem": bc.expected_cost_decision(new, COSTS,
                                                                     DECISIONS).best})
pd.DataFrame(rows).set_index("ROPE").round(3)
"""),
md("""
For `moons_noisy` the choice flips at the narrow end. With a ROPE of 0 every difference,
however small, counts as a win or a loss: P(logistic better) is then 0.18, and with that risk
the A/B test is the cheapest action. From a ROPE of half a point on, the small differences
count as ties, which cost only the running cost, and deploying the forest wins. For a new
problem the A/B test wins throughout: the risk there comes from the wide spread between
datasets, which no ROPE of this size absorbs. A wider ROPE
moves probability from "forest better" into "equivalent"; whether that flips a decision
depends on how close the expected costs were (see the table at the end).

## How the decision depends on the costs

The expected costs are linear in the costs. Below, the extra running cost $c$ of the forest
varies from 0 to 5 (with $V = 5$, $a = 1$), using the correlated t-test's probabilities at
the ROPE of one point. Deploying is best while $c$ is small; in the middle band testing first
pays; when the forest is expensive enough, keeping the logistic regression is cheapest. The
break-even points are exact: every expected cost is a straight line in $c$.
"""),
code("""
def expected_costs(run_cost):
    return ttest.expected_costs(cost_matrix(run_cost=run_cost), DECISIONS).expected_costs


run_costs = np.linspace(0, 5, 201)
expected = np.array([expected_costs(c) for c in run_costs])
best = expected.argmin(axis=1)
# every expected cost is linear in c: intercept + slope * c; a switch is where the line of
# the best action crosses the line of the next best one
intercept, slope = expected_costs(0.0), expected_costs(1.0) - expected_costs(0.0)
switches = [((intercept[a] - intercept[b]) / (slope[b] - slope[a]), DECISIONS[a], DECISIONS[b])
            for a, b in zip(best[:-1], best[1:]) if a != b]

fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
for k, name in enumerate(DECISIONS):
    ax.plot(run_costs, expected[:, k], label=name, lw=2)
for c, before, after in switches:
    ax.axvline(c, color="grey", ls=":", lw=1)
    ax.text(c, ax.get_ylim()[1], f" c = {c:.2f}", va="top", fontsize=8)
ax.set_xlabel("extra running cost c of the forest (V = 5, a = 1)")
ax.set_ylabel("expected cost (negative = gain)")
ax.set_title(f"Expected cost of each action, {FIRST} vs {SECOND} on {DATASET}, ROPE {ROPE}")
ax.legend()
plt.show()
for c, before, after in switches:
    print(f"break-even at c = {c:.3f}: {before} -> {after}")
"""),
md("""
A table of the best action over a grid of running costs and ROPE widths, for the team's
dataset (correlated t-test) and for a new problem (hierarchical model, next dataset):
"""),
code("""
grid_costs = (0.5, 1.0, 2.0, 3.0, 4.0)
grid_ropes = (0.005, 0.01, 0.02, 0.03)


def best_table(probabilities_for):
    return pd.DataFrame(
        [[bc.expected_cost_decision(probabilities_for(w), cost_matrix(run_cost=c),
                                    DECISIONS).best for c in grid_costs] for w in grid_ropes],
        index=pd.Index(grid_ropes, name="ROPE"),
        columns=pd.Index(grid_costs, name="running cost c"))


print(f"Best action for {DATASET} (correlated t-test):")
display(best_table(lambda w: bc.correlated_ttest(scores, FIRST, SECOND, dataset=DATASET,
                                                 rope=w).probabilities))
print("Best action for a new problem (hierarchical model, next dataset):")
display(best_table(next_dataset_probabilities))
"""),
md("""
## Take-home

* Posterior probabilities of (left, rope, right) plug directly into a cost matrix:
  `result.expected_costs(costs, decisions)` for a test result, or
  `bc.expected_cost_decision(probabilities, costs, decisions)` for any probabilities.
* "Undecided at 0.95" is not a reason to do nothing: the cheapest action in expectation can
  be clear long before any probability reaches 0.95.
* Evidence about the problem at hand (the correlated t-test, or its shrunken hierarchical
  estimate) and about problems in general (the next-dataset prediction) can lead to different
  actions: here, deploy the forest on `moons_noisy`, but test first on a new problem.
* The decision depends on the costs and, through the regions, on the ROPE: show the
  sensitivity, as above.

Machine-readable summary (checked by the test suite):
"""),
code("""
import json

print("RESULT " + json.dumps({
    "first": FIRST, "second": SECOND, "dataset": DATASET, "rope": ROPE,
    "probabilities": [float(p) for p in ttest.probabilities],
    "costs": COSTS.tolist(), "decisions": DECISIONS,
    "expected_costs": [float(c) for c in decision.expected_costs], "best": decision.best}))
"""),
]

# ============================================================================ 04

NB4 = [
md("""
# From protocols to verdicts: scikit-learn estimators, Bayesian and classical tests

Notebooks 01 to 03 start from scores that were already computed. This one starts from the raw
material, three scikit-learn estimators and ten small datasets, and follows it through

1. a **protocol** that produces paired scores (`bayescomp.data.protocols`): repeated stratified
   10-fold cross-validation, five replications of 2-fold cross-validation (5x2cv), or a
   single held-out test set;
2. the **verdicts**, Bayesian and classical, on one dataset and across datasets:

| question | protocol | Bayesian | classical |
|---|---|---|---|
| two algorithms, one dataset | 3 x 10-fold CV | correlated t-test | Nadeau-Bengio corrected t-test (and the naive t-test it corrects) |
| two algorithms, one dataset | 5x2cv | | Dietterich's 5x2cv t-test, Alpaydin's 5x2cv F-test |
| two or more algorithms, one dataset | one train/test split | | McNemar's test, Cochran's Q |
| two algorithms, many datasets | 3 x 10-fold CV | hierarchical model | Wilcoxon signed-rank test |
| all algorithms, many datasets | 3 x 10-fold CV | `compare_all` (hierarchical model per pair) | Friedman test, Nemenyi, Holm-corrected Wilcoxon |

and asks where the verdicts agree, where they disagree, and why. The whole notebook runs in
well under a minute: the estimators are fast and the datasets small; the hierarchical model
is sampled by Stan (the compiled model is cached).
"""),
code("""
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
from bayescomp import classical, protocols
from bayescomp.models.compare import compare_all
from bayescomp.baselines.friedman import friedman_test, plot_critical_difference

pd.set_option("display.float_format", "{:.4g}".format)
pd.set_option("display.width", 160)
# pystan's progress bar looks for ipywidgets, which this notebook does not need
warnings.filterwarnings("ignore", message="IProgress not found")

FIRST, SECOND = "logistic", "tree"  # the pair followed in detail: differences logistic - tree
FOCUS = "wine"                      # the dataset of the one-dataset tests
ROPE = 0.01                         # one accuracy point
ALPHA = 0.05                        # significance level of the classical tests
SEED = 2024                         # the hierarchical model is sampled by MCMC
"""),
md("""
## The raw material: ten datasets and three estimators

Three real datasets that ship with scikit-learn and seven generated ones, all small (150 to
569 examples), so that every fit takes milliseconds:

* `breast_cancer`, `wine`, `iris`: classic benchmarks, nearly linearly separable;
* `moons`: two noisy half-moons, a curved boundary;
* `circles` and `quantiles`: one class inside the other, a boundary no straight line can draw;
* four `make_classification` problems: informative features, label noise (`flip_y=0.2`),
  many redundant (correlated) features, and three classes.
"""),
code("""
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
"""),
md("""
Three estimators with different biases: Gaussian naive Bayes (axis-aligned Gaussian classes),
a logistic regression after standardisation (a linear boundary), and a decision tree of depth
3 (axis-parallel cuts). Every estimator that draws random numbers gets an integer
`random_state`, so every number below is reproducible.
"""),
code("""
ESTIMATORS = {
    "naive_bayes": GaussianNB(),
    "logistic": make_pipeline(StandardScaler(), LogisticRegression()),
    "tree": DecisionTreeClassifier(max_depth=3, random_state=0),
}
"""),
md("""
## Protocol 1: repeated stratified 10-fold cross-validation

`protocols.cross_validate_scores` generates the splits of each dataset **once** and fits every
estimator (a fresh clone per split) on exactly the same training parts and scores it on the
same test parts: the scores are **paired** split by split, which every test below needs. Three
repetitions of stratified 10-fold cross-validation give 30 paired accuracies per estimator and
dataset, 900 fits in all. The function also records the correlation of the splits,
$\\rho = n_{test} / (n_{train} + n_{test}) = 1/10$ (Nadeau & Bengio 2003), which the
correlated t-test and the hierarchical model need.
"""),
code("""
cv = RepeatedStratifiedKFold(n_splits=10, n_repeats=3, random_state=0)
scores = protocols.cross_validate_scores(ESTIMATORS, DATASETS, cv=cv, scoring="accuracy")
print(scores.summary())
"""),
md("""
The mean accuracies already tell a story. On most datasets the three estimators are within a
few points of each other, with a different winner here and there; on `circles` and
`quantiles` the logistic regression is at chance level (about 0.43 and 0.52) because no
straight line separates a disc from a ring, while naive Bayes, whose class-conditional
Gaussians can have different variances, is near perfect.

## Bayesian verdict on each dataset: the correlated t-test

We follow the pair `logistic - tree` (positive differences favour the logistic regression).
The boxes show the 30 per-split differences of each dataset, the grey band the ROPE of one
accuracy point.
"""),
code("""
bplots.plot_differences(scores, FIRST, SECOND, rope=ROPE, sort=True)
plt.show()

ttests = bc.correlated_ttests(scores, FIRST, SECOND, rope=ROPE)
per_dataset = pd.concat([t.to_frame() for t in ttests], ignore_index=True).set_index("dataset")
per_dataset[["mean", "hdi_2.5%", "hdi_97.5%", "p_left", "p_rope", "p_right", "decision"]]
"""),
md("""
`p_left` is P(tree better by more than a point), `p_rope` P(practically equivalent),
`p_right` P(logistic better by more than a point). At the 0.95 threshold the logistic
regression wins on `breast_cancer` and `wine`, the tree on `circles`, `quantiles` and
`clf_3class`; the other five datasets are undecided. Undecided is not "equivalent": on
`moons` the tree is better with probability 0.90, on `clf_redundant` the logistic regression
with probability 0.86. No dataset has enough evidence for practical equivalence: 30 folds of
15 to 57 test examples measure an accuracy to a few points, not to one.

### The correlation correction

The 30 differences are not independent: the training sets of two splits share most of their
examples. The naive paired t-test ignores this; the Nadeau-Bengio correction, which the
correlated t-test builds in, inflates the variance of the mean from $s^2/n$ to
$(1/n + \\rho/(1-\\rho))\\, s^2$, here by a factor $1 + 30/9 \\approx 4.3$: the t statistic
shrinks by $\\sqrt{4.3} \\approx 2.1$.
"""),
code("""
naive = [classical.resampled_paired_ttest(d, first=FIRST, second=SECOND)
         for d in scores.differences(FIRST, SECOND)]
correction = pd.DataFrame({
    "mean difference": per_dataset["mean"],
    "naive t": [r.statistic for r in naive], "naive p": [r.p_value for r in naive],
    "corrected t": per_dataset["nb_t"], "corrected p": per_dataset["nb_p_value"],
    "P(logistic better)": per_dataset["p_right"], "P(tree better)": per_dataset["p_left"],
}, index=per_dataset.index)
correction
"""),
md("""
On `moons`, `clf_redundant` and `clf_3class` the naive test is "highly significant"
(p of 0.0007, 0.002 and below 1e-4) while the corrected test is not significant
(0.08 and 0.11) or much less so (0.02). The naive p-value can be made as small as one
likes by adding repetitions of the cross-validation, which reuse the same examples and bring
no new information; the corrected one cannot (notebook 01 shows this).
Without a ROPE, the Bayesian probability that the logistic regression is better is
one minus the corrected one-sided p-value: the corrected test and the correlated t-test are
two readings of the same model. What the Bayesian version adds is the ROPE, and a direct
statement: "the tree is better on `moons` with probability 0.90".

## Protocol 2: 5x2cv, and Dietterich's and Alpaydin's tests

Dietterich (1998) proposed five replications of 2-fold cross-validation: each replication
halves the data at random, trains on one half and tests on the other, then swaps. His 5x2cv
paired t-test uses all ten differences $p_i^{(j)}$ for the variance but only the first one,
$p_1^{(1)}$, in the numerator; Alpaydin's (1999) combined F-test uses all ten in both.
`protocols.five_by_two` runs this protocol (again one set of splits shared by all estimators)
and `protocols.as_5x2` arranges the differences as the (5, 2) array the tests expect.
"""),
code("""
scores_5x2 = protocols.five_by_two(ESTIMATORS, DATASETS, random_state=0)
differences_5x2 = protocols.as_5x2(scores_5x2, FIRST, SECOND, FOCUS)
print(f"{FIRST} - {SECOND} on {FOCUS}, 5x2cv (rows: replications, columns: folds):")
print(pd.DataFrame(differences_5x2, index=[f"replication {i + 1}" for i in range(5)],
                   columns=["fold 1", "fold 2"]).round(4).to_string())
t_5x2 = classical.paired_ttest_5x2cv(differences_5x2, first=FIRST, second=SECOND, alpha=ALPHA)
f_5x2 = classical.combined_ftest_5x2cv(differences_5x2, first=FIRST, second=SECOND,
                                       alpha=ALPHA)
focus_test = bc.correlated_ttest(scores, FIRST, SECOND, dataset=FOCUS, rope=ROPE)
print()
print(t_5x2.summary())
print(f_5x2.summary())
print()
print(focus_test.summary())
"""),
md("""
On `wine` the verdicts **disagree**. The correlated t-test on the 30 scores of 10-fold
cross-validation says the logistic regression is better by more than a point with probability
0.99 (corrected p = 0.007). Both 5x2cv tests fail to reject: t = 1.46 (p = 0.20) and
F = 2.31 (p = 0.18), although the ten 5x2cv differences average 0.088, even more than the
0.079 of 10-fold cross-validation. Why?

* **Half-size training sets.** 5x2cv trains on 89 of the 178 wines. The depth-3 tree is
  unstable on so few examples: the fifth replication gives differences of 0.011 and 0.191,
  and its $s_5^2 = 0.016$ dominates the variance estimate.
* **Few degrees of freedom.** The variance is estimated from five replications (df = 5), so
  the t-test needs |t| > 2.57 to reject at 0.05; the correlated t-test has df = 29.
* **What is compared.** 5x2cv compares the estimators trained on half the data, 10-fold
  cross-validation trained on 90%; a protocol is part of the question, not only a way of
  measuring.

The 5x2cv tests were designed to keep the type I error at its level (Dietterich 1998),
and pay for it with power: a non-rejection here is a lack of evidence, not evidence of
equivalence.

The same comparison on every dataset:
"""),
code("""
rows = []
for name, test in zip(scores.dataset_names, ttests):
    d = protocols.as_5x2(scores_5x2, FIRST, SECOND, name)
    rows.append({"dataset": name, "10x3 mean": test.posterior.mean,
                 "P(tree better)": test.probabilities[0],
                 "P(equivalent)": test.probabilities[1],
                 "P(logistic better)": test.probabilities[2],
                 "Bayesian decision": test.decision(), "corrected p": test.nb_p_value,
                 "5x2 mean": d.mean(), "p_1^(1)": d[0, 0],
                 "5x2cv t p": classical.paired_ttest_5x2cv(d).p_value,
                 "5x2cv F p": classical.combined_ftest_5x2cv(d).p_value})
verdicts = pd.DataFrame(rows).set_index("dataset")
verdicts
"""),
md("""
Where the evidence is strong (`breast_cancer`, `circles`, `quantiles`) every test agrees.
Elsewhere:

* **`iris`**: the 5x2cv t-test rejects (p = 0.04) but the F-test does not (p = 0.25), nor
  does the correlated t-test (P(logistic better) = 0.60). The t-test's numerator is the
  first difference only, $p_1^{(1)} = 0.093$, the largest of the ten; with another seed for
  the halvings another difference would come first. This dependence on one arbitrary
  difference is why Alpaydin proposed the F-test. On `clf_redundant` the same happens in a
  milder form: $p_1^{(1)} = 0.047$ (again the largest, 3.5 times the mean of the ten) gives
  the t-test p = 0.01; the F-test rejects only just (p = 0.04), and the correlated t-test is
  undecided (P(logistic better) = 0.86, corrected p = 0.11).
* **`moons`**: both 5x2cv tests reject, the correlated t-test is undecided at 0.95 with
  P(tree better) = 0.90. The ten 5x2cv differences happen to be very consistent (all between
  -0.033 and -0.067), which makes their variance small; the 10-fold test folds of 30 examples
  are noisier. The two protocols see the same direction; they differ on how sure to be.
* **`clf_3class`**: the correlated t-test says the tree is better (P = 0.98); the 5x2cv
  tests do not reject. Same reasons as on `wine`: smaller training sets, fewer degrees of
  freedom.

## Protocol 3: one held-out test set, McNemar's test and Cochran's Q

When a model is too expensive to train many times, Dietterich (1998) recommends McNemar's
test: train once, and compare the two classifiers' errors on one test set. Only the
examples on which they disagree count: $b$ (only the first right) and $c$ (only the second
right). `classical.correctness` turns predictions into the (examples x classifiers) 0/1 matrix
these tests take. We hold out half of `wine`, stratified.
"""),
code("""
X, y = DATASETS[FOCUS]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, stratify=y,
                                                    random_state=0)
predictions = {name: clone(estimator).fit(X_train, y_train).predict(X_test)
               for name, estimator in ESTIMATORS.items()}
correct = classical.correctness(y_test, *predictions.values())
names = list(predictions)
print("test accuracies:", dict(zip(names, correct.mean(axis=0).round(4))))
table = classical.mcnemar_table(correct[:, names.index(FIRST)], correct[:, names.index(SECOND)])
print(pd.DataFrame(table, index=[f"{FIRST} right", f"{FIRST} wrong"],
                   columns=[f"{SECOND} right", f"{SECOND} wrong"]).to_string())
print()
mcnemar = classical.mcnemar_from_correct(correct[:, names.index(FIRST)],
                                         correct[:, names.index(SECOND)], exact=True,
                                         first=FIRST, second=SECOND, alpha=ALPHA)
mcnemar_chi2 = classical.mcnemar_from_correct(correct[:, names.index(FIRST)],
                                              correct[:, names.index(SECOND)],
                                              first=FIRST, second=SECOND, alpha=ALPHA)
cochran = classical.cochran_q_test(correct, algorithms=names, alpha=ALPHA)
print(mcnemar.summary())
print(mcnemar_chi2.conclusion)
print()
print(cochran.summary())
"""),
md("""
The two classifiers disagree on 13 of the 89 test wines, and the logistic regression is the
one that is right on all 13 ($b = 13$, $c = 0$). With so few discordant examples the exact
binomial version is the right one (b + c below 25): p = 0.0002 (the continuity-corrected
chi-square gives 0.0009). Cochran's Q, the extension to the three classifiers, also rejects
equal accuracies (naive Bayes is nearly as good as the logistic regression here, the tree
is worse).

McNemar agrees with the correlated t-test on the direction, and is far more confident than
the 5x2cv tests. But it answers a narrower question: are **these two fitted models**
equally accurate on the population the test set was drawn from? The only randomness it
accounts for is the choice of test examples; a different training set would give a
different tree, and the depth-3 tree is just the kind of unstable learner for which that
matters. Dietterich (1998) found McNemar's test acceptable in type I error, but it says
nothing about the learning *algorithms* beyond this one training set. The cross-validation
protocols vary the training set; that is what they are for.

## Across datasets, classical: Friedman, Nemenyi and Holm-corrected Wilcoxon

The usual recipe for several algorithms on several datasets (Demšar 2006): rank the
algorithms on each dataset by their mean score, test with the Friedman test whether the
average ranks differ, and then compare pairs, either by the Nemenyi test (two algorithms
differ if their average ranks differ by more than the critical difference CD) or, as
Benavoli, Corani & Mangili (2016) advise, by Wilcoxon signed-rank tests on the dataset means
with Holm's correction. `friedman_test` runs all of it.
"""),
code("""
friedman = friedman_test(scores, alpha=ALPHA)
print(friedman.summary())
plot_critical_difference(friedman)
plt.show()
"""),
md("""
The Friedman test does not reject (chi-square 0.8, p = 0.67): the average ranks, 1.8 for
naive Bayes, 2.0 for the logistic regression and 2.2 for the tree, lie well within one
critical difference (CD = 1.05), so the diagram joins all three with one bar. No post-hoc test
finds a difference either: the Holm-corrected Wilcoxon p-values are 0.98, 0.73 and 0.98.

**What this does not say.** A non-significant Friedman test does not mean that the three
algorithms are equivalent, not even "on average". It means that ten datasets do not give
enough evidence that their *average ranks* differ. Ranks also throw away the sizes of the
differences: the tree beats the logistic regression by 39 points on `circles` and loses by
3 points on `clf_redundant`, and both count as one rank. The table shows the ranks next to
the mean accuracies:
"""),
code("""
ranks = pd.DataFrame(friedman.ranks, index=friedman.dataset_names,
                     columns=[f"rank {a}" for a in friedman.algorithms])
means = pd.DataFrame(friedman.mean_scores, index=friedman.dataset_names,
                     columns=[f"mean {a}" for a in friedman.algorithms])
pd.concat([means, ranks], axis=1)
"""),
md("""
Each algorithm is first somewhere and last somewhere: the ranking of the three depends on the
dataset, and the Friedman test, which asks whether one of them is *consistently* ranked
better, rightly finds no such algorithm. The question it cannot answer is the practical one:
on my next dataset, will it matter which one I pick?

## Across datasets, Bayesian: the hierarchical model for one pair

The hierarchical model (notebook 02) uses all 30 differences of every dataset, with their
uncertainty and correlation, and treats the datasets as a sample of problems. It estimates
the typical difference $\\delta_0$ and predicts the difference on the **next** dataset.

One sampler setting is written out here rather than left to its default. On `circles` and
`quantiles` the differences are 34 to 55 points, against a few points elsewhere: the
population looks like two clusters, and the posterior of $\\sigma_0$ and $\\nu$ (one wide
normal-like population, or a narrow one with heavy tails) mixes slowly. 3000 warm-up and
3000 sampling iterations per chain give these pairs enough effective draws; we state them
so that they are visible, here and in `compare_all` below. The diagnostics below check the
result.
"""),
code("""
FIT = dict(iter_warmup=3000, iter_sampling=3000)
hier = bc.hierarchical(scores, FIRST, SECOND, rope=ROPE, seed=SEED, **FIT)
print(hier.diagnostics.summary())
print()
print("delta0, the typical difference:")
print(hier.delta0[["mean", "hdi_low", "hdi_high", "p_left", "p_rope", "p_right"]].round(3)
      .to_string())
print()
print("the next dataset:")
print(pd.Series(hier.probabilities, index=hier.labels).round(3).to_string())
print("Wilcoxon signed-rank on the dataset means: p =", round(hier.baselines.wilcoxon.p_value, 4))
bplots.plot_posterior(hier, which="next")
plt.show()
"""),
md("""
The hierarchical model and the Wilcoxon test (p = 0.51) agree that there is no consistent
winner: $\\delta_0$ is negative on average (the two large losses of the logistic regression pull
it down) but its 95% HDI spans both sides of zero. They **disagree** on what this means. On
the next dataset the model gives

* P(tree better by more than a point) about 0.60,
* P(logistic better by more than a point) about 0.35,
* P(practically equivalent) only about 0.05.

So the two are almost certainly **not** equivalent on a new problem; which one wins depends on
the problem. A Wilcoxon p-value of 0.51 cannot say this: it cannot tell "equivalent" from
"different, in unpredictable directions". Because the ROPE is part of the model, the Bayesian
analysis can.

The shrinkage plot shows the per-dataset estimates: hollow, each dataset alone (the correlated
t-test); filled, the hierarchical estimate, pulled toward $\\delta_0$ where a dataset's own
evidence is weak.
"""),
code("""
bplots.plot_shrinkage(hier)
plt.show()
"""),
md("""
## All pairs: `compare_all`

`compare_all` runs the hierarchical model on every pair (with the same sampler settings; each
pair gets its own seed, spawned from `SEED`), and reports beside the Bayesian probabilities the
Wilcoxon signed-rank p-value of each pair with Holm's correction. The heatmap shows, for each
row and column, P(row better than column by more than the ROPE) on the next dataset.
"""),
code("""
pairs = compare_all(scores, rope=ROPE, seed=SEED, **FIT)
print(pairs.summary())
bplots.plot_probability_heatmap(pairs.probability_matrix(),
                                title="P(row better than column on the next dataset)")
plt.show()

# the frequentist column of compare_all is the Holm-corrected Wilcoxon test of friedman_test
both = pairs.table.merge(friedman.pairwise, on=["first", "second"])
print("Holm-corrected Wilcoxon p-values equal friedman_test's post-hoc ones:",
      np.allclose(both["p_value_corrected"], both["holm_p"]))
"""),
md("""
The `logistic - tree` row reproduces the single fit above up to Monte Carlo error (another
seed). The Holm-corrected p-values are the same as in `friedman_test`'s post-hoc table: the
classical side of `compare_all` *is* the Holm-corrected Wilcoxon test.

Reading the heatmap and the table together:

* **No pair reaches 0.95 in any region**, and no p-value is significant: both sides agree
  that no algorithm dominates.
* **The ROPE column separates the pairs.** P(equivalent on the next dataset) is about 0.05 for
  logistic vs tree, 0.11 for naive Bayes vs tree and 0.16 for naive Bayes vs logistic. These
  small numbers are the Bayesian answer to the question the Friedman test leaves open: on a
  new problem the choice of algorithm very probably matters, by more than a point, and the
  right choice depends on the problem (here visibly: whether the classes are nested, as in
  `circles` and `quantiles`, where the linear model fails).
* **naive Bayes vs tree** is the most lopsided pair (P(naive Bayes better) about 0.60,
  P(tree better) about 0.29), in line with naive Bayes's best average rank.

## Where the verdicts agree, where they disagree, and why

| situation | classical | Bayesian | why |
|---|---|---|---|
| large, consistent difference (`breast_cancer`, `circles`) | every test rejects | P(better) ≈ 1 | the data are clear; all methods see it |
| naive vs corrected t-test (`moons`, `clf_redundant`) | naive p < 0.01, corrected p ≈ 0.1 | P(better) 0.86 to 0.90, undecided | overlapping training sets make the 30 differences correlated; only the corrected test and the correlated t-test account for it |
| `wine`, 10-fold vs 5x2cv | 5x2cv t and F do not reject | P(logistic better) = 0.99 | 5x2cv trains on half the data, and its variance has 5 degrees of freedom: less power, and a slightly different question |
| `iris`, 5x2cv t vs F | t rejects, F does not | undecided (0.60) | the t-test's numerator is one arbitrary difference |
| `wine`, one test set | McNemar p = 0.0002 | (not applicable) | McNemar ignores the variability of training; it compares two fitted models, not two algorithms |
| many datasets | Friedman p = 0.67, nothing significant | P(equivalent on the next dataset) 0.05 to 0.16 | a p-value cannot distinguish "equivalent" from "it depends"; the ROPE and the predictive distribution can |

## Take-home

* A protocol is part of the question: 10-fold and 5x2cv train on different amounts of data,
  a single test set holds the training set fixed. `bayescomp.data.protocols` produces paired
  scores for each, with the correlation $\\rho$ the tests need.
* On one dataset, use the correlated t-test (or the corrected t-test): the naive t-test on
  cross-validation scores is overconfident. The 5x2cv tests are safe but weak; prefer the
  F-test to the t-test.
* Across datasets, a non-significant Friedman or Wilcoxon test says "no consistent winner",
  not "equivalent". The hierarchical model says how probable equivalence is on the next
  dataset, and here it is improbable.

Machine-readable summary (checked by the test suite):
"""),
code("""
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
    "next": [float(p) for p in hier.probabilities],
    "hierarchical_ok": bool(hier.diagnostics.ok),
    "pairs": [[row.first, row.second] for row in pairs.table.itertuples()],
    "pairs_p_value_corrected": [float(p) for p in pairs.table["p_value_corrected"]],
    "pairs_ok": bool(pairs.table["diagnostics_ok"].all())}))
"""),
]


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, cells in [("01_grid_search_one_dataset.ipynb", NB1),
                        ("02_two_classifiers_many_datasets.ipynb", NB2),
                        ("03_cost_sensitive_choice.ipynb", NB3),
                        ("04_protocols_to_verdicts.ipynb", NB4)]:
        nb = notebook(cells, name[:2])
        nbformat.validate(nb)
        nbformat.write(nb, out / name)
        print("wrote", out / name)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "notebooks")
