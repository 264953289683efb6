"""`speedbook resolve provider|model TEXT...`: how raw names resolve through the alias tables and
the identity rules; `speedbook resolve --pending`: the unreviewed entities a build kept, each with
the spellings the rules put together and the known entities closest to it, for a reviewer."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from pipeline.normalise.entities import KINDS, UNRESOLVED, AliasError, Resolution, Resolver
from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings

NAME = "resolve"
HELP = "show which provider or model (and variant) raw names resolve to"
# Line breaks are kept as written (RawDescriptionHelpFormatter, for the examples).
DESCRIPTION = """\
Resolve raw provider or model names the way the build does. Variant markers (precision,
service tier, reasoning effort) and a Bedrock region are read off the label; the rest must
match a reviewed alias in pipeline/metadata/*_aliases.csv exactly (case, spaces, '-' and '_'
aside), on the label, its last path segment or its identity spelling (vendor, platform and
region prefixes and version suffixes removed), or have the identity key of a reviewed entity
(word order, punctuation and glue aside: "Llama 3.3 Instruct 70B" is llama-3.3-70b-instruct).
Nothing is guessed: a name that matches nothing is unresolved, with close ids as suggestions.
With --stable, the names are read as a source's stable ids (OpenRouter slugs, models.dev ids):
one nothing resolves is an unreviewed entity under its identity spelling, as the build keeps it
(a build gives every spelling with one identity key one id). docs/identity.md has the rules.

Prints one JSON object per name, one per line. Exits 0 when every name resolved, 1 otherwise,
2 when the alias tables are broken.

--pending lists the unreviewed entities the last build kept (mart.unreviewed_entities in the
warehouse), most cited first, each with the spellings the identity rules put together under it
(and the sources of each) and the known entities closest to it, ranked: confirm them in batches
by adding alias rows (an alias of an existing entity), or rows to providers.csv / models.csv (a
new reviewed entity, under the same id)."""
EPILOG = """examples:
  speedbook resolve provider "DeepInfra (Turbo, FP8)" "Together AI" Cerebas
  speedbook resolve model "gpt-oss-120B (high)" @cf/meta/llama-3.3-70b-instruct-fp8-fast
  speedbook resolve model "Llama 3.3 70B" --metadata /path/to/copy/of/metadata
  speedbook resolve model "Llama 3.3 Instruct 70B" us.meta.llama3-3-70b-instruct-v1:0
  speedbook resolve model deepseek/deepseek-v4-flash --stable
  speedbook resolve --pending --limit 20

output (one line per name):
  {"input": "DeepInfra (Turbo, FP8)", "status": "resolved", "provider_id": "deepinfra",
   "precision": "fp8", "service_tier": "turbo", "reasoning_effort": null, "family": null,
   "region": null, "rule": "alias 'DeepInfra'", "suggestions": []}

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
        "family": resolution.family,
        "region": resolution.region,
        "rule": resolution.rule,
        "suggestions": list(resolution.suggestions),
    }


def _reported(resolver: Resolver, kind: str, resolution: Resolution) -> Resolution:
    """The resolution with suggestions, for a name that is reported unresolved."""
    if resolution.status != UNRESOLVED:
        return resolution
    return replace(resolution, suggestions=resolver.suggest(kind, resolution.input))


def pending(settings: Settings, resolver: Resolver, limit: int) -> list[dict[str, object]]:
    """The unreviewed entities of the warehouse's last build, most cited first, grouped with
    their spellings and ranked candidates (review.pending_groups)."""
    from pipeline.cli.sql import Limits, open_read_only
    from pipeline.normalise.review import pending_groups  # pandas: only when used

    with open_read_only(settings, Limits()) as con:
        entities = con.execute(
            "SELECT kind, entity_id, name, named_by, citations FROM mart.unreviewed_entities "
            "ORDER BY citations DESC, kind, entity_id"
        ).df()
        spellings = con.execute(
            "SELECT kind, entity_id, label, sources FROM core.labels WHERE status = 'unreviewed'"
        ).df()
    groups = pending_groups(
        entities,
        spellings,
        {kind: resolver.reviewed_keys(kind) for kind in KINDS},
        shown=limit,
    )
    for group in groups:
        group["suggestions"] = [candidate["id"] for candidate in group["candidates"]]
    return groups


SHOWN_SPELLINGS = 8  # per entity in the text listing; --json has them all


def render_groups(groups: list[dict[str, object]]) -> str:
    """The pending entities as blocks: the entity, then the spellings the rules put together
    under it (with their sources), then its ranked candidates."""
    lines: list[str] = []
    for group in groups:
        spellings = group["spellings"]
        candidates = group["candidates"]
        assert isinstance(spellings, list) and isinstance(candidates, list)
        lines.append(
            f"{group['kind']} {group['id']}  {group['name']!r}  "
            f"{group['citations']:,} citations  named by {group['named_by'] or '-'}"
        )
        shown = [f"{s['label']} [{s['sources']}]" for s in spellings[:SHOWN_SPELLINGS]]
        if len(spellings) > SHOWN_SPELLINGS:
            shown.append(f"and {len(spellings) - SHOWN_SPELLINGS} more")
        lines.append(f"  spelt:      {' | '.join(shown) or '-'}")
        ranked = [f"{c['id']} {c['score']:.2f} ({c['reason']})" for c in candidates]
        lines.append(f"  candidates: {' | '.join(ranked) or 'none'}")
    return "\n".join(lines)


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
            print(render_groups(rows))
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
