"""Loading a JSON snapshot with errors that name the snapshot."""

from __future__ import annotations

import json
from typing import Any

from pipeline.extract.base import SnapshotInput
from pipeline.text import shorten


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys silently; which one the publisher meant is
    # unknowable, so such a document is refused (RFC 8259: names SHOULD be unique).
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def load_json(snapshot: SnapshotInput) -> Any:
    text = snapshot.text()
    try:
        return json.loads(text, object_pairs_hook=_object)
    except _DuplicateKey as error:
        key = shorten(error.key, 80)
        raise snapshot.fail(
            f"key {key!r} appears twice in one JSON object: expected it once"
        ) from None
    except json.JSONDecodeError as error:
        raise snapshot.fail(f"not valid JSON: {error.msg} at line {error.lineno}") from None
    except RecursionError:
        raise snapshot.fail("JSON nested too deeply to read") from None
