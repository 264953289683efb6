"""Our SQL form of the Pandera checks against Pandera's own DuckDB backend (`pandera.ibis`), on
the same rows: the bundled OpenRouter website statistics (`openrouter_frontend_stats`, parsed
from the bundled snapshots by the pipeline's parser) repeated to --rows rows in DuckDB, each
repetition its own snapshot id so the model's key stays unique. Then one bad row (a negative
time to first token) is put in, and both must catch it.

- ours: `pipeline.extract.base.passes_in_sql`, the row and frame checks of the model as SQL
  (pipeline/schema/sql_checks.py) and its key, on the Arrow table;
- pandera.ibis: the same model's column checks (ge, le, isin, str_matches, str_length; the same
  Check objects) and its key as a `pandera.ibis.DataFrameSchema`, validated lazily on the table
  as an Ibis expression over DuckDB. The model's frame-wide checks are pandas functions with an
  SQL rule beside them; pandera.ibis cannot run the pandas function, so they are left out there
  (it does less work than ours, not more).

Ibis is not a dependency of the project. Run it from a separate virtual environment:

    python3 -m venv /tmp/ibisvenv
    /tmp/ibisvenv/bin/pip install -c constraints.txt -e . 'pandera[ibis]' 'ibis-framework[duckdb]'
    /tmp/ibisvenv/bin/python -m benchmarks.pandera_ibis --rows 1000000
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import duckdb
import pyarrow

from pipeline.extract import PARSERS, SnapshotInput
from pipeline.extract.base import deferred, passes_in_sql, staged_table
from pipeline.raw.store import open_store
from pipeline.schema.sql_checks import unique_key
from pipeline.schema.staging import FRAMES
from pipeline.sources.registry import load_registry
from pipeline.sources.reviewed import ReviewedFiles
from pipeline.support.settings import BUNDLED_METADATA, Settings

FRAME = "openrouter_frontend_stats"
SOURCE = "openrouter-frontend-stats"


def bundled_rows() -> pyarrow.Table:
    """The frame's rows from every bundled snapshot of the source, as the build stages them."""
    settings = Settings.resolve()
    sources = load_registry(BUNDLED_METADATA / "sources.toml")
    reviewed = ReviewedFiles.load(BUNDLED_METADATA)
    store = open_store(settings.snapshot_store)
    parts = []
    with deferred():  # the parser's rows as Records, staged as the build stages them
        for meta in store.list(SOURCE):
            snapshot = SnapshotInput(meta, sources[SOURCE], store.read(meta), reviewed)
            parts.append(PARSERS[sources[SOURCE].format].parse(snapshot)[FRAME])
    return staged_table(FRAME, parts)


def repeated(con: duckdb.DuckDBPyConnection, rows: pyarrow.Table, target: int) -> pyarrow.Table:
    """`rows` repeated to `target` rows, each copy under its own snapshot id."""
    con.register("seed", rows)
    copies = -(-target // rows.num_rows)
    columns = [f'"{name}"' for name in rows.column_names if name != "snapshot_id"]
    table = con.execute(
        f"SELECT snapshot_id || '-' || r AS snapshot_id, {', '.join(columns)} "
        f"FROM seed, range({copies}) AS t(r) LIMIT {target}"
    ).to_arrow_table()
    con.unregister("seed")
    return table.select(rows.column_names)


def with_a_bad_row(table: pyarrow.Table) -> pyarrow.Table:
    """`table` with the first row's ttft_s_p50 made negative."""
    column = table.column("ttft_s_p50").to_pylist()
    column[0] = -1.0
    index = table.column_names.index("ttft_s_p50")
    return table.set_column(index, "ttft_s_p50", pyarrow.array(column, pyarrow.float64()))


def ibis_schema(ibis_table: Any) -> Any:
    """The model's column checks and key as a pandera.ibis schema, typed as the table is."""
    import pandera.ibis as pi

    schema = FRAMES[FRAME].to_schema()
    types = ibis_table.schema()
    columns = {
        name: pi.Column(types[name], checks=column.checks, nullable=column.nullable)
        for name, column in schema.columns.items()
    }
    return pi.DataFrameSchema(columns, unique=list(unique_key(FRAMES[FRAME])))


def timed(work: Callable[[], bool], repeats: int = 3) -> tuple[float, bool]:
    """Median seconds of `work` and what it answered (True: the rows pass)."""
    times, answer = [], True
    for _ in range(repeats):
        started = time.perf_counter()
        answer = work()
        times.append(time.perf_counter() - started)
    return statistics.median(times), answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.pandera_ibis", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows checked (1,000,000)")
    args = parser.parse_args(argv)
    import ibis
    import pandera.errors

    con = duckdb.connect()
    seed = bundled_rows()
    good = repeated(con, seed, args.rows)
    bad = with_a_bad_row(good)
    backend = ibis.duckdb.from_connection(con)

    def ours(table: pyarrow.Table) -> Callable[[], bool]:
        return lambda: passes_in_sql(con, FRAME, table)

    def theirs(table: pyarrow.Table, name: str) -> Callable[[], bool]:
        con.register(name, table)
        expression = backend.table(name)
        schema = ibis_schema(expression)

        def work() -> bool:
            try:
                schema.validate(expression, lazy=True)
            except (pandera.errors.SchemaErrors, pandera.errors.SchemaError):
                return False
            return True

        return work

    results = {
        "ours, good rows": timed(ours(good)),
        "ours, one bad row": timed(ours(bad)),
        "pandera.ibis, good rows": timed(theirs(good, "good_rows")),
        "pandera.ibis, one bad row": timed(theirs(bad, "bad_rows")),
    }
    print(f"{FRAME}: {seed.num_rows:,} bundled rows repeated to {good.num_rows:,}")
    for name, (seconds, passed) in results.items():
        print(f"{name:<28} {seconds:7.2f} s  {'passes' if passed else 'fails'}")
    ratio = results["pandera.ibis, good rows"][0] / results["ours, good rows"][0]
    print(f"pandera.ibis / ours (good rows): {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
