"""A publish killed with SIGKILL at any moment leaves every release complete and `latest`
pointing at a complete release; the next publish cleans up and carries on.

Kill points come from the test hook SPEEDBOOK_TEST_PUBLISH_PAUSE=<point>:<marker>, which makes
publish write the marker and sleep at that point, and from plain delays into a build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import BUNDLED_RAW
from test_build import copy_of

from pipeline.dagster.envelope import execute
from pipeline.release.contracts import EXPORT_FILES, validate_directory
from pipeline.release.publish import (
    PAUSE_ENV,
    list_versions,
    publish_release,
    read_release,
    release_problems,
)
from pipeline.support.settings import BUNDLED_METADATA, Settings

JUNE = "2026.06.28"
POINTS = ("writing", "written", "populated", "renamed", "switching")
# Publishes the June release's documents again under a later data date: a new release, without
# a whole build, so every kill point costs about a second.
PUBLISH_SCRIPT = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from pipeline.release.publish import publish_release, read_release

exports, source = Path(sys.argv[1]), Path(sys.argv[2])
documents = read_release(source)

def render(version):
    stamp = {"version": version, "data_date": "2026-12-01T00:00:00Z"}
    return {name: document | stamp for name, document in documents.items()}

publish_release(exports, datetime(2026, 12, 1, tzinfo=UTC), render)
"""


def _hashes(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def assert_consistent(exports: Path, june: dict[str, str]) -> None:
    """Every listed release is complete and valid, `latest` names one, June is untouched."""
    versions = list_versions(exports)
    assert JUNE in versions
    for version in versions:
        assert release_problems(exports / version) == [], version
        assert validate_directory(exports / version) == {name: [] for name in EXPORT_FILES}
    latest = exports / "latest"
    assert latest.is_symlink() and os.readlink(latest) in versions
    assert validate_directory(latest) == {name: [] for name in EXPORT_FILES}
    assert _hashes(exports / JUNE) == june


def leftovers(exports: Path) -> list[str]:
    return sorted(p.name for p in exports.iterdir() if p.name.startswith((".tmp-", ".latest-")))


def _env(settings: Settings, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SPEEDBOOK_REGISTRY", None)
    env |= {
        "SPEEDBOOK_WAREHOUSE": str(settings.warehouse),
        "SPEEDBOOK_EXPORTS": str(settings.exports),
        **extra,
    }
    return env


def _start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(
            args, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)  # its own session: the build and anything it spawned
    process.wait(timeout=30)


def _wait_for(marker: Path, process: subprocess.Popen, log: Path, limit: float = 400) -> None:
    deadline = time.monotonic() + limit
    while not marker.exists():
        if process.poll() is not None:
            pytest.fail(f"exited ({process.returncode}) before the pause:\n{log.read_text()}")
        if time.monotonic() > deadline:
            _kill(process)
            pytest.fail(f"never reached the pause:\n{log.read_text()}")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def june_build(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """A warehouse whose only release is the June one (built --as-of 2026-06-30)."""
    root = tmp_path_factory.mktemp("crash")
    shutil.copytree(BUNDLED_RAW, root / "warehouse" / "raw")
    settings = Settings.resolve(
        BUNDLED_METADATA / "sources.toml", root / "warehouse", root / "exports"
    )
    outcome = execute(settings, datetime(2026, 6, 30, 23, 59, 59, tzinfo=UTC))
    assert outcome.success, outcome.failures + outcome.failed_checks
    assert list_versions(settings.exports) == [JUNE]
    return settings


@pytest.mark.e2e
@pytest.mark.parametrize("point", POINTS)
def test_publish_killed_at_each_point_leaves_releases_complete(june_build, tmp_path, point):
    exports = tmp_path / "exports"
    shutil.copytree(june_build.exports, exports, symlinks=True)
    june = _hashes(exports / JUNE)
    marker, log = tmp_path / "paused", tmp_path / "publish.log"
    process = _start(
        [sys.executable, "-c", PUBLISH_SCRIPT, str(exports), str(exports / JUNE)],
        dict(os.environ, **{PAUSE_ENV: f"{point}:{marker}"}),
        log,
    )
    _wait_for(marker, process, log)
    _kill(process)

    assert_consistent(exports, june)
    expected = [JUNE, "2026.12.01"] if point in ("renamed", "switching") else [JUNE]
    assert list_versions(exports) == expected  # a .tmp-* folder is never listed
    if point != "renamed":
        assert leftovers(exports)

    result = publish_release(
        exports,
        datetime(2026, 12, 1, tzinfo=UTC),
        lambda v: {
            n: d | {"version": v, "data_date": "2026-12-01T00:00:00Z"}
            for n, d in read_release(exports / JUNE).items()
        },
    )
    assert leftovers(exports) == []
    assert result.version == "2026.12.01"
    assert result.published == (point not in ("renamed", "switching"))
    assert os.readlink(exports / "latest") == "2026.12.01"
    assert_consistent(exports, june)


@pytest.mark.e2e
@pytest.mark.timeout(900)
def test_a_killed_build_never_damages_the_last_release(june_build, tmp_path):
    """`speedbook build` killed a few seconds in, then again just before the release folder is
    renamed into place; afterwards a build publishes normally and cleans up."""
    settings = copy_of(june_build, tmp_path / "copy", BUNDLED_METADATA / "sources.toml")
    june = _hashes(settings.exports / JUNE)
    build = [sys.executable, "-m", "pipeline.cli", "build"]

    for delay in (2.0, 6.0):
        log = tmp_path / f"after-{delay}s.log"
        process = _start(build, _env(settings), log)
        time.sleep(delay)
        _kill(process)
        assert_consistent(settings.exports, june)

    marker, log = tmp_path / "paused", tmp_path / "paused.log"
    process = _start(build, _env(settings, **{PAUSE_ENV: f"populated:{marker}"}), log)
    _wait_for(marker, process, log)
    _kill(process)
    assert_consistent(settings.exports, june)
    assert list_versions(settings.exports) == [JUNE]
    # the killed publisher's folder, whole but never renamed into place
    (leftover,) = leftovers(settings.exports)
    written = json.loads((settings.exports / leftover / "inference.json").read_bytes())
    assert leftover.startswith(".tmp-") and written["version"] == "2026.11.29"
    assert os.readlink(settings.exports / "latest") == JUNE

    outcome = execute(settings)
    assert outcome.success, outcome.failures + outcome.failed_checks
    assert leftovers(settings.exports) == []
    assert list_versions(settings.exports) == [JUNE, "2026.11.29"]
    assert os.readlink(settings.exports / "latest") == "2026.11.29"
    assert_consistent(settings.exports, june)
