"""What a result implements to be rendered, and the renderings every result gets from it.

Results (models, baselines) hold data; their text, Markdown, LaTeX and HTML are written in
:mod:`bayescomp.presentation`. A result mixes in :class:`Reportable`, implements
``_report()`` and ``verdicts()``, and gets ``to_markdown``, ``to_latex`` and ``_repr_html_``,
each importing its renderer when called: the result's module never imports the
presentation layer, which sits above it.
"""
from __future__ import annotations

from bayescomp.decisions import THRESHOLD
from bayescomp.summarised import Summarised


class Reportable(Summarised):
    """Adds ``to_markdown``, ``to_latex`` and ``_repr_html_`` to a result with ``_report()``
    (and, as every :class:`~bayescomp.summarised.Summarised` result, its summary as its text).

    A result's :meth:`verdicts` (one sentence each, from
    :func:`bayescomp.presentation.verdicts.verdict`) open every rendering: bold lines in
    Markdown and HTML, the caption in LaTeX.
    """

    def _report(self):
        """(title, headline facts as a list of str, table as a DataFrame)."""
        raise NotImplementedError

    def verdicts(self, threshold: float = THRESHOLD) -> list[str]:
        """The verdicts of the result, one sentence each (none by default)."""
        return []

    def to_markdown(self, digits: int = 4) -> str:
        """The result as markdown: a heading, the verdicts, the headline facts and the table."""
        from bayescomp.presentation.reports import to_markdown
        return to_markdown(self, digits)

    def to_latex(self, caption: str | None = None, label: str | None = None,
                 digits: int = 4) -> str:
        """The table of the result as a booktabs LaTeX table (needs ``\\usepackage{booktabs}``);
        the default caption is the title followed by the verdicts."""
        from bayescomp.presentation.reports import to_latex
        return to_latex(self, caption, label, digits)

    def _repr_html_(self) -> str:
        from bayescomp.presentation.reports import to_html
        return to_html(self)
