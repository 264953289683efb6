"""`speedbook build` refuses bad options with one line, before it takes the lock or builds."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _no_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bad input must be refused before any build starts."""
    import pipeline.dagster.envelope

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("a build started")

    monkeypatch.setattr(pipeline.dagster.envelope, "execute", fail)


@pytest.mark.parametrize(
    ("as_of", "message"),
    [
        ("yesterday", "is not a date (YYYY-MM-DD) or ISO 8601 time"),
        ("2026-13-01", "is not a date (YYYY-MM-DD) or ISO 8601 time"),
        ("0001-01-01T00:00:00+05:00", "is out of range"),
        ("9999-12-31T23:00:00-05:00", "is out of range"),
        ("2999-01-01", "is in the future"),
    ],
)
def test_a_bad_as_of_is_one_line(settings, cli, monkeypatch, as_of, message):
    _no_build(monkeypatch)
    result = cli("build", "--as-of", as_of)
    assert result.status == 2
    assert message in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize("order", [("--as-of", "2026-06-30", "--live"), ("--live", "--as-of=x")])
def test_as_of_with_live_is_refused_saying_why(settings, cli, monkeypatch, order):
    """Both were accepted: the fetch ran, then the build left out all it fetched."""
    _no_build(monkeypatch)
    import pipeline.cli.fetch

    def no_fetch(*args: object, **kwargs: object) -> None:
        raise AssertionError("a fetch started")

    monkeypatch.setattr(pipeline.cli.fetch, "fetch_and_report", no_fetch)
    result = cli("build", *order)
    assert result.status == 2
    assert result.err.startswith("speedbook build: error: --as-of and --live cannot go together")
    assert "as it stood on DATE" in result.err and "fetches the sources now" in result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize("wait", ["nan", "inf", "-inf", "-1", "soon"])
def test_a_bad_wait_is_refused(settings, cli, monkeypatch, wait):
    _no_build(monkeypatch)
    result = cli("build", f"--wait={wait}")  # `=`: argparse reads a bare -1 as an option
    assert result.status == 2
    assert "argument --wait:" in result.err and repr(wait) in result.err


@pytest.mark.parametrize("wait", ["0", "2.5"])
def test_a_finite_wait_is_taken(wait):
    from pipeline.cli.build import wait_seconds

    assert wait_seconds(wait) == float(wait)


def test_strict_and_keep_going_exclude_each_other(settings, cli, monkeypatch):
    _no_build(monkeypatch)
    result = cli("build", "--strict", "--keep-going")
    assert result.status == 2
    assert "not allowed with argument" in result.err


def _modules_after(*lines: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running `lines`."""
    program = "\n".join(["import json, sys", *lines, "print(json.dumps(sorted(sys.modules)))"])
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


def test_the_command_line_parser_imports_no_dagster_and_no_release_code():
    """Every command module is imported to build the parser: what only `run` needs stays in
    `run` (pipeline/cli/__init__.py), or every `speedbook build` pays for it."""
    loaded = _modules_after("from pipeline.cli import build_parser", "build_parser()")
    heavy = {"dagster", "pandas", "pandera", "pyarrow", "pydantic", "jinja2"}
    assert sorted({name.split(".")[0] for name in loaded} & heavy) == []
    assert [name for name in loaded if name.startswith("pipeline.release")] == []


def test_a_command_named_loads_its_own_module_only():
    """`speedbook build` (every half hour, mostly with nothing new) builds its parser from its
    own module: DuckDB (`sql`, `sources`) and the identity rules (`resolve`) stay unloaded, and
    `--help` or a mistyped command still sees every command."""
    loaded = _modules_after(
        "from pipeline.cli import _commands_for, build_parser",
        "build_parser(_commands_for(['build', '--force']))",
    )
    assert {"pipeline.cli.build"} <= loaded
    assert not loaded & {"duckdb", "pipeline.cli.sql", "pipeline.normalise.entities"}
    from pipeline.cli import COMMAND_MODULES, _commands_for

    assert sorted(_commands_for(["--help"])) == sorted(COMMAND_MODULES)
    assert sorted(_commands_for(["bild"])) == sorted(COMMAND_MODULES)
