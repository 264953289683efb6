"""A synthetic history of OpenRouter polls for benchmarking the build: `python -m benchmarks poll`.

`generate(spec, root)` writes into `root`:
- `raw/`: a snapshot store holding one poll bundle (pipeline/raw/bundle.py) every
  24 h / polls_per_day, each with one `/api/v1/models/{model}/endpoints` response per model in
  the real shape (compact JSON, as the API serves it): per endpoint its tag, provider,
  quantization (sometimes null), prices per token as strings, uptime, and `latency_last_30m` /
  `throughput_last_30m` as p50/p75/p90/p99 (milliseconds and tokens/s; now and then null, a
  percentile missing). Some endpoints exist only for part of the history, and any endpoint can be
  absent from one poll;
- `registry.toml`: the one poll source; `metadata/`: the bundled reviewed tables (the synthetic
  models and providers stay unreviewed entities, as new OpenRouter ids do);
- with `floor_dir`, the same response bodies again, one poll per newline-delimited JSON file, for
  the `read_json` floor of the same bytes.

Every figure is invented; hosts are under the reserved `.invalid` domain. Output depends only on
the spec: each response draws from its own `random.Random` seeded by (seed, model, poll), so
`add_poll` writes the bytes a longer `generate` would have. Bundles are rendered by string
formatting (the static part of each endpoint once) and added through the store's public API
(`StoreWriter`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

from benchmarks.corpus import (
    HOST,
    PUBLISHER,
    StoreWriter,
    _registry_entry,
    copy_bundled_metadata,
)
from pipeline.raw.bundle import BundleMember, write_bundle
from pipeline.sources.formats import BUNDLE_CONTENT_TYPE, BUNDLE_EXTENSION

SOURCE = "bench-openrouter-endpoints"
FORMAT = "openrouter_endpoints"
API_URL = f"{HOST}/api/v1/models"
PROVIDERS = 60  # the pool a model's endpoints are drawn from
MAX_ENDPOINTS = 14  # per model, drawn 1..14: 400 models have about 3,000 endpoints
# (quantization as the API writes it, share): null and "unknown" included, as in real responses
_QUANTIZATIONS = (
    ("fp8", 0.30),
    ("bf16", 0.20),
    ("unknown", 0.15),
    (None, 0.08),
    ("fp16", 0.07),
    ("int4", 0.05),
    ("fp4", 0.04),
    ("int8", 0.04),
    ("mxfp4", 0.03),
    ("nvfp4", 0.02),
    ("fp6", 0.01),
    ("fp32", 0.01),
)
_SUFFIXES = ("", "/fp8", "/fast", "/eu-west-1", "/turbo")  # a provider's second, third... endpoint
_PARAMETERS = (
    '["reasoning","include_reasoning","temperature","top_p","max_tokens","tool_choice","tools",'
    '"structured_outputs","response_format","seed","stop"]',
    '["temperature","top_p","max_tokens","stop","seed","frequency_penalty","presence_penalty"]',
)
PERCENTILES = ("p50", "p75", "p90", "p99")
_SPREAD = (1.0, 1.25, 1.6, 2.6)  # how far each percentile lies above the median
_ABSENT = 0.02  # an endpoint missing from one poll
_NO_TRAFFIC = 0.03  # both statistics null in one poll
_MISSING_PERCENTILE = 0.01
# Endpoints that come and go do so within this many days of the start, whatever the history's
# length: a poll's bytes depend on its index, never on how many polls follow it.
WINDOW_DAYS = 60
_FOREVER = 1 << 62


@dataclass(frozen=True)
class PollSpec:
    models: int
    days: int
    polls_per_day: int
    seed: int = 1729
    start: date = date(2026, 1, 1)

    def __post_init__(self) -> None:
        for name in ("models", "days", "polls_per_day"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                # starts with the field's name: `the benchmark` shows it as its --option
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")
        if self.polls_per_day > 1440:
            raise ValueError(
                f"polls_per_day must be at most 1440 (one a minute), got {self.polls_per_day}"
            )

    @property
    def polls(self) -> int:
        return self.days * self.polls_per_day


@dataclass(frozen=True)
class PollCorpus:
    root: Path
    registry: Path
    raw_dir: Path
    metadata_dir: Path
    polls: int  # bundles written
    members: int  # responses across them
    endpoints: int  # endpoint objects across them
    statistics: int  # percentile figures across them (= observations the build makes)
    received_bytes: int  # sum of the bundles' sizes
    floor_files: tuple[Path, ...] = ()


@dataclass(frozen=True)
class _Endpoint:
    head: str  # the endpoint's JSON object up to its per-poll fields, rendered once
    speed: float  # median tokens/s at poll 0
    latency_ms: float  # median time to first token at poll 0
    drift: float  # relative change per day
    first: int  # first and last poll it exists in
    last: int


@dataclass(frozen=True)
class _Model:
    model_id: str
    head: str  # the response up to its endpoint list
    endpoints: tuple[_Endpoint, ...]


def model_id(number: int) -> str:
    return f"bench/model-{number}"


def poll_time(spec: PollSpec, poll: int) -> datetime:
    start = datetime(spec.start.year, spec.start.month, spec.start.day, tzinfo=UTC)
    return start + timedelta(seconds=poll * 86400 // spec.polls_per_day)


def _quantization(rng: random.Random) -> str | None:
    pick, cumulative = rng.random(), 0.0
    for value, share in _QUANTIZATIONS:
        cumulative += share
        if pick < cumulative:
            return value
    return _QUANTIZATIONS[0][0]


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _plan(spec: PollSpec) -> list[_Model]:
    models = []
    for m in range(1, spec.models + 1):
        rng = random.Random(f"{spec.seed}/openrouter/model/{m}")
        ident, name = model_id(m), f"Bench: Model {m}"
        size, price = rng.lognormvariate(0, 0.5), rng.uniform(0.05, 3.0) / 1e6
        context = rng.choice((32768, 131072, 262144, 1048576))
        seen: dict[int, int] = {}
        endpoints = []
        for _ in range(rng.randint(1, MAX_ENDPOINTS)):
            provider = rng.randint(1, PROVIDERS)
            count = seen[provider] = seen.get(provider, 0) + 1
            if count > len(_SUFFIXES):
                continue
            tag = f"provider-{provider}{_SUFFIXES[count - 1]}"
            if rng.random() < 0.8:  # there all along
                first, last = 0, _FOREVER
            else:  # arrives, or leaves, or both, within the first WINDOW_DAYS
                first = int(rng.uniform(0, WINDOW_DAYS) * spec.polls_per_day)
                last = _FOREVER
                if rng.random() < 0.5:
                    last = first + int(rng.uniform(0, WINDOW_DAYS) * spec.polls_per_day)
            prompt = price * rng.uniform(0.7, 1.4)
            pricing: dict[str, object] = {
                "prompt": f"{prompt:.10f}".rstrip("0"),
                "completion": f"{prompt * 4:.10f}".rstrip("0"),
                "discount": rng.choice((0, 0, 0, 0.25)),
            }
            if rng.random() < 0.5:
                pricing["input_cache_read"] = f"{prompt / 10:.11f}".rstrip("0")
            fields = {
                "name": f"Provider {provider} | {ident}",
                "model_id": ident,
                "model_name": name,
                "context_length": context,
                "pricing": pricing,
                "provider_name": f"Provider {provider}",
                "tag": tag,
                "quantization": _quantization(rng),
                "max_completion_tokens": rng.choice((None, 8192, 32768)),
                "max_prompt_tokens": None,
                "supported_parameters": "PARAMETERS",
            }
            head = _compact(fields)[:-1].replace('"PARAMETERS"', rng.choice(_PARAMETERS))
            speed = 90.0 * size**-0.5 * rng.lognormvariate(0, 0.5)
            latency = 600.0 * size**0.4 * rng.lognormvariate(0, 0.4)
            drift = rng.uniform(-0.002, 0.003)
            endpoints.append(_Endpoint(head, speed, latency, drift, first, last))
        description = f"Synthetic model {m} written by the benchmark: every figure is invented."
        head = (
            '{"data":{'
            + _compact({"id": ident, "name": name, "created": 1767225600 + m})[1:-1]
            + ',"description":'
            + _compact(description)
            + ',"architecture":{"tokenizer":"Other","instruct_type":null,"modality":"text->text",'
            '"input_modalities":["text"],"output_modalities":["text"]},"endpoints":['
        )
        models.append(_Model(ident, head, tuple(endpoints)))
    return models


def _percentiles(median: float, digits: int, rng_draw: Callable[[], float]) -> tuple[str, int]:
    """A `{p50, p75, p90, p99}` object around `median` (now and then one missing) and how many
    figures it holds."""
    parts = []
    for name, spread in zip(PERCENTILES, _SPREAD, strict=True):
        if rng_draw() < _MISSING_PERCENTILE:
            continue
        value = round(median * spread * (1 + 0.05 * rng_draw()), digits)
        parts.append(f'"{name}":{value}')
    return "{" + ",".join(parts) + "}", len(parts)


def _response(spec: PollSpec, model: _Model, poll: int) -> tuple[bytes, int, int]:
    """One model's /endpoints body at one poll, its endpoint count and its statistics count."""
    rng = random.Random(f"{spec.seed}/openrouter/poll/{model.model_id}/{poll}")
    draw = rng.random
    day = poll / spec.polls_per_day
    hour = (poll % spec.polls_per_day) / spec.polls_per_day  # busier in the afternoon
    load = 1 + 0.15 * (0.5 - abs(hour - 0.6))
    parts, endpoints, figures = [], 0, 0
    for endpoint in model.endpoints:
        if not endpoint.first <= poll < endpoint.last or draw() < _ABSENT:
            continue
        endpoints += 1
        trend = max(0.2, 1 + endpoint.drift * day)
        status = -2 if draw() < 0.01 else 0
        uptime = 100 - 4 * draw() ** 3
        timing = (
            f',"status":{status},"uptime_last_30m":{round(uptime, 4)},'
            f'"uptime_last_5m":{round(min(100, uptime + draw() - 0.5), 4)},'
            f'"uptime_last_1d":{round(min(100, uptime + 0.3), 4)}'
        )
        if draw() < _NO_TRAFFIC:
            stats = ',"latency_last_30m":null,"throughput_last_30m":null'
        else:
            noise = 1 + 0.1 * (draw() - draw())
            latency, n_latency = _percentiles(endpoint.latency_ms * load * noise, 2, draw)
            speed, n_speed = _percentiles(endpoint.speed * trend / load / noise, 1, draw)
            stats = f',"latency_last_30m":{latency},"throughput_last_30m":{speed}'
            figures += n_latency + n_speed
        parts.append(endpoint.head + timing + stats + "}")
    return (model.head + ",".join(parts) + "]}}").encode("utf-8"), endpoints, figures


@dataclass
class _Counts:
    members: int = 0
    endpoints: int = 0
    statistics: int = 0
    received: int = 0


def _write_poll(
    writer: StoreWriter,
    spec: PollSpec,
    plan: list[_Model],
    poll: int,
    counts: _Counts,
    floor_dir: Path | None,
) -> bool:
    when = poll_time(spec, poll)
    headers = (("Content-Type", "application/json"), ("Date", format_datetime(when, usegmt=True)))
    bodies = []
    for model in plan:
        body, endpoints, figures = _response(spec, model, poll)
        bodies.append(body)
        counts.endpoints += endpoints
        counts.statistics += figures
    members = [
        BundleMember(f"{API_URL}/{model.model_id}/endpoints", 200, headers, body)
        for model, body in zip(plan, bodies, strict=True)
    ]
    data = write_bundle(members)
    counts.members += len(members)
    counts.received += len(data)
    if floor_dir is not None:  # the bodies are compact JSON: one line each
        (floor_dir / f"poll-{poll:06d}.ndjson").write_bytes(b"\n".join(bodies) + b"\n")
    return writer.write(
        SOURCE,
        data,
        url=API_URL,
        retrieved_at=when,
        content_type=BUNDLE_CONTENT_TYPE,
        extension=BUNDLE_EXTENSION,
        note=(
            f"Synthetic poll written by the benchmark (seed {spec.seed}, poll {poll + 1}): "
            f"a poll of {len(plan)} models; every figure is invented and describes no real "
            "provider."
        ),
    )


def write_registry(spec: PollSpec, path: Path) -> None:
    entry = _registry_entry(
        {
            "id": SOURCE,
            "kind": "benchmark",
            "publisher": PUBLISHER,
            "title": "Endpoint statistics per model (synthetic, OpenRouter format)",
            "url": API_URL,
            "tier": "T1",
            "format": FORMAT,
            "cadence": "half_hourly",
            "notes": "Synthetic OpenRouter /endpoints polls, one bundle per poll.",
            "poll_path": "{model}/endpoints",
        }
    )
    models = ", ".join(json.dumps(model_id(m)) for m in range(1, spec.models + 1))
    path.write_text(
        "# Synthetic registry written by the benchmark: the source below is invented.\n"
        f"# scenario=openrouter models={spec.models} days={spec.days} "
        f"polls_per_day={spec.polls_per_day} seed={spec.seed} start={spec.start.isoformat()}\n\n"
        + entry.rstrip("\n")
        + f"\nmodels = [{models}]\n",
        encoding="utf-8",
    )


def generate(
    spec: PollSpec,
    root: Path,
    *,
    floor_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> PollCorpus:
    """Write the poll history into `root`, which must be empty or not exist yet (and with
    `floor_dir`, the bodies again as newline-delimited JSON, one file per poll)."""
    root = Path(root)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise ValueError(f"{root}: not an empty folder; the corpus is written into a new one")
    raw_dir, metadata_dir, registry = root / "raw", root / "metadata", root / "registry.toml"
    raw_dir.mkdir(parents=True)
    copy_bundled_metadata(metadata_dir)
    write_registry(spec, registry)
    if floor_dir is not None:
        floor_dir.mkdir(parents=True, exist_ok=True)
    plan = _plan(spec)
    writer = StoreWriter(raw_dir)
    counts = _Counts()
    polls = 0
    step = max(1, spec.polls // 10)
    for poll in range(spec.polls):
        polls += _write_poll(writer, spec, plan, poll, counts, floor_dir)
        if progress is not None and ((poll + 1) % step == 0 or poll + 1 == spec.polls):
            progress(f"corpus: poll {poll + 1:,}/{spec.polls:,}, {counts.received:,} bytes")
    return PollCorpus(
        root=root,
        registry=registry,
        raw_dir=raw_dir,
        metadata_dir=metadata_dir,
        polls=polls,
        members=counts.members,
        endpoints=counts.endpoints,
        statistics=counts.statistics,
        received_bytes=counts.received,
        floor_files=floor_files_in(floor_dir) if floor_dir else (),
    )


def floor_files_in(floor_dir: Path) -> tuple[Path, ...]:
    """The floor's files `generate` wrote into `floor_dir`, a poll each, oldest first."""
    return tuple(sorted(floor_dir.glob("poll-*.ndjson")))


def add_poll(corpus: PollCorpus, spec: PollSpec, poll: int) -> PollCorpus:
    """Write poll `poll` (0 = the first; `spec.polls` is the one after the history) and return
    the corpus with its counts grown by it (unchanged when the store already held it)."""
    if not isinstance(poll, int) or isinstance(poll, bool) or poll < 0:
        raise ValueError(f"poll must be a whole number >= 0, got {poll!r}")
    counts = _Counts()
    written = _write_poll(StoreWriter(corpus.raw_dir), spec, _plan(spec), poll, counts, None)
    if not written:
        return corpus
    return PollCorpus(
        root=corpus.root,
        registry=corpus.registry,
        raw_dir=corpus.raw_dir,
        metadata_dir=corpus.metadata_dir,
        polls=corpus.polls + 1,
        members=corpus.members + counts.members,
        endpoints=corpus.endpoints + counts.endpoints,
        statistics=corpus.statistics + counts.statistics,
        received_bytes=corpus.received_bytes + counts.received,
        floor_files=corpus.floor_files,
    )
