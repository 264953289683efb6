"""`SnapshotStore.stats_of` (each stat relative to its source's folder, opened once) says what
`stat_of` says of every kind of file a store can hold: plain, compressed, missing, a link in a
file's place (never followed), a source folder gone. Real files."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime

from pipeline.raw.snapshots import COMPRESSED_SUFFIX, SnapshotMeta, SnapshotStore, compress


def _add(store: SnapshotStore, source_id: str, day: int) -> SnapshotMeta:
    return store.add(
        source_id,
        b'{"day": %d}' % day,
        url="https://example.org/data.json",
        retrieved_at=datetime(2026, 11, day, tzinfo=UTC),
        content_type="application/json",
        obtained_by="manual",
        extension="json",
    ).meta


def _key(info: os.stat_result | None) -> tuple | None:
    return None if info is None else (info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns)


def test_every_kind_of_file_is_looked_at_as_stat_of_does(tmp_path):
    store = SnapshotStore(tmp_path / "raw")
    plain, packed, missing, linked = (_add(store, "alpha", day) for day in (1, 2, 3, 4))
    elsewhere = _add(store, "beta", 5)
    gone = _add(store, "gamma", 6)
    path = store.path_of(packed)
    path.with_name(path.name + COMPRESSED_SUFFIX).write_bytes(compress(path.read_bytes()))
    path.unlink()
    store.path_of(missing).unlink()
    target = tmp_path / "outside.json"
    target.write_bytes(b"{}")
    store.path_of(linked).unlink()
    store.path_of(linked).symlink_to(target)
    shutil.rmtree(store.source_dir("gamma"))
    metas = [plain, packed, missing, linked, elsewhere, gone]

    infos = store.stats_of(metas)

    assert [_key(i) for i in infos] == [_key(store.stat_of(m)) for m in metas]
    assert infos[1] is not None and infos[2] is None and infos[5] is None
    assert infos[3] is not None and os.path.islink(store.path_of(linked))  # the link itself
    assert store.stats_of([]) == []
