"""The identity rules (pipeline/normalise/identity.py) class by class, on small inputs: each rule
merges the spellings it is for and nothing else. The real captures are in test_identity_real.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.normalise.identity import (
    NO_HINTS,
    Hints,
    family_key,
    group_ids,
    model_identity,
    names_the_weights,
    provider_key,
    rank_candidates,
    rank_provider_candidates,
)
from pipeline.schema.vocabulary import REASONING_EFFORTS


def key(label: str, hints: Hints = NO_HINTS) -> str:
    return model_identity(label, hints).key


def same(*labels: str) -> bool:
    return len({key(label) for label in labels}) == 1


@pytest.mark.parametrize(
    "spellings",
    [
        # token order: Artificial Analysis writes the size last, everyone else before instruct
        ("Llama 3.3 Instruct 70B", "meta-llama/llama-3.3-70b-instruct", "Llama-3.3-70B-Instruct"),
        ("Qwen2.5 Coder Instruct 32B", "Qwen/Qwen2.5-Coder-32B-Instruct"),
        # a name's one version number stands anywhere
        ("Claude 4.5 Sonnet", "anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        # glue, case and punctuation
        ("Qwen/Qwen2.5-72B-Instruct", "qwen/qwen-2.5-72b-instruct", "qwen_2.5_72b_instruct"),
        ("GPT-4o mini", "gpt-4o-mini", "GPT 4o Mini"),
        ("gpt-oss-120B", "openai/gpt-oss-120b", "GPT OSS 120B"),
        # a version written with a dash, or as Fireworks writes a point
        ("Kimi K2.5", "kimi-k2-5", "accounts/fireworks/models/kimi-k2p5"),
        ("GLM-5.1", "accounts/fireworks/models/glm-5p1", "glm-5-1"),
        # one word, two spellings
        ("gemma-3-27b-it", "Gemma 3 27B Instruct"),
        # an x.0 version is the version
        ("Granite 4.0 Micro", "granite-4-micro"),
    ],
)
def test_spellings_of_one_model_share_a_key(spellings):
    assert same(*spellings), {label: key(label) for label in spellings}


@pytest.mark.parametrize(
    ("label", "expected", "step"),
    [
        ("meta-llama/llama-3.3-70b-instruct", "llama-3.3-70b-instruct", "path 'meta-llama/'"),
        ("@cf/meta/llama-3.1-8b-instruct", "llama-3.1-8b-instruct", "path '@cf/meta/'"),
        ("accounts/fireworks/models/gpt-oss-120b", "gpt-oss-120b", "path"),
        ("Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b-instruct", "vendor prefix 'meta'"),
        ("openai-gpt-5.1", "gpt-5.1", "vendor prefix 'openai'"),
        ("databricks-gpt-5-mini", "gpt-5-mini", "vendor prefix 'databricks'"),
        ("NVIDIA Nemotron 3 Nano 30B A3B", "nemotron-3-nano-30b-a3b", "vendor prefix 'nvidia'"),
        (
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            "claude-sonnet-4.5-2025-09-29",
            "'anthropic.'",
        ),
        ("meta.llama3-3-70b-instruct-v1:0", "llama3.3-70b-instruct", "version suffix '-v1:0'"),
        ("amazon.nova-pro-v1:0", "nova-pro", "vendor prefix 'amazon.'"),
        ("meta/llama-3.3-70b-instruct-maas", "llama-3.3-70b-instruct", "path 'meta/'"),
        ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b-chat", "path"),
        ("claude-opus-4-6@default", "claude-opus-4.6", "platform tag '@default' dropped"),
        ("qwen/qwen3-coder:free", "qwen3-coder", "listing tag ':free' dropped"),
        ("z-ai/glm-5-free", "glm-5", "listing suffix '-free' dropped"),
        ("meta/llama-2-13b-chat:f4e2de70d668", "llama-2-13b-chat", "listing tag"),
    ],
)
def test_prefixes_and_suffixes_that_are_no_part_of_the_model_go(label, expected, step):
    identity = model_identity(label)
    assert identity.spelling == expected
    assert any(step in taken for taken in identity.steps), identity.steps


def test_a_vendor_that_names_its_models_keeps_its_name():
    # mistral, deepseek, minimax and qwen name their models: never a prefix to drop
    assert model_identity("mistral-large-2411").spelling == "mistral-large-2411"
    assert model_identity("MiniMax-M2.5").spelling == "minimax-m2.5"
    assert model_identity("deepseek.r1-v1:0").spelling == "deepseek-r1"  # Bedrock's form
    assert model_identity("deepseek.v3.2").spelling == "deepseek-v3.2"
    assert model_identity("qwen.qwen3-32b-v1:0").spelling == "qwen3-32b"
    assert same("deepseek.r1-v1:0", "DeepSeek-R1", "deepseek/deepseek-r1")


@pytest.mark.parametrize("region", ["us", "eu", "apac", "global", "au", "jp"])
def test_a_bedrock_region_profile_is_a_region_of_one_model(region):
    regional = model_identity(f"{region}.anthropic.claude-sonnet-4-5-20250929-v1:0")
    plain = model_identity("anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert regional.key == plain.key == key("claude-sonnet-4-5-20250929")
    assert (regional.region, plain.region) == (region, None)
    assert f"region profile '{region}.'" in regional.steps


@pytest.mark.parametrize(
    ("label", "precision", "service_tier", "effort"),
    [
        ("@cf/meta/llama-3.3-70b-instruct-fp8-fast", "fp8", "fast", None),
        ("@cf/meta/llama-3-8b-instruct-awq", "int4", "standard", None),
        ("meta-llama/Llama-3.3-70B-Instruct-Turbo", "unknown", "turbo", None),
        ("Qwen/Qwen3-32B-fast", "unknown", "fast", None),
        ("GPT-5 (minimal)", "unknown", "standard", "minimal"),
        ("GPT-5.2 (xhigh)", "unknown", "standard", "xhigh"),
        ("GPT-5.5 (Non-reasoning)", "unknown", "standard", "none"),
        ("Gemma 4 31B (Reasoning)", "unknown", "standard", "reasoning"),
        ("DeepSeek V4 Flash (Reasoning, Max Effort)", "unknown", "standard", "max"),
        ("Claude Opus 4.7 (Adaptive Reasoning, Max Effort)", "unknown", "standard", "max"),
        ("DeepSeek V4 Pro (Reasoning, High Effort)", "unknown", "standard", "high"),
        ("grok-4-fast-non-reasoning", "unknown", "standard", "none"),
        ("gpt-5.3-codex-xhigh", "unknown", "standard", "xhigh"),
        ("qwen/qwen-plus-2025-07-28:thinking", "unknown", "standard", "reasoning"),
        ("anthropic/claude-opus-4.6:thinking:max", "unknown", "standard", "max"),
    ],
)
def test_variant_words_are_read_into_the_variant(label, precision, service_tier, effort):
    identity = model_identity(label)
    assert (identity.precision, identity.service_tier, identity.reasoning_effort) == (
        precision,
        service_tier,
        effort,
    )
    assert identity.reasoning_effort in (None, *REASONING_EFFORTS)


def test_efforts_are_variants_of_one_model():
    """ "GPT-5 (minimal)" is no model of its own: every effort of GPT-5 is GPT-5."""
    labels = ["GPT-5 (minimal)", "GPT-5 (low)", "GPT-5 (medium)", "GPT-5 (high)", "openai/gpt-5"]
    assert same(*labels)
    assert {model_identity(label).spelling for label in labels} == {"gpt-5"}


@pytest.mark.parametrize(
    ("model", "not_a_tier"),
    [("gpt-4-turbo", "gpt-4"), ("GPT-4 Turbo", "GPT-4"), ("grok-4-fast", "grok-4")],
)
def test_turbo_and_fast_without_a_size_name_a_model(model, not_a_tier):
    """GPT-4 Turbo and Grok 4 Fast are models; only a sized checkpoint has a service tier."""
    identity = model_identity(model)
    assert identity.service_tier == "standard"
    assert identity.key != key(not_a_tier)


def test_contradictory_efforts_claim_none():
    # non-reasoning at high effort is two settings one dimension cannot hold: not read
    identity = model_identity("Claude Opus 4.6 (Non-reasoning, High Effort)")
    assert identity.reasoning_effort is None
    assert identity.key != key("Claude Opus 4.6")


@pytest.mark.parametrize(
    ("label", "spelling", "date", "family"),
    [
        ("gpt-4o-2024-11-20", "gpt-4o-2024-11-20", "2024-11-20", "gpt-4o"),
        ("claude-3-5-sonnet-20241022", "claude-3.5-sonnet-2024-10-22", "2024-10-22", None),
        ("claude-opus-4-5@20251101", "claude-opus-4.5-2025-11-01", "2025-11-01", None),
        ("GPT-4o (Nov '24)", "gpt-4o-2024-11", "2024-11", "gpt-4o"),
        ("Command-R (Mar '24)", "command-r-2024-03", "2024-03", "command-r"),
        ("command-r-08-2024", "command-r-2024-08", "2024-08", "command-r"),
        ("deepseek-r1-0528", "deepseek-r1-0528", "0528", "deepseek-r1"),
        ("DeepSeek R1 (0528)", "deepseek-r1-0528", "0528", "deepseek-r1"),
        ("mistralai/mistral-large-2411", "mistral-large-2411", "2024-11", "mistral-large"),
        ("gemini-2.5-pro-preview-05-06", "gemini-2.5-pro-preview-05-06", "05-06", None),
    ],
)
def test_dated_snapshots_stay_models_of_their_own_under_their_family(label, spelling, date, family):
    identity = model_identity(label)
    assert (identity.spelling, identity.date) == (spelling, date)
    undated = identity.family
    assert undated == (family or undated) and identity.date not in (undated or "")
    assert identity.key != key(undated or "") and identity.family_key == key(undated or "")


def test_dates_in_any_spelling_mean_one_snapshot():
    assert same("claude-3-5-sonnet-20241022", "anthropic.claude-3-5-sonnet-20241022-v2:0")
    assert same("claude-3-5-sonnet@20241022", "claude-3-5-sonnet-20241022")
    assert same("gemini-2.5-flash-preview-09-2025", "Gemini 2.5 Flash Preview (Sep '25)")
    assert same("devstral-small-2507", "Devstral Small (Jul '25)")  # YYMM is a month
    # two dates that agree: the one the name writes as a number is kept
    assert same("DeepSeek R1 0528 (May '25)", "deepseek-r1-0528")
    assert not same("gpt-4o-2024-11-20", "gpt-4o-2024-08-06", "gpt-4o-2024-11", "gpt-4o")


def test_a_month_is_as_precise_as_the_sources_own_slug():
    aug = model_identity("GPT-4o (Aug '24)", Hints(slug="gpt-4o-2024-08-06"))
    assert aug.spelling == "gpt-4o-2024-08-06" and aug.key == key("gpt-4o-2024-08-06")
    # a slug date of another month refines nothing; no slug date keeps the month
    assert model_identity("GPT-4o (Nov '24)", Hints(slug="gpt-4o")).date == "2024-11"
    assert model_identity("GPT-4o (Nov '24)", Hints(slug="gpt-4o-2024-08-06")).date == "2024-11"
    grok = model_identity("Grok 2 (Dec '24)", Hints(slug="grok-2-1212"))
    assert grok.key == key("grok-2-1212")


def test_googles_zero_padded_versions():
    assert same("gemini-2.0-flash-lite-001", "google/gemini-2.0-flash-lite")  # the first
    assert not same("gemini-1.5-pro-002", "gemini-1.5-pro")  # the second is another


def test_a_size_tag_is_part_of_the_model():
    assert model_identity("deepseek-r1:671b").key != model_identity("deepseek-r1:8b").key
    assert same("qwen3:32b", "Qwen/Qwen3-32B")


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Llama 3.1 70B", "Llama 3.1 8B"),  # size
        ("Llama 3.1 70B", "Llama 3.3 70B"),  # version
        ("gpt-4o-2024-11-20", "gpt-4o-2024-08-06"),  # date
        ("llama-3.1-70b", "llama-3.1-70b-instruct"),  # a base model is not its instruct model
        ("gpt-3.5-turbo", "gpt-3.5-turbo-instruct"),
        ("Hermes 3 - Llama-3.1 70B", "Hermes 3.1 - Llama-3 70B"),  # which word has which version
        ("gpt-5", "gpt-5-chat"),
        ("claude-3.5-sonnet", "claude-3.5-sonnet-v2"),
        ("mistral-7b-instruct-v0.2", "mistral-7b-instruct-v0.3"),
        ("phi-4", "phi-4-reasoning"),
        ("gpt-oss-120b-high", "gpt-oss-120b"),  # '-high' may name a model: never read
        ("qwen3-max", "qwen3"),
        ("deepseek-r1-distill-llama-70b", "llama-70b"),
    ],
)
def test_close_names_of_different_models_never_share_a_key(one, other):
    assert key(one) != key(other)


# --- stable keys published beside an id


def test_a_hugging_face_id_names_the_weights_a_model_serves():
    coder = model_identity(
        "qwen/qwen3-coder", Hints(hugging_face_id="Qwen/Qwen3-Coder-480B-A35B-Instruct")
    )
    assert coder.key == key("Qwen3 Coder 480B A35B Instruct")
    assert coder.spelling == "qwen3-coder-480b-a35b-instruct"
    assert any("hugging_face_id" in step for step in coder.steps)
    # it may lack one word of the platform's id (deepseek-chat-v3.1 serves DeepSeek-V3.1)
    chat = model_identity(
        "deepseek/deepseek-chat-v3.1", Hints(hugging_face_id="deepseek-ai/DeepSeek-V3.1")
    )
    assert chat.key == key("DeepSeek V3.1")
    # a precision in the repository's name is the weights', not the model's
    intellect = model_identity(
        "prime-intellect/intellect-3", Hints(hugging_face_id="PrimeIntellect/INTELLECT-3-FP8")
    )
    assert intellect.key == key("INTELLECT-3")


@pytest.mark.parametrize(
    ("label", "repository"),
    [
        # names another model: a distillation's base weights
        ("aion-labs/aion-1.0-mini", "FuseAI/FuseO1-DeepSeekR1-QwQ-SkyT1-32B-Preview"),
        # another size, another version, another date: never taken
        ("meta-llama/llama-3.1-8b-instruct", "meta-llama/Llama-3.1-70B-Instruct"),
        ("qwen/qwen3-8b", "Qwen/Qwen2.5-8B"),
        ("mistralai/ministral-8b-2512", "mistralai/Ministral-3-8B-Instruct-2410"),
    ],
)
def test_a_hugging_face_id_that_says_something_else_is_not_taken(label, repository):
    assert model_identity(label, Hints(hugging_face_id=repository)).key == key(label)
    assert not names_the_weights(key(label), key(repository))


def test_hints_from_rows_keep_only_text():
    hints = Hints.of({"hugging_face_id": " Qwen/Qwen3-8B ", "slug": "", "x": "y"})
    assert hints == Hints(hugging_face_id="Qwen/Qwen3-8B")
    assert Hints.of(None) is NO_HINTS and Hints.of({"slug": 3}) is NO_HINTS
    merged = Hints(slug="a").merged(Hints(slug="b", hugging_face_id="f"))
    assert merged == Hints(slug="a", hugging_face_id="f")


# --- providers


@pytest.mark.parametrize(
    "spellings",
    [
        ("Z.AI", "z-ai", "zai"),
        ("Together.ai", "Together AI", "together", "togetherai"),
        ("Novita", "novita-ai", "NovitaAI"),
        ("Moonshot AI", "moonshotai", "moonshot"),
        ("SambaNova Cloud", "SambaNova", "sambanova"),
        ("AI21 Labs", "ai21"),
    ],
)
def test_spellings_of_one_provider_share_a_key(spellings):
    assert len({provider_key(spelling) for spelling in spellings}) == 1


@pytest.mark.parametrize(
    ("one", "other"),
    [("Z.AI", "Zhipu AI"), ("xAI", "x"), ("OpenAI", "Open"), ("alibaba", "alibaba-cn")],
)
def test_different_providers_keep_their_keys(one, other):
    assert provider_key(one) != provider_key(other)


# --- one id per group, candidates


def test_a_group_takes_the_spelling_of_a_stable_id_most_of_its_labels_share():
    members = [
        ("k", "claude-4.5-sonnet", False),  # a display name's spelling
        ("k", "claude-sonnet-4.5", True),
        ("k", "claude-sonnet-4.5", True),
        ("k", "claude-4.5-sonnet", True),
        ("j", "qwen-3-32b", True),
        ("j", "qwen3-32b", True),
    ]
    chosen = group_ids(members)
    assert chosen == {"k": "claude-sonnet-4.5", "j": "qwen-3-32b"}  # a tie: the first by text
    assert group_ids(reversed(members)) == chosen  # order of the labels does not matter


def test_candidates_rank_the_same_family_first_and_never_the_entity_itself():
    known = {
        "gpt-4o-2024-11-20": key("gpt-4o-2024-11-20"),
        "gpt-4o-mini": key("gpt-4o-mini"),
        "gpt-4": key("gpt-4"),
        "llama-3.1-8b": key("llama-3.1-8b"),
        "gpt-4o-2024-11": key("GPT-4o (Nov '24)"),
    }
    ranked = rank_candidates(key("GPT-4o (Nov '24)"), known)
    assert [c.entity_id for c in ranked][:1] == ["gpt-4o-2024-11-20"]
    assert "same family" in ranked[0].reason
    assert all(c.entity_id not in ("gpt-4o-2024-11", "llama-3.1-8b") for c in ranked)
    assert ranked == sorted(ranked, key=lambda c: -c.score) and len(ranked) <= 3
    assert rank_candidates("", known) == []


def test_provider_candidates_by_spelling():
    known = {"azure": "azure", "siliconflow": "siliconflow", "groq": "groq"}
    assert [c.entity_id for c in rank_provider_candidates("siliconflowcn", known)] == [
        "siliconflow"
    ]
    assert rank_provider_candidates("azurecognitiveservices", known)[0].entity_id == "azure"
    assert rank_provider_candidates("zzzz", known) == []


# --- hostile and empty input


@pytest.mark.parametrize(
    "label",
    ["", "   ", "::::", "@@@", "/", "-v1:0", "(high)", "\x00\x1f", "💥", "a" * 5000, None, 3.5],
)
def test_hostile_or_empty_labels_give_no_identity_or_a_valid_slug(label):
    identity = model_identity(label)  # type: ignore[arg-type]
    if identity.spelling is None:
        assert identity.key == ""
    else:
        assert identity.spelling == identity.spelling.strip("-.") and " " not in identity.spelling
    assert provider_key(label) == provider_key(str(label)) or not isinstance(label, str)


# --- properties over generated names

_WORDS = st.sampled_from(["llama", "qwen", "gemma", "mixtral", "nova", "coder", "vision", "mini"])
_SIZES = st.sampled_from(["7b", "8b", "13b", "70b", "405b", "1.5b", "a3b", "8x7b"])
_VERSIONS = st.sampled_from(["2", "3", "3.1", "3.3", "4", "2.5"])
_DATES = st.sampled_from([None, "2024-11-20", "2025-01-31", "0528", "2407", "2024-11"])


@st.composite
def models(draw: st.DrawFn) -> tuple[tuple[str, ...], str, str, str | None]:
    words = tuple(draw(st.lists(_WORDS, min_size=1, max_size=3, unique=True)))
    return words, draw(_VERSIONS), draw(_SIZES), draw(_DATES)


def render(model: tuple[tuple[str, ...], str, str, str | None], style: int) -> str:
    """One model written the ways sources write it."""
    words, version, size, when = model
    if style == 0:  # a hub id
        parts = [words[0], version, *words[1:], size] + ([when] if when else [])
        return "org/" + "-".join(parts)
    if style == 1:  # a display name, size first, upper case
        parts = [words[0].title(), version, size.upper(), *(w.title() for w in words[1:])]
        return " ".join(parts) + (f" ({when})" if when else "")
    # Bedrock: a region profile, a vendor, the version written with a dash, an API version
    dashed = version.replace(".", "-")
    parts = [words[0], dashed, *words[1:], size] + ([when.replace("-", "")] if when else [])
    return "us.vendor." + "-".join(parts) + "-v1:0"


@settings(max_examples=300, deadline=None)
@given(models(), st.integers(0, 2), st.integers(0, 2))
def test_every_spelling_of_a_generated_model_has_one_key(model, one, other):
    if model[3] and len(model[3]) in (4, 7) and {one, other} & {2}:
        return  # a four-digit date or a month written without dashes: no Bedrock form
    assert key(render(model, one)) == key(render(model, other)), (
        render(model, one),
        render(model, other),
    )


@settings(max_examples=300, deadline=None)
@given(models(), models(), st.integers(0, 2))
def test_generated_models_that_differ_never_share_a_key(first, second, style):
    # the order of a name's words names no other model ("Coder Vision", "Vision Coder")
    if (sorted(first[0]), *first[1:]) == (sorted(second[0]), *second[1:]):
        return
    first_label, second_label = render(first, style), render(second, style)
    assert key(first_label) != key(second_label), (first_label, second_label)


@settings(max_examples=200, deadline=None)
@given(models(), st.integers(0, 2))
def test_a_spelling_read_again_keeps_its_key(model, style):
    """An id is one of its group's spellings: reading it again gives the group's key (review.py
    ranks candidates from ids)."""
    identity = model_identity(render(model, style))
    assert identity.spelling and key(identity.spelling) == identity.key
    assert family_key(identity.key) == key(identity.family or "")
