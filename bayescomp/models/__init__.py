"""The Bayesian models: the correlated t-test on one dataset (``correlated``), all pairs of
algorithms (``compare``), the hierarchical model across datasets (``hierarchical``: entry
point and result; ``hierarchical_program``: the adapter to its Stan program, with
``likelihood`` and ``nu_prior``; ``reference``: the published program, for checks), the
Plackett-Luce ranking (``ranking``), the prior-sensitivity analysis
(``sensitivity_analysis``) and the sampler diagnostics (``diagnostics``).

Submodules are imported on first use (they bring arviz); ``bayescomp`` re-exports the
public entry points.
"""
