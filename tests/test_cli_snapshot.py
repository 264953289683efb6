import json
from pathlib import Path

import pytest

from pipeline.raw.snapshots import SnapshotStore


def stored_files(settings):
    return sorted(
        p.relative_to(settings.raw_dir) for p in settings.raw_dir.rglob("*") if p.is_file()
    )


def kimi_page(speed: str) -> str:
    """A real Artificial Analysis providers page (tests/fixtures), with this speed."""
    return (
        (Path(__file__).parent / "fixtures" / "aa_kimi_page.html")
        .read_text()
        .replace("{speed}", speed)
    )


def test_snapshot_add_stores_a_manual_capture(settings, cli, tmp_path):
    page = tmp_path / "page.html"
    page.write_text(kimi_page("1,001"))
    result = cli(
        "snapshot", "add", "aa-kimi-k2-6", str(page), "--retrieved-at", "2026-11-29T08:00:00Z"
    )
    assert result.status == 0, result.err
    assert "stored aa-kimi-k2-6/20261129T080000Z-" in result.out
    latest = SnapshotStore(settings.raw_dir).latest("aa-kimi-k2-6")
    assert latest.obtained_by == "manual"
    assert latest.url == "https://artificialanalysis.ai/models/kimi-k2-6/providers"
    assert latest.content_type == "text/html"
    again = cli("snapshot", "add", "aa-kimi-k2-6", str(page))
    assert again.status == 0 and "unchanged" in again.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no-such-source", "{page}"], "unknown source id 'no-such-source'"),
        (["aa-kimi-k2-6", "{missing}"], "no such file"),
        (["aa-kimi-k2-6", "{empty}"], "file is empty"),
        (["aa-kimi-k2-6", "{directory}"], "not a regular file"),
        (["aa-kimi-k2-6", "{page}", "--retrieved-at", "yesterday"], "not an ISO 8601"),
        (["aa-kimi-k2-6", "{page}", "--retrieved-at", "2999-01-01"], "in the future"),
        (
            ["aa-kimi-k2-6", "{page}", "--retrieved-at", "0001-01-01T00:00:00+05:00"],
            "is out of range",
        ),
        (["aa-kimi-k2-6", "{page}", "--url", "javascript:alert(1)"], "not an http(s) URL"),
    ],
)
def test_snapshot_add_bad_input_is_one_line_and_writes_nothing(
    settings, cli, tmp_path, args, message
):
    page = tmp_path / "page.html"
    page.write_text("<html>x</html>")
    (tmp_path / "empty.html").write_bytes(b"")
    (tmp_path / "directory").mkdir()
    paths = {
        "page": page,
        "missing": tmp_path / "missing.html",
        "empty": tmp_path / "empty.html",
        "directory": tmp_path / "directory",
    }
    before = stored_files(settings)
    result = cli("snapshot", "add", *[a.format(**paths) for a in args])
    assert result.status != 0
    assert message in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert stored_files(settings) == before


def test_snapshot_add_unreadable_file(settings, cli, tmp_path, monkeypatch):
    page = tmp_path / "locked.html"
    page.write_text("x")
    real_open = Path.open

    def refuse(self, *args, **kwargs):  # tests run as root, where chmod 000 does not stop a read
        if self == page:
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    before = stored_files(settings)
    result = cli("snapshot", "add", "aa-kimi-k2-6", str(page))
    assert result.status != 0 and "cannot read: Permission denied" in result.err
    assert stored_files(settings) == before


def test_snapshot_verify_reports_damage(settings, cli):
    assert cli("snapshot", "verify").status == 0
    victim = next(p for p in sorted(settings.raw_dir.rglob("*.html")))
    victim.write_bytes(victim.read_bytes() + b"<!-- changed -->")
    result = cli("snapshot", "verify")
    assert result.status == 1
    assert "sha256 mismatch" in result.err


def test_sources_lists_every_source_with_a_snapshot(settings, cli):
    result = cli("sources", "--json")
    assert result.status == 0
    rows = json.loads(result.out)
    assert len(rows) >= 20
    # every registered source has a bundled snapshot but Vercel's two: none was captured
    unbundled = {"vercel-ai-gateway-catalogue", "vercel-ai-gateway-endpoints"}
    assert {row["id"] for row in rows if row["snapshots"] == 0} == unbundled
    by_id = {row["id"]: row for row in rows}
    assert by_id["openrouter"]["retrieved_at"] == "2026-05-12T19:10:11Z"
    assert by_id["aa-gpt-oss-120b"]["snapshots"] == 2
    table = cli("sources")
    every = len(rows)
    assert "cloudflare-workers-ai" in table.out
    assert f"{every} sources, {every - len(unbundled)} with a snapshot" in table.out


def test_sources_skips_an_outcome_line_with_an_out_of_range_time(settings, cli):
    log = settings.raw_dir / "openrouter" / "_outcomes.jsonl"
    good = {"source_id": "openrouter", "outcome": "new", "detail": "", "at": "2026-05-12T19:10:11Z"}
    bad = dict(good, outcome="failed", at="0001-01-01T00:00:00+05:00")
    log.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    result = cli("sources", "--json")
    assert result.status == 0, result.err
    by_id = {row["id"]: row for row in json.loads(result.out)}
    assert by_id["openrouter"]["last_outcome"] == "new"


def test_sources_with_a_broken_registry(settings, cli, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[source]]\nid = "x"\n')
    result = cli("sources", "--registry", str(bad))
    assert result.status == 2 and "missing" in result.err


def test_every_command_has_help(cli):
    from pipeline.cli import COMMAND_MODULES

    for name in COMMAND_MODULES:
        result = cli(name, "--help")
        assert result.status == 0
        assert "usage: speedbook" in result.out


def test_snapshot_add_names_the_file_by_what_it_holds(settings, cli):
    """One captured /endpoints response is plain JSON, although a fetch of its source stores a
    bundle: the stored file's extension follows the content type the format reads it as."""
    from conftest import FIXTURES

    from pipeline.raw.bundle import BundleMember, write_bundle

    captured = FIXTURES / "openrouter" / "endpoints" / "deepseek-v4-flash.authenticated.json"
    response = settings.raw_dir.parent / "response.json"  # not the bundled corpus's bytes
    response.write_bytes(captured.read_bytes() + b"\n")
    result = cli("snapshot", "add", "openrouter-endpoints", str(response))
    assert result.status == 0, result.err
    assert result.out.startswith("stored openrouter-endpoints/") and ".json (" in result.out
    bundle = settings.raw_dir.parent / "poll.bundle"
    member = BundleMember("https://openrouter.ai/x", 200, (), response.read_bytes())
    bundle.write_bytes(write_bundle([member]))
    result = cli("snapshot", "add", "openrouter-endpoints", str(bundle))
    assert result.status == 0, result.err
    assert ".bundle (" in result.out
