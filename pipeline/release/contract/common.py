"""What the three exports share: the envelope, the sources and snapshots they cite (each written
once, cited by id everywhere), models, variants and the labels of a figure."""

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
    SourceKind,
    Tier,
    TimeBound,
)

DATASET = "speedbook"
# Speedbook's own work in an export (its selection and arrangement, labels, reviewed entities and
# files) is under this licence; the publishers' figures stay under each source's own terms.
COMPILATION_LICENSE = "CC-BY-4.0"
COMPILATION_LICENSE_URL = "https://creativecommons.org/licenses/by/4.0/"
# descriptions shared by the figures of every export
VALUE = "the figure, or the bound of an at_least or up_to figure; null for a range"
LOW = "low end of a range; null otherwise"
HIGH = "high end of a range; null otherwise"
QUALIFIER = (
    "approx (~), at_least (at least, ≥), up_to (up to, ≤) or range (low to high) as the source "
    "writes it; null when exact"
)
TIME_BOUND = (
    "exact; or lower_bound: the capture time was not recorded and the time given is the "
    "earliest it can have been (the figure is that old or newer)"
)
CITED_SOURCE = "registry id of the source (see `sources`)"
CITED_SNAPSHOT = "id of the snapshot it was read from (see `snapshots`)"
BEFORE_2 = "null only in releases before schema 2.0, which did not record it"


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


class CompilationLicense(Contract):
    """The licence of Speedbook's own work in the file, never of the publishers' data."""

    id: Literal["CC-BY-4.0"] = Field(
        description="SPDX id of the licence of Speedbook's compilation: its selection and "
        "arrangement of the figures, its labels and its reviewed entities. The figures "
        "themselves stay under each source's own terms (`sources[].terms`)"
    )
    url: Url = Field(description="the licence's text")


class Attribution(Contract):
    """The credit a source's terms require wherever its data is shown."""

    publisher: Text = Field(description="who to credit")
    url: Url = Field(description="the link the credit must carry")


class Terms(Contract):
    """The terms a source's data is under, as its registry entry records them."""

    license: Text = Field(
        description="an SPDX licence id where the publisher gives one (MIT, Apache-2.0); "
        "publisher-terms where the publisher's own terms govern its data (terms_url); unknown "
        "where nobody knows"
    )
    terms_url: Url | None = Field(description="where the terms are written; null when unknown")
    attribution_required: bool | None = Field(
        description="the publisher requires credit wherever its data is shown; null when "
        "nobody knows"
    )
    attribution: Attribution | None = Field(
        description="the credit to show with the source's data when attribution is required; "
        "null otherwise"
    )


class Source(Contract):
    """A source the file cites, written once: figures, listings and claims cite it by id."""

    id: Id = Field(description="registry id of the source (pipeline/metadata/sources.toml)")
    publisher: Text = Field(description="who publishes the source")
    title: Text | None = Field(description="the source's title in the registry; null when none")
    kind: SourceKind | None = Field(
        description="benchmark, compilation, claim (a vendor's or the press's page) or "
        f"platform_doc; {BEFORE_2}"
    )
    tier: Tier = Field(
        description="T1 independent measurement or a platform's own documentation, T2 a "
        "vendor's claim or a compilation citing T1 sources, T3 press repeating a claim (a "
        "figure read from a reconstruction may carry a lower tier: see the figure's own)"
    )
    url: Url | None = Field(description=f"the source's address in the registry: {URL}")
    url_template: UrlTemplate | None = Field(description=URL_TEMPLATE)
    terms: Terms = Field(description="the terms the source's data is under")


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
    source: Id = Field(description=CITED_SOURCE)
    url: Url | None = Field(description=f"address the bytes were obtained from: {URL}")
    url_template: UrlTemplate | None = Field(description=URL_TEMPLATE)
    retrieved_at: Timestamp = Field(description="when the bytes were obtained (UTC)")
    retrieved_at_bound: TimeBound = Field(description=TIME_BOUND)
    sha256: Sha256 = Field(description="SHA-256 of the stored bytes, lower-case hex")
    obtained_by: ObtainedBy = Field(description=OBTAINED_BY)
    reconstructed_from: ReconstructedFrom | None = Field(description=RECONSTRUCTED_FROM)


class Citation(Contract):
    """Where something was read: a source and its snapshot, both described once in the file."""

    source: Id = Field(description=CITED_SOURCE)
    snapshot: Text = Field(description=CITED_SNAPSHOT)


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
    key: Text | None = Field(
        description="the source's own key telling the endpoint apart among its endpoints of one "
        "variant (fp8 in OpenRouter's tag novita/fp8, a model slug's :free); null when nothing "
        "does"
    )


class Envelope(Contract):
    """What every export starts with: which dataset, export and release it is, the licence of
    Speedbook's own work, and every source and snapshot the file cites, each once."""

    dataset: Literal["speedbook"] = Field(description="always speedbook")
    version: ReleaseVersion = Field(
        description="the release: CalVer of the data date, .N for a later release with the "
        "same data date"
    )
    schema_version: SemVer = Field(
        description="semver of this export's shape (major: a field removed, renamed or changed "
        "in meaning; minor: a field or enum value added; patch: documentation only)"
    )
    license: CompilationLicense = Field(
        description="the licence of Speedbook's own work in this file; the publishers' data "
        "stays under each source's terms (`sources[].terms`)"
    )
    data_date: Timestamp = Field(description="newest snapshot retrieval the release used (UTC)")
    as_of: Timestamp | None = Field(
        description="the --as-of bound of the build; null for a build of every snapshot"
    )
    sources: list[Source] = Field(
        description="every source a row of this file cites, with its terms, sorted by id"
    )
    snapshots: list[Snapshot] = Field(
        description="every snapshot a row of this file cites, sorted by id"
    )
