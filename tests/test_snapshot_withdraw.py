"""Undoing a mistaken snapshot: `snapshot remove` withdraws it (its bytes and record stay, a
marker says when and why), every later build leaves it out, and the next release's changelog
says so. `snapshot add` refuses what its source's parser cannot read, unless --force."""

from __future__ import annotations

import json
import os
from pathlib import Path

from test_build import copy_of

from pipeline.raw.inventory import take_inventory
from pipeline.raw.snapshots import WITHDRAWN_SUFFIX, SnapshotStore
from pipeline.sources.registry import load_registry
from pipeline.support.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures"
KIMI_PAGE = (FIXTURES / "aa_kimi_page.html").read_text()
SOURCE = "openrouter-endpoints"


def stored(settings: Settings) -> list[Path]:
    """The store's files, without the listing cache (rewritten by any listing)."""
    return sorted(
        p for p in settings.raw_dir.rglob("*") if p.is_file() and p.name != ".snapshot-index.json"
    )


def test_add_refuses_bytes_its_parser_rejects_unless_forced(settings, cli, tmp_path):
    response = tmp_path / "response.json"
    response.write_bytes(b"abc")  # three bytes stored for the OpenRouter source by mistake
    before = stored(settings)
    refused = cli("snapshot", "add", SOURCE, str(response))
    assert refused.status == 2
    assert refused.err.strip() == (
        f"speedbook snapshot: error: {response}: the openrouter_endpoints parser cannot read it: "
        "no endpoint could be read from the response: not valid JSON: expected value at line 1 "
        "column 1; "
        "nothing stored (--force stores it anyway)"
    )
    assert stored(settings) == before
    forced = cli("snapshot", "add", SOURCE, str(response), "--force")
    assert forced.status == 0 and forced.out.startswith(f"stored {SOURCE}/")


def test_remove_refuses_an_unknown_snapshot_in_one_line(settings, cli):
    before = stored(settings)
    unknown = cli("snapshot", "remove", SOURCE, "20990101T000000Z-000000000000.json")
    assert unknown.status == 2
    assert unknown.err.strip() == (
        f"speedbook snapshot: error: no snapshot '20990101T000000Z-000000000000.json' of source "
        f"'{SOURCE}' (see `speedbook snapshot list {SOURCE}`)"
    )
    no_source = cli("snapshot", "remove", "no-such-source", "x.json")
    assert no_source.status == 2 and len(no_source.err.strip().splitlines()) == 1
    assert "unknown source id 'no-such-source'" in no_source.err
    assert stored(settings) == before


def test_remove_withdraws_and_keeps_the_bytes(settings, cli, tmp_path):
    response = tmp_path / "response.json"
    response.write_bytes(b"abc")
    assert cli("snapshot", "add", SOURCE, str(response), "--force").status == 0
    store = SnapshotStore(settings.raw_dir)
    mistake = store.list(SOURCE)[-1]
    data, record = store.path_of(mistake), store.source_dir(SOURCE) / (mistake.file + ".meta.json")
    reason = "3 bytes, by mistake"
    result = cli("snapshot", "remove", SOURCE, mistake.snapshot_id, "--reason", reason)
    assert result.status == 0, result.err
    assert result.out.startswith(f"withdrawn {mistake.snapshot_id} at ")
    marker = store.source_dir(SOURCE) / (mistake.file + WITHDRAWN_SUFFIX)
    written = json.loads(marker.read_text())
    assert written["snapshot_id"] == mistake.snapshot_id
    assert written["reason"] == "3 bytes, by mistake" and written["withdrawn_at"].endswith("Z")
    assert data.read_bytes() == b"abc" and record.is_file()  # kept for provenance
    assert not list(store.source_dir(SOURCE).glob(".tmp-*"))  # written through a rename
    # out of every listing a build uses, and marked in `snapshot list`
    assert mistake.snapshot_id not in {m.snapshot_id for m in store.list(SOURCE)}
    inventory = take_inventory(store, load_registry(settings.registry))
    assert mistake.snapshot_id not in {m.snapshot_id for m in inventory.snapshots}
    assert [w.snapshot_id for w in inventory.withdrawn] == [mistake.snapshot_id]
    listing = cli("snapshot", "list", SOURCE)
    (line,) = [line for line in listing.out.splitlines() if mistake.snapshot_id in line]
    assert line.endswith(f"(withdrawn {written['withdrawn_at']}: 3 bytes, by mistake)")
    again = cli("snapshot", "remove", SOURCE, mistake.file)
    assert again.status == 2 and "already withdrawn" in again.err


def test_a_withdrawn_snapshot_leaves_later_builds_and_releases_tell_it_in_order(
    built, tmp_path, cli
):
    """A withdrawn snapshot leaves every later build; the next release's changelog says so, once.
    Two bugs this guards: after `snapshot remove`, `speedbook diff` compared versions by their
    order (the release without the snapshot, of an older data date, before the one it replaced:
    the change read backwards), and `speedbook releases` compared a release with its same-date
    twin ("no content changed"); a first removal's changelog said "first release", having passed
    over the release that cited the withdrawn snapshot."""
    settings = copy_of(built, tmp_path)  # its builds write into its own lake
    where = ["--warehouse", str(settings.warehouse), "--exports", str(settings.exports)]
    store = SnapshotStore(settings.raw_dir)

    def build() -> None:
        result = cli("build", *where)
        assert result.status == 0, result.out + result.err

    def releases() -> list[dict]:
        listed = cli("releases", "--json", *where)
        assert listed.status == 0, listed.err
        return json.loads(listed.out)

    # 1. a later capture with a typo, published, then removed: the release without it has an
    # older data date and becomes latest
    page = tmp_path / "kimi.html"
    page.write_text(KIMI_PAGE.replace("{speed}", "9,999"))  # a typo'd capture, parsed fine
    when = ["--retrieved-at", "2026-11-30"]
    added = cli("snapshot", "add", "aa-kimi-k2-6", str(page), *when, *where)
    assert added.status == 0, added.err
    build()
    assert os.readlink(settings.exports / "latest") == "2026.11.30"
    mistake = store.list("aa-kimi-k2-6")[-1]
    removed = cli("snapshot", "remove", "aa-kimi-k2-6", mistake.file, "--reason", "typo", *where)
    assert removed.status == 0, removed.err
    build()
    latest = settings.exports / "latest"
    assert os.readlink(latest) == "2026.11.29.1"
    inference = json.loads((latest / "inference.json").read_text())
    assert mistake.snapshot_id not in {ref["id"] for ref in inference["snapshots"]}
    cerebras = next(p for p in inference["providers"] if p["id"] == "cerebras")
    assert 9999.0 not in [f["value"] for f in cerebras["figures"]]
    changes = json.loads((latest / "changes.json").read_text())
    assert changes["from"]["version"] == "2026.11.30"  # compared with what latest served
    withdrawn = next(n for n in changes["notes"] if n["kind"] == "withdrawn")
    assert withdrawn["snapshot"] == mistake.snapshot_id and "(typo)" in withdrawn["reason"]
    assert withdrawn["read_from"] == "aa-kimi-k2-6/20261129T000000Z-efaf056cfc4d.html"
    changelog = (latest / "CHANGELOG.md").read_text()
    assert f"aa-kimi-k2-6: snapshot {mistake.file} withdrawn: on " in changelog
    replaced = "replaces release 2026.11.30 as latest: it cites 1 snapshot(s) no longer good"
    assert replaced in changelog
    diff = cli("diff", *where)
    assert diff.status == 0, diff.err
    assert diff.out.startswith("# Speedbook 2026.11.29.1\n")  # the newest publish, not 11.30
    assert "Changes from release 2026.11.30 (data date 2026-11-30)" in diff.out
    # the mistaken 9,999 goes, the compilation's figure is what is left (the right direction)
    cerebras_row = "| Cerebras | Kimi K2.6 | standard | output_tokens_per_s | live | 9,999.0 "
    assert cerebras_row in diff.out
    rows = releases()
    assert [r["version"] for r in rows] == ["2026.11.29", "2026.11.30", "2026.11.29.1"]
    assert [r["compared_with"] for r in rows] == [None, "2026.11.29", "2026.11.30"]
    assert rows[-1]["latest"] and "no content changed" not in rows[-1]["summary"]
    assert rows[-1]["summary"].endswith("replaces release 2026.11.30 as latest")
    table = cli("releases", *where).out.splitlines()
    assert table[-3].startswith("2026.11.29.1 *") and "2026.11.30" in table[-3]
    # nothing new: no release
    build()
    assert sorted(p.name for p in settings.exports.iterdir()) == [
        "2026.11.29",
        "2026.11.29.1",
        "2026.11.30",
        "latest",
    ]

    # 2. the snapshot that release cites, removed: the same data date, one source fewer,
    # compared with its same-date twin, and the earlier withdrawal is not said again
    cited = store.latest("aa-kimi-k2-6")
    assert cli("snapshot", "remove", "aa-kimi-k2-6", cited.file, *where).status == 0
    build()
    assert os.readlink(settings.exports / "latest") == "2026.11.29.2"
    changes = json.loads((settings.exports / "2026.11.29.2" / "changes.json").read_text())
    assert not changes["first_release"] and changes["from"]["version"] == "2026.11.29.1"
    assert [s["id"] for s in changes["sources"]["removed"]] == ["aa-kimi-k2-6"]
    notes = [n for n in changes["notes"] if n["kind"] == "withdrawn"]
    assert [n["snapshot"] for n in notes] == [cited.snapshot_id]  # said once
    diff = cli("diff", *where)
    assert diff.out.startswith("# Speedbook 2026.11.29.2\n"), diff.out + diff.err
    assert "Changes from release 2026.11.29.1 (data date 2026-11-29)" in diff.out
    assert "## Sources removed" in diff.out and "## Sources added" not in diff.out
    last = releases()[-1]
    assert (last["version"], last["compared_with"]) == ("2026.11.29.2", "2026.11.29.1")
    assert "sources: 1 removed" in last["summary"]
