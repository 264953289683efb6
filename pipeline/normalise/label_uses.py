"""How often each label is used, kept per snapshot so that a build counts only what is new.

Label resolution needs, for every distinct label of a staged column, how often it is used, by
which sources, its most used display name and its most used hints (the stable keys a source
publishes beside it: identity.Hints, as JSON), over the snapshots the build reads. Counting the
staged rows for that read the whole staged history at every build (86 million rows at 90 days of
half-hourly polls: 2.5 s of every poll). The counts are kept instead, one row per column, snapshot,
label and display name, in `staging.label_uses`; `staging.label_counted` records which snapshot
of which column is counted, and from which extraction. A snapshot extracted again (a new parser,
a changed file, a staging table rebuilt) has another `extracted_at` and is counted again; one no
longer extracted is forgotten. A build then counts its new snapshots and sums the kept counts of
its scope (`build_scope`).

Summing the kept counts still read every one (2.1 million at 90 days of polls, 0.3 s of every
poll), so their sums over every counted snapshot are kept too, in `staging.label_totals`: one
row per column, label, display name and source, a few thousand rows. A build adds what it
counted to them and subtracts the counts of the snapshots it does not read (withdrawn, or after
an --as-of bound: usually none). The totals are checked against the counts at every build (the
sum and number of rows per column: one scan of two columns, 3-5 ms) and computed again
from the counts when they differ, as they do after a snapshot is forgotten, in a warehouse that
kept counts before there were totals, or after any other change to the counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import duckdb
import pandas as pd
import pyarrow as pa

from pipeline.support.duck import registered

if TYPE_CHECKING:
    from pipeline.normalise.labels import LabelColumn

LABEL_USES_DDL = """
CREATE TABLE IF NOT EXISTS staging.label_uses (
    spec VARCHAR NOT NULL,         -- the staged column: table.column.name_column
    snapshot_id VARCHAR NOT NULL,
    label VARCHAR NOT NULL,
    name VARCHAR,                  -- the display name beside it, where the column has one
    source_id VARCHAR,
    uses BIGINT NOT NULL,          -- rows of the snapshot with this label, name and hints
    hints VARCHAR                  -- the hint columns beside it as a JSON object, where it has any
);
CREATE TABLE IF NOT EXISTS staging.label_counted (
    spec VARCHAR NOT NULL,
    snapshot_id VARCHAR NOT NULL,
    extracted_at TIMESTAMPTZ NOT NULL  -- the extraction counted (staging.extractions)
);
CREATE TABLE IF NOT EXISTS staging.label_totals (
    spec VARCHAR NOT NULL,
    label VARCHAR NOT NULL,
    name VARCHAR,
    source_id VARCHAR,
    uses BIGINT NOT NULL,      -- label_uses summed over every counted snapshot
    counts BIGINT NOT NULL,    -- the label_uses rows summed: with uses, what the check compares
    hints VARCHAR
);
-- kept counts of a warehouse made before hints were counted: the column, empty (their specs'
-- keys changed with their hint columns, so those counts are taken again)
ALTER TABLE staging.label_uses ADD COLUMN IF NOT EXISTS hints VARCHAR;
ALTER TABLE staging.label_totals ADD COLUMN IF NOT EXISTS hints VARCHAR;
"""
# the totals as the kept counts give them: (spec, label, name, source, hints) summed
_TOTALS = (
    "SELECT spec, label, name, source_id, sum(uses)::BIGINT AS uses, "
    "sum(counts)::BIGINT AS counts, hints FROM ({rows}) GROUP BY ALL"
)
_USES_AS_TOTALS = (
    "SELECT spec, label, name, source_id, uses, 1 AS counts, hints FROM staging.label_uses"
)


def scope_build(con: duckdb.DuckDBPyConnection, snapshot_ids: Iterable[str]) -> None:
    """Name what this build derives from in the temp table `build_scope`: the snapshots of its
    inventory (up to the --as-of bound, sources still registered) whose extraction is ok. Staging
    also keeps snapshots past the bound or of removed sources; their names must not block."""
    ids = pa.table({"snapshot_id": pa.array(list(snapshot_ids), pa.string())})
    with registered(con, "inventory_ids", ids):
        con.execute(
            "CREATE OR REPLACE TEMP TABLE build_scope AS SELECT e.snapshot_id "
            "FROM staging.extractions AS e SEMI JOIN inventory_ids AS i USING (snapshot_id) "
            "WHERE e.status = 'ok'"
        )


def spec_key(spec: LabelColumn) -> str:
    """What the counts of a column depend on: its table, column, display-name column and hint
    columns."""
    key = f"{spec.table}.{spec.column}.{spec.name_column or ''}"
    if spec.hints:
        key += "." + ",".join(f"{hint}={column}" for hint, column in spec.hints)
    return key


def hints_sql(spec: LabelColumn, alias: str = "t") -> str:
    """The SQL of a column's hints as one JSON object ('NULL' for a column without hints)."""
    if not spec.hints:
        return "NULL"
    pairs = ", ".join(f"'{hint}', {alias}.{column}" for hint, column in spec.hints)
    return f"json_object({pairs})::VARCHAR"


def refresh_label_uses(con: duckdb.DuckDBPyConnection, specs: tuple[LabelColumn, ...]) -> int:
    """Bring the kept counts up to date for the snapshots of `build_scope` (scope_build); return
    how many (column, snapshot) pairs were counted now."""
    con.execute(LABEL_USES_DDL)
    keys = [spec_key(spec) for spec in specs]
    forgotten = con.execute(
        "DELETE FROM staging.label_counted AS c WHERE c.spec NOT IN (SELECT unnest(?)) "
        "OR NOT EXISTS (SELECT 1 FROM staging.extractions AS e "
        "WHERE e.snapshot_id = c.snapshot_id AND e.extracted_at = c.extracted_at)",
        [keys],
    ).fetchone()
    # counts are kept and forgotten with their record, in the build's working copy (a failed
    # build leaves none half-written): with no record forgotten there is no count to drop, and
    # the scan of every count (2.3 million at a year of pages) is skipped
    if forgotten and forgotten[0]:
        con.execute(
            "DELETE FROM staging.label_uses AS u WHERE NOT EXISTS (SELECT 1 FROM "
            "staging.label_counted AS c WHERE c.spec = u.spec AND c.snapshot_id = u.snapshot_id)"
        )
    # every column's snapshots not counted yet, in one statement; a snapshot whose extraction
    # record says it staged no row of the column's table is recorded as counted without reading
    # the table (a record without counts, written before they were kept, is read)
    columns = pa.table({"spec": keys, "frame": [spec.table for spec in specs]})
    with registered(con, "label_columns", columns):
        con.execute(
            "CREATE OR REPLACE TEMP TABLE label_new AS "
            "SELECT l.spec, b.snapshot_id, e.extracted_at, e.row_counts IS NULL "
            "OR coalesce(CAST(e.row_counts ->> ('$.' || l.frame) AS BIGINT), 0) > 0 AS staged "
            "FROM build_scope AS b CROSS JOIN label_columns AS l "
            "JOIN staging.extractions AS e ON e.snapshot_id = b.snapshot_id "
            "ANTI JOIN staging.label_counted AS c ON c.snapshot_id = b.snapshot_id "
            "AND c.spec = l.spec"
        )
    staged = dict(
        con.execute("SELECT spec, count(*) FROM label_new WHERE staged GROUP BY spec").fetchall()
    )
    for spec, key in zip(specs, keys, strict=True):
        if not staged.get(key):
            continue
        name = f"t.{spec.name_column}" if spec.name_column else "NULL"
        con.execute(
            "INSERT INTO staging.label_uses (spec, snapshot_id, label, name, source_id, uses, "
            f"hints) SELECT ?, t.snapshot_id, t.{spec.column}, {name}, t.source_id, count(*), "
            f"{hints_sql(spec)} FROM staging.{spec.table} AS t "
            "SEMI JOIN (SELECT snapshot_id FROM label_new WHERE spec = ? AND staged) "
            f"USING (snapshot_id) WHERE t.{spec.column} IS NOT NULL GROUP BY ALL",
            [key, key],
        )
    con.execute(
        "INSERT INTO staging.label_counted SELECT spec, snapshot_id, extracted_at FROM label_new"
    )
    [(counted,)] = con.execute("SELECT count(*) FROM label_new").fetchall()
    _add_to_totals(con, counted)
    con.execute("DROP TABLE IF EXISTS label_new")
    # what label_uses() takes out of the totals: counted snapshots the build does not read, found
    # for every column in one pass (one per column took 0.5 s at a year of pages)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE label_outside AS SELECT c.spec, c.snapshot_id "
        "FROM staging.label_counted AS c ANTI JOIN build_scope AS b USING (snapshot_id)"
    )
    return counted


def _add_to_totals(con: duckdb.DuckDBPyConnection, counted: int) -> None:
    """Add the counts of the `counted` snapshots of `label_new` to the totals, then check them
    against every count; compute them again from the counts when they differ."""
    if counted:
        con.execute(
            "CREATE OR REPLACE TABLE staging.label_totals AS "
            + _TOTALS.format(
                rows="SELECT * FROM staging.label_totals UNION ALL "
                + _USES_AS_TOTALS
                + " SEMI JOIN label_new AS n ON n.spec = label_uses.spec "
                "AND n.snapshot_id = label_uses.snapshot_id"
            )
        )
    differ = con.execute(
        "SELECT count(*) FROM (SELECT spec, sum(uses) AS uses, count(*) AS counts "
        "FROM staging.label_uses GROUP BY spec) AS kept "
        "FULL JOIN (SELECT spec, sum(uses) AS uses, sum(counts) AS counts "
        "FROM staging.label_totals GROUP BY spec) AS totals USING (spec) "
        "WHERE kept.uses IS DISTINCT FROM totals.uses "
        "OR kept.counts IS DISTINCT FROM totals.counts"
    ).fetchone()
    if differ and differ[0]:
        con.execute(
            "CREATE OR REPLACE TABLE staging.label_totals AS "
            + _TOTALS.format(rows=_USES_AS_TOTALS)
        )


def label_uses(con: duckdb.DuckDBPyConnection, specs: tuple[LabelColumn, ...]) -> pd.DataFrame:
    """Distinct labels of each column over `build_scope`, in one query, the columns in the order
    of `specs` (resolve_uses takes a label's display name from the first that gives one): the
    column's key (`spec`), the label, its most used display name and hints (ties broken by text,
    so the same staging always gives the same name and hints), the sources that use it, and its
    uses. From the kept counts: refresh_label_uses first, in the same session (it finds the
    counted snapshots out of the scope, `label_outside`)."""
    keys = [spec_key(spec) for spec in specs]
    [(outside,)] = con.execute("SELECT count(*) FROM label_outside").fetchall()
    # the totals of every counted snapshot, less the counts of those the build does not read
    # (usually none: then every count is not read at all)
    less = (
        "UNION ALL SELECT u.spec, u.label, u.name, u.source_id, -u.uses, u.hints "
        "FROM staging.label_uses AS u "
        "SEMI JOIN label_outside AS o ON o.spec = u.spec AND o.snapshot_id = u.snapshot_id "
        "WHERE u.spec IN (SELECT unnest($keys))"
        if outside
        else ""
    )
    return con.execute(
        f"""
        WITH used AS (
            SELECT spec, label, name, source_id, sum(uses) AS uses, hints FROM (
                SELECT spec, label, name, source_id, uses, hints FROM staging.label_totals
                WHERE spec IN (SELECT unnest($keys)) {less}
            ) GROUP BY ALL HAVING sum(uses) > 0
        ),
        named AS (
            SELECT spec, label, name, sum(uses) AS uses FROM used WHERE name IS NOT NULL
            GROUP BY ALL
        ),
        best AS (
            SELECT spec, label, arg_min(name, (-uses, name)) AS name FROM named GROUP BY ALL
        ),
        hinted AS (
            SELECT spec, label, hints, sum(uses) AS uses FROM used WHERE hints IS NOT NULL
            GROUP BY ALL
        ),
        best_hints AS (
            SELECT spec, label, arg_min(hints, (-uses, hints)) AS hints FROM hinted GROUP BY ALL
        )
        SELECT u.spec, u.label, any_value(b.name) AS name,
               string_agg(DISTINCT u.source_id, ', ' ORDER BY u.source_id) AS sources,
               sum(u.uses)::BIGINT AS uses, any_value(h.hints) AS hints
        FROM used AS u
        LEFT JOIN best AS b USING (spec, label)
        LEFT JOIN best_hints AS h USING (spec, label)
        GROUP BY u.spec, u.label
        ORDER BY list_position($keys, u.spec), u.label
        """,
        {"keys": keys},
    ).df()
