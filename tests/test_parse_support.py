"""Shared helpers of the parser tests (test_parse_*.py), and the checks that span every format.

Snapshots are read through `SnapshotStore` from the bundled corpus (read-only, sha256 checked);
broken variants are the real bytes edited in the test, so they stay close to what a publisher
would really serve.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import pandas as pd
import pytest
from conftest import BUNDLED_RAW

from pipeline.extract import PARSERS, ExtractError, SnapshotInput
from pipeline.extract.base import Frames
from pipeline.raw.snapshots import SnapshotStore, parse_utc
from pipeline.sources.registry import Source, load_registry
from pipeline.sources.reviewed import ReviewedFiles
from pipeline.support.settings import BUNDLED_METADATA

BUNDLED = SnapshotStore(BUNDLED_RAW)
SOURCES: dict[str, Source] = load_registry(BUNDLED_METADATA / "sources.toml")
REVIEWED = ReviewedFiles.load(BUNDLED_METADATA)  # what the prose parsers read
FIXTURES = Path(__file__).parent / "fixtures"
MB = 1_000_000
PROVENANCE = ["source_id", "snapshot_id", "observed_at"]
# the committed corpus: real files, and pages rebuilt from the seeds (warehouse/raw/README.md)
COMMITTED = ("bundled", "reconstructed")


@cache
def bundled(source_id: str, day: str = "") -> SnapshotInput:
    """The committed snapshot of a source retrieved on `day` (YYYY-MM-DD), else its newest."""
    metas = [
        meta
        for meta in BUNDLED.list(source_id)
        if meta.obtained_by in COMMITTED and meta.retrieved_at.startswith(day)
    ]
    assert metas, f"no bundled snapshot of {source_id} on {day!r}"
    return SnapshotInput(metas[-1], SOURCES[source_id], BUNDLED.read(metas[-1]), REVIEWED)


def parse(snapshot: SnapshotInput, data: bytes | None = None) -> Frames:
    """Run the snapshot's parser, on `data` instead of its bytes when given."""
    if data is not None:
        snapshot = dataclasses.replace(snapshot, data=data)
    return PARSERS[snapshot.source.format].parse(snapshot)


@cache
def _frames(source_id: str, day: str) -> Frames:
    return parse(bundled(source_id, day))


def frame(source_id: str, name: str, day: str = "") -> pd.DataFrame:
    """A frame of the bundled snapshot, parsed once per test session (a copy: tests may edit)."""
    return _frames(source_id, day)[name].copy()


def edit(data: bytes, old: bytes, new: bytes, count: int = -1) -> bytes:
    """The bytes with `old` replaced; `old` must be there, or the variant would test nothing."""
    assert old in data, f"{old[:80]!r} is not in the snapshot"
    return data.replace(old, new, count)


def refused(snapshot: SnapshotInput, data: bytes, *expected: str) -> str:
    """Parse `data` as `snapshot`, expect an ExtractError naming the snapshot once and saying
    each of `expected`, and keep the message short whatever the input's size."""
    with pytest.raises(ExtractError) as caught:
        parse(snapshot, data)
    message = str(caught.value)
    assert caught.value.snapshot_id == snapshot.snapshot_id
    assert message.startswith(f"{snapshot.snapshot_id}: ")
    assert message.count(snapshot.snapshot_id) == 1, message
    for part in expected:
        assert part in message, f"{part!r} not in {message!r}"
    assert len(message) < 1_000, message[:300]
    return message


def in_fixture_store(
    tmp_path: Path,
    source_id: str,
    data: bytes,
    *,
    retrieved_at: str,
    extension: str = "json",
    source: Source | None = None,
    url: str | None = None,
    content_type: str = "application/json",
) -> SnapshotInput:
    """A fixture file stored as a snapshot of `source_id` in a store under tmp_path, read back
    through SnapshotStore like any snapshot. `source` stands in for a source the registry does
    not list (yet); the registry's entry wins when it has one."""
    source = SOURCES.get(source_id) or source
    assert source is not None, f"{source_id} is not in the registry: pass source="
    store = SnapshotStore(tmp_path / "raw")
    meta = store.add(
        source_id,
        data,
        url=url or source.url,
        retrieved_at=parse_utc(retrieved_at),
        content_type=content_type,
        obtained_by="manual",
        extension=extension,
        note="test fixture",
    ).meta
    return SnapshotInput(meta, source, store.read(meta), REVIEWED)


# Every bundled snapshot, with the parser its source's format names.
ALL_BUNDLED = [
    (meta.source_id, meta.retrieved_at[:10])
    for meta in BUNDLED.list()
    if meta.obtained_by in COMMITTED  # not what a maintainer fetched or added into this checkout
]


@pytest.mark.parametrize(("source_id", "day"), ALL_BUNDLED, ids=lambda v: v)
def test_every_bundled_snapshot_parses_into_its_frames(source_id: str, day: str) -> None:
    snapshot = bundled(source_id, day)
    frames = _frames(source_id, day)
    assert set(frames) == set(PARSERS[snapshot.source.format].frames)
    assert sum(len(f) for f in frames.values()) > 0
    for rows in frames.values():
        assert (rows["source_id"] == source_id).all()
        assert (rows["snapshot_id"] == snapshot.snapshot_id).all()


# Formats with no bundled snapshot: no real response of theirs could be found, and nothing is
# bundled that was not captured. Their tests read fixtures written in the documented shape.
UNBUNDLED = {
    "vercel_gateway_endpoints": "Vercel AI Gateway: no full raw response found",
    "vercel_gateway_models": "Vercel AI Gateway: no full raw response found",
}


def test_every_format_has_a_bundled_snapshot_and_a_test_file() -> None:
    bundled_formats = {SOURCES[source_id].format for source_id, _ in ALL_BUNDLED}
    assert bundled_formats == set(PARSERS) - set(UNBUNDLED)
    assert not bundled_formats & set(UNBUNDLED)
    for parser in PARSERS.values():
        module = parser.parse.__module__.rsplit(".", 1)[-1]
        assert (Path(__file__).parent / f"test_parse_{module}.py").exists(), module
