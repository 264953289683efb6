"""How often each label is used, kept per snapshot so that a build counts only what is new.

Label resolution needs, for every distinct label of a staged column, how often it is used, by
which sources, and its most used display name, over the snapshots the build reads. Counting the
staged rows for that read the whole staged history at every build (86 million rows at 90 days of
half-hourly polls: 2.5 s of every poll). The counts are kept instead, one row per column, snapshot,
label and display name, in `staging.label_uses`; `staging.label_counted` records which snapshot
of which column is counted, and from which extraction. A snapshot extracted again (a new parser,
a changed file, a staging table rebuilt) has another `extracted_at` and is counted again; one no
longer extracted is forgotten. A build then counts its new snapshots and sums the kept counts of
its scope (`build_scope`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb
import pandas as pd

if TYPE_CHECKING:
    from pipeline.normalise.labels import LabelColumn

LABEL_USES_DDL = """
CREATE TABLE IF NOT EXISTS staging.label_uses (
    spec VARCHAR NOT NULL,         -- the staged column: table.column.name_column
    snapshot_id VARCHAR NOT NULL,
    label VARCHAR NOT NULL,
    name VARCHAR,                  -- the display name beside it, where the column has one
    source_id VARCHAR,
    uses BIGINT NOT NULL           -- rows of the snapshot with this label and name
);
CREATE TABLE IF NOT EXISTS staging.label_counted (
    spec VARCHAR NOT NULL,
    snapshot_id VARCHAR NOT NULL,
    extracted_at TIMESTAMPTZ NOT NULL  -- the extraction counted (staging.extractions)
);
"""


def spec_key(spec: LabelColumn) -> str:
    """What the counts of a column depend on: its table, column and display-name column."""
    return f"{spec.table}.{spec.column}.{spec.name_column or ''}"


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
    counted = 0
    for spec, key in zip(specs, keys, strict=True):
        con.execute(
            "CREATE OR REPLACE TEMP TABLE label_todo AS SELECT b.snapshot_id FROM build_scope AS b "
            "ANTI JOIN staging.label_counted AS c ON c.snapshot_id = b.snapshot_id AND c.spec = ?",
            [key],
        )
        todo = con.execute("SELECT count(*) FROM label_todo").fetchone()
        if not todo or not todo[0]:
            continue
        name = f"t.{spec.name_column}" if spec.name_column else "NULL"
        con.execute(
            f"INSERT INTO staging.label_uses SELECT ?, t.snapshot_id, t.{spec.column}, {name}, "
            f"t.source_id, count(*) FROM staging.{spec.table} AS t "
            f"SEMI JOIN label_todo USING (snapshot_id) WHERE t.{spec.column} IS NOT NULL "
            "GROUP BY ALL",
            [key],
        )
        con.execute(
            "INSERT INTO staging.label_counted SELECT ?, e.snapshot_id, e.extracted_at "
            "FROM staging.extractions AS e SEMI JOIN label_todo USING (snapshot_id)",
            [key],
        )
        counted += int(todo[0])
    con.execute("DROP TABLE IF EXISTS label_todo")
    return counted


def label_uses(con: duckdb.DuckDBPyConnection, spec: LabelColumn) -> pd.DataFrame:
    """Distinct labels of one column over `build_scope`: label, its most used display name (ties
    broken by text, so the same staging always gives the same name), the sources that use it,
    and its uses. From the kept counts: refresh_label_uses first."""
    return con.execute(
        """
        WITH used AS (
            SELECT u.label, u.name, u.source_id, u.uses
            FROM staging.label_uses AS u
            SEMI JOIN build_scope AS b ON b.snapshot_id = u.snapshot_id
            WHERE u.spec = ?
        ),
        named AS (
            SELECT label, name, sum(uses) AS uses FROM used WHERE name IS NOT NULL GROUP BY ALL
        ),
        best AS (SELECT label, arg_min(name, (-uses, name)) AS name FROM named GROUP BY label)
        SELECT u.label, any_value(b.name) AS name,
               string_agg(DISTINCT u.source_id, ', ' ORDER BY u.source_id) AS sources,
               sum(u.uses)::BIGINT AS uses
        FROM used AS u
        LEFT JOIN best AS b USING (label)
        GROUP BY u.label
        """,
        [spec_key(spec)],
    ).df()
