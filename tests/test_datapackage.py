"""datapackage.json validates as a Frictionless Data Package (the frictionless framework checks
the descriptor and every resource's bytes and sha256), and release checks still read it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import frictionless
import pytest

from pipeline.release.contracts import EXPORT_FILES
from pipeline.release.publish import ReleaseDamaged, read_release


def validate(descriptor: Path) -> frictionless.Report:
    return frictionless.validate(str(descriptor))


@pytest.fixture(scope="module")
def release(built) -> Path:
    return built.exports / "latest"  # as `frictionless validate exports/latest/...` reads it


def test_a_published_release_is_a_valid_data_package(release):
    report = validate(release / "datapackage.json")
    assert report.valid, report.flatten(["type", "note"])
    assert sorted(task.name for task in report.tasks) == sorted(
        name.removesuffix(".json") for name in EXPORT_FILES
    )
    assert {task.type for task in report.tasks} == {"json"}


def test_each_resource_names_its_json_schema_outside_the_table_schema_key(release):
    package = json.loads((release / "datapackage.json").read_text(encoding="utf-8"))
    assert package["profile"] == "data-package"
    for resource in package["resources"]:
        assert "schema" not in resource  # reserved for a Table Schema
        schema = release / resource["jsonSchema"]
        assert schema.is_file() and json.loads(schema.read_text())["$schema"].endswith("/schema")


def test_frictionless_and_the_release_check_both_catch_a_changed_export(release, tmp_path):
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    path = copy / "inference.json"
    path.write_bytes(path.read_bytes().replace(b"Groq", b"Grok", 1))
    report = validate(copy / "datapackage.json")
    assert not report.valid
    assert ["hash-count"] in report.flatten(["type"])
    with pytest.raises(ReleaseDamaged, match=r"inference\.json does not match the sha256"):
        read_release(copy)


def test_the_descriptor_of_the_old_shape_was_not_a_valid_data_package(release, tmp_path):
    """What issue 12 found: a JSON Schema under `schema` is read as a Table Schema."""
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    package = json.loads((copy / "datapackage.json").read_text(encoding="utf-8"))
    for resource in package["resources"]:
        resource["schema"] = resource.pop("jsonSchema")
    (copy / "datapackage.json").write_text(json.dumps(package), encoding="utf-8")
    assert not validate(copy / "datapackage.json").valid


def test_licences_say_who_licenses_what(release):
    """Speedbook licenses its compilation; each source's terms travel with its data: every
    source the exports cite is in the package's sources with its terms, and each resource lists
    the licences and terms of the sources it holds. Nothing stamps CC-BY-4.0 on their data."""
    package = json.loads((release / "datapackage.json").read_text(encoding="utf-8"))
    [own] = package["licenses"]
    assert own["name"] == "CC-BY-4.0" and "compilation" in own["title"]
    assert "Not the publishers' data" in own["title"]
    cited = set()
    for name in EXPORT_FILES:
        document = json.loads((release / name).read_text(encoding="utf-8"))
        assert document["license"]["id"] == "CC-BY-4.0"
        cited |= {s["id"] for s in document["sources"]}
    sources = {s["id"]: s for s in package["sources"]}
    assert set(sources) == cited
    for source in sources.values():
        assert {"license", "terms_url", "attribution_required", "attribution", "title"} <= set(
            source
        )
    aa = sources["artificial-analysis-api"]
    assert (aa["license"], aa["attribution_required"]) == ("publisher-terms", True)
    assert aa["attribution"] == {
        "publisher": "Artificial Analysis",
        "url": "https://artificialanalysis.ai/",
    }
    assert sources["models-dev"]["license"] == "MIT"
    assert sources["openrouter-endpoints"]["terms_url"] == "https://openrouter.ai/terms"
    assert sources["cerebras-llama-4-maverick-record"]["license"] == "unknown"
    inference = next(r for r in package["resources"] if r["path"] == "inference.json")
    licences = {(entry.get("name"), entry.get("path")) for entry in inference["licenses"]}
    assert ("Apache-2.0", "https://spdx.org/licenses/Apache-2.0.html") in licences
    assert (None, "https://artificialanalysis.ai/documentation") in licences
    assert ("CC-BY-4.0", "https://creativecommons.org/licenses/by/4.0/") not in licences
    assert len(inference["licenses"]) == len({json.dumps(e) for e in inference["licenses"]})
