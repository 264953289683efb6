"""Parquet copies of the warehouse in every release (pipeline/release/parquet.py): read back with
DuckDB they hold exactly the lake's rows with the same columns, the counts returned are the rows
written, and the same warehouse writes the same bytes."""

import hashlib
from pathlib import Path

import pytest

from pipeline.release.parquet import HISTORY, HISTORY_FILES, write_parquet
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


def test_every_core_table_mart_view_and_history_file_is_written(written):
    target, counts = written
    expected = {f"core/{t}.parquet" for t in CORE_TABLES}
    expected |= {f"mart/{v}.parquet" for v in MART_VIEWS if v not in HISTORY}
    expected |= {f"history/{name}.parquet" for name in HISTORY_FILES}
    assert set(counts) == expected
    assert {"mart/leaderboard.parquet", "mart/peak_vs_live.parquet", "core/claims.parquet"} <= set(
        counts
    )
    on_disk = {p.relative_to(target).as_posix() for p in target.rglob("*.parquet")}
    assert on_disk == set(counts)


def test_read_back_equals_the_warehouse(warehouse, written):
    target, counts = written
    relations = {name: relation for name, (relation, _) in HISTORY_FILES.items()}
    for path, rows in counts.items():
        schema, name = path.removesuffix(".parquet").split("/")
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
