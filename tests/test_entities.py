import csv
import json
import shutil
from pathlib import Path

import pytest
from conftest import BUNDLED_RAW

from pipeline.normalise.entities import (
    AliasError,
    ModelRecord,
    ProviderRecord,
    Resolution,
    Resolver,
    alias_key,
)
from pipeline.support.settings import BUNDLED_METADATA

CSV_FILES = ("providers.csv", "provider_aliases.csv", "models.csv", "model_aliases.csv")
LLMPERF_SUMMARIES = sorted(
    path for path in BUNDLED_RAW.glob("llmperf-*/*.json") if not path.name.endswith(".meta.json")
)
LLMPERF_MODELS = {
    "anyscale-7b": "llama-2-7b-chat",
    "anyscale-13b": "llama-2-13b-chat",
    "anyscale-70b": "llama-2-70b-chat",
    "bedrock-13b": "llama-2-13b-chat",
    "bedrock-70b": "llama-2-70b-chat",
    "fireworks-7b": "llama-2-7b-chat",
    "fireworks-13b": "llama-2-13b-chat",
    "fireworks-70b": "llama-2-70b-chat",
    "groq-70b": "llama-2-70b-chat",
    "lepton-7b": "llama-2-7b-chat",
    "lepton-13b": "llama-2-13b-chat",
    "lepton-70b": "llama-2-70b-chat",
    "perplexity-70b": "llama-2-70b-chat",
    "replicate-7b": "llama-2-7b-chat",
    "replicate-13b": "llama-2-13b-chat",
    "replicate-70b": "llama-2-70b-chat",
    "together-7b": "llama-2-7b-chat",
    "together-13b": "llama-2-13b-chat",
    "together-70b": "llama-2-70b-chat",
}


@pytest.fixture(scope="module")
def resolver() -> Resolver:
    return Resolver.load(BUNDLED_METADATA)


@pytest.fixture
def metadata(tmp_path: Path) -> Path:
    """A copy of the four reviewed tables to break."""
    directory = tmp_path / "metadata"
    directory.mkdir()
    for name in CSV_FILES:
        shutil.copy(BUNDLED_METADATA / name, directory / name)
    return directory


def append(path: Path, line: str) -> int:
    """Append a row; returns its line number."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text + line + "\n", encoding="utf-8")
    return text.count("\n") + 1


def test_tables_load(resolver):
    assert isinstance(resolver.providers["together-ai"], ProviderRecord)
    assert resolver.providers["together-ai"].name == "Together AI"
    assert resolver.providers["azure"].country is None
    assert resolver.providers["groq"].website == "https://groq.com"
    assert isinstance(resolver.models["deepseek-r1-0528"], ModelRecord)
    assert resolver.models["deepseek-r1-0528"].creator == "DeepSeek"
    assert resolver.models["gpt-oss-20b"].notes is None


@pytest.mark.parametrize(
    ("label", "provider_id"),
    [
        ("Cerebras", "cerebras"),
        ("SambaNova", "sambanova"),
        ("Fireworks", "fireworks-ai"),
        ("Together AI", "together-ai"),
        ("Groq", "groq"),
        ("DeepInfra", "deepinfra"),
        ("Google Vertex", "google-vertex"),
        ("Amazon Bedrock", "amazon-bedrock"),
        ("Azure", "azure"),
        ("Nebius", "nebius"),
        ("Baseten", "baseten"),
        ("Novita", "novita-ai"),
        ("Novita AI", "novita-ai"),
        ("Fireworks AI", "fireworks-ai"),
        ("Together.ai", "together-ai"),
        # LLMPerf framework names
        ("anyscale", "anyscale"),
        ("bedrock", "amazon-bedrock"),
        ("fireworks", "fireworks-ai"),
        ("groq", "groq"),
        ("lepton", "lepton-ai"),
        ("perplexity", "perplexity"),
        ("replicate", "replicate"),
        ("together", "together-ai"),
    ],
)
def test_corpus_provider_labels_resolve(resolver, label, provider_id):
    resolution = resolver.provider(label)
    assert resolution == Resolution(
        label, "resolved", provider_id, "unknown", "standard", None, resolution.rule, ()
    )
    assert resolution.rule and resolution.rule.startswith("alias ")


@pytest.mark.parametrize(
    ("label", "provider_id", "precision", "service_tier", "rule"),
    [
        ("DeepInfra (Turbo)", "deepinfra", "unknown", "turbo", "alias 'DeepInfra'"),
        ("DeepInfra (Turbo, FP8)", "deepinfra", "fp8", "turbo", "alias 'DeepInfra'"),
        ("Azure (FP8)", "azure", "fp8", "standard", "alias 'Azure'"),
        (
            "Together.ai (Reference, FP16)",
            "together-ai",
            "fp16",
            "reference",
            "alias 'Together.ai'",
        ),
        (
            "Amazon Bedrock Latency Optimized",
            "amazon-bedrock",
            "unknown",
            "latency-optimized",
            "alias 'Amazon Bedrock'",
        ),
        # case, spacing and separators do not matter; the rule names the row that matched
        ("  together   ai ", "together-ai", "unknown", "standard", "alias 'Together AI'"),
        ("TOGETHER_AI", "together-ai", "unknown", "standard", "alias 'Together AI'"),
    ],
)
def test_provider_variants_resolve(resolver, label, provider_id, precision, service_tier, rule):
    resolution = resolver.provider(label)
    assert (resolution.status, resolution.entity_id) == ("resolved", provider_id)
    assert (resolution.precision, resolution.service_tier) == (precision, service_tier)
    assert resolution.rule == rule
    assert resolution.input == label


@pytest.mark.parametrize(
    ("label", "model_id", "precision", "service_tier", "effort"),
    [
        ("gpt-oss-120B (high)", "gpt-oss-120b", "unknown", "standard", "high"),
        ("gpt-oss-120b (high, Turbo)", "gpt-oss-120b", "unknown", "turbo", "high"),
        ("Llama 3.3 70B", "llama-3.3-70b-instruct", "unknown", "standard", None),
        ("Kimi K2.6", "kimi-k2.6", "unknown", "standard", None),
        ("Llama 4 Maverick", "llama-4-maverick", "unknown", "standard", None),
        ("Llama 4 Maverick (400B)", "llama-4-maverick", "unknown", "standard", None),
        ("DeepSeek R1 (0528)", "deepseek-r1-0528", "unknown", "standard", None),
        ("DeepSeek R1 671B (FP16)", "deepseek-r1", "fp16", "standard", None),
        ("Llama 3.1 70B", "llama-3.1-70b-instruct", "unknown", "standard", None),
        ("Llama 3 8B", "llama-3-8b-instruct", "unknown", "standard", None),
        (
            "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
            "llama-3.3-70b-instruct",
            "fp8",
            "fast",
            None,
        ),
        ("@cf/meta/llama-2-7b-chat-fp16", "llama-2-7b-chat", "fp16", "standard", None),
        ("@cf/meta/llama-2-7b-chat-int8", "llama-2-7b-chat", "int8", "standard", None),
        ("@cf/meta-llama/llama-2-7b-chat-hf-lora", "llama-2-7b-chat", "unknown", "standard", None),
        ("Llama-4-Maverick-17B-128E-Instruct-FP8", "llama-4-maverick", "fp8", "standard", None),
        ("gpt-oss-20b", "gpt-oss-20b", "unknown", "standard", None),
    ],
)
def test_corpus_model_labels_resolve(resolver, label, model_id, precision, service_tier, effort):
    resolution = resolver.model(label)
    assert (resolution.status, resolution.entity_id) == ("resolved", model_id), resolution
    assert (resolution.precision, resolution.service_tier) == (precision, service_tier)
    assert resolution.reasoning_effort == effort
    assert resolution.suggestions == ()


def test_path_tail_rule_is_named(resolver):
    resolution = resolver.model("@cf/meta/llama-3.3-70b-instruct-fp8-fast")
    assert resolution.rule == (
        "alias 'llama-3.3-70b-instruct' on path tail of '@cf/meta/llama-3.3-70b-instruct'"
    )


def test_every_llmperf_model_id_in_the_corpus_resolves(resolver):
    assert len(LLMPERF_SUMMARIES) == len(LLMPERF_MODELS)
    for path in LLMPERF_SUMMARIES:
        model = json.loads(path.read_text(encoding="utf-8"))["model"]
        expected = LLMPERF_MODELS[path.parent.name.removeprefix("llmperf-")]
        resolution = resolver.model(model)
        assert (resolution.status, resolution.entity_id) == ("resolved", expected), path


def test_replicate_version_is_dropped_from_the_path_tail(resolver):
    label = "meta/llama-2-13b-chat:f4e2de70d66816a838a89eeeb621910adffb0dd0baba3976c96980970978018d"
    resolution = resolver.model(label)
    assert resolution.entity_id == "llama-2-13b-chat"
    assert resolution.rule.startswith("alias 'llama-2-13b-chat' on path tail of 'meta/")


def test_no_wrong_resolution(resolver):
    assert resolver.model("Llama 3.1 70B").entity_id == "llama-3.1-70b-instruct"
    assert resolver.model("DeepSeek R1 (0528)").entity_id == "deepseek-r1-0528"
    assert resolver.model("DeepSeek R1").entity_id == "deepseek-r1"
    assert resolver.model("gpt-oss-20b").entity_id == "gpt-oss-20b"
    assert resolver.model("gpt-oss-20B (high)").entity_id == "gpt-oss-20b"
    # close names are never matched into the data
    for label in ("Llama 3.2 70B", "Llama 3.3", "gpt-oss", "DeepSeek R2", "Llama 4 Maverick 2"):
        assert resolver.model(label).status == "unresolved", label
    # a path tail is only tried on the last segment, never on the prefix
    assert resolver.model("meta/unknown-model").status == "unresolved"


def test_unknown_names_are_unresolved_with_suggestions(resolver):
    mystery = resolver.provider("Mystery Cloud")
    assert mystery.status == "unresolved"
    assert mystery.entity_id is None and mystery.rule is None
    # suggestions are computed only for names that are reported, never while resolving
    assert mystery.suggestions == () and len(resolver.suggest("provider", "Mystery Cloud")) <= 3
    near = resolver.provider("Cerebas")
    assert (near.status, near.entity_id) == ("unresolved", None)
    assert "cerebras" in resolver.suggest("provider", "Cerebas")
    # a variant is still read off an unresolved label, to report it
    turbo = resolver.provider("Cerebas (Turbo)")
    assert (turbo.status, turbo.service_tier) == ("unresolved", "turbo")
    assert resolver.suggest("provider", "Cerebas (Turbo)")[0] == "cerebras"
    model = resolver.model("Llama 3.3 70 B Instruct Preview")
    assert model.status == "unresolved"
    assert len(resolver.suggest("model", "Llama 3.3 70 B Instruct Preview")) <= 3


@pytest.mark.parametrize("text", ["", "   ", "\n\t", None, float("nan")])
def test_empty_input_is_unresolved(resolver, text):
    resolution = resolver.provider(text)
    assert resolution.status == "unresolved"
    assert resolution.entity_id is None and resolution.suggestions == ()


def test_resolution_is_memoised(resolver):
    first = resolver.model("Kimi K2.6")
    assert resolver.model("Kimi K2.6") is first
    many = resolver.resolve_many("model", ["Kimi K2.6"] * 1000 + ["Llama 3 8B"])
    assert many[0] is first and many[999] is first
    assert many[-1].entity_id == "llama-3-8b-instruct"


def test_alias_key():
    assert alias_key("Llama-3.3_70B  Instruct") == alias_key("llama 3.3 70b instruct")
    assert alias_key("Ｌｌａｍａ") == "llama"  # NFKC folds full-width letters
    assert alias_key("Together.ai") != alias_key("Together ai")


def test_bundled_aliases_are_reachable(resolver):
    """Every reviewed alias resolves to its own row's id: none is shadowed or dead."""
    for name, kind, column in (
        ("provider_aliases.csv", "provider", "provider_id"),
        ("model_aliases.csv", "model", "model_id"),
    ):
        with (BUNDLED_METADATA / name).open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                assert resolver.resolve(kind, row["alias"]).entity_id == row[column], row


@pytest.mark.parametrize(
    ("name", "row", "message"),
    [
        ("provider_aliases.csv", "Cloudy,cloudy-inc,", "points at unknown 'cloudy-inc'"),
        ("model_aliases.csv", "Llama 9,llama-9,", "points at unknown 'llama-9'"),
        ("provider_aliases.csv", "groq,cerebras,", "already maps the same name to 'groq'"),
        (
            "provider_aliases.csv",
            "Together_AI,groq,",
            "already maps the same name to 'together-ai'",
        ),
        ("model_aliases.csv", "Llama 3.3 70B,llama-3.1-70b-instruct,", "already maps"),
        ("provider_aliases.csv", "Groq Two,Groq,", "'Groq' is not a slug"),
        ("providers.csv", "Big Cloud,Big Cloud,US,cloud,,", "'Big Cloud' is not a slug"),
        ("models.csv", "llama_5,Llama 5,Meta,,", "'llama_5' is not a slug"),
        ("providers.csv", "groq,Groq again,US,cloud,,", "duplicate provider_id 'groq'"),
        ("providers.csv", "x-cloud,X,US,cloud,javascript:alert(1),", "not an http(s) URL"),
        ("providers.csv", "x-cloud,,US,cloud,,", "name is empty"),
        ("provider_aliases.csv", "Groq,groq", "expected 3 fields"),
        ("provider_aliases.csv", "Groq,groq,,extra", "expected 3 fields"),
        ("provider_aliases.csv", ",groq,", "alias is empty"),
        ("provider_aliases.csv", "Groq Cloud,,", "provider_id is empty"),
        ("provider_aliases.csv", "Groq (FP8),groq,", "would never match"),
        ("model_aliases.csv", "llama-3-8b-instruct-awq,llama-3-8b-instruct,", "would never match"),
    ],
)
def test_broken_tables_fail_loudly_naming_file_and_row(metadata, name, row, message):
    line = append(metadata / name, row)
    with pytest.raises(AliasError) as error:
        Resolver.load(metadata)
    text = str(error.value)
    assert message in text
    assert f"{name}: row {line}:" in text


def test_bad_header_and_missing_file(metadata):
    (metadata / "models.csv").write_text("id,name\nx,X\n", encoding="utf-8")
    with pytest.raises(
        AliasError, match=r"models\.csv: header must be model_id,name,creator,family,notes"
    ):
        Resolver.load(metadata)
    (metadata / "models.csv").unlink()
    with pytest.raises(AliasError, match=r"models\.csv: no such file"):
        Resolver.load(metadata)


def test_alias_error_is_a_value_error():
    assert issubclass(AliasError, ValueError)


def test_same_alias_twice_to_the_same_id_is_fine(metadata):
    append(metadata / "provider_aliases.csv", "GROQ,groq,shouting")
    assert Resolver.load(metadata).provider("GROQ").entity_id == "groq"


def test_a_labels_display_name_is_its_most_used_with_ties_broken_by_text():
    """mode() picked either of two equally used names, so a rebuild of the same snapshots
    could rename an unreviewed entity and publish a new release."""
    import duckdb
    import pandas as pd

    from pipeline.normalise.label_uses import label_uses, refresh_label_uses
    from pipeline.normalise.labels import LabelColumn

    spec = LabelColumn("model", "models_dev_offers", "platform_model_id", True, "name")
    rows = [("s/1", "m-1", "Zed"), ("s/1", "m-1", "Alpha"), ("s/2", "m-1", "Alpha")]
    rows += [("s/1", "m-2", "Beta"), ("s/2", "m-2", "Able"), ("s/3", "m-3", None)]
    rows += [("s/9", "m-9", "Out of scope")]
    for order in (rows, rows[::-1]):
        with duckdb.connect() as con:
            con.execute("CREATE SCHEMA staging")
            con.execute(
                "CREATE TABLE staging.models_dev_offers "
                "(snapshot_id VARCHAR, source_id VARCHAR, platform_model_id VARCHAR, name VARCHAR)"
            )
            con.executemany(
                "INSERT INTO staging.models_dev_offers VALUES (?, 'models-dev', ?, ?)", order
            )
            con.execute(
                "CREATE TABLE staging.extractions AS SELECT unnest(['s/1', 's/2', 's/3', 's/9']) "
                "AS snapshot_id, TIMESTAMPTZ '2026-11-29 08:00:00+00' AS extracted_at, "
                "NULL::VARCHAR AS row_counts"  # records without counts: the table is read
            )
            con.execute(
                "CREATE TABLE build_scope AS SELECT unnest(['s/1', 's/2', 's/3']) AS snapshot_id"
            )
            refresh_label_uses(con, (spec,))  # counted per snapshot, then summed
            table = label_uses(con, (spec,)).set_index("label")
        assert table.loc["m-1", "name"] == "Alpha"  # used twice
        assert table.loc["m-2", "name"] == "Able"  # a tie: the first by text
        assert pd.isna(table.loc["m-3", "name"])  # no name given: none made up
        assert table.loc["m-1", "uses"] == 3 and "m-9" not in table.index


# The identity rules after the aliases (pipeline/normalise/identity.py).


@pytest.mark.parametrize(
    ("label", "model_id", "rule"),
    [
        # the key of a reviewed id: token order, glue, vendor and Bedrock prefixes
        ("Llama 3.3 Instruct 70B", "llama-3.3-70b-instruct", "identity key of reviewed"),
        ("us.meta.llama3-3-70b-instruct-v1:0", "llama-3.3-70b-instruct", "identity key"),
        ("Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct", "on the identity spelling"),
        ("deepseek.r1-v1:0", "deepseek-r1", "on the identity spelling"),
        ("Kimi-K2.6", "kimi-k2.6", "alias"),
        ("accounts/fireworks/models/kimi-k2p6", "kimi-k2.6", "on the identity spelling"),
        ("OpenAI GPT OSS 120B", "gpt-oss-120b", "on the identity spelling"),
        ("Kimi K2p6 (Moonshot)", None, None),
    ],
)
def test_identity_rules_reach_reviewed_entities(resolver, label, model_id, rule):
    resolution = resolver.model(label)
    if model_id is None:  # an unknown word is no part of the reviewed model
        assert resolution.status == "unresolved"
        return
    assert (resolution.status, resolution.entity_id) == ("resolved", model_id), resolution
    assert rule in (resolution.rule or "")


def test_a_reviewed_display_name_never_reaches_another_spelling_by_its_key(resolver):
    """A reviewed alias is matched as written ("Llama 3.1 70B" is the instruct model, as
    Artificial Analysis writes it); its words in another order are not the alias, and keys are
    taken from reviewed ids only (a base model's id has the alias's words too)."""
    assert resolver.model("Llama 3.1 70B").entity_id == "llama-3.1-70b-instruct"
    assert resolver.model("70B Llama 3.1").status == "unresolved"
    assert resolver.model("Llama 3.1 Instruct 70B").entity_id == "llama-3.1-70b-instruct"


def test_the_region_of_an_id_is_kept_wherever_its_model_is_found(resolver):
    found = resolver.resolve_stable(
        "model", "Llama 3.3 70B Instruct (US)", "us.meta.llama3-3-70b-instruct-v1:0"
    )
    assert (found.entity_id, found.region) == ("llama-3.3-70b-instruct", "us")
    unreviewed = resolver.resolve_stable("model", "eu.anthropic.claude-opus-4-6-v1")
    assert (unreviewed.status, unreviewed.entity_id) == ("unreviewed", "claude-opus-4.6")
    assert (unreviewed.region, unreviewed.family) == ("eu", "claude-opus-4.6")


def test_a_family_comes_from_models_csv_else_from_the_id(resolver, metadata):
    assert resolver.model("DeepSeek R1 (0528)").family == "deepseek-r1"  # the id's, undated
    assert resolver.model("Kimi K2.6").family == "kimi-k2.6"
    rows = (metadata / "models.csv").read_text(encoding="utf-8")
    rows = rows.replace(
        "kimi-k2.6,Kimi K2.6,Moonshot AI,,", "kimi-k2.6,Kimi K2.6,Moonshot AI,kimi-k2,"
    )
    (metadata / "models.csv").write_text(rows, encoding="utf-8")
    assert Resolver.load(metadata).model("Kimi K2.6").family == "kimi-k2"


def test_hints_decide_what_the_id_alone_cannot(resolver):
    from pipeline.normalise.identity import Hints

    served = resolver.resolve_stable(
        "model",
        "qwen/qwen3-coder",
        "qwen/qwen3-coder",
        Hints(hugging_face_id="Qwen/Qwen3-Coder-480B-A35B-Instruct"),
    )
    assert served.entity_id == "qwen3-coder-480b-a35b-instruct"
    assert "hugging_face_id" in (served.rule or "")
    assert resolver.resolve_stable("model", "qwen/qwen3-coder").entity_id == "qwen3-coder"


@pytest.mark.parametrize(
    ("label", "provider_id"),
    [("togetherai", "together-ai"), ("novita-ai", "novita-ai"), ("GroqCloud Inc", "groq")],
)
def test_provider_keys_reach_reviewed_providers(resolver, label, provider_id):
    resolution = resolver.provider(label)
    assert (resolution.status, resolution.entity_id) == ("resolved", provider_id)


def test_a_provider_key_two_reviewed_providers_share_decides_nothing(metadata):
    append(metadata / "providers.csv", "groq-labs,Groq Labs,US,inference_api,,a second Groq")
    resolver = Resolver.load(metadata)
    assert resolver.provider("groq inc").status == "unresolved"  # key 'groq' is both
    assert resolver.provider("Groq").entity_id == "groq"  # the alias still decides


def test_a_models_csv_without_a_family_column_still_loads(metadata):
    """A copy of the reviewed tables made before families were stated reads as no family."""
    path = metadata / "models.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, ["model_id", "name", "creator", "notes"])
        writer.writeheader()
        writer.writerows({k: v for k, v in row.items() if k != "family"} for row in rows)
    resolver = Resolver.load(metadata)
    assert resolver.models["kimi-k2.6"].family is None
    assert resolver.model("DeepSeek R1 (0528)").family == "deepseek-r1"
    # a row still needs every column its header names
    append(path, "kimi-k3,Kimi K3,Moonshot AI,,")
    with pytest.raises(AliasError, match=r"expected 4 fields \(model_id,name,creator,notes\)"):
        Resolver.load(metadata)
