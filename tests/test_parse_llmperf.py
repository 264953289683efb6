"""LLMPerf run summaries (real files from ray-project/llmperf-leaderboard): the run's medians,
its own date and its workload; and broken variants of the Groq 70B summary."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from test_parse_support import ALL_BUNDLED, MB, bundled, edit, frame, parse, refused

SOURCE = "llmperf-groq-70b"
RUNS = sorted(source for source, _ in ALL_BUNDLED if source.startswith("llmperf-"))
P50 = b'"results_request_output_throughput_token_per_s_quantiles_p50": 185.05116911192525'


@pytest.fixture(scope="module")
def summary() -> bytes:
    return bundled(SOURCE).data


def with_throughput(summary: bytes, value: bytes) -> bytes:
    return edit(summary, P50, P50.replace(b"185.05116911192525", value))


def test_the_groq_run_gives_its_median_throughput_ttft_date_and_workload() -> None:
    run = frame(SOURCE, "llmperf_runs").iloc[0]
    assert (run.framework, run.model_label) == ("groq", "llama2-70b-4096")
    assert run.output_tokens_per_s == pytest.approx(185.05116911192525)
    assert run.ttft_s == pytest.approx(0.2218883791938424)
    assert run.e2e_s == pytest.approx(0.8051837999373674)
    # The run's own timestamp, not the day the file was copied.
    assert run.observed_at == pd.Timestamp("2024-01-10T01:55:04Z")
    workload = (run.mean_input_tokens, run.mean_output_tokens, run.concurrency)
    assert workload == (550, 150, 5)
    assert (run.completed_requests, run.error_rate) == (150, 0.0)


def test_all_nineteen_runs_share_the_leaderboard_workload() -> None:
    assert len(RUNS) == 19
    runs = pd.concat([frame(source, "llmperf_runs") for source in RUNS], ignore_index=True)
    assert set(runs["framework"]) == {
        "anyscale",
        "bedrock",
        "fireworks",
        "groq",
        "lepton",
        "perplexity",
        "replicate",
        "together",
    }
    workloads = zip(runs.mean_input_tokens, runs.mean_output_tokens, runs.concurrency, strict=True)
    assert set(workloads) == {(550, 150, 5)}
    assert runs["observed_at"].min() == pd.Timestamp("2023-12-19T11:20:46Z")
    assert runs["observed_at"].max() == pd.Timestamp("2024-01-10T01:55:04Z")
    together_7b = frame("llmperf-together-7b", "llmperf_runs").iloc[0]
    assert together_7b.model_label == "together_ai/togethercomputer/llama-2-7b-chat"
    assert together_7b.output_tokens_per_s == pytest.approx(64.997797, rel=1e-6)


# Broken variants.


def test_field_missing_is_the_table_missing(summary: bytes) -> None:
    refused(
        bundled(SOURCE),
        edit(summary, P50, b'"renamed_p50": 185.0'),
        "expected field 'results_request_output_throughput_token_per_s_quantiles_p50'",
        "it is missing",
    )


@pytest.mark.parametrize(
    ("field", "renamed"),
    [(b'"framework"', b'"provider"'), (b'"timestamp"', b'"time"'), (b'"model"', b'"llm"')],
)
def test_header_renamed(summary: bytes, field: bytes, renamed: bytes) -> None:
    refused(bundled(SOURCE), edit(summary, field, renamed), f"{field.decode().strip(chr(34))!r}")


@pytest.mark.parametrize("data", [b"", b"   \n", b"null", b"[]", b'"summary"'])
def test_empty_or_not_an_object(data: bytes) -> None:
    message = refused(bundled(SOURCE), data)
    assert "not valid JSON" in message or "expected a JSON object" in message


def test_zero_fields(summary: bytes) -> None:
    refused(bundled(SOURCE), b"{}", "expected field 'timestamp' in the run summary")


@pytest.mark.parametrize("value", [b'"fast"', b"null", b"[185]", b"true", b'"185 t/s"'])
def test_non_numeric_cell(summary: bytes, value: bytes) -> None:
    refused(
        bundled(SOURCE),
        with_throughput(summary, value),
        "field 'results_request_output_throughput_token_per_s_quantiles_p50' is not a number",
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (b"-5", "output_tokens_per_s: greater_than(0) failed for -5.0"),
        (b"0", "output_tokens_per_s: greater_than(0) failed for 0.0"),
        (b"100000", "output_tokens_per_s: less_than(100000.0) failed for 100000.0"),
        (b"1e400", "is not a finite number: inf"),
        (b"NaN", "is not a finite number: nan"),
        (b"-Infinity", "is not a finite number: -inf"),
        (b"1" + b"0" * 400, "is not a finite number: 1000"),  # an int too large for a float
    ],
)
def test_negative_or_absurd_speed(summary: bytes, value: bytes, expected: str) -> None:
    refused(bundled(SOURCE), with_throughput(summary, value), expected)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (b'"num_concurrent_requests": 5', b'"num_concurrent_requests": 5.7', "not a whole number"),
        (b'"num_concurrent_requests": 5', b'"num_concurrent_requests": 0', "concurrency: greater"),
        (b'"mean_input_tokens": 550', b'"mean_input_tokens": -550', "mean_input_tokens: greater"),
        (b'"results_error_rate": 0.0', b'"results_error_rate": 1.5', "error_rate: less_than_or"),
        (b'"timestamp": 1704851704', b'"timestamp": 1e20', "is not a valid Unix time"),
        (b'"results_ttft_s_quantiles_p50": 0.22', b'"results_ttft_s_quantiles_p50": -0.22', "ttft"),
    ],
)
def test_other_impossible_fields(summary: bytes, old: bytes, new: bytes, expected: str) -> None:
    refused(bundled(SOURCE), edit(summary, old, new), expected)


def test_duplicate_key_is_refused_not_silently_overwritten(summary: bytes) -> None:
    # json.loads would keep the last value: a second throughput would replace the real one.
    data = edit(summary, P50, P50 + b",\n    " + P50.replace(b"185.05116911192525", b"999"))
    refused(
        bundled(SOURCE),
        data,
        "key 'results_request_output_throughput_token_per_s_quantiles_p50' appears twice",
    )


@pytest.mark.parametrize(
    "name",
    [
        b"<script>alert(1)</script>groq",
        b"<b>gr</b>oq\\u200b",
        b"&lt;img src=x onerror=alert(1)&gt;groq",
        b"groq\\u0000\\u202e",
    ],
)
def test_markup_and_script_in_a_name_come_out_as_clean_text(summary: bytes, name: bytes) -> None:
    data = edit(summary, b'"framework": "groq"', b'"framework": "' + name + b'"')
    assert parse(bundled(SOURCE), data)["llmperf_runs"]["framework"].tolist() == ["groq"]


def test_a_markup_only_name_is_refused(summary: bytes) -> None:
    data = edit(summary, b'"framework": "groq"', b'"framework": "<script>alert(1)</script>"')
    refused(bundled(SOURCE), data, "expected a non-empty string field 'framework'")


def test_invalid_utf8(summary: bytes) -> None:
    data = edit(summary, b'"model": "llama2-70b-4096"', b'"model": "llama2-\xff"')
    refused(bundled(SOURCE), data, "not valid utf-8 at byte offset")


def test_truncated_json(summary: bytes) -> None:
    refused(bundled(SOURCE), summary[: len(summary) // 2], "not valid JSON")


@pytest.mark.parametrize(
    "data",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    ],
)
def test_json_nested_thousands_deep(data: bytes) -> None:
    refused(bundled(SOURCE), data, "JSON nested too deeply to read")


def test_json_nested_thousands_deep_inside_the_summary(summary: bytes) -> None:
    deep = b"[" * 50_000 + b"]" * 50_000
    refused(
        bundled(SOURCE),
        edit(summary, b'"results_error_code_frequency": "{}"', b'"x": ' + deep),
        "JSON nested too deeply to read",
    )


@pytest.mark.timeout(30)
def test_a_10_mb_single_line_is_read(summary: bytes) -> None:
    record = json.loads(summary)
    record["version"] = "v" * (10 * MB)  # a field nobody reads
    data = json.dumps(record).encode()
    assert data.count(b"\n") == 0 and len(data) > 10 * MB
    run = parse(bundled(SOURCE), data)["llmperf_runs"].iloc[0]
    assert run.output_tokens_per_s == pytest.approx(185.05116911192525)


@pytest.mark.timeout(30)
def test_a_10_mb_name_is_cut_to_a_bounded_clean_label(summary: bytes) -> None:
    data = edit(summary, b'"framework": "groq"', b'"framework": "' + b"groq " * (2 * MB) + b'"')
    label = parse(bundled(SOURCE), data)["llmperf_runs"]["framework"].iloc[0]
    assert label.startswith("groq groq") and label.endswith("…") and len(label) <= 500
