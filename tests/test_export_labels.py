"""Labels say exactly what the source says: a display's amount (`~` only for an approximate
figure, a bound or range written as one), its method, statistic and window, and its date (a
lower-bound time said so); on small inputs, and through the exports on the bundled build's
real inputs with one field changed."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.release.exports import ReleaseInfo, build_exports
from pipeline.release.formatting import amount_text, digits, figure_display, measurement_text
from pipeline.release.queries import read_inputs
from pipeline.sources.registry import load_registry
from pipeline.warehouse.connection import connect


@pytest.mark.parametrize(
    ("value", "low", "high", "qualifier", "metric", "written"),
    [
        (187.1, None, None, None, "output_tokens_per_s", "187.1 t/s"),
        (2314.0, None, None, "approx", "output_tokens_per_s", "~2,314 t/s"),
        (740.0, None, None, "up_to", "output_tokens_per_s", "up to 740 t/s"),
        (1000.0, None, None, "at_least", "output_tokens_per_s", "at least 1,000 t/s"),
        (None, 35.0, 434.0, "range", "output_tokens_per_s", "35–434 t/s"),
        (0.798, None, None, None, "ttft_s", "0.798 s to first token"),
        (0.000075, None, None, None, "price_input_usd_per_mtok", "$0.000075 per 1M input tokens"),
        (1.345, None, None, None, "price_blended_usd_per_mtok", "$1.345 per 1M tokens, blended"),
    ],
)
def test_an_amount_says_what_the_source_says(value, low, high, qualifier, metric, written):
    unit = "USD per 1M tokens" if metric.startswith("price") else "tokens/s"
    text = amount_text(value, low, high, qualifier, metric, "s" if metric == "ttft_s" else unit)
    assert text == written
    assert text.startswith("~") == (qualifier == "approx")


def test_an_exact_figure_keeps_every_digit_it_has_and_no_more():
    assert (digits(187.1), digits(2314.0), digits(1e-06), digits(15.249)) == (
        "187.1",
        "2,314",
        "0.000001",
        "15.249",
    )


@pytest.mark.parametrize(
    ("method", "statistic", "window", "written"),
    [
        ("fixed-workload probe", "median", 4320, "probe median, 72 h"),
        ("percentiles of live routed traffic", "p90", 30, "routed traffic p90, 30 min"),
        ("one-off run", "p50", None, "one-off run p50"),
        ("vendor record", None, None, "vendor record"),
        (None, None, None, "method not recorded"),
    ],
)
def test_every_display_names_its_method_and_statistic(method, statistic, window, written):
    assert measurement_text(method, statistic, window) == written


def test_the_display_of_the_brief():
    assert (
        figure_display(
            amount="187.1 t/s",
            subject="Llama 4 Maverick",
            method="fixed-workload probe",
            statistic="median",
            window=4320,
            observed_at="2026-06-28T00:00:00Z",
            bound="exact",
            stale=False,
        )
        == "187.1 t/s · Llama 4 Maverick · probe median, 72 h · as of 2026-06-28"
    )
    lower = figure_display(
        amount="26 t/s",
        subject="DeepInfra (FP8)",
        method="percentiles of live routed traffic",
        statistic="p50",
        window=30,
        observed_at="2026-04-24T03:17:46Z",
        bound="lower_bound",
        stale=True,
        suspect=True,
    )
    assert lower.endswith("· stale, as of 2026-04-24 or later · suspect")


@pytest.fixture(scope="module")
def inputs(built):
    with connect(built, read_only=True) as con:
        return read_inputs(con)


def test_a_lower_bound_time_and_an_approximate_figure_are_exported_as_such(inputs):
    """A capture time recorded as a lower bound stays one in the figure, its snapshot and its
    display; an approximate figure alone gets its `~`."""
    target = next(f for f in inputs.figures if f["endpoint_id"].startswith("deepinfra/deepseek"))
    figures = [
        f | {"observed_at_bound": "lower_bound", "qualifier": "approx"} if f is target else f
        for f in inputs.figures
    ]
    snapshots = [
        s | {"retrieved_at_bound": "lower_bound"}
        if s["snapshot_id"] == target["snapshot_id"]
        else s
        for s in inputs.snapshots
    ]
    documents = build_exports(
        dataclasses.replace(inputs, figures=figures, snapshots=snapshots), ReleaseInfo("2026.11.29")
    )
    inference = documents["inference.json"]
    exported = [
        f
        for p in inference["providers"]
        for f in p["figures"]
        if f["endpoint"] == target["endpoint_id"]
        and (f["metric"], f["statistic"]) == (target["metric"], target["statistic"])
    ]
    [figure] = exported
    assert figure["observed_at_bound"] == "lower_bound" and figure["qualifier"] == "approx"
    assert figure["display"].startswith("~") and " or later" in figure["display"]
    [snapshot] = [s for s in inference["snapshots"] if s["id"] == target["snapshot_id"]]
    assert snapshot["retrieved_at_bound"] == "lower_bound"
    others = [f for p in inference["providers"] for f in p["figures"] if f is not figure]
    assert all(not f["display"].startswith("~") for f in others if f["qualifier"] is None)


def test_each_source_carries_its_registered_terms_and_unknown_is_never_guessed(inputs, built):
    registry = load_registry(built.registry)
    by_id = {s["source_id"]: s for s in inputs.sources}
    aa = by_id["artificial-analysis-api"]
    assert (aa["license"], aa["attribution_required"]) == ("publisher-terms", True)
    assert aa["terms_url"] == "https://artificialanalysis.ai/documentation"
    for source_id, record in by_id.items():
        entry = registry[source_id]
        assert (record["license"], record["terms_url"] or "") == (entry.license, entry.terms_url)
        assert record["attribution_required"] == entry.attribution_required
    unknown = [r for r in by_id.values() if r["license"] == "unknown"]
    assert unknown and all(r["terms_url"] is None for r in unknown)
