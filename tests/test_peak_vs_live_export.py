"""Record claims beside their own endpoint's live figure: mart.peak_vs_live decides which live
figure sits beside a claim and which claims get a ratio, and inference.json and the preview page
show exactly what the view says, never another provider's figure. Checked on the bundled build.
(The view's own rules, precision and aggregate claims, are the mart's tests.)"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import duckdb
import lxml.html
import pytest

from pipeline.release.contracts import EXPORT_FILES
from pipeline.release.exports import ReleaseInfo, build_exports
from pipeline.release.formatting import speed as speed_number
from pipeline.release.preview import render_preview
from pipeline.release.queries import read_inputs
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect


def cell_text(element: lxml.html.HtmlElement) -> str:
    return " ".join(" ".join(element.itertext()).split())


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def assert_export_mart_and_preview_agree(
    con: duckdb.DuckDBPyConnection, documents: Mapping[str, Any]
) -> int:
    """For every claim: the export's live figure (its own endpoint's) and ratio are the view's,
    and the page shows them. Returns how many claims it checked."""
    view = {r["claim_id"]: r for r in rows(con, "FROM mart.peak_vs_live")}
    inference = documents["inference.json"]
    claims = {c["id"]: (p, c) for p in inference["providers"] for c in p["claims"]}
    assert set(claims) == set(view)
    page = lxml.html.document_fromstring(render_preview(documents))
    for claim_id, (provider, claim) in claims.items():
        mart = view[claim_id]
        live = claim["live"]
        if mart["live_value"] is None:
            assert live is None, claim_id
        else:
            assert (live["value"], live["tier"], live["stale"], live["source"]) == (
                round(mart["live_value"], 3),
                mart["live_tier"],
                mart["live_stale"],
                mart["live_source_id"],
            ), claim_id
            assert live["model"]["id"] == mart["model_id"], claim_id
            assert live["endpoint"] == mart["live_endpoint_id"], claim_id
            assert live["endpoint"].startswith(f"{provider['id']}/"), claim_id  # its own
        expected_ratio = (
            None if mart["peak_to_live_ratio"] is None else round(mart["peak_to_live_ratio"], 2)
        )
        assert claim["peak_to_live_ratio"] == expected_ratio, claim_id
        if claim["scope"] == "aggregate":
            assert claim["peak_to_live_ratio"] is None, claim_id
        (row,) = page.xpath(f"//tr[@data-claim='{claim_id}']")
        live_cell, ratio_cell = row.xpath("./td")[-2:]
        if mart["live_value"] is None:
            assert cell_text(live_cell) == "none", claim_id
        else:
            assert cell_text(live_cell).startswith(f"{speed_number(mart['live_value'])} t/s")
        assert cell_text(ratio_cell) == (
            "—" if expected_ratio is None else f"{expected_ratio:.2f}×"
        ), claim_id
    return len(claims)


def test_export_mart_and_preview_agree_on_every_claim_of_the_bundled_build(built: Settings):
    release = built.exports / "latest"
    documents = {n: json.loads((release / n).read_text(encoding="utf-8")) for n in EXPORT_FILES}
    with connect(built, read_only=True) as con:
        assert assert_export_mart_and_preview_agree(con, documents) == 9
    claims = {c["id"]: c for p in documents["inference.json"]["providers"] for c in p["claims"]}
    # Cerebras's live figures on gpt-oss-120b are all stale: its newest is OpenRouter's routed
    # p50 of July on Cerebras's own FP16 endpoint (the claim's precision is unknown, so any of
    # its precisions is its own); no other provider's faster figure stands beside its claim
    cerebras = claims["cerebras-gpt-oss-120b-3000"]
    assert cerebras["live"]["endpoint"] == "cerebras/gpt-oss-120b/fp16/standard/-~fp16"
    assert (cerebras["live"]["source"], cerebras["live"]["statistic"]) == (
        "openrouter-frontend-stats",
        "p50",
    )
    assert (cerebras["live"]["value"], cerebras["live"]["stale"]) == (532.0, True)
    assert cerebras["peak_to_live_ratio"] == round(3000 / 532, 2)
    page = render_preview(documents)
    assert "Fastest live on model" not in page and "fastest live median" not in page


def test_a_claim_is_never_set_beside_another_providers_figure(built: Settings):
    """Were the view to name another provider's live figure beside a claim, the export refuses
    it (naming the claim) instead of publishing the comparison."""
    with connect(built, read_only=True) as con:
        inputs = read_inputs(con)
    other = next(
        f
        for f in inputs.figures
        if f["provider_id"] == "sambanova" and f["metric"] == "output_tokens_per_s"
    )
    beside = [
        r | {"live_observation_id": other["observation_id"]}
        if r["claim_id"] == "groq-llama-3-3-70b-276"
        else r
        for r in inputs.peak_vs_live
    ]
    changed = dataclasses.replace(inputs, peak_vs_live=beside)
    with pytest.raises(LookupError, match=r"claim groq-llama-3-3-70b-276: .*own endpoint only"):
        build_exports(changed, ReleaseInfo("2026.11.29"))
