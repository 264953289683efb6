import json
import shutil


def test_validate_the_latest_release(built, cli, monkeypatch):
    monkeypatch.setenv("SPEEDBOOK_EXPORTS", str(built.exports))
    result = cli("validate")
    assert result.status == 0
    assert result.out.count("valid: ") == 3


def test_validate_reports_each_problem_with_its_path(built, cli, tmp_path):
    folder = tmp_path / "exports"
    shutil.copytree(built.exports / "latest", folder)
    document = json.loads((folder / "inference.json").read_text())
    document["providers"][0]["name"] = "<script>alert(1)</script>"
    document["license"] = "proprietary"
    (folder / "inference.json").write_text(json.dumps(document))
    (folder / "model_platforms.json").write_text("{not json")
    (folder / "inference_catalog.json").unlink()
    result = cli("validate", str(folder))
    assert result.status == 1
    assert "inference.json at providers/0/name" in result.out
    assert "inference.json at license" in result.out
    assert "model_platforms.json: not valid JSON" in result.out
    assert "inference_catalog.json: missing" in result.out


def test_validate_a_missing_folder(cli, tmp_path):
    result = cli("validate", str(tmp_path / "nowhere"))
    assert result.status == 2 and "no such folder" in result.err


def test_validate_a_release_checks_the_bytes_its_datapackage_records(built, cli, tmp_path):
    release = tmp_path / "release"
    shutil.copytree(built.exports / "latest", release)
    assert cli("validate", str(release)).status == 0
    with (release / "inference.json").open("ab") as handle:
        handle.write(b" ")  # still valid JSON, still valid against the schema
    result = cli("validate", str(release))
    assert result.status == 1
    assert "invalid: inference.json does not match the sha256 in datapackage.json" in result.out
    (release / "datapackage.json").unlink()
    result = cli("validate", str(release))
    assert result.status == 0  # a plain folder of exports: the schemas only, and it says so
    assert "holds no datapackage.json: only the schemas were checked" in result.out
