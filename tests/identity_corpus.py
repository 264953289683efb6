"""Test helpers for the identity rules on the real captures: every model and provider label the
bundled corpus stages (and OpenRouter's July 2026 catalogue, a fixture the corpus does not hold),
resolved as a build resolves them, and the measure of near-duplicate ids.

`label_uses_of` counts labels from parsed frames the way label_uses.py counts them in the
warehouse (the most used display name and hints per label), so the resolution runs through the
same pure function as a build (labels.resolve_uses) without a warehouse.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from functools import cache

import pandas as pd
from near_duplicates import Measure, loose_key, measure, near_duplicate_groups
from test_parse_support import BUNDLED, FIXTURES, REVIEWED, SOURCES, bundled, parse

from pipeline.extract import SnapshotInput
from pipeline.normalise.entities import Resolver
from pipeline.normalise.identity import Hints
from pipeline.normalise.labels import LABEL_COLUMNS, LabelColumn, LabelUse, resolve_uses
from pipeline.support.settings import BUNDLED_METADATA

__all__ = ["Measure", "loose_key", "measure", "near_duplicate_groups"]

FRONTEND_CATALOGUE = FIXTURES / "openrouter" / "frontend-catalog-20260718T074000Z.json.gz"
FRONTEND_SNAPSHOT = "openrouter/frontend-catalog-20260718T074000Z"


@cache
def bundled_frames() -> dict[str, pd.DataFrame]:
    """Every staged frame of every committed snapshot of the bundled corpus."""
    parts: dict[str, list[pd.DataFrame]] = defaultdict(list)
    for source_id, source in SOURCES.items():
        for meta in BUNDLED.list(source_id):
            snapshot = SnapshotInput(meta, source, BUNDLED.read(meta), REVIEWED)
            for name, frame in parse(snapshot).items():
                parts[name].append(frame)
    return {name: pd.concat(frames, ignore_index=True) for name, frames in parts.items()}


@cache
def frontend_catalogue() -> pd.DataFrame:
    """OpenRouter's catalogue as its website's statistics captures served it on 2026-07-18 (344
    models), read by the same parser as the bundled May 2026 catalogue."""
    data = gzip.decompress(FRONTEND_CATALOGUE.read_bytes())
    frame = parse(bundled("openrouter"), data)["catalogue_entries"]
    return frame.assign(snapshot_id=FRONTEND_SNAPSHOT)


def corpus_frames(*, with_frontend: bool = True) -> dict[str, pd.DataFrame]:
    frames = dict(bundled_frames())
    if with_frontend:
        frames["catalogue_entries"] = pd.concat(
            [frames["catalogue_entries"], frontend_catalogue()], ignore_index=True
        )
    return frames


def _best(counter: Counter[object]) -> object:
    """The most used value, ties broken by text (label_uses.py's arg_min(-uses, value))."""
    return min(counter.items(), key=lambda item: (-item[1], str(item[0])))[0]


def label_uses_of(
    frames: Mapping[str, pd.DataFrame], specs: Iterable[LabelColumn] = LABEL_COLUMNS
) -> list[LabelUse]:
    """The distinct labels of each staged column, as label_uses.py counts them."""
    uses: list[LabelUse] = []
    for spec in specs:
        frame = frames.get(spec.table)
        if frame is None or spec.column not in frame:
            continue
        frame = frame[frame[spec.column].notna()]
        names: dict[str, Counter[object]] = defaultdict(Counter)
        hints: dict[str, Counter[object]] = defaultdict(Counter)
        sources: dict[str, set[str]] = defaultdict(set)
        counts: Counter[str] = Counter()
        for row in frame.to_dict("records"):
            label = row[spec.column]
            counts[label] += 1
            sources[label].add(row["source_id"])
            if spec.name_column and isinstance(row.get(spec.name_column), str):
                names[label][row[spec.name_column]] += 1
            values = {hint: row.get(column) for hint, column in spec.hints}
            found = Hints.of({k: v for k, v in values.items() if isinstance(v, str)})
            if spec.hints:
                hints[label][found] += 1
        for label, count in counts.items():
            uses.append(
                LabelUse(
                    spec=spec,
                    label=label,
                    name=_best(names[label]) if names[label] else None,  # type: ignore[arg-type]
                    hints=_best(hints[label]) if hints[label] else Hints(),  # type: ignore[arg-type]
                    sources=tuple(sorted(sources[label])),
                    uses=count,
                )
            )
    return uses


@cache
def resolver() -> Resolver:
    return Resolver.load(BUNDLED_METADATA)


def resolutions(frames: Mapping[str, pd.DataFrame], fresh: bool = False) -> pd.DataFrame:
    """The build's resolution table for these frames (labels.resolve_uses)."""
    chosen = Resolver.load(BUNDLED_METADATA) if fresh else resolver()
    platforms = REVIEWED.platforms
    return resolve_uses(chosen, platforms, label_uses_of(frames))


@cache
def corpus_resolutions() -> pd.DataFrame:
    return resolutions(corpus_frames())


def model_ids(table: pd.DataFrame) -> list[str]:
    """The model ids a resolution table puts the model labels on."""
    models = table[(table["kind"] == "model") & table["entity_id"].notna()]
    return list(models["entity_id"])


def aa_rows(frames: Mapping[str, pd.DataFrame]) -> list[dict[str, object]]:
    return frames["aa_models"].to_dict("records")


def load_json(path: str) -> object:
    return json.loads((FIXTURES / path).read_text(encoding="utf-8"))
