"""Keeping core.measured_observations: the measured figures, made once per snapshot.

Computing the figures from staging (the view core.figures_from_staging) is a pass over the whole
history, and every step that reads core.observations would make it again. A snapshot's figures
depend only on its own staged rows (its extraction), its grade (tier, qualifier, retrieval), the
rules (the core SQL, how each format measures) and the key and label mappings. So a build keeps
them in a table and, inside its transaction:

- computes the figures of the snapshots new to its scope, or whose extraction, grade or rules
  changed (each snapshot's token says what its figures were made from);
- drops those of the snapshots that left its scope (withdrawn, damaged, past an --as-of bound);
- makes them all again when a mapping that existed changed or went away. A mapping only added
  names a label no kept snapshot has (the mappings are made from the labels of the snapshots in
  scope), so it can change only the new snapshots' figures.

With them it keeps core.current_measured, the current figure of each group among them
(core.current_of, a least element): a build that only adds figures merges them into it, so the
mart's current figures cost what is new, not the history; one that drops or makes any takes it
anew from every measured figure.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import duckdb

from pipeline.support.duck import quote_literal, table_names
from pipeline.support.settings import SQL_DIR

# The mappings the figures join, copied before the build replaces them: every key, and each
# label's resolution (not its tallies: how often and where it is used grows with every poll).
MAPPINGS = {
    "previous_keys": ("core.endpoint_keys", "*"),
    "previous_labels": (
        "core.labels",
        "kind, label, stable, status, entity_id, precision, service_tier, reasoning_effort, "
        "family, region, rule",
    ),
}


@dataclass(frozen=True)
class MeasuredRefresh:
    """What a build did to core.measured_observations."""

    made_again: bool  # every figure made again: nothing kept, or a mapping changed
    reason: str  # why they were made again; "" when not
    snapshots_added: int  # snapshots whose figures were computed
    snapshots_dropped: int  # snapshots whose kept figures were dropped (made again or gone)
    figures_added: int

    def summary(self) -> str:
        if self.made_again:
            return (
                f"measured figures made again ({self.reason}): {self.figures_added:,} from all "
                "snapshots"
            )
        return (
            f"measured figures: {self.figures_added:,} added from {self.snapshots_added:,} "
            f"snapshot(s), {self.snapshots_dropped:,} snapshot(s) dropped"
        )


def _exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    schema, name = table.split(".")
    return name in table_names(con, schema)


def remember_mappings(con: duckdb.DuckDBPyConnection) -> bool:
    """Copy the key and label mappings the kept figures were made with, before the build replaces
    them; False when there are none (a new warehouse: every figure is made anyway)."""
    if not all(_exists(con, table) for table, _ in MAPPINGS.values()):
        return False
    for copy, (table, columns) in MAPPINGS.items():
        con.execute(f"CREATE OR REPLACE TEMP TABLE {copy} AS SELECT {columns} FROM {table}")
    return True


def _changed_mapping(con: duckdb.DuckDBPyConnection) -> str | None:
    """The mapping the kept figures were made with that changed or lost a row, if any."""
    for copy, (table, columns) in MAPPINGS.items():
        current = f"(SELECT {columns} FROM {table})"
        before, now = con.sql(f"FROM {copy}"), con.sql(f"FROM {current}")
        if (before.columns, before.types) != (now.columns, now.types):
            return table
        [(gone,)] = con.execute(
            f"SELECT count(*) FROM (FROM {copy} EXCEPT FROM {current})"
        ).fetchall()
        if gone:
            return table
    return None


def rules_fingerprint(con: duckdb.DuckDBPyConnection) -> str:
    """What every figure is made with: the core SQL and how each source's format measures."""
    digest = hashlib.sha256()
    for path in sorted((SQL_DIR / "core").glob("*.sql")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for row in con.execute("FROM core.measured() ORDER BY ALL").fetchall():
        digest.update(repr(row).encode())
    return digest.hexdigest()


EVERY_FIGURE = "['core.measured_observations']"

TOKENS = """
CREATE OR REPLACE TEMP TABLE current_tokens AS
SELECT g.snapshot_id,
       md5(concat_ws('|', $rules, e.parser_version, e.sha256, e.extracted_at::VARCHAR,
                     coalesce(e.row_counts, ''), g.tier, coalesce(g.qualifier, ''),
                     g.retrieved_at::VARCHAR, g.retrieved_at_bound)) AS token
FROM core.snapshot_grades AS g
JOIN staging.extractions AS e USING (snapshot_id)
WHERE e.status = 'ok'
"""


def _count(con: duckdb.DuckDBPyConnection, query: str) -> int:
    [(count,)] = con.execute(query).fetchall()
    return int(count)


def refresh_measured(
    con: duckdb.DuckDBPyConnection, *, remembered: bool, remake: bool = False
) -> MeasuredRefresh:
    """Bring core.measured_observations to the build's scope (run inside the build's transaction,
    after core.endpoint_keys is made and before anything reads core.observations). `remembered`:
    remember_mappings found mappings to compare with; `remake`: keep none (`build --force`, the
    way to make them again from staging whatever the tokens say)."""
    con.execute(TOKENS, {"rules": rules_fingerprint(con)})
    kept = _count(
        con,
        "SELECT count(*) FROM core.measured_snapshots "
        "SEMI JOIN current_tokens USING (snapshot_id, token)",
    )
    changed = _changed_mapping(con) if remembered and kept and not remake else None
    if remake or not remembered or kept == 0 or changed:
        if remake:
            reason = "asked for"
        elif changed:
            reason = f"{changed} changed"
        else:
            reason = "none kept with the current rules, extraction and grades"
        dropped = _count(con, "SELECT count(*) FROM core.measured_snapshots")
        con.execute("DELETE FROM core.measured_observations")
        con.execute("DELETE FROM core.measured_snapshots")
        added = _count(
            con,
            "INSERT INTO core.measured_observations BY NAME FROM core.figures_from_staging",
        )
        con.execute("INSERT INTO core.measured_snapshots BY NAME FROM current_tokens")
        made = _count(con, "SELECT count(*) FROM current_tokens")
        _current_from(con, EVERY_FIGURE)
        return MeasuredRefresh(True, reason, made, dropped, added)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE stale_snapshots AS SELECT snapshot_id "
        "FROM core.measured_snapshots ANTI JOIN current_tokens USING (snapshot_id, token)"
    )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE pending_snapshots AS "
        "FROM current_tokens ANTI JOIN core.measured_snapshots USING (snapshot_id, token)"
    )
    dropped = _count(con, "SELECT count(*) FROM stale_snapshots")
    if dropped:
        for table in ("core.measured_observations", "core.measured_snapshots"):
            con.execute(
                f"DELETE FROM {table} "
                "WHERE snapshot_id IN (SELECT snapshot_id FROM stale_snapshots)"
            )
    pending = [
        row[0] for row in con.execute("SELECT snapshot_id FROM pending_snapshots").fetchall()
    ]
    added = 0
    if pending:
        # the ids as a constant list, which DuckDB pushes down as a filter on the staged tables'
        # scans (EXPLAIN shows it)
        ids = ", ".join(quote_literal(snapshot_id) for snapshot_id in pending)
        con.execute(
            "CREATE OR REPLACE TEMP TABLE pending_figures AS "
            f"SELECT * FROM core.figures_from_staging WHERE snapshot_id IN ({ids})"
        )
        added = _count(con, "INSERT INTO core.measured_observations BY NAME FROM pending_figures")
        con.execute("INSERT INTO core.measured_snapshots BY NAME FROM pending_snapshots")
    if dropped or _count(con, "SELECT count(*) FROM core.current_measured") == 0:
        _current_from(con, EVERY_FIGURE)  # a figure left: its group's current one may be another
    elif pending:
        _current_from(con, "['core.current_measured', 'pending_figures']")
    return MeasuredRefresh(False, "", len(pending), dropped, added)


def _current_from(con: duckdb.DuckDBPyConnection, relations: str) -> None:
    """core.current_measured as the current figures (core.current_of) of `relations`: every
    measured figure, or the kept current ones with the figures just added (pending_figures),
    whose current ones are the current ones among all."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE next_current AS FROM core.current_of({relations})")
    con.execute("DELETE FROM core.current_measured")
    con.execute("INSERT INTO core.current_measured BY NAME FROM next_current")
