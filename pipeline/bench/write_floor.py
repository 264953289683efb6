"""What writing the published observations costs by itself, on a poll corpus `speedbook bench
--scenario openrouter --workdir DIR` kept, beside the `read_json` floor in the same run: the
whole history's `core.observations` copied into a table of a fresh DuckDB file (opened as the
build opens its warehouse), and into one Parquet file with the release's options, unsorted. A
full build writes both copies (the release's sorted, an hour a file); neither parses anything.

    python -m pipeline.bench.write_floor DIR --json FILE
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import duckdb

from pipeline.bench.poll_run import FLOOR_DIR, kept_corpus, read_json_floor
from pipeline.release.parquet import COPY_OPTIONS
from pipeline.support.settings import DATABASE_FILE
from pipeline.warehouse.connection import connect, quote_literal


def _timed(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[float, int]:
    """Seconds of `sql`, a statement that reports the rows it wrote, and those rows."""
    started = time.perf_counter()
    ((rows,),) = con.execute(sql).fetchall()
    return time.perf_counter() - started, rows


def write_floor(workdir: Path) -> dict[str, Any]:
    root, floor_files = kept_corpus(workdir)
    warehouse = root / DATABASE_FILE
    if not floor_files:
        raise SystemExit(f"{workdir / FLOOR_DIR}: no floor files; keep the bench's --workdir")
    responses, floor_s = read_json_floor(floor_files, workdir)
    target, parquet = workdir / "write-floor.duckdb", workdir / "write-floor.parquet"
    try:
        with connect(target) as con:
            con.execute(f"ATTACH {quote_literal(str(warehouse))} AS built (READ_ONLY)")
            (rows,) = con.execute("SELECT count(*) FROM built.core.observations").fetchone()  # type: ignore[misc]
            table_s, table_rows = _timed(con, "CREATE TABLE t AS FROM built.core.observations")
            # the build's table is on disk when its transaction ends
            started = time.perf_counter()
            con.execute("CHECKPOINT")
            table_s += time.perf_counter() - started
            parquet_s, parquet_rows = _timed(
                con,
                f"COPY (FROM built.core.observations) TO {quote_literal(str(parquet))} "
                f"{COPY_OPTIONS}",
            )
    finally:
        target.unlink(missing_ok=True)
        parquet.unlink(missing_ok=True)
    return {
        "observations": rows,
        "rows_written": {"table": table_rows, "parquet": parquet_rows},
        "floor_read_json_rows": responses,
        # unrounded: a tiny corpus's copies take milliseconds, and the ratios are of these
        "floor_read_json_s": floor_s,
        "write_table_s": table_s,
        "write_parquet_s": parquet_s,
        "table_to_floor_ratio": round(table_s / floor_s, 2),
        "parquet_to_floor_ratio": round(parquet_s / floor_s, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.bench.write_floor", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("workdir", type=Path, help="the --workdir of a poll bench, kept")
    parser.add_argument("--json", type=Path, help="write the results as JSON")
    args = parser.parse_args(argv)
    result = write_floor(args.workdir)
    for name in ("floor_read_json_s", "write_table_s", "write_parquet_s"):
        print(f"{name:<20} {result[name]:>10.2f}")
    print(f"{'observations':<20} {result['observations']:>10,}")
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
