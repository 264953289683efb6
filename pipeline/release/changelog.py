"""What changed between two releases, computed from their export documents alone.

Pure functions: `compare(old, new)` takes the three export documents of each release (`old` is
None for the first release) and returns the changes as a JSON-ready dict (written as
changes.json); `render_markdown` writes it for people (CHANGELOG.md) and `summary_line` in one
line. Working only from the exports means any two published folders can be compared, whatever
warehouse built them.

A figure is identified by endpoint (provider x model x variant), metric and scope. It *changed*
when its value, bounds, qualifier, unit or tier differ; a newer observation of the same figure is
counted as re-observed, not listed. Provenance counts too: a source whose cited snapshots differ
(a re-captured page with the same figures) is listed, so such a release never says "no content
changed".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Documents = dict[str, dict[str, Any]]
FigureKey = tuple[str, str, str]  # (endpoint, metric, scope)

INFERENCE = "inference.json"
PLATFORMS = "model_platforms.json"
CATALOG = "inference_catalog.json"
FIGURE_FIELDS = ("value", "low", "high", "qualifier", "unit", "tier")
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


# --- reading the documents ----------------------------------------------------------------------


def release_info(documents: Documents) -> dict[str, Any]:
    head = documents[INFERENCE]
    return {
        "version": head.get("version"),
        "data_date": head.get("data_date"),
        "as_of": head.get("as_of"),
        "schema_version": head.get("schema_version"),
    }


def endpoint_id(provider_id: str, model_id: str | None, variant: dict[str, Any]) -> str:
    """Spelled like core.endpoint_id, so changes join the warehouse's tables."""
    return "/".join(
        [
            provider_id,
            model_id or "-",
            variant.get("precision") or "unknown",
            variant.get("service_tier") or "standard",
            variant.get("reasoning_effort") or "-",
        ]
    )


def _figure(provider: dict[str, Any], figure: dict[str, Any]) -> dict[str, Any]:
    model = figure.get("model") or {}
    source = figure.get("source") or {}
    return {
        "endpoint": endpoint_id(provider["id"], model.get("id"), figure.get("variant") or {}),
        "provider": {"id": provider["id"], "name": provider.get("name")},
        "model": {"id": model.get("id"), "name": model.get("name")},
        "variant": figure.get("variant"),
        "metric": figure.get("metric"),
        "scope": figure.get("scope"),
        "value": figure.get("value"),
        "low": figure.get("low"),
        "high": figure.get("high"),
        "qualifier": figure.get("qualifier"),
        "unit": figure.get("unit"),
        "tier": figure.get("tier"),
        "stale": bool(figure.get("stale")),
        "observed_at": figure.get("observed_at"),
        "retrieved_at": source.get("retrieved_at"),
        "source": source.get("id"),
        "snapshot": source.get("snapshot"),
    }


def _key(row: dict[str, Any]) -> FigureKey:
    return row["endpoint"], row["metric"], row["scope"]


def figure_key(provider: dict[str, Any], figure: dict[str, Any]) -> FigureKey:
    """What identifies a figure (a live figure or a headline) of a provider of inference.json."""
    return _key(_figure(provider, figure))


def figures(documents: Documents) -> dict[FigureKey, dict[str, Any]]:
    """Every live figure of inference.json, by (endpoint, metric, scope), in document order. The
    one reader of live figures: changelogs and the warehouse's history both use it."""
    found = {}
    for provider in documents[INFERENCE].get("providers", []):
        for figure in provider.get("live_figures", []):
            row = _figure(provider, figure)
            found[_key(row)] = row
    return found


def providers(documents: Documents) -> dict[str, dict[str, Any]]:
    return {
        p["id"]: {"id": p["id"], "name": p.get("name"), "display": p.get("display")}
        for p in documents[INFERENCE].get("providers", [])
    }


def models(documents: Documents) -> dict[str, dict[str, Any]]:
    """Every model inference.json mentions: in a headline, figure, context figure or claim."""
    found: dict[str, dict[str, Any]] = {}
    for provider in documents[INFERENCE].get("providers", []):
        items = [provider.get("headline") or {}]
        items += provider.get("live_figures", []) + provider.get("context", [])
        items += provider.get("claims", [])
        for item in items:
            model = item.get("model")
            if model and model.get("id"):
                found.setdefault(model["id"], {"id": model["id"], "name": model.get("name")})
    return found


def platforms(documents: Documents) -> dict[str, dict[str, Any]]:
    found = {}
    for platform in documents[PLATFORMS].get("platforms", []):
        stated = platform.get("stated_count") or {}
        listed = platform.get("listed_models") or {}
        found[platform["id"]] = {
            "id": platform["id"],
            "name": platform.get("name"),
            "owner": platform.get("owner"),
            "kind": platform.get("kind"),
            "stated_count": stated.get("text"),
            "stated_count_tier": stated.get("tier"),
            "listed_models": listed.get("count"),
        }
    return found


def catalogue(documents: Documents) -> dict[tuple[str, str], dict[str, Any]]:
    """Every entry of the edge catalogue, by (platform, entry id)."""
    document = documents[CATALOG]
    platform = (document.get("platform") or {}).get("id") or "-"
    found = {}
    for task in document.get("tasks", []):
        for entry in task.get("models", []):
            found[(platform, entry["id"])] = {
                "platform": platform,
                "id": entry["id"],
                "task": task.get("name"),
                **{k: entry.get(k) for k in CATALOGUE_FIELDS if k != "task"},
            }
    return found


def claims(documents: Documents) -> dict[str, dict[str, Any]]:
    found = {}
    for provider in documents[INFERENCE].get("providers", []):
        for claim in provider.get("claims", []):
            model = claim.get("model") or {}
            found[claim["id"]] = {
                "id": claim["id"],
                "provider": {"id": provider["id"], "name": provider.get("name")},
                "model": {"id": model.get("id"), "name": model.get("name")},
                **{k: claim.get(k) for k in CLAIM_FIELDS},
            }
    return found


def _source_refs(value: Any) -> Iterable[dict[str, Any]]:
    """Every dict under a `source` or `sources` key that names a source id and tier."""
    if isinstance(value, dict):
        for key, child in value.items():
            if key == "source" and isinstance(child, dict) and "tier" in child:
                yield child
            elif key == "sources" and isinstance(child, list):
                yield from (c for c in child if isinstance(c, dict) and "tier" in c)
            yield from _source_refs(child)
    elif isinstance(value, list):
        for child in value:
            yield from _source_refs(child)


def sources(documents: Documents) -> dict[str, dict[str, Any]]:
    """Every source a release cites, with its publisher and tier."""
    found: dict[str, dict[str, Any]] = {}
    for name in sorted(documents):
        for ref in _source_refs(documents[name]):
            if ref.get("id"):
                found.setdefault(
                    ref["id"],
                    {"id": ref["id"], "publisher": ref.get("publisher"), "tier": ref.get("tier")},
                )
    return found


def cited_snapshots(documents: Documents) -> dict[str, list[dict[str, Any]]]:
    """Every snapshot the exports cite (their `snapshots` lists), by source id, sorted by id."""
    by_id: dict[str, dict[str, Any]] = {}
    for name in sorted(documents):
        for snapshot in documents[name].get("snapshots", []):
            by_id.setdefault(snapshot["id"], snapshot)
    found: dict[str, list[dict[str, Any]]] = {}
    for snapshot_id in sorted(by_id):
        snapshot = by_id[snapshot_id]
        found.setdefault(snapshot.get("source") or "-", []).append(snapshot)
    return found


def headline(provider: dict[str, Any] | None) -> dict[str, Any] | None:
    if provider is None or not provider.get("headline"):
        return None
    figure = provider["headline"]
    row = _figure(provider, figure)
    return {
        "display": figure.get("display"),
        "endpoint": row["endpoint"],
        "model": row["model"],
        "value": row["value"],
        "tier": row["tier"],
        "stale": row["stale"],
        "source": row["source"],
        "rule": figure.get("rule"),
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


def _added_removed(
    old: dict[Any, dict[str, Any]], new: dict[Any, dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    return {
        "added": [new[k] for k in sorted(new.keys() - old.keys())],
        "removed": [old[k] for k in sorted(old.keys() - new.keys())],
    }


def _field_changes(
    old: dict[Any, dict[str, Any]], new: dict[Any, dict[str, Any]], fields: Iterable[str]
) -> list[dict[str, Any]]:
    changed = []
    for key in sorted(old.keys() & new.keys()):
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
    for key in sorted(old.keys() & new.keys()):
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


def _compare_snapshots(old: Documents, new: Documents) -> dict[str, list[dict[str, Any]]]:
    """Provenance: `changed` lists each source cited by both releases whose cited snapshots differ
    (a re-captured page, even one with the same figures); `added` and `removed` hold the
    snapshots of sources only one release cites."""
    before, after = cited_snapshots(old), cited_snapshots(new)
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


def _compare_headlines(old: Documents, new: Documents) -> list[dict[str, Any]]:
    before = {p["id"]: p for p in old[INFERENCE].get("providers", [])}
    after = {p["id"]: p for p in new[INFERENCE].get("providers", [])}
    changed = []
    for provider_id in sorted(before.keys() & after.keys()):
        a, b = headline(before[provider_id]), headline(after[provider_id])
        if _headline_key(a) == _headline_key(b):
            continue
        changed.append(
            {
                "provider": {"id": provider_id, "name": after[provider_id].get("name")},
                "old": a,
                "new": b,
                "relative_change": relative_change(
                    a["value"] if a else None, b["value"] if b else None
                ),
            }
        )
    return changed


def _indexes(documents: Documents) -> dict[str, dict[Any, Any]]:
    """Every keyed view of a release the comparison reads, built once per release."""
    return {
        "providers": providers(documents),
        "models": models(documents),
        "figures": figures(documents),
        "claims": claims(documents),
        "platforms": platforms(documents),
        "catalogue": catalogue(documents),
        "sources": sources(documents),
    }


def _counts(documents: Documents, index: dict[str, dict[Any, Any]]) -> dict[str, int]:
    return {
        "providers": len(index["providers"]),
        "models": len(index["models"]),
        "figures": len(index["figures"]),
        "headlines": sum(1 for p in documents[INFERENCE].get("providers", []) if p.get("headline")),
        "claims": len(index["claims"]),
        "platforms": len(index["platforms"]),
        "catalogue_entries": len(index["catalogue"]),
        "sources": len(index["sources"]),
    }


def compare(old: Documents | None, new: Documents) -> dict[str, Any]:
    """The changes from release `old` to release `new` (None: `new` is the first release)."""
    after = _indexes(new)
    result: dict[str, Any] = {
        "from": release_info(old) if old else None,
        "to": release_info(new),
        "first_release": old is None,
        "contents": _counts(new, after),
    }
    if old is None:
        return result
    before = _indexes(old)
    figure_section, stale = _compare_figures(before["figures"], after["figures"])

    def added_removed(
        name: str, fields: tuple[str, ...] = (), key: str = "changed"
    ) -> dict[str, Any]:
        section = _added_removed(before[name], after[name])
        if fields:
            section[key] = _field_changes(before[name], after[name], fields)
        return section

    result |= {
        "schema_version_changed": release_info(old)["schema_version"]
        != release_info(new)["schema_version"],
        "headlines": _compare_headlines(old, new),
        "figures": figure_section,
        "stale": stale,
        "providers": added_removed("providers"),
        "models": added_removed("models"),
        "platforms": added_removed("platforms", PLATFORM_FIELDS),
        "catalogue": added_removed("catalogue", CATALOGUE_FIELDS),
        "claims": added_removed("claims", CLAIM_FIELDS),
        "sources": added_removed("sources", ("tier",), key="tier_changed"),
        "snapshots": _compare_snapshots(old, new),
    }
    return result


# --- one line and Markdown ------------------------------------------------------------------------


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


def summary_line(changes: dict[str, Any]) -> str:
    """What changed, in one line: '3 figures changed, 2 added; 1 headline changed; ...'."""
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
    if not parts:
        reobserved = figure["reobserved_unchanged"]
        if not reobserved and not provenance:
            return "no content changed"
        # "no figure changed" alone would hide that the release cites other snapshots
        parts.append(
            f"no figure changed ({_plural(reobserved, 'figure')} re-observed)"
            if reobserved
            else "no figure changed"
        )
    if provenance:
        parts.append(", ".join(provenance))
    return "; ".join(parts)


def number_text(value: float) -> str:
    return f"{value:,}"


def figure_text(state: dict[str, Any] | None) -> str:
    """'321.0 tokens/s', '~2,314.0 tokens/s', '35.0–434.0 tokens/s' (stale marked)."""
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


def cell(value: Any) -> str:
    """A Markdown table cell: no pipes or line breaks from the data."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = str(value).replace("\\", "\\\\").replace("|", "\\|")
    return " ".join(text.split())


def markdown_table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table, every cell escaped, followed by a blank line."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return [*lines, ""]


def variant_text(variant: dict[str, Any] | None) -> str:
    variant = variant or {}
    parts = [variant.get("precision") or "unknown", variant.get("service_tier") or "standard"]
    if variant.get("reasoning_effort"):
        parts.append(variant["reasoning_effort"])
    return ", ".join(parts)


def _name(entity: dict[str, Any] | None) -> str | None:
    if not entity:
        return None
    return entity.get("name") or entity.get("id")


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


def _date(value: str | None) -> str:
    return value[:10] if value else "—"


def render_markdown(changes: dict[str, Any]) -> str:
    """CHANGELOG.md of a release: every section that has something in it."""
    to = changes["to"]
    lines = [f"# Speedbook {to['version']}", ""]
    lines.append(
        f"Data date {_date(to['data_date'])}"
        + (f", built as of {_date(to['as_of'])}" if to.get("as_of") else "")
        + f"; export schema version {to['schema_version']}."
    )
    lines.append("")
    if changes["first_release"]:
        contents = changes["contents"]
        lines += [
            "This is the first release: there is no earlier release to compare it with.",
            "",
            *markdown_table(
                ["what", "count"], [[k.replace("_", " "), v] for k, v in contents.items()]
            ),
        ]
        return "\n".join(lines).rstrip("\n") + "\n"
    old = changes["from"]
    lines += [
        f"Changes from release {old['version']} (data date {_date(old['data_date'])}): "
        f"{summary_line(changes)}.",
        "",
    ]
    if changes["schema_version_changed"]:
        lines += [
            f"The export schema changed from {old['schema_version']} to {to['schema_version']}.",
            "",
        ]
    if changes["headlines"]:
        lines += ["## Headlines changed", ""]
        lines += markdown_table(
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
    if figure["changed"]:
        lines += ["## Figures changed", ""]
        lines += markdown_table(
            [
                "provider",
                "model",
                "variant",
                "metric",
                "scope",
                "before",
                "after",
                "change",
                "tier",
                "source",
            ],
            [
                [
                    _name(e["provider"]),
                    _name(e["model"]),
                    variant_text(e["variant"]),
                    e["metric"],
                    e["scope"],
                    figure_text(e["old"]),
                    figure_text(e["new"]),
                    percent_text(e["relative_change"]),
                    e["old"]["tier"]
                    if e["old"]["tier"] == e["new"]["tier"]
                    else f"{e['old']['tier']} -> {e['new']['tier']}",
                    e["new"]["source"],
                ]
                for e in figure["changed"]
            ],
        )
    headers = ["provider", "model", "variant", "metric", "scope", "figure", "tier", "source"]
    for key, title in (("added", "Figures added"), ("removed", "Figures removed")):
        if figure[key]:
            lines += [f"## {title}", "", *markdown_table(headers, _figure_rows(figure[key]))]
    for key, title in (
        ("newly_stale", "Newly stale figures"),
        ("fresh_again", "Figures fresh again"),
    ):
        if changes["stale"][key]:
            lines += [
                f"## {title}",
                "",
                *markdown_table(headers, _figure_rows(changes["stale"][key], "new")),
            ]
    for section, title, columns in (
        ("providers", "Providers", ["id", "name"]),
        ("models", "Models", ["id", "name"]),
        ("platforms", "Platforms", ["id", "name", "kind"]),
        ("catalogue", "Catalogue entries", ["platform", "task", "id", "name"]),
        ("sources", "Sources", ["id", "publisher", "tier"]),
    ):
        for key in ("added", "removed"):
            entries = changes[section][key]
            if entries:
                lines += [f"## {title} {key}", ""]
                lines += markdown_table(columns, [[e.get(c) for c in columns] for e in entries])
    for key in ("added", "removed"):
        entries = changes["claims"][key]
        if entries:
            lines += [f"## Claims {key}", ""]
            lines += markdown_table(
                ["provider", "model", "figure", "scope", "verified by"],
                [
                    [
                        _name(c["provider"]),
                        _name(c["model"]),
                        c["figure"],
                        c["scope"],
                        c["verified_by"],
                    ]
                    for c in entries
                ],
            )
    for section, key, title, label in (
        ("claims", "changed", "Claims changed", "id"),
        ("platforms", "changed", "Platforms changed", "id"),
        ("catalogue", "changed", "Catalogue entries changed", "id"),
        ("sources", "tier_changed", "Source tiers changed", "id"),
    ):
        entries = changes[section][key]
        if entries:
            lines += [f"## {title}", ""]
            lines += markdown_table(
                [label, "field", "before", "after"],
                [[e[label], d["field"], d["old"], d["new"]] for e in entries for d in e["changes"]],
            )
    snapshots = changes.get("snapshots") or {}
    if snapshots.get("changed"):
        lines += ["## Cited snapshots changed", ""]
        rows = []
        for c in snapshots["changed"]:
            # only what differs: the snapshots both releases cite would hide the change
            old_ids, new_ids = {s["id"] for s in c["old"]}, {s["id"] for s in c["new"]}
            dropped = [s["id"] for s in c["old"] if s["id"] not in new_ids]
            cited = [s["id"] for s in c["new"] if s["id"] not in old_ids]
            rows.append([c["source"], ", ".join(dropped) or None, ", ".join(cited) or None])
        lines += markdown_table(["source", "no longer cited", "now cited"], rows)
    for key in ("added", "removed"):
        if snapshots.get(key):
            lines += [f"## Cited snapshots {key}", ""]
            lines += markdown_table(
                ["source", "snapshot", "retrieved", "obtained by"],
                [
                    [s.get("source"), s["id"], _date(s.get("retrieved_at")), s.get("obtained_by")]
                    for s in snapshots[key]
                ],
            )
    if figure["reobserved_unchanged"]:
        lines += [
            f"{_plural(figure['reobserved_unchanged'], 'figure')} re-observed with the same value.",
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"
