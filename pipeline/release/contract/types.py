"""The value types of the export contract: what each kind of string or number may hold.

The models check shape and type whenever a document is built or parsed. The rules on the content
of strings (patterns, lengths, no markup) are JSON Schema keywords of the generated schemas, which
jsonschema-rs checks before anything is published: the schemas speak ECMA-262 regular expressions,
and one validator of them (instead of a second, Python, dialect) keeps one verdict per document.
It also lets the preview and the changelog read a document that breaks those rules (the preview
still shows a hostile name as text), while a wrong shape or an unknown enum value never parses.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from pipeline.schema.vocabulary import ENDPOINT_ID_PATTERN, ID_PATTERN

NO_CONTROL_CHARACTERS = r"^[^\u0000-\u001f\u007f]*$"
OPENS_A_TAG = r"<[A-Za-z/!?]"
TIMESTAMP_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"


class SchemaRule:
    """JSON Schema keywords added to a type's schema (checked by the schema validator)."""

    def __init__(self, **keywords: Any) -> None:
        self.keywords = keywords

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema.update(self.keywords)
        return schema


# An id of the registry or the reviewed files: a source, provider, model, claim or platform.
Id = Annotated[str, SchemaRule(pattern=f"^{ID_PATTERN}$")]
# provider/model/precision/service_tier/reasoning_effort[@region][~key], as core.endpoint_id
# spells it (sql/core/00_macros.sql)
EndpointId = Annotated[str, SchemaRule(pattern=ENDPOINT_ID_PATTERN)]
# Text from a source or a reviewer: never empty, no control character, never opening a tag.
Text = Annotated[
    str,
    SchemaRule(minLength=1, pattern=NO_CONTROL_CHARACTERS, **{"not": {"pattern": OPENS_A_TAG}}),
]
# Only absolute http(s) URLs go out.
Url = Annotated[str, SchemaRule(pattern=r"^https?://[^\s]+$", maxLength=2048)]
# A URL with a placeholder to fill in (ACCOUNT_ID): http(s) like a URL, but text, never a link.
UrlTemplate = Annotated[str, SchemaRule(pattern=r"^https?://[^\s]+$", maxLength=2048)]
# A UTC time to the second: 2026-11-29T00:00:00Z.
Timestamp = Annotated[str, SchemaRule(pattern=TIMESTAMP_PATTERN)]
Day = Annotated[str, SchemaRule(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Sha256 = Annotated[str, SchemaRule(pattern=r"^[0-9a-f]{64}$")]
CountryCode = Annotated[str, SchemaRule(pattern=r"^[A-Z]{2}$")]
ReleaseVersion = Annotated[str, SchemaRule(pattern=r"^\d{4}\.\d{2}\.\d{2}(\.\d+)?$")]
SemVer = Annotated[str, SchemaRule(pattern=r"^\d+\.\d+\.\d+$")]

Amount = Annotated[float, Field(ge=0)]  # a figure, bound or count: never negative
Ratio = Annotated[float, Field(ge=0)]
Count = Annotated[int, Field(ge=0)]
PositiveCount = Annotated[int, Field(ge=1)]
