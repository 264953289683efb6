"""The export contract: the committed JSON Schemas are the ones the models generate, every property
is described, the generated schemas reject whatever the hand-written 1.0 schemas rejected, and
documents parse into the models and back unchanged."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from conftest import BUNDLED_RAW
from pydantic import ValidationError

from pipeline.dagster.envelope import execute
from pipeline.release.changelog import compare, render_markdown, summary_line
from pipeline.release.contract import MODELS, SCHEMA_VERSION, read_release
from pipeline.release.contract.legacy import upgrade
from pipeline.release.contract.schemas import render_schema, schema_file_name
from pipeline.release.contracts import EXPORT_FILES, problems
from pipeline.release.datapackage import resource_hash
from pipeline.release.history import figure_rows
from pipeline.release.publish import read_release as read_release_folder
from pipeline.support.settings import BUNDLED_METADATA, SCHEMAS_DIR, Settings

FIXTURES = Path(__file__).parent / "fixtures"
SCHEMAS_1_0 = FIXTURES / "schemas-1.0.0"


@pytest.fixture(scope="module")
def documents(built) -> dict[str, dict[str, Any]]:
    return read_release_folder(built.exports / "latest")


API_SOURCES = (
    "openrouter-endpoints",
    "openrouter-providers",
    "artificial-analysis-api",
    "models-dev",
)


@pytest.fixture(scope="module")
def documents_without_apis(tmp_path_factory) -> dict[str, dict[str, Any]]:
    """A release of the bundled corpus without the sources 1.2 was made for (the APIs): content
    a 1.0 release could hold, in today's shape."""
    root = tmp_path_factory.mktemp("before-apis")
    registry = root / "sources.toml"
    text = (BUNDLED_METADATA / "sources.toml").read_text(encoding="utf-8")
    registry.write_text(text.split("# --- Machine-readable APIs")[0], encoding="utf-8")
    shutil.copytree(
        BUNDLED_RAW, root / "warehouse" / "raw", ignore=shutil.ignore_patterns(*API_SOURCES)
    )
    settings = Settings.resolve(registry, root / "warehouse", root / "exports")
    outcome = execute(settings)
    assert outcome.success, outcome.failures + outcome.failed_checks
    return read_release_folder(settings.exports / "latest")


ADDED_IN_1_2 = {"method", "statistic", "window_minutes", "corroborated_by", "region", "reviewed"}


def _without_1_2(value: Any) -> Any:
    """A figure, variant or reference without the keys 1.2.0 added to it."""
    if isinstance(value, dict):
        return {k: _without_1_2(v) for k, v in value.items() if k not in ADDED_IN_1_2}
    if isinstance(value, list):
        return [_without_1_2(v) for v in value]
    return value


def _as_1_1(value: Any) -> Any:
    """Every address a link, every snapshot bundled or as obtained, nothing reconstructed."""
    if isinstance(value, list):
        return [_as_1_1(item) for item in value]
    if not isinstance(value, dict):
        return value
    item = {key: _as_1_1(child) for key, child in value.items()}
    if "url_template" in item:
        item["url"] = item["url"] or item.pop("url_template")
        item.pop("url_template", None)
    if "reconstructed_from" in item and "sha256" in item:  # a snapshot entry
        del item["reconstructed_from"]
        item["obtained_by"] = item["obtained_by"].replace("reconstructed", "bundled")
    elif "reconstructed_from" in item and "publisher" in item:  # a source reference
        del item["reconstructed_from"], item["obtained_by"]
    return item


def as_1_1(name: str, document: dict[str, Any]) -> dict[str, Any]:
    """The document as schema 1.1.0 wrote it: without what 1.2.0 added (unreviewed providers,
    added in 1.2, did not exist)."""
    document = _as_1_1(copy.deepcopy(document)) | {"schema_version": "1.1.0"}
    if name == "inference.json":
        del document["models"]
        document["providers"] = [p for p in document["providers"] if p["reviewed"]]
        for provider in document["providers"]:
            del provider["prices"]
        document["providers"] = _without_1_2(document["providers"])
    if name == "model_platforms.json":
        for platform in document["platforms"]:
            listed = platform["listed_models"]
            if listed is not None and listed["catalogue"] == "models_dev":
                platform["listed_models"] = None  # 1.1 listed a platform's own catalogue only
                platform["sources"] = [s for s in platform["sources"] if s["role"] != "catalogue"]
            elif listed is not None:
                del listed["catalogue"], listed["models"]
    if name == "inference_catalog.json":
        for task in document["tasks"]:
            for model in task["models"]:
                del model["model_reviewed"]
    return document


def as_1_0(name: str, document: dict[str, Any]) -> dict[str, Any]:
    """The document as schema 1.0.0 wrote it: without what 1.1.0 and 1.2.0 added."""
    document = as_1_1(name, document) | {"schema_version": "1.0.0"}
    for provider in document.get("providers", []):
        figures = [*provider["live_figures"], provider["headline"]]
        figures += [claim["live_median"] for claim in provider["claims"]]
        for figure in filter(None, figures):
            del figure["endpoint"]
        for claim in provider["claims"]:
            del claim["fastest_live_median"], claim["peak_to_fastest_live_ratio"]
    return document


# --- generated, described ------------------------------------------------------------------------


@pytest.mark.parametrize("export_file", EXPORT_FILES)
def test_the_committed_schemas_are_the_generated_ones(export_file):
    path = SCHEMAS_DIR / schema_file_name(export_file)
    assert path.read_text(encoding="utf-8") == render_schema(export_file, MODELS[export_file]), (
        f"{path.name} is out of date: run `speedbook schemas` and commit it"
    )


# subschemas that constrain an object defined elsewhere instead of defining one
CONDITIONS = ("if", "then", "else")


def object_schemas(schema: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        if "properties" in schema:
            yield where, schema
        for key, child in schema.items():
            if key not in CONDITIONS:
                yield from object_schemas(child, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, child in enumerate(schema):
            yield from object_schemas(child, f"{where}/{index}")


@pytest.mark.parametrize("export_file", EXPORT_FILES)
def test_every_property_has_a_description(export_file):
    schema = json.loads((SCHEMAS_DIR / schema_file_name(export_file)).read_text())
    found = list(object_schemas(schema))
    assert len(found) >= 4
    undescribed = [
        f"{where}/properties/{name}"
        for where, node in found
        for name, prop in node["properties"].items()
        if not str(prop.get("description", "")).strip()
    ]
    assert undescribed == []
    for where, node in found:
        assert node.get("additionalProperties") is False, where
        assert sorted(node["required"]) == sorted(node["properties"]), where
        assert node.get("description"), where


def test_the_check_command_reports_an_outdated_schema_and_writing_fixes_it(cli, tmp_path):
    stale = tmp_path / "inference.schema.json"
    stale.write_text("{}\n")
    result = cli("schemas", "--check", "--output", str(tmp_path))
    assert result.status == 1
    assert f"{stale} is out of date: run `speedbook schemas`" in result.out
    assert stale.read_text() == "{}\n"  # --check writes nothing
    assert cli("schemas", "--output", str(tmp_path)).status == 0
    for export_file, model in MODELS.items():
        path = tmp_path / schema_file_name(export_file)
        assert path.read_text(encoding="utf-8") == render_schema(export_file, model)
    result = cli("schemas", "--check", "--output", str(tmp_path))
    assert result.status == 0 and result.out.count("is up to date") == 3


# --- at least as strict as the hand-written schemas ----------------------------------------------

BAD_STRINGS = ("", "<b>bold</b>", "a\u0007b", "javascript:alert(1)", "Not An Id", "2026-13-45")


def mutations(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, replacement) for every way to break a value: wrong types, bad strings, negative
    numbers, a missing or an unexpected key. Lists contribute their first item only."""
    if isinstance(value, dict):
        yield path, {**value, "unexpected": 1}
        for key in value:
            yield path, {k: v for k, v in value.items() if k != key}
        for key, child in value.items():
            yield from mutations(child, (*path, key))
    elif isinstance(value, list):
        yield path, 7
        if value:
            yield from mutations(value[0], (*path, 0))
    elif isinstance(value, bool):
        yield from ((path, bad) for bad in ("true", 0, None))
    elif isinstance(value, (int, float)):
        yield from ((path, bad) for bad in (-1, 0.5, "1", True, None))
    elif isinstance(value, str):
        yield from ((path, bad) for bad in (*BAD_STRINGS, 1, None))
    else:
        yield from ((path, bad) for bad in ("x", 0, {}))


def replaced(document: Any, path: tuple[Any, ...], replacement: Any) -> Any:
    if not path:
        return replacement
    head, *rest = path
    if isinstance(document, dict):
        return {**document, head: replaced(document[head], tuple(rest), replacement)}
    return [replaced(document[0], tuple(rest), replacement), *document[1:]]


@pytest.mark.parametrize("export_file", EXPORT_FILES)
def test_the_generated_schemas_reject_everything_the_hand_written_ones_rejected(
    documents, export_file
):
    old = jsonschema_rs.Draft202012Validator(
        json.loads((SCHEMAS_1_0 / schema_file_name(export_file)).read_text())
    )
    new = jsonschema_rs.Draft202012Validator(
        json.loads((SCHEMAS_DIR / schema_file_name(export_file)).read_text())
    )
    original = as_1_0(export_file, documents[export_file])
    assert old.is_valid(original) and new.is_valid(upgrade(export_file, original))
    rejected_by_old = looser = 0
    for path, replacement in mutations(original):
        broken = replaced(original, path, replacement)
        if old.is_valid(broken):
            continue
        rejected_by_old += 1
        if new.is_valid(upgrade(export_file, broken)):
            looser += 1
            pytest.fail(f"{export_file}: the 1.0 schema rejects {replacement!r:.80} at {path}")
    assert rejected_by_old > 200 and looser == 0


def test_a_hostile_string_anywhere_in_a_document_is_refused(documents):
    inference = copy.deepcopy(documents["inference.json"])
    inference["providers"][0]["live_figures"][0]["endpoint"] = "<script>"
    inference["providers"][0]["claims"] = [
        c | {"fastest_live_median": None} for c in inference["providers"][0]["claims"]
    ]
    found = problems("inference.json", inference)
    assert any("live_figures/0/endpoint" in p for p in found)


@pytest.mark.parametrize(
    ("endpoint", "valid"),
    [
        ("amazon-bedrock/gpt-oss-120b/unknown/standard/-@eu-west-1", True),
        ("provider-5/model-152/fp8/standard/-@eu-west-1", True),
        ("groq/llama-3.3-70b-instruct/unknown/standard/-", True),
        ("amazon-bedrock/gpt-oss-120b/unknown/standard/-@", False),
        ("amazon-bedrock/gpt-oss-120b/unknown/standard/-@eu-west-1@x", False),
        ("amazon-bedrock/gpt-oss-120b/unknown/standard/-@EU West", False),
    ],
)
def test_a_regional_endpoint_id_is_in_the_contract(documents, endpoint, valid):
    """The warehouse spells a regional endpoint's id with @region (core.endpoint_id): a live
    figure of one must publish (at 90 days of polls, one broke the release)."""
    inference = copy.deepcopy(documents["inference.json"])
    inference["providers"][0]["live_figures"][0]["endpoint"] = endpoint
    found = [p for p in problems("inference.json", inference) if "live_figures/0/endpoint" in p]
    assert (not found) == valid, found


# --- parsing ------------------------------------------------------------------------------------


def test_documents_parse_into_the_models_and_dump_back_unchanged(documents):
    release = read_release(documents)
    assert release.inference.schema_version == SCHEMA_VERSION
    for name, model in (
        ("inference.json", release.inference),
        ("model_platforms.json", release.platforms),
        ("inference_catalog.json", release.catalog),
    ):
        assert model.model_dump(mode="json") == documents[name]


def test_a_document_of_the_wrong_shape_does_not_parse(documents):
    broken = copy.deepcopy(documents)
    broken["inference.json"]["providers"][0]["live_figures"][0]["tier"] = "T9"
    with pytest.raises(ValidationError, match=r"providers\.0\.live_figures\.0\.tier"):
        read_release(broken)
    broken = copy.deepcopy(documents)
    del broken["inference_catalog.json"]["tasks"][0]["models"][0]["lora"]
    with pytest.raises(ValidationError, match="lora"):
        read_release(broken)
    broken = copy.deepcopy(documents)
    broken["model_platforms.json"]["platforms"][0]["listed_models"] = {"count": "75"}
    with pytest.raises(ValidationError):
        read_release(broken)


def test_a_1_0_release_is_read_in_todays_shape_with_the_warehouses_endpoint_ids(
    documents_without_apis,
):
    """Releases published before 1.1.0 carry no endpoint ids; reading them spells the ids as the
    warehouse does (checked against every figure today's release of the same content carries)."""
    documents = documents_without_apis
    old = {name: as_1_0(name, document) for name, document in documents.items()}
    with pytest.raises(ValidationError, match="endpoint"):
        read_release(old)
    release = read_release(old, earlier_schemas=True)
    today = read_release(documents)
    pairs = list(zip(release.inference.providers, today.inference.providers, strict=True))
    for before, after in pairs:
        assert [f.endpoint for f in before.live_figures] == [f.endpoint for f in after.live_figures]
        assert (before.headline and before.headline.endpoint) == (
            after.headline and after.headline.endpoint
        )
        assert all(c.fastest_live_median is None for c in before.claims)
    assert sum(len(p.live_figures) for p, _ in pairs) > 50
    assert old["inference.json"]["schema_version"] == "1.0.0"  # the input is left alone
    assert "endpoint" not in old["inference.json"]["providers"][0]["live_figures"][0]


def test_a_1_0_release_compares_with_the_same_content_today(documents_without_apis):
    """The first release after an upgrade compares with the last 1.0 release: same figures, the
    same endpoints, only the schema version changed."""
    documents = documents_without_apis
    old = {name: as_1_0(name, document) for name, document in documents.items()}
    changes = compare(old, documents)
    # the only change besides the schema: the bundled snapshots now say they are reconstructed
    assert summary_line(changes).startswith(f"schema 1.0.0 -> {SCHEMA_VERSION}; ")
    assert summary_line(changes).endswith(" cited snapshots changed")
    assert changes["figures"]["changed"] == changes["figures"]["added"] == []
    assert f"The export schema changed from 1.0.0 to {SCHEMA_VERSION}." in render_markdown(changes)
    unrecorded = ("method", "statistic")  # 1.0 did not record how a figure was measured
    before = [
        {k: v for k, v in row.items() if k not in unrecorded}
        for row in figure_rows("2026.11.29", old)
    ]
    after = [
        {k: v for k, v in row.items() if k not in unrecorded}
        for row in figure_rows("2026.11.29", documents)
    ]
    assert before == after


def test_a_1_1_release_is_read_with_its_template_address_as_text_and_nothing_reconstructed(
    documents,
):
    old = {name: as_1_1(name, document) for name, document in documents.items()}
    catalog = old["inference_catalog.json"]
    template = "https://api.cloudflare.com/client/v4/accounts/ACCOUNT_ID/ai/models/search"
    assert catalog["sources"][0]["url"] == template  # 1.1 published it as a link
    with pytest.raises(ValidationError, match="url_template"):
        read_release(old)
    release = read_release(old, earlier_schemas=True)
    source, snapshot = release.catalog.sources[0], release.catalog.snapshots[0]
    assert (source.url, source.url_template) == (snapshot.url, snapshot.url_template)
    assert (source.url, source.url_template) == (None, template)
    # how the snapshot came is taken from the document's own list: 1.1 said bundled
    assert source.obtained_by == snapshot.obtained_by == "bundled"
    assert source.reconstructed_from is None and snapshot.reconstructed_from is None
    today = read_release(documents)
    assert today.catalog.sources[0].obtained_by == "reconstructed"
    assert catalog["sources"][0]["url"] == template  # the input is left alone


def test_a_1_1_release_compares_with_the_same_snapshots_now_marked_reconstructed(
    documents_without_apis,
):
    """The same snapshots, once their records say reconstructed: no figure changed, and the
    changelog lists every source whose cited snapshots are now described as rebuilt, naming the
    document."""
    documents = documents_without_apis
    old = {name: as_1_1(name, document) for name, document in documents.items()}
    changes = compare(old, documents)
    reconstructed = {
        s["source"]
        for document in documents.values()
        for s in document["snapshots"]
        if s["obtained_by"] == "reconstructed"
    }
    assert len(reconstructed) >= 20
    assert summary_line(changes) == (
        f"schema 1.1.0 -> {SCHEMA_VERSION}; {len(reconstructed)} cited snapshots changed"
    )
    assert changes["figures"]["changed"] == changes["figures"]["added"] == []
    assert {c["source"] for c in changes["snapshots"]["changed"]} == reconstructed
    markdown = render_markdown(changes)
    assert "reconstructed from Fastest LLM Inference in 2026" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| aa-kimi-k2-6 "))
    assert "reconstructed from AI inference throughput" in row, row


def _rewrite(folder: Path, name: str, document: dict[str, Any]) -> None:
    """Change an export and record its new bytes in datapackage.json, as a publisher would."""
    data = json.dumps(document).encode("utf-8")
    (folder / name).write_bytes(data)
    package = json.loads((folder / "datapackage.json").read_text(encoding="utf-8"))
    for resource in package["resources"]:
        if resource["path"] == name:
            resource["hash"], resource["bytes"] = resource_hash(data), len(data)
    (folder / "datapackage.json").write_text(json.dumps(package), encoding="utf-8")


def test_a_release_the_contract_cannot_read_is_named_by_diff_and_releases(built, cli, tmp_path):
    exports = tmp_path / "exports"
    for version in ("2026.11.29", "2026.11.30"):
        shutil.copytree(built.exports / "latest", exports / version)
    document = json.loads((exports / "2026.11.30" / "inference.json").read_text())
    document["providers"][0]["live_figures"][0]["tier"] = "T9"
    _rewrite(exports / "2026.11.30", "inference.json", document)

    result = cli("diff", "--exports", str(exports))
    assert result.status == 2 and len(result.err.strip().splitlines()) == 1, result.err
    assert "not a release this version reads" in result.err
    assert "providers.0.live_figures.0.tier" in result.err
    rows = json.loads(cli("releases", "--json", "--exports", str(exports)).out)
    assert [row["version"] for row in rows] == ["2026.11.29", "2026.11.30"]
    assert rows[0]["summary"].startswith("first release")
    assert "not comparable" in rows[1]["summary"] and "tier" in rows[1]["summary"]
