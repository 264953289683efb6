"""The lake's maintenance (pipeline/warehouse/maintenance.py, `speedbook maintain`): old
unreleased snapshots expire, a release's snapshot stays readable, and no fact is lost."""

from __future__ import annotations

from datetime import timedelta

import pytest
from conftest import UP_TO_CORE, failures, materialize

from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect
from pipeline.warehouse.maintenance import maintain

pytestmark = pytest.mark.e2e

FACTS = "SELECT count(*) FROM core.observations"


def test_old_snapshots_expire_but_facts_and_released_snapshots_stay(settings: Settings):
    for _ in range(2):  # two builds: two committed states
        result = materialize(settings, UP_TO_CORE)
        assert result.success, failures(result)
    with connect(settings) as con:
        facts = con.execute(FACTS).fetchone()
        snapshots = [
            r[0] for r in con.execute("SELECT snapshot_id FROM lake.snapshots()").fetchall()
        ]
        released = snapshots[len(snapshots) // 2]
        con.execute(
            "INSERT INTO history.releases BY NAME SELECT '2026.01.01' AS version, now() AS "
            "data_date, '2.0.0' AS schema_version, now() AS built_at, 'test' AS summary, "
            "MAP {} AS content_hashes, [] AS snapshots, 0 AS snapshot_count, 0 AS providers, "
            "0 AS figures, ? AS lake_snapshot",
            [released],
        )
        done = maintain(con, retention=timedelta(0))
        left = [r[0] for r in con.execute("SELECT snapshot_id FROM lake.snapshots()").fetchall()]
        assert con.execute(FACTS).fetchone() == facts
    assert done.snapshots_expired > 0
    assert released in left and max(snapshots) < max(left)
    assert len(left) < len(snapshots)


def test_the_command_takes_the_lock_and_refuses_bad_input(settings: Settings, cli):
    result = materialize(settings, UP_TO_CORE)
    assert result.success, failures(result)
    done = cli("maintain", "--retention-days", "1")
    assert done.status == 0, done.err
    assert "snapshots expired" in done.out
    for bad in ("0", "-3", "soon"):
        refused = cli("maintain", "--retention-days", bad)
        assert refused.status == 2 and "--retention-days" in refused.err
