"""The analyst views of sql/mart/30_analyst_views.sql on the bundled corpus, built as of June 2026
(the seeds' live table and record claims), and once more with a conflicting snapshot and fetch
logs added."""

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import duckdb
import pytest
from conftest import BUNDLED_RAW, build_into

from pipeline.raw.outcomes import record_outcome
from pipeline.raw.snapshots import SnapshotStore
from pipeline.sources.registry import load_registry
from pipeline.support.duck import quote_literal
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import AS_OF_DATABASE, SCRATCH_ALIAS, connect
from pipeline.warehouse.dictionary import undescribed

pytestmark = pytest.mark.e2e  # every test reads builds of the bundled corpus (70 s each)

JUNE = datetime(2026, 6, 30, 23, 59, 59, tzinfo=UTC)
AA_GPT_OSS = "aa-gpt-oss-120b"
TOKENDYNO = "tokendyno-fastest-llm-inference-2026"


@contextmanager
def opened(settings: Settings) -> Iterator[duckdb.DuckDBPyConnection]:
    """A build's warehouse: the June builds' are --as-of builds, whose core and mart are a DuckDB
    file of their own beside the lake (its staged facts are the lake's)."""
    as_of = settings.state_dir / AS_OF_DATABASE
    with connect(settings, read_only=True) as con:
        if as_of.is_file():
            con.execute(f"ATTACH {quote_literal(str(as_of))} AS {SCRATCH_ALIAS} (READ_ONLY)")
            con.execute(f"USE {SCRATCH_ALIAS}")
        yield con


def rows(settings: Settings, sql: str, params: list | None = None) -> list[dict]:
    with opened(settings) as con:
        cursor = con.execute(sql, params or [])
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


@pytest.fixture(scope="module")
def june(tmp_path_factory) -> Settings:
    return build_into(tmp_path_factory.mktemp("june"), as_of=JUNE)


@pytest.fixture(scope="module")
def conflicted(tmp_path_factory) -> Settings:
    """The June build of the bundled snapshots plus a newer AA page where Cerebras runs 2,100 t/s
    instead of the 1,753 the compilation quotes (a day later: within the 7-day window), and fetch
    logs."""
    root = tmp_path_factory.mktemp("conflicted")
    shutil.copytree(BUNDLED_RAW, root / "warehouse" / "raw")
    settings = Settings.resolve(warehouse=root / "warehouse", exports=root / "exports")
    store = SnapshotStore(settings.raw_dir)
    page = store.read(store.list(AA_GPT_OSS)[0])
    assert page.count(b"<td>1,753.0</td>") == 1
    store.add(
        AA_GPT_OSS,
        page.replace(b"<td>1,753.0</td>", b"<td>2,100.0</td>"),
        url=load_registry(settings.registry)[AA_GPT_OSS].url,
        retrieved_at=datetime(2026, 6, 29, 12, tzinfo=UTC),
        content_type="text/html",
        obtained_by="manual",
        extension="html",
    )
    raw = settings.raw_dir
    record_outcome(raw, "openrouter", "new", "stored", at=datetime(2026, 6, 1, tzinfo=UTC))
    # a skipped fetch (no key) is no success: last_success_at stays on 1 June
    record_outcome(raw, "openrouter", "skipped", "no key", at=datetime(2026, 6, 15, tzinfo=UTC))
    record_outcome(
        raw,
        "openrouter",
        "failed",
        "HTTP 503 after 3 attempts",
        at=datetime(2026, 6, 29, tzinfo=UTC),
        http_status=503,
        attempts=3,
    )
    # after the as-of time: the June build must not know about it
    record_outcome(raw, "aa-deepseek-r1", "failed", "timeout", at=datetime(2026, 7, 2, tzinfo=UTC))
    return build_into(root, as_of=JUNE)


def test_leaderboard_ranks_the_june_live_table_like_the_seed(june):
    board = rows(
        june,
        "SELECT rank, endpoints_ranked, provider_id, output_tokens_per_s, tier, source_id, stale "
        "FROM mart.leaderboard WHERE model_id = 'gpt-oss-120b' AND reasoning_effort = 'high' "
        "AND service_tier = 'standard' AND precision = 'unknown' ORDER BY rank",
    )
    assert [(r["rank"], r["provider_id"], r["output_tokens_per_s"]) for r in board] == [
        (1, "cerebras", 1753.0),
        (2, "sambanova", 692.7),
        (3, "fireworks-ai", 690.1),
        (4, "together-ai", 563.5),
        (5, "groq", 477.6),
        (6, "deepinfra", 51.7),
    ]
    # the bundled Artificial Analysis pages are reconstructions from the June compilation: their
    # figures carry the tier of the document they were rebuilt from (T2)
    assert {(r["tier"], r["source_id"], r["stale"], r["endpoints_ranked"]) for r in board} == {
        ("T2", AA_GPT_OSS, False, 6)
    }
    llama = rows(
        june,
        "SELECT provider_id, output_tokens_per_s FROM mart.leaderboard "
        "WHERE model_id = 'llama-3.3-70b-instruct' ORDER BY rank",
    )
    assert [(r["provider_id"], r["output_tokens_per_s"]) for r in llama] == [
        ("groq", 322.0),
        ("sambanova", 282.3),
        ("google-vertex", 130.4),
    ]


def test_leaderboard_keeps_variants_apart_and_stale_figures_last(june):
    maverick = rows(
        june,
        "SELECT precision, rank, provider_id FROM mart.leaderboard "
        "WHERE model_id = 'llama-4-maverick' ORDER BY precision",
    )
    # Azure's FP8 endpoint is another variant: it is not ranked against Bedrock's
    assert [(r["precision"], r["rank"], r["provider_id"]) for r in maverick] == [
        ("fp8", 1, "azure"),
        ("unknown", 1, "amazon-bedrock"),
    ]
    # LLMPerf's 2023 runs are stale; TTFT comes along where the source measured it
    together = rows(
        june,
        "SELECT stale, ttft_s, ttft_source_id FROM mart.leaderboard "
        "WHERE endpoint_id = 'together-ai/llama-2-70b-chat/unknown/standard/-'",
    )
    assert together[0]["stale"] is True
    assert together[0]["ttft_s"] == pytest.approx(0.635275, abs=1e-6)
    assert together[0]["ttft_source_id"] == "llmperf-together-70b"


def test_peak_vs_live_has_the_eight_record_claims(june):
    claims = rows(june, "SELECT * FROM mart.peak_vs_live")
    figures = sorted((r["claim_value"], r["scope"], r["qualifier"] or "") for r in claims)
    assert figures == [
        (198.0, "peak_per_user", ""),
        (276.0, "peak_per_user", ""),
        (1000.0, "peak_per_user", ""),  # SambaNova, Llama 3 8B
        (1000.0, "peak_per_user", "at_least"),  # NVIDIA DGX B200, per user
        (1038.0, "peak_per_user", ""),
        (2100.0, "peak_per_user", "approx"),
        (2522.0, "peak_per_user", ""),
        (3000.0, "peak_per_user", ""),
        (72000.0, "aggregate", ""),  # the same DGX B200 row, all users of the server
    ]
    by_id = {r["claim_id"]: r for r in claims}
    cerebras = by_id["cerebras-gpt-oss-120b-3000"]
    assert (cerebras["live_value"], cerebras["live_tier"]) == (1753.0, "T2")  # reconstructed
    assert cerebras["peak_to_live_ratio"] == pytest.approx(3000 / 1753)
    groq = by_id["groq-llama-3-3-70b-276"]  # the 2024 record sits below today's live median
    assert groq["peak_to_live_ratio"] == pytest.approx(276 / 322)
    maverick = by_id["cerebras-llama-4-maverick-2522"]
    # Cerebras is not listed live on Maverick; Bedrock is, but a claim is only ever set beside
    # its own provider's endpoint (another provider's figure measures another system)
    assert rows(
        june,
        "SELECT provider_id, value FROM mart.current_figures WHERE model_id = 'llama-4-maverick' "
        "AND metric = 'output_tokens_per_s' AND precision = 'unknown' AND statistic = 'median'",
    ) == [{"provider_id": "amazon-bedrock", "value": 187.1}]
    assert maverick["live_value"] is None and maverick["peak_to_live_ratio"] is None
    assert not {"fastest_provider_id", "fastest_live_value"} & set(maverick)
    per_user = by_id["nvidia-dgx-b200-llama-4-maverick-per-user"]
    assert (per_user["precision"], per_user["verified_by"]) == ("fp8", "Artificial Analysis")
    assert "speculative decoding" in per_user["technique"]
    aggregate = by_id["nvidia-dgx-b200-llama-4-maverick-aggregate"]
    # NVIDIA has no live figure of its own here, so this ratio is null either way; the rule is
    # pinned where it has one: tests/test_peak_vs_live_export.py
    assert aggregate["live_value"] is None and aggregate["peak_to_live_ratio"] is None
    assert by_id["sambanova-deepseek-r1-198"]["hardware"] == "SambaNova (16x SN40L)"


def test_platform_models_reads_only_catalogues_retrieved_by_the_as_of_time(june):
    listed = rows(
        june,
        "SELECT platform_id, count(*) AS n, count(model_id) AS canonical "
        "FROM mart.platform_models GROUP BY ALL",
    )
    assert [(r["platform_id"], r["n"]) for r in listed] == [("openrouter", 364)]
    assert listed[0]["canonical"] > 0


def test_platform_models_on_the_full_corpus(built):
    edge = rows(
        built,
        "SELECT task, function_calling, precision FROM mart.platform_models "
        "WHERE platform_id = 'cloudflare-workers-ai'",
    )
    assert len(edge) == 75  # the 75-model edge catalogue
    assert len({r["task"] for r in edge}) == 12
    assert any(r["function_calling"] for r in edge)
    assert "fp8" in {r["precision"] for r in edge}


def test_disagreements_is_empty_on_the_bundled_corpus(june, built):
    assert rows(june, "SELECT * FROM mart.disagreements") == []
    assert rows(built, "SELECT * FROM mart.disagreements") == []


def test_a_compilation_repeating_a_page_never_disputes_it(conflicted):
    """The June article cites Artificial Analysis for its 1,753: the page's next snapshot (2,100,
    more than 10% away) is the endpoint's current figure, and the article's repetition of the
    older snapshot is that endpoint's history, compared with nothing (one current figure per
    endpoint and measurement; independence itself: tests/test_independence.py)."""
    assert rows(conflicted, "SELECT * FROM mart.disagreements") == []
    endpoint = "cerebras/gpt-oss-120b/unknown/standard/high"
    figures = rows(
        conflicted,
        "SELECT o.source_id, o.value, o.cited_source_id, o.observed_at, "
        "o.observation_id IN (SELECT observation_id FROM mart.current_figures) AS current "
        "FROM core.observations AS o WHERE o.endpoint_id = ? "
        "AND o.metric = 'output_tokens_per_s' AND o.method = 'fixed-workload probe' "
        "ORDER BY o.observed_at, o.source_id",
        [endpoint],
    )
    assert [(f["source_id"], f["value"], f["cited_source_id"], f["current"]) for f in figures] == [
        (AA_GPT_OSS, 1753.0, None, False),
        (TOKENDYNO, 1753.0, AA_GPT_OSS, False),
        (AA_GPT_OSS, 2100.0, None, True),
    ]
    assert figures[-1]["observed_at"].date().isoformat() == "2026-06-29"
    pairs = rows(
        conflicted,
        "SELECT * FROM mart.current_pairs WHERE provider_id = 'cerebras' "
        "AND model_id = 'gpt-oss-120b'",
    )
    assert pairs == []
    (top,) = rows(
        conflicted,
        "SELECT provider_id, output_tokens_per_s, disputed_by, corroborated_by "
        "FROM mart.leaderboard "
        "WHERE model_id = 'gpt-oss-120b' AND reasoning_effort = 'high' AND rank = 1",
    )
    assert (top["provider_id"], top["output_tokens_per_s"]) == ("cerebras", 2100.0)
    assert top["disputed_by"] == [] and top["corroborated_by"] == []


def test_source_health_on_the_june_build(june):
    health = {r["source_id"]: r for r in rows(june, "SELECT * FROM mart.source_health")}
    assert len(health) == len(load_registry(june.registry))
    aa = health[AA_GPT_OSS]
    assert (aa["snapshots"], aa["extraction_status"], aa["rows_extracted"]) == (1, "ok", 6)
    assert (aa["age_days"], aa["stale"], aa["status"]) == (0.0, False, "ok")
    (speeds,) = rows(
        june,
        "SELECT count(*) AS n FROM core.observations WHERE snapshot_id = ? "
        "AND metric = 'output_tokens_per_s'",
        [aa["used_snapshot_id"]],
    )
    assert speeds["n"] == 6  # the six providers of the seed's live table
    assert aa["used_snapshot_id"] == aa["latest_snapshot_id"]  # the newest one is usable
    assert aa["last_fetch_outcome"] is None  # the bundled corpus was never fetched
    assert health["llmperf-groq-70b"]["status"] == "stale"
    assert health["llmperf-groq-70b"]["age_days"] > 365
    # retrieved only in November: no snapshot as of June
    assert health["aa-kimi-k2-6"]["status"] == "no_snapshot"
    assert health["aa-kimi-k2-6"]["latest_snapshot_id"] is None


def test_source_health_reads_the_fetch_logs_up_to_the_as_of_time(conflicted):
    health = {r["source_id"]: r for r in rows(conflicted, "SELECT * FROM mart.source_health")}
    router = health["openrouter"]
    assert (router["last_fetch_outcome"], router["last_fetch_http_status"]) == ("failed", 503)
    assert router["last_fetch_detail"] == "HTTP 503 after 3 attempts"
    assert router["last_success_at"] == datetime(2026, 6, 1, tzinfo=UTC)
    assert router["status"] == "fetch_failed"
    assert health["aa-deepseek-r1"]["last_fetch_outcome"] is None  # logged after the as-of time
    assert health[AA_GPT_OSS]["snapshots"] == 2
    assert health[AA_GPT_OSS]["latest_snapshot_id"].startswith(f"{AA_GPT_OSS}/20260629T120000Z-")
    logged = rows(
        conflicted,
        "SELECT source_id, log_line, outcome FROM core.fetch_outcomes ORDER BY source_id, log_line",
    )
    assert [(r["source_id"], r["log_line"], r["outcome"]) for r in logged] == [
        ("aa-deepseek-r1", 1, "failed"),  # kept in core: the history is not cut at as-of
        ("openrouter", 1, "new"),
        ("openrouter", 2, "skipped"),
        ("openrouter", 3, "failed"),
    ]


def test_every_mart_view_and_column_is_documented(june):
    """Each mart view carries its summary as its comment, and each column a description in the
    mart's registry (pipeline/schema/mart.py), from which the data dictionary is written."""
    with opened(june) as con:
        assert [name for name in undescribed(con) if name.startswith("mart.")] == []
        views = dict(
            con.execute(
                "SELECT view_name, coalesce(comment, '') FROM duckdb_views() "
                "WHERE schema_name = 'mart' AND database_name = current_database() "
                "AND NOT internal"
            ).fetchall()
        )
    assert [name for name, comment in views.items() if not comment] == []
    assert {
        "leaderboard",
        "provider_headline",
        "peak_vs_live",
        "platform_models",
        "disagreements",
        "source_health",
        "latest_snapshots",
    } <= set(views)


def test_leaderboard_ranks_point_figures_not_bounds(built):
    # "up to 740 t/s on gpt-oss-120b" is a current figure, but a bound is not a median
    fireworks = "fireworks-ai/gpt-oss-120b/unknown/standard/-"
    current = rows(
        built,
        "SELECT qualifier FROM mart.current_figures WHERE endpoint_id = ? AND scope = 'live'",
        [fireworks],
    )
    assert current == [{"qualifier": "up_to"}]
    assert rows(built, "SELECT * FROM mart.leaderboard WHERE endpoint_id = ?", [fireworks]) == []
    ranked = rows(built, "SELECT DISTINCT coalesce(qualifier, 'exact') AS q FROM mart.leaderboard")
    assert {r["q"] for r in ranked} <= {"exact", "approx"}
