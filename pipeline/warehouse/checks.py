"""The checks a build's core and mart must pass before they are committed: every core table fits
its model, every figure traces to a stored snapshot, no two of a source's endpoints share an id
and every id is one the exports accept, one headline per provider. A check that fails leaves the
warehouse as the last build left it (pipeline/warehouse/core.py rolls back)."""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from pipeline.schema.core import CORE_TABLES
from pipeline.schema.vocabulary import ENDPOINT_ID_PATTERN
from pipeline.warehouse.validate import validate_table


@dataclass(frozen=True)
class CheckResult:
    relation: str  # core.<table>, core.observations, core.endpoints, mart
    name: str
    passed: bool
    description: str = ""
    metadata: dict[str, object] = field(default_factory=dict)


TRACEABILITY = """
SELECT count(*) FROM core.snapshots AS s
LEFT JOIN core.sources AS src USING (source_id)
WHERE s.in_scope AND (src.source_id IS NULL OR src.tier IS NULL OR s.retrieved_at IS NULL
                      OR NOT regexp_matches(s.url, '^https?://.+'))
"""
# Source keys of one frame that share an endpoint id: two of the source's endpoints merged.
SHARED_IDS = """
SELECT frame, endpoint_id, count(*) AS keys
FROM (SELECT DISTINCT frame, model_label, endpoint_label, endpoint_id FROM core.endpoint_keys)
GROUP BY frame, endpoint_id HAVING count(*) > 1
ORDER BY frame, endpoint_id
"""


def table_checks(con: duckdb.DuckDBPyConnection) -> list[CheckResult]:
    results = []
    for name, model in CORE_TABLES.items():
        checked, failures = validate_table(con, model, f"core.{name}")
        results.append(
            CheckResult(
                f"core.{name}",
                "matches_schema",
                failures is None,
                "" if failures is None else failures.to_string(max_colwidth=80),
                {"rows_checked": checked},
            )
        )
    return results


def figure_checks(con: duckdb.DuckDBPyConnection) -> list[CheckResult]:
    untraceable = con.execute(TRACEABILITY).fetchone()[0]  # type: ignore[index]
    shared = con.execute(SHARED_IDS).fetchall()
    invalid = con.execute(
        "SELECT endpoint_id FROM core.endpoints WHERE NOT regexp_matches(endpoint_id, ?) "
        "ORDER BY endpoint_id LIMIT 20",
        [ENDPOINT_ID_PATTERN],
    ).fetchall()
    headlines = con.execute(
        "SELECT provider_id FROM mart.provider_headline GROUP BY provider_id HAVING count(*) > 1"
    ).fetchall()
    return [
        CheckResult(
            "core.observations",
            "traceable_to_snapshot",
            untraceable == 0,
            f"{untraceable} snapshot(s) in scope without a registered source, tier, date or "
            "http(s) URL"
            if untraceable
            else "",
            {"untraceable": untraceable},
        ),
        CheckResult(
            "core.endpoints",
            "one_id_per_endpoint",
            not shared and not invalid,
            "; ".join(
                [f"{frame}: {keys} keys share {endpoint}" for frame, endpoint, keys in shared[:10]]
                + [f"not an endpoint id: {row[0]!r}" for row in invalid]
            ),
            {"shared": len(shared), "invalid": len(invalid)},
        ),
        CheckResult(
            "mart",
            "one_headline_per_provider",
            not headlines,
            ", ".join(row[0] for row in headlines),
        ),
    ]


def run_checks(con: duckdb.DuckDBPyConnection) -> list[CheckResult]:
    return [*table_checks(con), *figure_checks(con)]
