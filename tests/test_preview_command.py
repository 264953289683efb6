"""`speedbook preview` reads a release the way `diff` and `releases` do (publish.read_release:
every export present and the bytes its datapackage.json records), then checks the schemas."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipeline.release.datapackage import resource_hash
from pipeline.support.settings import Settings


@pytest.fixture
def copy(built: Settings, tmp_path: Path) -> Path:
    """A private copy of the bundled corpus's release, to damage."""
    folder = tmp_path / "release"
    shutil.copytree(built.exports / "latest", folder)
    return folder


def _one_line_error(result, *fragments: str) -> None:
    assert result.status == 2, result.err
    assert result.out == ""
    assert len(result.err.strip().splitlines()) == 1, result.err
    for fragment in fragments:
        assert fragment in result.err, result.err


def _rewrite(folder: Path, name: str, document: dict) -> None:
    """Change an export and record its new bytes in datapackage.json, as a publisher would."""
    data = json.dumps(document).encode("utf-8")
    (folder / name).write_bytes(data)
    package = json.loads((folder / "datapackage.json").read_text(encoding="utf-8"))
    for resource in package["resources"]:
        if resource["path"] == name:
            resource["hash"] = resource_hash(data)
    (folder / "datapackage.json").write_text(json.dumps(package), encoding="utf-8")


def test_a_release_whose_files_do_not_match_datapackage_is_refused(cli, copy):
    document = copy / "inference.json"
    document.write_bytes(document.read_bytes().replace(b"321.0", b"999.0"))
    _one_line_error(
        cli("preview", str(copy)),
        "damaged release",
        "inference.json does not match the sha256 in datapackage.json",
    )


def test_a_folder_without_datapackage_or_an_export_is_refused(cli, copy, tmp_path):
    (copy / "inference_catalog.json").unlink()
    _one_line_error(
        cli("preview", str(copy)), "damaged release", "inference_catalog.json is missing"
    )
    (copy / "datapackage.json").unlink()
    _one_line_error(cli("preview", str(copy)), "datapackage.json is missing")
    _one_line_error(cli("preview", str(tmp_path / "nowhere")), "no such release folder")


def test_a_complete_release_that_breaks_its_schema_is_refused(cli, copy):
    document = json.loads((copy / "inference.json").read_text(encoding="utf-8"))
    document["providers"][0]["name"] = "<script>alert(1)</script>"
    _rewrite(copy, "inference.json", document)
    _one_line_error(cli("preview", str(copy)), "inference.json: does not match its schema")


def test_a_complete_release_is_rendered(cli, copy, tmp_path):
    output = tmp_path / "index.html"
    result = cli("preview", str(copy), "--output", str(output))
    assert result.status == 0, result.err
    assert output.read_text(encoding="utf-8").startswith("<!")


def test_a_release_of_schema_1_2_1_is_rendered_in_todays_shape(cli, tmp_path):
    from old_release import unpack_1_2_1

    folder = unpack_1_2_1(tmp_path)
    output = tmp_path / "index.html"
    result = cli("preview", str(folder), "--output", str(output))
    assert result.status == 0, result.err
    page = output.read_text(encoding="utf-8")
    assert "Speedbook 2026.11.29" in page and "~2,314 t/s · Llama 3.3 70B" in page


def test_a_release_whose_history_is_damaged_is_refused_naming_the_file(cli, copy):
    """The page draws the history of the release's own Parquet: a damaged file there is named,
    never drawn from or silently left out."""
    history = sorted((copy / "parquet" / "history" / "endpoint_figures").glob("*.parquet"))[-1]
    history.write_bytes(b"PAR1 damaged")
    _one_line_error(
        cli("preview", str(copy)),
        "damaged release",
        f"{history.name}: not a readable Parquet file",
    )


def test_a_release_without_history_is_rendered_without_sparklines(cli, copy, tmp_path):
    shutil.rmtree(copy / "parquet")
    output = tmp_path / "index.html"
    result = cli("preview", str(copy), "--output", str(output))
    assert result.status == 0, result.err
    page = output.read_text(encoding="utf-8")
    assert 'class="model"' in page and 'class="spark"' not in page
    assert "this release has no history" in page
