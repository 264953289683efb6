from datetime import UTC, datetime

import pytest

from pipeline.raw.snapshots import (
    SnapshotDamaged,
    SnapshotError,
    SnapshotStore,
    parse_utc,
    snapshot_file_name,
)

WHEN = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def add(store, data, when=WHEN, source="example-page"):
    return store.add(
        source,
        data,
        url="https://example.org/page",
        retrieved_at=when,
        content_type="text/html",
        obtained_by="manual",
        extension="html",
    )


def test_bytes_and_metadata_are_stored_side_by_side(tmp_path):
    store = SnapshotStore(tmp_path)
    result = add(store, b"<html>one</html>")
    assert result.created
    meta = result.meta
    assert meta.retrieved_at == "2026-11-29T12:00:00Z"
    assert meta.file.startswith("20261129T120000Z-") and meta.file.endswith(".html")
    assert (tmp_path / "example-page" / meta.file).read_bytes() == b"<html>one</html>"
    assert (tmp_path / "example-page" / (meta.file + ".meta.json")).exists()
    assert store.read(meta) == b"<html>one</html>"


def test_identical_bytes_are_stored_once(tmp_path):
    store = SnapshotStore(tmp_path)
    first = add(store, b"same bytes")
    again = add(store, b"same bytes", when=datetime(2026, 12, 1, tzinfo=UTC))
    assert not again.created
    assert again.meta == first.meta
    assert len(store.list("example-page")) == 1
    assert len(list((tmp_path / "example-page").iterdir())) == 2


def test_different_bytes_make_a_new_snapshot_and_latest_follows_time(tmp_path):
    store = SnapshotStore(tmp_path)
    add(store, b"old", when=datetime(2026, 6, 1, tzinfo=UTC))
    add(store, b"new", when=datetime(2026, 7, 1, tzinfo=UTC))
    assert store.read(store.latest("example-page")) == b"new"
    june = store.latest("example-page", as_of=datetime(2026, 6, 30, tzinfo=UTC))
    assert store.read(june) == b"old"
    assert store.latest("example-page", as_of=datetime(2026, 1, 1, tzinfo=UTC)) is None


def test_damaged_bytes_are_reported_not_returned(tmp_path):
    store = SnapshotStore(tmp_path)
    meta = add(store, b"original").meta
    (tmp_path / "example-page" / meta.file).write_bytes(b"tampered")
    with pytest.raises(SnapshotDamaged, match="sha256 mismatch"):
        store.read(meta)


def test_missing_bytes_are_reported(tmp_path):
    store = SnapshotStore(tmp_path)
    meta = add(store, b"original").meta
    (tmp_path / "example-page" / meta.file).unlink()
    with pytest.raises(SnapshotDamaged, match="cannot read"):
        store.read(meta)


def test_unreadable_metadata_is_collected_when_asked(tmp_path):
    store = SnapshotStore(tmp_path)
    add(store, b"fine")
    (tmp_path / "example-page" / "broken.html.meta.json").write_text("{not json")
    errors: list[str] = []
    assert len(store.list(errors=errors)) == 1
    assert "broken.html.meta.json" in errors[0]
    with pytest.raises(SnapshotError):
        store.list()


def test_empty_snapshot_is_refused(tmp_path):
    with pytest.raises(SnapshotError, match="empty"):
        add(SnapshotStore(tmp_path), b"")


def test_partial_writes_leave_no_visible_snapshot(tmp_path):
    store = SnapshotStore(tmp_path)
    directory = tmp_path / "example-page"
    directory.mkdir()
    (directory / ".tmp-abc.html").write_bytes(b"half")  # what a killed writer leaves
    assert store.list() == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-06-28", "2026-06-28T00:00:00+00:00"),
        ("2026-06-28T10:00:00+02:00", "2026-06-28T08:00:00+00:00"),
        ("2026-06-28T10:00:00Z", "2026-06-28T10:00:00+00:00"),
    ],
)
def test_parse_utc(text, expected):
    assert parse_utc(text).isoformat() == expected


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00"])
def test_parse_utc_out_of_range_is_a_value_error(text):
    # datetime raises OverflowError here; every caller only handles ValueError
    with pytest.raises(ValueError, match="is out of range"):
        parse_utc(text)


def test_a_page_that_returns_to_older_bytes_becomes_current_without_a_second_copy(tmp_path):
    store = SnapshotStore(tmp_path)
    first = add(store, b"page A", when=datetime(2026, 6, 1, tzinfo=UTC)).meta
    add(store, b"page B", when=datetime(2026, 7, 1, tzinfo=UTC))
    back = add(store, b"page A", when=datetime(2026, 8, 1, tzinfo=UTC))
    assert back.created and back.meta.data_file == first.file and back.meta.file != first.file
    latest = store.latest("example-page")
    assert latest == back.meta and store.read(latest) == b"page A"
    data_files = [p for p in (tmp_path / "example-page").iterdir() if not p.name.endswith(".json")]
    assert len(data_files) == 2  # A and B, each stored once
    # the same bytes again, while A is already the newest: nothing new
    assert not add(store, b"page A", when=datetime(2026, 9, 1, tzinfo=UTC)).created
    # an older capture of known bytes adds nothing to the timeline
    assert not add(store, b"page B", when=datetime(2026, 7, 15, tzinfo=UTC)).created


def test_snapshot_file_name_is_what_add_stores(tmp_path):
    when = datetime(2026, 6, 28, 10, 5, 9, tzinfo=UTC)
    digest = "ab" * 32
    assert snapshot_file_name(when, digest, ".html") == "20260628T100509Z-abababababab.html"
    meta = add(SnapshotStore(tmp_path), b"page", when=when).meta
    assert meta.file == snapshot_file_name(when, meta.sha256, "html")
