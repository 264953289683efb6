"""The history the preview page draws, read from a release's own Parquet.

inference.json carries each endpoint's current figures only; a release's history is in its
Parquet (pipeline/release/parquet.py): `parquet/history/endpoint_figures/<day>.parquet`, every
figure of every endpoint snapshot by snapshot, a file a day (releases before that: one file,
`endpoint_figures.parquet`), and `parquet/core/snapshots.parquet`, when each snapshot was
retrieved. All are files of the release, so a site can draw the same series from them.

A series is one endpoint's figures of one metric, method, statistic and window, one point per
observed time. Where several captures give a figure for the same time (OpenRouter's daily chart
repeats each day of its week in every capture, and revises the day in progress), the point is
the newest capture's figure, as an endpoint's current figure is its newest observation. Only
points are drawn: a bound or a range (the source gives no single value) and a value that is not a
finite number are left out of a series.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.release.chart_geometry import finite
from pipeline.release.formatting import timestamp

HISTORY_DAYS = Path("parquet") / "history" / "endpoint_figures"  # a file a day
HISTORY_FILE = Path("parquet") / "history" / "endpoint_figures.parquet"  # the one of older ones
SNAPSHOTS_FILE = Path("parquet") / "core" / "snapshots.parquet"
_TIME = pa.timestamp("us", tz="UTC")
HISTORY_SCHEMA = pa.schema(
    [
        ("endpoint_id", pa.string()),
        ("metric", pa.string()),
        ("method", pa.string()),
        ("statistic", pa.string()),
        ("window_minutes", pa.int64()),
        ("value", pa.float64()),
        ("qualifier", pa.string()),
        ("observed_at", _TIME),
        ("observed_at_bound", pa.string()),
        ("stale", pa.bool_()),
        ("suspect", pa.bool_()),
        ("snapshot_id", pa.string()),
    ]
)
SNAPSHOTS_SCHEMA = pa.schema([("snapshot_id", pa.string()), ("retrieved_at", _TIME)])
HISTORY_COLUMNS = tuple(HISTORY_SCHEMA.names)
SNAPSHOT_COLUMNS = tuple(SNAPSHOTS_SCHEMA.names)
# The statistics a series is drawn for: the central one of each method (the tails are drawn as
# the percentile strip's ticks, at their current values).
CENTRAL_STATISTICS = (None, "median", "p50")
SERIES_METRIC = "output_tokens_per_s"
# The rows a series is drawn from; read from the file with it, so the rest of the history (seven
# in eight of its rows: the other metric and the tails) is never loaded (at 4 days of half-hourly
# polls, 335 MiB less of a build's memory and 3 s less).
DRAWN = (pc.field("metric") == SERIES_METRIC) & (
    pc.field("statistic").isin([s for s in CENTRAL_STATISTICS if s is not None])
    | pc.field("statistic").is_null()
)
POINT_QUALIFIERS = (None, "approx")  # a bound or a range is not a point

# endpoint, metric, method, statistic, window
SeriesKey = tuple[str, str, str, str | None, int | None]


class HistoryUnreadable(ValueError):
    """A release's history file is there but cannot be read as one."""


@dataclass(frozen=True)
class Point:
    observed_at: str  # 2026-07-18T08:32:31Z
    bound: str  # exact or lower_bound
    value: float
    approx: bool
    stale: bool
    suspect: bool


def _conform(table: pa.Table, schema: pa.Schema, where: object) -> pa.Table:
    """The table's columns of `schema`, in its types (a column of nulls becomes one of strings);
    HistoryUnreadable naming `where` when a column is missing or holds another kind of value."""
    missing = [name for name in schema.names if name not in table.column_names]
    if missing:
        raise HistoryUnreadable(
            f"{where}: expected the columns {', '.join(schema.names)}; missing {', '.join(missing)}"
        )
    try:
        return table.select(schema.names).cast(schema)
    except (pa.ArrowException, ValueError) as error:
        raise HistoryUnreadable(
            f"{where}: a column holds values of another type than expected ({error})"
        ) from None


def _as_written(path: Path, schema: pa.Schema) -> bool:
    """Whether the file has the schema's columns in its types, as a release writes it (only its
    footer is read); HistoryUnreadable when it is not a Parquet file."""
    try:
        written = pq.read_schema(path)
    except (OSError, pa.ArrowException) as error:
        raise HistoryUnreadable(f"{path}: not a readable Parquet file ({error})") from None
    return all(
        name in written.names and written.field(name).type == field.type
        for name, field in zip(schema.names, schema, strict=True)
    )


def _read(path: Path, schema: pa.Schema, rows: pc.Expression | None = None) -> pa.Table:
    """The file's rows (those of `rows`) in the schema's columns and types. Rows are picked as
    the file is read when it is as a release writes it; any other is read whole, and _conform
    names what is missing or of another type."""
    as_written = _as_written(path, schema)
    try:
        written = pq.read_schema(path).names
        columns = [name for name in schema.names if name in written]
        table = pq.read_table(path, columns=columns, filters=rows if as_written else None)
    except (OSError, pa.ArrowException) as error:
        raise HistoryUnreadable(f"{path}: not a readable Parquet file ({error})") from None
    table = _conform(table, schema, path)
    return table if as_written or rows is None else table.filter(rows)


class FigureHistory:
    """The central figures of output speed of every endpoint, over time (see the module): in
    memory, or in a release's files, from which a series reads only its endpoints' rows (at 30
    days of half-hourly polls the drawn rows of every endpoint took 1.8 GiB to hold, for the
    few endpoints a preview draws)."""

    def __init__(
        self,
        figures: pa.Table | None,
        retrieved: dict[str, datetime],
        files: tuple[Path, ...] = (),
    ) -> None:
        self._figures = figures  # None: read from `files` (read_history)
        self._files = files
        self._retrieved = retrieved

    @classmethod
    def from_tables(
        cls, figures: pa.Table, snapshots: pa.Table, where: object = "history"
    ) -> FigureHistory:
        """From the two tables (the columns of HISTORY_SCHEMA and SNAPSHOTS_SCHEMA)."""
        figures = _conform(figures, HISTORY_SCHEMA, where)
        return cls(figures.filter(DRAWN), _retrieved(_conform(snapshots, SNAPSHOTS_SCHEMA, where)))

    def _rows(self, endpoints: Collection[str]) -> list[dict[str, object]]:
        """The drawn rows of these endpoints."""
        wanted = pc.field("endpoint_id").isin(pa.array(sorted(endpoints), pa.string()))
        if self._figures is not None:
            return self._figures.filter(wanted).to_pylist()
        return [
            row
            for path in self._files
            for row in _read(path, HISTORY_SCHEMA, DRAWN & wanted).to_pylist()
        ]

    def series(self, endpoints: Collection[str]) -> dict[SeriesKey, list[Point]]:
        """Every series of the given endpoints, each in time order."""
        if not endpoints:
            return {}
        rows = self._rows(endpoints)
        newest: dict[tuple[SeriesKey, datetime], tuple[tuple[str, str], Point]] = {}
        for row in rows:
            value, observed = row["value"], row["observed_at"]
            if not finite(value) or observed is None or row["qualifier"] not in POINT_QUALIFIERS:
                continue
            key: SeriesKey = (
                row["endpoint_id"],
                row["metric"],
                row["method"],
                row["statistic"],
                row["window_minutes"],
            )
            retrieved = self._retrieved.get(row["snapshot_id"])
            order = (timestamp(retrieved) or "", row["snapshot_id"] or "")
            point = Point(
                observed_at=timestamp(observed) or "",
                bound=row["observed_at_bound"] or "exact",
                value=float(value),
                approx=row["qualifier"] == "approx",
                stale=bool(row["stale"]),
                suspect=bool(row["suspect"]),
            )
            held = newest.get((key, observed))
            if held is None or order > held[0]:
                newest[(key, observed)] = (order, point)
        found: dict[SeriesKey, list[Point]] = {}
        for (key, _), (_, point) in sorted(newest.items(), key=lambda item: item[0][1]):
            found.setdefault(key, []).append(point)
        return found


def read_history(release: Path) -> FigureHistory | None:
    """The history in a release folder; None when the release has none (a release written
    before its Parquet carried the history, or one without Parquet). Raises HistoryUnreadable
    when a file is there but is not the table it should be."""
    days, snapshots = release / HISTORY_DAYS, release / SNAPSHOTS_FILE
    if days.is_dir():
        files = sorted(days.glob("*.parquet"))
    elif (release / HISTORY_FILE).is_file():
        files = [release / HISTORY_FILE]
    else:
        files = []
    if not files or not snapshots.is_file():
        return None
    for path in files:  # a file that cannot be read as history is named now, not when drawn
        if not _as_written(path, HISTORY_SCHEMA):
            _read(path, HISTORY_SCHEMA)
    return FigureHistory(None, _retrieved(_read(snapshots, SNAPSHOTS_SCHEMA)), tuple(files))


def _retrieved(snapshots: pa.Table) -> dict[str, datetime]:
    """When each snapshot was retrieved, by id."""
    return dict(
        zip(
            snapshots["snapshot_id"].to_pylist(),
            snapshots["retrieved_at"].to_pylist(),
            strict=True,
        )
    )
