"""`python -m benchmarks`: measure the build on a generated corpus (docs/performance.md).

python -m benchmarks poll --models 400 --days 90 --json poll.json
python -m benchmarks poll --days 7 --readers
python -m benchmarks pages --models 100 --days 30
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks import pages, poll
from benchmarks.corpus import CorpusSpec
from benchmarks.poll_corpus import PollSpec


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Generate a deterministic synthetic corpus, run `speedbook build` on it "
        "(full, one more poll or day, nothing new) and measure each against the floor of the "
        "same work in the same run. Results print as a table, and with --json as JSON.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    scenarios = parser.add_subparsers(dest="scenario", required=True, metavar="SCENARIO")
    polls = scenarios.add_parser(
        "poll",
        help="half-hourly OpenRouter polls; floor: DuckDB's read_json of the same bodies",
    )
    polls.add_argument("--models", type=int, default=400, help="responses per poll (400)")
    polls.add_argument("--days", type=int, default=90, help="days of history (90)")
    polls.add_argument("--polls-per-day", type=int, default=48, help="polls a day (48)")
    polls.add_argument("--repeats", type=int, default=1, help="full builds, each fresh (1)")
    polls.add_argument("--rounds", type=int, default=3, help="one more poll + nothing new (3)")
    polls.add_argument(
        "--readers", action="store_true", help="then a full and a poll build with 4 readers"
    )
    polls.add_argument(
        "--catalog", default="", help="SPEEDBOOK_CATALOG for the builds (default: SQLite)"
    )
    polls.add_argument(
        "--release-cadence",
        default="",
        metavar="CADENCE",
        help="SPEEDBOOK_RELEASE_CADENCE for the builds, e.g. daily: the polls then publish no "
        "release (default: a release from every build)",
    )
    page = scenarios.add_parser(
        "pages", help="Artificial Analysis-style pages; floor: lxml.html alone on them"
    )
    page.add_argument("--models", type=int, default=100, help="pages a day (100)")
    page.add_argument("--providers", type=int, default=20, help="endpoints a page (20)")
    page.add_argument("--days", type=int, default=30, help="days of history (30)")
    for sub in (polls, page):
        sub.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
        sub.add_argument(
            "--workdir",
            type=Path,
            metavar="DIR",
            help="a new or empty folder for the corpus and lakes, kept (default: a temporary "
            "folder, deleted)",
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        spec = (
            PollSpec(args.models, args.days, args.polls_per_day)
            if args.scenario == "poll"
            else CorpusSpec(args.models, args.providers, args.days)
        )
    except ValueError as error:
        name, _, rest = str(error).partition(" ")
        parser.error(f"--{name.replace('_', '-')} {rest}")
    if args.workdir and args.workdir.exists() and any(args.workdir.iterdir()):
        parser.error(f"--workdir {args.workdir} is not empty")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="speedbook-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        if args.scenario == "poll":
            result = poll.run(
                spec,  # type: ignore[arg-type]
                workdir,
                repeats=args.repeats,
                rounds=args.rounds,
                with_readers=args.readers,
                catalog=args.catalog,
                release_cadence=args.release_cadence,
                progress=progress,
            )
            text = poll.table(result)
        else:
            result = pages.run(spec, workdir, progress=progress)  # type: ignore[arg-type]
            text = pages.table(result)
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
