"""`python -m benchmarks` argument handling, with the scenarios replaced: bad arguments are
refused before any work starts, a named workdir is kept and a temporary one deleted; and the
benchmark is no `speedbook` command and no part of the installed package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT

import benchmarks.__main__ as bench_main
from benchmarks.readers import summary
from pipeline.cli import COMMAND_MODULES

SMALL = ("--models", "1", "--days", "1", "--polls-per-day", "1")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Replace the poll scenario by a stub that leaves a file in its work folder."""
    seen: list[Path] = []

    def fake_run(spec: Any, workdir: Path, **options: Any) -> dict[str, Any]:
        seen.append(workdir)
        (workdir / "corpus").mkdir()
        return {"models": spec.models, "readers": options["with_readers"]}

    monkeypatch.setattr(bench_main.poll, "run", fake_run)
    monkeypatch.setattr(bench_main.poll, "table", lambda result: "bench table")
    return seen


@pytest.mark.parametrize(
    ("option", "value"), [("--models", "0"), ("--days", "-1"), ("--polls-per-day", "0")]
)
def test_a_bad_size_is_refused_before_anything_is_made(
    calls: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    sizes = dict(zip(SMALL[::2], SMALL[1::2], strict=True)) | {option: value}
    workdir = tmp_path / "work"
    args = ["poll", *(a for pair in sizes.items() for a in pair), "--workdir", str(workdir)]
    with pytest.raises(SystemExit) as stopped:
        bench_main.main(args)
    assert stopped.value.code == 2
    assert f"{option} must be a positive whole number, got {value}" in capsys.readouterr().err
    assert calls == [] and not workdir.exists()


def test_a_busy_workdir_is_refused(calls: list[Path], tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(SystemExit):
        bench_main.main(["poll", *SMALL, "--workdir", str(tmp_path)])
    assert calls == [] and (tmp_path / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_a_named_workdir_is_kept_a_temporary_one_deleted(
    calls: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "out.json"
    assert bench_main.main(["poll", *SMALL, "--readers", "--json", str(output)]) == 0
    assert json.loads(output.read_text()) == {"models": 1, "readers": True}
    assert "bench table" in capsys.readouterr().out
    assert not calls[-1].exists()
    named = tmp_path / "work"
    assert bench_main.main(["poll", *SMALL, "--workdir", str(named)]) == 0
    assert (named / "corpus").is_dir()


def test_help_runs_as_a_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "poll", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--polls-per-day" in done.stdout and "--readers" in done.stdout


def test_the_benchmark_is_not_a_command_nor_in_the_package() -> None:
    assert "bench" not in COMMAND_MODULES
    assert not (REPO_ROOT / "pipeline" / "bench").exists()
    # the wheel ships the package only (pyproject.toml: packages = ["pipeline"])
    assert 'packages = ["pipeline"]' in (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_readers_count_failures_and_half_built_states(tmp_path: Path) -> None:
    old, new = [3, 10, 2], [3, 12, 2]
    seen = [
        (0.1, old, ""),
        (0.1, new, ""),
        (0.1, [3, 11, 2], ""),  # neither: a half-built state
        (0.2, None, "TransactionContext Error: database is locked"),
    ]
    out = tmp_path / "reader-0.json"
    out.write_text(json.dumps(seen), encoding="utf-8")
    found = summary([out], old, new)
    assert (found["queries"], found["failures"], found["half_built_states"]) == (4, 1, 1)
    assert found["not_built_yet"] == 0
    # before a lake's first build, "does not exist" is that state, not a failure
    out.write_text(json.dumps([(0.1, None, "Table with name x does not exist"), (0.1, new, "")]))
    found = summary([out], None, new)
    assert (found["failures"], found["not_built_yet"], found["half_built_states"]) == (0, 1, 0)
