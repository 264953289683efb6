"""The package's layers, enforced: a module imports only from its own layer or the layers below
it, in the order data moves (sources, raw, extract, fetch, normalise, warehouse, release, dagster,
cli), with `support` and `schema` below them all. Parsing, normalising and exporting import no
Dagster. Read from the source, not by importing it, so a lazy import inside a function counts."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "pipeline"
BASE = ("support", "schema")
ORDER = (
    "sources",
    "raw",
    "extract",
    "fetch",  # live fetching reads a catalogue's parser to choose what to poll
    "normalise",
    "warehouse",
    "release",
    "dagster",
    "cli",
)
RANK = {**dict.fromkeys(BASE, 0), **{layer: i + 1 for i, layer in enumerate(ORDER)}}
NO_DAGSTER = ("sources", "raw", "extract", "fetch", "normalise", "warehouse", "release")


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def _layer(path: Path) -> str | None:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else None


def test_every_layer_imports_only_from_below():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = _layer(path)
        if layer is None:
            continue
        assert layer in RANK, f"{path}: a package of no layer; add it to ORDER or BASE"
        for line, module in _imports(path):
            parts = module.split(".")
            if parts[0] != "pipeline" or len(parts) < 2 or parts[1] not in RANK:
                continue
            if RANK[parts[1]] > RANK[layer] or (layer in BASE and parts[1] not in BASE):
                wrong.append(f"{path.relative_to(REPO_ROOT)}:{line} ({layer}) imports {module}")
    assert wrong == [], "\n".join(wrong)


def test_the_pure_layers_import_no_dagster():
    wrong = [
        f"{path.relative_to(REPO_ROOT)}:{line}"
        for layer in NO_DAGSTER
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for line, module in _imports(path)
        if module.split(".")[0] == "dagster"
    ]
    assert wrong == [], wrong


def test_the_layer_check_sees_a_wrong_import(tmp_path: Path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from pipeline.dagster.graph import build_definitions\n")
    assert (2, "pipeline.dagster.graph") in _imports(module)


def _defined(path: Path) -> set[str]:
    """The names a module's top level binds (definitions, assignments, imports)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.If | ast.Try):  # TYPE_CHECKING blocks, guarded imports
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    names |= {(a.asname or a.name).split(".")[0] for a in inner.names}
    return names


def _module_path(module: str) -> Path | None:
    base = REPO_ROOT / Path(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


@pytest.mark.e2e
def test_every_name_imported_from_the_package_exists():
    """`from pipeline.x import name`, in the package, the tests and the benchmarks, names
    something x defines, or a submodule of x: read from the source, so an import inside a
    function that no test runs is checked too (a moved constant once broke `speedbook fetch`
    this way)."""
    missing = []
    checked = [*PACKAGE.rglob("*.py"), *(REPO_ROOT / "tests").glob("*.py")]
    for path in sorted([*checked, *(REPO_ROOT / "benchmarks").glob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
                continue
            if node.module != "pipeline" and not node.module.startswith("pipeline."):
                continue
            target = _module_path(node.module)
            if target is None:
                missing.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}: no {node.module}")
                continue
            defined = _defined(target)
            for alias in node.names:
                if alias.name in defined or _module_path(f"{node.module}.{alias.name}"):
                    continue
                missing.append(
                    f"{path.relative_to(REPO_ROOT)}:{node.lineno}: {node.module} has no "
                    f"{alias.name}"
                )
    assert missing == []
