"""Warnings the package raises, so that users can filter them by kind."""


class BayescompWarning(UserWarning):
    """Base class of the package's warnings."""


class ConstantDifferencesWarning(BayescompWarning):
    """The differences of two algorithms are identical on every split of a dataset."""


class SamplingWarning(BayescompWarning):
    """The Stan sampler reported a problem (divergences, high R-hat, low ESS, ...)."""


class RetryWarning(BayescompWarning):
    """A Stan fit failed its diagnostics and was run again with safer settings."""
