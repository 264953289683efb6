"""Load the core tables: one transaction per build, from staging plus the reviewed metadata.

Python loads what comes from files (registry, snapshot records, entities, reviewed claims and
platforms, label resolutions); the SQL in `sql/core/` derives the rest (how each source's keys
map to endpoints, the figures compilations and claims repeat) and defines the views over the
facts (`core.observations` and the offers). The facts themselves stay where extraction put them,
in the shape their sources give them (staging): a build rewrites only these small tables and adds
the figures of the snapshots new to it (pipeline/warehouse/measured.py), so its cost follows
what is new, not the history. Readers see the previous build until the transaction commits: a
lake snapshot of a whole build.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

import duckdb
import pandas as pd
import pyarrow as pa

from pipeline.normalise.entities import Resolver
from pipeline.normalise.labels import LabelReport
from pipeline.raw.outcomes import OutcomeRecord
from pipeline.raw.snapshots import SnapshotMeta
from pipeline.schema.core import CORE_TABLES, KEPT_TABLES
from pipeline.schema.ddl import sync_tables
from pipeline.sources.formats import FORMATS
from pipeline.sources.registry import Source
from pipeline.sources.reviewed import Claim, Platform
from pipeline.support.duck import registered, transaction
from pipeline.support.faults import pause_point
from pipeline.support.figures import parse_count_statement, parse_figure
from pipeline.support.settings import SQL_DIR
from pipeline.warehouse.checks import CheckResult, run_checks
from pipeline.warehouse.lake import lake_snapshot
from pipeline.warehouse.marts import apply_marts
from pipeline.warehouse.measured import MeasuredRefresh, refresh_measured, remember_mappings
from pipeline.warehouse.sqlfiles import run_sql_file
from pipeline.warehouse.table_statistics import record_statistics

BUILD_STATE_DDL = """
CREATE TABLE IF NOT EXISTS core.build_state (
    as_of TIMESTAMPTZ,          -- the --as-of bound, null for "every snapshot"
    data_date TIMESTAMPTZ       -- newest snapshot retrieval the build used
)
"""


# The kept figures are brought up to date once the keys they join are made, before the cited
# figures (30_) read core.observations.
MEASURED_AFTER = "20_endpoint_keys.sql"


class CoreBuildError(RuntimeError):
    """The core tables cannot be built from what staging holds."""


@dataclass(frozen=True)
class WarehouseBuild:
    """What a build's transaction did: the rows of each core table, the checks it ran before
    committing, and the lake snapshot it committed (None: a check failed, nothing committed)."""

    counts: dict[str, int]
    checks: list[CheckResult]
    lake_snapshot: int | None
    measured: MeasuredRefresh | None = None

    @property
    def committed(self) -> bool:
        return self.lake_snapshot is not None


def ensure_core(con: duckdb.DuckDBPyConnection) -> None:
    """Create the core tables, or bring those of an older build to their models (`sync_tables`:
    each build fills them again anyway)."""
    with transaction(con):
        con.execute("CREATE SCHEMA IF NOT EXISTS core")
        sync_tables(con, "core", {**CORE_TABLES, **KEPT_TABLES})
        con.execute(BUILD_STATE_DDL)
    record_statistics(con, ("core", "history"))  # a table a build leaves empty, e.g. claims


def _replace(con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame) -> None:
    incoming = pa.Table.from_pandas(frame, preserve_index=False)
    # a column with no value at all (no label states a reasoning effort) is Arrow's null type,
    # which DuckDB makes INTEGER: text it is, or the SQL that reads it fails on its first string
    incoming = incoming.cast(
        pa.schema(
            field.with_type(pa.string()) if pa.types.is_null(field.type) else field
            for field in incoming.schema
        )
    )
    with registered(con, "incoming", incoming):
        con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM incoming")


def _insert(con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame) -> None:
    model = CORE_TABLES[table.split(".")[-1]]
    frame = model.validate(frame, lazy=True)
    with registered(con, "incoming", pa.Table.from_pandas(frame, preserve_index=False)):
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming")


def _sources_frame(sources: dict[str, Source], confirmed: dict[str, datetime]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "source_id": s.id,
                "kind": s.kind,
                "publisher": s.publisher,
                "title": s.title or None,
                "url": s.url,
                "tier": s.tier,
                "format": s.format,
                "cadence": s.cadence,
                "max_age_minutes": s.max_age // timedelta(minutes=1),
                "confirmed_at": pd.Timestamp(confirmed[s.id]) if s.id in confirmed else pd.NaT,
                "license": s.license,
                "terms_url": s.terms_url or None,
                "attribution_required": s.attribution_required,
            }
            for s in sources.values()
        ]
    ).astype({"attribution_required": "boolean"})


def _snapshot_columns(snapshots: list[SnapshotMeta], in_scope: set[str]) -> pa.Table:
    """The store's records as core.snapshots' columns, each marked whether the build reads it:
    built column by column (a dict per record took a second and a half at 110,000 snapshots).
    Not validated again here: the store checks every record field by field when it reads it."""
    documents = [m.reconstructed_from or {} for m in snapshots]
    return pa.table(
        {
            "snapshot_id": [m.snapshot_id for m in snapshots],
            "source_id": [m.source_id for m in snapshots],
            "url": [m.url for m in snapshots],
            "retrieved_at": pa.array([m.retrieved_at for m in snapshots], pa.string()),
            "sha256": [m.sha256 for m in snapshots],
            "size_bytes": pa.array([m.size for m in snapshots], pa.int64()),
            "content_type": [m.content_type for m in snapshots],
            "obtained_by": [m.obtained_by for m in snapshots],
            "note": pa.array([m.note or None for m in snapshots], pa.string()),
            "reconstructed_from": pa.array([d.get("title") for d in documents], pa.string()),
            "reconstructed_from_url": pa.array([d.get("url") for d in documents], pa.string()),
            "reconstructed_from_snapshot_id": pa.array(
                [d.get("snapshot") for d in documents], pa.string()
            ),
            "reconstructed_qualifier": pa.array(
                [d.get("qualifier") for d in documents], pa.string()
            ),
            "retrieved_at_bound": [getattr(m, "retrieved_at_bound", "exact") for m in snapshots],
            "in_scope": pa.array([m.snapshot_id in in_scope for m in snapshots], pa.bool_()),
        }
    )


def _outcomes_frame(outcomes: Sequence[OutcomeRecord]) -> pd.DataFrame:
    """Fetch outcomes as rows; log_line keeps each source's log order, which breaks ties between
    records stamped in the same second."""
    lines: dict[str, int] = {}
    rows = []
    for record in outcomes:
        lines[record.source_id] = lines.get(record.source_id, 0) + 1
        rows.append(
            {
                "source_id": record.source_id,
                "log_line": lines[record.source_id],
                "outcome": record.outcome,
                "detail": record.detail or None,
                "fetched_at": pd.Timestamp(record.when),
                "snapshot_id": f"{record.source_id}/{record.snapshot}" if record.snapshot else None,
                "http_status": record.http_status,
                "size_bytes": record.bytes,
                "attempts": record.attempts,
            }
        )
    return pd.DataFrame(rows, columns=list(CORE_TABLES["fetch_outcomes"].to_schema().columns))


def _unreviewed(labels: LabelReport, kind: str) -> dict[str, tuple[str, str, str | None]]:
    """Unreviewed entities of a kind: id -> (name, the sources naming it, family). The name is
    the one the most uses give (ties by text), so the same staging gives the same name."""
    table = labels.unreviewed
    table = table[table["kind"] == kind].sort_values(["uses", "name"], ascending=[False, True])
    entities: dict[str, tuple[str, set[str], str | None]] = {}
    for row in table.itertuples(index=False):
        family = getattr(row, "family", None)
        _name, sources, _family = entities.setdefault(
            row.entity_id, (str(row.name), set(), family if isinstance(family, str) else None)
        )
        sources.update(str(row.sources).split(", "))
    return {
        key: (name, ", ".join(sorted(s)), family) for key, (name, s, family) in entities.items()
    }


def _entity_frames(resolver: Resolver, labels: LabelReport) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Reviewed entities from the reviewed files, and the unreviewed ones the build's stable ids
    name (resolve_stable never gives a reviewed id to an unreviewed entity)."""
    providers = [
        {
            "provider_id": p.provider_id,
            "name": p.name,
            "country": p.country or None,
            "type": p.type,
            "website": p.website or None,
            "reviewed": True,
            "named_by": None,
        }
        for p in resolver.providers.values()
    ]
    providers += [
        {"provider_id": key, "name": name, "country": None, "type": None, "website": None}
        | {"reviewed": False, "named_by": sources}
        for key, (name, sources, _family) in sorted(_unreviewed(labels, "provider").items())
    ]
    models = [
        {"model_id": m.model_id, "name": m.name, "creator": m.creator or None}
        | {"family": resolver.family_of(m.model_id), "reviewed": True, "named_by": None}
        for m in resolver.models.values()
    ]
    models += [
        {"model_id": key, "name": name, "creator": None, "family": family}
        | {"reviewed": False, "named_by": sources}
        for key, (name, sources, family) in sorted(_unreviewed(labels, "model").items())
    ]
    return pd.DataFrame(providers), pd.DataFrame(models)


def _measurements_frame() -> pd.DataFrame:
    """How each format's figures were measured where its frames do not say (FormatSpec)."""
    rows = [
        {
            "format": spec.name,
            "method": spec.measurement.method,
            "statistic": spec.measurement.statistic,
            "window_minutes": spec.measurement.window_minutes,
        }
        for spec in FORMATS.values()
        if spec.measurement is not None
    ]
    return pd.DataFrame(rows).astype({"window_minutes": "Int64"})


def _claims_frame(claims: tuple[Claim, ...], resolver: Resolver) -> pd.DataFrame:
    rows = []
    for claim in claims:
        if claim.provider not in resolver.providers or claim.model not in resolver.models:
            raise CoreBuildError(
                f"claims.toml: claim {claim.id!r} names an unknown provider or model "
                f"({claim.provider!r}, {claim.model!r})"
            )
        figure = parse_figure(claim.figure)
        row = asdict(claim)
        del row["evidence"]
        row |= {
            "claim_id": row.pop("id"),
            "provider_id": row.pop("provider"),
            "model_id": row.pop("model"),
            "figure_text": row.pop("figure"),
            "value": figure.value,
            "qualifier": figure.qualifier,
        }
        rows.append(row)
    return pd.DataFrame(rows)


def _platform_frames(platforms: tuple[Platform, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows, mapping = [], []
    for platform in platforms:
        primary, _others = parse_count_statement(platform.stated_count)
        rows.append(
            {
                "platform_id": platform.id,
                "name": platform.name,
                "owner": platform.owner,
                "kind": platform.kind,
                "stated_count": platform.stated_count,
                "stated_count_value": primary.value if primary else None,
                "stated_count_qualifier": primary.qualifier if primary else None,
                "notable": " · ".join(platform.notable) or None,
                "doc_source_id": platform.doc_source,
                "catalogue_scope": platform.catalogue_scope or None,
            }
        )
        mapping += [
            {"source_id": s, "catalogue_provider_id": None, "platform_id": platform.id}
            for s in platform.catalogue_sources
        ]
        mapping += [
            {"source_id": source, "catalogue_provider_id": provider, "platform_id": platform.id}
            for source, _, provider in (p.partition("/") for p in platform.catalogue_providers)
        ]
    columns = ["source_id", "catalogue_provider_id", "platform_id"]
    return pd.DataFrame(rows), pd.DataFrame(mapping, columns=columns).astype("string")


def build_core(
    con: duckdb.DuckDBPyConnection,
    *,
    sources: dict[str, Source],
    snapshots: list[SnapshotMeta],
    in_scope: Sequence[str],
    confirmed: dict[str, datetime],
    resolver: Resolver,
    labels: LabelReport,
    claims: tuple[Claim, ...],
    platforms: tuple[Platform, ...],
    as_of: datetime | None,
    data_date: datetime | None,
    outcomes: Sequence[OutcomeRecord] = (),
    remake: bool = False,
) -> WarehouseBuild:
    """Load every core table and the mart in one transaction, check them (pipeline/warehouse/
    checks.py) and commit only when every check passed: a failed step or check leaves the
    warehouse as the previous build left it, and readers never see a half-built one.
    `snapshots` is the
    store's whole listing (core.snapshots); `in_scope` the ids the build may read (up to its
    --as-of bound, not damaged); of those, the ones whose extraction succeeded are read. The data
    date is the newest retrieval among them; `data_date` (the inventory's newest) stands in only
    when none was read. `outcomes`: the fetch logs' records, each source's oldest first. `remake`:
    make every measured figure again, keeping none (--force)."""
    ensure_core(con)
    extracted = {
        row[0]
        for row in con.execute(
            "SELECT snapshot_id FROM staging.extractions WHERE status = 'ok'"
        ).fetchall()
    }
    readable = set(in_scope) & extracted
    providers, models = _entity_frames(resolver, labels)
    platform_rows, platform_sources = _platform_frames(platforms)
    con.execute("BEGIN TRANSACTION")
    try:
        remembered = remember_mappings(con)
        for name in CORE_TABLES:
            con.execute(f"DELETE FROM core.{name}")
        _insert(con, "core.sources", _sources_frame(sources, confirmed))
        with registered(con, "listed", _snapshot_columns(snapshots, readable)):
            con.execute(
                "INSERT INTO core.snapshots BY NAME SELECT * REPLACE "
                "(CAST(retrieved_at AS TIMESTAMPTZ) AS retrieved_at) FROM listed"
            )
        _insert(con, "core.providers", providers)
        _insert(con, "core.models", models)
        _insert(con, "core.platforms", platform_rows)
        _insert(con, "core.fetch_outcomes", _outcomes_frame(outcomes))
        _replace(con, "core.labels", labels.resolutions)
        _replace(con, "core.reviewed_claims", _claims_frame(claims, resolver))
        _replace(con, "core.platform_sources", platform_sources)
        _replace(con, "core.format_measurements", _measurements_frame())
        pause_point("core-transaction")  # the old tables are deleted, the new not yet loaded
        measured = None
        for path in sorted((SQL_DIR / "core").glob("*.sql")):
            run_sql_file(con, path)
            if path.name == MEASURED_AFTER:
                measured = refresh_measured(con, remembered=remembered, remake=remake)
        if measured is None:
            raise CoreBuildError(f"sql/core/{MEASURED_AFTER} is missing")
        used = con.execute("SELECT max(retrieved_at) FROM core.build_scope").fetchone()
        data_date = used[0] if used and used[0] is not None else data_date
        con.execute("DELETE FROM core.build_state")
        con.execute("INSERT INTO core.build_state VALUES (?, ?)", [as_of, data_date])
        apply_marts(con)
        counts = {
            name: con.execute(f"SELECT count(*) FROM core.{name}").fetchone()[0]  # type: ignore[index]
            for name in CORE_TABLES
        }
        checks = run_checks(con)
        if not all(check.passed for check in checks):
            con.execute("ROLLBACK")
            return WarehouseBuild(counts, checks, None, measured)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return WarehouseBuild(counts, checks, lake_snapshot(con), measured)
