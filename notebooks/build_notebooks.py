"""Builds the example notebooks' ``.ipynb`` files, without outputs, from their one source:
the jupytext percent-format ``.py`` files beside them (``# %%`` starts a code cell,
``# %% [markdown]`` a Markdown cell whose lines are commented out).

Run from the repository root: ``python notebooks/build_notebooks.py notebooks``.
``tests/test_notebooks.py`` checks that the committed ``.ipynb`` equal what this builds, so
edit the ``.py`` file and run this script; jupytext is not needed (``jupytext --sync`` reads
the same format, for those who edit in Jupyter).
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
HEADER = """# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---
"""
#: The notebooks built as .ipynb: every percent-format source in notebooks/.
NOTEBOOKS = ("01_grid_search_one_dataset", "02_two_classifiers_many_datasets",
             "03_cost_sensitive_choice", "04_protocols_to_verdicts",
             "05_ranking_and_sensitivity")


def read_percent(text: str) -> list:
    """The cells of a percent-format script: nbformat cells without ids."""
    cells, kind, lines = [], None, []

    def flush():
        if kind is None:
            return
        body = "\n".join(lines).strip("\n")
        if kind == "markdown":
            body = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#")
                             for line in body.split("\n"))
            cells.append(new_markdown_cell(body))
        else:
            cells.append(new_code_cell(body))

    lines_in = text.split("\n")
    if lines_in[0] == "# ---":   # the jupytext header: metadata only
        lines_in = lines_in[lines_in.index("# ---", 1) + 1:]
    for line in lines_in:
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        elif kind is not None:
            lines.append(line)
    flush()
    return cells


def write_percent(nb) -> str:
    """The percent-format script of a notebook (the inverse of :func:`read_percent`)."""
    parts = [HEADER]
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            body = "\n".join(f"# {line}" if line else "#" for line in cell.source.split("\n"))
            parts.append(f"# %% [markdown]\n{body}\n")
        else:
            parts.append(f"# %%\n{cell.source}\n")
    return "\n".join(parts)


def build(source: Path):
    """The notebook of a percent-format script, with stable cell ids (``<prefix>-NN``)."""
    cells = read_percent(source.read_text(encoding="utf-8"))
    for i, cell in enumerate(cells):
        cell["id"] = f"{source.name[:2]}-{i:02d}"  # stable ids: rebuilding gives the same file
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


def main(out: str) -> None:
    out = Path(out)
    for name in NOTEBOOKS:
        nbformat.write(build(out / f"{name}.py"), out / f"{name}.ipynb")
        print("wrote", out / f"{name}.ipynb")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "notebooks")
