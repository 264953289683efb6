"""The models' checks as SQL (pipeline/schema/sql_checks.py) fail every row Pandera fails, and no
other but the few values RE2 reads more narrowly than Python's `re`: a warehouse check trusts
SQL to say which snapshots Pandera must read, so a looser predicate would let a bad row through."""

from __future__ import annotations

import math
from typing import Any

import duckdb
import pandas as pd
import pandera.errors as pa_errors
import pandera.pandas as pa
import pytest
from pandera.typing import Series

from pipeline.schema.core import CORE_TABLES
from pipeline.schema.ddl import columns
from pipeline.schema.sql_checks import (
    UntranslatableCheck,
    failing_rows,
    holds,
    sql_checks,
    sql_rule,
)
from pipeline.schema.staging import FRAMES

MODELS = {f"core.{n}": m for n, m in CORE_TABLES.items()} | {
    f"staging.{n}": m for n, m in FRAMES.items()
}
# where RE2 is stricter than Python's re: `$` before a final newline, \d of other scripts
STRICTER = {"2026-01\n", "٢٠٢٦-01", "https://a\n"}
WHEN = pd.Timestamp("2026-11-29T06:00:00Z")


def _strings(model: type[pa.DataFrameModel]) -> list[Any]:
    found: list[Any] = [None, "", "x", "é", "👍🏽", "a" * 64, "b" * 63, "c" * 65, "http"]
    found += ["http://a.b", "https://a.b/c", "ftp://a", " http://a", "HTTP://A", "https://a\n"]
    found += ["2026-01", "2026-01-02", "2026-1-2", "2026-01-02T", "2026-01\n", "٢٠٢٦-01"]
    found += ["0f8fad5b-d9cb-41ea-bb37-0242ac130003", "0F8FAD5B-D9CB-41EA-BB37-0242AC130003"]
    for column in model.to_schema().columns.values():
        for check in column.checks:
            found += list(check.statistics.get("allowed_values") or [])
            found += [check.statistics[k] for k in ("string",) if k in check.statistics]
    return found


def _numbers(model: type[pa.DataFrameModel], integer: bool) -> list[Any]:
    found: list[Any] = [None, -1, 0, 1, 29, 30, 31, 99, 100, 101, 599, 600, 3599, 3600]
    found += [10**12, 10**12 + 1, 2**62]
    if not integer:
        found += [math.nan, math.inf, -math.inf, -0.0, 1e-9, 0.5, 99.99, 100.5, 99_999.0, 1e300]
    for column in model.to_schema().columns.values():
        for check in column.checks:
            found += [
                v
                for v in check.statistics.get("allowed_values") or ()
                if isinstance(v, int | float) and not isinstance(v, bool)
            ]
            for key in ("min_value", "max_value", "value"):
                bound = check.statistics.get(key)
                if isinstance(bound, int | float) and not isinstance(bound, bool):
                    found += [bound - 1, bound, bound + 1]
                    found += [] if integer else [bound - 0.5, bound + 0.5]
    return [int(v) if integer and v is not None else v for v in found]


def _candidates(model: type[pa.DataFrameModel], sql_type: str) -> list[Any]:
    if sql_type == "VARCHAR":
        return _strings(model)
    if sql_type in ("DOUBLE", "BIGINT"):
        return _numbers(model, integer=sql_type == "BIGINT")
    if sql_type == "BOOLEAN":
        return [None, True, False]
    return [None, WHEN]


def _passes_alone(model: type[pa.DataFrameModel], column: str, value: Any) -> bool:
    try:
        alone = pa.DataFrameSchema({column: model.to_schema().columns[column]}, coerce=True)
        alone.validate(pd.DataFrame({column: [value]}))
    except (pa_errors.SchemaError, pa_errors.SchemaErrors, ValueError, TypeError):
        return False
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _base_row(model: type[pa.DataFrameModel]) -> dict[str, Any]:
    """A row every check passes: per column, the first candidate its checks take."""
    row = {}
    for name, sql_type, _nullable, _ in columns(model):
        row[name] = next(v for v in _candidates(model, sql_type) if _passes_alone(model, name, v))
    model.validate(pd.DataFrame([row]))
    return row


def _mutations(model: type[pa.DataFrameModel]) -> list[dict[str, Any]]:
    base = _base_row(model)
    rows = [base]
    for name, sql_type, _nullable, _ in columns(model):
        rows += [base | {name: value} for value in _candidates(model, sql_type)]
    # the frame-wide rules read metric and value together
    if {"metric", "value"} <= set(base):
        metrics = model.to_schema().columns["metric"].checks[0].statistics["allowed_values"]
        rows += [
            base | {"metric": metric, "value": value}
            for metric in metrics
            for value in (0.5, 3599.0, 3600.0, 3601.0, 9999.0)
        ]
    return rows


def _row_schema(model: type[pa.DataFrameModel]) -> pa.DataFrameSchema:
    """The model's schema without its key: the rows here share the base row's (keys are counted
    apart, pipeline/warehouse/validate.py)."""
    schema = model.to_schema()
    keyed = [name for name, column in schema.columns.items() if column.unique]
    schema = schema.update_columns({name: {"unique": False} for name in keyed})
    schema.unique = None
    return schema


def _pandera_failures(model: type[pa.DataFrameModel], rows: list[dict[str, Any]]) -> set[int]:
    frame = pd.DataFrame(rows, columns=[name for name, *_ in columns(model)])
    try:
        _row_schema(model).validate(frame, lazy=True)
    except pa_errors.SchemaErrors as errors:
        cases = errors.failure_cases
        assert cases["index"].notna().all(), cases  # every failure is a row's
        return {int(i) for i in cases["index"]}
    return set()


def _sql_failures(model: type[pa.DataFrameModel], rows: list[dict[str, Any]]) -> set[int]:
    names = [name for name, *_ in columns(model)]
    # the model's types without NOT NULL: a warehouse table refuses the nulls this inserts
    typed = ", ".join(f'"{name}" {sql_type}' for name, sql_type, _n, _d in columns(model))
    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'UTC'")
        con.execute(f"CREATE TABLE t (row_index BIGINT, {typed})")
        marks = ", ".join("?" for _ in range(len(names) + 1))
        con.executemany(
            f"INSERT INTO t VALUES ({marks})",
            [[i, *(row[name] for name in names)] for i, row in enumerate(rows)],
        )
        found = con.execute(f"SELECT row_index FROM t WHERE {failing_rows(model)}").fetchall()
    return {row[0] for row in found}


@pytest.mark.parametrize("table", sorted(MODELS))
def test_sql_fails_exactly_the_rows_pandera_fails(table):
    model = MODELS[table]
    rows = _mutations(model)
    by_pandera = _pandera_failures(model, rows)
    by_sql = _sql_failures(model, rows)
    assert 0 not in by_pandera | by_sql  # the base row is good
    assert by_pandera - by_sql == set(), [rows[i] for i in sorted(by_pandera - by_sql)][:3]
    stricter = [rows[i] for i in by_sql - by_pandera]
    # pandas turns a null into False when it coerces to a plain bool: the SQL keeps it a null
    flags = {name for name, sql_type, nullable, _ in columns(model) if sql_type == "BOOLEAN"}
    flags -= {name for name, _t, nullable, _d in columns(model) if nullable}
    nulled = [row for row in stricter if any(row[name] is None for name in flags)]
    assert all(set(row.values()) & STRICTER for row in stricter if row not in nulled), stricter
    assert by_pandera  # the mutations reach the checks


def test_every_check_of_every_model_has_its_sql():
    for table, model in MODELS.items():
        checks = sql_checks(model)
        built_in = sum(len(c.checks) for c in model.to_schema().columns.values())
        frame_wide = len(model.to_schema().checks)
        not_null = sum(not c.nullable for c in model.to_schema().columns.values())
        timestamps = sum(t.startswith("TIMESTAMP") for _n, t, _u, _d in columns(model))
        assert len(checks) == built_in + frame_wide + not_null + timestamps, table


class WithoutSql(pa.DataFrameModel):
    value: Series[float]

    @pa.dataframe_check
    @classmethod
    def positive(cls, frame: pd.DataFrame) -> pd.Series:
        return frame["value"] > 0


class CustomColumnCheck(pa.DataFrameModel):
    value: Series[float] = pa.Field(
        in_range={"min_value": 0, "max_value": 1}, unique_values_eq=[0.5]
    )


@pytest.mark.parametrize(
    ("model", "named"), [(WithoutSql, "positive"), (CustomColumnCheck, "unique_values_eq")]
)
def test_a_check_without_sql_is_refused_by_name(model, named):
    with pytest.raises(UntranslatableCheck, match=named):
        sql_checks(model)


def test_a_frame_rule_reads_its_sql_on_a_frame():
    rule = "metric <> 'ttft_s' OR value < 3600"
    frame = pd.DataFrame(
        {"metric": ["ttft_s", "ttft_s", "x", None], "value": [1.0, 4000.0, 4000.0, 5000.0]},
        index=[10, 11, 12, 13],
    )
    assert holds(frame, rule).to_dict() == {10: True, 11: False, 12: True, 13: True}

    class Rule(pa.DataFrameModel):
        metric: Series[str] = pa.Field(nullable=True)
        value: Series[float]

        @pa.dataframe_check(statistics=sql_rule(rule))
        @classmethod
        def within(cls, frame: pd.DataFrame) -> pd.Series:
            return holds(frame, rule)

    with pytest.raises(pa_errors.SchemaErrors) as caught:
        Rule.validate(frame, lazy=True)
    assert set(caught.value.failure_cases["index"]) == {11}
    assert [c.passes for c in sql_checks(Rule) if c.column is None] == [f"({rule})"]


@pytest.mark.parametrize(
    ("metric", "value", "expected"),
    [
        ("ttft_s", 3599.9, True),
        ("ttft_s", 3600.0, False),
        ("output_tokens_per_s", 5000.0, True),
        ("time_to_first_answer_token_s", 4000.0, False),
        ("time_to_first_answer_token_s", 10.0, True),
    ],
)
def test_the_frame_rule_says_what_its_name_says(metric, value, expected):
    """The frame-wide rule, written once in SQL, against verdicts written here by hand: a time to
    first token or answer of an hour or more is refused."""
    from pipeline.schema.staging import TIMES_WITHIN_AN_HOUR

    with duckdb.connect() as con:
        (verdict,) = con.execute(
            f"SELECT {TIMES_WITHIN_AN_HOUR} FROM (SELECT ? AS metric, ? AS value)", [metric, value]
        ).fetchone()
    assert verdict is expected
