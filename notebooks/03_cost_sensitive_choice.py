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
# # A cost-sensitive choice: keep the cheap model or deploy the expensive one?
#
# A team serves a **logistic regression** in production. A colleague proposes a **random
# forest**: it may be more accurate, but it is more expensive to serve and maintain. The
# posterior probabilities of the Bayesian tests are exactly what a decision needs: combined with
# the costs of each action in each state of the world, they give the **expected cost** of
# every action, and the rational choice is the cheapest.
#
# This notebook
#
# 1. writes the costs as a matrix over the three regions (left, rope, right),
# 2. takes the probabilities from the correlated t-test on the team's dataset, from the
#    hierarchical model (which also uses 16 related datasets), and from the hierarchical
#    model's prediction for a brand-new problem,
# 3. shows how the decision changes with the ROPE and with the costs.
#
# The scores are the example that ships with `bayescomp` (10 x 10-fold cross-validation of
# four classifiers on 17 datasets). The team's problem is the dataset `moons_noisy`; in your
# own work the scores would come from `bc.from_cross_validate` or `bc.from_cv_results`.

# %%
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

# %% [markdown]
# ## The costs
#
# Differences are `forest - logistic`, so the three regions are
#
# * **left**: logistic regression better by more than one point,
# * **rope**: practically equivalent,
# * **right**: the forest better by more than one point.
#
# The actions, with costs in thousands of euros over the model's life (negative costs are
# gains), relative to keeping things as they are:
#
# | action | left (logistic better) | rope (equivalent) | right (forest better) |
# |---|---|---|---|
# | keep the logistic regression | 0 | 0 | 0 |
# | deploy the forest | $c + V$ | $c$ | $c - V$ |
# | run an A/B test, then decide | $a$ | $a$ | $a + c - V$ |
#
# * $c$ = 1: the extra cost of serving and maintaining the forest;
# * $V$ = 5: the value of a practically relevant change of accuracy (gained if the forest is
#   better, lost if it is worse);
# * $a$ = 1: the cost of an A/B test in production, which (we assume, for simplicity) reveals
#   the truth, after which the forest is deployed only if it is better.
#
# Keeping the logistic regression when the forest is better is an *opportunity* cost: it
# appears as the gain $V - c$ the other actions can earn.

# %%
DECISIONS = ["keep logistic", "deploy forest", "A/B test first"]


def cost_matrix(run_cost=1.0, value=5.0, ab_cost=1.0):
    """Costs of each decision (rows) in each region (left, rope, right)."""
    c, v, a = run_cost, value, ab_cost
    return np.array([[0.0, 0.0, 0.0],
                     [c + v, c, c - v],
                     [a, a, a + c - v]])


COSTS = cost_matrix()
pd.DataFrame(COSTS, index=DECISIONS,
             columns=["left: logistic better", "rope: equivalent", "right: forest better"])

# %% [markdown]
# ## Evidence from the team's dataset: the correlated t-test
#
# The 100 paired accuracies on `moons_noisy`: the forest is ahead by 1.7 points on average,
# barely more than the ROPE.

# %%
ttest = bc.correlated_ttest(scores, FIRST, SECOND, dataset=DATASET, rope=ROPE)
print(ttest.summary())
bplots.plot_posterior(ttest)
plt.show()

# %% [markdown]
# P(forest better) ≈ 0.64, P(equivalent) ≈ 0.28, P(logistic better) ≈ 0.07. At the usual 0.95
# threshold the test is **undecided**, and a threshold rule would stop here. A decision does not
# need certainty; it needs the expected cost of each action:
# $$E[\text{cost}(d)] = \sum_{r \in \{left, rope, right\}} \text{cost}(d, r)\, P(r).$$

# %%
decision = ttest.expected_costs(COSTS, DECISIONS)
print(decision.summary())

# %% [markdown]
# Deploying the forest has the lowest expected cost (a gain of about 1.8), ahead of the A/B test
# (about 1.6): with only a 7% chance that the forest is worse, the A/B test is not worth its
# price. Note that the decision rests on all three probabilities and on the costs, not on
# whether any probability crossed 0.95.
#
# ## Evidence from related problems: the hierarchical model
#
# The team has also benchmarked the two models on 16 other problems. The hierarchical model uses
# all 17 datasets; it gives two further sets of probabilities:
#
# * the **shrunken estimate for `moons_noisy`** ($\delta_i$ of that dataset, informed by the
#   other 16): the relevant one for the decision about this problem;
# * the **next dataset**: for a *new* problem on which no cross-validation has been run yet.

# %%
hier = bc.hierarchical(scores, FIRST, SECOND, rope=ROPE, seed=SEED)
print(hier.diagnostics.summary())
shrunk = hier.datasets.loc[DATASET, ["p_left", "p_rope", "p_right"]].to_numpy(dtype=float)

sources = {
    f"t-test, {DATASET}": ttest.probabilities,
    f"hierarchical, {DATASET}": shrunk,
    "hierarchical, new problem": hier.next_dataset.probabilities,
}
rows = []
for name, probabilities in sources.items():
    choice = bc.expected_cost_decision(probabilities, COSTS, DECISIONS)
    rows.append({"evidence": name, **dict(zip(("P(left)", "P(rope)", "P(right)"), probabilities)),
                 **{f"E[{d}]": c for d, c in zip(DECISIONS, choice.expected_costs)},
                 "best": choice.best})
evidence = pd.DataFrame(rows).set_index("evidence")
evidence

# %% [markdown]
# * For `moons_noisy`, the shrunken estimate agrees with the dataset's own test (forest better
#   with probability about 0.67): **deploy the forest**.
# * For a *new* problem, the model predicts a forest win with probability about 0.73, but the
#   probability that logistic regression is better by more than a point is about 0.23. The
#   differences between datasets are very spread (from -1.7 points on breast cancer to +54 on
#   circles), so the predictive distribution for a new problem is wide and keeps substantial
#   mass below -1 point. With that much risk the A/B test is the cheapest action: **test
#   first** on a new problem.
#
# ## How the decision depends on the ROPE
#
# The ROPE defines the regions, so it changes the probabilities and hence the expected costs.
# The next-dataset probabilities for any ROPE can be computed from the same posterior draws
# without refitting: for each draw of $(\delta_0, \sigma_0, \nu)$, the masses of the
# Student-t $t_\nu(\delta_0, \sigma_0)$ left of, inside and right of the ROPE, averaged over
# the draws. (At the fitted ROPE this reproduces `hier.next_dataset.probabilities`.)
#
# A caveat: the costs attach to *regions*, so when the ROPE widens, "forest better" means a
# larger gain, and in a real analysis $V$ should be re-elicited with the ROPE. Here the costs
# are held fixed to isolate the ROPE's effect.

# %%
post = hier.idata.posterior
nu, delta0, sigma0 = (post[v].values.reshape(-1) for v in ("nu", "delta0", "sigma0"))
predictive = stats.t(nu, loc=delta0, scale=sigma0)


def next_dataset_probabilities(rope):
    return bc.Rope.coerce(rope).probabilities(predictive).mean(axis=0)


print("reproduces hier.next_dataset.probabilities at the fitted ROPE:",
      np.allclose(next_dataset_probabilities(ROPE), hier.next_dataset.probabilities))

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

# %% [markdown]
# For `moons_noisy` the choice flips at the narrow end. With a ROPE of 0 every difference,
# however small, counts as a win or a loss: P(logistic better) is then 0.18, and with that risk
# the A/B test is the cheapest action. From a ROPE of half a point on, the small differences
# count as ties, which cost only the running cost, and deploying the forest wins. For a new
# problem the A/B test wins throughout: the risk there comes from the wide spread between
# datasets, which no ROPE of this size absorbs. A wider ROPE
# moves probability from "forest better" into "equivalent"; whether that flips a decision
# depends on how close the expected costs were (see the table at the end).
#
# ## How the decision depends on the costs
#
# The expected costs are linear in the costs. Below, the extra running cost $c$ of the forest
# varies from 0 to 5 (with $V = 5$, $a = 1$), using the correlated t-test's probabilities at
# the ROPE of one point. Deploying is best while $c$ is small; in the middle band testing first
# pays; when the forest is expensive enough, keeping the logistic regression is cheapest. The
# break-even points are exact: every expected cost is a straight line in $c$.

# %%
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

# %% [markdown]
# A table of the best action over a grid of running costs and ROPE widths, for the team's
# dataset (correlated t-test) and for a new problem (hierarchical model, next dataset):

# %%
grid_costs = (0.5, 1.0, 2.0, 3.0, 4.0)
grid_ropes = (0.005, 0.01, 0.02, 0.03)


def best_table(probabilities_for):
    return pd.DataFrame(
        [[bc.expected_cost_decision(probabilities_for(w), cost_matrix(run_cost=c),
                                    DECISIONS).best for c in grid_costs] for w in grid_ropes],
        index=pd.Index(grid_ropes, name="ROPE"),
        columns=pd.Index(grid_costs, name="running cost c"))


print(f"Best action for {DATASET} (correlated t-test):")
print(best_table(lambda w: bc.correlated_ttest(scores, FIRST, SECOND, dataset=DATASET,
                                               rope=w).probabilities).to_string())
print("Best action for a new problem (hierarchical model, next dataset):")
print(best_table(next_dataset_probabilities).to_string())

# %% [markdown]
# ## Take-home
#
# * Posterior probabilities of (left, rope, right) plug directly into a cost matrix:
#   `result.expected_costs(costs, decisions)` for a test result, or
#   `bc.expected_cost_decision(probabilities, costs, decisions)` for any probabilities.
# * "Undecided at 0.95" is not a reason to do nothing: the cheapest action in expectation can
#   be clear long before any probability reaches 0.95.
# * Evidence about the problem at hand (the correlated t-test, or its shrunken hierarchical
#   estimate) and about problems in general (the next-dataset prediction) can lead to different
#   actions: here, deploy the forest on `moons_noisy`, but test first on a new problem.
# * The decision depends on the costs and, through the regions, on the ROPE: show the
#   sensitivity, as above.
#
# Machine-readable summary (checked by the test suite):

# %%
import json

print("RESULT " + json.dumps({
    "first": FIRST, "second": SECOND, "dataset": DATASET, "rope": ROPE,
    "probabilities": [float(p) for p in ttest.probabilities],
    "costs": COSTS.tolist(), "decisions": DECISIONS,
    "expected_costs": [float(c) for c in decision.expected_costs], "best": decision.best}))
