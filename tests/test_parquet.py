"""Parquet copies of the warehouse: read back with DuckDB (Hive partitioning on) they hold exactly
the warehouse's rows, and the same warehouse writes the same bytes."""

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipeline.release.parquet import (
    NOT_EXPORTED,
    PARTITIONED,
    write_parquet,
    write_parquet_apart,
)


@pytest.fixture(scope="module")
def warehouse(built):
    con = duckdb.connect(str(built.database), read_only=True)
    con.execute("SET TimeZone = 'UTC'")
    yield con
    con.close()


@pytest.fixture(scope="module")
def written(warehouse, tmp_path_factory) -> tuple[Path, dict[str, int]]:
    target = tmp_path_factory.mktemp("parquet")
    return target, write_parquet(warehouse, target)


def names(con, catalog: str, schema: str) -> list[str]:
    column = "view_name" if catalog == "duckdb_views()" else "table_name"
    return [
        r[0]
        for r in con.execute(
            f"SELECT {column} FROM {catalog} WHERE schema_name = ? AND NOT internal", [schema]
        ).fetchall()
    ]


def columns(con, query: str) -> list[tuple[str, str]]:
    return [(row[0], row[1]) for row in con.execute(f"DESCRIBE {query}").fetchall()]


def same_rows(con, left: str, right: str) -> bool:
    """Equal as multisets, nulls included: nothing in one that is not in the other."""
    extra = con.execute(
        f"SELECT count(*) FROM (({left} EXCEPT ALL {right}) UNION ALL ({right} EXCEPT ALL {left}))"
    ).fetchone()[0]
    return extra == 0


def test_every_core_table_and_mart_view_is_written(warehouse, written):
    target, counts = written
    tables = names(warehouse, "duckdb_tables()", "core")
    views = names(warehouse, "duckdb_views()", "mart") + names(warehouse, "duckdb_tables()", "mart")
    expected = {f"core/{t}.parquet" for t in tables if t not in PARTITIONED}
    expected |= {f"mart/{v}.parquet" for v in views if v not in NOT_EXPORTED}
    assert set(views) >= NOT_EXPORTED  # left out on purpose: they restate core.observations
    partitions = {p for p in counts if p.count("/") == 3}  # core/<table>/<day>/data_<HH>.parquet
    assert set(counts) - partitions == expected
    assert {"mart/leaderboard.parquet", "mart/peak_vs_live.parquet", "core/claims.parquet"} <= set(
        counts
    )
    on_disk = {p.relative_to(target).as_posix() for p in target.rglob("*.parquet")}
    assert on_disk == set(counts)


def test_read_back_equals_the_warehouse(warehouse, written):
    target, counts = written
    for path, rows in counts.items():
        if path.count("/") == 3:  # an hour of a partitioned table
            continue
        schema, name = path.removesuffix(".parquet").split("/")
        source = f"SELECT * FROM {schema}.{name}"
        copy = f"SELECT * FROM read_parquet('{target / path}')"
        assert warehouse.execute(f"SELECT count(*) FROM ({source})").fetchone()[0] == rows
        assert same_rows(warehouse, source, copy), path
        # same column names and types, so a reader needs no casts
        assert columns(warehouse, copy) == columns(warehouse, source), path


@pytest.mark.parametrize("table", sorted(PARTITIONED))
def test_the_tables_that_grow_are_partitioned_by_day_in_hive_layout_a_file_per_hour(
    warehouse, written, table
):
    target, counts = written
    hours = warehouse.execute(
        f"SELECT DISTINCT strftime(timezone('UTC', observed_at), '%Y-%m-%d'), "
        f"strftime(timezone('UTC', observed_at), '%H') FROM core.{table} ORDER BY ALL"
    ).fetchall()
    assert hours, f"core.{table} is empty in the bundled warehouse"
    files = [f"core/{table}/observed_date={day}/data_{hh}.parquet" for day, hh in hours]
    assert sorted(p for p in counts if p.startswith(f"core/{table}/")) == files
    copy = f"read_parquet('{target}/core/{table}/*/*.parquet', hive_partitioning = true)"
    assert same_rows(
        warehouse,
        f"SELECT * FROM core.{table}",
        f"SELECT * EXCLUDE (observed_date) FROM {copy}",
    )
    misfiled = warehouse.execute(
        f"SELECT count(*) FROM {copy} WHERE observed_date <> strftime(observed_at, '%Y-%m-%d')"
    ).fetchone()[0]
    assert misfiled == 0
    # an hour's file does not repeat the partition column (Spark and Trino take it from the path)
    one_hour = target / files[0]
    inside = warehouse.execute(f"SELECT name FROM parquet_schema('{one_hour}')").fetchall()
    assert ("observed_at",) in inside and ("observed_date",) not in inside


def test_the_same_warehouse_writes_the_same_bytes(warehouse, written, tmp_path):
    first, counts = written
    assert write_parquet(warehouse, tmp_path) == counts

    def digest(root: Path) -> dict[str, str]:
        return {p: hashlib.sha256((root / p).read_bytes()).hexdigest() for p in counts}

    assert digest(tmp_path) == digest(first)
    # the connection is left usable: no unfinished result
    assert warehouse.sql("SELECT 1").fetchall() == [(1,)]


def test_unchanged_hours_are_linked_from_the_earlier_release(warehouse, written, tmp_path):
    first, counts = written
    second = tmp_path / "again"
    again = write_parquet(warehouse, second, reuse_from=first)
    assert again == counts
    for path in counts:
        if path.count("/") == 3:
            old, new = (first / path).stat(), (second / path).stat()
            assert (old.st_ino, old.st_dev) == (new.st_ino, new.st_dev), path
    # an hour whose rows differ is written again, never linked
    index = json.loads((first / "core/observations/_partitions.json").read_text())
    hour = sorted(index)[0]
    index[hour][1] += 1
    (first / "core/observations/_partitions.json").write_text(json.dumps(index))
    third = tmp_path / "third"
    write_parquet(warehouse, third, reuse_from=first)
    changed = f"core/observations/observed_date={hour[:10]}/data_{hour[11:]}.parquet"
    assert (third / changed).stat().st_ino != (first / changed).stat().st_ino
    assert (third / changed).read_bytes() == (first / changed).read_bytes()


@pytest.mark.parametrize("damaged", ["[]", "null", '"x"', "{not json", ""])
def test_a_damaged_partition_index_means_every_hour_is_written_again(
    warehouse, written, tmp_path, damaged
):
    first, counts = written
    earlier = tmp_path / "earlier"
    shutil.copytree(first, earlier)
    (earlier / "core/observations/_partitions.json").write_text(damaged)
    again = tmp_path / "again"
    assert write_parquet(warehouse, again, reuse_from=earlier) == counts
    for path in counts:
        if path.startswith("core/observations/observed_date="):
            assert (again / path).stat().st_ino != (earlier / path).stat().st_ino, path
            assert (again / path).read_bytes() == (earlier / path).read_bytes()


def test_a_row_without_a_time_is_refused_before_any_file_is_written(tmp_path):
    """An hour is the file a row goes to: a row without observed_at has none, and the release
    says so rather than dropping the row (the core check names it too)."""
    with duckdb.connect() as con:
        con.execute("CREATE SCHEMA core")
        con.execute(
            "CREATE TABLE core.observations (observation_id VARCHAR, observed_at TIMESTAMPTZ)"
        )
        con.execute(
            "INSERT INTO core.observations VALUES ('a', TIMESTAMPTZ '2026-11-29 08:10:00+00'), "
            "('b', NULL)"
        )
        with pytest.raises(ValueError, match="cannot partition on observed_at value hour None"):
            write_parquet(con, tmp_path / "out")
    assert not list((tmp_path / "out").rglob("*.parquet"))


def _digests(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_a_process_of_its_own_writes_the_same_files(built, warehouse, tmp_path):
    """What a build does: the files written by `python -m pipeline.release.parquet`."""
    counts = write_parquet(warehouse, tmp_path / "here")
    work = write_parquet_apart(built.database, tmp_path / "apart", None)
    assert json.loads(work.wait()) == counts
    assert _digests(tmp_path / "apart") == _digests(tmp_path / "here")


def test_a_process_of_its_own_that_fails_says_why(tmp_path):
    not_a_database = tmp_path / "speedbook.duckdb"
    not_a_database.write_text("not a database")
    work = write_parquet_apart(not_a_database, tmp_path / "out", None)
    with pytest.raises(OSError, match=r"writing the Parquet files into .*out failed: .+"):
        work.wait()


def test_the_process_of_its_own_starts_without_pandas_or_pandera():
    """It runs beside the release's Python on the two cores, from its first import: Pandera and
    pandas, which it never uses, were 0.7 s of its 0.9 s start (pipeline/schema/growing.py)."""
    program = (
        "import sys, json\n"
        "import pipeline.release.parquet\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & HEAVY)))\n"
    ).replace("HEAVY", repr({"pandas", "pandera", "dagster", "pydantic"}))
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == []
