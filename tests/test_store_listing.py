"""A build lists the snapshot store once (pipeline/raw/inventory.py, Listing): the inventories and
the release's citation check read that one listing, and what changed on disk since it was taken
(a withdrawal, a removed record, damaged bytes) still keeps a release from citing a snapshot. The
check before a build that there is something to read stops at the first readable record."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import BUNDLED_RAW

from pipeline.dagster.envelope import execute
from pipeline.raw.inventory import Listing, citation_check, scope_problem, take_inventory
from pipeline.raw.snapshots import META_SUFFIX, SnapshotStore
from pipeline.sources.registry import load_registry
from pipeline.support.file_keys import file_key
from pipeline.support.settings import Settings

WHEN = datetime(2026, 11, 30, 12, tzinfo=UTC)


def _store(tmp_path: Path) -> SnapshotStore:
    return SnapshotStore(tmp_path / "raw")


def _add(store: SnapshotStore, source_id: str, body: bytes) -> str:
    return store.add(
        source_id,
        body,
        url=f"https://example.org/{source_id}",
        retrieved_at=WHEN,
        content_type="application/json",
        obtained_by="manual",
        extension="json",
    ).meta.snapshot_id


# --- is there anything to read ------------------------------------------------------------------


def test_a_missing_or_empty_store_has_no_snapshots(tmp_path):
    store = _store(tmp_path)
    assert not store.has_snapshots()
    store.root.mkdir()
    (store.root / "openrouter").mkdir()
    assert not store.has_snapshots()
    assert "no snapshot in" in (scope_problem(store.root, None) or "")


def test_withdrawn_and_unreadable_records_do_not_count(tmp_path):
    store = _store(tmp_path)
    _add(store, "openrouter", b"{}")
    assert store.has_snapshots()
    (meta,) = store.list()
    store.withdraw(meta, "added by mistake", WHEN)
    assert not store.has_snapshots() and store.list() == []
    assert "no snapshot in" in (scope_problem(store.root, WHEN) or "")  # with --as-of too
    (store.source_dir("other") / ("x.json" + META_SUFFIX)).parent.mkdir()
    (store.source_dir("other") / ("x.json" + META_SUFFIX)).write_text("{not json")
    assert not store.has_snapshots()
    assert "no snapshot in" in (scope_problem(store.root, None) or "")


def test_one_readable_record_is_enough_and_as_of_still_reads_the_first(tmp_path):
    store = _store(tmp_path)
    _add(store, "openrouter", b"{}")
    assert store.has_snapshots() and scope_problem(store.root, None) is None
    before = datetime(2020, 1, 1, tzinfo=UTC)
    assert "is before the first snapshot" in (scope_problem(store.root, before) or "")
    assert scope_problem(store.root, WHEN) is None


# --- one listing, read by the inventories and the citation check --------------------------------


def test_inventories_from_one_listing_match_their_own_scans(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(BUNDLED_RAW, raw)
    store = SnapshotStore(raw)
    sources = load_registry(Settings.resolve().registry)
    listing = Listing.of(store)
    for as_of in (None, datetime(2026, 6, 1, tzinfo=UTC)):
        assert take_inventory(store, sources, as_of, listing=listing) == take_inventory(
            store, sources, as_of
        )


def test_the_citation_check_sees_what_changed_since_the_listing(tmp_path):
    store = _store(tmp_path)
    good = _add(store, "openrouter", b'{"a": 1}')
    withdrawn = _add(store, "models-dev", b'{"b": 2}')
    removed = _add(store, "artificial-analysis-api", b'{"c": 3}')
    damaged = _add(store, "openrouter-providers", b'{"d": 4}')
    listing = Listing.of(store)
    metas = {meta.snapshot_id: meta for meta in listing.snapshots}
    store.withdraw(metas[withdrawn], "wrong page", WHEN)
    (store.source_dir("artificial-analysis-api") / (metas[removed].file + META_SUFFIX)).unlink()
    store.path_of(metas[damaged]).write_bytes(b'{"d": 5}')
    check = citation_check(store, listing)
    assert check(good, metas[good].sha256) is None
    why = check(withdrawn, metas[withdrawn].sha256)
    assert why == "withdrawn on 2026-11-30T12:00:00Z (wrong page)"
    assert "no longer in the snapshot store" in (check(removed, metas[removed].sha256) or "")
    assert "sha256 mismatch" in (check(damaged, metas[damaged].sha256) or "")
    assert "not the" in (check(good, "0" * 64) or "")
    assert "no longer in the snapshot store" in (check("openrouter/nothing.json", "0" * 64) or "")


def test_the_citation_check_takes_a_verified_file_on_its_hash_while_it_is_unchanged(
    tmp_path, monkeypatch
):
    """A snapshot whose data file still has the key it had when its bytes were verified is not
    read again; any change to the file (new bytes, the same size with the old mtime put back, a
    link in its place) sends it to be hashed, and a withdrawal still counts."""
    store = _store(tmp_path)
    ids = {
        name: _add(store, name, body)
        for name, body in [
            ("openrouter", b'{"a": 1}'),
            ("models-dev", b'{"b": 2}'),
            ("artificial-analysis-api", b'{"c": 3}'),
            ("openrouter-providers", b'{"d": 4}'),
            ("vercel-ai-gateway", b'{"e": 5}'),
        ]
    }
    listing = Listing.of(store)
    metas = {meta.snapshot_id: meta for meta in listing.snapshots}
    paths = {name: store.path_of(metas[sid]) for name, sid in ids.items()}
    verified = {sid: (metas[sid].sha256, file_key(paths[name].stat())) for name, sid in ids.items()}
    paths["models-dev"].write_bytes(b'{"b": 3, "more": 1}')  # new bytes, new size
    same_size = paths["artificial-analysis-api"]
    before = same_size.stat()
    same_size.write_bytes(b'{"c": 4}')
    os.utime(same_size, ns=(before.st_atime_ns, before.st_mtime_ns))
    paths["openrouter-providers"].unlink()
    paths["openrouter-providers"].symlink_to("/dev/zero")
    store.withdraw(metas[ids["vercel-ai-gateway"]], "wrong page", WHEN)
    reads = []
    original = SnapshotStore.read

    def counted(self, meta):
        reads.append(meta.snapshot_id)
        return original(self, meta)

    monkeypatch.setattr(SnapshotStore, "read", counted)
    check = citation_check(store, listing, verified)
    assert check(ids["openrouter"], metas[ids["openrouter"]].sha256) is None
    assert reads == []  # unchanged since verified: not read
    # the same file, verified against other bytes than its record names now: read again
    other = {ids["openrouter"]: ("0" * 64, verified[ids["openrouter"]][1])}
    assert (
        citation_check(store, listing, other)(ids["openrouter"], metas[ids["openrouter"]].sha256)
        is None
    )
    assert reads == [ids["openrouter"]]
    reads.clear()
    for name in ("models-dev", "artificial-analysis-api"):
        assert "sha256 mismatch" in (check(ids[name], metas[ids[name]].sha256) or "")
    link = check(ids["openrouter-providers"], metas[ids["openrouter-providers"]].sha256)
    assert "symbolic link" in (link or "")
    assert reads == [ids["models-dev"], ids["artificial-analysis-api"], ids["openrouter-providers"]]
    vercel = ids["vercel-ai-gateway"]
    assert check(vercel, metas[vercel].sha256) == "withdrawn on 2026-11-30T12:00:00Z (wrong page)"
    assert "not the" in (check(ids["openrouter"], "0" * 64) or "")


@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_a_build_lists_the_store_once(tmp_path, monkeypatch):
    warehouse = tmp_path / "warehouse"
    # the count does not depend on the corpus's size: the bundled one but its two largest sources
    largest = ("models-dev", "openrouter-frontend-stats")  # 10.6 of its 13 MB
    shutil.copytree(BUNDLED_RAW, warehouse / "raw", ignore=shutil.ignore_patterns(*largest))
    settings = Settings.resolve(warehouse=warehouse, exports=tmp_path / "exports")
    scans = []
    original = SnapshotStore._scan

    def counted(self, *args, **kwargs):
        scans.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(SnapshotStore, "_scan", counted)
    outcome = execute(settings)
    assert outcome.success and outcome.published, outcome.failures + outcome.failed_checks
    assert len(scans) == 1, scans  # the inventories and the citation check share it
