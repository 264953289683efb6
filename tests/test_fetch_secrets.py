"""The keys are written nowhere: fetch the four machine-readable sources with sentinel keys from
a server on 127.0.0.1 (through the command line, keys in the environment), build a release from
that warehouse, then search every file under the warehouse (raw snapshots, outcome logs, the
lake's catalog and Parquet files, the Dagster instance) and the exports for the keys: in the bytes
as written, in every text column of the lake and of each Parquet file, and in gzip files
decoded."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from api_world import (
    AA_MODELS,
    BUNDLED,
    GPT4O,
    MODELS_DEV,
    PROVIDERS,
    aa_key,
    api_world,
    entry_fields,
    model_body,
    openrouter_key,
)
from conftest import BUNDLED_RAW, progress_lines
from http_fixtures import by_key, keyed, ok, status

from pipeline.dagster.envelope import execute
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect, lake_of

FETCHED = ("openrouter-endpoints", "openrouter-providers", "artificial-analysis-api", "models-dev")
MODELS = ("deepseek/deepseek-v4-flash", "openai/gpt-4o", "acme/gone")
LARGEST = ("models-dev", "openrouter-frontend-stats")


@pytest.fixture
def api(tmp_path, monkeypatch):
    yield from api_world(tmp_path, monkeypatch)


def _text_hits(con: duckdb.DuckDBPyConnection, relation: str, secrets: list[str]) -> list[str]:
    """`relation`'s text columns holding any of `secrets`, as `relation.column`: every column
    and secret counted in one scan of the relation (a view is computed once, not per column)."""
    columns = [
        row[0]
        for row in con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
        if "VARCHAR" in row[1] or "JSON" in row[1] or "[]" in row[1] or "STRUCT" in row[1]
    ]
    if not columns:
        return []
    pairs = [(column, secret) for column in columns for secret in secrets]
    counts = ", ".join(f'count_if(CAST("{column}" AS VARCHAR) LIKE ?)' for column, _ in pairs)
    found = con.execute(
        f"SELECT {counts} FROM {relation}", [f"%{secret}%" for _, secret in pairs]
    ).fetchone()
    hit = {column for (column, _), n in zip(pairs, found, strict=True) if n}
    return [f"{relation}.{column}" for column in columns if column in hit]


def _warehouse_hits(settings: Settings, secrets: list[str]) -> list[str]:
    with connect(settings, read_only=True) as con:
        tables = con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_catalog = current_database()"  # the lake's tables and views
        ).fetchall()
        return [
            hit
            for schema, name in tables
            for hit in _text_hits(con, f'"{schema}"."{name}"', secrets)
        ]


def _parquet_hits(path, secrets: list[str]) -> list[str]:
    with duckdb.connect() as con:
        relation = f"read_parquet('{path}')"
        return _text_hits(con, relation, secrets)


@pytest.mark.e2e
def test_sentinel_keys_are_written_nowhere(api, cli, monkeypatch):
    or_key, aa = openrouter_key(), aa_key()
    secrets = [or_key, aa]
    auth = f"Bearer {or_key}"
    # the real captures, served only to requests with the right key (404 for one model)
    for model in MODELS[:2]:
        body = model_body(model, GPT4O) if model == "openai/gpt-4o" else model_body(model)
        api.serve_model(model, by_key("Authorization", auth, ok(body), status(401, {}, b"no key")))
    api.serve_model(MODELS[2], keyed("Authorization", auth, status(404, {}, b'{"error": {}}')))
    api.serve("/api/v1/providers", ok(json.dumps(json.loads(PROVIDERS)).encode()))
    fresh_aa = json.dumps(json.loads(AA_MODELS)).encode()  # new bytes, not the bundled ones
    api.serve("/api/v2/data/llms/models", keyed("x-api-key", aa, ok(fresh_aa)))
    api.serve("/api.json", ok(json.dumps(json.loads(MODELS_DEV)).encode()))
    # the whole bundled registry, the four sources pointed at the server
    for source_id, source in BUNDLED.items():
        if source_id not in FETCHED:
            api.entries[source_id] = entry_fields(source)
    api.add("openrouter-endpoints", models=list(MODELS), models_from=None)
    api.add("openrouter-providers")
    api.add("artificial-analysis-api")
    api.add("models-dev")
    settings = api.settings
    # the bundled snapshots but the two largest sources' (10.6 of 13 MB, no key in them: the
    # fetched models-dev is the server's): the build still reads every other source
    shutil.copytree(BUNDLED_RAW, settings.raw_dir, ignore=shutil.ignore_patterns(*LARGEST))

    monkeypatch.setenv("OPENROUTER_API_KEY", or_key)
    monkeypatch.setenv("ARTIFICIAL_ANALYSIS_API_KEY", aa)
    with progress_lines() as lines:
        result = cli("fetch", *FETCHED)
    assert result.status == 0, result.out + result.err
    assert [line.split()[1] for line in result.out.splitlines()[2:6]] == ["new"] * 4, result.out
    # the keys were really sent, each to its own source
    endpoints = api.server.requests("/api/v1/models/deepseek/deepseek-v4-flash/endpoints")
    assert endpoints[0].headers["authorization"] == auth
    assert api.server.requests("/api/v2/data/llms/models")[0].headers["x-api-key"] == aa

    built = execute(
        Settings.resolve(
            registry=settings.registry, warehouse=settings.warehouse, exports=settings.exports
        )
    )
    assert built.success, built.failures + built.failed_checks
    with connect(settings, read_only=True) as con:
        fetched = con.execute(
            "SELECT source_id, outcome FROM core.fetch_outcomes ORDER BY source_id"
        ).fetchall()
        bundles = con.execute(
            "SELECT count(*) FROM core.snapshots WHERE snapshot_id LIKE "
            "'openrouter-endpoints/%.bundle'"
        ).fetchone()[0]
    assert sorted(fetched) == sorted((source_id, "new") for source_id in FETCHED)
    assert bundles == 1

    files = [p for root in (settings.warehouse, settings.exports) for p in root.rglob("*")]
    files = [p for p in files if p.is_file()]
    catalog = Path(lake_of(settings).target)
    assert catalog in files and any(p.suffix == ".parquet" for p in files)
    assert any(settings.dagster_home in p.parents for p in files)
    assert any(settings.exports in p.parents for p in files)
    hits = []
    for path in files:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        hits += [f"{path}" for secret in secrets if secret.encode() in data]
        if path.suffix == ".parquet":
            hits += [f"{path}: {hit}" for hit in _parquet_hits(path, secrets)]
    hits += _warehouse_hits(settings, secrets)
    printed = result.out + result.err + "\n".join(lines)
    hits += [f"output: {secret[:6]}…" for secret in secrets if secret in printed]
    assert hits == []
