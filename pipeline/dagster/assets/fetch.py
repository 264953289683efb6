"""The fetch at the head of a scheduled run: `raw_fetch` brings the due sources of one cadence up
to date (pipeline/raw/due.py says which; pipeline/fetch does it), then the build reads them.

It is in the `refresh_<cadence>` jobs only (pipeline/dagster/schedules.py), never in the `build`
job: `speedbook build` never fetches. `raw_inventory` depends on it (a dependency, not an input),
so in a refresh run the build starts after the fetch. A source that fails to fetch is that
source's outcome (in its fetch log, state/fetch/<source_id>.jsonl, and in this step's
metadata): the step succeeds and the build goes on with the source's last good snapshot; the
next tick fetches it again.
"""

from datetime import UTC, datetime

import dagster as dg
from pydantic import Field

from pipeline.dagster.resources import SpeedbookResource
from pipeline.raw.due import due_sources
from pipeline.sources.registry import RegistryError
from pipeline.support.progress import report, warn

RAW_FETCH = dg.AssetKey("raw_fetch")
ROWS_SHOWN = 50  # outcomes listed in the step's metadata; the logs have every one


class FetchConfig(dg.Config):
    cadence: str = Field(
        default="",
        description="fetch the due sources of this cadence (a key of the registry's "
        "[cadences]); empty: of every cadence that has a cron string",
    )


def _table(rows: list[tuple[str, str]]) -> str:
    lines = ["| source | outcome |", "|---|---|"]
    lines += [
        f"| {source} | {outcome.replace('|', '/')} |" for source, outcome in rows[:ROWS_SHOWN]
    ]
    if len(rows) > ROWS_SHOWN:
        lines.append(f"| ... | and {len(rows) - ROWS_SHOWN} more |")
    return "\n".join(lines)


@dg.asset(
    key=RAW_FETCH,
    group_name="raw",
    kinds={"python"},
    description="Fetches the sources of one cadence that are due (they would be stale before "
    "the cadence's next tick), storing what is new as snapshots; a failed source keeps its "
    "last good snapshot and is due again at the next tick. Only the refresh jobs run it",
)
def raw_fetch(config: FetchConfig, speedbook: SpeedbookResource) -> dg.MaterializeResult:
    from pipeline.fetch import FetchError, fetch_sources  # httpx only when fetching

    settings = speedbook.settings
    cadence = config.cadence or None
    try:
        plan = due_sources(settings, datetime.now(UTC), cadence)
        fetched = fetch_sources(settings, plan.source_ids) if plan.due else None
    except (RegistryError, FetchError) as error:
        raise dg.Failure(str(error)) from None
    report(
        f"fetch ({cadence or 'every cadence'}): {len(plan.due)} source(s) due, "
        f"{len(plan.not_due)} not due yet"
    )
    records = fetched.records if fetched else ()
    for record in records:
        if record.failed:
            warn(
                f"fetch failed: {record.source_id}: {record.detail} (it is read from its last "
                "good snapshot and fetched again at the next tick)"
            )
    if fetched:
        report(f"fetch: {fetched.summary()}")
    counts = fetched.counts() if fetched else {}
    return dg.MaterializeResult(
        metadata={
            "cadence": cadence or "every cadence",
            "due": len(plan.due),
            "not_due": len(plan.not_due),
            **{f"outcome_{name}": count for name, count in counts.items()},
            "outcomes": dg.MetadataValue.md(
                _table([(record.source_id, record.label) for record in records])
                if records
                else "nothing was due"
            ),
        }
    )
