"""DuckDB DDL and column comments derived from Pandera models: the models are the only place a
table's columns are written down."""

from __future__ import annotations

import duckdb
import pandera.pandas as pa
import pyarrow

from pipeline.schema.vocabulary import (
    ENDPOINT_ID,
    FETCH_OUTCOMES,
    METRICS,
    PRECISIONS,
    PROVIDER_TYPES,
    QUALIFIERS,
    REASONING_EFFORTS,
    SCOPES,
    SERVICE_TIERS,
)
from pipeline.support.duck import quote_literal

_TYPES = {
    "str": "VARCHAR",
    "string": "VARCHAR",
    "string[pyarrow]": "VARCHAR",
    "float64": "DOUBLE",
    "int64": "BIGINT",
    "Int64": "BIGINT",
    "bool": "BOOLEAN",
    "boolean": "BOOLEAN",
    "datetime64[ns, UTC]": "TIMESTAMP WITH TIME ZONE",  # as duckdb_columns() names it
}


def _one_of(values: tuple[str, ...]) -> str:
    """'a, b or c': a vocabulary as a column comment spells it."""
    return f"{', '.join(values[:-1])} or {values[-1]}"


# What a column means when its model says nothing more specific: the shared vocabulary's columns
# read the same in every table.
COMMON = {
    "source_id": "registry id of the source (pipeline/metadata/sources.toml)",
    "snapshot_id": "<source_id>/<file> of the raw snapshot under warehouse/raw",
    "provider_id": "provider (pipeline/metadata/providers.csv)",
    "model_id": "canonical model (pipeline/metadata/models.csv)",
    "platform_id": "model-access platform (pipeline/metadata/platforms.toml)",
    "endpoint_id": ENDPOINT_ID,
    "claim_id": "reviewed claim (pipeline/metadata/claims.toml)",
    "precision": _one_of(PRECISIONS),
    "service_tier": _one_of(SERVICE_TIERS),
    "reasoning_effort": f"{_one_of(REASONING_EFFORTS)}; null when not stated",
    "tier": "T1 independent measurement or own docs, T2 vendor claim or compilation, T3 press",
    "metric": _one_of(METRICS),
    "qualifier": f"{_one_of(QUALIFIERS)}; null when exact",
    "value": "the figure; null for a range",
    "low": "low end of a range",
    "high": "high end of a range",
    "unit": "unit of value, low and high",
    "observed_at": "when the figure was observed",
    "retrieved_at": "when the snapshot's bytes were obtained",
    "name": "display name",
    "publisher": "who publishes it, as listed",
    "kind": "what sort of thing it is (see the table comment)",
    "title": "title, as the registry gives it",
    "content_type": "media type the bytes were stored with",
    "quote": "the exact text that carries the figure",
    "hardware": "hardware the claim was made on, as stated",
    "notes": "reviewer's notes",
    "creator": "who made the model",
    "owner": "company behind the platform",
    "website": "http(s) home page",
    "type": _one_of(PROVIDER_TYPES),
    "doc_source_id": "registry id of the platform's own documentation page",
    "task": "task or modality, as the catalogue lists it",
    "function_calling": "the catalogue marks the model as supporting function calling",
    "beta": "the catalogue marks the model as beta",
    "lora": "the catalogue marks the model as accepting LoRA adapters",
    "row_number": "row of the compilation's table",
    "url": "http(s) address the bytes came from",
    "sha256": "sha256 of the bytes, hex",
    "obtained_by": "bundled (committed corpus), fetched (speedbook fetch), manual (snapshot add) "
    "or reconstructed (rebuilt from another document, never captured: see reconstructed_from)",
    "scope": f"{_one_of(SCOPES)}: figures of different scopes never compare",
    "stated_count_qualifier": "at_least for '100+', approx for '~50'; null when exact",
    "catalogue_scope": "what the ingested catalogue covers of the platform",
    "price_input_usd_per_mtok": "price per million input tokens [USD]",
    "price_output_usd_per_mtok": "price per million output tokens [USD]",
    "planned_deprecation": "date the platform plans to retire the model (ISO)",
    "outcome": _one_of(FETCH_OUTCOMES),
}


def duckdb_type(dtype: object) -> str:
    name = str(dtype)
    if name not in _TYPES:
        raise KeyError(f"no DuckDB type for pandas dtype {name!r}")
    return _TYPES[name]


# The Arrow type of each DuckDB type above: what a staged frame is built as before it is validated
# and inserted (pipeline/extract/base.py), so its values reach DuckDB as the model types them.
_ARROW_TYPES = {
    "VARCHAR": pyarrow.string(),
    "DOUBLE": pyarrow.float64(),
    "BIGINT": pyarrow.int64(),
    "BOOLEAN": pyarrow.bool_(),
    "TIMESTAMP WITH TIME ZONE": pyarrow.timestamp("ns", tz="UTC"),
}


def arrow_schema(model: type[pa.DataFrameModel]) -> pyarrow.Schema:
    """The model's columns as an Arrow schema (the DuckDB types of its DDL)."""
    return pyarrow.schema(
        [pyarrow.field(name, _ARROW_TYPES[sql_type]) for name, sql_type, _n, _d in columns(model)]
    )


def columns(model: type[pa.DataFrameModel]) -> list[tuple[str, str, bool, str]]:
    """(name, DuckDB type, nullable, description with unit) for each column of the model."""
    out = []
    for name, column in model.to_schema().columns.items():
        description = column.description or COMMON.get(name, "")
        unit = (column.metadata or {}).get("unit")
        if unit:
            description = f"{description} [{unit}]".strip()
        out.append((name, duckdb_type(column.dtype), bool(column.nullable), description))
    return out


def model_shape(model: type[pa.DataFrameModel]) -> dict[str, tuple[str, bool]]:
    """The model's columns as a table of its DDL has them: name -> (DuckDB type, nullable)."""
    return {name: (sql_type, nullable) for name, sql_type, nullable, _ in columns(model)}


def create_table(
    model: type[pa.DataFrameModel], table: str, extra: tuple[tuple[str, str], ...] = ()
) -> str:
    parts = [
        f"{name} {sql_type}{'' if nullable else ' NOT NULL'}"
        for name, sql_type, nullable, _ in columns(model)
    ]
    parts += [f"{name} {sql_type}" for name, sql_type in extra]
    return f"CREATE TABLE IF NOT EXISTS {table} (\n    " + ",\n    ".join(parts) + "\n)"


def evolution(
    model: type[pa.DataFrameModel], table: str, existing: dict[str, tuple[str, bool]]
) -> list[str] | None:
    """How to bring an existing table (`existing`: column -> (DuckDB type, nullable)) to its
    model: the ALTER statements adding its new nullable columns (none when it matches), or None
    when that is not enough (a column removed, retyped, or new and NOT NULL) and the table must
    be rebuilt."""
    wanted = model_shape(model)
    if any(name not in wanted or wanted[name] != shape for name, shape in existing.items()):
        return None
    added = [(name, shape) for name, shape in wanted.items() if name not in existing]
    if any(not nullable for _, (_, nullable) in added):
        return None
    return [f"ALTER TABLE {table} ADD COLUMN {name} {sql_type}" for name, (sql_type, _) in added]


def sync_tables(
    con: duckdb.DuckDBPyConnection, schema: str, models: dict[str, type[pa.DataFrameModel]]
) -> list[str]:
    """Create the tables of `schema` from their models, or bring those an older build left to
    them: a new nullable column is added in place, any other change drops the table and creates
    it empty. Returns the names of the tables dropped (their rows are gone: the caller re-derives
    them). Comments are written where they differ from the model's. Run it in a transaction:
    in a lake every statement outside one is a commit of its own."""
    existing: dict[str, dict[str, tuple[str, bool]]] = {}
    written: dict[str, dict[str | None, str | None]] = {}  # table -> column (None: the table)
    for table, column, sql_type, nullable, comment in con.execute(
        "SELECT table_name, column_name, data_type, is_nullable, comment FROM duckdb_columns() "
        "WHERE schema_name = ? AND database_name = current_database()",
        [schema],
    ).fetchall():
        existing.setdefault(table, {})[column] = (sql_type, bool(nullable))
        written.setdefault(table, {})[column] = comment
    for table, comment in con.execute(
        "SELECT table_name, comment FROM duckdb_tables() "
        "WHERE schema_name = ? AND database_name = current_database()",
        [schema],
    ).fetchall():
        written.setdefault(table, {})[None] = comment
    dropped = []
    for name, model in models.items():
        table = f"{schema}.{name}"
        steps = evolution(model, table, existing[name]) if name in existing else []
        if steps is None:
            con.execute(f"DROP TABLE {table}")
            dropped.append(name)
        for statement in steps or []:
            con.execute(statement)
        con.execute(create_table(model, table))
        current = {} if steps is None else written.get(name, {})
        for column, comment in wanted_comments(model).items():
            if current.get(column) != comment:
                con.execute(comment_statement(table, column, comment))
    return dropped


def wanted_comments(model: type[pa.DataFrameModel]) -> dict[str | None, str]:
    """The comments a model's table carries: its docstring's first paragraph (key None) and each
    described column's description."""
    wanted: dict[str | None, str] = {}
    doc = (model.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
    if doc:
        wanted[None] = doc
    for name, _type, _nullable, description in columns(model):
        if description:
            wanted[name] = description
    return wanted


def comment_statement(table: str, column: str | None, comment: str) -> str:
    target = f"TABLE {table}" if column is None else f"COLUMN {table}.{column}"
    return f"COMMENT ON {target} IS {quote_literal(comment)}"
