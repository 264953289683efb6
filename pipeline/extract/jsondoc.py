"""Loading JSON snapshots and reading their values, with errors that name where they failed.

Every reader takes `where`: anything with a `fail(message) -> Exception` method. A snapshot is
one (its errors name the snapshot); a parser that reports problems per part of a snapshot (one
member of a bundle, one endpoint) passes its own, whose exception it catches.
"""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Any, Protocol

from pipeline.extract.base import SnapshotInput
from pipeline.schema.staging import MAX_COUNT
from pipeline.support import strict_json
from pipeline.support.text import clean_text, shorten

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


class Failing(Protocol):
    def fail(self, message: str) -> Exception: ...


def parse_json(where: Failing, text: str) -> Any:
    """The JSON document `text`; refuses bad JSON, a key given twice in one object and nesting
    too deep for the parser."""
    try:
        return strict_json.loads(text)
    except strict_json.DuplicateKey as error:
        key = shorten(error.key, 80)
        raise where.fail(
            f"key {key!r} appears twice in one JSON object: expected it once"
        ) from None
    except ValueError as error:  # jiter's words: what, and the line and column
        reason = str(error).removeprefix("not JSON: ")
        if "recursion limit" in reason:
            raise where.fail("JSON nested too deeply to read") from None
        raise where.fail(f"not valid JSON: {reason}") from None


def load_json(snapshot: SnapshotInput) -> Any:
    return parse_json(snapshot, snapshot.text())


def json_number(where: Failing, value: Any, what: str) -> float:
    """A finite number given as a JSON number or a string holding one ('0.35': publishers write
    both). `what` names the value in the error ("field 'ttft'", "model 'x': pricing.prompt")."""
    # bool is an int to Python: float(True) would be a value of 1.
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise where.fail(f"{what} is not a number: {shorten(repr(value), 80)}")
    try:
        number = float(value)
    except ValueError:
        raise where.fail(f"{what} is not a number: {shorten(repr(value), 80)}") from None
    except OverflowError:  # an integer too large for a float
        raise where.fail(f"{what} is not a finite number: {shorten(repr(value), 80)}") from None
    if not math.isfinite(number):
        raise where.fail(f"{what} is not a finite number: {shorten(repr(value), 80)}")
    return number


def json_count(where: Failing, value: Any, what: str) -> int | None:
    """A positive whole number (a token limit, a context length) given as a JSON integer, at most
    MAX_COUNT; None for null. 1.5, -5, '8k', true and 10**30 are errors naming `what`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise where.fail(f"{what} is not a positive whole number: {shorten(repr(value), 80)}")
    if value > MAX_COUNT:
        raise where.fail(f"{what} is {shorten(repr(value), 40)}: expected at most {MAX_COUNT:,}")
    return value


def json_flag(where: Failing, value: Any, what: str) -> bool | None:
    """A JSON boolean; None for null or absent."""
    if value is None or isinstance(value, bool):
        return value
    raise where.fail(f"{what} is not true or false: {shorten(repr(value), 80)}")


def json_label(value: Any, max_length: int = 500) -> str | None:
    """A string as clean text (see clean_text); None when it is not a string or nothing is left."""
    if not isinstance(value, str):
        return None
    return clean_text(value, max_length) or None


def json_date(where: Failing, value: Any, what: str) -> str | None:
    """An ISO date (a time may follow it) that exists, as 'YYYY-MM-DD'; None for null. '2026-13-45'
    and 'soon' are errors naming `what`."""
    if value is None:
        return None
    if isinstance(value, str) and _DATE.match(value):
        try:
            return date.fromisoformat(value[:10]).isoformat()
        except ValueError:
            pass
    raise where.fail(f"{what} {shorten(repr(value), 80)} is not a date")
