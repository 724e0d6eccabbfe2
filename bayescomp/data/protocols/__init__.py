"""Paired scores from running several scikit-learn estimators on the same splits.

Every test in the package assumes that column ``j`` of every algorithm comes from the same
train/test split (the scores are *paired*) and needs the correlation ``rho`` of the
differences of two splits. The functions here produce such :class:`~bayescomp.data.scores.Scores`:

* :func:`cross_validate_scores`: (repeated) cross-validation with one splitter. The splits
  of each dataset are generated **once** and the same list is used for every estimator, so
  the pairing does not rely on every estimator drawing the same random numbers.
* :func:`five_by_two` and :func:`as_5x2`: five replications of 2-fold cross-validation for
  Dietterich's 5x2cv t-test and Alpaydin's combined F-test
  (:func:`bayescomp.baselines.resampled_ttests.paired_ttest_5x2cv`,
  :func:`~bayescomp.baselines.resampled_ttests.combined_ftest_5x2cv`).
* :func:`nested_cross_validate_scores`: hyper-parameters chosen by an inner grid search on the
  training part of each outer split only; the outer test scores are the paired scores.
* :func:`holistic_splits` and :func:`holistic_cross_validate_scores`: holistic N-fold
  cross-validation, with a training, a validation and a test part in every rotation and the
  training size (in folds) as a parameter.

``rho`` is the mean over the splits actually used of ``n_test / (n_train + n_test)``
(Nadeau & Bengio 2003): ``1/k`` for k-fold cross-validation.

scikit-learn is an optional dependency: it is imported inside the functions, so
``import bayescomp`` works without it. Estimators are cloned (:func:`sklearn.base.clone`)
for every split, so nothing fitted leaks from one split to the next; the results are
reproducible when the splitters and the estimators have integer ``random_state``.
Fits run through joblib (``n_jobs``) and the results do not depend on ``n_jobs``: each task
gets its split as data, not a random seed.

References
----------
C. Nadeau and Y. Bengio (2003). Inference for the generalization error. Machine Learning
52(3):239-281.

T. G. Dietterich (1998). Approximate statistical tests for comparing supervised
classification learning algorithms. Neural Computation 10(7):1895-1923.

E. Alpaydin (1999). Combined 5 x 2 cv F test for comparing supervised classification
learning algorithms. Neural Computation 11(8):1885-1892.

G. C. Cawley and N. L. C. Talbot (2010). On over-fitting in model selection and subsequent
selection bias in performance evaluation. Journal of Machine Learning Research 11:2079-2107.
"""
from bayescomp.data.protocols.common import REFITS  # noqa: F401 (the refit choices of the holistic protocol)
from bayescomp.data.protocols.cross_validation import as_5x2, cross_validate_scores, five_by_two
from bayescomp.data.protocols.holistic import (holistic_cross_validate_scores, holistic_folds,
                                               holistic_rotations, holistic_splits)
from bayescomp.data.protocols.nested import nested_cross_validate_scores

__all__ = [
    "cross_validate_scores", "five_by_two", "as_5x2", "nested_cross_validate_scores",
    "holistic_folds", "holistic_rotations", "holistic_splits", "holistic_cross_validate_scores",
]
