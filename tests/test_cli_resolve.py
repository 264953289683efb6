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
        (["resolve"], "required"),
        (["resolve", "provider"], "required: TEXT"),
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
        handle.write("Groq Inc,groq,trying out an alias\n")
    assert cli("resolve", "provider", "Groq Inc").status == 1
    result = cli("resolve", "provider", "Groq Inc", "--metadata", str(metadata))
    assert result.status == 0
    assert lines(result.out)[0]["provider_id"] == "groq"
