"""What a build reads, and when it must read it again: one new snapshot, a parser's new
version, bytes changed in place, a deleted catalog, a parser bug in one snapshot, names past
the --as-of bound."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import UP_TO_CORE, failures, materialize, progress_lines
from test_build import AA_PAGE, add_kimi_page, add_page, copy_of, release_bytes

from pipeline.dagster.envelope import execute
from pipeline.dagster.fingerprint import build_fingerprint
from pipeline.extract import PARSERS
from pipeline.extract.base import Parser, SnapshotInput
from pipeline.raw.snapshots import SnapshotStore
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect, lake_of

AA = "aa_provider_page"


def _query(settings: Settings, sql: str) -> list[tuple]:
    with connect(settings, read_only=True) as con:
        return con.execute(sql).fetchall()


def _aa_speeds(settings: Settings) -> dict[str, float]:
    rows = _query(
        settings,
        "SELECT observation_id, value FROM core.observations "
        "WHERE source_id LIKE 'aa-%' AND metric = 'output_tokens_per_s' AND value IS NOT NULL",
    )
    return dict(rows)  # type: ignore[arg-type]


def _swap_parser(monkeypatch: pytest.MonkeyPatch, version: str, parse) -> None:
    monkeypatch.setitem(PARSERS, AA, dataclasses.replace(PARSERS[AA], version=version, parse=parse))


def test_one_new_snapshot_derives_only_its_own_observations(built, tmp_path):
    settings = copy_of(built, tmp_path)
    before = _query(settings, "SELECT count(*) FROM core.observations")[0][0]
    add_kimi_page(settings, datetime(2026, 11, 30, 8, tzinfo=UTC))
    with progress_lines() as lines:
        result = materialize(settings, UP_TO_CORE)
    assert result.success, failures(result)
    # staging parses the new page alone; every other snapshot's rows are kept as staged
    parsed = [line for line in lines if "snapshots parsed" in line]
    assert len(parsed) == 1 and f"staging_{AA}: 1/1 snapshots parsed (" in parsed[0], lines
    after = _query(settings, "SELECT count(*) FROM core.observations")[0][0]
    assert after > before  # the new page's rows were added, the others kept
    assert _query(
        settings, "SELECT count(*) - count(DISTINCT observation_id) FROM core.observations"
    ) == [(0,)]


def test_a_new_parser_version_derives_the_observations_again(built, tmp_path, monkeypatch):
    settings = copy_of(built, tmp_path)
    before = _aa_speeds(settings)
    assert before
    original: Parser = PARSERS[AA]

    def doubled(snapshot: SnapshotInput) -> dict[str, list[dict]]:
        frames = original.parse(snapshot)
        for row in frames["aa_endpoints"]:
            if row.get("output_tokens_per_s") is not None:
                row["output_tokens_per_s"] *= 2
        return frames

    _swap_parser(monkeypatch, original.version + ".1", doubled)
    result = materialize(settings, UP_TO_CORE)
    assert result.success, failures(result)
    after = _aa_speeds(settings)
    assert after.keys() == before.keys()  # observation ids do not depend on the value
    assert after == pytest.approx({key: value * 2 for key, value in before.items()})
    versions = _query(
        settings, f"SELECT DISTINCT parser_version FROM core.extractions WHERE format = '{AA}'"
    )
    assert versions == [(original.version + ".1",)]


def test_bytes_changed_in_place_are_noticed_and_the_snapshot_is_left_out(built, tmp_path):
    settings = copy_of(built, tmp_path)
    store = SnapshotStore(settings.raw_dir)
    newest = store.list("aa-llama-3-3-instruct-70b")[-1]
    path = store.path_of(newest)
    before = build_fingerprint(settings, None)
    path.write_bytes(path.read_bytes().replace(b"Groq", b"Grok", 1))
    assert build_fingerprint(settings, None) != before  # so the next build runs
    result = materialize(settings, UP_TO_CORE)
    assert result.success, failures(result)
    status = _query(
        settings,
        f"SELECT status FROM core.extractions WHERE snapshot_id = '{newest.snapshot_id}'",
    )
    assert status == [("damaged",)]
    loaded = _query(
        settings,
        f"SELECT count(*) FROM core.observations WHERE snapshot_id = '{newest.snapshot_id}'",
    )
    assert loaded == [(0,)]


def test_a_damaged_snapshot_does_not_date_the_build(built, tmp_path):
    settings = copy_of(built, tmp_path)
    add_kimi_page(settings, datetime(2026, 11, 30, 8, tzinfo=UTC))
    newest = SnapshotStore(settings.raw_dir).list("aa-kimi-k2-6")[-1]
    path = SnapshotStore(settings.raw_dir).path_of(newest)
    path.write_bytes(path.read_bytes().replace(b"990", b"999"))
    outcome = execute(settings)
    assert outcome.success, outcome.failures + outcome.failed_checks
    (data_date,) = _query(settings, "SELECT data_date FROM core.build_state")[0]
    assert data_date == datetime(2026, 11, 29, tzinfo=UTC)  # the newest snapshot read whole
    assert sorted(p.name for p in settings.exports.iterdir()) == ["2026.11.29", "latest"]


def test_a_deleted_warehouse_is_built_again_not_reported_current(built, tmp_path):
    settings = copy_of(built, tmp_path)
    before = release_bytes(settings)
    catalog = Path(lake_of(settings).target)
    os.remove(catalog)  # the lake's catalog: without it the data files are nobody's
    outcome = execute(settings)
    assert outcome.success and not outcome.skipped
    assert catalog.is_file()
    assert _query(settings, "SELECT count(*) > 0 FROM core.observations") == [(True,)]
    assert release_bytes(settings) == before  # same snapshots: same release, no new version
    assert sorted(p.name for p in settings.exports.iterdir()) == ["2026.11.29", "latest"]


def test_a_parser_bug_rejects_one_snapshot_names_it_and_the_release_goes_out(
    built, tmp_path, monkeypatch
):
    settings = copy_of(built, tmp_path)
    original: Parser = PARSERS[AA]
    victim = SnapshotStore(settings.raw_dir).list("aa-kimi-k2-6")[-1].snapshot_id

    def buggy(snapshot: SnapshotInput) -> dict[str, list[dict]]:
        if snapshot.meta.snapshot_id == victim:
            raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")
        return original.parse(snapshot)

    _swap_parser(monkeypatch, original.version + ".1", buggy)
    outcome = execute(settings, force=True)
    assert outcome.success, outcome.failures + outcome.failed_checks
    assert outcome.not_used == 1
    (note,) = outcome.notes
    file = victim.split("/", 1)[1]
    assert note.startswith(f"aa-kimi-k2-6: snapshot {file} rejected: ") and "TypeError" in note
    assert note.endswith("; no usable snapshot")  # its only snapshot
    rows = dict(
        _query(
            settings, f"SELECT snapshot_id, status FROM staging.extractions WHERE format = '{AA}'"
        )
    )
    assert rows.pop(victim) == "failed"
    assert rows and set(rows.values()) == {"ok"}  # every other page was read and kept
    (error,) = _query(
        settings, f"SELECT error FROM staging.extractions WHERE snapshot_id = '{victim}'"
    )[0]
    assert f"parser {AA} v{original.version}.1 failed: TypeError" in error
    # the release goes out with every other source, without the page nobody could read
    document = json.loads((settings.exports / "latest" / "inference.json").read_text())
    cited = {ref["id"] for ref in document["snapshots"]}
    assert victim not in cited and len(cited) > 10


def test_names_past_the_as_of_bound_do_not_block_that_build(built, tmp_path):
    settings = copy_of(built, tmp_path)
    add_page(
        settings,
        "aa-kimi-k2-6",
        AA_PAGE.format(label="Mystery Cloud", speed="410"),
        datetime(2026, 11, 29, 20, tzinfo=UTC),
    )
    # a build of every snapshot stages the page and holds the unknown name's figure back
    result = materialize(settings, UP_TO_CORE)
    assert result.success, failures(result)
    assert "staging_unresolved_names.no_unresolved_names_in_figures" in failures(result)
    # the page is past this bound: its name is not even reported, nor its rows derived
    bound = datetime(2026, 11, 29, 12, tzinfo=UTC)
    result = materialize(settings, UP_TO_CORE, as_of=bound)
    assert result.success and failures(result) == []
    late = _query(
        settings,
        "SELECT count(*) FROM core.observations AS o JOIN core.snapshots AS s USING (snapshot_id) "
        f"WHERE s.retrieved_at > '{bound.isoformat()}'",
    )
    assert late == [(0,)]


def test_the_fingerprint_reads_each_reviewed_file_once():
    from pipeline.dagster.fingerprint import _input_lines
    from pipeline.support.settings import BUNDLED_METADATA

    lines = _input_lines(Settings.resolve(), None)
    for path in BUNDLED_METADATA.glob("*.toml"):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        hashed = [line for line in lines if line.endswith(digest) and line.startswith("code:")]
        assert hashed == [], f"{path.name} is hashed as code too"
        assert f"metadata:{path.name}:{digest}" in lines
    assert any(line.startswith("code:dagster/fingerprint.py:") for line in lines)
