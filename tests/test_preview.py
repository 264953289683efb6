"""The release preview page: structure and escaping on a real release built from the bundled
corpus, the `speedbook preview` command, and the page loaded in headless Chromium."""

from __future__ import annotations

import copy
import json
import os
import shutil
import struct
import subprocess
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import lxml.html
import pytest

from pipeline.release.contract import read_release
from pipeline.release.contracts import EXPORT_FILES
from pipeline.release.formatting import measurement_text, speed
from pipeline.release.preview import render_preview
from pipeline.release.preview_history import FigureHistory, read_history
from pipeline.release.preview_models import MODEL_SECTIONS_SHOWN
from pipeline.support.settings import Settings

CHROMIUM = os.environ.get("SPEEDBOOK_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).parent / "artifacts"
SCREENSHOT = ARTIFACTS / "preview.png"
README_IMAGE = Path(__file__).parent / "fixtures" / "preview.png"
# a per-model section on its own (docs/preview.md shows it): `make preview-png` copies it
MODEL_SCREENSHOT = ARTIFACTS / "preview-model.png"
DOCS_IMAGE = Path(__file__).resolve().parents[1] / "docs" / "preview.png"

HOSTILE_SCRIPT = "<script>alert(1)</script>"
HOSTILE_IMG = "<img src=x onerror=alert(1)>"
HOSTILE_ATTR = 'x" onmouseover="alert(1)'


@pytest.fixture(scope="module")
def release(built: Settings) -> Path:
    """The release `speedbook build` published from the bundled corpus (shared build)."""
    return built.exports / "latest"


@pytest.fixture(scope="module")
def documents(release: Path) -> dict[str, dict[str, Any]]:
    return {name: json.loads((release / name).read_text(encoding="utf-8")) for name in EXPORT_FILES}


@pytest.fixture(scope="module")
def history(release: Path) -> FigureHistory | None:
    return read_history(release)


@pytest.fixture(scope="module")
def page(documents: dict[str, dict[str, Any]], history: FigureHistory | None) -> str:
    """The page as the build and `speedbook preview` write it: the exports and the history."""
    return render_preview(documents, history=history)


def tree(html: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(html)


def text(element: lxml.html.HtmlElement) -> str:
    """The element's text, with one space between the pieces of adjacent elements."""
    return " ".join(" ".join(element.itertext()).split())


def hostile(documents: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The release with attacker-chosen names, URLs and ids in every section."""
    docs = copy.deepcopy(documents)
    inference, platforms, catalog = (docs[name] for name in EXPORT_FILES)
    groq = next(p for p in inference["providers"] if p["id"] == "groq")
    groq["name"] = HOSTILE_SCRIPT
    groq["id"] = HOSTILE_ATTR
    groq["headline"]["model"]["name"] = HOSTILE_IMG
    groq["display"] = "~321 t/s · " + HOSTILE_IMG
    claim = groq["claims"][0]
    claim["technique"] = HOSTILE_SCRIPT
    # every address a page links to comes from a snapshot or a source of the envelopes
    for document in (inference, platforms, catalog):
        for snapshot in document["snapshots"]:
            snapshot["url"] = "javascript:alert(document.cookie)"
        for source in document["sources"]:
            source["url"] = "data:text/html,<script>alert(1)</script>"
            source["publisher"] = HOSTILE_SCRIPT
    platform = platforms["platforms"][0]
    platform["name"] = HOSTILE_IMG
    platform["notable"] = [HOSTILE_SCRIPT]
    task = catalog["tasks"][0]
    task["name"] = "</h3><script>alert(1)</script>"
    task["models"][0]["name"] = HOSTILE_IMG
    inference["version"] = "<b>1</b>"
    return docs


def assert_inert(root: lxml.html.HtmlElement) -> None:
    """No element, attribute or link an attacker could have injected. The page's own charts are
    inline SVG; nothing in them can load, link or run anything."""
    assert root.xpath("//script|//img|//iframe|//object|//embed|//link|//b") == []
    assert (
        root.xpath(
            "//*[local-name()='foreignObject' or local-name()='use' or local-name()='image'"
            " or local-name()='a'][ancestor::*[local-name()='svg']]"
        )
        == []
    )
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        assert not [name for name in element.attrib if name.lower().startswith("on")]
    for href in root.xpath("//a/@href"):
        assert href.startswith(("https://", "http://", "#")) or ":" not in href, href


# --- structure --------------------------------------------------------------------------------


def test_one_bar_per_provider_with_a_headline_fastest_first(documents, page):
    providers = documents["inference.json"]["providers"]
    with_headline = {p["id"]: p["headline"] for p in providers if p["headline"]}
    bars = tree(page).xpath("//*[@data-bar]")
    assert len(bars) == len(with_headline) >= 9
    assert {bar.get("data-provider") for bar in bars} == set(with_headline)
    values = [with_headline[bar.get("data-provider")]["value"] for bar in bars]
    assert values == sorted(values, reverse=True)

    widths = {
        bar.get("data-provider"): float(
            bar.xpath(".//*[@class='bar']/@style")[0].removeprefix("width:").rstrip("%")
        )
        for bar in bars
    }
    top = max(values)
    for pid, headline in with_headline.items():
        assert widths[pid] == pytest.approx(100 * headline["value"] / top, abs=0.01)

    groq = next(bar for bar in bars if bar.get("data-provider") == "groq")
    display = next(p["display"] for p in providers if p["id"] == "groq")
    headline = with_headline["groq"]
    method = measurement_text(headline["method"], headline["statistic"], headline["window_minutes"])
    assert display in text(groq) and method in display  # the method, named
    assert groq.get("data-tier") == headline["tier"]
    assert groq.get("data-model") == headline["model"]["id"]
    stale = {bar.get("data-provider") for bar in bars if "stale" in bar.get("class").split()}
    assert stale == {pid for pid, headline in with_headline.items() if headline["stale"]}
    assert "No headline (no T1 live median of any age): " in text(tree(page))


def test_live_versus_record_table(documents, page):
    claims = [c for p in documents["inference.json"]["providers"] for c in p["claims"]]
    rows = {row.get("data-claim"): text(row) for row in tree(page).xpath("//tr[@data-claim]")}
    assert set(rows) == {c["id"] for c in claims} and len(rows) == 9
    cerebras = rows["cerebras-gpt-oss-120b-3000"]
    assert "3,000 t/s" in cerebras and "per user" in cerebras
    # its own endpoint's figure, stale as it is: never another provider's fresher one
    claim = next(c for c in claims if c["id"] == "cerebras-gpt-oss-120b-3000")
    live = claim["live"]
    assert live["endpoint"].startswith("cerebras/gpt-oss-120b/") and live["stale"]
    assert f"{speed(live['value'])} t/s" in cerebras and "stale" in cerebras
    assert f"{claim['peak_to_live_ratio']:.2f}×" in cerebras
    assert "SambaNova" not in cerebras
    aggregate = rows["nvidia-dgx-b200-llama-4-maverick-aggregate"]
    assert "72,000 t/s" in aggregate and "aggregate" in aggregate and "FP8" in aggregate
    assert "speculative decoding (EAGLE-3); custom CUDA kernels" in aggregate
    # NVIDIA has no live figure of its own: none, and no other provider's in its place
    assert "none" in aggregate and "Amazon Bedrock" not in aggregate
    assert "Artificial Analysis" in rows["nvidia-dgx-b200-llama-4-maverick-per-user"]
    groq = rows["groq-llama-3-3-70b-276"]
    assert "321 t/s" in groq and "0.86×" in groq and "Cerebras" not in groq


def test_platforms_table(page):
    rows = {row.get("data-platform"): text(row) for row in tree(page).xpath("//tr[@data-platform]")}
    assert len(rows) == 8
    assert "1,900+ sold directly (11K+ incl. community)" in rows["azure-ai-foundry"]
    assert "Managed cloud catalogue" in rows["amazon-bedrock"]
    assert "98 (listed in models.dev)" in rows["amazon-bedrock"]
    assert "no catalogue" in rows["salesforce-einstein"]
    assert "75 the full Workers AI catalogue" in rows["cloudflare-workers-ai"]
    assert "364" in rows["openrouter"] and "Gateway (proxy)" in rows["openrouter"]


def test_artificial_analysis_is_credited_beside_its_data_and_model_figures(documents, page):
    root = tree(page)
    credits = root.xpath("//p[contains(@class, 'credit')]")
    # under the headline bars, under the model-level table, and in each model section that
    # shows Artificial Analysis's figures
    sections = root.xpath("//section[@class='model'][.//div[@data-method='fixed-workload probe']]")
    assert sections and len(credits) == 2 + len(sections)
    for section in sections:
        assert section.xpath("p[contains(@class, 'credit')]")
    for credit in credits:
        (link,) = credit.xpath(".//a")
        assert (link.text, link.get("href")) == (
            "Artificial Analysis",
            "https://artificialanalysis.ai/",
        )
    rows = root.xpath("//tr[@data-model-figure]")
    assert len(rows) == 15
    fastest = [
        f["value"]
        for m in documents["inference.json"]["models"]
        for f in m["figures"]
        if f["metric"] == "output_tokens_per_s"
    ]
    assert text(rows[0]).split(" t/s")[0].endswith(f"{round(max(fastest)):,}")
    assert "unreviewed" in text(rows[0])  # Mercury 2: no reviewer has confirmed it yet


def test_catalogue_grouped_by_task_with_the_function_calling_mark(documents, page):
    catalog = documents["inference_catalog.json"]
    root = tree(page)
    headings = root.xpath("//h3[@data-task]")
    assert [h.get("data-task") for h in headings] == [t["name"] for t in catalog["tasks"]]
    assert text(headings[0]) == "Text Generation · 38"
    assert len(headings) == 12
    models = root.xpath("//ul[@class='models']/li")
    assert len(models) == catalog["total"] == 75
    marked = [li.get("data-model") for li in models if li.xpath("abbr[@class='fc']")]
    assert len(marked) == catalog["function_calling"] == 14
    assert "@cf/openai/gpt-oss-120b" in marked
    assert text(next(li for li in models if li.get("data-model") == "@cf/openai/gpt-oss-120b")) == (
        "gpt-oss-120b ƒ"
    )


def test_header_release_and_changelog(documents, page):
    root = tree(page)
    version = documents["inference.json"]["version"]
    assert root.get("lang") == "en"
    assert version in root.findtext(".//title")
    meta = text(root.xpath("//dl[@class='meta']")[0])
    assert f"Release {version}" in meta and "Data date 2026-11-29" in meta
    assert root.xpath("//a[text()='changelog']/@href") == ["CHANGELOG.md"]
    assert root.xpath("//a[text()='CC-BY-4.0']/@href") == [
        "https://creativecommons.org/licenses/by/4.0/"
    ]
    other = tree(render_preview(documents, changelog_href="../CHANGELOG.md#2026"))
    assert other.xpath("//a[text()='changelog']/@href") == ["../CHANGELOG.md#2026"]
    for unsafe in ("javascript:alert(1)", "//evil.example/x", "data:text/html,x"):
        dropped = tree(render_preview(documents, changelog_href=unsafe))
        assert dropped.xpath("//a[text()='changelog']") == []
        assert "no changelog" in text(dropped)


def test_self_contained_and_links_only_http(page):
    root = tree(page)
    assert_inert(root)
    assert root.xpath("//*[@src]") == []
    style = root.findtext(".//style")
    assert "url(" not in style and "@import" not in style
    assert "default-src 'none'" in root.xpath("//meta[@http-equiv]/@content")[0]
    external = root.xpath("//a[starts-with(@href, 'http')]/@href")
    assert external and all(h.startswith(("https://", "http://")) for h in external)


def test_same_documents_same_bytes(documents, history, page):
    assert render_preview(copy.deepcopy(documents), history=history) == page


def test_the_parsed_exports_give_the_same_page(documents, history, page):
    """A build parses its exports once and renders the page from them parsed."""
    assert render_preview(read_release(documents), history=history) == page
    assert render_preview(read_release(documents), changelog_href="x.md") == render_preview(
        documents, changelog_href="x.md"
    )


def test_hostile_text_renders_as_text(documents):
    html = render_preview(hostile(documents), changelog_href="javascript:alert(1)")
    root = tree(html)
    assert_inert(root)
    assert "<script>" not in html and "<img" not in html
    body = text(root)
    assert HOSTILE_SCRIPT in body and HOSTILE_IMG in body
    assert "</h3><script>alert(1)</script>" in body
    assert root.xpath(f"//*[@data-provider='{HOSTILE_ATTR}']")  # an attribute value, intact
    assert "<b>1</b>" in root.findtext(".//title")
    hrefs = root.xpath("//a/@href")
    assert not [h for h in hrefs if "javascript" in h or h.startswith("data:")]
    assert root.xpath("//a[text()='changelog']") == []


def test_every_export_is_needed(documents):
    with pytest.raises(ValueError, match=r"missing: inference_catalog\.json"):
        render_preview({k: v for k, v in documents.items() if k != "inference_catalog.json"})


# --- the command --------------------------------------------------------------------------------


def test_command_writes_the_page(cli, release, page, tmp_path):
    output = tmp_path / "index.html"
    result = cli("preview", str(release), "--output", str(output))
    assert result.status == 0, result.err
    assert output.read_text(encoding="utf-8") == page
    assert f"wrote {output}" in result.out
    default = cli("preview", "--exports", str(release.parent))  # <exports>/latest, to stdout
    assert default.status == 0 and default.out == page


def test_command_refuses_bad_input(cli, release, tmp_path):
    result = cli("preview", str(tmp_path / "nowhere"))
    assert result.status == 2 and "no such release folder" in result.err
    result = cli("preview", str(tmp_path))
    assert result.status == 2 and "datapackage.json is missing" in result.err

    # the release is read as `diff` reads it: files must be the bytes datapackage.json records
    # (a complete release that breaks its schema: tests/test_preview_command.py)
    broken = tmp_path / "broken"
    shutil.copytree(release, broken)
    (broken / "model_platforms.json").write_text("{not json", encoding="utf-8")
    result = cli("preview", str(broken))
    assert result.status == 2 and "damaged release" in result.err
    assert "model_platforms.json does not match the sha256 in datapackage.json" in result.err
    assert result.out == ""

    result = cli("preview", str(release), "--output", str(tmp_path / "missing" / "index.html"))
    assert result.status == 2 and "no such folder" in result.err
    result = cli("preview", str(release), "--output", str(tmp_path))
    assert result.status == 2 and "is a folder" in result.err


# --- headless Chromium ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    # Fail, never skip: `make test` installs Chromium (`make browser`), so a missing one is a bug.
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: run `make browser` (installs Debian's chromium) "
            "or set SPEEDBOOK_CHROMIUM to a Chromium binary",
            pytrace=False,
        )
    return CHROMIUM


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        self.server.paths.append(self.path)  # type: ignore[attr-defined]


def section_page(html: str, section_id: str) -> str:
    """The page with one of its sections alone in <main>: its head (CSS, CSP) kept as it is."""
    root = lxml.html.document_fromstring(html)
    body = root.find("body")
    section = root.get_element_by_id(section_id)
    for child in list(body):
        body.remove(child)
    main = lxml.html.Element("main")
    main.append(section)
    body.append(main)
    return lxml.html.tostring(root, doctype="<!DOCTYPE html>", encoding="unicode")


@pytest.fixture(scope="module")
def site(release: Path, documents, page, tmp_path_factory) -> Iterator[tuple[str, list[str]]]:
    """The release folder with index.html, its first model section alone, and a hostile page,
    served on 127.0.0.1."""
    root = tmp_path_factory.mktemp("site")
    for name in EXPORT_FILES:
        shutil.copy(release / name, root / name)
    (root / "index.html").write_text(page, encoding="utf-8")
    (root / "model.html").write_text(section_page(page, "model-1"), encoding="utf-8")
    (root / "hostile.html").write_text(render_preview(hostile(documents)), encoding="utf-8")
    (root / "console.html").write_text(
        '<!DOCTYPE html><html lang="en"><title>t</title><script>console.error("boom")</script>',
        encoding="utf-8",
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    server.paths = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.paths  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def browse(chromium: str, url: str, tmp_path: Path, *extra: str) -> tuple[str, list[str]]:
    """Run headless Chromium on a URL: (stdout, console messages it logged)."""
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        "--enable-logging=stderr",
        "--v=0",
        *extra,
        url,
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"Chromium did not finish within 120 s on {url}", pytrace=False)
    if done.returncode != 0:
        pytest.fail(
            f"Chromium exited with {done.returncode} on {url}:\n{done.stderr[-3000:]}",
            pytrace=False,
        )
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console


def test_console_errors_are_seen(chromium, site, tmp_path):
    """The check below is only worth something if a page's console output reaches us."""
    base, _ = site
    _, console = browse(chromium, f"{base}/console.html", tmp_path, "--dump-dom")
    assert any("boom" in line for line in console)


def test_page_loads_in_chromium_with_one_bar_per_headline(chromium, site, documents, tmp_path):
    base, paths = site
    paths.clear()
    dom, console = browse(chromium, f"{base}/index.html", tmp_path, "--dump-dom")
    assert console == []  # no error, no blocked load, no CSP violation
    assert paths == ["/index.html"]  # nothing else fetched: the page is self-contained
    root = tree(dom)
    assert root.findtext(".//h1").startswith("Speedbook")
    expected = sum(1 for p in documents["inference.json"]["providers"] if p["headline"])
    assert len(root.xpath("//*[@data-bar]")) == expected >= 9
    assert len(root.xpath("//tr[@data-claim]")) == 9
    assert len(root.xpath("//tr[@data-platform]")) == 8
    assert len(root.xpath("//abbr[@class='fc']")) == 14 + 1  # the models, and the legend
    # the per-model sections, their strips, sparklines and latency charts, as the browser built them
    sections = root.xpath("//section[@class='model']")
    assert len(sections) == MODEL_SECTIONS_SHOWN
    for section in sections:
        assert section.xpath(".//svg[@class='strip']") and section.xpath(".//svg[@class='spark']")
        assert section.xpath(".//figure[@class='scatter']/svg")


def test_hostile_names_stay_text_in_chromium(chromium, site, tmp_path):
    base, _ = site
    dom, console = browse(chromium, f"{base}/hostile.html", tmp_path, "--dump-dom")
    assert console == []
    root = tree(dom)
    assert_inert(root)
    assert HOSTILE_SCRIPT in text(root) and HOSTILE_IMG in text(root)


@pytest.fixture(scope="module")
def screenshot(chromium, site, tmp_path_factory) -> bytes:
    """A fresh 1280x2000 render of the page, written to tests/artifacts/preview.png (the file
    `make preview-png` copies over tests/fixtures/preview.png, the README's image)."""
    base, _ = site
    ARTIFACTS.mkdir(exist_ok=True)
    SCREENSHOT.unlink(missing_ok=True)
    _, console = browse(
        chromium,
        f"{base}/index.html",
        tmp_path_factory.mktemp("shot"),
        f"--screenshot={SCREENSHOT}",
        "--window-size=1280,2000",
    )
    assert console == []
    return SCREENSHOT.read_bytes()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_screenshot(screenshot):
    assert png_size(screenshot) == (1280, 2000)
    assert len(screenshot) > 50_000  # a rendered page, not a blank one


def test_the_readme_image_is_a_current_render(screenshot):
    """The README shows tests/fixtures/preview.png: the page as it renders now, not an older
    one. A changed page compresses to a different size; the same page to the same bytes."""
    committed = README_IMAGE.read_bytes()
    assert png_size(committed) == png_size(screenshot)
    drift = abs(len(committed) - len(screenshot)) / len(screenshot)
    assert drift < 0.01, (
        f"{README_IMAGE} ({len(committed):,} bytes) is not the page as it renders now "
        f"({len(screenshot):,} bytes): run `make preview-png` and commit it"
    )


@pytest.fixture(scope="module")
def model_screenshot(chromium, site, tmp_path_factory) -> bytes:
    """The first model section alone, 1280x2300, written to tests/artifacts/preview-model.png
    (`make preview-png` copies it over docs/preview.png)."""
    base, _ = site
    ARTIFACTS.mkdir(exist_ok=True)
    MODEL_SCREENSHOT.unlink(missing_ok=True)
    _, console = browse(
        chromium,
        f"{base}/model.html",
        tmp_path_factory.mktemp("model-shot"),
        f"--screenshot={MODEL_SCREENSHOT}",
        "--window-size=1280,2300",
    )
    assert console == []
    return MODEL_SCREENSHOT.read_bytes()


def test_model_screenshot(model_screenshot):
    assert png_size(model_screenshot) == (1280, 2300)
    assert len(model_screenshot) > 100_000  # strips, sparklines and a chart, not a blank page


def test_the_docs_image_is_a_current_render(model_screenshot):
    """docs/preview.md shows docs/preview.png: a model section as it renders now."""
    committed = DOCS_IMAGE.read_bytes()
    assert png_size(committed) == png_size(model_screenshot)
    drift = abs(len(committed) - len(model_screenshot)) / len(model_screenshot)
    assert drift < 0.01, (
        f"{DOCS_IMAGE} ({len(committed):,} bytes) is not the section as it renders now "
        f"({len(model_screenshot):,} bytes): run `make preview-png` and commit it"
    )
