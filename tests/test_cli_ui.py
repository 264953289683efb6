"""`speedbook ui` does not take the warehouse lock, but says so when a build holds it."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import pytest

from pipeline.cli import main, ui
from pipeline.support.locking import warehouse_lock
from pipeline.support.settings import Settings


class Launched(Exception):
    """Raised instead of replacing the test process with `dagster dev`."""


def test_build_holder_names_the_build_and_leaves_the_lock_file_alone(tmp_path: Path) -> None:
    lock = tmp_path / "build.lock"
    assert ui.build_holder(lock) is None  # no build ever ran
    with warehouse_lock(lock):
        text = lock.read_text()
        assert ui.build_holder(lock) == text.strip() and text.startswith("pid ")
        assert lock.read_text() == text  # the probe never writes
    assert ui.build_holder(lock) is None
    with warehouse_lock(lock):  # the probe left no lock behind
        pass


@pytest.mark.parametrize("building", [True, False])
def test_ui_notes_a_running_build_and_still_opens(
    settings: Settings,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    building: bool,
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(settings.dagster_home))  # restored after the test

    def execve(*_args: object) -> None:
        raise Launched

    monkeypatch.setattr(ui.os, "execve", execve)
    holding = warehouse_lock(settings.lock_file) if building else nullcontext()
    with holding, pytest.raises(Launched):
        main(["ui"])
    err = capsys.readouterr().err
    assert ("note: a build is running" in err) is building
    assert "a run launched from the UI fails at once until it finishes" in err or not building
