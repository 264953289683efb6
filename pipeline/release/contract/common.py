"""What the three exports share: the envelope, snapshots, source references, models, variants."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pipeline.release.contract.types import (
    Id,
    ReleaseVersion,
    SemVer,
    Sha256,
    Text,
    Timestamp,
    Url,
    UrlTemplate,
)
from pipeline.schema.vocabulary import (
    ObtainedBy,
    Precision,
    ReasoningEffort,
    ServiceTier,
    Tier,
)

DATASET = "speedbook"
LICENSE = "CC-BY-4.0"
LICENSE_URL = "https://creativecommons.org/licenses/by/4.0/"
# descriptions shared by the figures of every export
VALUE = "the figure, or the bound of an at_least or up_to figure; null for a range"
LOW = "low end of a range; null otherwise"
HIGH = "high end of a range; null otherwise"
QUALIFIER = (
    "approx (~), at_least (>, ≥), up_to (up to, ≤) or range (low to high) as the source writes "
    "it; null when exact"
)


class Contract(BaseModel):
    """Every object of an export: no key beyond its fields, every field present (null where it
    may be), no type coercion, immutable once built."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


URL = "the address as a link; null when the address is a template (see url_template)"
URL_TEMPLATE = (
    "the address when it is a template with a placeholder to fill in (a path segment or query "
    "value of upper-case words joined by underscores, such as ACCOUNT_ID): text, not a link; "
    "null otherwise"
)
OBTAINED_BY = (
    "how the bytes came: bundled with the code, fetched over HTTP, added by hand (`speedbook "
    "snapshot add`), or reconstructed from another document (never captured from the source: "
    "see reconstructed_from)"
)
RECONSTRUCTED_FROM = (
    "for a reconstructed snapshot, the document its bytes were rebuilt from; null for bytes "
    "as obtained from the source"
)


class ReconstructedFrom(Contract):
    """The document a reconstructed snapshot was rebuilt from: its figures are that document's,
    not a capture of the source."""

    title: Text = Field(description="the document's title, with its publisher and date")
    url: Url | None = Field(description="the document's address; null when not known")
    snapshot: Text | None = Field(
        description="id of the stored snapshot of that document (<source id>/<file name>); null "
        "when the document is not in the store"
    )


class Snapshot(Contract):
    """A raw snapshot the export cites: the stored bytes a figure was read from."""

    id: Text = Field(description="snapshot id, <source id>/<file name> under warehouse/raw")
    source: Id = Field(description="registry id of the source the snapshot was taken of")
    url: Url | None = Field(description=f"address the bytes were obtained from: {URL}")
    url_template: UrlTemplate | None = Field(description=URL_TEMPLATE)
    retrieved_at: Timestamp = Field(description="when the bytes were obtained (UTC)")
    sha256: Sha256 = Field(description="SHA-256 of the stored bytes, lower-case hex")
    obtained_by: ObtainedBy = Field(description=OBTAINED_BY)
    reconstructed_from: ReconstructedFrom | None = Field(description=RECONSTRUCTED_FROM)


class SourceRef(Contract):
    """Where a figure comes from: enough to trace it to its snapshot, URL, tier and date, and
    whether that snapshot was captured or reconstructed."""

    id: Id = Field(description="registry id of the source (pipeline/metadata/sources.toml)")
    publisher: Text = Field(description="who publishes the source")
    tier: Tier = Field(
        description="T1 independent measurement or a platform's own documentation, T2 a "
        "vendor's claim or a compilation citing T1 sources, T3 press repeating a claim"
    )
    url: Url | None = Field(description=f"address of the snapshot the figure was read from: {URL}")
    url_template: UrlTemplate | None = Field(description=URL_TEMPLATE)
    snapshot: Text = Field(description="id of that snapshot (see `snapshots`)")
    retrieved_at: Timestamp = Field(description="when that snapshot was retrieved (UTC)")
    obtained_by: ObtainedBy = Field(description=f"that snapshot's: {OBTAINED_BY}")
    reconstructed_from: ReconstructedFrom | None = Field(description=RECONSTRUCTED_FROM)


REVIEWED = (
    "a reviewer confirmed the entity (it is in the reviewed files); false for one kept under a "
    "source's stable id that no reviewed alias knows yet"
)


class ModelRef(Contract):
    """A model: a reviewed one, or one kept under a source's stable id until reviewed."""

    id: Id = Field(
        description="model id: a reviewed one (pipeline/metadata/models.csv), or the "
        "normalised slug of a source's id"
    )
    name: Text = Field(description="the model's display name")
    reviewed: bool = Field(description=REVIEWED)


class Variant(Contract):
    """The variant of an endpoint: with provider and model, what a speed figure is about."""

    precision: Precision = Field(
        description="numeric precision the endpoint serves at; unknown when the source does "
        "not state it"
    )
    service_tier: ServiceTier = Field(
        description="the provider's service tier (standard unless the source names another)"
    )
    reasoning_effort: ReasoningEffort | None = Field(
        description="reasoning effort the figure was measured at; null when not stated"
    )
    region: Text | None = Field(
        description="region of a regional endpoint as its source names it (eu-west-1); null "
        "for the provider's default endpoint"
    )


class Envelope(Contract):
    """What every export starts with: which dataset, export and release it is."""

    dataset: Literal["speedbook"] = Field(description="always speedbook")
    version: ReleaseVersion = Field(
        description="the release: CalVer of the data date, .N for a later release with the "
        "same data date"
    )
    schema_version: SemVer = Field(
        description="semver of this export's shape (major: a field removed, renamed or changed "
        "in meaning; minor: a field or enum value added; patch: documentation only)"
    )
    license: Literal["CC-BY-4.0"] = Field(description="license of the data")
    data_date: Timestamp = Field(description="newest snapshot retrieval the release used (UTC)")
    as_of: Timestamp | None = Field(
        description="the --as-of bound of the build; null for a build of every snapshot"
    )
    snapshots: list[Snapshot] = Field(
        description="every snapshot a row of this file cites, sorted by id"
    )
