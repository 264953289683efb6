"""Deterministic JSON bytes: sorted keys, two-space indent, UTF-8, one trailing newline."""

from __future__ import annotations

import json
from typing import Any


def dumps(document: Any) -> bytes:
    text = json.dumps(document, ensure_ascii=False, indent=2, sort_keys=True, allow_nan=False)
    return (text + "\n").encode("utf-8")
