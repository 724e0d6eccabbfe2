"""Classical tests for comparing classifiers on one dataset.

On one test set, from which examples each classifier gets right:

* :func:`mcnemar_test` (McNemar 1947), from the two discordant counts, or
  :func:`mcnemar_from_correct` from two correctness vectors;
* :func:`cochran_q_test` (Cochran 1950) and :func:`looney_f_test` (Looney 1988) for
  k classifiers, from an (n_examples x k) correctness matrix (see :func:`correctness`);
* :func:`two_proportion_test`, the z-test of two accuracies.

On the scores of repeated train/test splits:

* :func:`resampled_paired_ttest` and :func:`kfold_paired_ttest` (Dietterich 1998): the
  plain paired t-test of the per-split differences. Both are known to reject too often
  because the training sets overlap; :func:`bayescomp.correlated_ttest` corrects for that.
* :func:`paired_ttest_5x2cv` (Dietterich 1998) and :func:`combined_ftest_5x2cv`
  (Alpaydin 1999) on five replications of 2-fold cross-validation.

Every function returns a :class:`ClassicalTestResult` with the statistic, its degrees
of freedom, the p-value and a one-line conclusion at the chosen ``alpha``. The tests
across datasets (Friedman, Nemenyi) are in :mod:`bayescomp.friedman`.

References
----------
Q. McNemar (1947). Note on the sampling error of the difference between correlated
proportions or percentages. Psychometrika 12(2):153-157.

A. L. Edwards (1948). Note on the "correction for continuity" in testing the significance
of the difference between correlated proportions. Psychometrika 13(3):185-187.

W. G. Cochran (1950). The comparison of percentages in matched samples. Biometrika
37(3/4):256-266.

S. W. Looney (1988). A statistical technique for comparing the accuracies of several
classifiers. Pattern Recognition Letters 8(1):5-9.

T. G. Dietterich (1998). Approximate statistical tests for comparing supervised
classification learning algorithms. Neural Computation 10(7):1895-1923.

E. Alpaydin (1999). Combined 5 x 2 cv F test for comparing supervised classification
learning algorithms. Neural Computation 11(8):1885-1892.

L. I. Kuncheva (2004). Combining Pattern Classifiers. Wiley, chapter 2 (McNemar's test,
Cochran's Q and Looney's F-test).

S. Raschka (2018). Model evaluation, model selection, and algorithm selection in machine
learning. arXiv:1811.12808, section 4.
"""
from bayescomp.baselines.classical_result import ClassicalTestResult
from bayescomp.baselines.one_test_set import (cochran_q_test, correctness, looney_f_test,
                                              mcnemar_from_correct, mcnemar_table, mcnemar_test,
                                              two_proportion_test)
from bayescomp.baselines.resampled_ttests import (combined_ftest_5x2cv, kfold_paired_ttest,
                                                  paired_ttest_5x2cv, resampled_paired_ttest)

__all__ = [
    "ClassicalTestResult", "correctness", "mcnemar_table", "mcnemar_test",
    "mcnemar_from_correct", "cochran_q_test", "looney_f_test", "two_proportion_test",
    "resampled_paired_ttest", "kfold_paired_ttest", "paired_ttest_5x2cv",
    "combined_ftest_5x2cv",
]
