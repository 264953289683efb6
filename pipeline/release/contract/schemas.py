"""The JSON Schemas (draft 2020-12) of the exports, generated from the models.

`schemas/*.schema.json` are these, committed: `speedbook schemas` writes them,
`speedbook schemas --check` (and tests/test_contract.py) fails while one is out of date.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import CoreSchema

from pipeline.release.contract.common import Envelope

DRAFT = "https://json-schema.org/draft/2020-12/schema"
ID_BASE = "https://speedbook.invalid/schemas/"


class _ContractSchema(GenerateJsonSchema):
    """Pydantic's generator, without a title on every property (the descriptions say it)."""

    def field_title_should_be_set(self, schema: CoreSchema) -> bool:  # type: ignore[override]
        return False


def schema_file_name(export_file: str) -> str:
    return export_file.replace(".json", ".schema.json")


def _one_line(value: Any) -> Any:
    """Descriptions as one line each (docstrings wrap)."""
    if isinstance(value, dict):
        return {
            key: " ".join(item.split())
            if key == "description" and isinstance(item, str)
            else _one_line(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_one_line(item) for item in value]
    return value


def schema_document(export_file: str, model: type[Envelope]) -> dict[str, Any]:
    generated = _one_line(model.model_json_schema(schema_generator=_ContractSchema))
    generated.pop("title", None)
    return {
        "$schema": DRAFT,
        "$id": ID_BASE + schema_file_name(export_file),
        "title": f"Speedbook {export_file}",
        **generated,
    }


def render_schema(export_file: str, model: type[Envelope]) -> str:
    """The schema file's text: two-space indent, UTF-8, one trailing newline."""
    return json.dumps(schema_document(export_file, model), indent=2, ensure_ascii=False) + "\n"
