import json
import shutil

import pytest

from pipeline.support.settings import BUNDLED_METADATA

KEYS = [
    "input",
    "status",
    "{kind}_id",
    "precision",
    "service_tier",
    "reasoning_effort",
    "family",
    "region",
    "rule",
    "suggestions",
]


def lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def test_resolve_providers_prints_one_json_line_each(cli):
    labels = ["DeepInfra (Turbo, FP8)", "Together AI", "bedrock"]
    result = cli("resolve", "provider", *labels)
    assert result.status == 0, result.err
    records = lines(result.out)
    assert [r["input"] for r in records] == labels
    assert all(list(r) == [k.format(kind="provider") for k in KEYS] for r in records)
    assert records[0] == {
        "input": "DeepInfra (Turbo, FP8)",
        "status": "resolved",
        "provider_id": "deepinfra",
        "precision": "fp8",
        "service_tier": "turbo",
        "reasoning_effort": None,
        "family": None,
        "region": None,
        "rule": "alias 'DeepInfra'",
        "suggestions": [],
    }
    assert [r["provider_id"] for r in records] == ["deepinfra", "together-ai", "amazon-bedrock"]


def test_resolve_models(cli):
    result = cli(
        "resolve", "model", "gpt-oss-120B (high)", "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
    )
    assert result.status == 0, result.err
    first, second = lines(result.out)
    assert list(first) == [k.format(kind="model") for k in KEYS]
    assert (first["model_id"], first["reasoning_effort"]) == ("gpt-oss-120b", "high")
    assert (second["model_id"], second["precision"], second["service_tier"]) == (
        "llama-3.3-70b-instruct",
        "fp8",
        "fast",
    )
    assert "on path tail of" in second["rule"]


def test_any_unresolved_name_exits_1_and_still_prints_every_line(cli):
    result = cli("resolve", "provider", "Groq", "Cerebas", "Mystery Cloud")
    assert result.status == 1
    groq, near, mystery = lines(result.out)
    assert groq["status"] == "resolved"
    assert near == {
        "input": "Cerebas",
        "status": "unresolved",
        "provider_id": None,
        "precision": "unknown",
        "service_tier": "standard",
        "reasoning_effort": None,
        "family": None,
        "region": None,
        "rule": None,
        "suggestions": near["suggestions"],
    }
    assert "cerebras" in near["suggestions"]
    assert mystery["status"] == "unresolved" and mystery["provider_id"] is None


def test_a_name_with_a_newline_stays_on_one_line(cli):
    result = cli("resolve", "provider", "Together\nAI", "")
    assert result.status == 1
    assert len(result.out.splitlines()) == 2
    together, empty = lines(result.out)
    assert together["provider_id"] == "together-ai"
    assert empty["status"] == "unresolved"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["resolve"], "name a kind (provider or model) and at least one TEXT, or --pending"),
        (["resolve", "provider"], "at least one TEXT"),
        (["resolve", "provider", "Groq", "--pending"], "--pending takes no names"),
        (["resolve", "--pending", "--limit", "0"], "--limit must be a positive whole number"),
        (["resolve", "hardware", "Groq"], "invalid choice: 'hardware'"),
    ],
)
def test_bad_usage_is_an_argparse_error(cli, args, message):
    result = cli(*args)
    assert result.status == 2
    assert message in result.err
    assert result.out == ""


def test_help_explains_with_examples(cli):
    result = cli("resolve", "--help")
    assert result.status == 0
    assert "examples:" in result.out
    assert 'speedbook resolve provider "DeepInfra (Turbo, FP8)"' in result.out
    assert "Exits 0 when every name resolved, 1 otherwise" in result.out


def test_broken_alias_tables_are_a_one_line_error(cli, tmp_path):
    metadata = tmp_path / "metadata"
    shutil.copytree(BUNDLED_METADATA, metadata)
    with (metadata / "provider_aliases.csv").open("a", encoding="utf-8") as handle:
        handle.write("Cloudy,cloudy-inc,\n")
    result = cli("resolve", "provider", "Groq", "--metadata", str(metadata))
    assert result.status == 2
    assert result.out == ""
    assert len(result.err.strip().splitlines()) == 1
    assert result.err.startswith("speedbook resolve: error: ")
    assert "provider_aliases.csv: row" in result.err
    assert "unknown 'cloudy-inc'" in result.err


def test_metadata_option_points_at_a_reviewed_copy(cli, tmp_path):
    metadata = tmp_path / "metadata"
    shutil.copytree(BUNDLED_METADATA, metadata)
    with (metadata / "provider_aliases.csv").open("a", encoding="utf-8") as handle:
        handle.write("GroqCloud Platform,groq,trying out an alias\n")
    assert cli("resolve", "provider", "GroqCloud Platform").status == 1
    result = cli("resolve", "provider", "GroqCloud Platform", "--metadata", str(metadata))
    assert result.status == 0
    assert lines(result.out)[0]["provider_id"] == "groq"


def test_stable_ids_resolve_to_reviewed_entities_or_unreviewed_slugs(cli):
    result = cli(
        "resolve",
        "model",
        "meta-llama/llama-3.3-70b-instruct",
        "deepseek/deepseek-v4-flash",
        "Llama 3.2 70B",
        "--stable",
    )
    reviewed, unreviewed, prose = lines(result.out)
    assert (reviewed["status"], reviewed["model_id"]) == ("resolved", "llama-3.3-70b-instruct")
    assert (unreviewed["status"], unreviewed["model_id"]) == ("unreviewed", "deepseek-v4-flash")
    assert unreviewed["rule"] == (
        "unreviewed: identity spelling of 'deepseek/deepseek-v4-flash' (path 'deepseek/')"
    )
    # as a stable id even a prose-looking name becomes an entity of its own, never a guess
    assert (prose["status"], prose["model_id"]) == ("unreviewed", "llama-3.2-70b")
    assert result.status == 1  # not every name resolved to a reviewed entity


def test_pending_lists_the_unreviewed_entities_of_the_last_build(built, cli, monkeypatch):
    monkeypatch.setenv("SPEEDBOOK_WAREHOUSE", str(built.warehouse))
    result = cli("resolve", "--pending", "--limit", "100000", "--json")
    assert result.status == 0, result.err
    rows = [json.loads(line) for line in result.out.splitlines()]
    by_id = {(r["kind"], r["id"]): r for r in rows}
    # OpenRouter's endpoints name providers and a model no reviewer has confirmed yet
    sail = by_id[("provider", "sail-research")]
    assert sail["name"] == "Sail Research" and "openrouter-endpoints" in sail["named_by"]
    assert ("model", "deepseek-v4-flash") in by_id
    assert ("provider", "deepinfra") not in by_id  # reviewed: its alias matches
    citations = [r["citations"] for r in rows]
    assert citations == sorted(citations, reverse=True)  # most cited first
    table = cli("resolve", "--pending", "--limit", "3")
    assert table.status == 0 and "3 unreviewed entities shown" in table.out


def test_pending_groups_the_spellings_the_rules_put_together(built, cli, monkeypatch):
    """Each entity with the spellings under it (and their sources) and its ranked candidates."""
    monkeypatch.setenv("SPEEDBOOK_WAREHOUSE", str(built.warehouse))
    result = cli("resolve", "--pending", "--limit", "100000", "--json")
    rows = {(r["kind"], r["id"]): r for r in map(json.loads, result.out.splitlines())}
    flash = rows[("model", "deepseek-v4-flash")]
    spelt = {s["label"]: s["sources"] for s in flash["spellings"]}
    assert spelt["deepseek/deepseek-v4-flash"] == (
        "models-dev, openrouter, openrouter-endpoints, openrouter-frontend-stats"
    )
    assert "DeepSeek V4 Flash (Reasoning, Max Effort)" in spelt  # an effort, not a model
    assert "accounts/fireworks/models/deepseek-v4-flash" in spelt
    assert all(set(c) == {"id", "score", "reason"} for c in flash["candidates"])
    assert flash["suggestions"] == [c["id"] for c in flash["candidates"]]
    nov = rows[("model", "gpt-4o-2024-11")]
    # its family first: the undated model and the snapshot of another day
    assert {c["id"] for c in nov["candidates"][:2]} == {"gpt-4o", "gpt-4o-2024-11-20"}
    text = cli("resolve", "--pending", "--limit", "2").out
    blocks = text.split("\n")
    assert blocks[1].startswith("  spelt:      ") and blocks[2].startswith("  candidates: ")
    assert "2 unreviewed entities shown" in text


def test_stable_ids_show_their_region_family_and_the_rules_that_read_them(cli):
    result = cli(
        "resolve",
        "model",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "GPT-5 (minimal)",
        "Llama 3.3 Instruct 70B",
        "--stable",
    )
    bedrock, gpt, llama = lines(result.out)
    assert (bedrock["model_id"], bedrock["region"], bedrock["family"]) == (
        "claude-sonnet-4.5-2025-09-29",
        "us",
        "claude-sonnet-4.5",
    )
    assert "region profile 'us.'" in bedrock["rule"] and "version suffix '-v1:0'" in bedrock["rule"]
    assert (gpt["model_id"], gpt["reasoning_effort"], gpt["status"]) == (
        "gpt-5",
        "minimal",
        "unreviewed",
    )
    assert (llama["status"], llama["model_id"]) == ("resolved", "llama-3.3-70b-instruct")
    assert llama["rule"] == "identity key of reviewed 'llama-3.3-70b-instruct'"
