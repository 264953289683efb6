import pytest

from pipeline.normalise.variants import Variant, has_size, parse_variant
from pipeline.schema.quantization import QUANTIZATION_PRECISION, precision_of_quantization
from pipeline.schema.vocabulary import PRECISIONS, REASONING_EFFORTS, SERVICE_TIERS


@pytest.mark.parametrize(
    ("label", "base", "precision", "service_tier", "effort", "tokens"),
    [
        # trailing parenthetical, every token a known variant word
        ("DeepInfra (Turbo, FP8)", "DeepInfra", "fp8", "turbo", None, ("Turbo", "FP8")),
        ("DeepInfra (Turbo)", "DeepInfra", "unknown", "turbo", None, ("Turbo",)),
        ("Azure (FP8)", "Azure", "fp8", "standard", None, ("FP8",)),
        ("gpt-oss-120b (high)", "gpt-oss-120b", "unknown", "standard", "high", ("high",)),
        ("gpt-oss-120B (high)", "gpt-oss-120B", "unknown", "standard", "high", ("high",)),
        (
            "gpt-oss-120b (high, Turbo)",
            "gpt-oss-120b",
            "unknown",
            "turbo",
            "high",
            ("high", "Turbo"),
        ),
        (
            "Together.ai (Reference, FP16)",
            "Together.ai",
            "fp16",
            "reference",
            None,
            ("Reference", "FP16"),
        ),
        ("DeepSeek R1 671B (FP16)", "DeepSeek R1 671B", "fp16", "standard", None, ("FP16",)),
        ("Foo (low)", "Foo", "unknown", "standard", "low", ("low",)),
        ("Foo (Medium)", "Foo", "unknown", "standard", "medium", ("Medium",)),
        # trailing words
        (
            "Amazon Bedrock Latency Optimized",
            "Amazon Bedrock",
            "unknown",
            "latency-optimized",
            None,
            ("Latency Optimized",),
        ),
        # hyphenated suffixes on slug-like ids
        (
            "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
            "@cf/meta/llama-3.3-70b-instruct",
            "fp8",
            "fast",
            None,
            ("fp8", "fast"),
        ),
        ("llama-3-8b-instruct-awq", "llama-3-8b-instruct", "int4", "standard", None, ("awq",)),
        ("llama-2-7b-chat-fp16", "llama-2-7b-chat", "fp16", "standard", None, ("fp16",)),
        ("llama-2-7b-chat-int8", "llama-2-7b-chat", "int8", "standard", None, ("int8",)),
        ("qwen3-30b-a3b-fp8", "qwen3-30b-a3b", "fp8", "standard", None, ("fp8",)),
        ("llama-3.1-8b-instruct-fast", "llama-3.1-8b-instruct", "unknown", "fast", None, ("fast",)),
        (
            "Llama-4-Maverick-17B-128E-Instruct-FP8",
            "Llama-4-Maverick-17B-128E-Instruct",
            "fp8",
            "standard",
            None,
            ("FP8",),
        ),
        ("model-x-NVFP4", "model-x", "fp4", "standard", None, ("NVFP4",)),
        ("model-x-BF16", "model-x", "bf16", "standard", None, ("BF16",)),
        ("model-x-FP4", "model-x", "fp4", "standard", None, ("FP4",)),
        ("model-x-FP6", "model-x", "fp6", "standard", None, ("FP6",)),
        ("model-x-INT4", "model-x", "int4", "standard", None, ("INT4",)),
        ("model-x-GPTQ", "model-x", "int4", "standard", None, ("GPTQ",)),
        # LoRA readiness is stripped into tokens but sets no variant
        ("llama-2-7b-chat-hf-lora", "llama-2-7b-chat-hf", "unknown", "standard", None, ("lora",)),
        (
            "@cf/meta-llama/llama-2-7b-chat-hf-lora",
            "@cf/meta-llama/llama-2-7b-chat-hf",
            "unknown",
            "standard",
            None,
            ("lora",),
        ),
    ],
)
def test_markers_are_read_off_the_label(label, base, precision, service_tier, effort, tokens):
    assert parse_variant(label) == Variant(base, precision, service_tier, effort, tokens)


@pytest.mark.parametrize(
    "label",
    [
        "Llama 4 Maverick",
        "DeepSeek R1 (0528)",
        "Llama 4 Maverick (400B)",
        # a parenthetical with one unknown word is part of the name
        "Foo (Turbo, 0528)",
        "Foo ()",
        # words that are model names, not variants, outside parentheses
        "GPT-4 Turbo",
        "gpt-4-turbo",
        "Mistral Medium",
        "gpt-oss-120b-high",
        # a label that is nothing but a marker keeps it as its base
        "fp8",
        "(FP8)",
        # contradictory markers: no variant is claimed
        "Foo (FP8, FP16)",
        "foo-fp8-fp16",
        "meta/llama-2-13b-chat:f4e2de70d66816a838a89eeeb621910adffb0dd0baba3976c96980970978018d",
    ],
)
def test_labels_without_a_clear_variant_are_unchanged(label):
    assert parse_variant(label) == Variant(label)


def test_defaults_and_whitespace():
    variant = parse_variant("  Together\u00a0 AI \n")
    assert variant == Variant("Together AI", "unknown", "standard", None, ())
    assert parse_variant("") == Variant("")


def test_markers_stack_across_forms():
    variant = parse_variant("Amazon Bedrock Latency Optimized (FP8)")
    assert variant == Variant(
        "Amazon Bedrock", "fp8", "latency-optimized", None, ("Latency Optimized", "FP8")
    )


def test_every_value_is_in_the_vocabulary():
    labels = ["x (FP8)", "x (Turbo)", "x-awq", "x (Latency Optimized)", "x (high)", "y"]
    for label in labels:
        variant = parse_variant(label)
        assert variant.precision in PRECISIONS
        assert variant.service_tier in SERVICE_TIERS
        assert variant.reasoning_effort in (None, *REASONING_EFFORTS)


# OpenRouter's quantization labels (its OpenAPI Quantization enum, 2026-08).
OPENROUTER_QUANTIZATIONS = [
    "int4", "int8", "fp4", "mxfp4", "nvfp4", "fp6", "fp8", "mxfp8", "fp16", "bf16", "fp32",
    "unknown",
]  # fmt: skip


@pytest.mark.parametrize(
    ("label", "precision"),
    [
        ("fp8", "fp8"),
        ("FP8", "fp8"),
        (" bf16 ", "bf16"),
        ("mxfp4", "fp4"),
        ("nvfp4", "fp4"),
        ("mxfp8", "fp8"),
        ("int4", "int4"),
        ("unknown", "unknown"),
        (None, "unknown"),
        ("fp5", None),  # not in the table: the caller keeps the label and reports it
        ("awq", None),  # a name marker, not one of the quantization labels
        ("", None),
    ],
)
def test_quantization_labels_map_to_a_precision(label, precision):
    assert precision_of_quantization(label) == precision


def test_every_quantization_label_openrouter_lists_is_mapped_into_the_vocabulary():
    assert sorted(QUANTIZATION_PRECISION) == sorted(OPENROUTER_QUANTIZATIONS)
    assert set(QUANTIZATION_PRECISION.values()) <= set(PRECISIONS)


def test_the_quantization_table_is_also_what_labels_mean():
    assert parse_variant("x (MXFP4)").precision == "fp4"
    assert parse_variant("model-nvfp4").precision == "fp4"
    assert parse_variant("model (MXFP8)").precision == "fp8"
    assert parse_variant("model (unknown)") == Variant("model (unknown)")  # not a marker


@pytest.mark.parametrize(
    ("label", "effort", "tokens"),
    [
        ("GPT-5 (minimal)", "minimal", ("minimal",)),
        ("GPT-5.2 (xhigh)", "xhigh", ("xhigh",)),
        ("GPT-5.5 (Non-reasoning)", "none", ("Non-reasoning",)),
        ("GPT-5.4 mini (Non-Reasoning)", "none", ("Non-Reasoning",)),
        ("Gemma 4 31B (Reasoning)", "reasoning", ("Reasoning",)),
        ("DeepSeek V4 Pro (Thinking)", "reasoning", ("Thinking",)),
        # a stated level refines reasoning on
        ("DeepSeek V4 Flash (Reasoning, Max Effort)", "max", ("Reasoning", "Max Effort")),
        ("DeepSeek V4 Flash (Reasoning, High Effort)", "high", ("Reasoning", "High Effort")),
        ("Claude Opus 4.7 (Adaptive Reasoning, Max Effort)", "max", None),
        # slug suffixes no model is named by
        ("grok-4-fast-non-reasoning", "none", ("non-reasoning",)),
        ("gpt-5.3-codex-xhigh", "xhigh", ("xhigh",)),
        ("gpt-5-mini-minimal", "minimal", ("minimal",)),
    ],
)
def test_every_effort_word_the_sources_use_is_read(label, effort, tokens):
    variant = parse_variant(label)
    assert variant.reasoning_effort == effort
    assert effort in REASONING_EFFORTS
    if tokens is not None:
        assert variant.tokens == tokens


@pytest.mark.parametrize(
    "label",
    [
        # non-reasoning at a stated effort: two settings, one dimension; not read
        "Claude Sonnet 4.6 (Non-reasoning, Low Effort)",
        # words that name models as slug suffixes or trailing words
        "qwen3-max",
        "mistral-medium",
        "o4-mini-high",
        "phi-4-reasoning",
        "Grok 3 mini Reasoning",
    ],
)
def test_effort_words_that_may_be_names_are_left_in_the_name(label):
    assert parse_variant(label) == Variant(label)


@pytest.mark.parametrize(
    ("label", "base", "service_tier"),
    [
        ("meta-llama/Llama-3.3-70B-Instruct-Turbo", "meta-llama/Llama-3.3-70B-Instruct", "turbo"),
        ("Llama 3.3 70B Turbo", "Llama 3.3 70B", "turbo"),
        ("Qwen/Qwen3-32B-fast", "Qwen/Qwen3-32B", "fast"),
        ("llama-3.1-8b-instruct-fast", "llama-3.1-8b-instruct", "fast"),
        # no parameter count: the word names the model
        ("gpt-4-turbo", "gpt-4-turbo", "standard"),
        ("GPT-4 Turbo", "GPT-4 Turbo", "standard"),
        ("grok-4-fast", "grok-4-fast", "standard"),
        ("glm-5-turbo", "glm-5-turbo", "standard"),
        ("Grok 4 Fast", "Grok 4 Fast", "standard"),
    ],
)
def test_turbo_and_fast_are_tiers_only_after_a_parameter_count(label, base, service_tier):
    variant = parse_variant(label)
    assert (variant.base, variant.service_tier) == (base, service_tier)


def test_a_provider_name_takes_any_tier_word():
    assert parse_variant("Fireworks Fast", provider=True).service_tier == "fast"
    assert parse_variant("DeepInfra Turbo", provider=True).service_tier == "turbo"


@pytest.mark.parametrize(
    ("text", "sized"),
    [
        ("Llama-3.3-70B-Instruct", True),
        ("qwen2.5-1.5b", True),
        ("Mixtral 8x22B", True),
        ("Qwen3-30B-A3B", True),
        ("gemma-3n-e4b", True),
        ("Llama-4-Maverick-17B-128E", True),
        ("gpt-4o", False),
        ("phi-3-mini-128k", False),  # a context window, not a size
        ("claude-3.5-sonnet", False),
    ],
)
def test_has_size(text, sized):
    assert has_size(text) is sized
