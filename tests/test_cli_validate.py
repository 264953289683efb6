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
