"""Warnings the package raises, so that users can filter them by kind."""


class BayescompWarning(UserWarning):
    """Base class of the package's warnings."""


class ConstantDifferencesWarning(BayescompWarning):
    """The differences of two algorithms are identical on every split of a dataset, or vary so
    little that its noise is set by the floor of the scores' resolution, not by its splits."""


class SamplingWarning(BayescompWarning):
    """The Stan sampler reported a problem (divergences, high R-hat, low ESS, ...)."""


class RetryWarning(BayescompWarning):
    """A Stan fit failed its diagnostics and was run again with safer settings."""


class InputWarning(BayescompWarning):
    """The input is legal but probably not what was meant: too few scores on a dataset, a
    ROPE that contains every difference, or a ROPE tiny next to the scores (percentages
    compared with a ROPE meant for fractions)."""
