"""--as-of bounds every core table derived from snapshots, not only core.observations: a build
as of a date must not carry evidence, catalogue entries or figures retrieved after it. Its core
goes to a database of its own (pipeline/warehouse/connection.py, attach_as_of); the lake's stays
the last full build's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import duckdb
from conftest import UP_TO_CORE, failures, materialize
from test_build import copy_of

from pipeline.support.duck import quote_literal
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import AS_OF_DATABASE, SCRATCH_ALIAS, connect

BOUND = datetime(2026, 6, 30, 23, 59, 59, tzinfo=UTC)  # what `--as-of 2026-06-30` means
TABLES = ("observations", "claim_evidence", "platform_models", "context_figures")


@contextmanager
def _as_of_core(settings: Settings) -> Iterator[duckdb.DuckDBPyConnection]:
    """The --as-of build's database, beside the lake its staging views read, as its default."""
    with connect(settings, read_only=True) as con:
        path = quote_literal(str(settings.state_dir / AS_OF_DATABASE))
        con.execute(f"ATTACH {path} AS {SCRATCH_ALIAS} (READ_ONLY)")
        con.execute(f"USE {SCRATCH_ALIAS}")
        yield con


def _late_rows(settings: Settings, *, as_of: bool = False) -> dict[str, int]:
    """Rows per table whose snapshot was retrieved after BOUND: in the lake, or in the --as-of
    build's database."""
    with _as_of_core(settings) if as_of else connect(settings, read_only=True) as con:
        return {
            table: con.execute(
                f"SELECT count(*) FROM core.{table} AS t "
                "JOIN core.snapshots AS s USING (snapshot_id) WHERE s.retrieved_at > ?",
                [BOUND],
            ).fetchone()[0]
            for table in TABLES
        }


def test_as_of_bounds_every_core_table_after_a_full_build(built, tmp_path):
    settings = copy_of(built, tmp_path)
    # the full build has rows past the bound in every table, so the check below means something
    assert all(_late_rows(settings).values()), _late_rows(settings)
    result = materialize(settings, UP_TO_CORE, as_of=BOUND)
    assert result.success, failures(result)
    assert _late_rows(settings, as_of=True) == dict.fromkeys(TABLES, 0)
    assert all(_late_rows(settings).values())  # the lake's core is still the full build's
    with _as_of_core(settings) as con:
        # a claim is listed only while some evidence within the bound carries it
        unsupported = con.execute(
            "SELECT count(*) FROM core.claims "
            "WHERE claim_id NOT IN (SELECT claim_id FROM core.claim_evidence)"
        ).fetchone()[0]
    assert unsupported == 0
