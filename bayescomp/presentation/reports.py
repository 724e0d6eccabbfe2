"""Markdown, LaTeX (booktabs) and HTML renderings of results, written once for all of them.

A result mixes in :class:`bayescomp.reportable.Reportable` and implements ``_report()``,
returning a title, a few lines of headline facts and a table (a DataFrame); the mixin's
``to_markdown``, ``to_latex`` and ``_repr_html_`` call the functions here. The renderers need
neither ``tabulate`` nor ``jinja2``.
"""
from __future__ import annotations

import html

import pandas as pd

from bayescomp.formatting import format_number

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}


def column_kind(name) -> str:
    """How :func:`bayescomp.formatting.format_number` formats a column, from its name:
    ``"probability"`` for ``P(...)`` and ``p_left``/``p_rope``/``p_right`` columns,
    ``"p_value"`` for p-values, ``"number"`` otherwise."""
    name = str(name).lower()
    if "p_value" in name or "p-value" in name or name.endswith(" p") or name.startswith("p ("):
        return "p_value"
    if "p(" in name or any(key in name for key in ("p_left", "p_rope", "p_right")):
        return "probability"
    return "number"


def _cells(frame: pd.DataFrame, digits: int) -> tuple[list[str], list[list[str]]]:
    frame = frame.reset_index() if frame.index.name or not isinstance(frame.index, pd.RangeIndex) \
        else frame
    header = [str(c) for c in frame.columns]
    kinds = [column_kind(c) for c in header]
    # a missing cell (NaN) is left blank in a table
    rows = [[format_number(v, kind, digits, nan="") for v, kind in zip(row, kinds)]
            for row in frame.itertuples(index=False)]
    return header, rows


def text_table(frame: pd.DataFrame, digits: int = 4, index: bool = True) -> str:
    """A plain-text table for ``summary()``, its cells formatted as in the reports."""
    frame = frame.copy()
    for column in frame.columns:
        kind = column_kind(column)
        frame[column] = [format_number(v, kind, digits, nan="") for v in frame[column]]
    return frame.to_string(index=index)


def markdown_table(frame: pd.DataFrame, digits: int = 4) -> str:
    """A GitHub-flavoured markdown table."""
    header, rows = _cells(frame, digits)
    escape = lambda text: text.replace("|", r"\|")  # noqa: E731
    lines = ["| " + " | ".join(map(escape, header)) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(map(escape, row)) + " |" for row in rows]
    return "\n".join(lines)


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def latex_table(frame: pd.DataFrame, caption: str | None = None, label: str | None = None,
                digits: int = 4) -> str:
    """A booktabs ``table`` environment: text columns left-aligned, numbers right-aligned."""
    header, rows = _cells(frame, digits)
    numeric = [all(_is_number(r[i]) for r in rows) for i in range(len(header))]
    spec = "".join("r" if n else "l" for n in numeric)
    body = [" & ".join(latex_escape(c) for c in header) + r" \\", r"\midrule"]
    body += [" & ".join(latex_escape(c) for c in row) + r" \\" for row in rows]
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", *body, r"\bottomrule",
              r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return text == ""
    return True


def to_markdown(result, digits: int = 4) -> str:
    """A result (:class:`bayescomp.reportable.Reportable`) as markdown: a heading, the
    verdicts, the headline facts and the table."""
    title, facts, table = result._report()
    # a blank line after each: separate paragraphs, not one run-on line
    verdicts = [line for sentence in result.verdicts() for line in (f"**{sentence}**", "")]
    return "\n".join([f"### {title}", "", *verdicts,
                      *[f"- {fact}" for fact in facts], "", markdown_table(table, digits)])


def to_latex(result, caption: str | None = None, label: str | None = None,
             digits: int = 4) -> str:
    """The table of a result as a booktabs LaTeX table; the default caption is the title
    followed by the verdicts."""
    title, _, table = result._report()
    if caption is None:
        caption = " ".join([f"{title}.", *result.verdicts()])
    return latex_table(table, caption, label, digits)


def to_html(result) -> str:
    """A result as an HTML fragment (Jupyter's rich display): title, verdicts in bold, the
    headline facts and the table."""
    title, facts, table = result._report()
    verdicts = "".join(f"<p><b>{html.escape(v)}</b></p>" for v in result.verdicts())
    items = "".join(f"<li>{html.escape(fact)}</li>" for fact in facts)
    header, rows = _cells(table, 4)
    body = pd.DataFrame(rows, columns=header).to_html(index=False, border=0)
    return f"<div><h4>{html.escape(title)}</h4>{verdicts}<ul>{items}</ul>{body}</div>"
