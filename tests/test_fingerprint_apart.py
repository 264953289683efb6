"""The fingerprint taken in a process of its own while the build imports Dagster
(pipeline/dagster/fingerprint.py, pipeline/dagster/envelope.py): the same fingerprint as taken
in the build's process; taken so only when the store's folders say a snapshot was added or
removed; and a build whose fingerprint process fails still answers right."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from test_build import add_kimi_page, copy_of

from pipeline.dagster import envelope
from pipeline.dagster.envelope import execute
from pipeline.dagster.fingerprint import build_fingerprint, fingerprint_apart, folder_stamp
from pipeline.support.apart import Apart

AS_OF = datetime(2026, 11, 20, 12, tzinfo=UTC)


@pytest.mark.parametrize("as_of", [None, AS_OF])
def test_the_process_apart_gives_the_same_fingerprint(built, as_of):
    assert fingerprint_apart(built, as_of).wait().strip() == build_fingerprint(built, as_of)


def test_the_folders_stamp_changes_when_a_snapshot_is_added_not_when_one_is_touched(
    built, tmp_path
):
    settings = copy_of(built, tmp_path)
    before = folder_stamp(settings)
    some_file = next(p for p in settings.raw_dir.rglob("*.meta.json"))
    os.utime(some_file)  # a file written in place: the fingerprint's to see, not the stamp's
    assert folder_stamp(settings) == before
    add_kimi_page(settings, datetime(2026, 11, 30, 8, tzinfo=UTC))
    assert folder_stamp(settings) != before


def _watch_fingerprints(monkeypatch) -> list[str]:
    """Which way each fingerprint of the builds that follow is taken."""
    ways: list[str] = []
    real_apart, real_here = envelope.fingerprint_apart, envelope.build_fingerprint

    def apart(*args):
        ways.append("apart")
        return real_apart(*args)

    def here(*args):
        ways.append("here")
        return real_here(*args)

    monkeypatch.setattr(envelope, "fingerprint_apart", apart)
    monkeypatch.setattr(envelope, "build_fingerprint", here)
    return ways


def test_a_new_snapshot_is_fingerprinted_apart_and_nothing_new_here(built, tmp_path, monkeypatch):
    settings = copy_of(built, tmp_path)
    ways = _watch_fingerprints(monkeypatch)
    assert not execute(settings).skipped  # a copied store has new file times: it runs
    assert execute(settings).skipped
    add_kimi_page(settings, datetime(2026, 11, 30, 8, tzinfo=UTC))
    outcome = execute(settings)
    assert outcome.success and not outcome.skipped
    assert execute(settings).skipped
    assert ways == ["apart", "here", "apart", "here"]
    report = json.loads((settings.warehouse / "build_report.json").read_text())
    assert report["raw_folders"] == folder_stamp(settings)
    assert report["fingerprint"] == build_fingerprint(settings, None)  # what the process gave


def test_a_failed_fingerprint_process_is_taken_again_here(built, tmp_path, monkeypatch):
    settings = copy_of(built, tmp_path)
    add_kimi_page(settings, datetime(2026, 11, 30, 8, tzinfo=UTC))
    failing = Apart("pipeline.no_such_module", [], "taking the fingerprint of the inputs")
    monkeypatch.setattr(envelope, "fingerprint_apart", lambda *args: failing)
    outcome = execute(settings)
    assert outcome.success and not outcome.skipped
    report = json.loads((settings.warehouse / "build_report.json").read_text())
    assert report["fingerprint"] == build_fingerprint(settings, None)
    assert execute(settings).skipped  # the fingerprint recorded is the right one


def test_the_fingerprint_command_refuses_wrong_arguments():
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.dagster.fingerprint", "only-one"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("usage: python -m pipeline.dagster.fingerprint REGISTRY")
    assert "Traceback" not in done.stderr and done.stdout == ""
