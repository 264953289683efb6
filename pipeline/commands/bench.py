"""`speedbook bench`: measure the build on a synthetic corpus (see README, Performance)."""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from pipeline.errors import CommandError
from pipeline.progress import report
from pipeline.settings import Settings

NAME = "bench"
HELP = "benchmark the build on a generated corpus and write the figures as JSON"
DESCRIPTION = (
    "Generate a deterministic synthetic corpus (Artificial Analysis-style pages: one per model "
    "per day, P endpoints each, plus a catalogue and a compilation) in a temporary folder, run "
    "`speedbook build` on it (full, one more day, nothing new), and report wall time per stage, "
    "throughput, peak memory, and floors of the same work (lxml.html alone; one bulk insert)."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--models", type=int, default=300, help="models (pages per day)")
    parser.add_argument("--providers", type=int, default=20, help="endpoints per page")
    parser.add_argument("--days", type=int, default=365, help="days of history")
    parser.add_argument("--seed", type=int, default=1729, help="random seed (deterministic)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    parser.add_argument(
        "--workdir",
        type=Path,
        metavar="DIR",
        help="where to generate the corpus (default: a temporary folder, deleted afterwards)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated corpus")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from pipeline.bench.corpus import CorpusSpec
    from pipeline.bench.run import render, run_bench

    if min(args.models, args.providers, args.days) < 1:
        raise CommandError("--models, --providers and --days must be at least 1")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="speedbook-bench-"))
    if args.workdir and any(args.workdir.iterdir() if args.workdir.exists() else ()):
        raise CommandError(f"--workdir {args.workdir} is not empty")
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        spec = CorpusSpec(args.models, args.providers, args.days, seed=args.seed)
        try:
            result = run_bench(spec, workdir, progress=report)
        except RuntimeError as error:
            raise CommandError(str(error), status=1) from None
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0
