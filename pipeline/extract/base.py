"""What every parser shares: its input, its error, and validation against the staged models."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pandera.errors as pa_errors

from pipeline.registry import Source
from pipeline.schema.staged import FRAMES
from pipeline.snapshots import SnapshotMeta
from pipeline.text import TextDecodeError, decode_text


class ExtractError(ValueError):
    """A snapshot could not be read as its format expects. The message names the source, the
    snapshot and what was expected, so a maintainer knows which page changed and how."""

    def __init__(self, snapshot_id: str, message: str) -> None:
        super().__init__(f"{snapshot_id}: {message}")
        self.snapshot_id = snapshot_id


@dataclass(frozen=True)
class SnapshotInput:
    meta: SnapshotMeta
    source: Source
    data: bytes

    @property
    def snapshot_id(self) -> str:
        return self.meta.snapshot_id

    @property
    def observed_at(self) -> pd.Timestamp:
        return pd.Timestamp(self.meta.retrieved_at)

    def fail(self, message: str) -> ExtractError:
        return ExtractError(self.snapshot_id, message)

    def text(self) -> str:
        try:
            return decode_text(self.data, self.meta.content_type, self.snapshot_id)
        except TextDecodeError as error:
            raise ExtractError(self.snapshot_id, str(error)) from None


Frames = dict[str, pd.DataFrame]
ParseFunction = Callable[[SnapshotInput], Frames]


@dataclass(frozen=True)
class Parser:
    """A format's parser. `version` is part of the extraction cache key: bump it whenever the
    parser's output for the same bytes would change."""

    format: str
    version: str
    frames: tuple[str, ...]
    parse: ParseFunction


def _summarise(errors: pa_errors.SchemaErrors, limit: int = 6) -> str:
    cases = errors.failure_cases
    parts = []
    for row in cases.head(limit).itertuples(index=False):
        column = getattr(row, "column", None) or "frame"
        parts.append(f"{column}: {row.check} failed for {row.failure_case!r}")
    more = len(cases) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def validated(
    frame_name: str, snapshot: SnapshotInput, rows: Sequence[Mapping[str, Any]]
) -> pd.DataFrame:
    """Build a staged frame from row dicts (adding provenance columns) and validate it lazily."""
    model = FRAMES[frame_name]
    columns = list(model.to_schema().columns)
    provenance = {
        "source_id": snapshot.source.id,
        "snapshot_id": snapshot.snapshot_id,
        "observed_at": snapshot.observed_at,
    }
    records = [provenance | dict(row) for row in rows]
    frame = pd.DataFrame.from_records(records, columns=columns)
    try:
        return model.validate(frame, lazy=True)
    except pa_errors.SchemaErrors as errors:
        raise snapshot.fail(f"{frame_name} failed validation: {_summarise(errors)}") from None
    except pa_errors.SchemaError as error:
        raise snapshot.fail(f"{frame_name} failed validation: {error}") from None
