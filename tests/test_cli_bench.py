"""`speedbook bench` argument handling, with the benchmark itself replaced: bad arguments are
refused before any work starts, and only the temporary folder the command made is deleted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult

import pipeline.bench.run as bench_run

Cli = Callable[..., CliResult]
SMALL = ("--models", "1", "--providers", "1", "--days", "1")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Replace the benchmark by a stub that leaves a file in its work folder."""
    seen: list[Path] = []

    def fake_run_bench(spec: Any, workdir: Path, progress: Any = None) -> dict[str, Any]:
        seen.append(workdir)
        (workdir / "corpus").mkdir()
        (workdir / "corpus" / "page.html").write_text("generated")
        return {"spec": {"models": spec.models}}

    monkeypatch.setattr(bench_run, "run_bench", fake_run_bench)
    monkeypatch.setattr(bench_run, "render", lambda result: "bench table")
    return seen


@pytest.mark.parametrize(
    ("option", "value"), [("--models", "0"), ("--providers", "0"), ("--days", "-1")]
)
def test_a_bad_size_is_refused_before_anything_is_made(
    cli: Cli, calls: list[Path], tmp_path: Path, option: str, value: str
) -> None:
    sizes = dict(zip(SMALL[::2], SMALL[1::2], strict=True)) | {option: value}
    workdir = tmp_path / "work"
    result = cli("bench", *(a for pair in sizes.items() for a in pair), "--workdir", str(workdir))
    assert result.status == 2
    assert f"{option} must be a positive whole number, got {value}" in result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    assert calls == [] and not workdir.exists()


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing/results.json", "folder {tmp}/missing does not exist"),
        ("a/b/results.json", "folder {tmp}/a/b does not exist"),
        ("existing-folder", "is a folder"),
    ],
)
def test_an_unwritable_json_target_is_refused_before_the_run(
    cli: Cli, calls: list[Path], tmp_path: Path, target: str, message: str
) -> None:
    (tmp_path / "existing-folder").mkdir()
    result = cli("bench", *SMALL, "--json", str(tmp_path / target))
    assert result.status == 2
    assert message.format(tmp=tmp_path) in result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    assert calls == []  # nothing generated, nothing run


def test_a_json_file_that_cannot_be_written_after_the_run_is_one_line(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()

    def run_then_lose_the_folder(spec: Any, workdir: Path, progress: Any = None) -> dict[str, Any]:
        out.rmdir()  # the folder disappears while the benchmark runs
        return {}

    monkeypatch.setattr(bench_run, "run_bench", run_then_lose_the_folder)
    monkeypatch.setattr(bench_run, "render", lambda result: "bench table")
    result = cli("bench", *SMALL, "--json", str(out / "results.json"))
    assert result.status == 2
    assert "bench table" in result.out  # the figures were printed before the write failed
    assert f"--json {out / 'results.json'}: cannot write" in result.err


def test_json_is_written(cli: Cli, calls: list[Path], tmp_path: Path) -> None:
    result = cli("bench", *SMALL, "--json", str(tmp_path / "results.json"))
    assert result.status == 0, result.err
    assert (tmp_path / "results.json").read_text() == '{\n  "spec": {\n    "models": 1\n  }\n}\n'


def test_a_workdir_you_name_is_kept(cli: Cli, calls: list[Path], tmp_path: Path) -> None:
    workdir = tmp_path / "mine"
    result = cli("bench", *SMALL, "--workdir", str(workdir))
    assert result.status == 0, result.err
    assert calls == [workdir]
    assert (workdir / "corpus" / "page.html").read_text() == "generated"


def test_the_temporary_folder_is_deleted_unless_keep(cli: Cli, calls: list[Path]) -> None:
    assert cli("bench", *SMALL).status == 0
    assert not calls[-1].exists()
    assert cli("bench", *SMALL, "--keep").status == 0
    kept = calls[-1]
    try:
        assert (kept / "corpus" / "page.html").exists()
    finally:
        import shutil

        shutil.rmtree(kept)


@pytest.mark.parametrize("content", ["file", "folder with a file"])
def test_a_workdir_that_is_a_file_or_not_empty_is_refused(
    cli: Cli, calls: list[Path], tmp_path: Path, content: str
) -> None:
    workdir = tmp_path / "work"
    if content == "file":
        workdir.write_text("x")
    else:
        workdir.mkdir()
        (workdir / "old.txt").write_text("keep me")
    result = cli("bench", *SMALL, "--workdir", str(workdir))
    assert result.status == 2 and "--workdir" in result.err
    assert calls == []
    assert workdir.exists()


def test_help_says_a_named_workdir_is_kept(cli: Cli) -> None:
    text = " ".join(cli("bench", "--help").out.split())
    assert "kept afterwards" in text
    assert "deleted afterwards unless --keep" in text


@pytest.mark.parametrize("failing", [2, 3], ids=["one more day", "nothing new"])
def test_a_later_build_that_fails_is_an_error_not_figures(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, failing: int
) -> None:
    """Not only the full build: a failed one-more-day or nothing-new build is exit 1, one line."""
    builds: list[int] = []

    def fake_run_build(corpus: Any, exports: Path) -> bench_run.BuildMeasure:
        builds.append(len(builds) + 1)
        status = 1 if len(builds) == failing else 0
        return bench_run.BuildMeasure(
            wall_s=1.0,
            status=status,
            peak_rss_mib=1.0,
            stages={"extract": 1.0},
            skipped=len(builds) == 3 and status == 0,
            output="build failed (Dagster run x)\n" if status else "",
            reported=len(builds) < 3,
        )

    monkeypatch.setattr(bench_run, "run_build", fake_run_build)
    monkeypatch.setattr(bench_run, "observations", lambda database: 0)
    result = cli("bench", *SMALL)
    assert result.status == 1
    assert builds == list(range(1, failing + 1))  # nothing measured after the failure
    name = {2: "one-more-day", 3: "nothing-new"}[failing]
    assert f"the {name} build failed (exit 1)" in result.err
    # one line of error, last, after the progress lines (the build's output among them)
    errors = [line for line in result.err.splitlines() if line.startswith("speedbook bench:")]
    assert len(errors) == 1 and result.err.rstrip().endswith(errors[0])
    assert "Traceback" not in result.err
    assert "full build" not in result.out  # no table of figures


# A stand-in for `speedbook build`: what it prints, and whether it writes a fresh report.
FAKE_BUILD = """
import json, os, pathlib, sys, uuid
report = pathlib.Path(os.environ["SPEEDBOOK_WAREHOUSE"]) / "build_report.json"
behaviour = sys.argv[1]
if behaviour == "skips":  # what pipeline/dagster/envelope.py reports when it skips the build
    print("[   0.1s] nothing new since the last build: release 2026.01.03 stands", file=sys.stderr)
elif behaviour == "identical":  # ran every stage; the release step found nothing to publish
    print("nothing new: identical to release 2026.01.03")
if behaviour in ("writes", "identical"):
    report.write_text(json.dumps({"run_id": uuid.uuid4().hex, "stages": {"extract": 2.0}}))
"""


@pytest.mark.parametrize(
    ("behaviour", "reported", "skipped", "stages"),
    [
        ("writes", True, False, {"extract": 2.0}),
        ("identical", True, False, {"extract": 2.0}),
        ("skips", False, True, {}),
        ("silent", False, False, {}),
    ],
)
def test_stage_times_come_only_from_a_report_this_build_wrote(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    behaviour: str,
    reported: bool,
    skipped: bool,
    stages: dict,
) -> None:
    """A build that exits 0 without writing build_report.json is not measured with the stage
    times of the report an earlier build left, and only the runner's own line marks a skip."""
    import subprocess

    from pipeline.bench.corpus import Corpus

    corpus = Corpus(tmp_path, tmp_path / "r.toml", tmp_path / "raw", tmp_path / "m", 0, 0, 0)
    (tmp_path / "build_report.json").write_text('{"run_id": "old", "stages": {"extract": 9.0}}')
    real_popen = subprocess.Popen

    def fake_popen(command: list[str], **kwargs: Any) -> subprocess.Popen:
        return real_popen([command[0], "-c", FAKE_BUILD, behaviour], **kwargs)

    monkeypatch.setattr(bench_run.subprocess, "Popen", fake_popen)
    measured = bench_run.run_build(corpus, tmp_path / "exports")
    assert measured.status == 0
    assert (measured.reported, measured.skipped, measured.stages) == (reported, skipped, stages)
    if behaviour == "silent":
        with pytest.raises(RuntimeError, match="full build ran but did not write build_report"):
            bench_run.require_success(measured, "full", print)
    else:
        bench_run.require_success(measured, "full", print)


def test_generating_the_corpus_reports_progress(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A year of pages takes a while to write: the generation says how far it is."""
    from pipeline.bench.corpus import CorpusSpec

    def failed_build(corpus: Any, exports: Path) -> bench_run.BuildMeasure:
        return bench_run.BuildMeasure(wall_s=0.0, status=1, peak_rss_mib=0.0, output="no")

    monkeypatch.setattr(bench_run, "run_build", failed_build)
    lines: list[str] = []
    with pytest.raises(RuntimeError, match="the full build failed"):
        bench_run.run_bench(CorpusSpec(2, 1, 20), tmp_path, progress=lines.append)
    days = [line for line in lines if line.startswith("corpus: day ")]
    assert days[0] == "corpus: day 2/20, 4 pages" and days[-1] == "corpus: day 20/20, 40 pages"
    assert lines[-1] == "full build output (last lines):\nno"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--polls-per-day", "0"], "--polls-per-day must be a positive whole number, got 0"),
        (["--polls-per-day", "2000"], "--polls-per-day must be at most 1440"),
        (["--models", "0"], "--models must be a positive whole number, got 0"),
        (["--providers", "3"], "--providers is for --scenario pages"),
    ],
)
def test_a_bad_poll_option_is_refused_before_anything_is_made(
    cli: Cli, tmp_path: Path, args: list[str], message: str
) -> None:
    workdir = tmp_path / "work"
    result = cli("bench", "--scenario", "openrouter", *args, "--workdir", str(workdir))
    assert result.status == 2
    assert message in result.err and len(result.err.strip().splitlines()) == 1
    assert not workdir.exists()


def test_polls_per_day_is_refused_for_the_page_scenario(cli: Cli, calls: list[Path]) -> None:
    result = cli("bench", *SMALL, "--polls-per-day", "4")
    assert result.status == 2 and "--polls-per-day is for --scenario openrouter" in result.err
    assert calls == []
