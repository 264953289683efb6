"""inference_catalog.json: the edge inference catalogue, by task."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pipeline.release.contract.common import Citation, Contract, Envelope
from pipeline.release.contract.platforms import (
    OTHER_PRICES,
    PRICE_CACHE_READ,
    PRICE_INPUT,
    PRICE_OUTPUT,
)
from pipeline.release.contract.types import Amount, Count, Day, Id, PositiveCount, Text
from pipeline.schema.vocabulary import Precision, ServiceTier


class CatalogPlatform(Contract):
    """The edge-hosted platform whose catalogue this is."""

    id: Id = Field(description="platform id (pipeline/metadata/platforms.toml)")
    name: Text = Field(description="the platform's display name")
    owner: Text = Field(description="who runs the platform")


class CatalogModel(Contract):
    """A model as the catalogue lists it. The catalogue omits a flag when it is false, so a
    flag it does not set is false here."""

    id: Text = Field(description="the platform's own id for the model")
    name: Text = Field(description="the model's name as the catalogue lists it")
    publisher: Text | None = Field(description="who published the model, as the catalogue says")
    model_id: Id | None = Field(
        description="the model: a reviewed one where an alias or its id matches, else the "
        "model kept under the catalogue's id; null when the id names none"
    )
    model_reviewed: bool | None = Field(
        description="model_id is a reviewed model (false: kept under the catalogue's id until "
        "reviewed); null without a model_id"
    )
    function_calling: bool = Field(description="the catalogue marks function calling (ƒ)")
    precision: Precision = Field(
        description="precision read from the listed name; unknown when it states none"
    )
    service_tier: ServiceTier = Field(description="service tier read from the listed name")
    beta: bool = Field(description="the catalogue marks the model beta")
    lora: bool = Field(description="the catalogue marks LoRA support")
    context_window: PositiveCount | None = Field(
        description="context window the catalogue states [tokens]; null when it states none"
    )
    planned_deprecation: Day | None = Field(
        description="planned deprecation date the catalogue states; null when none"
    )
    price_input_usd_per_mtok: Amount | None = Field(description=PRICE_INPUT)
    price_output_usd_per_mtok: Amount | None = Field(description=PRICE_OUTPUT)
    price_cache_read_usd_per_mtok: Amount | None = Field(description=PRICE_CACHE_READ)
    other_prices: Text | None = Field(description=OTHER_PRICES)


class Task(Contract):
    """A task of the catalogue with its models."""

    name: Text = Field(description="the task, as the catalogue files models under it")
    count: PositiveCount = Field(description="how many models the task lists")
    models: list[CatalogModel] = Field(
        min_length=1, description="the task's models, sorted by name, then id"
    )


class InferenceCatalog(Envelope):
    """The edge inference catalogue: its platform, the total, and its tasks in a stable order,
    each with its count and its models."""

    export: Literal["inference_catalog"] = Field(description="which export this file is")
    platform: CatalogPlatform | None = Field(
        description="the edge-hosted platform; null when the release has none"
    )
    total: Count = Field(description="how many models the catalogue lists")
    function_calling: Count = Field(description="how many of them are marked function calling")
    catalogue_snapshots: list[Citation] = Field(description="the catalogue snapshots read")
    tasks: list[Task] = Field(
        description="the tasks in the fieldbook's order (Text Generation, Text Embeddings, "
        "Automatic Speech Recognition, ...), unknown tasks after them alphabetically"
    )
