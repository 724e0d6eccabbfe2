"""The package's layering, as ARCHITECTURE.md states it, checked on the source.

Each module's imports are read with ``ast``: those that run when the module is imported (the
module's top level, including ``if TYPE_CHECKING:``, ``try`` and ``with`` blocks and class
bodies), not those inside functions, which run on first use. Known answers for the checker
itself: a tiny synthetic package with a deliberately bad import, an import cycle and an
import inside a function (allowed), written to ``tmp_path``.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

#: the repository's sources, not the installed copy: a non-editable install (CI's) puts the
#: package in site-packages, without ARCHITECTURE.md beside it
REPOSITORY = Path(__file__).resolve().parents[1]
PACKAGE_DIR = REPOSITORY / "bayescomp"
ARCHITECTURE = REPOSITORY / "ARCHITECTURE.md"
MAX_LINES = 400

#: the concepts every layer shares (top-level modules of the package)
SHARED = {"rope", "decisions", "exceptions", "annotations", "formatting", "reportable",
          "summarised", "arguments"}
#: ARCHITECTURE.md's "may import" column: layer -> the other layers its modules may import at
#: module level (a layer always may import itself). "api" is the package's ``__init__`` and
#: ``__main__``; "shared" the modules in SHARED.
MAY_IMPORT = {
    "api": {"shared", "data", "sampling", "baselines", "models", "validation", "presentation",
            "cli"},
    "shared": set(),
    "data": {"shared"},
    "sampling": set(),
    "baselines": {"shared", "data"},
    "models": {"shared", "data", "sampling", "baselines"},
    "validation": {"shared", "data", "sampling", "baselines", "models"},
    "presentation": {"shared", "data"},
    "cli": {"shared", "data", "sampling", "baselines", "models", "validation", "presentation"},
}


# --------------------------------------------------------------------------- the checker

def module_name(path: Path, root: Path, package: str) -> str:
    parts = [package, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module is imported."""
    found = []

    def visit(statements):
        for node in statements:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.append(node)
            elif isinstance(node, (ast.If, ast.For, ast.While)):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                visit(node.orelse)
                visit(node.finalbody)
                for handler in node.handlers:
                    visit(handler.body)
            elif isinstance(node, (ast.With, ast.ClassDef)):
                visit(node.body)
    visit(tree.body)
    return found


def import_graph(root: Path, package: str) -> dict[str, dict[str, int]]:
    """Module -> {module of the package it imports at module level: line of the import}."""
    files = {module_name(path, root, package): path for path in sorted(root.rglob("*.py"))}
    graph = {}
    for name, path in files.items():
        own_package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = {}
        for node in module_level_imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = own_package.split(".")[:len(own_package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module
                # `from pkg import sub` imports the submodule; `from mod import name` the module
                found = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in files else source
                         for alias in node.names]
            for target in found:
                if target == package or target.startswith(package + "."):
                    targets.setdefault(target, node.lineno)
        graph[name] = targets
    return graph


def long_modules(root: Path) -> dict[str, int]:
    """The modules under ``root`` longer than MAX_LINES: relative path -> lines."""
    lengths = {path.relative_to(root).as_posix(): len(path.read_text().splitlines())
               for path in sorted(root.rglob("*.py"))}
    return {path: n for path, n in lengths.items() if n > MAX_LINES}


def layer_of(module: str, package: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "api"
    return "shared" if parts[1] in SHARED else parts[1]


def layering_violations(root: Path, package: str, may_import: dict) -> list[str]:
    """One line per module-level import that crosses the layers in a way not allowed."""
    problems = []
    for module, targets in import_graph(root, package).items():
        layer = layer_of(module, package)
        for target, line in sorted(targets.items()):
            imported = layer_of(target, package)
            if imported != layer and imported not in may_import.get(layer, set()):
                problems.append(f"{module} (line {line}) imports {target}: {layer} may not "
                                f"import {imported}")
    return problems


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def connect(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in graph:
                continue
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            connect(node)
    return cycles


# --------------------------------------------------------------------------- the package

def test_every_module_imports_only_what_its_layer_may():
    problems = layering_violations(PACKAGE_DIR, "bayescomp", MAY_IMPORT)
    assert not problems, "imports ARCHITECTURE.md's table does not allow:\n" + "\n".join(problems)


def test_no_import_cycle_at_module_level():
    cycles = import_cycles(import_graph(PACKAGE_DIR, "bayescomp"))
    assert not cycles, "modules that import one another at module level: " + "; ".join(
        " <-> ".join(cycle) for cycle in cycles)


def test_every_module_is_at_most_400_lines():
    assert long_modules(PACKAGE_DIR) == {}


def test_the_table_here_is_the_table_in_architecture_md():
    """Each row of ARCHITECTURE.md's table names its layer first and, in its last cell, in
    backticks, the layers it may import (``shared`` for the shared modules)."""
    rows = {}
    for line in ARCHITECTURE.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        first = re.findall(r"`([^`]+)`", cells[0])[0]
        layer = ("api" if first.startswith("bayescomp/") else
                 "shared" if first.removesuffix(".py") in SHARED else first.strip("/"))
        if layer == "stan":   # Stan programs, no Python
            continue
        allowed = {name.strip("/").removesuffix(".py") for name in re.findall(r"`([^`]+)`", cells[2])}
        rows[layer] = allowed
    assert rows == MAY_IMPORT


# --------------------------------------------------------------------------- known answers

def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_checker_names_a_bad_import_and_ignores_one_inside_a_function(tmp_path):
    root = tmp_path / "toypkg"
    _write(root, {
        "__init__.py": "",
        "rope.py": "",
        "models/__init__.py": "",
        # a model that imports the presentation layer: at the top, for type checking only,
        # and (allowed) inside a method
        "models/result.py": ("from typing import TYPE_CHECKING\n"
                             "from toypkg.rope import *\n"
                             "if TYPE_CHECKING:\n"
                             "    from toypkg.presentation import text\n"
                             "def summary():\n"
                             "    from toypkg.presentation.text import render\n"),
        "models/fit.py": "from . import result\nfrom ..data import scores\n",
        "data/__init__.py": "", "data/scores.py": "",
        "presentation/__init__.py": "",
        "presentation/text.py": "from ..rope import *\n",
    })
    problems = layering_violations(root, "toypkg", MAY_IMPORT)
    assert problems == ["toypkg.models.result (line 4) imports toypkg.presentation.text: "
                        "models may not import presentation"]
    graph = import_graph(root, "toypkg")
    assert graph["toypkg.models.fit"] == {"toypkg.models.result": 1, "toypkg.data.scores": 2}
    assert import_cycles(graph) == []


def test_the_checker_finds_an_import_cycle(tmp_path):
    root = tmp_path / "toypkg"
    _write(root, {
        "__init__.py": "",
        "sampling/__init__.py": "from .cache import entries\n",
        "sampling/cache.py": "from toypkg.sampling import stan_file\n",
        "sampling/engine.py": "def run():\n    from toypkg import sampling\n",
    })
    assert import_cycles(import_graph(root, "toypkg")) == [
        ["toypkg.sampling", "toypkg.sampling.cache"]]


def test_the_checker_reports_only_modules_over_400_lines(tmp_path):
    _write(tmp_path, {"full.py": "x = 1\n" * MAX_LINES, "sub/over.py": "x = 1\n" * (MAX_LINES + 1),
                      "sub/no_newline_at_end.py": "x = 1\n" * (MAX_LINES - 1) + "x = 1"})
    assert long_modules(tmp_path) == {"sub/over.py": MAX_LINES + 1}
