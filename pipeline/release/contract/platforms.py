"""model_platforms.json: one row per model-access platform."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pipeline.release.contract.common import QUALIFIER, Citation, Contract, Envelope, ModelRef
from pipeline.release.contract.types import Amount, Id, PositiveCount, Text
from pipeline.schema.vocabulary import PlatformKind, Qualifier, Tier

PRICE_INPUT = "input price the catalogue lists [USD per 1M tokens]; null when it lists none"
PRICE_OUTPUT = "output price the catalogue lists [USD per 1M tokens]; null when it lists none"
PRICE_CACHE_READ = (
    "price of cached input tokens read, as the catalogue lists it (Cloudflare's per M cached "
    "input tokens) [USD per 1M tokens]; null when it lists none"
)
PRICE_CACHE_WRITE = (
    "price of input tokens written to the cache [USD per 1M tokens]; null when the catalogue "
    "lists none"
)
OTHER_PRICES = (
    "prices the catalogue gives in units not read as numbers (per audio minute, per image), "
    "as written; null when none"
)


class ParsedCount(Contract):
    """A model count read from the platform's own words."""

    value: Amount | None = Field(description="the count; null when the words give no number")
    qualifier: Qualifier | None = Field(description=QUALIFIER)
    context: Text | None = Field(
        description="what the count is of, as written (sold directly, incl. community)"
    )


class StatedCount(Contract):
    """The number of models a platform's documentation says it offers."""

    text: Text = Field(description="the count as the platform writes it")
    parsed: ParsedCount | None = Field(
        description="the first figure of text; null when it states none (Hundreds of models)"
    )
    also: list[ParsedCount | None] = Field(
        description="further figures of text, e.g. 11K+ incl. community"
    )
    tier: Tier = Field(description="tier of the documentation the count comes from")


class ListedModel(Contract):
    """One model a catalogue lists for the platform, with the prices the catalogue lists."""

    id: Text = Field(description="the model's id in the catalogue")
    model: ModelRef | None = Field(
        description="the model (reviewed, or kept under the catalogue's id); null when the id "
        "names none"
    )
    price_input_usd_per_mtok: Amount | None = Field(description=PRICE_INPUT)
    price_output_usd_per_mtok: Amount | None = Field(description=PRICE_OUTPUT)
    price_cache_read_usd_per_mtok: Amount | None = Field(description=PRICE_CACHE_READ)
    price_cache_write_usd_per_mtok: Amount | None = Field(description=PRICE_CACHE_WRITE)
    other_prices: Text | None = Field(description=OTHER_PRICES)


class ListedModels(Contract):
    """The models a catalogue we ingested lists for the platform: its own catalogue where one is
    read, else its listing in a catalogue of many providers' catalogues (models.dev)."""

    count: PositiveCount = Field(description="how many models the catalogue lists")
    scope: Text | None = Field(description="what the catalogue covers, e.g. the full catalogue")
    catalogue: Literal["own", "models_dev"] = Field(
        description="own: the platform's own catalogue; models_dev: its listing in models.dev, "
        "read where no own catalogue is"
    )
    models: list[ListedModel] = Field(description="the models listed, sorted by id")
    sources: list[Citation] = Field(min_length=1, description="the catalogue snapshots read")


class PlatformSource(Citation):
    """A source a platform's row cites, and what it is for the platform."""

    role: Literal["documentation", "catalogue"] = Field(
        description="documentation (where the stated count comes from) or catalogue (a list "
        "of the models offered)"
    )


class Platform(Contract):
    """A model-access platform (reviewed, pipeline/metadata/platforms.toml)."""

    id: Id = Field(description="platform id (pipeline/metadata/platforms.toml)")
    name: Text = Field(description="the platform's display name")
    owner: Text = Field(description="who runs the platform")
    kind: PlatformKind = Field(
        description="managed_cloud_catalogue, edge_hosted, gateway or model_choice_layer"
    )
    kind_label: Text = Field(description="kind, as the fieldbook labels it")
    stated_count: StatedCount = Field(description="the model count its documentation states")
    listed_models: ListedModels | None = Field(
        description="the models its catalogue lists; null when no catalogue of it was ingested"
    )
    notable: list[Text] = Field(description="notable model families, as the fieldbook lists them")
    sources: list[PlatformSource] = Field(
        min_length=1, description="its documentation, then its catalogue snapshots"
    )


class ModelPlatforms(Envelope):
    """One row per model-access platform: kind, the model count its own docs state (as written
    and parsed), the models actually listed where a catalogue was ingested (with their listed
    prices), notable families, and the sources they cite by id."""

    export: Literal["model_platforms"] = Field(description="which export this file is")
    platforms: list[Platform] = Field(
        description="one row per platform whose documentation has a snapshot, sorted by id"
    )
