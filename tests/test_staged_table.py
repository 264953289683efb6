"""Staged rows are built in Arrow with the models' types (`staged_table`) and take the pandas path
(a DataFrame from row dicts, Pandera's coercion) only when that fails: both give the same table
for every bundled snapshot, and a chunk with a snapshot whose values Arrow cannot hold, or whose
rows break their model, still stages the others. The Arrow table is checked in SQL first
(`passes_in_sql`); Pandera reads it only when SQL finds a row or a key to doubt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pytest
from conftest import BUNDLED_RAW
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.extract import PARSERS
from pipeline.extract.base import (
    Records,
    SnapshotInput,
    _dict_rows_table,
    deferred,
    frame_of,
    passes_in_sql,
    staged_table,
)
from pipeline.extract.base import validate_frame as pandas_validated
from pipeline.raw.snapshots import SnapshotStore
from pipeline.schema.staging import FRAMES
from pipeline.sources.registry import load_registry
from pipeline.sources.reviewed import ReviewedFiles
from pipeline.support.settings import BUNDLED_METADATA
from pipeline.warehouse import staging
from pipeline.warehouse.staging import _checked_table

SOURCES = load_registry(BUNDLED_METADATA / "sources.toml")
REVIEWED = ReviewedFiles.load(BUNDLED_METADATA)


def _parsed() -> dict[str, list[Records]]:
    """Every frame of every bundled snapshot, each snapshot's rows as its parser gave them."""
    store = SnapshotStore(BUNDLED_RAW)
    frames: dict[str, list[Records]] = {}
    for meta in store.list():
        source = SOURCES[meta.source_id]
        with deferred():
            result = PARSERS[source.format].parse(
                SnapshotInput(meta, source, store.read(meta), REVIEWED)
            )
        for name, records in result.items():
            frames.setdefault(name, []).append(records)
    return frames


PARSED = _parsed()


@pytest.fixture
def checker():
    with duckdb.connect() as con:
        yield con


def _pandas_path(name: str, parts: list[Records]) -> pa.Table:
    frame = frame_of(name, [row for records in parts for row in records.merged()])
    columns = list(FRAMES[name].to_schema().columns)
    return pa.Table.from_pandas(pandas_validated(name, frame)[columns], preserve_index=False)


@pytest.mark.parametrize("name", sorted(PARSED))
def test_arrow_and_pandas_stage_the_same_rows(name):
    parts = PARSED[name]
    built = staged_table(name, parts)
    by_pandas = _pandas_path(name, parts)
    assert built.schema.names == by_pandas.schema.names
    # pandas' strings come out as large_string, which DuckDB reads as it reads string
    assert built.to_pylist() == by_pandas.cast(built.schema).to_pylist()
    assert built.num_rows == sum(len(records) for records in parts)


def test_every_frame_with_rows_in_the_bundled_corpus_is_compared():
    assert {name for name, parts in PARSED.items() if any(parts)} >= set(FRAMES) - {
        "unreviewed_figures",  # no bundled claim page has a figure no reviewed claim covers
        # no Vercel AI Gateway response was captured, so none is bundled
        "vercel_gateway_endpoints",
        "vercel_gateway_poll_members",
    }


def _records(sid: str, rows: list[dict], when: str = "2026-11-29T06:00:00Z") -> Records:
    provenance = {"source_id": "s", "snapshot_id": sid, "observed_at": pd.Timestamp(when)}
    return Records(rows, provenance)


def test_a_row_that_dates_itself_keeps_its_date_and_the_others_take_the_snapshots():
    template = PARSED["llmperf_runs"][0][0]
    own = pd.Timestamp("2026-06-01T00:00:00Z")
    dated = {k: v for k, v in template.items() if k != "observed_at"} | {"observed_at": own}
    undated = {k: v for k, v in template.items() if k != "observed_at"}
    table = staged_table("llmperf_runs", [_records("a/1", [dated]), _records("b/2", [undated])])
    assert table.column("observed_at").to_pylist() == [own, pd.Timestamp("2026-11-29T06:00Z")]
    assert table.column("snapshot_id").to_pylist() == ["a/1", "b/2"]


def test_a_value_arrow_cannot_hold_goes_the_pandas_path_and_the_rest_of_the_chunk_stays(checker):
    parts = [records for records in PARSED["openrouter_endpoints"] if records]
    good = parts[0]
    odd = Records([dict(row) for row in good], {**good.provenance, "snapshot_id": "odd/1"})
    odd[0]["ttft_s_p50"] = "12.5"  # a string Pandera coerces; Arrow refuses it in a float column
    with pytest.raises(pa.ArrowException):
        staged_table("openrouter_endpoints", [good, odd])
    failed: dict[str, str] = {}
    table = _checked_table("openrouter_endpoints", [good, odd], failed, checker)
    assert failed == {}
    assert table.num_rows == 2 * len(good)
    assert table.column("ttft_s_p50").to_pylist()[len(good)] == 12.5


def test_a_snapshot_whose_rows_break_the_model_is_named_and_the_others_are_kept(checker):
    good = next(records for records in PARSED["openrouter_endpoints"] if records)
    bad = Records([dict(row) for row in good], {**good.provenance, "snapshot_id": "bad/1"})
    bad[0]["ttft_s_p50"] = -3.0
    failed: dict[str, str] = {}
    table = _checked_table("openrouter_endpoints", [good, bad], failed, checker)
    assert list(failed) == ["bad/1"] and "ttft_s_p50" in failed["bad/1"]
    assert set(table.column("snapshot_id").to_pylist()) == {good.provenance["snapshot_id"]}


def test_a_null_provenance_value_is_no_value_of_its_own():
    template = PARSED["llmperf_runs"][0][0]
    row = {k: v for k, v in template.items() if k != "observed_at"} | {"observed_at": None}
    records = _records("a/1", [row])
    assert records.merged()[0]["observed_at"] == pd.Timestamp("2026-11-29T06:00Z")
    table = staged_table("llmperf_runs", [records])
    assert table.column("observed_at").to_pylist() == [pd.Timestamp("2026-11-29T06:00Z")]


def test_rows_of_many_snapshots_stage_in_order_each_with_its_provenance():
    template = next(records for records in PARSED["openrouter_endpoints"] if len(records) >= 3)
    rows = [{k: v for k, v in row.items() if k != "snapshot_id"} for row in list(template)[:3]]
    parts = [
        _records("a/1", rows),
        _records("b/2", rows[:2], "2026-11-30T06:00:00Z"),
        _records("c/3", rows[1:], "2026-12-01T06:00:00Z"),
    ]
    table = staged_table("openrouter_endpoints", parts)
    assert table.column("snapshot_id").to_pylist() == ["a/1"] * 3 + ["b/2"] * 2 + ["c/3"] * 2
    assert table.column("observed_at").to_pylist()[2:4] == [
        pd.Timestamp("2026-11-29T06:00Z"),
        pd.Timestamp("2026-11-30T06:00Z"),
    ]
    assert table.column("tag").to_pylist() == [row["tag"] for row in rows + rows[:2] + rows[1:]]


def test_nothing_parsed_is_an_empty_table_of_the_model():
    table = staged_table("openrouter_endpoints", [])
    assert table.num_rows == 0
    assert table.schema.names == list(FRAMES["openrouter_endpoints"].to_schema().columns)


def test_the_parsed_corpus_is_the_bundled_one():
    rows = sum(len(records) for parts in PARSED.values() for records in parts)
    assert Path(BUNDLED_RAW).is_dir() and rows > 10_000


def test_a_nan_is_a_null_on_both_paths():
    template = next(records for records in PARSED["openrouter_endpoints"] if records)
    records = Records([dict(row) for row in template], template.provenance)
    records[0]["uptime_last_1d"] = float("nan")  # a nullable float
    table = staged_table("openrouter_endpoints", [records])
    assert table.column("uptime_last_1d").to_pylist()[0] is None
    assert (
        _pandas_path("openrouter_endpoints", [records]).column("uptime_last_1d")[0].as_py() is None
    )


def test_an_integer_beyond_64_bits_goes_the_pandas_path_and_rejects_its_snapshot(checker):
    good = next(records for records in PARSED["openrouter_endpoints"] if records)
    odd = Records([dict(row) for row in good], {**good.provenance, "snapshot_id": "odd/1"})
    odd[0]["context_length"] = 10**30  # an integer column
    with pytest.raises(OverflowError):
        staged_table("openrouter_endpoints", [good, odd])
    failed: dict[str, str] = {}
    table = _checked_table("openrouter_endpoints", [good, odd], failed, checker)
    assert list(failed) == ["odd/1"]
    assert set(table.column("snapshot_id").to_pylist()) == {good.provenance["snapshot_id"]}


def test_a_null_where_the_model_allows_none_goes_the_pandas_path(checker):
    """Pandera coerces a null flag to False on the frame it checks; the table inserted must not
    keep the null (the staging column is NOT NULL, and the chunk would fail)."""
    template = next(records for records in PARSED["openrouter_endpoints"] if records)
    records = Records([dict(row) for row in template], template.provenance)
    records[0]["quantization_known"] = None
    with pytest.raises(ValueError, match="quantization_known"):
        staged_table("openrouter_endpoints", [records])
    failed: dict[str, str] = {}
    table = _checked_table("openrouter_endpoints", [records], failed, checker)
    assert table.column("quantization_known").null_count == 0  # as the pandas path always did


@pytest.mark.parametrize("name", sorted(PARSED))
def test_every_bundled_frame_passes_in_sql_as_it_passes_pandera(name, checker):
    table = staged_table(name, PARSED[name])
    pandas_validated(name, table.to_pandas())
    assert passes_in_sql(checker, name, table)


def test_rows_that_pass_in_sql_are_not_read_by_pandera(checker, monkeypatch):
    read: list[str] = []
    monkeypatch.setattr(staging, "validate_frame", lambda name, frame: read.append(name))
    parts = PARSED["openrouter_endpoints"]
    failed: dict[str, str] = {}
    table = _checked_table("openrouter_endpoints", parts, failed, checker)
    assert read == [] and failed == {}
    assert table.num_rows == sum(len(records) for records in parts)


def test_a_repeated_key_fails_in_sql_and_pandera_names_its_snapshot(checker):
    good = next(records for records in PARSED["openrouter_endpoints"] if len(records) > 1)
    twice = Records([dict(good[0]), dict(good[0])], {**good.provenance, "snapshot_id": "twice/1"})
    assert not passes_in_sql(
        checker, "openrouter_endpoints", staged_table("openrouter_endpoints", [twice])
    )
    failed: dict[str, str] = {}
    table = _checked_table("openrouter_endpoints", [good, twice], failed, checker)
    assert list(failed) == ["twice/1"]
    assert set(table.column("snapshot_id").to_pylist()) == {good.provenance["snapshot_id"]}


def test_a_broken_check_fails_in_sql(checker):
    good = next(records for records in PARSED["openrouter_endpoints"] if records)
    bad = Records([dict(row) for row in good], good.provenance)
    bad[0]["ttft_s_p50"] = -3.0
    assert passes_in_sql(
        checker, "openrouter_endpoints", staged_table("openrouter_endpoints", [good])
    )
    assert not passes_in_sql(
        checker, "openrouter_endpoints", staged_table("openrouter_endpoints", [bad])
    )


def test_where_sql_doubts_rows_pandera_passes_pandera_decides(checker, monkeypatch):
    """The SQL form of a check may be stricter than Pandera's (RE2 against Python's re), never
    looser: rows it doubts are kept when Pandera passes them."""
    monkeypatch.setattr(staging, "passes_in_sql", lambda con, name, table: False)
    parts = PARSED["openrouter_endpoints"]
    failed: dict[str, str] = {}
    table = _checked_table("openrouter_endpoints", parts, failed, checker)
    assert failed == {} and table.num_rows == sum(len(records) for records in parts)


_SCHEMA = pa.schema([("a", pa.float64()), ("b", pa.string()), ("c", pa.int64()), ("d", pa.bool_())])
_VALUES = st.none() | st.floats(allow_nan=False) | st.text(max_size=3) | st.integers(-5, 5)
_VALUES |= st.booleans() | st.integers(min_value=2**63, max_value=2**64)


def _table_or_error(build: Any) -> Any:
    try:
        return build()
    except (pa.ArrowException, OverflowError, TypeError) as error:
        return type(error)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "d", "x"]), max_size=5, unique=True),
    st.lists(st.tuples(st.lists(_VALUES, min_size=5, max_size=5), st.booleans()), max_size=6),
)
def test_dict_rows_become_the_table_from_pylist_makes(keys: list[str], rows: list[Any]) -> None:
    """Rows with the first row's keys, others with one key fewer, any value: the same table, or
    the same kind of error, as pa.Table.from_pylist."""
    dicts = []
    for values, short in rows:
        row = dict(zip(keys, values, strict=False))
        if short and row:
            row.pop(next(iter(row)))
        dicts.append(row)
    ours = _table_or_error(lambda: _dict_rows_table(dicts, _SCHEMA))
    theirs = _table_or_error(lambda: pa.Table.from_pylist(dicts, schema=_SCHEMA))
    if isinstance(theirs, pa.Table):
        assert isinstance(ours, pa.Table) and ours.equals(theirs)
    else:
        assert ours is theirs


def test_rows_of_one_key_and_rows_that_differ_in_keys_become_the_same_table() -> None:
    for rows in (
        [{"b": "x"}, {"b": None}],
        [{"a": 1.5, "b": "x"}, {"a": 2.0, "c": 3}],  # as many keys, not the same ones
        [{"a": 1.5}, {"a": 2.0, "b": "y"}],
        [],
    ):
        expected = pa.Table.from_pylist(rows, schema=_SCHEMA)
        assert _dict_rows_table(rows, _SCHEMA).equals(expected), rows
