"""LLMPerf leaderboard run summaries (ray-project/llmperf-leaderboard raw_data/summary/*.json)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pandas as pd

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.jsondoc import json_number, load_json
from pipeline.support.text import clean_text

FIELDS = {
    "output_tokens_per_s": "results_request_output_throughput_token_per_s_quantiles_p50",
    "ttft_s": "results_ttft_s_quantiles_p50",
    "e2e_s": "results_end_to_end_latency_s_quantiles_p50",
    "mean_input_tokens": "mean_input_tokens",
    "mean_output_tokens": "mean_output_tokens",
    "concurrency": "num_concurrent_requests",
    "completed_requests": "results_num_completed_requests",
    "error_rate": "results_error_rate",
}


def _number(snapshot: SnapshotInput, record: dict[str, Any], key: str) -> float:
    if key not in record:
        raise snapshot.fail(f"expected field {key!r} in the run summary; it is missing")
    return json_number(snapshot, record[key], f"field {key!r}")


def _label(snapshot: SnapshotInput, record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not clean_text(value):
        raise snapshot.fail(f"expected a non-empty string field {key!r}")
    return clean_text(value)


def parse(snapshot: SnapshotInput) -> Frames:
    record = load_json(snapshot)
    if not isinstance(record, dict):
        raise snapshot.fail("expected a JSON object (an LLMPerf run summary)")
    timestamp = _number(snapshot, record, "timestamp")
    try:
        observed = datetime.fromtimestamp(timestamp, UTC)
    except (OverflowError, OSError, ValueError):
        raise snapshot.fail(f"timestamp {timestamp!r} is not a valid Unix time") from None
    row: dict[str, Any] = {
        "observed_at": pd.Timestamp(observed),  # the run's own date, not the capture's
        "framework": _label(snapshot, record, "framework"),
        "model_label": _label(snapshot, record, "model"),
    }
    for column, key in FIELDS.items():
        row[column] = _number(snapshot, record, key)
    for column in ("mean_input_tokens", "mean_output_tokens", "concurrency", "completed_requests"):
        if not row[column].is_integer():  # int() would silently turn 5.7 requests into 5
            raise snapshot.fail(f"field {FIELDS[column]!r} is not a whole number: {row[column]!r}")
        row[column] = int(row[column])
    return {"llmperf_runs": validated("llmperf_runs", snapshot, [row])}


PARSER = Parser("llmperf_summary", "2", ("llmperf_runs",), parse)
