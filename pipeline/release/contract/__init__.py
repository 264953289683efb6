"""The export contract: the three exports, defined once as typed models.

`exports.py` builds these models and dumps them to JSON; `changelog.py`, `history.py` and
`preview.py` parse documents back into them. The JSON Schemas in `schemas/` are
generated from them (`speedbook schemas`), and `contracts.py` validates documents against those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from pipeline.release.contract.catalog import InferenceCatalog
from pipeline.release.contract.common import DATASET, Envelope
from pipeline.release.contract.inference import Inference
from pipeline.release.contract.legacy import upgrade
from pipeline.release.contract.platforms import ModelPlatforms
from pipeline.release.contract.types import ReleaseVersion, SemVer, Timestamp

# semver of the exports' shape, written into every export (docs/releases.md): 1.1 added the
# endpoint id of every figure and the fastest live median beside every claim; 1.2 how each
# figure was measured (method, statistic, window), the independent sources corroborating it, the
# region of a regional endpoint, reviewed flags, endpoint prices, model-level figures, and how
# each cited snapshot was obtained (reconstructed, and from which document) and url_template;
# 1.2.1 lets an endpoint id end in @region, as the warehouse spells a regional endpoint's.
# 2.0 (docs/exports.md, "Schema versions"): every source written once per file (`sources`, with
# its terms) and cited by id; figures labelled exactly as their source gives them (scope live or
# one_off, statistic, qualifier, observed_at_bound, graded tier, suspect, attribution, display);
# a per-model view (`models`: endpoints across providers, offers, rankings, model-level figures);
# claims beside their own endpoint only; catalogue prices; the licence covers Speedbook's own
# work only.
SCHEMA_VERSION = "2.0.0"

INFERENCE = "inference.json"
PLATFORMS = "model_platforms.json"
CATALOG = "inference_catalog.json"
MODELS: dict[str, type[Envelope]] = {
    INFERENCE: Inference,
    PLATFORMS: ModelPlatforms,
    CATALOG: InferenceCatalog,
}

__all__ = [
    "CATALOG",
    "DATASET",
    "INFERENCE",
    "MODELS",
    "PLATFORMS",
    "SCHEMA_VERSION",
    "Inference",
    "InferenceCatalog",
    "ModelPlatforms",
    "Release",
    "ReleaseHead",
    "read_head",
    "read_release",
]


@dataclass(frozen=True)
class Release:
    """The three exports of one release, parsed."""

    inference: Inference
    platforms: ModelPlatforms
    catalog: InferenceCatalog


def read_release(documents: dict[str, Any], *, earlier_schemas: bool = False) -> Release:
    """Parse a release's three export documents (keyed by file name) into the models; raises
    pydantic's ValidationError (a ValueError) naming what does not fit. With `earlier_schemas`,
    documents of an earlier schema version are read in today's shape (contract/legacy.py)."""

    def parse(name: str) -> Any:
        document = documents[name]
        if earlier_schemas and isinstance(document, dict):
            document = upgrade(name, document)
        return MODELS[name].model_validate(document)

    return Release(inference=parse(INFERENCE), platforms=parse(PLATFORMS), catalog=parse(CATALOG))


class ReleaseHead(BaseModel):
    """Which release an export belongs to: its envelope's release fields, read without the rest
    of the document (listing releases needs no more)."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)

    version: ReleaseVersion
    data_date: Timestamp
    as_of: Timestamp | None
    schema_version: SemVer


def read_head(document: dict[str, Any]) -> ReleaseHead:
    return ReleaseHead.model_validate(document)
