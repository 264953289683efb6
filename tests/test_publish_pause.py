"""The crash tests' pause points: one implementation (pipeline.support.faults.pause_point),
read from SPEEDBOOK_TEST_PAUSE by the build and from SPEEDBOOK_TEST_PUBLISH_PAUSE by publishing."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.release import publish
from pipeline.support import faults


class Paused(Exception):
    """Raised instead of sleeping an hour."""


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sleep(seconds: float) -> None:
        raise Paused(seconds)

    monkeypatch.setattr(faults.time, "sleep", no_sleep)
    monkeypatch.delenv(faults.PAUSE_ENV, raising=False)
    monkeypatch.delenv(publish.PAUSE_ENV, raising=False)


def test_a_pause_point_reads_its_own_variable(sleeps, tmp_path: Path, monkeypatch):
    marker = tmp_path / "marker"
    monkeypatch.setenv(publish.PAUSE_ENV, f"writing:{marker}")
    faults.pause_point("writing")  # the build's variable is unset: no pause
    faults.pause_point("renamed", publish.PAUSE_ENV)  # another point: no pause
    assert not marker.exists()
    with pytest.raises(Paused):
        faults.pause_point("writing", publish.PAUSE_ENV)
    assert marker.read_text().strip().isdigit()  # the pid, for the test that kills it


def test_the_build_variable_still_pauses_build_points(sleeps, tmp_path: Path, monkeypatch):
    marker = tmp_path / "marker"
    monkeypatch.setenv(faults.PAUSE_ENV, f"core-transaction:{marker}")
    faults.pause_point("core-transaction", publish.PAUSE_ENV)  # publishing ignores it
    assert not marker.exists()
    with pytest.raises(Paused):
        faults.pause_point("core-transaction")
    assert marker.is_file()


def test_a_setting_without_a_marker_never_pauses(sleeps, monkeypatch):
    monkeypatch.setenv(publish.PAUSE_ENV, "writing")
    faults.pause_point("writing", publish.PAUSE_ENV)


def test_publish_pauses_through_pause_point(sleeps, tmp_path: Path, monkeypatch):
    """write_release stops at "writing" with the marker written, and leaves no release."""
    marker = tmp_path / "marker"
    monkeypatch.setenv(publish.PAUSE_ENV, f"writing:{marker}")
    exports = tmp_path / "exports"
    with pytest.raises(Paused):
        publish.write_release(exports, "2026.12.01", {"inference.json": b"{}"})
    assert marker.is_file()
    assert publish.list_versions(exports) == []
    assert not list(exports.iterdir())  # the staging folder was removed on the way out
