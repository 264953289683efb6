"""A synthetic corpus for benchmarking the build, written in the real formats the parsers read.

`generate(spec, root)` writes into `root`:
- `raw/`: a snapshot store holding one Artificial Analysis-style provider page per model per day
  (P endpoints each, some labelled with variants such as `(FP8)` or `(Turbo, FP8)`), one
  Cloudflare-style catalogue response and one compilation page whose provider table cites the
  synthetic T1 pages;
- `registry.toml`: one source per model page, plus the catalogue and the compilation;
- `metadata/`: the bundled reviewed tables with the synthetic providers, models and their aliases
  appended, so every label in the corpus resolves (the build reads it when told to).

Every figure is invented and every snapshot's provenance note says so; hosts are under the
reserved `.invalid` domain. Output depends only on the spec: each page draws from its own
`random.Random` seeded by (seed, model, day), so `add_day` writes the same bytes a longer
`generate` would have, and two runs with one seed give identical files.

Pages are rendered by string formatting and added to the store as they are made (nothing is
held), through its public API (`pipeline.raw.store.open_store(...).add`).
"""

from __future__ import annotations

import csv
import json
import random
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from pipeline.raw.store import open_store
from pipeline.support.settings import BUNDLED_METADATA

HOST = "https://bench.speedbook.invalid"
PUBLISHER = "Speedbook bench (synthetic)"
AA_FORMAT = "aa_provider_page"
CATALOGUE_SOURCE = "bench-catalogue"
COMPILATION_SOURCE = "bench-compilation"
PLATFORM_ID = "bench-platform"
HTML_TYPE = "text/html; charset=utf-8"
JSON_TYPE = "application/json"

# Variant markers an endpoint label may carry, with how often they are drawn and what they do to
# speed: the variant parser must read each of them off the label.
_VARIANTS: tuple[tuple[str, float, float], ...] = (
    ("", 0.70, 1.0),
    (" (FP8)", 0.15, 1.2),
    (" (Turbo)", 0.08, 1.4),
    (" (Turbo, FP8)", 0.07, 1.6),
)
_REASONING_EVERY = 4  # models 2, 6, 10, ... are measured at high reasoning effort: "Model 2 (high)"
_BASE_SPEED = 110.0  # tokens/s of an average provider on an average model
_SPEED_RANGE = (8.0, 3500.0)


@dataclass(frozen=True)
class CorpusSpec:
    models: int
    providers: int
    days: int
    seed: int = 1729
    start: date = date(2026, 1, 1)

    def __post_init__(self) -> None:
        for name in ("models", "providers", "days"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                # starts with the field's name: `the benchmark` shows it as its --option
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")


@dataclass(frozen=True)
class Corpus:
    root: Path  # raw/ (a snapshot store), registry.toml, metadata/ (the alias tables)
    registry: Path
    raw_dir: Path
    metadata_dir: Path
    pages: int  # Artificial Analysis-style pages written
    endpoints: int  # endpoint rows across those pages (= observations of output speed)
    snapshots: int  # every snapshot written: the pages, the catalogue and the compilation


@dataclass(frozen=True)
class _Endpoint:
    provider: int
    name: str  # "Provider 7"
    label: str  # as the page writes it: "Provider 7 (Turbo, FP8)"
    speed: float  # tokens/s on day 0
    drift: float  # relative change of speed per day
    ttft: float  # seconds on day 0
    price: float | None  # blended USD per 1M tokens; None where the page leaves it blank
    row_head: str  # the page's row up to the day's figures, rendered once
    row_tail: str  # and after them


@dataclass(frozen=True)
class _Model:
    number: int
    page_name: str  # the page heading's model: "Model 7", or "Model 2 (high)"
    endpoints: tuple[_Endpoint, ...]


def provider_name(number: int) -> str:
    return f"Provider {number}"


def model_name(number: int) -> str:
    return f"Model {number}"


def aa_source_id(model: int) -> str:
    return f"bench-aa-model-{model}"


def aa_url(model: int) -> str:
    return f"{HOST}/models/model-{model}/providers"


def day_time(spec: CorpusSpec, day_index: int) -> datetime:
    return datetime.combine(spec.start + timedelta(days=day_index), time(), tzinfo=UTC)


def _plan(spec: CorpusSpec) -> list[_Model]:
    """Every model's endpoints with their day-0 figures; small (models x providers) and cheap."""
    providers = []
    for p in range(1, spec.providers + 1):
        rng = random.Random(f"{spec.seed}/provider/{p}")
        providers.append(
            (rng.lognormvariate(0, 0.6), rng.uniform(0.15, 1.2), rng.uniform(0.8, 1.5))
        )
    models = []
    for m in range(1, spec.models + 1):
        rng = random.Random(f"{spec.seed}/model/{m}")
        size, base_price = rng.lognormvariate(0, 0.5), rng.uniform(0.1, 4.0)
        endpoints = []
        for p, (fast, ttft, markup) in enumerate(providers, start=1):
            rng = random.Random(f"{spec.seed}/endpoint/{m}/{p}")
            pick, cumulative = rng.random(), 0.0
            marker, boost = _VARIANTS[-1][0], _VARIANTS[-1][2]
            for candidate, share, factor in _VARIANTS:
                cumulative += share
                if pick < cumulative:
                    marker, boost = candidate, factor
                    break
            if m == 1:  # every marker on the first page, however small the corpus
                marker, _, boost = _VARIANTS[-p % len(_VARIANTS)]
            speed = _BASE_SPEED * fast * size * boost * rng.lognormvariate(0, 0.15)
            drift = rng.uniform(-0.0005, 0.001)
            latency = ttft * size**0.3 * rng.lognormvariate(0, 0.2)
            price = base_price * markup * rng.uniform(0.9, 1.1)
            listed = rng.random() >= 0.05
            endpoints.append(
                _Endpoint(
                    provider=p,
                    name=provider_name(p),
                    label=provider_name(p) + marker,
                    speed=min(max(speed, _SPEED_RANGE[0]), _SPEED_RANGE[1]),
                    drift=drift,
                    ttft=latency,
                    price=price if listed else None,
                    row_head=_AA_ROW_HEAD.format(
                        name=provider_name(p), label=provider_name(p) + marker
                    ),
                    row_tail=_AA_ROW_TAIL.format(price=f"${price:.2f}" if listed else "—"),
                )
            )
        name = model_name(m) + (" (high)" if m % _REASONING_EVERY == 2 else "")
        models.append(_Model(m, name, tuple(endpoints)))
    return models


def _day_figures(
    spec: CorpusSpec, model: _Model, day_index: int
) -> list[tuple[_Endpoint, float, float | None]]:
    """(endpoint, speed, ttft) on one day, fastest first, as the page lists them."""
    rng = random.Random(f"{spec.seed}/page/{model.number}/{day_index}")
    rows = []
    draw = rng.random
    for endpoint in model.endpoints:
        # Triangular noise (+-8% speed, +-15% TTFT): cheap, and a page needs 40 draws.
        noise = 1 + 0.08 * (draw() - draw())
        latency_noise = 1 + 0.15 * (draw() - draw())
        blank = draw()
        trend = max(0.2, 1 + endpoint.drift * day_index)
        speed = round(max(1.0, endpoint.speed * trend * noise), 1)
        ttft = None if blank < 0.03 else round(max(0.01, endpoint.ttft * latency_noise), 2)
        rows.append((endpoint, speed, ttft))
    rows.sort(key=lambda row: (-row[1], row[0].provider))
    return rows


def _english_list(names: list[str]) -> str:
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + ", and " + names[-1]


_AA_HEAD = """<!DOCTYPE html>
<html lang="en">
<!-- Synthetic page written by the benchmark: every figure is invented. -->
<head>
  <meta charset="utf-8"/>
  <title>{model}: API Provider Benchmarking &amp; Analysis | Artificial Analysis</title>
  <meta name="description" content="Analysis of API providers for {model} across performance \
metrics including latency (time to first token), output speed (output tokens per second), price \
and others."/>
</head>
<body>
  <main>
    <h1>{model} API Provider Benchmarking &amp; Analysis</h1>
    <p>Analysis of API providers for {model} across performance metrics including latency (time to \
first token), output speed (output tokens per second), price and others. API providers benchmarked \
include {providers}.</p>
    <section id="comparison-summary">
      <h2>Comparison Summary</h2>
      <table>
        <thead>
          <tr>
            <th>API Provider</th>
            <th>Output Speed (tokens/s)</th>
            <th>Latency (TTFT)</th>
            <th>Blended Price ($/M tokens)</th>
          </tr>
        </thead>
        <tbody>
"""
# A row is rendered around its day's figures: head and tail once per endpoint.
_AA_ROW_HEAD = """        <tr>
          <td><img alt="{name} logo" src="/img/logos/provider.svg"/><span>{label}</span></td>
          <td>"""
_AA_ROW_TAIL = """</td>
          <td>{price}</td>
        </tr>
"""
_AA_TAIL = """        </tbody>
      </table>
      <p class="footnote">Median: Figures represent median (P50) measurement over the past 72 \
hours, sampled multiple times per day. Price is a blend of Input &amp; Output token prices (3:1 \
ratio).</p>
    </section>
  </main>
</body>
</html>
"""


def _render_aa_page(spec: CorpusSpec, model: _Model, day_index: int) -> bytes:
    rows = _day_figures(spec, model, day_index)
    names = [endpoint.name for endpoint, _, _ in rows]
    parts = [_AA_HEAD.format(model=model.page_name, providers=_english_list(names))]
    for endpoint, speed, ttft in rows:
        ttft_text = "—" if ttft is None else f"{ttft:.2f}"
        parts.append(
            f"{endpoint.row_head}{speed:.1f}</td>\n          <td>{ttft_text}{endpoint.row_tail}"
        )
    parts.append(_AA_TAIL)
    return "".join(parts).encode("utf-8")


def _aa_note(spec: CorpusSpec, day_index: int) -> str:
    return (
        f"Synthetic page written by the benchmark (seed {spec.seed}, day {day_index + 1}): "
        "every figure is invented for benchmarking the build and describes no real provider."
    )


def _render_catalogue(spec: CorpusSpec) -> bytes:
    """A Workers AI /ai/models/search response listing every synthetic model."""
    result = []
    for m in range(1, spec.models + 1):
        rng = random.Random(f"{spec.seed}/catalogue/{m}")
        properties: list[dict[str, object]] = [
            {"property_id": "context_window", "value": str(rng.choice((8192, 32768, 131072)))}
        ]
        if rng.random() < 0.4:
            properties.append({"property_id": "function_calling", "value": "true"})
        if rng.random() < 0.5:
            price_in = round(rng.uniform(0.02, 1.0), 3)
            properties.append(
                {
                    "property_id": "price",
                    "value": [
                        {"unit": "per M input tokens", "price": price_in, "currency": "USD"},
                        {
                            "unit": "per M output tokens",
                            "price": round(price_in * 3, 3),
                            "currency": "USD",
                        },
                    ],
                }
            )
        # Every third model is served quantised; the `-fp8` suffix is read as its precision.
        suffix = "-fp8" if m % 3 == 0 else ""
        result.append(
            {
                "name": f"@cf/bench/model-{m}{suffix}",
                "task": {"name": "Text Generation"},
                "properties": properties,
            }
        )
    document = {"success": True, "errors": [], "messages": [], "result": result}
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


_COMPILATION_HEAD = """<!DOCTYPE html>
<html lang="en">
<!-- Synthetic page written by the benchmark: every figure is invented. -->
<head>
  <meta charset="utf-8"/>
  <title>Inference throughput · tokens per second · Speedbook bench (synthetic)</title>
  <link rel="canonical" href="{url}"/>
</head>
<body>
  <main>
    <h1>Inference throughput</h1>
    <p>Output speed per provider on the synthetic benchmark pages, tagged with the model \
measured. Bars show the headline number; the table carries the sourcing.</p>
    <section id="providers">
      <h2>{count} rows</h2>
      <table>
        <thead>
          <tr><th>name</th><th>country</th><th>type</th><th>throughput</th><th>src</th></tr>
        </thead>
        <tbody>
"""
_COMPILATION_ROW = """        <tr>
          <td>{name}</td>
          <td>—</td>
          <td>inference_api</td>
          <td>~{figure:,} t/s· {model}{context}</td>
          <td><a href="{cited}">↗ T1</a><a href="{site}">↗{short}</a></td>
        </tr>
"""
_COMPILATION_TAIL = """        </tbody>
      </table>
    </section>
  </main>
</body>
</html>
"""


def _render_compilation(spec: CorpusSpec, plan: list[_Model], day_index: int) -> bytes:
    """One row per provider: its speed on Model 1 that day, with a context figure that is true of
    the same day's pages (its best model, or its range across models)."""
    speeds: dict[int, list[tuple[float, _Model]]] = {p: [] for p in range(1, spec.providers + 1)}
    for model in plan:
        for endpoint, speed, _ in _day_figures(spec, model, day_index):
            speeds[endpoint.provider].append((speed, model))
    reference = plan[0]
    parts = [_COMPILATION_HEAD.format(url=f"{HOST}/compilation/inference/", count=spec.providers)]
    for p, figures in speeds.items():
        headline = next(speed for speed, model in figures if model is reference)
        fastest, fastest_model = max(figures, key=lambda item: (item[0], -item[1].number))
        slowest = min(speed for speed, _ in figures)
        if len(plan) == 1:
            context = ""
        elif p % 3 == 0:
            context = f" ({round(slowest):,}–{round(fastest):,} t/s across models)"
        else:
            # The model without its "(high)": the parser reads one parenthetical, not nested.
            context = f" (up to {round(fastest):,} t/s on {model_name(fastest_model.number)})"
        name = provider_name(p) + (" Cloud" if p % 2 == 0 else "")
        parts.append(
            _COMPILATION_ROW.format(
                name=name,
                figure=round(headline),
                model=reference.page_name,
                context=context,
                cited=aa_url(reference.number),
                site=f"https://provider-{p}.bench.speedbook.invalid",
                short=name[:7],
            )
        )
    parts.append(_COMPILATION_TAIL)
    return "".join(parts).encode("utf-8")


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _registry_entry(fields: dict[str, str]) -> str:
    lines = ["[[source]]"] + [f"{key} = {_toml_string(value)}" for key, value in fields.items()]
    return "\n".join(lines) + "\n\n"


def write_registry(spec: CorpusSpec, path: Path) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        handle.write(
            "# Synthetic registry written by the benchmark: every source below is invented.\n"
            f"# models={spec.models} providers={spec.providers} days={spec.days} "
            f"seed={spec.seed} start={spec.start.isoformat()}\n\n"
        )
        for m in range(1, spec.models + 1):
            handle.write(
                _registry_entry(
                    {
                        "id": aa_source_id(m),
                        "kind": "benchmark",
                        "publisher": PUBLISHER,
                        "title": f"{model_name(m)}: API provider benchmarking (synthetic)",
                        "url": aa_url(m),
                        "tier": "T1",
                        "format": AA_FORMAT,
                        "cadence": "weekly",
                        "notes": "Synthetic Artificial Analysis-style page, one per day.",
                    }
                )
            )
        handle.write(
            _registry_entry(
                {
                    "id": CATALOGUE_SOURCE,
                    "kind": "platform_doc",
                    "publisher": PUBLISHER,
                    "title": "Model catalogue (synthetic, Workers AI format)",
                    "url": f"{HOST}/catalogue/models/search",
                    "tier": "T1",
                    "format": "cloudflare_models",
                    "cadence": "weekly",
                }
            )
        )
        handle.write(
            _registry_entry(
                {
                    "id": COMPILATION_SOURCE,
                    "kind": "compilation",
                    "publisher": PUBLISHER,
                    "title": "Inference throughput (synthetic compilation)",
                    "url": f"{HOST}/compilation/inference/",
                    "tier": "T2",
                    "format": "compilation_page",
                    "cadence": "monthly",
                }
            )
        )


def _append_csv(path: Path, rows: Iterator[tuple[str, ...]]) -> None:
    text = path.read_text(encoding="utf-8")
    with path.open("a", encoding="utf-8", newline="") as handle:
        if text and not text.endswith("\n"):
            handle.write("\n")
        csv.writer(handle, lineterminator="\n").writerows(rows)


def copy_bundled_metadata(directory: Path) -> None:
    """The bundled reviewed tables, into a new folder; not the registry (a corpus has its own)."""
    directory.mkdir(parents=True)
    for path in sorted(BUNDLED_METADATA.iterdir()):
        if path.suffix in (".csv", ".toml") and path.name != "sources.toml":
            shutil.copyfile(path, directory / path.name)


def write_metadata(spec: CorpusSpec, directory: Path) -> None:
    """The bundled reviewed tables plus the synthetic entities. The registry is not copied: the
    corpus has its own."""
    copy_bundled_metadata(directory)
    note = "synthetic (the benchmark)"
    providers = range(1, spec.providers + 1)
    models = range(1, spec.models + 1)
    _append_csv(
        directory / "providers.csv",
        (
            (
                f"bench-provider-{p}",
                provider_name(p),
                "",
                "inference_api",
                f"https://provider-{p}.bench.speedbook.invalid",
                note,
            )
            for p in providers
        ),
    )
    _append_csv(
        directory / "provider_aliases.csv",
        (
            row
            for p in providers
            for row in (
                (provider_name(p), f"bench-provider-{p}", note),
                (f"{provider_name(p)} Cloud", f"bench-provider-{p}", f"compilation name; {note}"),
            )
        ),
    )
    _append_csv(
        directory / "models.csv",
        ((f"bench-model-{m}", model_name(m), "", "", note) for m in models),  # creator, family
    )
    # One alias covers the page heading ("Model 7"), the catalogue's "model-7" (same key) and the
    # compilation's labels; variant markers are read off before lookup.
    _append_csv(
        directory / "model_aliases.csv",
        ((model_name(m), f"bench-model-{m}", note) for m in models),
    )
    with (directory / "platforms.toml").open("a", encoding="utf-8") as handle:
        handle.write(
            "\n[[platform]]\n"
            f'id = "{PLATFORM_ID}"\n'
            'name = "Bench Platform"\n'
            f"owner = {_toml_string(PUBLISHER)}\n"
            'kind = "edge_hosted"\n'
            'aliases = ["Bench Platform"]\n'
            f'doc_source = "{CATALOGUE_SOURCE}"\n'
            f'catalogue_sources = ["{CATALOGUE_SOURCE}"]\n'
            'catalogue_scope = "every synthetic model"\n'
            f'stated_count = "{spec.models} models"\n'
            'notable = ["synthetic models for the benchmark"]\n'
        )


class StoreWriter:
    """Adds snapshots through the snapshot store's public API (`open_store(...).add`), as a
    fetch or `speedbook snapshot add` does: the store decides the layout, compression and
    deduplication."""

    def __init__(self, raw_dir: Path) -> None:
        self.store = open_store(raw_dir)

    def write(
        self,
        source_id: str,
        data: bytes,
        *,
        url: str,
        retrieved_at: datetime,
        content_type: str,
        extension: str,
        note: str,
    ) -> bool:
        """Store one snapshot; False when the store already holds it."""
        result = self.store.add(
            source_id,
            data,
            url=url,
            retrieved_at=retrieved_at,
            content_type=content_type,
            obtained_by="manual",
            extension=extension,
            note=note,
        )
        return result.created


def _write_day(writer: StoreWriter, spec: CorpusSpec, plan: list[_Model], day_index: int) -> int:
    when = day_time(spec, day_index)
    note = _aa_note(spec, day_index)
    written = 0
    for model in plan:
        written += writer.write(
            aa_source_id(model.number),
            _render_aa_page(spec, model, day_index),
            url=aa_url(model.number),
            retrieved_at=when,
            content_type=HTML_TYPE,
            extension="html",
            note=note,
        )
    return written


def generate(
    spec: CorpusSpec, root: Path, *, progress: Callable[[str], None] | None = None
) -> Corpus:
    """Write the corpus into `root`, which must be empty or not exist yet."""
    root = Path(root)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise ValueError(f"{root}: not an empty folder; the corpus is written into a new one")
    raw_dir, metadata_dir, registry = root / "raw", root / "metadata", root / "registry.toml"
    raw_dir.mkdir(parents=True)
    write_metadata(spec, metadata_dir)
    write_registry(spec, registry)
    plan = _plan(spec)
    writer = StoreWriter(raw_dir)
    pages = 0
    step = max(1, spec.days // 10)
    for day_index in range(spec.days):
        pages += _write_day(writer, spec, plan, day_index)
        if progress is not None and ((day_index + 1) % step == 0 or day_index + 1 == spec.days):
            progress(f"corpus: day {day_index + 1}/{spec.days}, {pages:,} pages")
    snapshots = pages
    snapshots += writer.write(
        CATALOGUE_SOURCE,
        _render_catalogue(spec),
        url=f"{HOST}/catalogue/models/search",
        retrieved_at=day_time(spec, 0),
        content_type=JSON_TYPE,
        extension="json",
        note="Synthetic catalogue written by the benchmark: every entry is invented.",
    )
    last = spec.days - 1
    snapshots += writer.write(
        COMPILATION_SOURCE,
        _render_compilation(spec, plan, last),
        url=f"{HOST}/compilation/inference/",
        retrieved_at=day_time(spec, last),
        content_type=HTML_TYPE,
        extension="html",
        note=(
            "Synthetic compilation written by the benchmark: its figures repeat the synthetic "
            f"pages of day {last + 1}."
        ),
    )
    return Corpus(
        root=root,
        registry=registry,
        raw_dir=raw_dir,
        metadata_dir=metadata_dir,
        pages=pages,
        endpoints=pages * spec.providers,
        snapshots=snapshots,
    )


def add_day(corpus: Corpus, spec: CorpusSpec, day_index: int) -> int:
    """Write the pages of day `day_index` (0 = `spec.start`; `spec.days` is the day after the
    corpus ends); return how many were new. A day already stored writes nothing."""
    if not isinstance(day_index, int) or isinstance(day_index, bool) or day_index < 0:
        raise ValueError(f"day_index must be a whole number >= 0, got {day_index!r}")
    return _write_day(StoreWriter(corpus.raw_dir), spec, _plan(spec), day_index)
