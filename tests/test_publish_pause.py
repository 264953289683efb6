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


def test_a_release_makes_durable_what_it_writes_not_what_it_links(built, tmp_path, monkeypatch):
    """Every file a release writes is fsynced before the rename; a file linked from an earlier
    release (an unchanged Parquet hour) was made durable when that one was published."""
    import os

    latest = built.exports / "latest"
    files = {
        p.relative_to(latest).as_posix(): p.read_bytes()
        for p in latest.rglob("*")
        if p.is_file() and p.relative_to(latest).parts[0] not in ("parquet", "schemas")
    }
    earlier = tmp_path / "earlier.parquet"
    earlier.write_bytes(b"an hour of an earlier release")

    def populate(folder: Path, _version: str) -> None:
        os.link(earlier, folder / "linked.parquet")
        (folder / "written.parquet").write_bytes(b"this poll's hour")

    synced: list[str] = []
    real_fsync = os.fsync

    def recording(fd: int) -> None:
        synced.append(os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    monkeypatch.setattr(publish.os, "fsync", recording)
    target = publish.write_release(tmp_path / "exports", "2026.12.01", files, [populate])
    assert (target / "linked.parquet").read_bytes() == earlier.read_bytes()
    assert "written.parquet" in synced and "linked.parquet" not in synced
    assert {Path(name).name for name in files} <= set(synced)
