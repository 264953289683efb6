"""A failed build ends with a short summary on stderr (what failed, its fix, where the whole log
is) instead of Dagster's log; `--verbose` shows that log too. A parser rejection's summary and
--strict's are in test_keep_publishing.py."""

from __future__ import annotations

import pytest
from test_build import copy_of

from pipeline.schema.core import CORE_TABLES
from pipeline.support.locking import warehouse_lock
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect


def where(settings: Settings) -> list[str]:
    return ["--warehouse", str(settings.warehouse), "--exports", str(settings.exports)]


def summary_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line and not line.startswith("[")]


def core_state(settings: Settings) -> dict[str, tuple[int, int]]:
    """Each core table's row count and a digest of its rows."""
    with connect(settings, read_only=True) as con:
        return {
            name: con.execute(f"SELECT count(*), bit_xor(hash(t)) FROM core.{name} AS t").fetchone()
            for name in CORE_TABLES
        }


def break_traceability(monkeypatch: pytest.MonkeyPatch) -> None:
    """The traceability check finds a snapshot in scope that no figure can be traced to."""
    import pipeline.warehouse.checks as checks

    # one untraceable snapshot more than the check finds (none)
    broken = f"SELECT ({checks.TRACEABILITY}) + 1"
    monkeypatch.setattr(checks, "TRACEABILITY", broken)


def break_catalog_export(monkeypatch: pytest.MonkeyPatch) -> None:
    """inference_catalog.json comes out with a string where the contract wants a number."""
    import pipeline.release.exports as exports

    original = exports.build_catalog

    def broken(inputs, info):
        return original(inputs, info) | {"total": "seventy-five"}

    monkeypatch.setitem(exports.BUILDERS, "inference_catalog.json", broken)


@pytest.mark.parametrize(
    ("breaking", "what", "fix", "committed"),
    [
        (
            break_traceability,
            "core_tables.traceable_to_snapshot: core.observations: 1 snapshot(s) in scope",
            "fix: the core breaks the check's rule (pipeline/warehouse/checks.py",
            False,  # the check stops the core's transaction
        ),
        (
            break_catalog_export,
            "out_inference_catalog.matches_json_schema: ",
            "fix: the export breaks its contract: fix pipeline/release/exports.py",
            True,  # the core passed its checks and was committed; the release was not
        ),
    ],
    ids=["failed check", "export schema"],
)
def test_a_failed_build_says_what_failed_and_the_fix_in_a_few_lines(
    built, tmp_path, cli, monkeypatch, breaking, what, fix, committed
):
    settings = copy_of(built, tmp_path)
    before = core_state(settings)
    breaking(monkeypatch)
    result = cli("build", "--force", *where(settings))
    assert result.status == 1
    summary = summary_of(result.err)
    assert len(summary) <= 10, summary
    if committed:
        assert summary[0].startswith(
            "build failed: nothing published; the warehouse holds this build's core and mart "
            "(lake snapshot "
        ), summary
    else:
        assert summary[0] == (
            "build failed: nothing published; the warehouse is as the last successful build left it"
        )
    assert any(line.startswith(what) for line in summary), summary
    assert any(line.strip().startswith(fix) for line in summary), summary
    assert summary[-1].startswith("details: Dagster run ") and "speedbook ui" in summary[-1]
    assert "Stack Trace" not in result.err and "Traceback" not in result.err
    if not committed:  # staging may have recorded its files again; the core is the last build's
        assert core_state(settings) == before
    assert sorted(p.name for p in settings.exports.iterdir()) == ["2026.11.29", "latest"]

    verbose = cli("build", "--force", "--verbose", *where(settings))
    assert verbose.status == 1
    assert "STEP_FAILURE" in verbose.err  # Dagster's own log, as before
    assert summary_of(verbose.err)[-1].startswith("details: Dagster run ")


def test_a_build_while_another_holds_the_warehouse_is_one_line(built, tmp_path, cli):
    settings = copy_of(built, tmp_path)
    with warehouse_lock(settings.lock_file):
        result = cli("build", *where(settings))
    assert result.status == 3
    (line,) = summary_of(result.err)
    assert line.startswith(f"speedbook build: error: another build holds {settings.lock_file}")
    assert line.endswith("wait for it to finish or pass --wait SECONDS")
