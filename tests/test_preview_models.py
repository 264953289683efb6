"""The preview page's per-model sections on the release built from the bundled corpus: every
ranking, strip, sparkline and latency chart read back from the page and compared with the exports
(inference.json) and the release's own Parquet history (read here with DuckDB, independently of
the page's code); hostile and odd input; the page's HTML well formed and inert."""

from __future__ import annotations

import copy
import json
import math
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import duckdb
import lxml.html
import pyarrow as pa
import pytest

from pipeline.release.contracts import EXPORT_FILES
from pipeline.release.formatting import digits, speed
from pipeline.release.preview import render_preview
from pipeline.release.preview_history import FigureHistory, read_history
from pipeline.release.preview_models import MODEL_SECTIONS_SHOWN
from pipeline.support.settings import Settings

SPEED, TTFT = "output_tokens_per_s", "ttft_s"
CENTRAL = (None, "median", "p50", "p75", "p90", "p95", "p99")
TAILS = ("p75", "p90", "p95", "p99")
STRIP = (8.0, 212.0)  # where a strip's axis starts and ends, in SVG units
PAGE_BUDGET = 1_200_000  # bytes: the page of the bundled release stays about a megabyte

HOSTILE_SCRIPT = "<script>alert(1)</script>"
HOSTILE_IMG = "<img src=x onerror=alert(1)>"
HOSTILE_ATTR = 'x" onmouseover="alert(1)'


@pytest.fixture(scope="module")
def release(built: Settings) -> Path:
    return built.exports / "latest"


@pytest.fixture(scope="module")
def documents(release: Path) -> dict[str, dict[str, Any]]:
    return {name: json.loads((release / name).read_text(encoding="utf-8")) for name in EXPORT_FILES}


@pytest.fixture(scope="module")
def history(release: Path) -> FigureHistory:
    found = read_history(release)
    assert found is not None, "the bundled release carries its history in parquet/history/"
    return found


@pytest.fixture(scope="module")
def page(documents, history) -> str:
    return render_preview(documents, history=history)


@pytest.fixture(scope="module")
def root(page: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(page)


@pytest.fixture(scope="module")
def models(documents) -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in documents["inference.json"]["models"]}


@pytest.fixture(scope="module")
def series(release: Path) -> dict[tuple, list[tuple[str, float, str | None]]]:
    """Every central output-speed series of the release's Parquet, one point per observed time
    (the newest capture's), as (time, value, qualifier): computed in SQL, not by the page."""
    figures = release / "parquet" / "history" / "endpoint_figures" / "*.parquet"  # a file a day
    snapshots = release / "parquet" / "core" / "snapshots.parquet"
    rows = duckdb.sql(
        f"""
        SELECT endpoint_id, method, statistic, window_minutes,
               strftime(observed_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ'), value, qualifier
        FROM (SELECT h.*, row_number() OVER (
                  PARTITION BY endpoint_id, metric, method, statistic, window_minutes, observed_at
                  ORDER BY s.retrieved_at DESC, h.snapshot_id DESC) AS newest
              FROM '{figures}' AS h JOIN '{snapshots}' AS s USING (snapshot_id)
              WHERE metric = 'output_tokens_per_s'
                AND (statistic IS NULL OR statistic IN ('median', 'p50')))
        WHERE newest = 1 AND value IS NOT NULL AND isfinite(value)
          AND (qualifier IS NULL OR qualifier = 'approx')
        ORDER BY ALL
        """
    ).fetchall()
    found: dict[tuple, list[tuple[str, float, str | None]]] = {}
    for endpoint, method, statistic, window, observed, value, qualifier in rows:
        found.setdefault((endpoint, method, statistic, window), []).append(
            (observed, value, qualifier)
        )
    for points in found.values():
        points.sort()
    return found


def text(element: lxml.html.HtmlElement) -> str:
    return " ".join(" ".join(element.itertext()).split())


def measured(model: dict[str, Any]) -> int:
    return sum(1 for endpoint in model["endpoints"] if endpoint["figures"])


def chosen(documents) -> list[dict[str, Any]]:
    """The models the page should draw, in its order, worked out from inference.json."""
    models = [m for m in documents["inference.json"]["models"] if measured(m)]
    models.sort(key=lambda m: (-measured(m), m["name"], m["id"]))
    return models


def group_of(div: lxml.html.HtmlElement) -> tuple[str, str | None, int | None]:
    window = div.get("data-window")
    return (
        div.get("data-method"),
        div.get("data-statistic") or None,
        int(window) if window else None,
    )


def figure_of(model, endpoint: str, metric: str, method: str, statistic, window):
    (row,) = [e for e in model["endpoints"] if e["id"] == endpoint]
    found = [
        f
        for f in row["figures"]
        if (f["metric"], f["method"], f["statistic"], f["window_minutes"])
        == (metric, method, statistic, window)
    ]
    assert len(found) <= 1
    return found[0] if found else None


def log_x(value: float, low: float, high: float) -> float:
    value = min(max(value, low), high)
    share = math.log10(value / low) / math.log10(high / low)
    return STRIP[0] + share * (STRIP[1] - STRIP[0])


def center_x(mark: lxml.html.HtmlElement) -> float:
    if mark.get("cx") is not None:
        return float(mark.get("cx"))
    return float(re.match(r"translate\(([-\d.]+) ", mark.get("transform")).group(1))


def tick_xs(svg: lxml.html.HtmlElement) -> dict[str, float]:
    ticks = svg.xpath("*[local-name()='path' and @class='tick']")
    if not ticks:
        return {}
    statistics = ticks[0].get("data-statistics").split()
    xs = [float(x) for x in re.findall(r"M([-\d.]+),", ticks[0].get("d"))]
    return dict(zip(statistics, xs, strict=True))


# --- sections and rankings ---------------------------------------------------------------------


def test_a_section_per_model_the_most_measured_first(documents, root):
    expected = chosen(documents)
    sections = root.xpath("//section[@class='model']")
    assert [s.get("data-model-section") for s in sections] == [
        m["name"] for m in expected[:MODEL_SECTIONS_SHOWN]
    ]
    assert sections[0].get("data-model-section") == "gpt-oss-120b"  # 31 measured endpoints
    for section, model in zip(sections, expected, strict=False):
        heading = text(section.xpath("h3")[0])
        assert f"{measured(model)} of {len(model['endpoints'])} endpoints measured" in heading
    more = len(expected) - MODEL_SECTIONS_SHOWN
    assert more > 200
    assert f"{more} more models with measured endpoints are not drawn here" in text(
        root.get_element_by_id("by-model")
    )
    index = root.xpath("//ol[@class='model-index']/li/a/@href")
    assert index == [f"#{s.get('id')}" for s in sections]


def test_endpoints_are_ranked_exactly_as_the_export_ranks_them(documents, root, models):
    for section in root.xpath("//section[@class='model']"):
        model = models[section.get("data-model-section")]
        central: dict[tuple, str | None] = {}
        for ranking in model["rankings"]:
            where = (ranking["method"], ranking["window_minutes"])
            if where not in central or CENTRAL.index(ranking["statistic"]) < CENTRAL.index(
                central[where]
            ):
                central[where] = ranking["statistic"]
        divs = section.xpath(".//div[@class='method']")
        assert sorted(group_of(d) for d in divs) == sorted(
            (method, statistic, window) for (method, window), statistic in central.items()
        )
        for div in divs:
            method, statistic, window = group_of(div)
            rankings = [
                r
                for r in model["rankings"]
                if (r["method"], r["statistic"], r["window_minutes"]) == (method, statistic, window)
            ]
            tbodies = div.xpath(".//table[@class='ranked']/tbody")
            assert len(tbodies) == len(rankings)
            for tbody in tbodies:
                rows = tbody.xpath("tr[@data-endpoint]")
                order = [row.get("data-endpoint") for row in rows]
                # one ranking of the export, whole and in its order: never two merged
                (ranking,) = [r for r in rankings if [e["endpoint"] for e in r["entries"]] == order]
                for row, entry in zip(rows, ranking["entries"], strict=True):
                    rank = row.get("data-rank")
                    assert rank == ("" if entry["rank"] is None else str(entry["rank"]))
                    assert entry["display"] in text(row)  # the export's label, as it is


# --- percentile strips ----------------------------------------------------------------------------


def test_strips_draw_the_exports_figures_on_the_shared_axis(root, models):
    drawn = tails_drawn = 0
    for section in root.xpath("//section[@class='model']"):
        model = models[section.get("data-model-section")]
        axes = {}
        for div in section.xpath(".//div[@class='method']"):
            method, statistic, window = group_of(div)
            columns = div.xpath(".//table[@class='ranked']/thead//svg[@class='axis']")
            for axis in columns:  # one axis per metric, the same in every group of the model
                bounds = (float(axis.get("data-low")), float(axis.get("data-high")))
                assert axes.setdefault(axis.get("data-metric"), bounds) == bounds
            for row in div.xpath(".//table[@class='ranked']/tbody/tr[@data-endpoint]"):
                cells = row.xpath("td[@class='chart']")[: len(columns)]
                for cell, axis in zip(cells, columns, strict=True):
                    metric = axis.get("data-metric")
                    low, high = axes[metric]
                    central = figure_of(
                        model, row.get("data-endpoint"), metric, method, statistic, window
                    )
                    strips = cell.xpath("svg[@class='strip']")
                    if central is None:
                        assert strips == []
                        continue
                    (svg,) = strips
                    (mark,) = svg.xpath("*[contains(@class, 'center')]")
                    assert float(mark.get("data-value")) == central["value"]
                    assert mark.get("data-statistic") == (statistic or "value")
                    assert center_x(mark) == pytest.approx(
                        log_x(central["value"], low, high), abs=0.06
                    )
                    assert ("hollow" in mark.get("class")) == central["stale"]
                    expected = {}
                    for tail in TAILS:
                        found = figure_of(
                            model, row.get("data-endpoint"), metric, method, tail, window
                        )
                        if found and tail != statistic and found["snapshot"] == central["snapshot"]:
                            expected[tail] = found["value"]
                    ticks = tick_xs(svg)
                    assert set(ticks) == set(expected)  # every tail the source gives, no other
                    for tail, value in expected.items():
                        assert ticks[tail] == pytest.approx(log_x(value, low, high), abs=0.06)
                        assert f"{tail} {digits(value)}" in svg.findtext("desc")
                    drawn += 1
                    tails_drawn += len(ticks)
    assert drawn > 400 and tails_drawn > 800, (drawn, tails_drawn)


def test_the_strip_of_one_endpoint_read_back(root):
    """Amazon Bedrock's gpt-oss-120b on OpenRouter, 2026-07-18 08:32: p50 298 t/s with
    p75 375, p90 420, p95 451 and p99 534; time to first token p50 1.586 s ... p99 6.663 s."""
    row = root.xpath(
        "//section[@data-model-section='gpt-oss-120b']"
        "//div[@data-method='percentiles of live routed traffic']"
        "//table[@class='ranked']//tr[@data-endpoint='amazon-bedrock/gpt-oss-120b/unknown/standard/-']"
    )[0]
    speed_strip, ttft_strip = row.xpath(".//svg[@class='strip']")
    assert speed_strip.findtext("desc") == (
        "p50 298 t/s, p75 375 t/s, p90 420 t/s, p95 451 t/s, p99 534 t/s, stale"
    )
    assert ttft_strip.findtext("desc") == (
        "p50 1.586 s, p75 2.296 s, p90 3.27 s, p95 4.167 s, p99 6.663 s, stale"
    )
    assert "routed traffic p50, 30 min" in speed_strip.findtext("title")


# --- sparklines ----------------------------------------------------------------------------------


def test_sparklines_draw_the_release_history(root, series):
    sparklines = single = 0
    for div in root.xpath("//section[@class='model']//div[@class='method']"):
        method, statistic, window = group_of(div)
        history_rows = {
            row.get("data-endpoint"): row for row in div.xpath(".//table[@data-history]/tbody/tr")
        }
        for row in div.xpath(".//table[@class='ranked']/tbody/tr[@data-endpoint]"):
            endpoint = row.get("data-endpoint")
            points = series.get((endpoint, method, statistic, window), [])
            svgs = row.xpath(".//svg[@class='spark']")
            if len(points) >= 2:
                (svg,) = svgs
                assert int(svg.get("data-points")) == len(points)
                assert len(svg.xpath("*[local-name()='polyline']")[0].get("points").split()) == len(
                    points
                )
                first, last = points[0], points[-1]
                show = lambda p: ("~" if p[2] == "approx" else "") + digits(p[1])  # noqa: E731
                assert svg.xpath("string(*[@class='first'])") == show(first)
                assert svg.xpath("string(*[@class='last'])") == show(last)
                sub_daily = window is not None and window < 1440
                first_at = first[0][5:16].replace("T", " ") if sub_daily else first[0][:10]
                assert svg.xpath("string(*[@class='first-at'])").startswith(first_at)
                sparklines += 1
            else:
                assert svgs == []
                single += len(points) == 1
            if points and history_rows:  # a table wherever the group draws a sparkline
                cells = [c.text for c in history_rows[endpoint].xpath("td")]
                assert [c for c in cells if c] == [
                    ("~" if q == "approx" else "") + digits(v) for _, v, q in points
                ]
            else:
                assert endpoint not in history_rows
        assert bool(history_rows) == bool(div.xpath(".//svg[@class='spark']"))
    assert sparklines > 250


def test_the_daily_series_of_one_endpoint_newest_capture_first(root):
    """Baseten's gpt-oss-120b (FP4), OpenRouter's daily chart for 2026-07-10 to 07-18: the day
    of 07-17 was 228 t/s in the capture of 07-17 23:33 and 227 t/s in every later one."""
    row = root.xpath(
        "//section[@data-model-section='gpt-oss-120b']//div[@data-method='daily throughput chart']"
        "//table[@data-history]//tr[@data-endpoint='baseten/gpt-oss-120b/fp4/standard/-~fp4']"
    )[0]
    assert [c.text for c in row.xpath("td")] == [
        "183", "257", "261", "48", "46", "204", "194", "227", "282"
    ]  # fmt: skip
    head = row.getparent().getparent().xpath("thead//th/text()")
    assert head[1] == "2026-07-10" and head[-1] == "2026-07-18"


# --- latency against throughput -------------------------------------------------------------------


def test_latency_charts_plot_pairs_of_one_snapshot_and_name_the_first_to_finish(root, models):
    charts = 0
    for section in root.xpath("//section[@class='model']"):
        model = models[section.get("data-model-section")]
        for div in section.xpath(".//div[@class='method']"):
            method, statistic, window = group_of(div)
            pairs = []
            for row in div.xpath(".//table[@class='ranked']/tbody/tr[@data-endpoint]"):
                endpoint = row.get("data-endpoint")
                s = figure_of(model, endpoint, SPEED, method, statistic, window)
                t = figure_of(model, endpoint, TTFT, method, statistic, window)
                if s and t and s["snapshot"] == t["snapshot"]:
                    pairs.append((s, t))
            figures = div.xpath(".//figure[@class='scatter']")
            if not pairs:
                assert figures == []
                continue
            (figure,) = figures
            charts += 1
            svg = figure.xpath("svg")[0]
            points = svg.xpath("*[@data-point]")
            assert len(points) == len(pairs)
            xs = [center_x(p) for p in points]
            ys = [float(p.get("cy")) for p in points]
            for i, (s, t) in enumerate(pairs):
                for j, (s2, t2) in enumerate(pairs):
                    if s["value"] > s2["value"]:
                        assert xs[i] >= xs[j]  # faster: further right
                    if t["value"] > t2["value"]:
                        assert ys[i] <= ys[j]  # slower to start: higher up
            table = figure.getnext().xpath(".//tbody/tr")
            for tr, (s, t) in zip(table, pairs, strict=True):
                cells = [text(c) for c in tr.xpath("td")]
                assert (
                    cells[1] == f"{digits(s['value'])} t/s"
                    and cells[2] == f"{digits(t['value'])} s"
                )
                for cell, tokens in zip(cells[3:], (100, 1000), strict=True):
                    assert cell == f"{speed(t['value'] + tokens / s['value'])} s"
            for tokens, label in ((100, "100"), (1000, "1,000")):
                finish = [
                    (s["stale"] or t["stale"], t["value"] + tokens / s["value"], n)
                    for n, (s, t) in enumerate(pairs, start=1)
                    if not (s["suspect"] or t["suspect"]) and s["value"] > 0
                ]
                _, seconds, number = min(finish)
                curve = svg.xpath(f"*[@class='curve-label'][starts-with(., '{label} tokens')]")
                assert text(curve[0]) == f"{label} tokens: {speed(seconds)} s ({number})"
    assert charts >= MODEL_SECTIONS_SHOWN


# --- accessible, tabulated, well formed ---------------------------------------------------------


def test_every_chart_has_a_title_a_description_and_its_data_in_a_table(root):
    ids = root.xpath("//@id")
    assert len(ids) == len(set(ids))
    charts = root.xpath("//*[local-name()='svg'][@role='img']")
    assert len(charts) > 700
    for svg in charts:
        title, desc = svg.xpath("*[local-name()='title']"), svg.xpath("*[local-name()='desc']")
        assert title and desc and title[0].text and desc[0].text
        assert svg.get("aria-labelledby") == f"{title[0].get('id')} {desc[0].get('id')}"
    for div in root.xpath("//div[@class='method']"):
        tables = div.xpath("details/table[@data-figures]")
        assert len(tables) == 1
        if div.xpath(".//svg[@class='spark']"):
            assert div.xpath("details/table[@data-history]")
        for figure in div.xpath("figure[@class='scatter']"):
            assert figure.getnext().tag == "details" and figure.getnext().xpath("table")


class _WellFormed(HTMLParser):
    """Every element closed in order (void elements and self-closed SVG apart), no script."""

    VOID = frozenset({"meta", "br", "img", "input", "link", "hr", "wbr", "col", "source"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "object", "embed", "foreignobject", "image", "use"):
            self.problems.append(f"<{tag}> at {self.getpos()}")
        for name, value in attrs:
            if name.startswith("on") or (
                name.endswith("href") and (value or "").startswith("javascript")
            ):
                self.problems.append(f"{name} at {self.getpos()}")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> at {self.getpos()} closes {self.stack[-1:]}")
            return
        self.stack.pop()


def well_formed(html: str) -> list[str]:
    checker = _WellFormed()
    checker.feed(html)
    checker.close()
    return checker.problems + [f"unclosed {tag}" for tag in checker.stack]


def test_the_page_is_well_formed_html_without_script(page):
    assert page.startswith("<!DOCTYPE html>")
    assert well_formed(page) == []
    assert len(page.encode("utf-8")) < PAGE_BUDGET


def test_the_build_wrote_the_same_page(release, page):
    """The build renders index.html after the Parquet, from the same exports and history."""
    assert (release / "index.html").read_text(encoding="utf-8") == page


def test_a_release_without_history_still_has_its_sections(documents, root):
    html = render_preview(documents)
    bare = lxml.html.document_fromstring(html)
    assert len(bare.xpath("//section[@class='model']")) == MODEL_SECTIONS_SHOWN
    assert bare.xpath("//svg[@class='spark']") == [] and bare.xpath("//table[@data-history]") == []
    assert "this release has no history" in text(bare.get_element_by_id("by-model"))
    assert len(bare.xpath("//svg[@class='strip']")) == len(root.xpath("//svg[@class='strip']"))
    assert well_formed(html) == []


# --- hostile and odd input ---------------------------------------------------------------------


def odd_history(single: str, pair: str) -> FigureHistory:
    """A history with one point (and a NaN) for one endpoint, two points for another, and
    nothing else."""
    at = datetime(2026, 7, 18, tzinfo=UTC)
    row = {
        "endpoint_id": single,
        "metric": SPEED,
        "method": "daily throughput chart",
        "statistic": None,
        "window_minutes": 1440,
        "value": 282.0,
        "qualifier": None,
        "observed_at": at,
        "observed_at_bound": "exact",
        "stale": True,
        "suspect": False,
        "snapshot_id": "s",
    }
    rows = [
        row,
        row | {"value": math.nan, "observed_at": at.replace(day=17)},
        row | {"endpoint_id": pair, "value": 0.0},
        row | {"endpoint_id": pair, "value": 12.5, "observed_at": at.replace(day=17)},
    ]
    figures = pa.Table.from_pylist(rows)
    snapshots = pa.Table.from_pylist([{"snapshot_id": "s", "retrieved_at": at}])
    return FigureHistory.from_tables(figures, snapshots)


def test_hostile_and_odd_figures_render_safely(documents):
    docs = copy.deepcopy(documents)
    model = next(m for m in docs["inference.json"]["models"] if m["id"] == "gpt-oss-120b")
    model["name"] = HOSTILE_SCRIPT
    first, second = model["endpoints"][:2]
    daily = next(r for r in model["rankings"] if r["method"] == "daily throughput chart")
    third, fourth = ({"id": e["endpoint"]} for e in daily["entries"][:2])
    first["provider"]["name"] = HOSTILE_IMG
    for f in first["figures"]:
        if f["statistic"] in ("p50", None):
            f["value"] = 0.0  # zero: drawn at the axis' low end, no division by zero
    second["figures"] = [f for f in second["figures"] if f["statistic"] not in TAILS]  # no tails
    ranking = next(r for r in model["rankings"] if len(r["entries"]) > 2)
    ranking["entries"][-1].update(rank=None, suspect=True, display=HOSTILE_ATTR)
    html = render_preview(docs, history=odd_history(third["id"], fourth["id"]))
    assert well_formed(html) == []
    assert "<script>alert" not in html and "<img src" not in html
    root = lxml.html.document_fromstring(html)
    (section,) = root.xpath("//section[@class='model'][1]")
    assert section.get("data-model-section") == HOSTILE_SCRIPT
    body = text(section)
    assert HOSTILE_SCRIPT in body and HOSTILE_IMG in body and HOSTILE_ATTR in body
    assert "unranked" in body
    zero = section.xpath(f".//tr[@data-endpoint='{first['id']}']//svg[@class='strip']")
    assert zero and all(
        center_x(s.xpath("*[contains(@class, 'center')]")[0]) == STRIP[0] for s in zero
    )
    bare = section.xpath(f".//tr[@data-endpoint='{second['id']}']//svg[@class='strip']")
    assert bare and all(tick_xs(s) == {} for s in bare)  # the dot alone, no invented tails
    single = section.xpath(
        f".//div[@data-method='daily throughput chart']//tr[@data-endpoint='{third['id']}']"
    )
    assert "one figure" in text(single[0]) and not single[0].xpath(".//svg[@class='spark']")
    row = f".//div[@data-method='daily throughput chart']//tr[@data-endpoint='{fourth['id']}']"
    (pair,) = section.xpath(row + "//svg[@class='spark']")  # 12.5 t/s, then zero
    assert pair.get("data-points") == "2"
    assert pair.xpath("string(*[@class='first'])") == "12.5"
    assert pair.xpath("string(*[@class='last'])") == "0"


def test_a_figure_that_is_not_a_number_is_refused_with_its_field_named(documents):
    docs = copy.deepcopy(documents)
    model = next(m for m in docs["inference.json"]["models"] if m["id"] == "gpt-oss-120b")
    model["endpoints"][0]["figures"][0]["value"] = math.nan
    with pytest.raises(ValueError, match=r"models\.\d+\.endpoints\.0\.figures\.0\.value"):
        render_preview(docs)
