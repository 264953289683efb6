"""The 1.2.1 release of the bundled corpus (tests/fixtures/release-1.2.1, built on main before
schema 2.0): a real older release that today's code must still read, diff and list."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).parent / "fixtures" / "release-1.2.1"
VERSION = "2026.11.29"
EXPORTS = ("inference.json", "model_platforms.json", "inference_catalog.json")


def unpack_1_2_1(target: Path) -> Path:
    """The release as a published folder under `target` (the files datapackage.json records,
    byte for byte), named by its version; returns the folder."""
    folder = target / VERSION
    folder.mkdir(parents=True)
    for packed in FOLDER.glob("*.gz"):
        (folder / packed.name.removesuffix(".gz")).write_bytes(gzip.decompress(packed.read_bytes()))
    return folder


def documents_1_2_1() -> dict[str, dict[str, Any]]:
    """Its three exports, parsed as JSON (not yet read in today's shape)."""
    return {
        name: json.loads(gzip.decompress((FOLDER / f"{name}.gz").read_bytes())) for name in EXPORTS
    }
