"""Metadata records are checked when read: a bad record is reported, naming its file and the
field, and only that snapshot is skipped, by the library, `sources`, `snapshot list` and `build`."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import CliResult
from test_build import copy_of

from pipeline.raw import snapshots
from pipeline.raw.inventory import take_inventory
from pipeline.raw.snapshots import META_SUFFIX, SnapshotError, SnapshotMeta, SnapshotStore
from pipeline.sources.registry import load_registry
from pipeline.support.settings import Settings

WHEN = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
BAD_NAME = "20261130T000000Z-aaaaaaaaaaaa.html"
Cli = Callable[..., CliResult]


def add(store: SnapshotStore, data: bytes, source: str = "example-page") -> SnapshotMeta:
    return store.add(
        source,
        data,
        url="https://example.org/page",
        retrieved_at=WHEN,
        content_type="text/html",
        obtained_by="manual",
        extension="html",
    ).meta


def write_record(folder: Path, record: dict[str, object], name: str = BAD_NAME) -> Path:
    """A metadata record beside the good ones, as a hand edit or a damaged copy would leave it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name + META_SUFFIX)
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def good_record(meta: SnapshotMeta, name: str = BAD_NAME) -> dict[str, object]:
    record = json.loads(meta.to_json())
    record["file"] = name
    return record


BAD_FIELDS = [
    ("retrieved_at", "yesterday", "retrieved_at 'yesterday' is not an ISO 8601 time"),
    ("retrieved_at", "0001-01-01T00:00:00+01:00", "is not an ISO 8601 time"),
    ("retrieved_at", 20261129, "retrieved_at must be a string"),
    ("sha256", "abc123", "sha256 'abc123' is not 64 lower-case hex digits"),
    ("sha256", "A" * 64, "is not 64 lower-case hex digits"),
    ("sha256", None, "sha256 must be a string"),
    ("size", -1, "size -1 is not a non-negative integer"),
    ("size", "12", "size '12' is not a non-negative integer"),
    ("size", 1.5, "is not a non-negative integer"),
    ("size", True, "is not a non-negative integer"),
    (
        "obtained_by",
        "stolen",
        "obtained_by 'stolen' is not one of bundled, fetched, manual, reconstructed",
    ),
    ("obtained_by", "reconstructed", "obtained_by 'reconstructed' needs reconstructed_from"),
    ("reconstructed_from", {"title": "x", "url": None, "snapshot": None}, "only for obtained_by"),
    ("source_id", "other-page", "source_id 'other-page' does not match its folder 'example-page'"),
    ("url", "javascript:alert(1)", "is not an http(s) URL"),
    ("bytes_file", "../other/secret.html", "plain file names"),
    ("http", {"etag": 1}, "http must map header names to strings"),
    ("note", ["x"], "note must be a string"),
]


@pytest.mark.parametrize(("field", "value", "message"), BAD_FIELDS)
def test_a_bad_field_is_reported_and_only_that_snapshot_is_skipped(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    store = SnapshotStore(tmp_path)
    good = add(store, b"<html>fine</html>")
    record = good_record(good)
    record[field] = value
    path = write_record(tmp_path / "example-page", record)
    errors: list[str] = []
    assert store.list(errors=errors) == [good]
    assert len(errors) == 1
    assert errors[0].startswith(f"{path}: invalid snapshot metadata: ")
    assert message in errors[0]
    with pytest.raises(SnapshotError, match="invalid snapshot metadata"):
        store.list()
    # The build's inventory skips it too and keeps the good snapshot.
    sources = {"example-page": object()}
    inventory = take_inventory(store, sources)  # type: ignore[arg-type]
    assert inventory.snapshots == [good] and inventory.problems == (errors[0],)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"source_id": "example-page"}', "missing"),
        ("{not json", "unreadable snapshot metadata"),
    ],
)
def test_a_record_of_the_wrong_shape_is_reported(tmp_path: Path, text: str, message: str) -> None:
    store = SnapshotStore(tmp_path)
    good = add(store, b"<html>fine</html>")
    (tmp_path / "example-page" / (BAD_NAME + META_SUFFIX)).write_text(text)
    errors: list[str] = []
    assert store.list(errors=errors) == [good]
    assert BAD_NAME in errors[0] and message in errors[0]


DOCUMENT = {
    "title": "Fastest LLM Inference in 2026",
    "url": "https://example.org/article",
    "snapshot": "example-article/20260628T000000Z-18ce51d60286.html",
}


def test_a_reconstructed_record_names_the_document_and_reads_back(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    meta = store.add(
        "example-page",
        b"<html>rebuilt</html>",
        url="https://example.org/page",
        retrieved_at=WHEN,
        content_type="text/html",
        obtained_by="reconstructed",
        reconstructed_from=DOCUMENT,
        extension="html",
    ).meta
    record = json.loads((tmp_path / "example-page" / (meta.file + META_SUFFIX)).read_text())
    assert record["obtained_by"] == "reconstructed" and record["reconstructed_from"] == DOCUMENT
    assert store.list() == [meta] and store.list()[0].reconstructed_from == DOCUMENT  # cached too
    # a record of another kind has no such field at all: records written before stay as they were
    other = add(store, b"<html>captured</html>")
    assert "reconstructed_from" not in json.loads(other.to_json())


BAD_DOCUMENTS = [
    ("a title", "needs reconstructed_from: {title, url, snapshot}"),
    ({"title": "x", "url": None}, "exactly the keys title, url, snapshot"),
    (DOCUMENT | {"page": 3}, "exactly the keys title, url, snapshot"),
    (DOCUMENT | {"title": " "}, "reconstructed_from.title must be a non-empty string"),
    (DOCUMENT | {"title": None}, "reconstructed_from.title must be a non-empty string"),
    (DOCUMENT | {"url": "javascript:alert(1)"}, "reconstructed_from.url 'javascript:alert(1)'"),
    (DOCUMENT | {"url": "https://u:p@example.org/"}, "user name or password"),
    (DOCUMENT | {"snapshot": "../etc/passwd"}, "is not a <source_id>/<file> id"),
    (DOCUMENT | {"snapshot": "example-article"}, "is not a <source_id>/<file> id"),
    (DOCUMENT | {"snapshot": 7}, "is not a <source_id>/<file> id"),
]


@pytest.mark.parametrize(("document", "message"), BAD_DOCUMENTS)
def test_a_bad_reconstructed_from_is_refused_by_add_and_skipped_when_read(
    tmp_path: Path, document: object, message: str
) -> None:
    store = SnapshotStore(tmp_path)
    with pytest.raises(SnapshotError, match=re.escape(message)):
        store.add(
            "example-page",
            b"<html>rebuilt</html>",
            url="https://example.org/page",
            retrieved_at=WHEN,
            content_type="text/html",
            obtained_by="reconstructed",
            reconstructed_from=document,  # type: ignore[arg-type]
            extension="html",
        )
    assert not (tmp_path / "example-page").exists() or not any(
        (tmp_path / "example-page").glob("*" + META_SUFFIX)
    )
    good = add(store, b"<html>fine</html>")
    record = good_record(good) | {"obtained_by": "reconstructed", "reconstructed_from": document}
    write_record(tmp_path / "example-page", record)
    errors: list[str] = []
    assert store.list(errors=errors) == [good]
    assert len(errors) == 1 and message in errors[0], errors


def test_a_listing_cache_of_an_older_version_is_read_again(tmp_path: Path) -> None:
    """Records marked reconstructed in place (the bundled corpus was) are read again, not taken
    from a cache that still says bundled."""
    store = SnapshotStore(tmp_path)
    good = add(store, b"<html>fine</html>")
    store.list()  # writes the cache
    path = tmp_path / "example-page" / (good.file + META_SUFFIX)
    record = json.loads(path.read_text())
    path.write_text(
        json.dumps(record | {"obtained_by": "reconstructed", "reconstructed_from": DOCUMENT})
    )
    cache = json.loads((tmp_path / ".snapshot-index.json").read_text())
    cache["version"] = 3  # as the version before reconstructed records wrote it
    (tmp_path / ".snapshot-index.json").write_text(json.dumps(cache))
    assert store.list()[0].obtained_by == "reconstructed"


def test_an_unknown_field_is_reported(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    good = add(store, b"<html>fine</html>")
    write_record(tmp_path / "example-page", good_record(good) | {"colour": "red"})
    errors: list[str] = []
    store.list(errors=errors)
    assert "unexpected keyword argument 'colour'" in errors[0]


def test_a_time_with_an_offset_is_read_as_utc_in_the_stored_spelling(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    good = add(store, b"<html>fine</html>")
    record = good_record(good) | {"retrieved_at": "2026-11-30T10:00:00+02:00"}
    write_record(tmp_path / "example-page", record)
    listed = store.list()
    assert [m.retrieved_at for m in listed] == ["2026-11-29T12:00:00Z", "2026-11-30T08:00:00Z"]


def test_a_bad_record_is_never_cached_and_an_old_cache_is_dropped(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    good = add(store, b"<html>fine</html>")
    record = good_record(good) | {"retrieved_at": "yesterday"}
    write_record(tmp_path / "example-page", record)
    for _ in range(2):  # the second listing reads the cache the first one wrote
        errors: list[str] = []
        assert store.list(errors=errors) == [good] and len(errors) == 1
    # A cache written before records were checked may hold the bad record: it is not trusted.
    entries = {"example-page": {BAD_NAME + META_SUFFIX: record}}
    (tmp_path / ".snapshot-index.json").write_text(json.dumps({"version": 1, "entries": entries}))
    errors = []
    assert store.list(errors=errors) == [good] and "yesterday" in errors[0]


@pytest.mark.parametrize("source_id", ["../x", "..", "a/b", "Example", "x\n", "", "-x"])
def test_a_source_id_that_is_not_a_slug_is_refused(tmp_path: Path, source_id: str) -> None:
    store = SnapshotStore(tmp_path / "raw")
    (tmp_path / "x").mkdir()  # what `../x` would reach
    with pytest.raises(SnapshotError, match="is not a source id"):
        store.list(source_id)
    with pytest.raises(SnapshotError, match="is not a source id"):
        add(store, b"data", source=source_id)
    assert not (tmp_path / "raw").exists() and not any((tmp_path / "x").iterdir())


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    """Set the process umask for one test; the store reads it once, so forget what it read."""
    original = os.umask(0o022)
    os.umask(original)

    def set_mask(mask: int) -> None:
        os.umask(mask)
        snapshots._file_mode.cache_clear()

    yield set_mask
    os.umask(original)
    snapshots._file_mode.cache_clear()


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_snapshots_are_readable_as_the_umask_allows(
    tmp_path: Path, umask: Callable[[int], None], mask: int, mode: int
) -> None:
    umask(mask)
    meta = add(SnapshotStore(tmp_path), b"<html>captured</html>")
    folder = tmp_path / "example-page"
    for path in (folder / meta.file, folder / (meta.file + META_SUFFIX)):
        assert stat.S_IMODE(path.stat().st_mode) == mode, path.name


# --- through the commands ------------------------------------------------------------------


def break_openrouter(settings: Settings, **fields: object) -> Path:
    """A second openrouter record, copied from the bundled one with ``fields`` changed."""
    folder = settings.raw_dir / "openrouter"
    source = next(folder.glob("*" + META_SUFFIX))
    record = json.loads(source.read_text()) | {"file": BAD_NAME} | fields
    return write_record(folder, record)


@pytest.mark.parametrize(("field", "value", "message"), BAD_FIELDS[:1] + BAD_FIELDS[3:])
def test_sources_warns_and_lists_the_rest(
    settings: Settings, cli: Cli, field: str, value: object, message: str
) -> None:
    if field == "source_id":
        value, message = "aa-kimi-k2-6", "does not match its folder 'openrouter'"
    path = break_openrouter(settings, **{field: value})
    for args in (("sources",), ("sources", "--json")):
        result = cli(*args)
        assert result.status == 0, result.err
        assert "Traceback" not in result.err
        warning = f"warning: snapshot skipped: {path}: invalid snapshot metadata: "
        assert warning in result.err and message in result.err
    rows = {row["id"]: row for row in json.loads(result.out)}
    assert rows["openrouter"]["snapshots"] == 1
    assert rows["openrouter"]["retrieved_at"] == "2026-05-12T19:10:11Z"


def test_sources_warns_about_unreadable_metadata_and_unregistered_folders(
    settings: Settings, cli: Cli
) -> None:
    stray = settings.raw_dir / "not-registered"  # a valid snapshot of a source not registered
    shutil.copytree(settings.raw_dir / "openrouter", stray)
    for path in stray.glob("*" + META_SUFFIX):
        path.write_text(path.read_text().replace('"openrouter"', '"not-registered"'))
    broken = settings.raw_dir / "openrouter" / (BAD_NAME + META_SUFFIX)
    broken.write_text("{not json")
    result = cli("sources")
    assert result.status == 0
    assert f"warning: snapshot skipped: {broken}: unreadable snapshot metadata" in result.err
    assert "source 'not-registered' is not in the registry" in result.err
    every = len(load_registry(settings.registry))
    unbundled = 2  # Vercel AI Gateway's two sources: nothing was captured to bundle
    assert f"{every} sources, {every - unbundled} with a snapshot" in result.out


def test_snapshot_list_skips_a_bad_record_with_a_warning(settings: Settings, cli: Cli) -> None:
    path = break_openrouter(settings, retrieved_at="yesterday")
    for args in (("snapshot", "list"), ("snapshot", "list", "openrouter")):
        result = cli(*args)
        assert result.status == 1
        assert "yesterday" not in result.out
        assert "openrouter/20260512T191011Z-e0abb957ba9b.json" in result.out
        assert f"warning: {path}: invalid snapshot metadata: retrieved_at 'yesterday'" in result.err


def test_build_skips_bad_records_reports_each_once_and_still_releases(
    built: Settings, tmp_path: Path, cli: Cli
) -> None:
    settings = copy_of(built, tmp_path)  # its build writes into its own lake
    bad_time = break_openrouter(settings, retrieved_at="yesterday")
    unreadable = settings.raw_dir / "aa-kimi-k2-6" / (BAD_NAME + META_SUFFIX)
    unreadable.write_text("{not json")
    result = cli(
        "build", "--warehouse", str(settings.warehouse), "--exports", str(settings.exports)
    )
    assert result.status == 0, result.out + result.err
    lines = result.err.splitlines()  # the progress lines, on stderr
    skipped = [line.split("] ", 1)[1] for line in lines if "snapshot skipped" in line]
    assert len(skipped) == 2, lines
    assert any(str(bad_time) in s and "retrieved_at 'yesterday'" in s for s in skipped)
    assert any(str(unreadable) in s and "unreadable snapshot metadata" in s for s in skipped)


def test_the_listing_cache_gives_back_every_field_of_every_record(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    store.add(
        "example-page",
        b"<html>fine</html>",
        url="https://example.org/page",
        retrieved_at=WHEN,
        content_type="text/html",
        obtained_by="fetched",
        extension="html",
        note="with a note",
        http={"etag": '"abc"', "last-modified": "Sun, 29 Nov 2026 12:00:00 GMT"},
    )
    store.add(
        "example-article",
        b"<html>rebuilt</html>",
        url="https://example.org/article",
        retrieved_at=WHEN,
        content_type="text/html",
        obtained_by="reconstructed",
        extension="html",
        reconstructed_from=DOCUMENT,
    )
    read = store.list()  # read from the records, and cached
    cache = json.loads((tmp_path / ".snapshot-index.json").read_text())
    assert cache["version"] == 6 and cache["fields"] == [f for f in snapshots._MetaIndex.FIELDS]
    assert {len(v) for e in cache["entries"].values() for v in e.values()} == {13}
    for path in tmp_path.glob(f"*/*{META_SUFFIX}"):
        path.write_text("not a record")  # from here on, only the cache can give them
    assert store.list() == read
    assert read[1].http["etag"] == '"abc"' and read[0].reconstructed_from == DOCUMENT


@pytest.mark.parametrize(
    "damage",
    ["other fields", "short record", "an object per record"],
)
def test_a_cache_of_another_shape_is_not_used(tmp_path: Path, damage: str) -> None:
    store = SnapshotStore(tmp_path)
    good = add(store, b"<html>fine</html>")
    store.list()
    path = tmp_path / ".snapshot-index.json"
    cache = json.loads(path.read_text())
    entry = cache["entries"]["example-page"]
    (name,) = entry
    if damage == "other fields":  # a version whose records had another field order
        cache["fields"] = list(reversed(cache["fields"]))
        entry[name] = list(reversed(entry[name]))
    elif damage == "short record":
        entry[name] = entry[name][:-1]
    else:
        entry[name] = json.loads(good.to_json())
    entry[name][0 if damage != "an object per record" else "url"] = "https://example.org/stale"
    path.write_text(json.dumps(cache))
    assert store.list() == [good]  # read from its record again
