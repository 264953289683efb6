"""DuckDB DDL and column comments derived from Pandera models: the models are the only place a
table's columns are written down."""

from __future__ import annotations

import pandera.pandas as pa

_TYPES = {
    "str": "VARCHAR",
    "string": "VARCHAR",
    "string[pyarrow]": "VARCHAR",
    "float64": "DOUBLE",
    "int64": "BIGINT",
    "Int64": "BIGINT",
    "bool": "BOOLEAN",
    "boolean": "BOOLEAN",
    "datetime64[ns, UTC]": "TIMESTAMPTZ",
}


def duckdb_type(dtype: object) -> str:
    name = str(dtype)
    if name not in _TYPES:
        raise KeyError(f"no DuckDB type for pandas dtype {name!r}")
    return _TYPES[name]


def columns(model: type[pa.DataFrameModel]) -> list[tuple[str, str, bool, str]]:
    """(name, DuckDB type, nullable, description with unit) for each column of the model."""
    out = []
    for name, column in model.to_schema().columns.items():
        description = column.description or ""
        unit = (column.metadata or {}).get("unit")
        if unit:
            description = f"{description} [{unit}]".strip()
        out.append((name, duckdb_type(column.dtype), bool(column.nullable), description))
    return out


def create_table(
    model: type[pa.DataFrameModel], table: str, extra: tuple[tuple[str, str], ...] = ()
) -> str:
    parts = [
        f"{name} {sql_type}{'' if nullable else ' NOT NULL'}"
        for name, sql_type, nullable, _ in columns(model)
    ]
    parts += [f"{name} {sql_type}" for name, sql_type in extra]
    return f"CREATE TABLE IF NOT EXISTS {table} (\n    " + ",\n    ".join(parts) + "\n)"


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def comments(model: type[pa.DataFrameModel], table: str) -> list[str]:
    statements = []
    doc = (model.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
    if doc:
        statements.append(f"COMMENT ON TABLE {table} IS {quote_literal(doc)}")
    for name, _type, _nullable, description in columns(model):
        if description:
            statements.append(f"COMMENT ON COLUMN {table}.{name} IS {quote_literal(description)}")
    return statements
