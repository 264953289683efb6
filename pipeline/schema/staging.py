"""Staged frames: what each parser returns, one model per frame.

Every model is strict (no unexpected columns), coercing, validated lazily (all failures at once),
and unique on its key. Labels are kept as the source wrote them (cleaned of markup); resolving
them to entities happens in the normalise step.
"""

from __future__ import annotations

from typing import Annotated

import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

from pipeline.schema.vocabulary import MAX_TOKENS_PER_S, QUALIFIERS, TIERS

UtcTimestamp = Annotated[pd.DatetimeTZDtype, "ns", "UTC"]


class StagedFrame(pa.DataFrameModel):
    """Columns every staged frame carries: where its rows came from."""

    source_id: Series[str] = pa.Field(str_length={"min_value": 1}, description="registry id")
    snapshot_id: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="<source_id>/<snapshot file>"
    )
    observed_at: Series[UtcTimestamp] = pa.Field(
        description="when the figure was observed: the snapshot's retrieval time unless the "
        "source dates its figures itself"
    )

    class Config:
        strict = True
        coerce = True


def _speed(**kwargs: object) -> object:
    return pa.Field(gt=0, lt=MAX_TOKENS_PER_S, metadata={"unit": "tokens/s"}, **kwargs)


class AAEndpoints(StagedFrame):
    """One row per endpoint on an Artificial Analysis provider page."""

    page_model: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="model the page measures"
    )
    endpoint_label: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="provider label with variant, e.g. 'Azure (FP8)'"
    )
    output_tokens_per_s: Series[float] = _speed(nullable=True, description="median output speed")
    ttft_s: Series[float] = pa.Field(
        ge=0,
        lt=3600,
        nullable=True,
        metadata={"unit": "s"},
        description="median time to first token",
    )
    price_blended_usd_per_mtok: Series[float] = pa.Field(
        ge=0,
        lt=100_000,
        nullable=True,
        metadata={"unit": "USD per 1M tokens"},
        description="blended price, 3:1 input:output",
    )

    class Config:
        unique = ["snapshot_id", "endpoint_label"]


class CompilationFigures(StagedFrame):
    """Speed figures a compilation page reports per provider, each with the page it cites."""

    table_name: Series[str] = pa.Field(isin=["providers", "live"], description="which table")
    row_number: Series[int] = pa.Field(ge=1, description="1-based row in that table")
    role: Series[str] = pa.Field(isin=["headline", "context", "row"])
    provider_label: Series[str] = pa.Field(str_length={"min_value": 1})
    # Null when the row names no model; an empty cell is a broken row, not a missing model.
    model_label: Series[str] = pa.Field(
        str_length={"min_value": 1}, nullable=True, description="model the figure is on"
    )
    applies_to: Series[str] = pa.Field(
        str_length={"min_value": 1},
        nullable=True,
        description="a model class or scope instead of a model ('8B-class')",
    )
    figure_text: Series[str] = pa.Field(str_length={"min_value": 1}, description="as written")
    value: Series[float] = _speed(nullable=True)
    low: Series[float] = _speed(nullable=True)
    high: Series[float] = _speed(nullable=True)
    qualifier: Series[str] = pa.Field(isin=list(QUALIFIERS), nullable=True)
    cited_url: Series[str] = pa.Field(nullable=True, description="the T1 page the row cites")
    cited_text: Series[str] = pa.Field(nullable=True, description="the row's source, as written")
    country: Series[str] = pa.Field(nullable=True)
    provider_type: Series[str] = pa.Field(nullable=True)

    class Config:
        unique = ["snapshot_id", "table_name", "row_number", "role", "figure_text"]


class CompilationPlatforms(StagedFrame):
    """The model-access platform table of a compilation page."""

    platform_label: Series[str] = pa.Field(str_length={"min_value": 1})
    owner: Series[str] = pa.Field(nullable=True)
    kind_label: Series[str] = pa.Field(str_length={"min_value": 1})
    stated_count: Series[str] = pa.Field(str_length={"min_value": 1}, description="as written")
    notable: Series[str] = pa.Field(nullable=True, description="' · '-joined notable families")
    cited_url: Series[str] = pa.Field(nullable=True)
    cited_tier: Series[str] = pa.Field(isin=list(TIERS), nullable=True)

    class Config:
        unique = ["snapshot_id", "platform_label"]


class LLMPerfRuns(StagedFrame):
    """One LLMPerf run summary: a provider, a model, a workload and its medians."""

    framework: Series[str] = pa.Field(str_length={"min_value": 1}, description="provider name")
    model_label: Series[str] = pa.Field(str_length={"min_value": 1})
    output_tokens_per_s: Series[float] = _speed(description="median per-request output throughput")
    ttft_s: Series[float] = pa.Field(ge=0, lt=3600, nullable=True, metadata={"unit": "s"})
    e2e_s: Series[float] = pa.Field(ge=0, lt=3600, nullable=True, metadata={"unit": "s"})
    mean_input_tokens: Series[int] = pa.Field(gt=0)
    mean_output_tokens: Series[int] = pa.Field(gt=0)
    concurrency: Series[int] = pa.Field(gt=0)
    completed_requests: Series[int] = pa.Field(ge=0)
    error_rate: Series[float] = pa.Field(ge=0, le=1)

    class Config:
        unique = ["snapshot_id"]


class ClaimEvidence(StagedFrame):
    """A reviewed claim's quote, found in the snapshot's text."""

    claim_id: Series[str] = pa.Field(str_length={"min_value": 1})
    quote: Series[str] = pa.Field(str_length={"min_value": 1})

    class Config:
        unique = ["snapshot_id", "claim_id", "quote"]


class UnreviewedFigures(StagedFrame):
    """Tokens-per-second figures on a claim page that no reviewed claim covers."""

    figure_text: Series[str] = pa.Field(str_length={"min_value": 1})
    sentence: Series[str] = pa.Field(str_length={"min_value": 1})

    class Config:
        unique = ["snapshot_id", "figure_text", "sentence"]


class CatalogueEntries(StagedFrame):
    """A model as a platform's catalogue lists it (Cloudflare, OpenRouter, Azure Foundry)."""

    platform_model_id: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="the platform's own id for the model"
    )
    name: Series[str] = pa.Field(str_length={"min_value": 1})
    publisher: Series[str] = pa.Field(nullable=True, description="model creator as listed")
    task: Series[str] = pa.Field(nullable=True, description="task or modality as listed")
    function_calling: Series[pd.BooleanDtype] = pa.Field(nullable=True)
    beta: Series[pd.BooleanDtype] = pa.Field(nullable=True)
    lora: Series[pd.BooleanDtype] = pa.Field(nullable=True)
    context_window: Series[pd.Int64Dtype] = pa.Field(
        gt=0, nullable=True, metadata={"unit": "tokens"}
    )
    price_input_usd_per_mtok: Series[float] = pa.Field(ge=0, nullable=True)
    price_output_usd_per_mtok: Series[float] = pa.Field(ge=0, nullable=True)
    planned_deprecation: Series[str] = pa.Field(
        nullable=True, str_matches=r"^\d{4}-\d{2}-\d{2}$", description="ISO date"
    )

    class Config:
        unique = ["snapshot_id", "platform_model_id"]


class PlatformStatements(StagedFrame):
    """A platform's own page, verified to state the reviewed model count and notable families."""

    platform_id: Series[str] = pa.Field(str_length={"min_value": 1})
    stated_count: Series[str] = pa.Field(str_length={"min_value": 1}, description="as written")
    notable: Series[str] = pa.Field(nullable=True, description="' · '-joined")

    class Config:
        unique = ["snapshot_id", "platform_id"]


FRAMES: dict[str, type[StagedFrame]] = {
    "aa_endpoints": AAEndpoints,
    "compilation_figures": CompilationFigures,
    "compilation_platforms": CompilationPlatforms,
    "llmperf_runs": LLMPerfRuns,
    "claim_evidence": ClaimEvidence,
    "unreviewed_figures": UnreviewedFigures,
    "catalogue_entries": CatalogueEntries,
    "platform_statements": PlatformStatements,
}
