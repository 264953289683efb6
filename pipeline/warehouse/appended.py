"""The rows a build appended to the tables that grow per snapshot, found by their row ids.

An appending build (core.py) first deletes the rows that leave its scope, then only inserts. DuckDB
gives inserted rows row ids above every id the table held (a transaction's own rows carry ids above
all committed ones), and a scan filtered on `rowid` reads only the row groups past the bound. The
tables kept up to date from what a build adds (current observations, measurement sources, citation
counts, hour fingerprints, endpoints) read the added rows that way. A semi-join on the build's
snapshot ids read the snapshot id of every row instead: DuckDB's zone maps keep 8 bytes of a
string, so no row group was skipped, and each such scan of the 86 million observations of a quarter
of half-hourly polls took about 0.3 s, several times per poll.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import duckdb

from pipeline.schema.growing import RETRIEVED_WITH_SNAPSHOT


@dataclass(frozen=True)
class Appended:
    """Each table's highest row id before the build inserted (-1: it was empty)."""

    marks: Mapping[str, int]

    def rows(self, table: str) -> str:
        """SQL for the rows of `core.<table>` inserted since its mark (its columns only)."""
        return f"(SELECT * FROM core.{table} WHERE rowid > {int(self.marks[table])})"


def mark_appends(con: duckdb.DuckDBPyConnection, tables: Iterable[str]) -> Appended:
    """Mark `tables` before inserting into them, inside the transaction that inserts; nothing
    may be deleted from them after. The marks hold until it commits: a checkpoint that drops
    deleted rows gives row ids again."""
    marks = {}
    for table in tables:
        row = con.execute(f"SELECT coalesce(max(rowid), -1) FROM core.{table}").fetchone()
        marks[table] = int(row[0]) if row else -1
    return Appended(marks)


def wrong_retrieval_times(con: duckdb.DuckDBPyConnection, added: Appended) -> dict[str, int]:
    """The added rows of each table of RETRIEVED_WITH_SNAPSHOT whose retrieved_at is not their
    snapshot's (or whose snapshot is not in core.snapshots), by table: the checks after the load
    find a snapshot's rows by that time (validate.snapshot_scope), so a row without it would
    escape them. Read through the row ids: the added rows alone."""
    wrong = {}
    for table in RETRIEVED_WITH_SNAPSHOT:
        row = con.execute(
            f"SELECT count(*) FROM {added.rows(table)} AS t "
            "LEFT JOIN core.snapshots AS s USING (snapshot_id) "
            "WHERE s.retrieved_at IS DISTINCT FROM t.retrieved_at"
        ).fetchone()
        if row and row[0]:
            wrong[table] = int(row[0])
    return wrong
