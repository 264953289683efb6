"""Bytes that change on disk after a release cited them: an edit that keeps the size and puts the
old modification time back is noticed (the staging cache hashes a file whose ctime moved), the
source falls back to its last good snapshot, and `latest` moves off the release that cites the
changed bytes, even to an older data date. A release is never published citing a snapshot whose
bytes no longer hash to what it records; a data file replaced by a link to /dev/zero is refused,
never read."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_build import copy_of
from test_store_special_files import ONE_GB, run_limited

from pipeline.dagster.assets import release as release_assets
from pipeline.raw.inventory import citation_check
from pipeline.raw.snapshots import SnapshotStore
from pipeline.release.publish import PublishError, publish_release, read_release
from pipeline.support.file_keys import file_key
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect
from pipeline.warehouse.staging import verified_files

KIMI_PAGE = (Path(__file__).parent / "fixtures" / "aa_kimi_page.html").read_text()


def where(settings: Settings) -> list[str]:
    return ["--warehouse", str(settings.warehouse), "--exports", str(settings.exports)]


def add_kimi(settings: Settings, speed: str) -> Path:
    store = SnapshotStore(settings.raw_dir)
    meta = store.add(
        "aa-kimi-k2-6",
        KIMI_PAGE.replace("{speed}", speed).encode(),
        url="https://artificialanalysis.ai/models/kimi-k2-6/providers",
        retrieved_at=datetime(2026, 11, 30, 6, tzinfo=UTC),
        content_type="text/html",
        obtained_by="manual",
        extension="html",
    ).meta
    return store.path_of(meta)


def cerebras_kimi(release: Path) -> float:
    document = json.loads((release / "inference.json").read_text())
    cerebras = next(p for p in document["providers"] if p["id"] == "cerebras")
    (value,) = [  # its current figure: the page's one speed
        f["value"]
        for f in cerebras["figures"]
        if f["model"]["id"] == "kimi-k2.6"
        and f["source"] == "aa-kimi-k2-6"
        and f["metric"] == "output_tokens_per_s"
    ]
    return value


def test_a_same_size_edit_with_the_old_mtime_moves_latest_off_its_release(built, tmp_path, cli):
    settings = copy_of(built, tmp_path)
    page = add_kimi(settings, "700")
    assert cli("build", *where(settings)).status == 0
    assert os.readlink(settings.exports / "latest") == "2026.11.30"
    assert cerebras_kimi(settings.exports / "latest") == 700.0
    info = page.stat()
    page.write_bytes(page.read_bytes().replace(b"<td>700</td>", b"<td>900</td>"))
    os.utime(page, ns=(info.st_atime_ns, info.st_mtime_ns))  # same size, same mtime
    assert (page.stat().st_size, page.stat().st_mtime_ns) == (info.st_size, info.st_mtime_ns)

    result = cli("build", *where(settings))
    assert result.status == 4, result.out + result.err  # published; a snapshot not used
    assert "damaged, not used: sha256 mismatch" in result.err
    latest = settings.exports / "latest"
    assert os.readlink(latest) == "2026.11.29.1"  # an older data date, and latest
    assert cerebras_kimi(latest) == cerebras_kimi(settings.exports / "2026.11.29")
    cited = {ref["id"] for ref in read_release(latest)["inference.json"]["snapshots"]}
    assert f"aa-kimi-k2-6/{page.name}" not in cited
    changes = json.loads((latest / "changes.json").read_text())
    assert changes["from"]["version"] == "2026.11.30"
    assert "replaces release 2026.11.30 as latest" in (latest / "CHANGELOG.md").read_text()
    # and it stays so: the next build has nothing new
    again = cli("build", *where(settings))
    assert again.status == 4 and os.readlink(latest) == "2026.11.29.1"


def test_a_build_keeps_the_key_of_every_file_it_verified_for_the_release_check(built):
    """What the release's citation check trusts (pipeline/warehouse/staging.py, verified_files):
    every snapshot the release cites, with its data file's key as it is on disk."""
    store = SnapshotStore(built.raw_dir)
    with connect(built, read_only=True) as con:
        verified = verified_files(con)
    cited = read_release(built.exports / "latest")["inference.json"]["snapshots"]
    assert cited
    metas = {meta.snapshot_id: meta for meta in store.list()}
    for ref in cited:
        path = store.path_of(metas[ref["id"]])
        assert verified[ref["id"]] == (ref["sha256"], file_key(path.stat())), ref["id"]
    # what the release asks for: those of the snapshots it cites, and none besides
    ids = sorted({ref["id"] for ref in cited})
    with connect(built, read_only=True) as con:
        assert verified_files(con, ids) == {i: verified[i] for i in ids}
        assert verified_files(con, []) == {}
    assert len(verified) > len(ids)  # the whole history holds more


def test_bytes_changed_after_the_build_read_them_keep_its_release_unpublished(
    built, tmp_path, cli, monkeypatch
):
    """Between extraction and the release, a cited page is edited to the same size with its
    old mtime put back: its ctime moved, so the release check hashes it and refuses it."""
    settings = copy_of(built, tmp_path)
    page = add_kimi(settings, "700")
    original = release_assets.verified_files

    def edited_meanwhile(con, snapshot_ids=None):
        found = original(con, snapshot_ids)
        info = page.stat()
        page.write_bytes(page.read_bytes().replace(b"<td>700</td>", b"<td>900</td>"))
        os.utime(page, ns=(info.st_atime_ns, info.st_mtime_ns))
        return found

    monkeypatch.setattr(release_assets, "verified_files", edited_meanwhile)
    result = cli("build", *where(settings))
    assert result.status != 0, result.out
    assert "release 2026.11.30 not published: it would cite 1 snapshot(s)" in result.err
    assert f"aa-kimi-k2-6/{page.name}: sha256 mismatch" in result.err
    assert os.readlink(settings.exports / "latest") == "2026.11.29"


def test_no_release_is_published_citing_bytes_that_no_longer_match(built, tmp_path):
    """The check before publishing, on its own: the bytes of a snapshot the new release cites
    changed after the build read them."""
    settings = copy_of(built, tmp_path)
    documents = read_release(settings.exports / "2026.11.29")
    victim = documents["inference.json"]["snapshots"][0]["id"]
    store = SnapshotStore(settings.raw_dir)
    meta = next(m for m in store.list() if m.snapshot_id == victim)
    path = store.path_of(meta)
    path.write_bytes(path.read_bytes() + b"\n")

    def render(version: str) -> dict:
        return {name: doc | {"version": version} for name, doc in documents.items()}

    with pytest.raises(PublishError, match=f"cite 1 snapshot.*{victim}: sha256 mismatch"):
        publish_release(
            settings.exports,
            datetime(2026, 12, 1, tzinfo=UTC),
            render,
            check=citation_check(store),
            take_latest=True,
        )
    assert sorted(p.name for p in settings.exports.iterdir()) == ["2026.11.29", "latest"]


@pytest.mark.timeout(400)
def test_a_data_file_replaced_by_a_link_to_dev_zero_after_it_was_read(built, tmp_path):
    """The staging cache's check of a changed file goes through the store: the link is refused,
    never followed (it used to be hashed with read_bytes(), reading /dev/zero forever)."""
    settings = copy_of(built, tmp_path)
    store = SnapshotStore(settings.raw_dir)
    newest = store.list("aa-gpt-oss-120b")[-1]  # it has an older snapshot to fall back to
    data = store.path_of(newest)
    data.unlink()
    data.symlink_to("/dev/zero")
    build = run_limited(
        "build",
        "--exports",
        str(settings.exports),
        warehouse=settings.warehouse,
        memory=6 * ONE_GB,  # a lake build's address space, as test_store_special_files found
        timeout=300,
    )
    assert build.returncode == 4, build.stderr[-3000:]
    assert f"aa-gpt-oss-120b/{newest.file}: cannot read {data}: a symbolic link" in build.stderr
