"""The four machine-readable sources (OpenRouter endpoints and providers, Artificial Analysis,
models.dev) served by a real HTTP server on 127.0.0.1: a tmp registry whose entries are the
bundled registry's own (their key and poll fields included) with the URLs pointed at the server,
a tmp warehouse, and the real captures of tests/fixtures."""

from __future__ import annotations

import dataclasses
import json
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from http_fixtures import FaultServer, Responder

from pipeline.fetch import FetchOptions, FetchReport, fetch_sources
from pipeline.raw.snapshots import SnapshotStore
from pipeline.sources.registry import Source, load_registry
from pipeline.support.settings import BUNDLED_METADATA, Settings

FIXTURES = Path(__file__).parent / "fixtures"
FLASH = (
    FIXTURES / "openrouter" / "endpoints" / "deepseek-v4-flash.authenticated.json"
).read_bytes()
GPT4O = (FIXTURES / "openrouter" / "endpoints" / "gpt-4o.unauthenticated.json").read_bytes()
MODEL_LIST = (FIXTURES / "openrouter" / "api-v1-models-2026-05.json").read_bytes()
PROVIDERS = (FIXTURES / "openrouter" / "api-v1-providers-2026-05.json").read_bytes()
AA_MODELS = (
    FIXTURES / "artificial-analysis" / "api-v2-data-llms-models-2026-05-27.json"
).read_bytes()
MODELS_DEV = (FIXTURES / "models-dev" / "api-2026-06-13.json").read_bytes()
API = "/api/v1/models"  # the openrouter-endpoints registry URL's path
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
BUNDLED = load_registry(BUNDLED_METADATA / "sources.toml")
FAST = FetchOptions(
    connect_timeout=1.0,
    read_timeout=0.5,
    total_timeout=5.0,
    backoff_base=0.01,
    backoff_max=0.05,
    retry_after_max=2.0,
    trust_env=False,
)


def openrouter_key() -> str:
    """A key of OpenRouter's shape, made at run time: no key-like literal is in the tree."""
    return "sk-or-v1-" + secrets.token_hex(32)


def aa_key() -> str:
    return "aa-" + secrets.token_hex(20)


def model_body(model: str, template: bytes = FLASH, *, statistics: bool = True) -> bytes:
    """A real /endpoints response with its model id set to `model` (and its statistics null
    when not `statistics`, as OpenRouter answers a request without a key)."""
    document = json.loads(template)
    document["data"]["id"] = model
    if not statistics:
        for endpoint in document["data"]["endpoints"]:
            endpoint["latency_last_30m"] = endpoint["throughput_last_30m"] = None
    return json.dumps(document).encode()


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's


def toml_entry(fields: Mapping[str, Any]) -> str:
    lines = [f"{name} = {toml_value(value)}" for name, value in fields.items()]
    return "[[source]]\n" + "\n".join(lines) + "\n"


def entry_fields(source: Source, **changes: Any) -> dict[str, Any]:
    """The registry fields of `source` as TOML gives them (defaults left out), with `changes`
    (a change to None drops the field)."""
    fields = {
        f.name: getattr(source, f.name)
        for f in dataclasses.fields(Source)
        if f.default is dataclasses.MISSING or getattr(source, f.name) != f.default
    }
    fields.update(changes)
    return {name: value for name, value in fields.items() if value is not None}


@dataclass
class ApiWorld:
    tmp: Path
    server: FaultServer
    monkeypatch: pytest.MonkeyPatch
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(
        self, source_id: str, *, host: str = "127.0.0.1", path: str | None = None, **changes: Any
    ) -> str:
        """Register the bundled entry `source_id` at the server (`path` defaults to the real
        URL's path); `changes` edit its fields (None drops one). Returns its URL."""
        real = BUNDLED[source_id]
        url = self.server.url(path or urlsplit(real.url).path, host)
        self.entries[source_id] = entry_fields(real, url=url, **changes)
        return url

    def serve(self, path: str, *responders: Responder) -> str:
        return self.server.route(path, *responders)

    def serve_model(self, model: str, *responders: Responder) -> str:
        return self.server.route(f"{API}/{model}/endpoints", *responders)

    @property
    def registry(self) -> Path:
        return self.tmp / "sources.toml"

    @property
    def settings(self) -> Settings:
        self.registry.write_text(
            "\n".join(toml_entry(fields) for fields in self.entries.values()), encoding="utf-8"
        )
        self.monkeypatch.setenv("SPEEDBOOK_REGISTRY", str(self.registry))
        self.monkeypatch.setenv("SPEEDBOOK_WAREHOUSE", str(self.tmp / "warehouse"))
        self.monkeypatch.setenv("SPEEDBOOK_EXPORTS", str(self.tmp / "exports"))
        return Settings.resolve()

    @property
    def store(self) -> SnapshotStore:
        return SnapshotStore(self.tmp / "warehouse" / "raw")

    def fetch(
        self, *source_ids: str, environ: Mapping[str, str] | None = None, **overrides: Any
    ) -> FetchReport:
        return fetch_sources(
            self.settings,
            source_ids or None,
            options=replace(FAST, **overrides),
            environ={} if environ is None else environ,
        )

    def files(self) -> dict[str, bytes]:
        """Every file of the snapshot store but its listing cache (the outcome logs are beside
        the store)."""
        raw = self.tmp / "warehouse" / "raw"
        return {
            str(p.relative_to(raw)): p.read_bytes()
            for p in sorted(raw.rglob("*"))
            if p.is_file() and p.name != ".snapshot-index.json"
        }


def api_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ApiWorld]:
    """The body of each test module's `api` fixture."""
    for name in PROXY_VARS:  # 127.0.0.1 must never go through a proxy
        monkeypatch.delenv(name, raising=False)
    for source in BUNDLED.values():  # a developer's own keys never reach a test server
        if source.api_key_env:
            monkeypatch.delenv(source.api_key_env, raising=False)
    with FaultServer() as server:
        yield ApiWorld(tmp_path, server, monkeypatch)
