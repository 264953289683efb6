"""Record claims beside live medians: mart.peak_vs_live decides which live figures sit beside a
claim and which claims get a ratio, and inference.json and the preview page show exactly what
the view says. Checked on the bundled build, and on a copy of it where NVIDIA, which the bundled
corpus lists only with record claims, gains live figures on Llama 4 Maverick (so its aggregate
claim has a live figure it must still not be divided by)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb
import lxml.html
import pytest
from mart_warehouse import rows

from pipeline.release.contracts import EXPORT_FILES, check
from pipeline.release.exports import ReleaseInfo, build_exports
from pipeline.release.formatting import speed as speed_number
from pipeline.release.preview import render_preview
from pipeline.release.queries import read_inputs
from pipeline.support.settings import Settings
from pipeline.warehouse.current import refresh_current
from pipeline.warehouse.marts import apply_marts
from pipeline.warehouse.measurement_sources import refresh_measurement_sources

MAVERICK = "llama-4-maverick"
AGGREGATE = "nvidia-dgx-b200-llama-4-maverick-aggregate"
PER_USER_FP8 = "nvidia-dgx-b200-llama-4-maverick-per-user"
BLACKWELL = "nvidia-blackwell-llama-4-maverick-1038"  # per user, precision not stated


def cell_text(element: lxml.html.HtmlElement) -> str:
    return " ".join(" ".join(element.itertext()).split())


def assert_export_mart_and_preview_agree(
    con: duckdb.DuckDBPyConnection, documents: Mapping[str, Any]
) -> int:
    """For every claim: the export's live medians (same provider, fastest on the model) and
    ratios are the view's, and the page shows them. Returns how many claims it checked."""
    view = {r["claim_id"]: r for r in rows(con, "FROM mart.peak_vs_live")}
    names = dict(con.execute("SELECT provider_id, name FROM core.providers").fetchall())
    inference = documents["inference.json"]
    claims = {c["id"]: c for p in inference["providers"] for c in p["claims"]}
    assert set(claims) == set(view)
    page = lxml.html.document_fromstring(render_preview(documents))
    for claim_id, claim in claims.items():
        mart = view[claim_id]
        live = claim["live_median"]
        if mart["live_value"] is None:
            assert live is None, claim_id
        else:
            assert live is not None, claim_id
            assert (live["value"], live["tier"], live["stale"], live["source"]["id"]) == (
                round(mart["live_value"], 3),
                mart["live_tier"],
                mart["live_stale"],
                mart["live_source_id"],
            ), claim_id
            assert live["model"]["id"] == mart["model_id"], claim_id
            assert live["endpoint"] == mart["live_endpoint_id"], claim_id
        expected_ratio = (
            None if mart["peak_to_live_ratio"] is None else round(mart["peak_to_live_ratio"], 2)
        )
        assert claim["peak_to_live_ratio"] == expected_ratio, claim_id
        if claim["scope"] == "aggregate":
            assert claim["peak_to_live_ratio"] is None, claim_id
            assert claim["peak_to_fastest_live_ratio"] is None, claim_id
        best = claim["fastest_live_median"]
        if mart["fastest_live_value"] is None:
            assert best is None and claim["peak_to_fastest_live_ratio"] is None, claim_id
        else:
            assert (
                best["provider"]["id"],
                best["endpoint"],
                best["value"],
                best["tier"],
                best["stale"],
                best["source"]["id"],
            ) == (
                mart["fastest_provider_id"],
                mart["fastest_endpoint_id"],
                round(mart["fastest_live_value"], 3),
                mart["fastest_tier"],
                mart["fastest_stale"],
                mart["fastest_source_id"],
            ), claim_id
            ratio = mart["peak_to_fastest_live_ratio"]
            assert claim["peak_to_fastest_live_ratio"] == (
                None if ratio is None else round(ratio, 2)
            ), claim_id

        (row,) = page.xpath(f"//tr[@data-claim='{claim_id}']")
        live_cell, ratio_cell, fastest_cell = row.xpath("./td")[-3:]
        if mart["live_value"] is None:
            assert cell_text(live_cell) == "none", claim_id
        else:
            live = speed_number(mart["live_value"])
            assert cell_text(live_cell).startswith(f"{live} t/s"), claim_id
        assert cell_text(ratio_cell) == (
            "—" if expected_ratio is None else f"{expected_ratio:.2f}×"
        ), claim_id
        fastest = cell_text(fastest_cell)
        if mart["fastest_live_value"] is None:
            assert fastest == "none", claim_id
        else:
            who = names[mart["fastest_provider_id"]]
            value = speed_number(mart["fastest_live_value"])
            assert fastest.startswith(f"{value} t/s {who}"), claim_id
            assert mart["fastest_tier"] in fastest.split(), claim_id
            assert ("stale" in fastest) == mart["fastest_stale"], claim_id
    return len(claims)


# --- the bundled build -------------------------------------------------------------------------


def test_export_mart_and_preview_agree_on_every_claim_of_the_bundled_build(built: Settings):
    release = built.exports / "latest"
    documents = {n: json.loads((release / n).read_text(encoding="utf-8")) for n in EXPORT_FILES}
    with duckdb.connect(str(built.database), read_only=True) as con:
        con.execute("SET TimeZone = 'UTC'")
        assert assert_export_mart_and_preview_agree(con, documents) == 9
        (cerebras,) = rows(
            con,
            "SELECT fastest_provider_id, fastest_live_value, fastest_stale FROM mart.peak_vs_live "
            "WHERE claim_id = 'cerebras-gpt-oss-120b-3000'",
        )
    # Cerebras's own 1,753 t/s on gpt-oss-120b is June's, stale: the fastest fresh figure leads
    assert tuple(cerebras.values()) == ("sambanova", 691.0, False)


# --- NVIDIA with live figures ------------------------------------------------------------------


@pytest.fixture(scope="module")
def with_nvidia_live(built: Settings, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the bundled warehouse where an Artificial Analysis page also lists NVIDIA on
    Llama 4 Maverick: 400 t/s (precision not stated), 900 t/s at FP4 (not the FP8 of NVIDIA's
    DGX claims) and "up to 1,500" t/s on a fast tier (a bound, not a median)."""
    path = tmp_path_factory.mktemp("nvidia-live") / "speedbook.duckdb"
    shutil.copy(built.database, path)
    with duckdb.connect(str(path)) as con:
        con.execute("SET TimeZone = 'UTC'")
        template = (
            "SELECT * FROM core.observations WHERE endpoint_id = "
            "'amazon-bedrock/llama-4-maverick/unknown/standard/-' AND metric = "
            "'output_tokens_per_s' ORDER BY observed_at DESC LIMIT 1"
        )
        assert con.execute(template).fetchone() is not None
        for suffix, precision, service_tier, value, qualifier in (
            ("a", "unknown", "standard", 400.0, None),
            ("b", "fp4", "standard", 900.0, None),
            ("c", "unknown", "fast", 1500.0, "up_to"),
        ):
            endpoint = f"nvidia/{MAVERICK}/{precision}/{service_tier}/-"
            con.execute(
                f"""
                INSERT INTO core.observations BY NAME
                SELECT * REPLACE (
                    observation_id || '-nvidia-{suffix}' AS observation_id,
                    '{endpoint}' AS endpoint_id, 'nvidia' AS provider_id,
                    '{precision}' AS precision, '{service_tier}' AS service_tier,
                    {value} AS value, ? AS qualifier
                )
                FROM ({template})
                """,
                [qualifier],
            )
        refresh_current(con, None)  # observations changed: computed afresh, as a build does
        refresh_measurement_sources(con, None)
        apply_marts(con)
    return path


@pytest.fixture(scope="module")
def nvidia_documents(with_nvidia_live: Path) -> dict[str, Any]:
    with duckdb.connect(str(with_nvidia_live), read_only=True) as con:
        con.execute("SET TimeZone = 'UTC'")
        documents = build_exports(read_inputs(con), ReleaseInfo("2026.11.29"))
    for name, document in documents.items():
        check(name, document)
    return documents


def test_an_aggregate_claim_with_a_live_figure_still_gets_no_ratio(nvidia_documents):
    nvidia = next(p for p in nvidia_documents["inference.json"]["providers"] if p["id"] == "nvidia")
    claims = {c["id"]: c for c in nvidia["claims"]}
    aggregate = claims[AGGREGATE]
    assert aggregate["scope"] == "aggregate"
    # the live figure sits beside it, but 72,000 t/s for a whole server is not put over it
    assert aggregate["live_median"]["value"] == 400.0
    assert aggregate["peak_to_live_ratio"] is None
    # the per-user claims get one, from the point figure at a compatible precision only:
    # not the FP4 endpoint (the claim is FP8) and not the "up to" bound
    per_user = claims[PER_USER_FP8]
    assert (per_user["live_median"]["value"], per_user["peak_to_live_ratio"]) == (400.0, 2.5)
    # a claim that states no precision is comparable with the FP4 endpoint, which is faster
    blackwell = claims[BLACKWELL]
    assert blackwell["live_median"]["variant"]["precision"] == "fp4"
    assert (blackwell["live_median"]["value"], blackwell["peak_to_live_ratio"]) == (
        900.0,
        round(1038 / 900, 2),
    )


def test_the_fastest_live_figure_follows_precision_and_skips_bounds(with_nvidia_live: Path):
    with duckdb.connect(str(with_nvidia_live), read_only=True) as con:
        fastest = {
            r["claim_id"]: (r["fastest_endpoint_id"], r["fastest_live_value"])
            for r in rows(
                con,
                "SELECT claim_id, fastest_endpoint_id, fastest_live_value FROM mart.peak_vs_live "
                "WHERE model_id = ?",
                [MAVERICK],
            )
        }
    assert fastest[PER_USER_FP8] == (f"nvidia/{MAVERICK}/unknown/standard/-", 400.0)
    assert fastest[AGGREGATE] == (f"nvidia/{MAVERICK}/unknown/standard/-", 400.0)
    assert fastest[BLACKWELL] == (f"nvidia/{MAVERICK}/fp4/standard/-", 900.0)


def test_export_mart_and_preview_agree_with_nvidia_live_figures(
    with_nvidia_live: Path, nvidia_documents
):
    with duckdb.connect(str(with_nvidia_live), read_only=True) as con:
        con.execute("SET TimeZone = 'UTC'")
        assert assert_export_mart_and_preview_agree(con, nvidia_documents) == 9
