"""What a build tells people about snapshots it could not use: for the build's summary and the
release's changelog (CHANGELOG.md, changes.json).

A snapshot counts when it is *newer than the one its source is read from* (mart.latest_snapshots)
within the build's --as-of scope: its parser rejected it or its staged rows failed their model
(`rejected`), or its bytes no longer match their sha256 (`damaged`). An older bad snapshot that a
newer good one superseded is history, not a current problem. A snapshot withdrawn by hand
(`speedbook snapshot remove`) is noted once, in the first release published after it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime

import duckdb

from pipeline.raw.snapshots import Withdrawal, format_utc
from pipeline.support.duck import table_names
from pipeline.support.limits import capped_text

REASON_CHARS = 300  # a parser's message can quote a whole document; the warehouse keeps it all
VERBS = {"rejected": "rejected", "damaged": "damaged, not used", "withdrawn": "withdrawn"}

# Newer than the snapshot the source is read from, in the ordering mart.latest_snapshots uses
# (retrieval time, then id), within the as-of bound; sources no longer registered are left out.
NOT_USED = """
SELECT s.source_id, s.snapshot_id, x.status, coalesce(x.error, x.status) AS error,
       u.snapshot_id AS used_id, u.retrieved_at AS used_at
FROM core.snapshots AS s
JOIN core.extractions AS x USING (snapshot_id)
SEMI JOIN core.sources AS src ON src.source_id = s.source_id
CROSS JOIN core.build_state AS b
LEFT JOIN mart.latest_snapshots AS u ON u.source_id = s.source_id
WHERE x.status IN ('failed', 'damaged')
  AND (b.as_of IS NULL OR s.retrieved_at <= b.as_of)
  AND (u.snapshot_id IS NULL OR s.retrieved_at > u.retrieved_at
       OR (s.retrieved_at = u.retrieved_at AND s.snapshot_id > u.snapshot_id))
ORDER BY s.source_id, s.retrieved_at, s.snapshot_id
"""
USED = "SELECT source_id, snapshot_id, retrieved_at FROM mart.latest_snapshots"


@dataclass(frozen=True)
class SnapshotNote:
    kind: str  # rejected | damaged | withdrawn
    source: str
    snapshot: str  # its id, <source>/<file>
    reason: str
    read_from: str | None  # the snapshot the source is read from instead; None: none usable
    read_from_retrieved_at: str | None

    @property
    def text(self) -> str:
        file = self.snapshot.removeprefix(f"{self.source}/")
        if self.read_from is None:
            still = "no usable snapshot"
        else:
            used = self.read_from.removeprefix(f"{self.source}/")
            still = f"still read from snapshot {used} of {self.read_from_retrieved_at}"
        reason = f": {self.reason}" if self.reason else ""
        return f"{self.source}: snapshot {file} {VERBS[self.kind]}{reason}; {still}"

    def to_json(self) -> dict[str, str | None]:
        return asdict(self) | {"text": self.text}


def _reason(error: str, snapshot_id: str) -> str:
    return capped_text(error.removeprefix(f"{snapshot_id}: "), REASON_CHARS)


def _time(value: datetime | None) -> str | None:
    return format_utc(value) if value is not None else None


def not_used(con: duckdb.DuckDBPyConnection) -> list[SnapshotNote]:
    """The rejected and damaged snapshots newer than the one their source is read from."""
    return [
        SnapshotNote(
            "rejected" if status == "failed" else "damaged",
            source,
            snapshot,
            _reason(error, snapshot),
            used,
            _time(used_at),
        )
        for source, snapshot, status, error, used, used_at in con.execute(NOT_USED).fetchall()
    ]


def withdrawn_since(
    con: duckdb.DuckDBPyConnection, withdrawals: Iterable[Withdrawal], since: datetime | None
) -> list[SnapshotNote]:
    """Snapshots withdrawn after `since` (when the newest release was published; None: every
    one), with the snapshot each source is read from now."""
    # withdrawal times have whole seconds: one in the second of the last publish counts as after
    after = since.replace(microsecond=0) if since is not None else None
    fresh = [w for w in withdrawals if after is None or w.withdrawn >= after]
    if not fresh:
        return []
    used = {row[0]: (row[1], row[2]) for row in con.execute(USED).fetchall()}
    notes = []
    for withdrawal in fresh:
        source = withdrawal.meta.source_id
        read_from, at = used.get(source, (None, None))
        reason = f"on {withdrawal.withdrawn_at}" + (
            f" ({withdrawal.reason})" if withdrawal.reason else ""
        )
        notes.append(
            SnapshotNote("withdrawn", source, withdrawal.snapshot_id, reason, read_from, _time(at))
        )
    return notes


def last_published(con: duckdb.DuckDBPyConnection, *, latest: bool = False) -> datetime | None:
    """When this warehouse last recorded a published release (history.releases), if ever;
    `latest`: of the releases that took `latest` (not an --as-of build's)."""
    if "releases" not in table_names(con, "history"):
        return None
    where = " WHERE as_of IS NULL" if latest else ""
    row = con.execute(f"SELECT max(built_at) FROM history.releases{where}").fetchone()
    return row[0] if row else None
