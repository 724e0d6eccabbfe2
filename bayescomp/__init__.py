"""bayescomp: Bayesian comparison of learning algorithms.

One dataset: :func:`correlated_ttest` (Corani & Benavoli 2015). Many datasets: the
hierarchical model of Corani et al. (2017) and the classical baselines. Differences are
always ``first - second``; "left" means the second algorithm is better by more than the
ROPE, "right" that the first is. The ROPE is in the units of the scores.
"""
from . import classical, datasets, friedman, plots, protocols, simulate
from .baselines import (BaselinesResult, baselines, bayesian_sign_test, bayesian_signed_rank_test,
                        paired_ttest, sign_test, wilcoxon_test)
from .compare import AllPairsResult, adjust_p_values, compare_all
from .correlated import CorrelatedTTestResult, correlated_ttest, correlated_ttests
from .data import (DatasetScores, Scores, concat, from_arrays, from_long, from_wide, read_csv,
                   rho_from_split)
from .decisions import CostDecision, decide, expected_cost_decision
from .diagnostics import Diagnostics, diagnose
from .exceptions import (BayescompWarning, ConstantDifferencesWarning, RetryWarning,
                         SamplingWarning)
from .hierarchical import PRIORS, HierarchicalPrior, HierarchicalResult, hierarchical
from .rope import Rope
from .sklearn_io import from_cross_validate, from_cv_results, rho_from_cv

__version__ = "0.1.0"

__all__ = [
    "AllPairsResult", "adjust_p_values", "compare_all",
    "BaselinesResult", "classical", "friedman", "plots", "protocols", "Diagnostics", "HierarchicalPrior", "HierarchicalResult", "PRIORS",
    "baselines", "bayesian_sign_test", "bayesian_signed_rank_test", "datasets", "diagnose",
    "hierarchical", "paired_ttest", "sign_test", "simulate", "wilcoxon_test",
    "BayescompWarning", "ConstantDifferencesWarning", "CorrelatedTTestResult", "CostDecision",
    "DatasetScores", "RetryWarning", "Rope", "SamplingWarning", "Scores", "concat",
    "correlated_ttest", "correlated_ttests", "decide", "expected_cost_decision", "from_arrays",
    "from_cross_validate", "from_cv_results", "from_long", "from_wide", "read_csv",
    "rho_from_cv", "rho_from_split",
]
