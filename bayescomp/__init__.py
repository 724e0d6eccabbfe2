"""bayescomp: Bayesian comparison of learning algorithms.

One dataset: :func:`correlated_ttest` (Corani & Benavoli 2015). Many datasets: the
hierarchical model of Corani et al. (2017) and the classical baselines. Differences are
always ``first - second``; "left" means the second algorithm is better by more than the
ROPE, "right" that the first is. The ROPE is in the units of the scores.
"""
import importlib
import sys
import types
import warnings

# ArviZ announces its refactor with a FutureWarning on import, once a day; users of this
# package can do nothing about it (the package pins what it uses), so it is not shown.
warnings.filterwarnings("ignore", message=r"\s*ArviZ is undergoing", category=FutureWarning)

# Imported at once: the light modules (numpy, pandas, scipy.stats underneath) that a
# correlated t-test or the baselines need.
from .baselines.across_datasets import (BaselinesResult, baselines, bayesian_sign_test, bayesian_signed_rank_test,
                        paired_ttest, sign_test, wilcoxon_test)
from .models.correlated import CorrelatedTTestResult, correlated_ttest, correlated_ttests
from .data.readers import from_arrays, from_long, from_wide, read_csv
from .data.scores import DatasetScores, Scores, concat, rho_from_split
from .decisions import CostDecision, decide, expected_cost_decision
from .exceptions import (BayescompWarning, ConstantDifferencesWarning, RetryWarning,
                         SamplingWarning)
from .rope import Rope
from .data.sklearn_io import from_cross_validate, from_cv_results, rho_from_cv

# Imported on first use (module __getattr__, PEP 562): these bring arviz, xarray, joblib,
# matplotlib or scikit-learn, seconds of start-up that `bayescomp --help` or a correlated
# t-test should not pay. Name -> module that defines it.
_LAZY = {
    "compare_all": ".models.compare",
    "adjust_p_values": ".baselines.multiple_testing",
    "AllPairsResult": ".models.all_pairs_result",
    "compare_many": ".models.joint",
    "JointResult": ".models.joint_result",
    **{name: ".models.paper_analysis" for name in ("PaperAnalysis", "paper_analysis")},
    **{name: ".models.diagnostics" for name in ("Diagnostics", "diagnose")},
    **{name: ".models.hierarchical_prior" for name in ("PRIORS", "HierarchicalPrior")},
    "HierarchicalResult": ".models.hierarchical_result",
    "hierarchical": ".models.hierarchical",
    "rank_algorithms": ".models.ranking", "RankingResult": ".models.ranking_result",
    "SensitivityResult": ".models.sensitivity_result",
    "sensitivity": ".models.sensitivity_analysis",
}
# Modules kept as attributes of the package under their earlier flat names: name -> module.
_LAZY_MODULES = {"datasets": ".data.datasets", "friedman": ".baselines.friedman",
                 "plots": ".presentation.plots", "protocols": ".data.protocols",
                 "simulate": ".validation.simulate"}


def __getattr__(name):
    if name in _LAZY_MODULES:
        value = importlib.import_module(_LAZY_MODULES[name], __name__)
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # the next access is a plain lookup
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES))


class _Package(types.ModuleType):
    """This package's module type: importing the submodule ``bayescomp.hierarchical`` (done
    lazily, from anywhere) would make Python set the package attribute ``hierarchical`` to
    that module, hiding the function of the same name; such a set is ignored here, and
    ``bc.hierarchical`` stays the function (the module is in ``sys.modules``)."""

    def __setattr__(self, name, value):
        if name == "hierarchical" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__version__ = "0.1.0"

__all__ = [
    "AllPairsResult", "adjust_p_values", "compare_all", "compare_many", "JointResult", "PaperAnalysis", "paper_analysis",
    "BaselinesResult", "friedman", "plots", "protocols", "Diagnostics", "HierarchicalPrior", "HierarchicalResult", "PRIORS",
    "baselines", "bayesian_sign_test", "bayesian_signed_rank_test", "datasets", "diagnose",
    "hierarchical", "paired_ttest", "sign_test", "simulate", "wilcoxon_test",
    "BayescompWarning", "ConstantDifferencesWarning", "CorrelatedTTestResult", "CostDecision",
    "DatasetScores", "RetryWarning", "Rope", "SamplingWarning", "Scores", "concat",
    "correlated_ttest", "correlated_ttests", "decide", "expected_cost_decision", "from_arrays",
    "from_cross_validate", "from_cv_results", "from_long", "from_wide", "read_csv",
    "rho_from_cv", "rho_from_split",
    "RankingResult", "rank_algorithms", "SensitivityResult", "sensitivity",
]
