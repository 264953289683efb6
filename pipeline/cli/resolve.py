"""`speedbook resolve provider|model TEXT...`: how raw names resolve through the alias tables;
`speedbook resolve --pending`: the unreviewed entities a build kept, for a reviewer."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from pipeline.cli.tables import render_table
from pipeline.normalise.entities import KINDS, UNRESOLVED, AliasError, Resolution, Resolver
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
matches no alias is unresolved, with close ids as suggestions. With --stable, the names are
read as a source's stable ids (OpenRouter slugs, models.dev ids): one no alias knows is an
unreviewed entity under its normalised slug, as the build keeps it.

Prints one JSON object per name, one per line. Exits 0 when every name resolved, 1 otherwise,
2 when the alias tables are broken.

--pending lists the unreviewed entities the last build kept (mart.unreviewed_entities in the
warehouse), most cited first, each with close reviewed ids as suggestions: confirm them in
batches by adding alias rows (an alias of an existing entity), or rows to providers.csv /
models.csv (a new reviewed entity, under the same id)."""
EPILOG = """examples:
  speedbook resolve provider "DeepInfra (Turbo, FP8)" "Together AI" Cerebas
  speedbook resolve model "gpt-oss-120B (high)" @cf/meta/llama-3.3-70b-instruct-fp8-fast
  speedbook resolve model "Llama 3.3 70B" --metadata /path/to/copy/of/metadata
  speedbook resolve model deepseek/deepseek-v4-flash --stable
  speedbook resolve --pending --limit 20

output (one line per name):
  {"input": "DeepInfra (Turbo, FP8)", "status": "resolved", "provider_id": "deepinfra",
   "precision": "fp8", "service_tier": "turbo", "reasoning_effort": null,
   "rule": "alias 'DeepInfra'", "suggestions": []}

To make an unresolved name resolve, add a reviewed row to provider_aliases.csv or
model_aliases.csv (alias,id,notes) and run this command again."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "kind", nargs="?", choices=KINDS, help="what the names are: provider or model"
    )
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="raw names, as sources write them")
    parser.add_argument(
        "--stable", action="store_true", help="read the names as a source's stable ids"
    )
    parser.add_argument(
        "--pending",
        action="store_true",
        help="list the unreviewed entities of the last build, most cited first",
    )
    parser.add_argument(
        "--limit", type=int, default=50, metavar="N", help="with --pending: at most N (50)"
    )
    parser.add_argument(
        "--json", action="store_true", help="with --pending: one JSON object per line"
    )
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


def _reported(resolver: Resolver, kind: str, resolution: Resolution) -> Resolution:
    """The resolution with suggestions, for a name that is reported unresolved."""
    if resolution.status != UNRESOLVED:
        return resolution
    return replace(resolution, suggestions=resolver.suggest(kind, resolution.input))


def pending(settings: Settings, resolver: Resolver, limit: int) -> list[dict[str, object]]:
    """The unreviewed entities of the warehouse's last build, most cited first, with the
    reviewed ids closest to their name or id."""
    from pipeline.cli.sql import Limits, open_read_only

    with open_read_only(settings.database, Limits()) as con:
        rows = con.execute(
            "SELECT kind, entity_id, name, named_by, citations FROM mart.unreviewed_entities "
            "ORDER BY citations DESC, kind, entity_id LIMIT ?",
            [limit],
        ).fetchall()
    found = []
    for kind, entity_id, name, named_by, citations in rows:
        suggestions = list(
            dict.fromkeys(resolver.suggest(kind, name) + resolver.suggest(kind, entity_id))
        )
        found.append(
            {
                "kind": kind,
                "id": entity_id,
                "name": name,
                "citations": citations,
                "named_by": named_by,
                "suggestions": suggestions[:3],
            }
        )
    return found


def run(args: argparse.Namespace, settings: Settings) -> int:
    try:
        resolver = Resolver.load(args.metadata or settings.metadata)
    except AliasError as error:
        raise CommandError(str(error)) from None
    if args.pending:
        if args.kind or args.texts:
            raise CommandError("--pending takes no names")
        if args.limit < 1:
            raise CommandError("--limit must be a positive whole number")
        rows = pending(settings, resolver, args.limit)
        if args.json:
            for row in rows:
                print(json.dumps(row, ensure_ascii=False))
        else:
            columns = ("kind", "id", "name", "citations", "named_by", "suggestions")
            table = [
                [row[c] if c != "suggestions" else ", ".join(row[c]) for c in columns]
                for row in rows
            ]
            print(render_table(columns, table))
            print(f"\n{len(rows)} unreviewed entit{'y' if len(rows) == 1 else 'ies'} shown")
        return 0
    if args.kind is None or not args.texts:
        raise CommandError("name a kind (provider or model) and at least one TEXT, or --pending")
    resolutions = [
        _reported(
            resolver,
            args.kind,
            resolver.resolve_stable(args.kind, text)
            if args.stable
            else resolver.resolve(args.kind, text),
        )
        for text in args.texts
    ]
    for resolution in resolutions:
        print(json.dumps(resolution_record(args.kind, resolution), ensure_ascii=False))
    return 0 if all(resolution.resolved for resolution in resolutions) else 1
