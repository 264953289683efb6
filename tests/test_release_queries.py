"""Reading the warehouse for the exports (pipeline/release/queries.py): NaN is a missing value, and
of the history's snapshots only those the exports cite are read."""

from __future__ import annotations

import math
from dataclasses import fields, replace
from pathlib import Path

from pipeline.release.exports import ReleaseInfo, build_exports
from pipeline.release.queries import _records, cited_snapshot_ids, read_inputs
from pipeline.warehouse.connection import connect, session


def test_nan_in_a_float_column_is_none_and_everything_else_is_kept(tmp_path: Path) -> None:
    with session() as con:
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


def test_the_exports_read_only_the_snapshots_they_cite_and_come_out_the_same(built) -> None:
    with connect(built, read_only=True) as con:
        inputs = read_inputs(con)
        history = _records(con, "SELECT * FROM core.snapshots ORDER BY snapshot_id")
    read = [s["snapshot_id"] for s in inputs.snapshots]
    cited = cited_snapshot_ids({f.name: getattr(inputs, f.name) for f in fields(inputs)})
    assert read == cited and read == sorted(read)
    assert 0 < len(read) < len(history)  # the bundled history holds snapshots nothing cites
    # with the whole history to look up, the three documents are the same
    info = ReleaseInfo("2026.12.04")
    whole = build_exports(replace(inputs, snapshots=history), info)
    assert build_exports(inputs, info) == whole
    cited_in_documents = {
        s["id"] for document in whole.values() for s in document.get("snapshots", [])
    }
    assert cited_in_documents and cited_in_documents <= set(read)


def test_a_cited_snapshot_is_found_in_any_input_list_and_none_is_skipped() -> None:
    inputs = {
        "figures": [{"snapshot_id": "b/2"}, {"snapshot_id": "a/1"}],
        "platform_models": [{"snapshot_id": None}, {"snapshot_id": "b/2"}],
        "providers": [{"provider_id": "p"}],
        "as_of": None,
    }
    assert cited_snapshot_ids(inputs) == ["a/1", "b/2"]
