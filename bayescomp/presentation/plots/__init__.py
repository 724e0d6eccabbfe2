"""Plots of the posteriors, with matplotlib (and arviz for the sampler's diagnostics).

Every function takes ``ax=None`` (a new figure is made when it is None) and returns the
Axes it drew on, except :func:`plot_diagnostics`, which returns arviz's array of Axes.
Differences are ``first - second`` as everywhere in the package (see :mod:`bayescomp.rope`):
left of the ROPE the second algorithm is better, right of it the first. Titles, axis labels
and legends name the algorithms.

The artists that carry the content have a ``gid`` (``artist.get_gid()``), so that code and
tests can find them: ``"rope"`` (the shaded ROPE), ``"posterior"`` (the density curve or the
line of a point mass), ``"probability"`` (the texts of the three probabilities), ``"points"``
(the simplex's draws), ``"vertex"``, ``"share"`` and ``"decision"`` (the simplex's corner
texts, their secondary shares of draws and its headline), ``"raw_interval"``,
``"raw_mean"``, ``"shrunk_interval"``, ``"shrunk_mean"`` and ``"delta0"`` (the forest plot),
``"box"`` and ``"strip"`` (one per dataset in :func:`plot_differences`; ``"quartiles"`` and
``"median"`` in its compact form past 40 datasets), ``"value"`` (the heatmap's and the
all-pairs figure's numbers), ``"unreliable"`` (hatched unreliable pairs), ``"segment"`` (the
three parts of each pair's bar in the all-pairs figure and the three-region heatmap) and
``"name"`` (the all-pairs figure's algorithm names at both ends of each bar, and the named
extreme datasets of a compact per-dataset figure); ``"prior:<name>"`` and ``"coincide"`` in
the sensitivity figure, ``"worth_rank"`` and ``"observed_rank"`` in the ranking figure;
``"rope_band"``, ``"hdi"``, ``"mean"``, ``"equivalent_group"``, ``"undecided_group"`` and
``"algorithm"`` in the Bayesian critical-difference diagram.

Every name (dataset, algorithm) is drawn with the installed fonts, falling back from the
default font to any installed CJK or symbol font; a character no font has is written as
``<U+XXXX>`` instead of an empty box and a matplotlib warning (:func:`clean_text`).

Every figure of the package is drawn here, in submodules by figure family
(``posterior``, ``simplex``, ``datasets``, ``pairs``, ``diagnostics``, ``ranking`` for the
Plackett-Luce ranking and the prior sensitivity, ``critical_difference`` for the Friedman
test, ``bayesian_cd`` for its Bayesian sibling of the joint model of K algorithms,
``validation`` for the simulation study and SBC); ``bayescomp.presentation.plots.<name>``
reaches them all.
"""
from bayescomp.presentation.plots.bayesian_cd import (equivalence_groups, plot_bayesian_cd,
                                                      undecided_groups)
from bayescomp.presentation.plots.common import REGION_COLORS, clean_text
from bayescomp.presentation.plots.critical_difference import plot_critical_difference
from bayescomp.presentation.plots.datasets import plot_differences, plot_shrinkage
from bayescomp.presentation.plots.diagnostics import plot_diagnostics
from bayescomp.presentation.plots.pairs import plot_all_pairs, plot_probability_heatmap
from bayescomp.presentation.plots.posterior import plot_posterior
from bayescomp.presentation.plots.ranking import plot_ranking, plot_sensitivity
from bayescomp.presentation.plots.simplex import from_simplex, plot_simplex, to_simplex

__all__ = ["plot_posterior", "plot_simplex", "plot_shrinkage", "plot_differences",
           "plot_diagnostics", "plot_probability_heatmap", "plot_all_pairs", "to_simplex",
           "from_simplex", "REGION_COLORS", "clean_text", "plot_critical_difference",
           "plot_ranking", "plot_sensitivity", "plot_bayesian_cd", "equivalence_groups",
           "undecided_groups"]
