"""What changed between two releases, computed from their export documents alone.

Pure functions: `compare(old, new)` takes the three export documents of each release (`old` is
None for the first release), parses them into the contract's models, reads of each what it
compares (`view_of`: a `ReleaseView`, plain data; a view is accepted in place of documents) and
returns the changes as a JSON-ready dict (written as changes.json); `render_markdown` writes it
for people (CHANGELOG.md, from templates/changelog.md.jinja) and `summary_line` in one line.
Working only from the exports means any two published folders can be compared, whatever warehouse
built them; a release of an earlier schema version is read in today's shape (contract/legacy.py).

A figure is identified by its endpoint (provider x model x variant, as the export names it),
metric, scope, method and statistic. It *changed* when its value, bounds, qualifier, unit, tier or
suspect flag differ; a newer
observation of the same figure is counted as re-observed, not listed. Provenance counts too: a
source whose cited snapshots differ (a re-captured page with the same figures) is listed, so such
a release never says "no content changed".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from pipeline.release.contract import MODELS, Release, ReleaseHead, read_head, read_release
from pipeline.release.contract.common import ModelRef, Snapshot, Variant
from pipeline.release.contract.inference import Figure, Inference, Provider
from pipeline.release.formatting import day, variant_label
from pipeline.release.templates import markdown_table, render_markdown_template, table_text

__all__ = [
    "ReleaseView",
    "UnreadableRelease",
    "compare",
    "figure_key",
    "figure_text",
    "figures",
    "headline_keys",
    "markdown_table",
    "parse_release",
    "relative_change",
    "release_info",
    "render_markdown",
    "summary_line",
    "view_of",
]

Documents = dict[str, dict[str, Any]]
# endpoint, metric, scope, method, statistic
FigureKey = tuple[str, str, str, str | None, str | None]

FIGURE_FIELDS = ("value", "low", "high", "qualifier", "unit", "tier", "suspect")
CLAIM_FIELDS = (
    "figure",
    "value",
    "qualifier",
    "unit",
    "scope",
    "precision",
    "hardware",
    "technique",
    "verified_by",
    "claimed",
)
CATALOGUE_FIELDS = (
    "task",
    "name",
    "publisher",
    "model_id",
    "function_calling",
    "precision",
    "service_tier",
    "beta",
    "lora",
    "context_window",
    "planned_deprecation",
)
PLATFORM_FIELDS = ("name", "owner", "kind", "stated_count", "stated_count_tier", "listed_models")
POINT_QUALIFIERS = {None, "approx"}
QUALIFIER_MARKS = {"approx": "~", "at_least": "≥", "up_to": "≤"}


class UnreadableRelease(ValueError):
    """A release's exports do not fit the contract (nor an earlier schema version of it)."""


# --- reading the documents ----------------------------------------------------------------------


def parse_release(documents: Documents | Release) -> Release:
    """The release's exports as the contract's models; raises UnreadableRelease naming the
    export and the first thing that does not fit."""
    if isinstance(documents, Release):
        return documents
    try:
        return read_release(documents, earlier_schemas=True)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(root)"
        export = next((n for n, m in MODELS.items() if m.__name__ == error.title), error.title)
        raise UnreadableRelease(f"{export} at {where}: {first['msg']}") from None
    except KeyError as error:
        raise UnreadableRelease(f"an export is missing: {error}") from None


def release_info(documents: Documents | Release) -> dict[str, Any]:
    """The release an export set belongs to (of inference.json's envelope)."""
    if isinstance(documents, Release):
        head: Inference | ReleaseHead = documents.inference
    else:
        try:
            head = read_head(documents["inference.json"])
        except (ValidationError, KeyError, TypeError) as error:
            raise UnreadableRelease(f"inference.json: not a release's export: {error}") from None
    return {
        "version": head.version,
        "data_date": head.data_date,
        "as_of": head.as_of,
        "schema_version": head.schema_version,
    }


def _ref(entity: ModelRef | None) -> dict[str, Any]:
    return {"id": entity.id, "name": entity.name} if entity else {"id": None, "name": None}


def _variant(variant: Variant) -> dict[str, Any]:
    """variant.model_dump(mode="json"), without pydantic's call per figure (70,000 a release)."""
    return {
        "precision": variant.precision,
        "service_tier": variant.service_tier,
        "reasoning_effort": variant.reasoning_effort,
        "region": variant.region,
        "key": variant.key,
    }


def _figure(provider: Provider, figure: Figure, retrieved: dict[str, str]) -> dict[str, Any]:
    """A figure as the changelog and the history read it; `retrieved`: when each snapshot the
    release cites was retrieved."""
    return {
        "endpoint": figure.endpoint,
        "provider": {"id": provider.id, "name": provider.name},
        "model": _ref(figure.model),
        "variant": _variant(figure.variant),
        "metric": figure.metric,
        "scope": figure.scope,
        "method": figure.method,
        "statistic": figure.statistic,
        "value": figure.value,
        "low": figure.low,
        "high": figure.high,
        "qualifier": figure.qualifier,
        "unit": figure.unit,
        "tier": figure.tier,
        "suspect": figure.suspect,
        "stale": figure.stale,
        "observed_at": figure.observed_at,
        "observed_at_bound": figure.observed_at_bound,
        "retrieved_at": retrieved.get(figure.snapshot),
        "source": figure.source,
        "snapshot": figure.snapshot,
    }


def figure_key(figure: Figure) -> FigureKey:
    """What identifies a figure (a live figure or a headline) of inference.json: its endpoint,
    metric and scope, and how it was measured (each method keeps its own current figure)."""
    return figure.endpoint, figure.metric, figure.scope, figure.method, figure.statistic


def _retrieved(release: Release) -> dict[str, str]:
    return {snapshot.id: snapshot.retrieved_at for snapshot in release.inference.snapshots}


def _figures(release: Release) -> dict[FigureKey, dict[str, Any]]:
    found = {}
    retrieved = _retrieved(release)
    for provider in release.inference.providers:
        for figure in provider.figures:
            found[figure_key(figure)] = _figure(provider, figure, retrieved)
    return found


def figures(documents: Documents | Release) -> dict[FigureKey, dict[str, Any]]:
    """Every figure of inference.json's providers, by (endpoint, metric, scope, method,
    statistic), in document order. The one reader of figures: changelogs and the warehouse's
    history both use it."""
    return _figures(parse_release(documents))


def headline_keys(documents: Documents | Release) -> set[FigureKey]:
    """The keys of the figures that are some provider's headline."""
    providers = parse_release(documents).inference.providers
    return {figure_key(p.headline) for p in providers if p.headline}


def _providers(release: Release) -> dict[str, dict[str, Any]]:
    return {
        p.id: {"id": p.id, "name": p.name, "display": p.display}
        for p in release.inference.providers
    }


def _models(release: Release) -> dict[str, dict[str, Any]]:
    """Every model inference.json mentions: in a headline, figure, context figure or claim."""
    found: dict[str, dict[str, Any]] = {}
    for provider in release.inference.providers:
        items: list[Any] = [provider.headline] if provider.headline else []
        items += [*provider.figures, *provider.context, *provider.claims]
        for item in items:
            if item.model:
                found.setdefault(item.model.id, _ref(item.model))
    return found


def _platforms(release: Release) -> dict[str, dict[str, Any]]:
    return {
        p.id: {
            "id": p.id,
            "name": p.name,
            "owner": p.owner,
            "kind": p.kind,
            "stated_count": p.stated_count.text,
            "stated_count_tier": p.stated_count.tier,
            "listed_models": p.listed_models.count if p.listed_models else None,
        }
        for p in release.platforms.platforms
    }


def _catalogue(release: Release) -> dict[tuple[str, str], dict[str, Any]]:
    """Every entry of the edge catalogue, by (platform, entry id)."""
    catalog = release.catalog
    platform = catalog.platform.id if catalog.platform else "-"
    found = {}
    for task in catalog.tasks:
        for entry in task.models:
            fields = entry.model_dump(mode="json")
            found[(platform, entry.id)] = {
                "platform": platform,
                "id": entry.id,
                "task": task.name,
                **{k: fields[k] for k in CATALOGUE_FIELDS if k != "task"},
            }
    return found


def _claims(release: Release) -> dict[str, dict[str, Any]]:
    found = {}
    for provider in release.inference.providers:
        for claim in provider.claims:
            fields = claim.model_dump(mode="json", include=set(CLAIM_FIELDS))
            found[claim.id] = {
                "id": claim.id,
                "provider": {"id": provider.id, "name": provider.name},
                "model": _ref(claim.model),
                **{k: fields[k] for k in CLAIM_FIELDS},
            }
    return found


def _sources(release: Release) -> dict[str, dict[str, Any]]:
    """Every source a release cites, with its publisher and tier, from each export's `sources`
    (in file-name order: inference.json, inference_catalog.json, model_platforms.json)."""
    found: dict[str, dict[str, Any]] = {}
    for document in (release.inference, release.catalog, release.platforms):
        for source in document.sources:
            found.setdefault(
                source.id, {"id": source.id, "publisher": source.publisher, "tier": source.tier}
            )
    return found


def _cited_snapshots(release: Release) -> dict[str, list[dict[str, Any]]]:
    """Every snapshot the exports cite (their `snapshots` lists), by source id, sorted by id."""
    by_id: dict[str, Snapshot] = {}
    for document in (release.inference, release.catalog, release.platforms):
        for snapshot in document.snapshots:
            by_id.setdefault(snapshot.id, snapshot)
    found: dict[str, list[dict[str, Any]]] = {}
    for snapshot_id in sorted(by_id):
        snapshot = by_id[snapshot_id]
        found.setdefault(snapshot.source, []).append(snapshot.model_dump(mode="json"))
    return found


def _headline(provider: Provider) -> dict[str, Any] | None:
    if provider.headline is None:
        return None
    row = _figure(provider, provider.headline, {})
    return {
        "display": provider.headline.display,
        "endpoint": row["endpoint"],
        "model": row["model"],
        "value": row["value"],
        "tier": row["tier"],
        "stale": row["stale"],
        "source": row["source"],
        "rule": provider.headline.rule,
    }


# --- comparing -----------------------------------------------------------------------------------


def relative_change(old: Any, new: Any) -> float | None:
    """(new - old) / old, rounded to 4 places; None unless both are numbers and old is not 0."""
    numeric = (int, float)
    if isinstance(old, bool) or isinstance(new, bool):
        return None
    if not isinstance(old, numeric) or not isinstance(new, numeric) or old == 0:
        return None
    return round((new - old) / old, 4)


def in_order(keys: Iterable[Any]) -> list[Any]:
    """Keys in a stable order; a part that may be null (a figure's method) sorts first."""

    def rank(key: Any) -> Any:
        if isinstance(key, tuple):
            return tuple((part is not None, "" if part is None else part) for part in key)
        return key

    return sorted(keys, key=rank)


def _added_removed(
    old: dict[Any, dict[str, Any]], new: dict[Any, dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    return {
        "added": [new[k] for k in in_order(new.keys() - old.keys())],
        "removed": [old[k] for k in in_order(old.keys() - new.keys())],
    }


def _field_changes(
    old: dict[Any, dict[str, Any]], new: dict[Any, dict[str, Any]], fields: Iterable[str]
) -> list[dict[str, Any]]:
    changed = []
    for key in in_order(old.keys() & new.keys()):
        diffs = [
            {"field": f, "old": old[key].get(f), "new": new[key].get(f)}
            for f in fields
            if old[key].get(f) != new[key].get(f)
        ]
        if diffs:
            changed.append(new[key] | {"changes": diffs})
    return changed


def _figure_state(figure: dict[str, Any]) -> dict[str, Any]:
    keep = (*FIGURE_FIELDS, "stale", "observed_at", "source", "snapshot")
    return {k: figure[k] for k in keep}


def _figure_identity(figure: dict[str, Any]) -> dict[str, Any]:
    keep = ("endpoint", "provider", "model", "variant", "metric", "scope")
    return {k: figure[k] for k in keep}


def _compare_figures(
    old: dict[FigureKey, dict[str, Any]],
    new: dict[FigureKey, dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    changed, newly_stale, fresh_again, reobserved = [], [], [], 0
    for key in in_order(old.keys() & new.keys()):
        before, after = old[key], new[key]
        entry = _figure_identity(after) | {
            "old": _figure_state(before),
            "new": _figure_state(after),
        }
        if any(before[f] != after[f] for f in FIGURE_FIELDS):
            # a bound or range against a point figure has no meaningful ratio
            comparable = {before["qualifier"], after["qualifier"]} <= POINT_QUALIFIERS
            change = relative_change(before["value"], after["value"]) if comparable else None
            changed.append(entry | {"relative_change": change})
        elif before["observed_at"] != after["observed_at"]:
            reobserved += 1
        if after["stale"] and not before["stale"]:
            newly_stale.append(entry)
        elif before["stale"] and not after["stale"]:
            fresh_again.append(entry)
    section = {
        "changed": changed,
        **_added_removed(old, new),
        "reobserved_unchanged": reobserved,
    }
    return section, {"newly_stale": newly_stale, "fresh_again": fresh_again}


def _compare_snapshots(old: ReleaseView, new: ReleaseView) -> dict[str, list[dict[str, Any]]]:
    """Provenance: `changed` lists each source cited by both releases whose cited snapshots differ
    (a re-captured page, even one with the same figures); `added` and `removed` hold the
    snapshots of sources only one release cites."""
    before, after = old.snapshots, new.snapshots
    return {
        "changed": [
            {"source": source, "old": before[source], "new": after[source]}
            for source in sorted(before.keys() & after.keys())
            if before[source] != after[source]
        ],
        "added": [s for source in sorted(after.keys() - before.keys()) for s in after[source]],
        "removed": [s for source in sorted(before.keys() - after.keys()) for s in before[source]],
    }


def _headline_key(item: dict[str, Any] | None) -> tuple[Any, ...] | None:
    """What makes a headline different: its text, endpoint, value, tier or staleness (a newer
    observation of the same value is not a change)."""
    if item is None:
        return None
    return tuple(item[k] for k in ("display", "endpoint", "value", "tier", "stale"))


def _compare_headlines(old: ReleaseView, new: ReleaseView) -> list[dict[str, Any]]:
    before, after = old.headlines, new.headlines
    changed = []
    for provider_id in sorted(before.keys() & after.keys()):
        a, b = before[provider_id]["headline"], after[provider_id]["headline"]
        if _headline_key(a) == _headline_key(b):
            continue
        changed.append(
            {
                "provider": {"id": provider_id, "name": after[provider_id]["name"]},
                "old": a,
                "new": b,
                "relative_change": relative_change(
                    a["value"] if a else None, b["value"] if b else None
                ),
            }
        )
    return changed


# Releases before schema 1.2 gave every measured figure one scope (live_median), whatever its
# method: to compare with one, a one-off run and a live statistic are the same scope.
MEASURED_SCOPES = {"live": "live", "one_off": "live"}


def _one_per_scope(figures: dict[FigureKey, dict[str, Any]]) -> dict[FigureKey, dict[str, Any]]:
    """The figures keyed by endpoint, metric and scope alone, as releases before schema 1.2
    kept them: of several methods, the one the current-figure rule then picked (best tier,
    then newest, then by source id)."""
    ranked = sorted(figures.items(), key=lambda item: item[1]["source"])
    ranked.sort(key=lambda item: item[1]["observed_at"], reverse=True)
    ranked.sort(key=lambda item: item[1]["tier"])
    kept: dict[FigureKey, dict[str, Any]] = {}
    for (endpoint, metric, scope, *_), figure in ranked:
        kept.setdefault((endpoint, metric, MEASURED_SCOPES.get(scope, scope), None, None), figure)
    return {key: kept[key] for key in in_order(kept)}


def _indexes(release: Release) -> dict[str, dict[Any, Any]]:
    """Every keyed view of a release the comparison reads, built once per release."""
    return {
        "providers": _providers(release),
        "models": _models(release),
        "figures": _figures(release),
        "claims": _claims(release),
        "platforms": _platforms(release),
        "catalogue": _catalogue(release),
        "sources": _sources(release),
    }


@dataclass(frozen=True)
class ReleaseView:
    """What a comparison reads of one release, as plain data (texts, numbers, lists, dicts;
    tuples as keys): made once per release (the history reads its figures too)."""

    info: dict[str, Any]  # release_info
    indexes: dict[str, dict[Any, Any]]  # _indexes
    headline_count: int
    # provider id -> its name and headline (_headline), in document order
    headlines: dict[str, dict[str, Any]]
    snapshots: dict[str, list[dict[str, Any]]]  # _cited_snapshots


def view_of(release: Documents | Release | ReleaseView) -> ReleaseView:
    """The view of a release's documents, models or view; raises UnreadableRelease when the
    documents do not fit the contract."""
    if isinstance(release, ReleaseView):
        return release
    parsed = parse_release(release)
    providers = parsed.inference.providers
    return ReleaseView(
        info=release_info(parsed),
        indexes=_indexes(parsed),
        headline_count=sum(1 for p in providers if p.headline),
        headlines={p.id: {"name": p.name, "headline": _headline(p)} for p in providers},
        snapshots=_cited_snapshots(parsed),
    )


def _counts(view: ReleaseView) -> dict[str, int]:
    index = view.indexes
    return {
        "providers": len(index["providers"]),
        "models": len(index["models"]),
        "figures": len(index["figures"]),
        "headlines": view.headline_count,
        "claims": len(index["claims"]),
        "platforms": len(index["platforms"]),
        "catalogue_entries": len(index["catalogue"]),
        "sources": len(index["sources"]),
    }


def compare(
    old: Documents | Release | ReleaseView | None, new: Documents | Release | ReleaseView
) -> dict[str, Any]:
    """The changes from release `old` to release `new` (None: `new` is the first release);
    raises UnreadableRelease when either does not fit the contract."""
    after_view = view_of(new)
    before_view = view_of(old) if old is not None else None
    result: dict[str, Any] = {
        "from": before_view.info if before_view else None,
        "to": after_view.info,
        "first_release": before_view is None,
        "contents": _counts(after_view),
    }
    if before_view is None:
        return result
    before, after = before_view.indexes, after_view.indexes
    old_figures, new_figures = before["figures"], after["figures"]
    if any(key[3] is None for key in old_figures):
        # a release before schema 1.2 kept one figure per endpoint, metric and scope, whatever
        # its method: compare it with the figure that rule picks from today's
        old_figures, new_figures = _one_per_scope(old_figures), _one_per_scope(new_figures)
    figure_section, stale = _compare_figures(old_figures, new_figures)

    def added_removed(
        name: str, fields: tuple[str, ...] = (), key: str = "changed"
    ) -> dict[str, Any]:
        section = _added_removed(before[name], after[name])
        if fields:
            section[key] = _field_changes(before[name], after[name], fields)
        return section

    result |= {
        "schema_version_changed": result["from"]["schema_version"]
        != result["to"]["schema_version"],
        "headlines": _compare_headlines(before_view, after_view),
        "figures": figure_section,
        "stale": stale,
        "providers": added_removed("providers"),
        "models": added_removed("models"),
        "platforms": added_removed("platforms", PLATFORM_FIELDS),
        "catalogue": added_removed("catalogue", CATALOGUE_FIELDS),
        "claims": added_removed("claims", CLAIM_FIELDS),
        "sources": added_removed("sources", ("tier",), key="tier_changed"),
        "snapshots": _compare_snapshots(before_view, after_view),
    }
    return result


# --- one line and Markdown ------------------------------------------------------------------------


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


def summary_line(changes: dict[str, Any]) -> str:
    """What changed, in one line: '3 figures changed, 2 added; 1 headline changed; ...', and the
    release this one replaced as `latest`, if it replaced one."""
    contents = changes["contents"]
    if changes["first_release"]:
        return (
            f"first release: {_plural(contents['providers'], 'provider')}, "
            f"{_plural(contents['figures'], 'figure')}, "
            f"{_plural(contents['platforms'], 'platform')}, "
            f"{_plural(contents['catalogue_entries'], 'catalogue entry', 'catalogue entries')}"
        )
    parts = []

    def add(section: dict[str, Any], noun: str, keys: tuple[str, ...]) -> None:
        counts = [f"{len(section[k])} {k}" for k in keys if section.get(k)]
        if counts:
            parts.append(f"{noun}: " + ", ".join(counts))

    figure = changes["figures"]
    add(figure, "figures", ("changed", "added", "removed"))
    if changes["headlines"]:
        parts.append(_plural(len(changes["headlines"]), "headline") + " changed")
    if changes["stale"]["newly_stale"]:
        parts.append(f"{len(changes['stale']['newly_stale'])} newly stale")
    if changes["stale"]["fresh_again"]:
        parts.append(f"{len(changes['stale']['fresh_again'])} fresh again")
    add(changes["providers"], "providers", ("added", "removed"))
    add(changes["models"], "models", ("added", "removed"))
    add(changes["platforms"], "platforms", ("added", "removed", "changed"))
    add(changes["catalogue"], "catalogue", ("added", "removed", "changed"))
    add(changes["claims"], "claims", ("added", "removed", "changed"))
    if changes["sources"]["tier_changed"]:
        parts.append(_plural(len(changes["sources"]["tier_changed"]), "source tier") + " changed")
    add(changes["sources"], "sources", ("added", "removed"))
    if changes["schema_version_changed"]:
        parts.append(
            f"schema {changes['from']['schema_version']} -> {changes['to']['schema_version']}"
        )
    # changes.json written before provenance was compared has no "snapshots" section
    snapshots = changes.get("snapshots") or {}
    provenance = [
        f"{_plural(len(snapshots[key]), 'cited snapshot')} {key}"
        for key in ("changed", "added", "removed")
        if snapshots.get(key)
    ]
    replaced = [
        f"replaces release {note['release']} as latest"
        for note in changes.get("notes") or ()
        if isinstance(note, dict) and note.get("kind") == "replaces"
    ]
    if not parts:
        reobserved = figure["reobserved_unchanged"]
        if not reobserved and not provenance:
            return "; ".join(["no content changed", *replaced])
        # "no figure changed" alone would hide that the release cites other snapshots
        parts.append(
            f"no figure changed ({_plural(reobserved, 'figure')} re-observed)"
            if reobserved
            else "no figure changed"
        )
    if provenance:
        parts.append(", ".join(provenance))
    return "; ".join(parts + replaced)


def number_text(value: float) -> str:
    return f"{value:,}"


def figure_text(state: dict[str, Any] | None) -> str:
    """'321.0 tokens/s', '~2,314.0 tokens/s', '35.0–434.0 tokens/s' (stale marked): the exact
    figure, whatever its metric, so a changelog shows every digit that changed."""
    if state is None:
        return "—"
    mark = QUALIFIER_MARKS.get(state.get("qualifier") or "", "")
    if state.get("value") is not None:
        text = mark + number_text(state["value"])
    elif state.get("low") is not None and state.get("high") is not None:
        text = f"{number_text(state['low'])}–{number_text(state['high'])}"
    elif state.get("low") is not None:
        text = "≥" + number_text(state["low"])
    elif state.get("high") is not None:
        text = "≤" + number_text(state["high"])
    else:
        text = "—"
    if state.get("unit"):
        text += f" {state['unit']}"
    return text + (" (stale)" if state.get("stale") else "")


def percent_text(change: float | None) -> str:
    return "" if change is None else f"{change * 100:+.1f}%"


def headline_change_text(change: dict[str, Any]) -> str:
    """'-32.8%, other endpoint', 'now stale', 'new headline': how a headline moved."""
    old, new = change["old"], change["new"]
    if old is None or new is None:
        return "new headline" if old is None else "no headline"
    parts = []
    if old["value"] != new["value"]:
        parts.append(percent_text(change["relative_change"]))
    if old["endpoint"] != new["endpoint"]:
        parts.append("other endpoint")
    if old["stale"] != new["stale"]:
        parts.append("now stale" if new["stale"] else "fresh again")
    if old["tier"] != new["tier"]:
        parts.append(f"{old['tier']} -> {new['tier']}")
    return ", ".join(p for p in parts if p)


def variant_text(variant: dict[str, Any]) -> str:
    """The variant as the exports label it ('high, Turbo, FP8'); 'standard' when it has none."""
    return variant_label(Variant.model_validate(variant)) or "standard"


def _name(entity: dict[str, Any] | None) -> str | None:
    if not entity:
        return None
    return entity.get("name") or entity.get("id")


FIGURE_COLUMNS = ["provider", "model", "variant", "metric", "scope", "figure", "tier", "source"]


def _figure_rows(entries: list[dict[str, Any]], state: str | None = None) -> list[list[Any]]:
    rows = []
    for e in entries:
        current = e if state is None else e[state]
        rows.append(
            [
                _name(e["provider"]),
                _name(e["model"]),
                variant_text(e["variant"]),
                e["metric"],
                e["scope"],
                figure_text(current),
                current.get("tier"),
                current.get("source"),
            ]
        )
    return rows


def _changed_figure_row(e: dict[str, Any]) -> list[Any]:
    tiers = (e["old"]["tier"], e["new"]["tier"])
    return [
        _name(e["provider"]),
        _name(e["model"]),
        variant_text(e["variant"]),
        e["metric"],
        e["scope"],
        figure_text(e["old"]),
        figure_text(e["new"]),
        percent_text(e["relative_change"]),
        tiers[0] if tiers[0] == tiers[1] else f"{tiers[0]} -> {tiers[1]}",
        e["new"]["source"],
    ]


def obtained(snapshot: dict[str, Any]) -> str | None:
    """How a cited snapshot came, as the changelog says it: `fetched`, or `reconstructed from
    <document>` (never shown as a capture)."""
    document = snapshot.get("reconstructed_from")
    if snapshot.get("obtained_by") == "reconstructed" and isinstance(document, dict):
        return f"reconstructed from {document.get('title')}"
    return snapshot.get("obtained_by")


def _snapshot_change_row(change: dict[str, Any]) -> list[Any]:
    # only what differs: the snapshots both releases cite would hide the change
    old_records = {s["id"]: s for s in change["old"]}
    new_ids = {s["id"] for s in change["new"]}
    dropped = [s["id"] for s in change["old"] if s["id"] not in new_ids]
    cited = [s for s in change["new"] if old_records.get(s["id"]) != s]  # new, or re-described
    return [
        change["source"],
        ", ".join(dropped) or None,
        ", ".join(s["id"] for s in cited if s["id"] not in old_records) or None,
        "; ".join(f"{s['id']}: {obtained(s)}" for s in cited) or None,
    ]


def _sections(changes: dict[str, Any]) -> Iterator[tuple[str, list[str], list[list[Any]]]]:
    """(title, columns, rows) of every section of a changelog, in order; empty ones included
    (the template leaves them out)."""
    yield (
        "Headlines changed",
        ["provider", "before", "after", "change"],
        [
            [
                _name(h["provider"]),
                (h["old"] or {}).get("display"),
                (h["new"] or {}).get("display"),
                headline_change_text(h),
            ]
            for h in changes["headlines"]
        ],
    )
    figure = changes["figures"]
    yield (
        "Figures changed",
        [*FIGURE_COLUMNS[:5], "before", "after", "change", "tier", "source"],
        [_changed_figure_row(e) for e in figure["changed"]],
    )
    yield "Figures added", FIGURE_COLUMNS, _figure_rows(figure["added"])
    yield "Figures removed", FIGURE_COLUMNS, _figure_rows(figure["removed"])
    stale = changes["stale"]
    yield "Newly stale figures", FIGURE_COLUMNS, _figure_rows(stale["newly_stale"], "new")
    yield "Figures fresh again", FIGURE_COLUMNS, _figure_rows(stale["fresh_again"], "new")
    for section, title, columns in (
        ("providers", "Providers", ["id", "name"]),
        ("models", "Models", ["id", "name"]),
        ("platforms", "Platforms", ["id", "name", "kind"]),
        ("catalogue", "Catalogue entries", ["platform", "task", "id", "name"]),
        ("sources", "Sources", ["id", "publisher", "tier"]),
    ):
        for key in ("added", "removed"):
            entries = changes[section][key]
            yield f"{title} {key}", columns, [[e.get(c) for c in columns] for e in entries]
    for key in ("added", "removed"):
        yield (
            f"Claims {key}",
            ["provider", "model", "figure", "scope", "verified by"],
            [
                [_name(c["provider"]), _name(c["model"]), c["figure"], c["scope"], c["verified_by"]]
                for c in changes["claims"][key]
            ],
        )
    for section, key, title in (
        ("claims", "changed", "Claims changed"),
        ("platforms", "changed", "Platforms changed"),
        ("catalogue", "changed", "Catalogue entries changed"),
        ("sources", "tier_changed", "Source tiers changed"),
    ):
        yield (
            title,
            ["id", "field", "before", "after"],
            [
                [e["id"], d["field"], d["old"], d["new"]]
                for e in changes[section][key]
                for d in e["changes"]
            ],
        )
    snapshots = changes.get("snapshots") or {}
    yield (
        "Cited snapshots changed",
        ["source", "no longer cited", "now cited", "how the cited ones were obtained"],
        [_snapshot_change_row(c) for c in snapshots.get("changed") or []],
    )
    for key in ("added", "removed"):
        yield (
            f"Cited snapshots {key}",
            ["source", "snapshot", "retrieved", "obtained by"],
            [
                [s.get("source"), s["id"], day(s.get("retrieved_at")), obtained(s)]
                for s in snapshots.get(key) or []
            ],
        )


def _tables(changes: dict[str, Any]) -> list[tuple[str, str]]:
    """Every section of a changelog that has rows: its title and its table, escaped."""
    return [
        (title, table_text(columns, rows)) for title, columns, rows in _sections(changes) if rows
    ]


def reobserved_count(changes: dict[str, Any]) -> int:
    return 0 if changes["first_release"] else changes["figures"]["reobserved_unchanged"]


def render_markdown(changes: dict[str, Any]) -> str:
    """CHANGELOG.md of a release: every section that has something in it. Every value the
    template writes is Markdown-escaped (templates.escape_markdown)."""
    to, old = changes["to"], changes["from"]
    first = changes["first_release"]
    return render_markdown_template(
        "changelog.md.jinja",
        to=to | {"data_day": day(to["data_date"]), "as_of_day": day(to.get("as_of"))},
        old=old | {"data_day": day(old["data_date"])} if old else None,
        first_release=first,
        contents=table_text(
            ["what", "count"], [[k.replace("_", " "), v] for k, v in changes["contents"].items()]
        ),
        summary=None if first else summary_line(changes),
        schema_changed=not first and changes["schema_version_changed"],
        sections=[] if first else _tables(changes),
        reobserved=_plural(count, "figure") if (count := reobserved_count(changes)) else None,
        notes=[note["text"] for note in changes.get("notes") or ()],
    )
