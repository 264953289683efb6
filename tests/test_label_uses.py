"""The kept label counts (pipeline/normalise/label_uses.py) equal a count of the staged rows of
the build's scope, however the scope and the staging changed since they were kept, display names
and hints (the stable keys beside a label) included."""

import duckdb
import pandas as pd
import pytest

from pipeline.normalise.identity import Hints
from pipeline.normalise.label_uses import (
    hints_sql,
    label_uses,
    refresh_label_uses,
    scope_build,
    spec_key,
)
from pipeline.normalise.labels import LABEL_COLUMNS, LabelColumn, parse_hints
from pipeline.support.duck import quote_literal
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect
from pipeline.warehouse.lake import LAKE_ALIAS


@pytest.fixture
def staging(built: Settings, tmp_path) -> duckdb.DuckDBPyConnection:
    """The built lake's schema staging (the staged frames and the kept counts), copied into a
    DuckDB file of the test's own: the tests change it."""
    path = tmp_path / "w.duckdb"
    with connect(built, read_only=True) as lake:
        lake.execute(f"ATTACH {quote_literal(str(path))} AS copied")
        lake.execute("CREATE SCHEMA copied.staging")
        for (table,) in lake.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = ? "
            "AND schema_name = 'staging'",
            [LAKE_ALIAS],
        ).fetchall():
            lake.execute(
                f"CREATE TABLE copied.staging.{table} AS FROM {LAKE_ALIAS}.staging.{table}"
            )
        lake.execute("DETACH copied")
    con = duckdb.connect(str(path))
    con.execute("SET TimeZone = 'UTC'")
    return con


def counted_afresh(con: duckdb.DuckDBPyConnection, spec: LabelColumn) -> list[tuple]:
    """What the kept counts replace: the staged rows of the scope, counted."""
    name = f"t.{spec.name_column}" if spec.name_column else "NULL"
    return con.execute(
        f"""
        WITH used AS (
            SELECT t.{spec.column} AS label, {name} AS name, t.source_id,
                   {hints_sql(spec)} AS hints
            FROM staging.{spec.table} AS t SEMI JOIN build_scope USING (snapshot_id)
            WHERE t.{spec.column} IS NOT NULL
        ),
        named AS (
            SELECT label, name, count(*) AS uses FROM used WHERE name IS NOT NULL GROUP BY ALL
        ),
        best AS (SELECT label, arg_min(name, (-uses, name)) AS name FROM named GROUP BY label),
        hinted AS (
            SELECT label, hints, count(*) AS uses FROM used WHERE hints IS NOT NULL GROUP BY ALL
        ),
        best_hints AS (
            SELECT label, arg_min(hints, (-uses, hints)) AS hints FROM hinted GROUP BY label
        )
        SELECT u.label, any_value(b.name),
               string_agg(DISTINCT u.source_id, ', ' ORDER BY u.source_id), count(*),
               any_value(h.hints)
        FROM used AS u LEFT JOIN best AS b USING (label) LEFT JOIN best_hints AS h USING (label)
        GROUP BY u.label ORDER BY u.label
        """
    ).fetchall()


def _text(value: object) -> str | None:
    """A text cell, or None (pandas gives a missing text as NaN beside other columns' texts)."""
    return value if isinstance(value, str) else None


def kept_frame(con: duckdb.DuckDBPyConnection, spec: LabelColumn) -> pd.DataFrame:
    """The kept counts of one column, by label."""
    frame = label_uses(con, LABEL_COLUMNS)
    return frame[frame["spec"] == spec_key(spec)].set_index("label")


def kept(con: duckdb.DuckDBPyConnection, spec: LabelColumn) -> list[tuple]:
    frame = kept_frame(con, spec).reset_index().sort_values("label")
    return [
        (r.label, _text(r.name), r.sources, int(r.uses), _text(r.hints))
        for r in frame.itertuples(index=False)
    ]


def assert_kept_counts_are_the_staged_rows(con: duckdb.DuckDBPyConnection) -> None:
    for spec in LABEL_COLUMNS:
        assert kept(con, spec) == counted_afresh(con, spec), spec


def test_kept_counts_follow_the_scope_and_every_change_of_staging(staging):
    con = staging
    ids = [r[0] for r in con.execute("SELECT snapshot_id FROM staging.extractions").fetchall()]
    scope_build(con, ids)
    assert refresh_label_uses(con, LABEL_COLUMNS) == 0  # the build counted them all
    assert_kept_counts_are_the_staged_rows(con)
    labelled = [spec for spec in LABEL_COLUMNS if counted_afresh(con, spec)]
    assert len(labelled) >= 8  # the bundled corpus stages most labelled columns

    scope_build(con, ids[::2])  # an --as-of build reads fewer snapshots: nothing to count
    assert refresh_label_uses(con, LABEL_COLUMNS) == 0
    assert_kept_counts_are_the_staged_rows(con)

    # a snapshot extracted again (a newer parser) stages other labels: it is counted again
    spec = labelled[0]
    (again,) = con.execute(
        f"SELECT snapshot_id FROM staging.{spec.table} ORDER BY snapshot_id LIMIT 1"
    ).fetchone()
    con.execute(
        f"UPDATE staging.{spec.table} SET {spec.column} = {spec.column} || ' (renamed)' "
        "WHERE snapshot_id = ?",
        [again],
    )
    con.execute(
        "UPDATE staging.extractions SET extracted_at = extracted_at + INTERVAL 1 SECOND "
        "WHERE snapshot_id = ?",
        [again],
    )
    scope_build(con, ids)
    assert refresh_label_uses(con, LABEL_COLUMNS) == len(LABEL_COLUMNS)  # once per column
    assert_kept_counts_are_the_staged_rows(con)
    assert any(str(row[0]).endswith(" (renamed)") for row in kept(con, spec))

    # a snapshot no longer extracted (its staging table rebuilt) is forgotten
    con.execute("DELETE FROM staging.extractions WHERE snapshot_id = ?", [again])
    scope_build(con, ids)
    assert refresh_label_uses(con, LABEL_COLUMNS) == 0
    left = con.execute(
        "SELECT count(*) FROM staging.label_uses WHERE snapshot_id = ?", [again]
    ).fetchone()
    assert left == (0,)
    assert_kept_counts_are_the_staged_rows(con)


@pytest.mark.parametrize("records", ["with row counts", "some without"])
def test_a_column_not_counted_yet_is_counted_for_every_snapshot(staging, records):
    """Each (column, snapshot) pair is counted: from the staged table where the snapshot's
    extraction record gives it rows there (or gives no counts, as records written before counts
    were kept), and as none without reading the table where the record gives it none."""
    con = staging
    ids = [r[0] for r in con.execute("SELECT snapshot_id FROM staging.extractions").fetchall()]
    if records == "some without":
        con.execute("UPDATE staging.extractions SET row_counts = NULL WHERE hash(snapshot_id) % 2")
    con.execute("DELETE FROM staging.label_uses")
    con.execute("DELETE FROM staging.label_counted")
    scope_build(con, ids)
    in_scope = con.execute("SELECT count(*) FROM build_scope").fetchone()[0]
    assert refresh_label_uses(con, LABEL_COLUMNS) == in_scope * len(LABEL_COLUMNS)
    assert_kept_counts_are_the_staged_rows(con)


def test_totals_kept_before_or_changed_since_are_computed_again(staging):
    """The sums are a cache of the counts: a warehouse that kept counts before there were sums,
    and sums that no longer add up to the counts, are summed again from the counts."""
    con = staging
    ids = [r[0] for r in con.execute("SELECT snapshot_id FROM staging.extractions").fetchall()]
    scope_build(con, ids)
    refresh_label_uses(con, LABEL_COLUMNS)
    totals, uses = con.execute(
        "SELECT (SELECT count(*) FROM staging.label_totals), "
        "(SELECT count(*) FROM staging.label_uses)"
    ).fetchone()
    assert 0 < totals <= uses  # one row per label, name and source, whatever the snapshots

    con.execute("DROP TABLE staging.label_totals")  # counts kept by the code before
    assert refresh_label_uses(con, LABEL_COLUMNS) == 0
    assert_kept_counts_are_the_staged_rows(con)

    con.execute("UPDATE staging.label_totals SET uses = uses + 5 WHERE rowid = 0")
    assert refresh_label_uses(con, LABEL_COLUMNS) == 0
    assert_kept_counts_are_the_staged_rows(con)


def test_snapshots_out_of_the_scope_are_taken_out_of_the_totals(staging):
    """An --as-of build, or one after a withdrawal, reads fewer snapshots than were counted: what
    it sees is their counts alone, down to labels only they used."""
    con = staging
    ids = [r[0] for r in con.execute("SELECT snapshot_id FROM staging.extractions").fetchall()]
    scope_build(con, ids)
    refresh_label_uses(con, LABEL_COLUMNS)
    for kept_ids in (ids[:1], ids[1::3], []):
        scope_build(con, kept_ids)
        assert refresh_label_uses(con, LABEL_COLUMNS) == 0
        assert_kept_counts_are_the_staged_rows(con)


def test_the_hints_beside_a_label_are_counted_with_it(staging):
    """Each column with hints keeps them, as one JSON object per label: the stable keys its
    source publishes (OpenRouter's hugging_face_id, Artificial Analysis's slug), read back as
    identity.Hints."""
    con = staging
    ids = [r[0] for r in con.execute("SELECT snapshot_id FROM staging.extractions").fetchall()]
    scope_build(con, ids)
    refresh_label_uses(con, LABEL_COLUMNS)
    by_table = {spec.table: spec for spec in LABEL_COLUMNS if spec.hints}
    assert set(by_table) == {"aa_models", "catalogue_entries"}
    catalogue = kept_frame(con, by_table["catalogue_entries"])
    coder = parse_hints(catalogue.loc["qwen/qwen3-coder", "hints"])
    assert coder == Hints(hugging_face_id="Qwen/Qwen3-Coder-480B-A35B-Instruct")
    # Cloudflare's catalogue has no repository ids: its hints are none
    assert parse_hints(catalogue.loc["@cf/openai/gpt-oss-120b", "hints"]) == Hints()
    aa = kept_frame(con, by_table["aa_models"])
    assert parse_hints(aa.loc["GPT-4o (Aug '24)", "hints"]).slug == "gpt-4o-2024-08-06"
    assert parse_hints("not json") == Hints() and parse_hints(None) == Hints()
    assert parse_hints("[1, 2]") == Hints()


def test_counts_kept_before_there_were_hints_are_taken_again(staging):
    """A warehouse whose kept counts have no hints column: the column is added, and the columns
    that now have hints are counted again (their key changed with their hint columns)."""
    con = staging
    ids = [r[0] for r in con.execute("SELECT snapshot_id FROM staging.extractions").fetchall()]
    con.execute("ALTER TABLE staging.label_uses DROP COLUMN hints")
    con.execute("ALTER TABLE staging.label_totals DROP COLUMN hints")
    old = [spec for spec in LABEL_COLUMNS if spec.hints]
    for spec in old:  # as the code before counted them: under a key without hint columns
        con.execute(
            "UPDATE staging.label_counted SET spec = ? WHERE spec = ?",
            [f"{spec.table}.{spec.column}.{spec.name_column or ''}", spec_key(spec)],
        )
    scope_build(con, ids)
    in_scope = con.execute("SELECT count(*) FROM build_scope").fetchone()[0]
    assert refresh_label_uses(con, LABEL_COLUMNS) == in_scope * len(old)
    assert_kept_counts_are_the_staged_rows(con)


def test_the_columns_come_in_the_order_asked(staging):
    """A label's display name is the first column's that gives one (resolve_uses), so the kept
    counts come back column by column in the order of the columns asked for, whatever it is."""
    con = staging
    ids = [r[0] for r in con.execute("SELECT snapshot_id FROM staging.extractions").fetchall()]
    scope_build(con, ids)
    refresh_label_uses(con, LABEL_COLUMNS)
    for columns in (LABEL_COLUMNS, tuple(reversed(LABEL_COLUMNS))):
        keys = [spec_key(spec) for spec in columns]
        seen = list(dict.fromkeys(label_uses(con, columns)["spec"]))
        assert len(seen) >= 8 and seen == [key for key in keys if key in seen]
