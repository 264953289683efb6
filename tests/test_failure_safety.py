"""Nothing lost, nothing half-written: killed builds, concurrent builds, live fetching into a
build, and failing fetches under --strict."""

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from http_fixtures import FaultServer, ok, status
from test_build import copy_of

from pipeline.raw.snapshots import SnapshotStore, sha256_hex
from pipeline.release.contracts import validate_directory
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
KIMI_PAGE = (Path(__file__).parent / "fixtures" / "aa_kimi_page.html").read_text()


def environment(settings: Settings, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    env |= {
        "SPEEDBOOK_REGISTRY": str(settings.registry),
        "SPEEDBOOK_WAREHOUSE": str(settings.warehouse),
        "SPEEDBOOK_EXPORTS": str(settings.exports),
    }
    return env | extra


def speedbook(settings: Settings, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *args],
        env=environment(settings, **env),
        capture_output=True,
        text=True,
        timeout=300,
    )


def state(settings: Settings) -> dict:
    """What must survive any crash: the committed warehouse, every snapshot, the release."""
    with connect(settings, read_only=True) as con:
        build = con.execute("SELECT as_of, data_date FROM core.build_state").fetchall()
        counts = {
            t: con.execute(f"SELECT count(*) FROM core.{t}").fetchone()[0]
            for t in ("observations", "claims", "platform_models")
        }
    store = SnapshotStore(settings.raw_dir)
    snapshots = {m.snapshot_id: m.sha256 for m in store.list()}
    for meta in store.list():
        assert sha256_hex(store.read(meta)) == meta.sha256
    latest = settings.exports / "latest"
    release = {p.name: p.read_bytes() for p in latest.iterdir() if p.is_file()}
    assert all(not found for found in validate_directory(latest).values())
    return {
        "build": build,
        "counts": counts,
        "snapshots": snapshots,
        "release": release,
        "latest": os.readlink(latest),
    }


def add_kimi_page(settings: Settings, speed: str) -> None:
    SnapshotStore(settings.raw_dir).add(
        "aa-kimi-k2-6",
        KIMI_PAGE.replace("{speed}", speed).encode(),
        url="https://artificialanalysis.ai/models/kimi-k2-6/providers",
        retrieved_at=datetime(2026, 11, 29, 12, tzinfo=UTC),
        content_type="text/html",
        obtained_by="manual",
        extension="html",
    )


def cerebras_kimi(document: dict) -> dict:
    """Cerebras's current Kimi K2.6 speed from the Artificial Analysis page (one per release)."""
    cerebras = next(p for p in document["providers"] if p["id"] == "cerebras")
    (figure,) = [
        f
        for f in cerebras["figures"]
        if f["model"]["id"] == "kimi-k2.6"
        and f["source"] == "aa-kimi-k2-6"
        and f["metric"] == "output_tokens_per_s"
    ]
    return figure


@pytest.mark.parametrize("point", ["staging-batch", "core-transaction"])
def test_a_build_killed_mid_transaction_loses_nothing(built, tmp_path, point):
    settings = copy_of(built, tmp_path)
    add_kimi_page(settings, "1,020")  # new work for the build to be killed in
    before = state(settings)
    marker = tmp_path / "paused"
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "build"],
        env=environment(settings, SPEEDBOOK_TEST_PAUSE=f"{point}:{marker}"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        while not marker.exists():
            assert process.poll() is None, process.stderr.read()
            assert time.monotonic() < deadline, "the build never reached the pause point"
            time.sleep(0.1)
        # While it holds the warehouse, a second build refuses to run, clearly.
        second = speedbook(settings, "build")
        assert second.returncode == 3
        assert "another build holds" in second.stderr and "--wait" in second.stderr
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert state(settings) == before
    # The next build recovers and publishes the new figure.
    rebuilt = speedbook(settings, "build")
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    document = json.loads((settings.exports / "latest" / "inference.json").read_text())
    assert cerebras_kimi(document)["value"] == 1020.0


def live_registry(tmp_path: Path, base: Path, url: str) -> Path:
    text = base.read_text().replace("https://artificialanalysis.ai/models/kimi-k2-6/providers", url)
    # only two sources fetch during these tests: the server's page and one that fails
    registry = tmp_path / "sources.toml"
    registry.write_text(text)
    return registry


@pytest.fixture
def server(monkeypatch):
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    with FaultServer() as fault:
        yield fault


def test_fetched_snapshots_are_used_by_the_next_build(built, tmp_path, server):
    server.route("/kimi", ok(KIMI_PAGE.replace("{speed}", "1,111").encode(), "text/html"))
    registry = live_registry(tmp_path, built.registry, server.url("/kimi"))
    settings = copy_of(built, tmp_path, registry)
    fetched = speedbook(settings, "fetch", "aa-kimi-k2-6")
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    assert "aa-kimi-k2-6" in fetched.stdout and "new" in fetched.stdout
    newest = SnapshotStore(settings.raw_dir).latest("aa-kimi-k2-6")
    assert newest.obtained_by == "fetched" and newest.url == server.url("/kimi")
    built_again = speedbook(settings, "build")
    assert built_again.returncode == 0, built_again.stdout + built_again.stderr
    document = json.loads((settings.exports / "latest" / "inference.json").read_text())
    figure = cerebras_kimi(document)
    assert figure["value"] == 1111.0 and figure["snapshot"] == newest.snapshot_id


def test_live_build_with_a_failing_source(built, tmp_path, server):
    server.route("/kimi", status(404))  # not retried: the test stays fast
    registry = live_registry(tmp_path, built.registry, server.url("/kimi"))
    # fetch only the local source: a registry holding just it
    text = registry.read_text()
    blocks = [b for b in text.split("[[source]]") if "127.0.0.1" in b]
    registry.write_text("[[source]]" + blocks[0])
    settings = copy_of(built, tmp_path, registry)
    before = state(settings)
    strict = speedbook(settings, "build", "--live", "--strict")
    assert strict.returncode == 1
    assert "failed" in strict.stdout and "not building" in strict.stdout
    assert state(settings)["release"] == before["release"]
    assert SnapshotStore(settings.raw_dir).latest("aa-kimi-k2-6").snapshot_id in before["snapshots"]
