"""Reading one table cell as a number: blanks are missing values, anything else must parse."""

from __future__ import annotations

import re

from pipeline.extract.base import SnapshotInput
from pipeline.normalise.numbers import FigureError, parse_figure
from pipeline.text import clean_text, shorten

MISSING = {"", "—", "–", "-", "n/a", "na", "none", "null", "?"}
# Most cells are a bare number ('691', '1,753.0'): read those without the general parser.
_PLAIN = re.compile(r"\$?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,15}(?:\.\d+)?)")


def cell_number(
    text: str, snapshot: SnapshotInput, column: str, row: int, *, seconds: bool = False
) -> float | None:
    """A plain number (thousands separators and a unit allowed); None for a blank cell.

    With `seconds`, a value in ms is converted to seconds."""
    plain = _PLAIN.fullmatch(text)
    if plain:
        return float(plain.group(1).replace(",", ""))
    text = clean_text(text, max_length=10_000)  # raw cell text: markup and spacing go first
    plain = _PLAIN.fullmatch(text)
    if plain:
        return float(plain.group(1).replace(",", ""))
    if text.strip().casefold() in MISSING:
        return None
    shown = shorten(text, 60)
    try:
        figure = parse_figure(text)
    except FigureError as error:
        raise snapshot.fail(
            f"non-numeric cell {shown!r} in column {column!r}, row {row}: expected a number "
            f"({error})"
        ) from None
    if figure.value is None or figure.qualifier is not None:
        raise snapshot.fail(f"cell {shown!r} in column {column!r}, row {row} is not a plain number")
    if seconds and figure.unit == "ms":
        return figure.value / 1000
    return figure.value
