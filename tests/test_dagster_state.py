"""State in Dagster's own primitives: what the assets of a run share comes from the resource (read
once per run), values pass between assets through IO managers, progress goes through `logging`
into stderr and the run log, and a run launched as the UI launches one (each step its own
process, a persistent instance) publishes the release `speedbook build` publishes."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from pathlib import Path

import dagster as dg
import pytest
from conftest import BUNDLED_RAW, failures, materialize, progress_lines
from test_build import copy_of

import pipeline.dagster.assets.core as core_assets
import pipeline.dagster.resources as resources
from pipeline.dagster.envelope import REPORT_FILE
from pipeline.dagster.runner import dagster_instance, instance_yaml, stage_seconds
from pipeline.raw.snapshots import META_SUFFIX, SnapshotStore
from pipeline.sources.registry import load_registry
from pipeline.support.progress import LOGGER, log_to_stderr
from pipeline.support.settings import BUNDLED_METADATA, Settings
from pipeline.warehouse.connection import connect

# the stages a build times (pipeline/support/timing.py); staged frames are validated in extract
STAGES = {"inventory", "extract", "normalise", "load", "sql", "export"}
UNREADABLE = "20261130T000000Z-aaaaaaaaaaaa.html" + META_SUFFIX


def _warehouse(tmp_path: Path, metadata: Path = BUNDLED_METADATA) -> Settings:
    shutil.copytree(BUNDLED_RAW, tmp_path / "warehouse" / "raw")
    return Settings.resolve(
        metadata / "sources.toml", tmp_path / "warehouse", tmp_path / "exports", metadata
    )


def _query(settings: Settings, sql: str) -> list[tuple]:
    with connect(settings, read_only=True) as con:
        return con.execute(sql).fetchall()


def _metadata(result: dg.ExecuteInProcessResult, key: str) -> dict[str, object]:
    (materialization,) = result.asset_materializations_for_node(key)
    return {name: value.value for name, value in materialization.metadata.items()}


def _release_files(exports: Path) -> dict[str, bytes]:
    latest = (exports / "latest").resolve()
    return {
        str(path.relative_to(latest)): path.read_bytes()
        for path in sorted(latest.rglob("*"))
        if path.is_file()
    }


# --- the resource: read once per run -----------------------------------------------------------


@pytest.mark.e2e
def test_the_assets_of_a_run_share_one_inventory(tmp_path, monkeypatch):
    settings = _warehouse(tmp_path)
    (settings.raw_dir / "openrouter" / UNREADABLE).write_text("{not json")
    taken = []
    original = resources.take_inventory

    def counted(*args, **kwargs):
        taken.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(resources, "take_inventory", counted)
    with progress_lines() as lines:
        result = materialize(settings, "key:raw_inventory or key:staging_llmperf_summary")
    assert result.success
    assert len(taken) == 1  # one run: raw_inventory and the staging step read one inventory
    skipped = [line for line in lines if "snapshot skipped" in line]
    assert len(skipped) == 1 and UNREADABLE in skipped[0], lines
    inventory = _metadata(result, "raw_inventory")
    # each with a bundled snapshot (all but Vercel's two, none captured) has a new one
    registered = load_registry(settings.registry)
    sources = len({m.source_id for m in SnapshotStore(settings.raw_dir).list(errors=[])})
    assert sources == len(registered) - 2
    assert inventory["skipped"] == 1 and inventory["new_raw_snapshots"] == sources
    # a second run is a new resource: the store is read again
    assert materialize(settings, "key:raw_inventory").success
    assert len(taken) == 2


def test_the_resource_reads_each_shared_thing_once(tmp_path):
    resource = resources.SpeedbookResource.from_settings(_warehouse(tmp_path))
    assert resource.inventory() is resource.inventory()
    assert resource.inventory() is resource.inventory(whole_history=True)  # no --as-of
    assert resource.resolver() is resource.resolver()
    assert resource.reviewed() is resource.reviewed()
    assert resource.sources() is resource.sources()
    assert resource.settings.metadata == BUNDLED_METADATA


def test_the_metadata_folder_is_read_when_settings_resolve(tmp_path, monkeypatch):
    monkeypatch.setenv("SPEEDBOOK_METADATA", str(tmp_path))
    monkeypatch.delenv("SPEEDBOOK_REGISTRY", raising=False)
    settings = Settings.resolve()
    assert settings.metadata == tmp_path and settings.registry == tmp_path / "sources.toml"
    assert Settings.resolve(metadata=BUNDLED_METADATA).metadata == BUNDLED_METADATA
    resource = resources.SpeedbookResource.from_settings(settings)
    assert resource.metadata == str(tmp_path)


# --- the reviewed files reach the parsers, and their digests key the staging cache -------------


def _extractions(settings: Settings, format_name: str) -> dict[str, str]:
    rows = _query(
        settings,
        "SELECT snapshot_id, parser_version FROM staging.extractions "
        f"WHERE format = '{format_name}' AND status = 'ok'",
    )
    return dict(rows)  # type: ignore[arg-type]


@pytest.mark.e2e
def test_an_edited_reviewed_file_reads_the_pages_that_read_it_again(tmp_path):
    metadata = tmp_path / "metadata"
    shutil.copytree(BUNDLED_METADATA, metadata)
    settings = _warehouse(tmp_path, metadata)
    selection = "key:staging_claim_page or key:staging_platform_doc"
    first = materialize(settings, selection)
    assert first.success
    claims_before = _extractions(settings, "claim_page")
    platforms_before = _extractions(settings, "platform_doc")
    assert claims_before and platforms_before
    assert _metadata(first, "staging_claim_page")["extracted_now"] == len(claims_before)

    again = materialize(settings, selection)
    assert _metadata(again, "staging_claim_page")["extracted_now"] == 0  # nothing changed

    claims = metadata / "claims.toml"
    claims.write_text(claims.read_text(encoding="utf-8") + "\n# reviewed again\n")
    edited = materialize(settings, selection)
    assert edited.success
    assert _metadata(edited, "staging_claim_page")["extracted_now"] == len(claims_before)
    assert _metadata(edited, "staging_platform_doc")["extracted_now"] == 0  # reads platforms only
    claims_after = _extractions(settings, "claim_page")
    assert claims_after.keys() == claims_before.keys()
    assert set(claims_after.values()).isdisjoint(claims_before.values())
    assert all(version.startswith("2+claims.") for version in claims_after.values())
    assert _extractions(settings, "platform_doc") == platforms_before


@pytest.mark.e2e
def test_a_broken_reviewed_file_fails_the_step_that_reads_it_by_name(tmp_path):
    metadata = tmp_path / "metadata"
    shutil.copytree(BUNDLED_METADATA, metadata)
    (metadata / "claims.toml").write_text("[[claim]\n")
    settings = _warehouse(tmp_path, metadata)
    result = materialize(settings, "key:staging_claim_page or key:staging_llmperf_summary")
    assert not result.success
    (failure,) = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert failure.step_key == "staging_claim_page"
    assert "claims.toml: cannot read" in str(failure.step_failure_data.error)
    assert _metadata(result, "staging_llmperf_summary")["snapshots"] > 0


# --- label resolution once per build, handed to core through the IO manager ----------------------


def test_labels_are_resolved_once_and_core_reads_them(built, tmp_path, monkeypatch):
    settings = copy_of(built, tmp_path)
    calls = []
    original = core_assets.resolve_labels

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(core_assets, "resolve_labels", counted)
    # core_tables is one multi-asset with mart_views: they are selected together
    result = materialize(settings, "key:staging_* or key:core_* or key:mart_views")
    assert result.success, [e.message for e in result.all_events if e.is_failure]
    assert len(calls) == 1
    labels = _metadata(result, "staging_unresolved_names")["labels"]
    # core_tables writes the resolutions it was handed as core.labels
    assert _query(settings, "SELECT count(*) FROM core.labels") == [(labels,)]
    assert (settings.dagster_home / "storage" / "staging_unresolved_names").is_file()


def test_core_run_alone_reads_the_resolutions_the_last_run_stored(built, tmp_path):
    """A step that runs alone (a re-execution from the UI) loads its input from the instance's
    storage: the label resolutions of the last materialisation, and nothing else."""
    settings = copy_of(built, tmp_path)
    stored = settings.dagster_home / "storage" / "staging_unresolved_names"
    stored.unlink()
    core = "key:core_* or key:mart_views"  # one multi-asset, selected whole
    assert not materialize(settings, core).success  # nothing stored to read
    assert materialize(settings, "key:staging_unresolved_names").success
    assert stored.is_file()
    result = materialize(settings, core)
    assert result.success, failures(result)
    assert _query(settings, "SELECT count(*) > 0 FROM core.observations") == [(True,)]


def test_the_release_run_alone_reads_the_exports_the_last_run_stored(built, tmp_path):
    """The exports reach the release through files in the instance's storage: a release run
    alone publishes what they hold, and a damaged one fails naming its file, publishing
    nothing."""
    settings = copy_of(built, tmp_path)
    documents = settings.dagster_home / "storage" / "documents"
    stored = documents / "out_inference.json"
    assert json.loads(stored.read_bytes())["providers"]
    before = (settings.exports / "latest" / "inference.json").read_bytes()
    result = materialize(settings, "key:out_release")
    assert result.success, failures(result)
    assert (settings.exports / "latest" / "inference.json").read_bytes() == before
    stored.write_bytes(stored.read_bytes()[:1000])  # cut short
    result = materialize(settings, "key:out_release")
    assert not result.success
    assert any(str(stored) in message for message in failures(result)), failures(result)
    assert (settings.exports / "latest" / "inference.json").read_bytes() == before


def test_a_document_is_orjsons_bytes_and_one_it_cannot_write_replaces_nothing(tmp_path):
    """orjson's bytes are the canonical bytes (no standard-library fallback): compact, keys
    sorted, read back by another process's manager; a document orjson refuses (an integer past
    64 bits) fails the step and the document stored before stays."""
    manager = resources.DocumentIOManager(base_dir=str(tmp_path))
    key = dg.AssetKey("out_inference")
    document = {"b": 2**63 - 1, "a": [1.5, None, "é"]}
    manager.handle_output(dg.build_output_context(asset_key=key), document)
    stored = tmp_path / "out_inference.json"
    assert stored.read_text(encoding="utf-8") == '{"a":[1.5,null,"é"],"b":9223372036854775807}'
    reader = resources.DocumentIOManager(base_dir=str(tmp_path))  # another process's, say
    loaded = reader.load_input(dg.build_input_context(asset_key=key))
    assert loaded == document and isinstance(loaded["b"], int)
    with pytest.raises(TypeError, match="64-bit"):
        manager.handle_output(dg.build_output_context(asset_key=key), {"b": 2**70})
    assert reader.load_input(dg.build_input_context(asset_key=key)) == document
    assert [p.name for p in tmp_path.iterdir()] == ["out_inference.json"]  # no temporary left
    manager.handle_output(dg.build_output_context(asset_key=key), {"b": 2, "a": [1.5]})
    assert reader.load_input(dg.build_input_context(asset_key=key)) == {"a": [1.5], "b": 2}


def test_a_document_is_handed_over_in_process_while_its_file_is_the_one_written(tmp_path):
    manager = resources.DocumentIOManager(base_dir=str(tmp_path))
    key = dg.AssetKey("out_inference")
    document = {"providers": [{"id": "groq"}]}
    manager.handle_output(dg.build_output_context(asset_key=key), document)
    # the same process takes the document itself, not a copy read back from the file
    assert manager.load_input(dg.build_input_context(asset_key=key)) is document
    stored = tmp_path / "out_inference.json"
    stored.write_bytes(b'{"providers": [{"id"')  # cut short in place: the same file, changed
    with pytest.raises(dg.Failure, match="not the JSON document"):
        manager.load_input(dg.build_input_context(asset_key=key))
    manager.handle_output(dg.build_output_context(asset_key=key), document)
    replacement = tmp_path / "other.json"  # another run's file renamed over this one
    replacement.write_bytes(b'{"providers": []}')
    os.replace(replacement, stored)
    assert manager.load_input(dg.build_input_context(asset_key=key)) == {"providers": []}
    stored.unlink()
    with pytest.raises(dg.Failure, match="is missing"):
        manager.load_input(dg.build_input_context(asset_key=key))


# --- progress through logging; stage seconds through materialisation metadata -------------------


def test_the_command_line_adds_its_stderr_handler_once(capsys):
    logger = logging.getLogger(LOGGER)
    log_to_stderr()
    log_to_stderr()
    assert sum(type(h).__name__ == "_StderrHandler" for h in logger.handlers) == 1
    logging.getLogger(LOGGER).info("core: observations derived for 3 snapshot(s)")
    err = capsys.readouterr().err
    assert re.fullmatch(r"\[ {3}\d\.\ds\] core: observations derived for 3 snapshot\(s\)\n", err)


def test_a_build_logs_its_progress_into_the_run_and_times_its_stages(built):
    report = json.loads((built.warehouse / REPORT_FILE).read_text(encoding="utf-8"))
    assert set(report["stages"]) == STAGES
    assert all(seconds >= 0 for seconds in report["stages"].values())
    with dagster_instance(built) as instance:
        run = instance.get_run_by_id(report["run_id"])
        records = instance.all_logs(run.run_id)
    messages = [r.user_message for r in records if r.dagster_event is None]
    assert any(m.startswith("published release 2026.11.29") for m in messages), messages
    # the core step's progress, logged in the step, reaches the run's log
    assert any(
        m.startswith("warehouse: core and mart committed as lake snapshot ") for m in messages
    )
    events = [r.dagster_event for r in records if r.dagster_event is not None]
    assert stage_seconds(events).keys() == report["stages"].keys()


def test_the_instance_config_is_brought_up_to_date_unless_someone_else_wrote_it(tmp_path):
    settings = Settings.resolve(warehouse=tmp_path / "a")
    config = settings.dagster_home / "dagster.yaml"
    config.parent.mkdir(parents=True)
    ours = instance_yaml(settings.dagster_home)
    earlier = ours.split("python_logs:")[0]  # what an earlier version wrote
    config.write_text(earlier)
    dagster_instance(settings).dispose()
    assert config.read_text() == ours
    theirs = "telemetry:\n  enabled: false\n"
    config.write_text(theirs)
    dagster_instance(settings).dispose()
    assert config.read_text() == theirs


# --- a run launched as the UI launches it ------------------------------------------------------


@pytest.mark.e2e
def test_a_multiprocess_run_publishes_the_release_speedbook_build_publishes(built, tmp_path):
    """Same snapshots, another warehouse built from scratch, each step in its own process:
    byte-identical release files. (That building the same content again publishes nothing is
    test_releases' forced build; byte-identical files are what it compares.)"""
    settings = _warehouse(tmp_path)
    unreadable = settings.raw_dir / "aa-kimi-k2-6" / UNREADABLE
    unreadable.write_text("{not json")  # left out, and reported once whatever the executor
    job = dg.build_reconstructable_job(
        "pipeline.dagster.graph",
        "build_job",
        reconstructable_kwargs={
            "registry": str(settings.registry),
            "warehouse": str(settings.warehouse),
            "exports": str(settings.exports),
            "metadata": str(settings.metadata),
        },
    )
    with dagster_instance(settings) as instance:
        result = dg.execute_job(job, instance=instance)
        assert result.success
        records = instance.all_logs(result.run_id)
    starts = [
        r for r in records if r.dagster_event and r.dagster_event.event_type_value == "STEP_START"
    ]
    assert len({r.dagster_event.pid for r in starts}) == len(starts) > 10  # a process per step
    assert _release_files(settings.exports) == _release_files(built.exports)
    messages = [r.user_message for r in records if r.dagster_event is None]
    skipped = [m for m in messages if m.startswith("snapshot skipped")]
    assert len(skipped) == 1 and str(unreadable) in skipped[0], skipped
    assert any(m.startswith("published release 2026.11.29") for m in messages), messages
    events = [r.dagster_event for r in records if r.dagster_event is not None]
    assert set(stage_seconds(events)) == STAGES
    assert not (settings.warehouse / "pending").exists()
    assert sorted(p.name for p in settings.exports.iterdir()) == ["2026.11.29", "latest"]
