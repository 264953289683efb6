"""`speedbook bench`: measure the build on a synthetic corpus (see README, Performance)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

from pipeline.support.errors import CommandError
from pipeline.support.progress import report
from pipeline.support.settings import Settings

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
        help="where to generate the corpus: an empty or new folder, kept afterwards (default: a "
        "temporary folder, deleted afterwards unless --keep)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the temporary folder with the generated corpus"
    )


def _check_json_target(path: Path) -> None:
    """Refuse a --json FILE that cannot be written now, not after the whole benchmark has run."""
    folder = path.parent
    if not folder.is_dir():
        raise CommandError(f"--json {path}: folder {folder} does not exist")
    if path.is_dir():
        raise CommandError(f"--json {path}: is a folder")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise CommandError(f"--json {path}: not writable")


def _check_workdir(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise CommandError(f"--workdir {path} is not a folder")
    if path.is_dir() and any(path.iterdir()):
        raise CommandError(f"--workdir {path} is not empty")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from pipeline.bench.corpus import CorpusSpec
    from pipeline.bench.run import render, run_bench

    # Every argument is checked before anything is made on disk: a run takes minutes.
    try:
        spec = CorpusSpec(args.models, args.providers, args.days, seed=args.seed)
    except ValueError as error:  # "models must be a positive whole number, got 0"
        raise CommandError(f"--{error}") from None
    if args.json:
        _check_json_target(args.json)
    if args.workdir:
        _check_workdir(args.workdir)
        workdir = args.workdir
        try:
            workdir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CommandError(f"--workdir {workdir}: {error.strerror or error}") from None
    else:
        workdir = Path(tempfile.mkdtemp(prefix="speedbook-bench-"))
    try:
        result = run_bench(spec, workdir, progress=report)
    except RuntimeError as error:
        raise CommandError(str(error), status=1) from None
    finally:
        # Only the folder we made is ours to delete; a --workdir the user named is left as is.
        if not args.workdir and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        elif not args.workdir:
            report(f"kept the generated corpus in {workdir}")
    print(render(result))
    if args.json:
        try:
            args.json.write_text(
                json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8"
            )
        except OSError as error:
            raise CommandError(
                f"--json {args.json}: cannot write: {error.strerror or error}"
            ) from None
        print(f"\nwrote {args.json}")
    return 0
