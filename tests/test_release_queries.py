"""Reading the warehouse for the exports (pipeline/release/queries.py): NaN is a missing value."""

from __future__ import annotations

import math
from pathlib import Path

from pipeline.release.queries import _records
from pipeline.warehouse.connection import connect


def test_nan_in_a_float_column_is_none_and_everything_else_is_kept(tmp_path: Path) -> None:
    with connect(tmp_path / "w.duckdb") as con:
        con.execute(
            "CREATE TABLE t AS SELECT * FROM (VALUES "
            "(1, 'nan'::DOUBLE, 'nan'::FLOAT, 1.5::DOUBLE, 'nan', ['nan'::DOUBLE], "
            "2.5::DECIMAL(4,2)), "
            "(2, NULL, 0.5::FLOAT, 'inf'::DOUBLE, 'x', [], NULL)"
            ") AS v(id, d, f, inf, text, list, dec)"
        )
        rows = _records(con, "SELECT * FROM t ORDER BY id")
    assert rows[0]["d"] is None and rows[0]["f"] is None
    assert rows[0]["inf"] == 1.5 and rows[1]["inf"] == math.inf and rows[1]["f"] == 0.5
    assert rows[0]["text"] == "nan"  # a string is only text
    assert math.isnan(rows[0]["list"][0])  # inside a list, as before: only columns are read
    assert rows[1]["d"] is None and rows[1]["dec"] is None
    assert list(rows[0]) == ["id", "d", "f", "inf", "text", "list", "dec"]
