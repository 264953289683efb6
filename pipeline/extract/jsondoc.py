"""Loading a JSON snapshot with errors that name the snapshot."""

from __future__ import annotations

import json
import math
import re
from datetime import date
from typing import Any

from pipeline.extract.base import SnapshotInput
from pipeline.support.text import shorten

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


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


def json_number(snapshot: SnapshotInput, value: Any, what: str) -> float:
    """A finite number given as a JSON number or a string holding one ('0.35': publishers write
    both). `what` names the value in the error ("field 'ttft'", "model 'x': pricing.prompt")."""
    # bool is an int to Python: float(True) would be a value of 1.
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise snapshot.fail(f"{what} is not a number: {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise snapshot.fail(f"{what} is not a number: {value!r}") from None
    except OverflowError:  # an integer too large for a float
        raise snapshot.fail(f"{what} is not a finite number: {shorten(repr(value), 80)}") from None
    if not math.isfinite(number):
        raise snapshot.fail(f"{what} is not a finite number: {value!r}")
    return number


def json_date(snapshot: SnapshotInput, value: Any, what: str) -> str | None:
    """An ISO date (a time may follow it) that exists, as 'YYYY-MM-DD'; None for null. '2026-13-45'
    and 'soon' are errors naming `what`."""
    if value is None:
        return None
    if isinstance(value, str) and _DATE.match(value):
        try:
            return date.fromisoformat(value[:10]).isoformat()
        except ValueError:
            pass
    raise snapshot.fail(f"{what} {value!r} is not a date")
