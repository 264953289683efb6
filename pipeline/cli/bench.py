"""`speedbook bench`: measure the build on a synthetic corpus (see README, Performance)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.support.errors import CommandError
from pipeline.support.progress import report
from pipeline.support.settings import Settings

if TYPE_CHECKING:
    from pipeline.bench.corpus import CorpusSpec
    from pipeline.bench.poll_corpus import PollSpec

NAME = "bench"
HELP = "benchmark the build on a generated corpus and write the figures as JSON"
DESCRIPTION = (
    "Generate a deterministic synthetic corpus in a temporary folder, run `speedbook build` on it "
    "(full, after one more day or poll, nothing new), and report wall time per stage, peak "
    "memory, and floors of the same work. Scenario `pages` (the default): Artificial "
    "Analysis-style pages, one per model per day, P endpoints each, plus a catalogue and a "
    "compilation; floors lxml.html alone and one bulk insert. Scenario `openrouter`: OpenRouter "
    "/endpoints poll bundles, --polls-per-day a day, one response per model; floor DuckDB's "
    "read_json of the same bodies; also the snapshot store's bytes against the bytes received."
)
SCENARIOS = ("pages", "openrouter")
# (models, days) when not given: the sizes of issue 15's figures
DEFAULTS = {"pages": (300, 365), "openrouter": (400, 90)}


EXAMPLES = (
    "speedbook bench --days 30 --json bench-pages.json",
    "speedbook bench --scenario openrouter --days 7 --polls-per-day 24",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scenario", choices=SCENARIOS, default="pages", help="what to generate (default: pages)"
    )
    parser.add_argument(
        "--models", type=int, help="models: pages per day, or responses per poll (300 / 400)"
    )
    parser.add_argument("--providers", type=int, help="endpoints per page (pages only; default 20)")
    parser.add_argument("--days", type=int, help="days of history (365 / 90)")
    parser.add_argument(
        "--polls-per-day", type=int, help="polls a day (openrouter only; default 48)"
    )
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


def _spec(args: argparse.Namespace) -> CorpusSpec | PollSpec:
    """The scenario's spec from the options; CommandError naming the option that is wrong."""
    from pipeline.bench.corpus import CorpusSpec
    from pipeline.bench.poll_corpus import PollSpec

    models, days = DEFAULTS[args.scenario]
    models = models if args.models is None else args.models
    days = days if args.days is None else args.days
    try:  # "models must be a positive whole number, got 0"
        if args.scenario == "pages":
            if args.polls_per_day is not None:
                raise CommandError("--polls-per-day is for --scenario openrouter")
            providers = 20 if args.providers is None else args.providers
            return CorpusSpec(models, providers, days, seed=args.seed)
        if args.providers is not None:
            raise CommandError("--providers is for --scenario pages")
        polls = 48 if args.polls_per_day is None else args.polls_per_day
        return PollSpec(models, days, polls, seed=args.seed)
    except ValueError as error:
        name, _, rest = str(error).partition(" ")
        raise CommandError(f"--{name.replace('_', '-')} {rest}") from None


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
    from pipeline.bench import poll_run
    from pipeline.bench import run as page_run

    # Every argument is checked before anything is made on disk: a run takes minutes.
    spec = _spec(args)
    if args.scenario == "pages":
        run_bench, render = page_run.run_bench, page_run.render
    else:
        run_bench, render = poll_run.run_poll_bench, poll_run.render
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
