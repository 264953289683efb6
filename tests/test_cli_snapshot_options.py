"""`speedbook snapshot ACTION`: location options before or after the action, and which source ids
`snapshot list` accepts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import CliResult

from pipeline.cli import build_parser
from pipeline.raw.snapshots import SnapshotStore
from pipeline.support.settings import Settings

Cli = Callable[..., CliResult]
BUNDLED_OPENROUTER = "openrouter/20260512T191011Z-e0abb957ba9b.json"


@pytest.fixture
def other(tmp_path: Path) -> Path:
    """A second warehouse, not the one the environment points at, with one openrouter snapshot."""
    warehouse = tmp_path / "other"
    SnapshotStore(warehouse / "raw").add(
        "openrouter",
        b'{"data": []}',
        url="https://openrouter.ai/api/v1/models",
        retrieved_at=datetime(2026, 11, 1, tzinfo=UTC),
        content_type="application/json",
        obtained_by="manual",
        extension="json",
    )
    return warehouse


@pytest.mark.parametrize(
    "args",
    [
        ["snapshot", "list", "openrouter", "--warehouse", "{other}"],
        ["snapshot", "list", "--warehouse", "{other}", "openrouter"],
        ["snapshot", "--warehouse", "{other}", "list", "openrouter"],
        ["snapshot", "--warehouse", "{elsewhere}", "list", "--warehouse", "{other}", "openrouter"],
    ],
)
def test_snapshot_list_takes_the_warehouse_before_or_after_the_action(
    settings: Settings, cli: Cli, other: Path, args: list[str]
) -> None:
    result = cli(*[a.format(other=other, elsewhere=other.parent / "nowhere") for a in args])
    assert result.status == 0, result.err
    assert "openrouter/20261101T000000Z-" in result.out
    assert BUNDLED_OPENROUTER not in result.out  # not the environment's warehouse
    default = cli("snapshot", "list", "openrouter")
    assert BUNDLED_OPENROUTER in default.out


@pytest.mark.parametrize("before", [True, False])
def test_snapshot_add_and_verify_take_the_warehouse_either_side(
    settings: Settings, cli: Cli, other: Path, tmp_path: Path, before: bool
) -> None:
    page = tmp_path / "page.html"
    fixture = Path(__file__).parent / "fixtures" / "aa_kimi_page.html"
    page.write_text(fixture.read_text().replace("{speed}", "104"))  # a page its parser reads
    where = ["--warehouse", str(other)]

    def run(action: str, *rest: str) -> CliResult:
        args = (
            ["snapshot", *where, action, *rest] if before else ["snapshot", action, *rest, *where]
        )
        return cli(*args)

    added = run("add", "aa-kimi-k2-6", str(page), "--retrieved-at", "2026-11-02")
    assert added.status == 0, added.err
    assert SnapshotStore(other / "raw").latest("aa-kimi-k2-6") is not None
    verified = run("verify")
    assert verified.status == 0 and "2 snapshots checked, 0 problem(s)" in verified.out


@pytest.mark.parametrize("option", ["--registry", "--warehouse", "--exports"])
@pytest.mark.parametrize("action", [["add", "s", "f"], ["list"], ["verify"]])
def test_every_location_option_parses_on_both_sides_of_every_action(
    option: str, action: list[str]
) -> None:
    parser = build_parser()
    name = option.removeprefix("--")
    after = parser.parse_args(["snapshot", *action, option, "X"])
    before = parser.parse_args(["snapshot", option, "X", *action])
    neither = parser.parse_args(["snapshot", *action])
    assert getattr(after, name) == getattr(before, name) == "X"
    assert getattr(neither, name) is None  # so the environment and the default still apply
    assert getattr(parser.parse_args(["sources", option, "Y"]), name) == "Y"


def test_a_registry_given_after_the_action_is_used(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[source]]\nid = "x"\n')
    result = cli("snapshot", "add", "openrouter", str(bad), "--registry", str(bad))
    assert result.status == 2 and "missing" in result.err


@pytest.mark.parametrize("action", ["add", "list", "verify"])
def test_each_snapshot_action_documents_the_location_options(cli: Cli, action: str) -> None:
    result = cli("snapshot", action, "--help")
    assert result.status == 0
    assert f"usage: speedbook snapshot {action}" in result.out
    for option in ("--registry FILE", "--warehouse DIR", "--exports DIR"):
        assert option in result.out


@pytest.mark.parametrize("source_id", ["../x", "../../etc", "a/b", "Open_Router", ".hidden"])
def test_snapshot_list_refuses_an_id_that_is_not_a_slug(
    settings: Settings, cli: Cli, source_id: str
) -> None:
    result = cli("snapshot", "list", source_id)
    assert result.status == 2
    assert result.out == ""
    assert "is not a source id (a lower-case slug" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_snapshot_list_of_an_unknown_source_is_an_error(settings: Settings, cli: Cli) -> None:
    result = cli("snapshot", "list", "no-such-source")
    assert result.status == 2
    assert "unknown source id 'no-such-source'" in result.err


def test_snapshot_list_of_a_folder_not_in_the_registry_still_lists(
    settings: Settings, cli: Cli
) -> None:
    SnapshotStore(settings.raw_dir).add(
        "retired-source",
        b"<html>old</html>",
        url="https://example.org/",
        retrieved_at=datetime(2026, 1, 1, tzinfo=UTC),
        content_type="text/html",
        obtained_by="manual",
        extension="html",
    )
    result = cli("snapshot", "list", "retired-source")
    assert result.status == 0 and "retired-source/20260101T000000Z-" in result.out


def test_snapshot_list_of_a_registered_source_without_snapshots(
    settings: Settings, cli: Cli
) -> None:
    for path in (settings.raw_dir / "openrouter").iterdir():
        path.unlink()
    (settings.raw_dir / "openrouter").rmdir()
    result = cli("snapshot", "list", "openrouter")
    assert result.status == 0 and result.out == ""
    assert "no snapshot of openrouter yet" in result.err
