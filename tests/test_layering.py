"""The package's dependencies point one way: down the pipeline, onto the shared layers below.

Every ``import`` in ``src/research_judge`` (type-only ones too: a type is a dependency) is read
from the source's syntax tree and mapped to the top-level package it names. A package may import
its own layer or the layers below it, never a layer above; and the package graph has no cycle.
A new package must be placed in ``LAYERS`` before it can be imported from anywhere.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "research_judge"

# Lowest first. A package may import packages of its own rank or below.
LAYERS: list[set[str]] = [
    # the foundation every layer may raise, read or format with
    {
        "errors",
        "exit_codes",
        "usage",
        "_version",
        "_canonical",
        "_files",
        "_format",
        "_text",
        "_lazy",
        "_toml",
        "_validation",
        "safety",
    },
    {"stats", "cost"},  # numbers: intervals and tests; prices, windows, token estimates
    {"clients"},  # one protocol, the providers and the layers around them
    {"sessions"},  # pipeline 1: the input
    {"judge"},  # pipeline 2: one session graded, the Result it makes
    {"baseline"},  # a judge of rules, not a model: reads requests back through the judge
    {"results"},  # pipeline 3: results files
    {"engine"},  # pipeline 4: many sessions
    {"validate", "compare"},  # pipeline 5: readers of results
    {"report", "label"},  # read validate and compare too; label: the labelling page
    {"harness", "ci"},  # the task harness; CI outputs of every reader
    {"api", "grading", "testing"},  # the Python API and what it shares with the CLI; fakes
    {"pytest"},  # the pytest plugin, over the API
    {"cli", "__main__"},  # the command line, over everything
    {"<root>"},  # the public face: lazily re-exports the API
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def _module(path: Path) -> list[str]:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _package(module: list[str]) -> str:
    return module[1] if len(module) > 1 else "<root>"


def _imports(path: Path) -> list[tuple[list[str], int]]:
    """The research_judge modules ``path`` imports, each with its line."""
    here = _module(path)
    package = here if path.name == "__init__.py" else here[:-1]
    found: list[tuple[list[str], int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name.split("."), node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                target = package[: len(package) - (node.level - 1)]
                target += node.module.split(".") if node.module else []
            else:
                target = (node.module or "").split(".")
            for alias in node.names:
                # `from research_judge import cli` imports the cli package; `... import grade`
                # imports a name of the package's public face.
                sub = [*target, alias.name]
                is_module = len(target) == 1 and (
                    (SRC / f"{alias.name}.py").exists() or (SRC / alias.name).is_dir()
                )
                found.append((sub if is_module else target, node.lineno))
    return [(t, line) for t, line in found if t[0] == "research_judge"]


def _edges() -> dict[tuple[str, str], list[str]]:
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        source = _package(_module(path))
        for target, line in _imports(path):
            dest = _package(target)
            if dest != source:
                edges[source, dest].append(f"{path.relative_to(SRC.parent)}:{line}")
    return edges


def test_every_package_has_a_layer() -> None:
    packages = {_package(_module(p)) for p in SRC.rglob("*.py")}
    assert packages - RANK.keys() == set(), "place each new package in LAYERS"


def test_no_package_imports_a_layer_above_it() -> None:
    upward = {
        f"{src} -> {dest}": where
        for (src, dest), where in _edges().items()
        if RANK.get(dest, -1) > RANK.get(src, len(LAYERS))
    }
    assert upward == {}


def test_the_package_graph_has_no_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for src, dest in _edges():
        graph[src].add(dest)
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            pytest.fail("import cycle: " + " -> ".join([*path[path.index(node) :], node]))
        if node in done:
            return
        for nxt in sorted(graph[node]):
            visit(nxt, [*path, node])
        done.add(node)

    for node in sorted(graph):
        visit(node, [])


def test_the_rule_sees_an_upward_import(tmp_path: Path) -> None:
    # The checker itself: a results module importing the engine is found, with its line.
    pkg = tmp_path / "research_judge" / "results"
    pkg.mkdir(parents=True)
    bad = pkg / "x.py"
    bad.write_text("from __future__ import annotations\nfrom ..engine import run\n")
    global SRC
    saved, SRC = SRC, tmp_path / "research_judge"
    try:
        assert _imports(bad) == [(["research_judge", "engine"], 2)]
    finally:
        SRC = saved
