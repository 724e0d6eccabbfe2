"""Classical and simple Bayesian tests the hierarchical model is compared with: tests across
datasets on the mean differences (``across_datasets``), tests on one test set
(``one_test_set``), resampled t-tests (``resampled_ttests``), the Friedman test with its
post-hoc tests (``friedman``), and their common result and text helpers
(``classical_result``). ``classical`` gathers the one-test-set and resampled tests under
the name ``bayescomp.classical``."""
