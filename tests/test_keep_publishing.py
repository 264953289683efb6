"""A failure stays with its source: a snapshot its parser rejects, or whose staged rows fail their
check, is recorded and its source read from its newest good snapshot; the release goes out with
everything else, says so in its changelog, and the exit status (4) tells a script. `--strict`
publishes nothing while such a snapshot is in scope."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_build import copy_of
from test_build_summary import core_state

from pipeline.raw.snapshots import SnapshotStore
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect

FIXTURES = Path(__file__).parent / "fixtures"
KIMI_PAGE = (FIXTURES / "aa_kimi_page.html").read_text()
BROKEN = "openrouter-endpoints"
OLDER_GOOD = "20260424T031746Z-7e2c04d720d9.json"  # its newest bundled snapshot


def where(settings: Settings) -> list[str]:
    return ["--warehouse", str(settings.warehouse), "--exports", str(settings.exports)]


def add(settings: Settings, source_id: str, data: bytes, when: datetime, extension: str) -> str:
    kinds = {"html": "text/html", "json": "application/json"}
    store = SnapshotStore(settings.raw_dir)
    urls = {
        "aa-kimi-k2-6": "https://artificialanalysis.ai/models/kimi-k2-6/providers",
        BROKEN: "https://openrouter.ai/api/v1/models/x/endpoints",
    }
    meta = store.add(
        source_id,
        data,
        url=urls[source_id],
        retrieved_at=when,
        content_type=kinds[extension],
        obtained_by="manual",
        extension=extension,
    ).meta
    return meta.file


def counts(settings: Settings) -> dict[str, int]:
    with connect(settings, read_only=True) as con:
        tables = ("core.observations", "core.snapshots", "mart.current_figures", "mart.leaderboard")
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def kimi_figure(release: Path) -> float:
    document = json.loads((release / "inference.json").read_text())
    cerebras = next(p for p in document["providers"] if p["id"] == "cerebras")
    return next(
        f["value"]
        for f in cerebras["figures"]
        if f["model"]["id"] == "kimi-k2.6" and f["source"] == "aa-kimi-k2-6"
    )


def summary_of(err: str) -> list[str]:
    """stderr without the progress lines: the build's summary."""
    return [line for line in err.splitlines() if line and not line.startswith("[")]


@pytest.fixture(scope="module")
def broken(built: Settings, tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, str]:
    """A copy of the built warehouse with a new, good kimi page (1,020 t/s) and a 3-byte
    OpenRouter response stored by mistake (forced past `snapshot add`'s check)."""
    settings = copy_of(built, tmp_path_factory.mktemp("broken"))
    add(
        settings,
        "aa-kimi-k2-6",
        KIMI_PAGE.replace("{speed}", "1,020").encode(),
        datetime(2026, 11, 30, 6, tzinfo=UTC),
        "html",
    )
    bad = add(settings, BROKEN, b"abc", datetime(2026, 11, 30, 7, tzinfo=UTC), "json")
    return settings, bad


@pytest.mark.e2e
def test_a_rejected_snapshot_is_reported_and_the_release_goes_out(broken, cli):
    settings, bad = broken
    before = counts(settings)
    result = cli("build", *where(settings))
    assert result.status == 4, result.out + result.err
    note = (
        f"{BROKEN}: snapshot {bad} rejected: no endpoint could be read from the response: not "
        f"valid JSON: expected value at line 1 column 1; still read from snapshot {OLDER_GOOD} of "
        "2026-04-24T03:17:46Z"
    )
    summary = summary_of(result.err)
    assert note in [line.strip() for line in summary]
    assert len(summary) <= 10, summary
    assert f"speedbook snapshot remove {BROKEN} {bad}" in result.err
    assert "pipeline/extract/openrouter_endpoints.py" in result.err
    # the release: the good new figure, and the rejection in both changelogs
    release = settings.exports / "2026.11.30"
    assert (settings.exports / "latest").resolve() == release.resolve()
    assert kimi_figure(release) == 1020.0
    assert note in (release / "CHANGELOG.md").read_text().replace("\\", "")
    (entry,) = json.loads((release / "changes.json").read_text())["notes"]
    assert entry["kind"] == "rejected" and entry["snapshot"] == f"{BROKEN}/{bad}"
    assert entry["read_from"] == f"{BROKEN}/{OLDER_GOOD}" and entry["text"] == note
    # the warehouse: the extraction failed, the source is read from its last good snapshot
    with connect(settings, read_only=True) as con:
        health = con.execute(
            "SELECT status, extraction_status, used_snapshot_id, extraction_error "
            "FROM mart.source_health WHERE source_id = ?",
            [BROKEN],
        ).fetchone()
    assert health[:3] == ("extraction_failed", "failed", f"{BROKEN}/{OLDER_GOOD}")
    assert "not valid JSON" in health[3]
    assert counts(settings)["core.observations"] >= before["core.observations"]

    # --strict: no release while it is in scope; the warehouse commits the build's core and mart
    # (docs/operations.md), the same content as before: the catalog's bytes change, not what
    # analysts read
    published = sorted(p.name for p in settings.exports.iterdir())
    tables = core_state(settings)
    strict = cli("build", "--strict", "--force", *where(settings))
    assert strict.status == 1
    strict_summary = summary_of(strict.err)
    assert len(strict_summary) <= 10, strict_summary
    assert strict_summary[0].startswith("build failed: nothing published")
    assert note in [line.strip() for line in strict_summary]
    assert sorted(p.name for p in settings.exports.iterdir()) == published
    assert core_state(settings) == tables
    # the skipped build (nothing changed) says the same again
    again = cli("build", *where(settings))
    assert again.status == 4 and note in again.err


def test_staged_rows_edited_after_their_extraction_never_reach_a_release(built, tmp_path, cli):
    """Rows are validated once, before they are staged: a row changed in the lake afterwards (a
    hand edit, a bug of an older parser) is not checked again, not even by --force, which makes
    every measured figure again from staging. The export's contract stops it: nothing is
    published, and the summary names the snapshot (exit 1)."""
    settings = copy_of(built, tmp_path)
    newer = add(
        settings,
        "aa-kimi-k2-6",
        KIMI_PAGE.replace("{speed}", "1,030").encode(),
        datetime(2026, 11, 30, 6, tzinfo=UTC),
        "html",
    )
    assert cli("build", *where(settings)).status == 0
    assert kimi_figure(settings.exports / "latest") == 1030.0
    with connect(settings) as con:
        con.execute(
            "UPDATE staging.aa_endpoints SET ttft_s = -1 WHERE snapshot_id = ?",
            [f"aa-kimi-k2-6/{newer}"],
        )
    published = sorted(p.name for p in settings.exports.iterdir())
    result = cli("build", "--force", *where(settings))
    assert result.status == 1, result.out + result.err
    # --force keeps no measured figure: each is made again from staging, the edited row too
    assert "measured figures made again (asked for)" in result.out + result.err
    summary = summary_of(result.err)
    assert len(summary) <= 10, summary
    assert summary[0].startswith("build failed: nothing published")
    assert any(
        f"a ttft_s figure from snapshot aa-kimi-k2-6/{newer} breaks the export contract" in line
        for line in summary
    ), summary
    assert sorted(p.name for p in settings.exports.iterdir()) == published
    assert os.readlink(settings.exports / "latest") == "2026.11.30"


def test_only_snapshots_newer_than_the_one_in_use_count(built, tmp_path, cli):
    """An old rejected snapshot that a newer good one superseded is history: exit status 0.
    So is a rejected snapshot past the --as-of bound."""
    settings = copy_of(built, tmp_path)
    add(settings, BROKEN, b"abc", datetime(2024, 6, 1, tzinfo=UTC), "json")  # before the good one
    result = cli("build", *where(settings))
    assert result.status == 0, result.out + result.err
    assert "rejected" not in "\n".join(summary_of(result.err))
    later = add(settings, BROKEN, b"xyz", datetime(2026, 11, 30, 7, tzinfo=UTC), "json")
    as_of = cli("build", "--as-of", "2026-11-29", *where(settings))
    assert as_of.status == 0, as_of.out + as_of.err
    assert later not in as_of.err
