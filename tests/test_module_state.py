"""No module-level mutable state in the pipeline package: what a build shares lives in its Dagster
resource, so a run whose steps are separate processes (the UI's) behaves as `speedbook build`.

The scan reads every module's source: a function that mutates a name it does not bind itself
(a module global, or a name imported from another module), a `global` statement, and a memoising
decorator (`functools.cache`, `lru_cache`) are each state that outlives a run. The few allowed
ones hold what the code alone determines (a compiled stylesheet or schema), never a build's
inputs, and each says so below."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pipeline.support.settings import PACKAGE_DIR

MUTATORS = {
    "append",
    "appendleft",
    "extend",
    "insert",
    "remove",
    "pop",
    "popitem",
    "clear",
    "update",
    "setdefault",
    "add",
    "discard",
    "sort",
    "reverse",
}
MEMOISERS = {"cache", "lru_cache"}
# (module, name): why it is not state of a build
ALLOWED = {
    ("pipeline/extract/base.py", "_deferred"): "a thread's flag while a `with deferred()` runs",
    ("pipeline/extract/html.py", "_local"): "a thread's HTML parser and the XSLT of a constant",
    ("pipeline/extract/html.py", "_cached_column"): "a pure function of a table's headers",
    ("pipeline/warehouse/staging.py", "_counts_json"): "a pure function: its argument as JSON",
    ("pipeline/extract/openrouter_endpoints.py", "_price_of_text"): "a pure function of a text",
    ("pipeline/release/formatting.py", "timestamp"): "a pure function: a time as exports write it",
    ("pipeline/release/history.py", "_time"): "a pure function: an export's time text, parsed",
    ("pipeline/support/text.py", "_local"): "the XSLT compiled from a constant, per thread",
    ("pipeline/support/text.py", "_invisible"): "a character table computed from constants",
    ("pipeline/support/text.py", "_decode_entity"): "HTML entities decoded: a pure function",
    ("pipeline/support/text.py", "_remembered_clean_text"): "a pure function of a text",
    (
        "pipeline/warehouse/staging.py",
        "_local",
    ): "a thread's in-memory DuckDB for checks, kept empty",
    ("pipeline/raw/snapshots.py", "_file_mode"): "the process's umask, read once",
    ("pipeline/release/contracts.py", "validator"): "a packaged JSON Schema, compiled once",
    ("pipeline/release/templates.py", "_environment"): "packaged templates, compiled once",
    ("pipeline/warehouse/marts.py", "_history_as_written"): "a packaged SQL file, applied once",
    ("pipeline/dagster/runner.py", "os"): "DAGSTER_HOME, for Dagster code that looks it up",
}


def _bound(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """Names a function binds itself: parameters and anything it assigns, imports or loops over
    (nested functions and comprehensions included; over-approximating only hides nothing a
    module-level name could be)."""
    args = function.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def _root(node: ast.expr) -> str | None:
    """`a` of `a`, `a.b`, `a[1].c`."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _mutated(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, int]]:
    """(name, line) of each non-local name the function changes in place."""
    local = _bound(function)
    found = []
    for node in ast.walk(function):
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
        ):
            targets = [node.func.value]
        for target in targets:
            if isinstance(target, (ast.Attribute, ast.Subscript)) or isinstance(node, ast.Call):
                name = _root(target)
                if name is not None and name not in local and name != "self":
                    found.append((name, node.lineno))
    return found


def _decorator_name(node: ast.expr) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _outermost_functions(body: list[ast.stmt]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Module-level functions and methods. A nested function is read as part of the one that
    holds it, so a closure's change to its enclosing function's local is no finding."""
    found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(node)
        elif isinstance(node, ast.ClassDef):
            found += _outermost_functions(node.body)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            found += _outermost_functions(
                [n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt)]
            )
    return found


def findings(path: Path, relative: str) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            problems.append(f"{relative}:{node.lineno}: global {', '.join(node.names)}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                allowed = (relative, node.name) in ALLOWED
                if _decorator_name(decorator) in MEMOISERS and not allowed:
                    problems.append(f"{relative}:{node.lineno}: {node.name} is memoised")
    for function in _outermost_functions(tree.body):
        for name, line in _mutated(function):
            if (relative, name) not in ALLOWED:
                problems.append(f"{relative}:{line}: {function.name} changes {name!r} in place")
    return sorted(set(problems))


MODULES = sorted(PACKAGE_DIR.rglob("*.py"))


def test_the_scan_sees_every_module() -> None:
    assert len(MODULES) > 50
    assert any(path.name == "inventory.py" for path in MODULES)


@pytest.mark.parametrize(
    "path", MODULES, ids=lambda path: str(path.relative_to(PACKAGE_DIR.parent))
)
def test_no_module_level_mutable_state(path: Path) -> None:
    assert findings(path, str(path.relative_to(PACKAGE_DIR.parent))) == []


def test_the_scan_finds_each_kind_of_state(tmp_path: Path) -> None:
    """The scan itself: each way of keeping state across runs is found, a local is not."""
    source = tmp_path / "stateful.py"
    source.write_text(
        "from functools import cache\n"
        "import other\n"
        "_seen: set[str] = set()\n"
        "_cache = {}\n"
        "_reporter = print\n"
        "def remember(x):\n"
        "    _seen.add(x)\n"
        "    _cache[x] = 1\n"
        "    other.REGISTRY.update(x=1)\n"
        "    local = {}\n"
        "    local[x] = 1\n"
        "    local.update(y=2)\n"
        "def rebind(r):\n"
        "    global _reporter\n"
        "    _reporter = r\n"
        "@cache\n"
        "def load(path):\n"
        "    return path\n"
        "class Holder:\n"
        "    def keep(self, x):\n"
        "        self.items.append(x)\n",
        encoding="utf-8",
    )
    found = findings(source, "stateful.py")
    assert found == [
        "stateful.py:14: global _reporter",
        "stateful.py:17: load is memoised",
        "stateful.py:7: remember changes '_seen' in place",
        "stateful.py:8: remember changes '_cache' in place",
        "stateful.py:9: remember changes 'other' in place",
    ]


def test_the_known_caches_are_gone() -> None:
    import pipeline.raw.inventory as inventory
    import pipeline.sources.reviewed as reviewed
    import pipeline.support.progress as progress
    import pipeline.support.settings as settings
    import pipeline.support.timing as timing

    for name in ("_cache", "_reported", "cached_inventory", "unreported_problems", "clear_cache"):
        assert not hasattr(inventory, name), name
    assert not hasattr(settings, "METADATA_DIR")  # the folder is a setting, resolved per run
    assert not hasattr(timing, "_seconds") and not hasattr(timing, "reset")
    assert not hasattr(progress, "_reporter") and not hasattr(progress, "set_reporter")
    for function in (reviewed.load_claims, reviewed.load_platforms):
        assert not hasattr(function, "cache_info"), function.__name__
