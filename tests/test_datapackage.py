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
