"""The export contract: the committed JSON Schemas are the ones the models generate, every property
is described, every object refuses a missing or unexpected key and a value of the wrong type,
documents parse into the models and back unchanged, and releases of schema 1.x (a real 1.2.1
release of the bundled corpus, and 1.1 and 1.0 documents made from it) are read in today's
shape."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from old_release import documents_1_2_1
from pydantic import ValidationError

from pipeline.release.changelog import compare, render_markdown, summary_line
from pipeline.release.contract import MODELS, SCHEMA_VERSION, read_release
from pipeline.release.contract.legacy import upgrade
from pipeline.release.contract.schemas import render_schema, schema_file_name
from pipeline.release.contracts import EXPORT_FILES, problems
from pipeline.release.datapackage import resource_hash
from pipeline.release.history import figure_rows
from pipeline.release.publish import read_release as read_release_folder
from pipeline.support.settings import SCHEMAS_DIR

FIXTURES = Path(__file__).parent / "fixtures"
SCHEMAS_1_0 = FIXTURES / "schemas-1.0.0"


@pytest.fixture(scope="module")
def documents(built) -> dict[str, dict[str, Any]]:
    return read_release_folder(built.exports / "latest")


@pytest.fixture(scope="module")
def old() -> dict[str, dict[str, Any]]:
    """The 1.2.1 release of the bundled corpus, as main published it."""
    return documents_1_2_1()


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


# --- strict ---------------------------------------------------------------------------------


def mutations(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, replacement) for every way to break a document's shape: an unexpected or a missing
    key in every object, a value of the wrong type in every field. Lists contribute their first
    item only."""
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
        yield path, "true"
    elif isinstance(value, (int, float)):
        yield path, "1"
    elif isinstance(value, str):
        yield path, 1


def replaced(document: Any, path: tuple[Any, ...], replacement: Any) -> Any:
    if not path:
        return replacement
    head, *rest = path
    if isinstance(document, dict):
        return {**document, head: replaced(document[head], tuple(rest), replacement)}
    return [replaced(document[0], tuple(rest), replacement), *document[1:]]


@pytest.mark.parametrize("export_file", EXPORT_FILES)
def test_every_object_refuses_a_missing_or_unexpected_key_and_a_wrong_type(documents, export_file):
    schema = jsonschema_rs.Draft202012Validator(
        json.loads((SCHEMAS_DIR / schema_file_name(export_file)).read_text())
    )
    original = documents[export_file]
    assert schema.is_valid(original)
    tried = 0
    for path, replacement in mutations(original):
        tried += 1
        assert not schema.is_valid(replaced(original, path, replacement)), (path, replacement)
    assert tried > 100


@pytest.mark.parametrize("export_file", EXPORT_FILES)
def test_a_1_0_document_valid_under_the_hand_written_schema_is_read_and_valid_today(
    old, export_file
):
    hand_written = jsonschema_rs.Draft202012Validator(
        json.loads((SCHEMAS_1_0 / schema_file_name(export_file)).read_text())
    )
    original = as_1_0(export_file, old[export_file])
    assert hand_written.is_valid(original)
    assert problems(export_file, upgrade(export_file, original)) == []


def test_a_hostile_string_anywhere_in_a_document_is_refused(documents):
    inference = copy.deepcopy(documents["inference.json"])
    inference["providers"][0]["figures"][0]["endpoint"] = "<script>"
    # the first model with a figure of its own (a model may have endpoints and no figure)
    at = next(i for i, model in enumerate(inference["models"]) if model["figures"])
    inference["models"][at]["figures"][0]["display"] = "<img src=x onerror=alert(1)>"
    found = problems("inference.json", inference)
    assert any("figures/0/endpoint" in p for p in found)
    assert any(f"models/{at}/figures/0/display" in p for p in found)


@pytest.mark.parametrize(
    ("endpoint", "valid"),
    [
        ("amazon-bedrock/gpt-oss-120b/unknown/standard/-@eu-west-1", True),
        ("provider-5/model-152/fp8/standard/-@eu-west-1", True),
        ("groq/llama-3.3-70b-instruct/unknown/standard/-", True),
        ("novita/deepseek-v4-flash/fp8/standard/-~fp8", True),
        ("amazon-bedrock/gpt-oss-120b/unknown/standard/-@", False),
        ("amazon-bedrock/gpt-oss-120b/unknown/standard/-@eu-west-1@x", False),
        ("amazon-bedrock/gpt-oss-120b/unknown/standard/-@EU West", False),
    ],
)
def test_a_regional_or_keyed_endpoint_id_is_in_the_contract(documents, endpoint, valid):
    """The warehouse spells a regional endpoint's id with @region and a source's own key with
    ~key (core.endpoint_id): a figure of one must publish."""
    inference = copy.deepcopy(documents["inference.json"])
    inference["providers"][0]["figures"][0]["endpoint"] = endpoint
    found = [p for p in problems("inference.json", inference) if "figures/0/endpoint" in p]
    assert (not found) == valid, found


# --- parsing ------------------------------------------------------------------------------------


def test_documents_parse_into_the_models_and_dump_back_unchanged(documents):
    release = read_release(documents)
    assert release.inference.schema_version == SCHEMA_VERSION == "2.0.0"
    for name, model in (
        ("inference.json", release.inference),
        ("model_platforms.json", release.platforms),
        ("inference_catalog.json", release.catalog),
    ):
        assert model.model_dump(mode="json") == documents[name]


def test_a_document_of_the_wrong_shape_does_not_parse(documents):
    broken = copy.deepcopy(documents)
    broken["inference.json"]["providers"][0]["figures"][0]["tier"] = "T9"
    with pytest.raises(ValidationError, match=r"providers\.0\.figures\.0\.tier"):
        read_release(broken)
    broken = copy.deepcopy(documents)
    del broken["inference_catalog.json"]["tasks"][0]["models"][0]["lora"]
    with pytest.raises(ValidationError, match="lora"):
        read_release(broken)
    broken = copy.deepcopy(documents)
    broken["model_platforms.json"]["platforms"][0]["listed_models"] = {"count": "75"}
    with pytest.raises(ValidationError):
        read_release(broken)


# --- releases of schema 1.x ----------------------------------------------------------------------


def test_a_1_2_1_release_is_read_in_todays_shape(old):
    with pytest.raises(ValidationError):
        read_release(old)
    release = read_release(old, earlier_schemas=True)
    inference = release.inference
    assert inference.schema_version == "1.2.1" and inference.license.id == "CC-BY-4.0"
    figures = [f for p in inference.providers for f in p.figures]
    assert len(figures) == 127
    # every source object 1.x repeated is one entry of the sources table, cited by id
    cited = {f.source for f in figures} | {f.source for m in inference.models for f in m.figures}
    assert cited <= {s.id for s in inference.sources}
    assert all(s.terms.license == "unknown" for s in inference.sources)
    aa = next(s for s in inference.sources if s.id == "artificial-analysis-api")
    assert aa.terms.attribution_required and aa.terms.attribution is not None
    # live_median was one scope for every measurement: a one-off run is one_off now
    scopes = {(f.method, f.scope) for f in figures}
    assert ("one-off run", "one_off") in scopes and ("one-off run", "live") not in scopes
    assert all(not f.suspect and f.observed_at_bound == "exact" for f in figures)
    assert all(
        c.live is None or c.live.endpoint.startswith(p.id + "/")
        for p in inference.providers
        for c in p.claims
    )
    assert old["inference.json"]["schema_version"] == "1.2.1"  # the input is left alone
    assert "source" in old["inference.json"]["providers"][0]["live_figures"][0]


def test_a_figure_that_breaks_the_contract_is_named_with_the_snapshot_it_cites(old):
    """A bad value staged from a snapshot (a hand edit in the lake) stops the release at the
    export's check: the problem names the snapshot, so the build's summary does."""
    inference = upgrade("inference.json", old["inference.json"])
    assert problems("inference.json", inference) == []
    figure = inference["providers"][0]["figures"][0]
    figure["value"] = -1.0
    (found,) = problems("inference.json", inference)
    assert found.startswith("inference.json at providers/0/figures/0/value: -1.0 ")
    assert found.endswith(f" (from snapshot {figure['snapshot']})")
    inference["license"] = None  # not under a figure: no snapshot to name
    licence = [p for p in problems("inference.json", inference) if " at license: " in p]
    assert licence and not any("snapshot" in p for p in licence)


def test_a_1_0_release_is_read_with_the_endpoint_ids_the_warehouse_spelled(old):
    """Releases published before 1.1.0 carry no endpoint ids; reading them spells the ids as the
    warehouse did then (checked against every figure the 1.2.1 release of the same content
    carries)."""
    older = {name: as_1_0(name, document) for name, document in old.items()}
    with pytest.raises(ValidationError, match="endpoint"):
        read_release(older)
    release = read_release(older, earlier_schemas=True)
    later = read_release(old, earlier_schemas=True)
    reviewed = [p for p in later.inference.providers if p.reviewed]
    pairs = list(zip(release.inference.providers, reviewed, strict=True))
    for before, after in pairs:
        assert [f.endpoint for f in before.figures] == [f.endpoint for f in after.figures]
        assert (before.headline and before.headline.endpoint) == (
            after.headline and after.headline.endpoint
        )
    assert sum(len(p.figures) for p, _ in pairs) > 50
    assert "endpoint" not in older["inference.json"]["providers"][0]["live_figures"][0]


def test_a_1_0_release_compares_with_the_same_content_of_1_2_1(old):
    """A release without methods compares figure by figure with one that records them: the
    benchmark runs (one figure per endpoint and metric in both) are neither changed, added nor
    removed, and read as the same history rows."""
    older = {name: as_1_0(name, document) for name, document in old.items()}
    changes = compare(older, old)
    assert summary_line(changes).startswith("figures: ")
    assert "schema 1.0.0 -> 1.2.1" in summary_line(changes)
    runs = [
        f["endpoint"]
        for section in ("changed", "added", "removed")
        for f in changes["figures"][section]
        if f["endpoint"].split("/")[1].startswith("llama-2-")
    ]
    assert runs == []
    unrecorded = ("method", "statistic", "scope")  # 1.0 did not record how a figure was measured

    def rows(documents: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in row.items() if k not in unrecorded}
            for row in figure_rows("2026.11.29", documents)
            if row["model_id"].startswith("llama-2-")
        ]

    assert rows(older) == rows(old) and len(rows(old)) == 57


def test_a_1_1_release_is_read_with_its_template_address_as_text(old):
    older = {name: as_1_1(name, document) for name, document in old.items()}
    catalog = older["inference_catalog.json"]
    template = "https://api.cloudflare.com/client/v4/accounts/ACCOUNT_ID/ai/models/search"
    assert catalog["sources"][0]["url"] == template  # 1.1 published it as a link
    release = read_release(older, earlier_schemas=True)
    [source] = release.catalog.sources
    snapshot = release.catalog.snapshots[0]
    assert (source.url, source.url_template) == (snapshot.url, snapshot.url_template)
    assert (source.url, source.url_template) == (None, template)
    assert snapshot.obtained_by == "bundled" and snapshot.reconstructed_from is None
    assert release.catalog.catalogue_snapshots[0].snapshot == snapshot.id
    assert catalog["sources"][0]["url"] == template  # the input is left alone


def test_a_1_2_1_release_diffs_against_today_s(old, documents):
    """The first 2.0 release compares with the last 1.x one: the changelog names what moved."""
    changes = compare(old, documents)
    line = summary_line(changes)
    assert f"schema 1.2.1 -> {SCHEMA_VERSION}" in line
    assert f"The export schema changed from 1.2.1 to {SCHEMA_VERSION}." in render_markdown(changes)
    # the same LLMPerf run on the same endpoint is the same figure: not changed, not re-added
    anyscale = "anyscale/llama-2-70b-chat/unknown/standard/-"
    moved = [
        f
        for section in ("changed", "added", "removed")
        for f in changes["figures"][section]
        if f["endpoint"] == anyscale
    ]
    assert moved == []
    # and back: a 2.0 release compared with a 1.2.1 one (an --as-of build of older snapshots)
    assert f"schema {SCHEMA_VERSION} -> 1.2.1" in summary_line(compare(documents, old))


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
    document["providers"][0]["figures"][0]["tier"] = "T9"
    _rewrite(exports / "2026.11.30", "inference.json", document)

    result = cli("diff", "--exports", str(exports))
    assert result.status == 2 and len(result.err.strip().splitlines()) == 1, result.err
    assert "not a release this version reads" in result.err
    assert "providers.0.figures.0.tier" in result.err
    rows = json.loads(cli("releases", "--json", "--exports", str(exports)).out)
    assert [row["version"] for row in rows] == ["2026.11.29", "2026.11.30"]
    assert rows[0]["summary"].startswith("first release")
    assert "not comparable" in rows[1]["summary"] and "tier" in rows[1]["summary"]
