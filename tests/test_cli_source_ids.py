"""A mistyped source id gets the ids it may have meant, from one helper (pipeline/sources/
suggest.py), in every command that takes one: fetch, snapshot add, list and remove."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.sources.registry import load_registry
from pipeline.sources.suggest import close_ids, did_you_mean, unknown_sources
from pipeline.support.settings import BUNDLED_METADATA

BUNDLED_IDS = sorted(load_registry(BUNDLED_METADATA / "sources.toml"))


@pytest.mark.parametrize(
    ("typed", "first"),
    [
        ("openroutr", "openrouter"),  # a letter left out
        ("OpenRouter", "openrouter"),  # the publisher's spelling
        ("aa_kimi_k2_6", "aa-kimi-k2-6"),  # underscores for hyphens
        ("models.dev", "models-dev"),
        ("kimi", "aa-kimi-k2-6"),  # part of an id
        ("artificial-analysis", "artificial-analysis-api"),
    ],
)
def test_close_ids_of_the_bundled_registry(typed, first):
    close = close_ids(typed, BUNDLED_IDS)
    assert close[0] == first and len(close) <= 3 and set(close) <= set(BUNDLED_IDS)


@pytest.mark.parametrize("typed", ["zzz", "x", "", "   ", "no-such-source"])
def test_nothing_close_suggests_nothing(typed):
    assert close_ids(typed, BUNDLED_IDS) == [] and did_you_mean(typed, BUNDLED_IDS) == ""


def test_the_message_names_every_unknown_id_with_its_suggestions():
    assert unknown_sources(["openroutr"], ["openrouter", "cerebras"]) == (
        "unknown source id 'openroutr' (did you mean openrouter?); see `speedbook sources`"
    )
    assert unknown_sources(["openroutr", "zzz"], ["openrouter", "openrouter-endpoints"]) == (
        "unknown source ids 'openroutr' (did you mean openrouter or openrouter-endpoints?), "
        "'zzz'; see `speedbook sources`"
    )


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """An empty warehouse and the bundled registry: nothing is fetched or stored."""
    monkeypatch.delenv("SPEEDBOOK_REGISTRY", raising=False)
    return ["--warehouse", str(tmp_path / "warehouse"), "--exports", str(tmp_path / "exports")]


def test_every_command_that_takes_a_source_id_suggests_the_close_ones(cli, where, tmp_path):
    page = tmp_path / "page.json"
    page.write_text("{}")
    mean = "(did you mean openrouter, openrouter-providers or openrouter-endpoints?)"
    for args in (
        ["fetch", "openroutr"],  # refused before any request
        ["snapshot", "add", "openroutr", str(page)],
        ["snapshot", "list", "openroutr"],
        ["snapshot", "remove", "openroutr", "20260101T000000Z-000000000000.json"],
    ):
        result = cli(*args, *where)
        assert result.status == 2, (args, result.err)
        assert result.out == "" and len(result.err.strip().splitlines()) == 1, result.err
        assert f"unknown source id 'openroutr' {mean}; see `speedbook sources`" in result.err
    assert not (tmp_path / "warehouse" / "raw").exists()  # nothing stored, nothing logged


def test_a_name_that_is_no_source_id_at_all_gets_the_close_ids_too(cli, where):
    result = cli("snapshot", "list", "OpenRouter", *where)
    assert result.status == 2
    assert "'OpenRouter' is not a source id" in result.err
    assert result.err.rstrip().endswith(
        "(did you mean openrouter, openrouter-providers or openrouter-endpoints?)"
    )
