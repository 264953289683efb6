"""Validating the exports: one JSON Schema (draft 2020-12) per export in `schemas/`, generated from
the contract's models (pipeline/release/contract/, `speedbook schemas`) and committed; these are
the files a release ships and that every document is checked against before it is published."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

from pipeline.release.contract import MODELS
from pipeline.release.contract.schemas import schema_file_name
from pipeline.support.settings import SCHEMAS_DIR

EXPORT_FILES = tuple(MODELS)  # inference.json, model_platforms.json, inference_catalog.json


class ContractError(ValueError):
    """An export does not match its schema; the message carries the validator's findings."""


def schema_path(export_file: str) -> Path:
    return SCHEMAS_DIR / schema_file_name(export_file)


@cache
def validator(export_file: str) -> jsonschema_rs.Draft202012Validator:
    """A compiled validator (jsonschema-rs: a Rust implementation of draft 2020-12, two orders
    of magnitude faster than pure Python on a 20 MB export, with the same verdicts)."""
    schema = json.loads(schema_path(export_file).read_text(encoding="utf-8"))
    return jsonschema_rs.Draft202012Validator(schema)


def problems(export_file: str, document: Any, limit: int = 10) -> list[str]:
    """Every way the document breaks its schema (at most `limit`), as 'path: message', with the
    snapshot the offending figure cites when there is one (a bad value staged from it)."""
    found = []
    for error in validator(export_file).iter_errors(document):
        where = "/".join(str(part) for part in error.instance_path) or "(root)"
        snapshot = _cited_snapshot(document, error.instance_path)
        cited = f" (from snapshot {snapshot})" if snapshot else ""
        found.append(f"{export_file} at {where}: {error.message}{cited}")
    return sorted(found)[:limit]


def _cited_snapshot(document: Any, path: Any) -> str | None:
    """The `snapshot` of the innermost object on `path` that names one (a figure, a claim)."""
    cited, node = None, document
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(node, dict) and isinstance(node.get("snapshot"), str):
            cited = node["snapshot"]
    return cited


def check(export_file: str, document: Any) -> None:
    found = problems(export_file, document)
    if found:
        raise ContractError("; ".join(found))


def validate_directory(directory: Path) -> dict[str, list[str]]:
    """Validate every export found in a folder: {file: problems}; a missing file is a problem."""
    report: dict[str, list[str]] = {}
    for name in EXPORT_FILES:
        path = directory / name
        if not path.is_file():
            report[name] = [f"{name}: missing from {directory}"]
            continue
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            report[name] = [f"{name}: not valid JSON: {error}"]
            continue
        except RecursionError:
            report[name] = [f"{name}: JSON nested too deeply"]
            continue
        report[name] = problems(name, document)
    return report
