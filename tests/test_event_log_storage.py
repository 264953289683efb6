"""The instance's event log (pipeline/dagster/storage.py): Dagster's SQLite files, with kept
engines. What a build records must read back the same through Dagster's stock class, and the
engines it keeps must stay few, survive a wipe and not cross a fork."""

import dagster as dg
import pytest
from dagster._core.storage.event_log import SqliteEventLogStorage

import pipeline.dagster.storage as storage
from pipeline.dagster.runner import dagster_instance
from pipeline.dagster.storage import KEPT_ENGINES, PooledSqliteEventLogStorage
from pipeline.support.settings import Settings


def _report(instance: dg.DagsterInstance, name: str, sha: str) -> None:
    instance.report_runless_asset_event(
        dg.AssetMaterialization(asset_key=dg.AssetKey(name), metadata={"sha256": sha})
    )


def _latest_sha(instance: dg.DagsterInstance, name: str) -> str | None:
    event = instance.get_latest_materialization_event(dg.AssetKey(name))
    if event is None or event.asset_materialization is None:
        return None
    return event.asset_materialization.metadata["sha256"].value  # type: ignore[return-value]


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings.resolve(warehouse=tmp_path / "warehouse")


def test_the_instance_records_its_events_through_the_kept_engines(settings):
    with dagster_instance(settings) as instance:
        assert type(instance.event_log_storage) is PooledSqliteEventLogStorage
        for number in range(3):
            _report(instance, "raw_a", f"{number:064d}")
        assert _latest_sha(instance, "raw_a") == f"{2:064d}"
        # the index shard and the shard of runless events, each opened once and kept
        assert len(instance.event_log_storage._engines) == 2


def test_what_it_writes_reads_the_same_through_dagsters_own_class(settings):
    with dagster_instance(settings) as instance:
        _report(instance, "raw_a", "a" * 64)
    stock = SqliteEventLogStorage(str(settings.dagster_home / "history" / "runs"))
    records = stock.get_asset_records([dg.AssetKey("raw_a")])
    materialization = records[0].asset_entry.last_materialization
    assert materialization is not None
    assert materialization.asset_materialization.metadata["sha256"].value == "a" * 64


def test_it_reads_an_instance_the_stock_class_wrote(settings):
    home = settings.dagster_home
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")  # Dagster's defaults
    with dg.DagsterInstance.from_config(str(home)) as theirs:
        assert type(theirs.event_log_storage) is SqliteEventLogStorage
        _report(theirs, "raw_a", "a" * 64)
    (home / "dagster.yaml").unlink()  # speedbook writes its own
    with dagster_instance(settings) as ours:
        assert type(ours.event_log_storage) is PooledSqliteEventLogStorage
        assert _latest_sha(ours, "raw_a") == "a" * 64


def test_it_keeps_few_engines_however_many_runs_it_reads(settings):
    events = PooledSqliteEventLogStorage(str(settings.dagster_home / "history" / "runs"))
    for number in range(KEPT_ENGINES + 5):
        assert events.get_logs_for_run(f"run-{number}") == []  # opens that run's shard
    assert len(events._engines) == KEPT_ENGINES
    events.dispose()
    assert events._engines == {}


def test_a_wipe_closes_its_engines_and_the_storage_works_after_it(settings):
    with dagster_instance(settings) as instance:
        _report(instance, "raw_a", "a" * 64)
        instance.event_log_storage.wipe()
        assert _latest_sha(instance, "raw_a") is None
        _report(instance, "raw_a", "b" * 64)
        assert _latest_sha(instance, "raw_a") == "b" * 64


def test_a_forked_process_opens_engines_of_its_own(settings, monkeypatch):
    with dagster_instance(settings) as instance:
        _report(instance, "raw_a", "a" * 64)
        events = instance.event_log_storage
        before = list(events._engines.values())  # held, so that no id is reused
        monkeypatch.setattr(storage.os, "getpid", lambda: events._engines_pid + 1)
        assert _latest_sha(instance, "raw_a") == "a" * 64
        after = list(events._engines.values())
        assert after and not any(engine is old for engine in after for old in before)


def test_a_table_once_found_is_not_looked_up_again(settings, monkeypatch):
    with dagster_instance(settings) as instance:
        events = instance.event_log_storage
        assert events.has_table("asset_check_executions")
        assert not events.has_table("no_such_table")
        looked_up = []
        monkeypatch.setattr(
            SqliteEventLogStorage, "has_table", lambda self, name: looked_up.append(name)
        )
        assert events.has_table("asset_check_executions") and looked_up == []
        events.has_table("no_such_table")
        assert looked_up == ["no_such_table"]  # a table not found yet is asked again


def test_the_write_ahead_logs_stay_small_while_the_engines_are_kept(settings):
    """Kept connections keep each database's write-ahead log, which the stock class's closing
    connections removed: it is checkpointed every 256 pages and cut back to 1 MiB."""
    with dagster_instance(settings) as instance:
        for number in range(600):
            _report(instance, f"raw_{number % 50}", f"{number:064d}")
        logs = list((settings.dagster_home / "history" / "runs").glob("*.db-wal"))
        assert logs  # the logs are there, kept by open connections
        assert all(log.stat().st_size <= 2 * 1024 * 1024 for log in logs), [
            (log.name, log.stat().st_size) for log in logs
        ]
        assert _latest_sha(instance, "raw_49") == f"{599:064d}"


def test_schema_facts_once_found_are_not_asked_again(settings, monkeypatch):
    """An asset-record lookup asks five times for a column or a finished data migration; what
    was found stays found, what was not is asked again, and a wipe forgets both."""
    with dagster_instance(settings) as instance:
        _report(instance, "raw_a", "a" * 64)
        events = instance.event_log_storage
        assert instance.get_asset_records([dg.AssetKey("raw_a")])  # finds what the stock class does
        asked: list[str] = []
        stock_col, stock_index = (
            SqliteEventLogStorage.has_asset_key_col,
            SqliteEventLogStorage.has_secondary_index,
        )

        def column(self, name):
            asked.append(f"column {name}")
            return stock_col(self, name)

        def index(self, name):
            asked.append(f"index {name}")
            return stock_index(self, name)

        monkeypatch.setattr(SqliteEventLogStorage, "has_asset_key_col", column)
        monkeypatch.setattr(SqliteEventLogStorage, "has_secondary_index", index)
        assert events.has_asset_key_col("cached_status_data")
        assert not events.has_asset_key_col("no_such_column")
        assert not events.has_secondary_index("no_such_migration")
        assert asked == ["column no_such_column", "index no_such_migration"]
        records = instance.get_asset_records([dg.AssetKey("raw_a")])
        assert records[0].asset_entry.last_materialization is not None
        assert not [name for name in asked[2:] if "no_such" not in name]  # all remembered
        events.wipe()
        asked.clear()
        assert events.has_asset_key_col("cached_status_data")
        assert asked == ["column cached_status_data"]


def test_a_stamped_database_is_opened_without_loading_the_migration_scripts(settings, monkeypatch):
    """A new database is created and stamped with the newest revision as the stock class does it;
    one already stamped is opened without Alembic's scripts (which the stock class loads only to
    tell whether it was stamped) and records and reads events as before."""
    import dagster._core.storage.event_log.sqlite.sqlite_event_log as stock_module
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from dagster._core.storage.sql import get_alembic_config

    with dagster_instance(settings) as instance:
        _report(instance, "raw_a", "a" * 64)
        engine = instance.event_log_storage._engine("index")
        with engine.connect() as connection:
            stamped = MigrationContext.configure(connection).get_current_revision()
    head = ScriptDirectory.from_config(get_alembic_config(stock_module.__file__)).get_current_head()
    assert stamped == head

    loaded: list[str] = []
    real = stock_module.check_alembic_revision

    def counted(config, connection):
        loaded.append("scripts")
        return real(config, connection)

    monkeypatch.setattr(stock_module, "check_alembic_revision", counted)
    with dagster_instance(settings) as instance:
        _report(instance, "raw_a", "b" * 64)
        assert _latest_sha(instance, "raw_a") == "b" * 64
    assert loaded == []

    fresh = Settings.resolve(warehouse=settings.warehouse.parent / "other")
    with dagster_instance(fresh) as instance:
        _report(instance, "raw_a", "c" * 64)  # a new database: the stock method stamps it
        assert _latest_sha(instance, "raw_a") == "c" * 64
    assert loaded  # and asked Alembic for the newest revision to do it
