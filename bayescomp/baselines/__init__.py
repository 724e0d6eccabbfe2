"""Classical and simple Bayesian tests the hierarchical model is compared with: tests across
datasets on the mean differences (``across_datasets``, the Bayesian ones in
``bayesian_tests``), tests on one test set (``one_test_set``), resampled t-tests
(``resampled_ttests``), the Friedman test with its post-hoc tests (``friedman``), the
corrections for multiple comparisons (``multiple_testing``), and their common results and
text helpers (``common``, ``classical_result``). Import each test from its module."""
