"""core.current_observations: kept by each build from what it adds, always equal to the current
observations computed afresh from the whole history (core.current_of)."""

import shutil
from datetime import UTC, datetime
from pathlib import Path

import duckdb
from test_build import AA_PAGE, PAGE_TIME, add_page, copy_of

from pipeline.dagster.envelope import execute
from pipeline.raw.snapshots import SnapshotStore
from pipeline.support.settings import Settings
from pipeline.warehouse.appended import mark_appends
from pipeline.warehouse.citations import CITATIONS, citation_counts
from pipeline.warehouse.connection import connect
from pipeline.warehouse.current import CURRENT, refresh_current
from pipeline.warehouse.measurement_sources import (
    COLUMNS,
    MEASUREMENT_SOURCES,
    refresh_measurement_sources,
)

AFRESH = "FROM core.current_of('core.observations')"


def mismatched(con: duckdb.DuckDBPyConnection, kept: str, expected: str) -> int:
    """Rows of the query `kept` not in `expected`, and of `expected` not in `kept`."""
    (count,) = con.execute(
        f"SELECT count(*) FROM (({kept} EXCEPT ALL ({expected})) UNION ALL "
        f"(({expected}) EXCEPT ALL {kept}))"
    ).fetchone()
    return count


def differences(con: duckdb.DuckDBPyConnection) -> int:
    return mismatched(con, f"FROM {CURRENT}", AFRESH)


def endpoint_differences(con: duckdb.DuckDBPyConnection) -> int:
    """Rows core.endpoints has or lacks against the endpoints of the rows kept."""
    columns = (
        "endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort, region"
    )
    named = (
        f"SELECT {columns} FROM core.observations UNION SELECT {columns} FROM core.endpoint_offers"
    )
    return mismatched(con, f"SELECT {columns} FROM core.endpoints", named)


def measurement_differences(con: duckdb.DuckDBPyConnection) -> int:
    """Rows core.measurement_sources has or lacks against the whole history's (none repeated)."""
    return mismatched(
        con,
        f"SELECT {COLUMNS} FROM {MEASUREMENT_SOURCES}",
        f"SELECT DISTINCT {COLUMNS} FROM core.observations",
    )


def citation_differences(con: duckdb.DuckDBPyConnection) -> int:
    """Rows of the kept citation counts not in a count of the whole history, and the reverse."""
    return mismatched(con, f"SELECT * FROM {CITATIONS}", citation_counts(None))


def withdraw_newest_and_build(settings: Settings, source_id: str) -> None:
    """Withdraw the source's newest snapshot (its figures are removed) and build."""
    store = SnapshotStore(settings.raw_dir)
    newest = store.list(source_id)[-1]
    store.withdraw(newest, reason="a test", when=datetime(2026, 11, 30, tzinfo=UTC))
    assert execute(settings).success


def test_a_build_keeps_the_current_observations_of_the_whole_history(built: Settings):
    with connect(built.database, read_only=True) as con:
        assert con.execute(f"SELECT count(*) FROM {CURRENT}").fetchone()[0] > 50
        assert differences(con) == 0
        assert citation_differences(con) == 0
        # and the figures the mart keeps are those computed afresh
        kept = con.execute("SELECT count(*) FROM mart.current_figures").fetchone()[0]
        same = con.execute(
            "SELECT count(*) FROM (FROM mart.current_figures INTERSECT ALL "
            "FROM mart.current_figures_at())"
        ).fetchone()[0]
        assert kept == same


def _copy_database(built: Settings, tmp_path: Path) -> duckdb.DuckDBPyConnection:
    path = tmp_path / "w.duckdb"
    shutil.copy(built.database, path)
    return duckdb.connect(str(path))


def test_merging_added_observations_is_what_the_whole_history_gives(built, tmp_path):
    """A newer figure of an endpoint replaces its current one, an older one and one of a worse
    tier do not, a new endpoint appears: the merge reads the current rows and the added ones."""
    con = _copy_database(built, tmp_path)
    current = con.execute(f"SELECT count(*) FROM {CURRENT}").fetchone()[0]
    history = con.execute("SELECT count(*) FROM core.observations").fetchone()[0]
    con.execute(
        """
        CREATE TEMP TABLE picked AS
        SELECT * FROM core.current_observations WHERE scope = 'live_median' AND tier IN ('T1', 'T2')
        ORDER BY observation_id LIMIT 3
        """
    )
    added = mark_appends(con, ["observations"])  # what is inserted from here on
    con.execute(
        """
        INSERT INTO core.observations BY NAME
        SELECT * REPLACE (observation_id || '-newer' AS observation_id, 'x/newer' AS snapshot_id,
                          observed_at + INTERVAL 1 DAY AS observed_at, value + 1 AS value)
        FROM picked
        UNION ALL BY NAME
        SELECT * REPLACE (observation_id || '-older' AS observation_id, 'x/older' AS snapshot_id,
                          observed_at - INTERVAL 1 DAY AS observed_at)
        FROM picked
        UNION ALL BY NAME
        SELECT * REPLACE (observation_id || '-worse' AS observation_id, 'x/worse' AS snapshot_id,
                          'T3' AS tier, observed_at + INTERVAL 2 DAY AS observed_at)
        FROM picked
        UNION ALL BY NAME
        SELECT * REPLACE (observation_id || '-new' AS observation_id, 'x/new' AS snapshot_id,
                          endpoint_id || '-elsewhere' AS endpoint_id)
        FROM picked
        """
    )
    considered = refresh_current(con, added)
    assert considered == current + 12 < history  # the current rows and the added ones only
    assert differences(con) == 0
    # the measurements' sources: a figure of another region is a new measurement of its source
    con.execute(
        "INSERT INTO core.observations BY NAME SELECT * REPLACE (observation_id || '-eu' AS "
        "observation_id, 'x/regional' AS snapshot_id, 'eu-west-1' AS region) FROM picked"
    )
    measurements = con.execute(f"SELECT count(*) FROM {MEASUREMENT_SOURCES}").fetchone()[0]
    refresh_measurement_sources(con, added)
    assert measurement_differences(con) == 0
    grown = con.execute(f"SELECT count(*) FROM {MEASUREMENT_SOURCES}").fetchone()[0]
    assert grown > measurements
    refresh_measurement_sources(con, added)  # twice is once
    assert con.execute(f"SELECT count(*) FROM {MEASUREMENT_SOURCES}").fetchone()[0] == grown
    ids = [r[0] for r in con.execute(f"SELECT observation_id FROM {CURRENT}").fetchall()]
    assert sum(i.endswith("-newer") for i in ids) == 3
    assert sum(i.endswith("-new") for i in ids) == 3
    assert not any(i.endswith(("-older", "-worse")) for i in ids)


def test_an_appending_build_merges_and_a_build_that_removes_computes_afresh(built, tmp_path):
    """The kept tables after a build that only adds (a newer figure, and a page naming an endpoint
    no snapshot named: core.endpoints adds it) and after one that removes (the newest snapshot
    withdrawn: each is computed afresh, and the endpoint only it named is gone)."""
    settings = copy_of(built, tmp_path)
    new = "groq/kimi-k2.6/unknown/standard/-"
    named = "SELECT count(*) FROM core.endpoints WHERE endpoint_id = ?"
    with connect(settings.database, read_only=True) as con:
        assert con.execute(named, [new]).fetchone() == (0,)
    groq = "<tr><td>Groq</td><td>410</td><td>0.5</td><td>—</td></tr></tbody>"
    page = AA_PAGE.format(label="Cerebras", speed="990").replace("</tbody>", groq)
    add_page(settings, "aa-kimi-k2-6", page, PAGE_TIME)
    outcome = execute(settings)
    assert outcome.success, outcome.failures
    with connect(settings.database, read_only=True) as con:
        assert differences(con) == 0
        assert measurement_differences(con) == 0
        assert endpoint_differences(con) == 0
        assert citation_differences(con) == 0
        assert con.execute(named, [new]).fetchone() == (1,)
        (value,) = con.execute(
            f"SELECT value FROM {CURRENT} WHERE endpoint_id LIKE 'cerebras/kimi-k2.6/%' "
            "AND metric = 'output_tokens_per_s' AND tier = 'T1'"
        ).fetchone()
        assert value == 990
    # the newest snapshot withdrawn: its observations are removed, the table computed afresh
    withdraw_newest_and_build(settings, "aa-kimi-k2-6")
    with connect(settings.database, read_only=True) as con:
        assert differences(con) == 0
        assert measurement_differences(con) == 0
        assert endpoint_differences(con) == 0
        assert citation_differences(con) == 0
        assert con.execute(named, [new]).fetchone() == (0,)
        values = con.execute(
            f"SELECT value FROM {CURRENT} WHERE endpoint_id LIKE 'cerebras/kimi-k2.6/%' "
            "AND metric = 'output_tokens_per_s' AND tier = 'T1'"
        ).fetchall()
        assert values and 990 not in [v for (v,) in values]


def test_figures_read_again_without_observations_are_counted_afresh(built, tmp_path, monkeypatch):
    """A newer parser of a format with model figures and no observations (Artificial Analysis's
    API): its snapshot is derived again, its rows removed and added, the labels unchanged, so the
    build appends; the citations, which count those rows too, are counted afresh, not added."""
    import dataclasses

    from pipeline.extract import PARSERS

    settings = copy_of(built, tmp_path)
    aa = "artificial_analysis_api"
    monkeypatch.setitem(PARSERS, aa, dataclasses.replace(PARSERS[aa], version="2"))
    outcome = execute(settings, force=True)
    assert outcome.success, outcome.failures
    with connect(settings.database, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM core.model_figures").fetchone()[0] > 0
        assert citation_differences(con) == 0
        assert differences(con) == 0
