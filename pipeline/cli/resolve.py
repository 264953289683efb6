"""`speedbook resolve provider|model TEXT...`: how raw names resolve through the alias tables."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pipeline.normalise.entities import KINDS, AliasError, Resolution, Resolver
from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings

NAME = "resolve"
HELP = "show which provider or model (and variant) raw names resolve to"
# Line breaks are kept as written (RawDescriptionHelpFormatter, for the examples).
DESCRIPTION = """\
Resolve raw provider or model names the way the build does. Variant markers (precision,
service tier, reasoning effort) are read off the label; the rest must match a reviewed alias
in pipeline/metadata/*_aliases.csv exactly (case, spaces, '-' and '_' aside), or, for a
path-like id, its last segment without a ':<version>' suffix. Nothing is guessed: a name that
matches no alias is unresolved, with close ids as suggestions.

Prints one JSON object per name, one per line. Exits 0 when every name resolved, 1 otherwise,
2 when the alias tables are broken."""
EPILOG = """examples:
  speedbook resolve provider "DeepInfra (Turbo, FP8)" "Together AI" Cerebas
  speedbook resolve model "gpt-oss-120B (high)" @cf/meta/llama-3.3-70b-instruct-fp8-fast
  speedbook resolve model "Llama 3.3 70B" --metadata /path/to/copy/of/metadata

output (one line per name):
  {"input": "DeepInfra (Turbo, FP8)", "status": "resolved", "provider_id": "deepinfra",
   "precision": "fp8", "service_tier": "turbo", "reasoning_effort": null,
   "rule": "alias 'DeepInfra'", "suggestions": []}

To make an unresolved name resolve, add a reviewed row to provider_aliases.csv or
model_aliases.csv (alias,id,notes) and run this command again."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("kind", choices=KINDS, help="what the names are: provider or model")
    parser.add_argument("texts", nargs="+", metavar="TEXT", help="raw names, as sources write them")
    parser.add_argument(
        "--metadata",
        metavar="DIR",
        type=Path,
        help="directory with providers.csv, models.csv and their alias tables "
        "(default: $SPEEDBOOK_METADATA, else pipeline/metadata)",
    )


def resolution_record(kind: str, resolution: Resolution) -> dict[str, object]:
    """The JSON shape of one resolution; the id key is `provider_id` or `model_id`."""
    return {
        "input": resolution.input,
        "status": resolution.status,
        f"{kind}_id": resolution.entity_id,
        "precision": resolution.precision,
        "service_tier": resolution.service_tier,
        "reasoning_effort": resolution.reasoning_effort,
        "rule": resolution.rule,
        "suggestions": list(resolution.suggestions),
    }


def run(args: argparse.Namespace, settings: Settings) -> int:
    try:
        resolver = Resolver.load(args.metadata or settings.metadata)
    except AliasError as error:
        raise CommandError(str(error)) from None
    resolutions = resolver.resolve_many(args.kind, args.texts)
    for resolution in resolutions:
        print(json.dumps(resolution_record(args.kind, resolution), ensure_ascii=False))
    return 0 if all(resolution.resolved for resolution in resolutions) else 1
