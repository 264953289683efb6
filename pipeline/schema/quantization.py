"""What a quantization label means as a precision: reviewed vocabulary the parsers read a
source's labels with (pipeline/extract/) and the variants are built on (pipeline/normalise/)."""

from __future__ import annotations

DEFAULT_PRECISION = "unknown"

# Reviewed: what each `quantization` label OpenRouter writes means as a precision (its OpenAPI
# `Quantization` enum, 2026-08, as written in endpoint responses). Microscaling formats count as
# their element width: MXFP4 and NVFP4 are 4-bit floats, MXFP8 an 8-bit float. A label not in
# this table is kept as written with precision `unknown` and reported (precision_of_quantization).
QUANTIZATION_PRECISION: dict[str, str] = {
    "fp32": "fp32",
    "bf16": "bf16",
    "fp16": "fp16",
    "fp8": "fp8",
    "mxfp8": "fp8",
    "fp6": "fp6",
    "fp4": "fp4",
    "mxfp4": "fp4",
    "nvfp4": "fp4",
    "int8": "int8",
    "int4": "int4",
    "unknown": DEFAULT_PRECISION,
}


def precision_of_quantization(label: str | None) -> str | None:
    """The precision a quantization label means (`QUANTIZATION_PRECISION`, any case): `unknown`
    for no label or the label 'unknown', None for a label the table does not know (the caller
    keeps the label, uses precision `unknown` and reports it)."""
    if label is None:
        return DEFAULT_PRECISION
    return QUANTIZATION_PRECISION.get(label.strip().casefold())
