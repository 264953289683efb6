"""Load the core tables: one transaction per build, from staging plus the reviewed metadata.

Python loads what comes from files (registry, snapshots, entities, reviewed claims and
platforms, label resolutions); the SQL in `sql/core/` derives the rest (endpoints, observations,
claims, catalogue entries). Staging keeps every extracted snapshot, so no build ever loses a past
observation and the same inputs give the same tables: the small tables are rebuilt whole each
build, and observations are appended for new snapshots while what they derive from is unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

import duckdb
import pandas as pd
import pyarrow as pa

from pipeline.extract.staging import scope_build
from pipeline.normalise.entities import Resolver
from pipeline.normalise.labels import LabelReport
from pipeline.normalise.numbers import parse_count_statement, parse_figure
from pipeline.normalise.reviewed import Claim, Platform
from pipeline.raw.outcomes import OutcomeRecord
from pipeline.raw.snapshots import SnapshotMeta
from pipeline.schema.core import CORE_TABLES
from pipeline.schema.ddl import sync_tables
from pipeline.schema.growing import PER_SNAPSHOT
from pipeline.sources.formats import FORMATS
from pipeline.sources.registry import Source
from pipeline.support.bulk import bulk_objects
from pipeline.support.faults import pause_point
from pipeline.support.settings import SQL_DIR
from pipeline.support.sizes import runs
from pipeline.warehouse.appended import mark_appends, wrong_retrieval_times
from pipeline.warehouse.citations import ensure_citations, refresh_citations
from pipeline.warehouse.connection import registered
from pipeline.warehouse.current import ensure_current, refresh_current
from pipeline.warehouse.measurement_sources import (
    ensure_measurement_sources,
    refresh_measurement_sources,
)
from pipeline.warehouse.partitions import refresh_partitions

BUILD_STATE_DDL = """
CREATE TABLE IF NOT EXISTS core.build_state (
    as_of TIMESTAMPTZ,          -- the --as-of bound, null for "every snapshot"
    data_date TIMESTAMPTZ,      -- newest snapshot retrieval the build used
    fingerprint VARCHAR         -- hash of what the core tables were derived from
)
"""


MACROS_SQL = "00_macros.sql"
# The core SQL that derives each row from its own snapshot alone, run a batch of the snapshots in
# scope at a time (the temp table derive_batch), in the order of their ids: at 90 days of polls
# one join of every staged figure with its endpoint spilled gigabytes to disk. A batch holds at
# most DERIVE_BATCH_BYTES of snapshots as received (or one larger snapshot).
BATCHED_SQL = ("10_measured_observations.sql", "15_offers_and_model_figures.sql")
DERIVE_BATCH_BYTES = 512 * 1024 * 1024


class CoreBuildError(RuntimeError):
    """The core tables cannot be built from what staging holds."""


def ensure_core(con: duckdb.DuckDBPyConnection) -> None:
    """Create the core tables, or bring those of an older build to their models
    (`sync_tables`). The tables not derived per snapshot are refilled by each build anyway;
    when one derived per snapshot had to be rebuilt empty, the build state is forgotten, so
    that the next build derives everything again instead of appending to nothing."""
    con.execute("CREATE SCHEMA IF NOT EXISTS core")
    dropped = sync_tables(con, "core", CORE_TABLES)
    con.execute(BUILD_STATE_DDL)
    # the shared rules (endpoint ids, comparable endpoints) the mart uses too
    con.execute((SQL_DIR / "core" / MACROS_SQL).read_text(encoding="utf-8"))
    if set(dropped) & set(PER_SNAPSHOT):
        con.execute("DELETE FROM core.build_state")
    ensure_current(con)
    ensure_measurement_sources(con)
    ensure_citations(con)


def _replace(con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame) -> None:
    with registered(con, "incoming", pa.Table.from_pandas(frame, preserve_index=False)):
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
            }
            for s in sources.values()
        ]
    )


def _snapshot_columns(snapshots: list[SnapshotMeta]) -> pa.Table:
    """The records as core.snapshots' columns (retrieved_at as the record's text), built column by
    column (a dict per record took a second and a half at 110,000 snapshots), with the
    collector paused: a dozen values of every record."""
    with bulk_objects():
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
            }
        )


def _snapshots_frame(columns: pa.Table) -> pd.DataFrame:
    """`_snapshot_columns` as the frame core.snapshots' model validates, its times parsed."""
    frame = columns.to_pandas()
    frame["retrieved_at"] = pd.to_datetime(frame["retrieved_at"], utc=True, format="ISO8601")
    return frame[list(CORE_TABLES["snapshots"].to_schema().columns)]


def _load_snapshots(con: duckdb.DuckDBPyConnection, snapshots: list[SnapshotMeta]) -> int:
    """Make core.snapshots hold exactly these records: insert those it lacks or holds with other
    values, delete those no longer listed; return how many were inserted. The compare is
    DuckDB's: deleted and loaded whole, a year of pages' 117,000 records cost about a second at
    every build (the frame, its validation, the insert and the commit of them all)."""
    columns = _snapshot_columns(snapshots)
    listed = columns.append_column("row_number", pa.array(range(len(snapshots)), pa.int64()))
    # every column null-safely; retrieved_at, text in the records, as the time it says
    same = " AND ".join(
        f"s.{name} IS NOT DISTINCT FROM l.{name}"
        for name in columns.column_names
        if name not in ("snapshot_id", "retrieved_at")
    )
    with registered(con, "listed_snapshots", listed):
        changed = [
            row[0]
            for row in con.execute(
                "SELECT l.row_number FROM listed_snapshots AS l "
                "LEFT JOIN core.snapshots AS s USING (snapshot_id) "
                f"WHERE s.snapshot_id IS NULL OR NOT ({same} "
                "AND s.retrieved_at IS NOT DISTINCT FROM CAST(l.retrieved_at AS TIMESTAMPTZ)) "
                "ORDER BY l.row_number"
            ).fetchall()
        ]
        con.execute(
            "DELETE FROM core.snapshots WHERE snapshot_id NOT IN "
            "(SELECT snapshot_id FROM listed_snapshots) "
            "OR snapshot_id IN (SELECT snapshot_id FROM listed_snapshots "
            "WHERE row_number IN (SELECT unnest(?::BIGINT[])))",
            [changed],
        )
    _insert(con, "core.snapshots", _snapshots_frame(columns.take(pa.array(changed, pa.int64()))))
    return len(changed)


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


def _unreviewed(labels: LabelReport, kind: str) -> dict[str, tuple[str, str]]:
    """Unreviewed entities of a kind: id -> (name, the sources naming it). The name is the one
    the most uses give (ties by text), so the same staging gives the same name."""
    table = labels.unreviewed
    table = table[table["kind"] == kind].sort_values(["uses", "name"], ascending=[False, True])
    entities: dict[str, tuple[str, set[str]]] = {}
    for row in table.itertuples(index=False):
        _name, sources = entities.setdefault(row.entity_id, (str(row.name), set()))
        sources.update(str(row.sources).split(", "))
    return {key: (name, ", ".join(sorted(s))) for key, (name, s) in entities.items()}


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
        for key, (name, sources) in sorted(_unreviewed(labels, "provider").items())
    ]
    models = [
        {"model_id": m.model_id, "name": m.name, "creator": m.creator or None}
        | {"reviewed": True, "named_by": None}
        for m in resolver.models.values()
    ]
    models += [
        {"model_id": key, "name": name, "creator": None, "reviewed": False, "named_by": sources}
        for key, (name, sources) in sorted(_unreviewed(labels, "model").items())
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
) -> CoreResult:
    """Load every core table in one transaction. Nothing is committed if any step fails, so the
    warehouse keeps the previous build. `outcomes` are the fetch logs' records, each source's
    oldest first (they feed core.fetch_outcomes and mart.source_health). `snapshots` is the
    whole history (core.snapshots); `in_scope` the ids the build reads (up to its --as-of bound),
    the only ones with observations. The data date is the newest of those that were read
    successfully; `data_date` (the inventory's newest) stands in only when none was.

    Observations, the one large table, are appended: when what they are derived from (label
    resolutions, reviewed claims, source tiers, the core SQL) is unchanged since the last build,
    only the observations of snapshots not loaded yet, or read again by a newer parser, are added,
    and those of snapshots no longer usable (damaged) are dropped. Anything else changed: every
    observation is derived again. core.snapshots gains the records it lacks and loses those no
    longer listed (`_load_snapshots`). The other tables are small and always rebuilt whole."""
    ensure_core(con)
    providers, models = _entity_frames(resolver, labels)
    platform_rows, platform_sources = _platform_frames(platforms)
    sources_frame = _sources_frame(sources, confirmed)
    claims_frame = _claims_frame(claims, resolver)
    # what a label resolves to matters; how often it is used (sources, uses) does not
    resolved = labels.resolutions.drop(columns=["sources", "uses", "suggestions"])
    measurements = _measurements_frame()
    key = derivation_key(
        resolved, claims_frame, sources_frame.drop(columns=["confirmed_at"]), measurements
    )
    scope_build(con, in_scope)
    previous = con.execute("SELECT fingerprint FROM core.build_state").fetchone()
    append = previous is not None and previous[0] == key
    # rows an appending build dropped, per table (their snapshots unusable or read again)
    removed: dict[str, int] = {}
    con.execute("BEGIN TRANSACTION")
    try:
        # staging.derived_snapshots: what the loaded observations were derived from
        con.execute("CREATE TABLE IF NOT EXISTS staging.derived_snapshots (snapshot_id VARCHAR)")
        if append:
            con.execute(
                "CREATE OR REPLACE TEMP TABLE derived_before AS "
                "SELECT snapshot_id FROM staging.derived_snapshots"
            )
            # core.extractions still holds what the loaded observations were read with: a
            # snapshot a newer parser read again is derived again, like an unloaded one
            con.execute(
                "DELETE FROM staging.derived_snapshots WHERE snapshot_id IN "
                "(SELECT s.snapshot_id FROM staging.extractions s "
                "JOIN core.extractions c USING (snapshot_id) "
                "WHERE s.parser_version <> c.parser_version)"
            )
            con.execute(
                "CREATE OR REPLACE TABLE staging.observation_scope AS "
                "SELECT snapshot_id FROM build_scope "
                "WHERE snapshot_id NOT IN (SELECT snapshot_id FROM staging.derived_snapshots)"
            )
            removed = _drop_rows_out_of_scope(con)
        else:
            con.execute(
                "CREATE OR REPLACE TABLE staging.observation_scope AS "
                "SELECT snapshot_id FROM build_scope"
            )
            for name in PER_SNAPSHOT:
                con.execute(f"DELETE FROM core.{name}")
        # from here on the per-snapshot tables are only inserted into: the rows past these
        # marks are those this build adds (appended.py)
        marks = mark_appends(con, PER_SNAPSHOT) if append else None
        # core.endpoints names the endpoints of the rows kept: a build that only added rows
        # keeps it and adds what those name (sql/core/17_endpoints.sql reads the endpoint_*
        # views); any other build fills it again from every row, as does one that finds it
        # empty (just made)
        keep_endpoints = (
            marks is not None
            and not removed.get("observations")
            and not removed.get("endpoint_offers")
            and con.execute("SELECT count(*) FROM core.endpoints").fetchone() != (0,)
        )
        for table in ("observations", "endpoint_offers"):
            rows = marks.rows(table) if keep_endpoints and marks else f"core.{table}"
            con.execute(f"CREATE OR REPLACE TEMP VIEW endpoint_{table} AS FROM {rows}")
        for name in CORE_TABLES:
            if name in (*PER_SNAPSHOT, "snapshots") or (keep_endpoints and name == "endpoints"):
                continue
            con.execute(f"DELETE FROM core.{name}")
        _insert(con, "core.sources", sources_frame)
        _load_snapshots(con, snapshots)
        _insert(con, "core.providers", providers)
        _insert(con, "core.models", models)
        _insert(con, "core.platforms", platform_rows)
        _insert(con, "core.fetch_outcomes", _outcomes_frame(outcomes))
        _replace(con, "staging.label_resolution", labels.resolutions)
        _replace(con, "staging.reviewed_claims", claims_frame)
        _replace(con, "staging.platform_sources", platform_sources)
        _replace(con, "staging.format_measurements", measurements)
        appended = [
            row[0]
            for row in con.execute("SELECT snapshot_id FROM staging.observation_scope").fetchall()
        ]
        pause_point("core-transaction")  # the old tables are deleted, the new not yet loaded
        batches = _derive_batches(con)
        for path in sorted((SQL_DIR / "core").glob("*.sql")):
            sql = path.read_text(encoding="utf-8")
            for batch in batches if path.name in BATCHED_SQL else [None]:
                if batch is not None:
                    con.execute(
                        "CREATE OR REPLACE TEMP TABLE derive_batch AS "
                        "SELECT unnest(?::VARCHAR[]) AS snapshot_id",
                        [batch],
                    )
                con.execute(sql)
        con.execute("DROP TABLE IF EXISTS derive_batch")
        wrong = wrong_retrieval_times(con, marks) if marks is not None else {}
        if wrong:
            raise CoreBuildError(
                "rows added without their snapshot's retrieved_at (the core SQL must take it "
                f"from core.snapshots): {wrong}"
            )
        # a damaged or unreadable snapshot is not used, so it cannot date the build either
        used = con.execute(
            "SELECT max(retrieved_at) FROM core.snapshots SEMI JOIN build_scope USING (snapshot_id)"
        ).fetchone()
        data_date = used[0] if used and used[0] is not None else data_date
        con.execute(
            "CREATE OR REPLACE TABLE staging.derived_snapshots AS "
            "SELECT snapshot_id FROM build_scope"
        )
        con.execute("DELETE FROM core.build_state")
        con.execute("INSERT INTO core.build_state VALUES (?, ?, ?)", [as_of, data_date, key])
        added = marks if not removed.get("observations") else None
        refresh_current(con, added)
        refresh_measurement_sources(con, added)
        # the citations count every per-snapshot table: any row removed counts them afresh
        refresh_citations(con, marks if not any(removed.values()) else None)
        refresh_partitions(con, marks, {name for name, rows in removed.items() if rows})
        counts = {
            name: con.execute(f"SELECT count(*) FROM core.{name}").fetchone()[0]  # type: ignore[index]
            for name in CORE_TABLES
        }
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return CoreResult(counts, appended if append else None)


def _derive_batches(con: duckdb.DuckDBPyConnection) -> list[list[str]]:
    """The snapshots of staging.observation_scope in batches of about DERIVE_BATCH_BYTES as
    received, by id; one empty batch when there are none (the SQL still runs, adding nothing)."""
    sizes = con.execute(
        "SELECT snapshot_id, size_bytes FROM core.snapshots "
        "SEMI JOIN staging.observation_scope USING (snapshot_id) ORDER BY snapshot_id"
    ).fetchall()
    batches = runs(sizes, lambda snapshot: snapshot[1], DERIVE_BATCH_BYTES)
    return [[snapshot_id for snapshot_id, _size in batch] for batch in batches] or [[]]


def _drop_rows_out_of_scope(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Delete, in an appending build, the rows of the per-snapshot tables whose snapshot left the
    build's scope (damaged, withdrawn, past --as-of) or is derived again; return the rows deleted
    per table. Every such row belongs to the last build's scope (`derived_before`, what
    staging.derived_snapshots held: each build sets it to its scope, in the transaction that loads
    the rows), so the snapshots to drop are found among those few thousand ids, not by reading
    the snapshot id of every row (an anti-join of 87 million observations took 0.6-1.2 s at every
    build). A warehouse that kept no scope yet is searched row by row."""
    kept_scope = con.execute("SELECT count(*) FROM derived_before").fetchone() != (0,)
    if kept_scope:
        gone = "SELECT snapshot_id FROM derived_before EXCEPT SELECT snapshot_id FROM build_scope"
        again = (
            "SELECT snapshot_id FROM staging.observation_scope "
            "INTERSECT SELECT snapshot_id FROM derived_before"
        )
        filters = []
        for table, query in (("gone_snapshots", gone), ("again_snapshots", again)):
            con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {query}")
            if con.execute(f"SELECT count(*) FROM {table}").fetchone() != (0,):
                filters.append(f"snapshot_id IN (SELECT snapshot_id FROM {table})")
    else:
        # two deletes, not one with OR: each stays an anti- or semi-join
        filters = [
            "snapshot_id NOT IN (SELECT snapshot_id FROM build_scope)",
            "snapshot_id IN (SELECT snapshot_id FROM staging.observation_scope)",
        ]
    removed: dict[str, int] = {}
    for name in PER_SNAPSHOT:
        removed[name] = sum(
            con.execute(f"DELETE FROM core.{name} WHERE {where}").fetchall()[0][0]
            for where in filters
        )
    return removed


@dataclass(frozen=True)
class CoreResult:
    counts: dict[str, int]
    appended: list[str] | None  # snapshots whose observations were added; None: all rebuilt


def derivation_key(*frames: pd.DataFrame) -> str:
    """Hash of what observations are derived from, besides the staged rows themselves."""
    digest = hashlib.sha256()
    for frame in frames:
        digest.update(frame.to_csv(index=False).encode("utf-8"))
    for path in sorted((SQL_DIR / "core").glob("*.sql")):
        digest.update(path.read_bytes())
    return digest.hexdigest()
