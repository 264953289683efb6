"""Parquet copies of the warehouse in every release (pipeline/release/parquet.py): read back with
DuckDB they hold exactly the lake's rows with the same columns, the counts returned are the rows
written, the same warehouse writes the same bytes, and a history day whose content did not change
is the previous release's file, linked."""

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from pipeline.release.parquet import DAILY_HISTORY, HISTORY, HISTORY_FILES, write_parquet
from pipeline.schema.core import CORE_TABLES
from pipeline.schema.mart import MART_VIEWS
from pipeline.warehouse.connection import connect


@pytest.fixture(scope="module")
def warehouse(built):
    con = connect(built, read_only=True)
    yield con
    con.close()


@pytest.fixture(scope="module")
def written(warehouse, tmp_path_factory) -> tuple[Path, dict[str, int]]:
    target = tmp_path_factory.mktemp("parquet")
    return target, write_parquet(warehouse, target)


def columns(con, query: str) -> list[tuple[str, str]]:
    return [(row[0], row[1]) for row in con.execute(f"DESCRIBE {query}").fetchall()]


def same_rows(con, left: str, right: str) -> bool:
    """Equal as multisets, nulls included: nothing in one that is not in the other."""
    extra = con.execute(
        f"SELECT count(*) FROM (({left} EXCEPT ALL {right}) UNION ALL ({right} EXCEPT ALL {left}))"
    ).fetchone()[0]
    return extra == 0


def test_every_core_table_mart_view_and_history_file_is_written(warehouse, written):
    target, counts = written
    expected = {f"core/{t}.parquet" for t in CORE_TABLES}
    expected |= {f"mart/{v}.parquet" for v in MART_VIEWS if v not in HISTORY}
    expected |= {f"history/{name}.parquet" for name in HISTORY_FILES}
    days = warehouse.execute(
        "SELECT DISTINCT coalesce(strftime(observed_at, '%Y-%m-%d'), 'undated') "
        "FROM mart.endpoint_stats"
    ).fetchall()
    assert len(days) > 10
    expected |= {f"history/endpoint_figures/{day}.parquet" for (day,) in days}
    assert set(counts) == expected
    assert {"mart/leaderboard.parquet", "mart/peak_vs_live.parquet", "core/claims.parquet"} <= set(
        counts
    )
    on_disk = {p.relative_to(target).as_posix() for p in target.rglob("*.parquet")}
    assert on_disk == set(counts)


def test_read_back_equals_the_warehouse(warehouse, written):
    target, counts = written
    relations = {name: relation for name, (relation, _) in HISTORY_FILES.items()}
    daily, relations[DAILY_HISTORY[0]] = f"history/{DAILY_HISTORY[0]}/", DAILY_HISTORY[1]
    days = sum(rows for path, rows in counts.items() if path.startswith(daily))
    counts = {p: r for p, r in counts.items() if not p.startswith(daily)}
    counts[f"{daily}*.parquet"] = days  # the days together are the whole history
    for path, rows in counts.items():
        schema, name = path.removesuffix(".parquet").split("/")[:2]
        relation = relations[name] if schema == "history" else f"{schema}.{name}"
        source = f"SELECT * FROM {relation}"
        copy = f"SELECT * FROM read_parquet('{target / path}')"
        assert warehouse.execute(f"SELECT count(*) FROM ({copy})").fetchone()[0] == rows, path
        assert warehouse.execute(f"SELECT count(*) FROM ({source})").fetchone()[0] == rows, path
        assert same_rows(warehouse, source, copy), path
        # same column names and types, so a reader needs no casts (Parquet has no 128-bit
        # integer: DuckDB writes a HUGEINT, a sum of integers, as a DOUBLE)
        written_as = [(n, "DOUBLE" if t == "HUGEINT" else t) for n, t in columns(warehouse, source)]
        assert columns(warehouse, copy) == written_as, path
    assert counts["mart/endpoint_offers.parquet"] > 0 and counts["mart/model_figures.parquet"] > 0


def test_the_same_warehouse_writes_the_same_bytes(warehouse, written, tmp_path):
    first, counts = written
    assert write_parquet(warehouse, tmp_path) == counts

    def digest(root: Path) -> dict[str, str]:
        return {p: hashlib.sha256((root / p).read_bytes()).hexdigest() for p in counts}

    assert digest(tmp_path) == digest(first)


def test_a_day_whose_content_is_the_same_is_linked_and_a_changed_one_written(
    warehouse, written, tmp_path
):
    """The next release links each unchanged day's file from the previous one (the same inode);
    a previous file whose content differs (here: another day's bytes), or that is a link, is
    never reused: the day is written from the warehouse."""
    first, counts = written
    previous = tmp_path / "previous"
    shutil.copytree(first, previous)
    days = sorted(p for p in counts if p.startswith("history/endpoint_figures/"))
    changed, linked = days[-1], days[-2]
    shutil.copyfile(previous / days[0], previous / changed)  # another day's content
    (previous / linked).unlink()
    (previous / linked).symlink_to(first / linked)
    target = tmp_path / "next"
    assert write_parquet(warehouse, target, previous) == counts
    for day in days:
        same_file = os.path.samefile(previous / day, target / day)
        assert same_file == (day not in (changed, linked)), day
        assert (target / day).read_bytes() == (first / day).read_bytes(), day


def test_each_day_file_holds_the_figures_of_its_utc_day_whatever_the_time_zone(
    warehouse, written, tmp_path
):
    """A file a day, named by the UTC day of observed_at: a session in another time zone (here
    UTC-5, where a figure of 02:00 UTC falls on the day before) writes the same files."""
    first, counts = written
    days = sorted(p for p in counts if p.startswith("history/endpoint_figures/"))
    for day in days:
        name = Path(day).stem
        [(low, high)] = warehouse.execute(
            "SELECT min(strftime(observed_at AT TIME ZONE 'UTC', '%Y-%m-%d')), "
            "max(strftime(observed_at AT TIME ZONE 'UTC', '%Y-%m-%d')) "
            f"FROM read_parquet('{first / day}')"
        ).fetchall()
        assert (low, high) == ((None, None) if name == "undated" else (name, name)), day
    warehouse.execute("SET TimeZone = 'America/New_York'")
    try:
        assert write_parquet(warehouse, tmp_path) == counts
    finally:
        warehouse.execute("SET TimeZone = 'UTC'")
    for day in days:
        assert (tmp_path / day).read_bytes() == (first / day).read_bytes(), day
