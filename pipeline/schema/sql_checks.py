"""A Pandera model's row checks as SQL predicates, so a warehouse table is checked where it lives:
one DuckDB scan instead of every row fetched into pandas and validated again (at 90 days of polls
that round trip was most of a full build's 16 minutes of checks).

The models stay the only place a rule is written. Each built-in check of a column becomes a
predicate over that column; a frame-wide check (`@pa.dataframe_check`) carries its rule as SQL in
its `statistics` (`sql_rule`), and its Python check evaluates that same SQL over the frame
(`holds`), so the rule has one text. A check this module cannot translate raises
`UntranslatableCheck`, naming it, rather than being skipped.

A predicate is true, or null, for a good row: like Pandera's checks (`ignore_na`), a null passes
every check but the column's own not-null one. Floats follow pandas, where NaN is null: NaN passes
the checks of a nullable column and fails a non-nullable one. The predicates may be stricter than
Pandera (RE2 reads `$` and `\\d` more narrowly than Python's `re`), never looser: a row they fail
is read by Pandera, whose verdict stands (pipeline/warehouse/validate.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb
import pandas as pd
import pandera.pandas as pa

from pipeline.schema.ddl import columns, model_shape

SQL_STATISTIC = "sql"  # the key of a frame-wide check's rule in its `statistics`
# pandas keeps instants in int64 nanoseconds: outside these a timestamp cannot reach a frame
_NANOSECOND_RANGE = (
    "TIMESTAMPTZ '1677-09-21 00:12:43.145225+00'",
    "TIMESTAMPTZ '2262-04-11 23:47:16.854775+00'",
)


class UntranslatableCheck(ValueError):
    """A check of a model with no SQL form here."""


@dataclass(frozen=True)
class SqlCheck:
    """One check of a model: `column` (None for a frame-wide check), Pandera's name for it, and
    the predicate a good row satisfies (true or null)."""

    column: str | None
    name: str
    passes: str


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UntranslatableCheck(f"no SQL literal for {value!r}")
        return repr(value) + "::DOUBLE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise UntranslatableCheck(f"no SQL literal for {value!r}")


def _quoted(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def _range(value: str, stats: dict[str, Any]) -> str:
    low = ">=" if stats.get("include_min", True) else ">"
    high = "<=" if stats.get("include_max", True) else "<"
    return (
        f"({value} {low} {_literal(stats['min_value'])} AND "
        f"{value} {high} {_literal(stats['max_value'])})"
    )


def _length(value: str, stats: dict[str, Any]) -> str:
    # length() counts code points, as Python's len() does
    if stats.get("exact_value") is not None:
        return f"length({value}) = {_literal(stats['exact_value'])}"
    parts = []
    if stats.get("min_value") is not None:
        parts.append(f"length({value}) >= {_literal(stats['min_value'])}")
    if stats.get("max_value") is not None:
        parts.append(f"length({value}) <= {_literal(stats['max_value'])}")
    return " AND ".join(parts) or "true"


# Pandera's built-in checks, by the name it gives them: (SQL value, statistics) -> predicate
_BUILT_IN: dict[str, Callable[[str, dict[str, Any]], str]] = {
    "greater_than": lambda v, s: f"{v} > {_literal(s['min_value'])}",
    "greater_than_or_equal_to": lambda v, s: f"{v} >= {_literal(s['min_value'])}",
    "less_than": lambda v, s: f"{v} < {_literal(s['max_value'])}",
    "less_than_or_equal_to": lambda v, s: f"{v} <= {_literal(s['max_value'])}",
    "equal_to": lambda v, s: f"{v} = {_literal(s['value'])}",
    "not_equal_to": lambda v, s: f"{v} <> {_literal(s['value'])}",
    "in_range": _range,
    "isin": lambda v, s: f"{v} IN ({', '.join(_literal(x) for x in s['allowed_values'])})",
    "notin": lambda v, s: f"{v} NOT IN ({', '.join(_literal(x) for x in s['forbidden_values'])})",
    "str_length": _length,
    "str_startswith": lambda v, s: f"starts_with({v}, {_literal(s['string'])})",
    "str_endswith": lambda v, s: f"ends_with({v}, {_literal(s['string'])})",
    # Python's re.match: anchored at the start only
    "str_matches": lambda v, s: f"regexp_matches({v}, {_literal('^(?:' + s['pattern'] + ')')})",
}


def _column_checks(name: str, column: Any, sql_type: str) -> list[SqlCheck]:
    quoted = _quoted(name)
    floating = sql_type == "DOUBLE"
    # NaN is pandas' null: it passes the checks of a nullable column (ignore_na) like a null
    value = f"nullif({quoted}, 'NaN'::DOUBLE)" if floating else quoted
    found = []
    if not column.nullable:
        present = f"{quoted} IS NOT NULL" + (f" AND NOT isnan({quoted})" if floating else "")
        found.append(SqlCheck(name, "not_nullable", present))
    if sql_type.startswith("TIMESTAMP"):
        low, high = _NANOSECOND_RANGE
        found.append(SqlCheck(name, "nanosecond_range", f"{quoted} BETWEEN {low} AND {high}"))
    for check in column.checks:
        translate = _BUILT_IN.get(check.name)
        if translate is None or not check.ignore_na or check.groupby is not None:
            raise UntranslatableCheck(f"column {name}: check {check.name!r} has no SQL form")
        found.append(SqlCheck(name, check.name, translate(value, check.statistics)))
    return found


def sql_checks(model: type[pa.DataFrameModel]) -> list[SqlCheck]:
    """Every row check of `model` as SQL (its columns' types and its keys are checked apart:
    `columns_match` and the key counts of pipeline/warehouse/validate.py)."""
    schema = model.to_schema()
    types = {name: sql_type for name, sql_type, _nullable, _ in columns(model)}
    found = []
    for name, column in schema.columns.items():
        found += _column_checks(name, column, types[name])
    for check in schema.checks:
        rule = (check.statistics or {}).get(SQL_STATISTIC)
        if not isinstance(rule, str):
            raise UntranslatableCheck(
                f"{model.__name__}: frame check {check.name!r} gives no SQL rule (sql_rule)"
            )
        found.append(SqlCheck(None, check.name, f"({rule})"))
    return found


def failing_rows(model: type[pa.DataFrameModel]) -> str:
    """A predicate true for exactly the rows that fail one of the model's row checks."""
    return "NOT (" + " AND ".join(f"coalesce({c.passes}, true)" for c in sql_checks(model)) + ")"


def unique_key(model: type[pa.DataFrameModel]) -> tuple[str, ...]:
    """The columns a table's or a staged frame's model holds unique: its Config's key, else its
    one unique column."""
    schema = model.to_schema()
    if schema.unique:
        return tuple(schema.unique)
    return tuple(name for name, column in schema.columns.items() if column.unique)


def passes(con: duckdb.DuckDBPyConnection, model: type[pa.DataFrameModel], relation: str) -> bool:
    """Whether `relation` (a table or registered view with the model's columns and types) passes
    the model's row and frame checks and holds its key once, asked of DuckDB where it lives: one
    scan. True means Pandera would pass it too; False leaves the verdict, and its words, to
    Pandera, as does a model with a check that has no SQL form."""
    try:
        failing = failing_rows(model)
    except UntranslatableCheck:
        return False
    key = ", ".join(_quoted(name) for name in unique_key(model))
    # a key held twice, as pandas' duplicated() finds it: nulls equal each other, as in GROUP BY
    repeated = (
        f"(SELECT count(*) FROM (SELECT 1 FROM {relation} GROUP BY {key} HAVING count(*) > 1))"
        if key
        else "0"
    )
    # fetchall: a result left unfinished would keep a registered relation from unregistering
    (found,) = con.execute(
        f"SELECT count(*) FILTER (WHERE {failing}), {repeated} FROM {relation}"
    ).fetchall()
    return not any(found)


def columns_match(model: type[pa.DataFrameModel], found: dict[str, tuple[str, bool]]) -> bool:
    """Whether a table's columns (name -> (DuckDB type, nullable)) are the model's: its DDL's
    (pipeline/schema/ddl.py), so every value has the type Pandera would coerce it to."""
    return found == model_shape(model)


def sql_rule(rule: str) -> dict[str, str]:
    """The `statistics` of a frame-wide check whose rule is the SQL predicate `rule` (true or
    null for a good row), for `@pa.dataframe_check(statistics=sql_rule(RULE))`."""
    return {SQL_STATISTIC: rule}


def holds(frame: pd.DataFrame, rule: str) -> pd.Series:
    """Where the SQL predicate `rule` is true or null, row by row over `frame`: the Python side
    of a frame-wide check, so it reads the very SQL the warehouse check runs."""
    with duckdb.connect() as con:
        con.register("frame", frame)
        values = con.execute(f"SELECT coalesce(({rule}), true) AS ok FROM frame").fetchnumpy()
    return pd.Series(values["ok"], index=frame.index, dtype=bool)
