"""Reading one table cell as a number: blanks are missing values, anything else must parse."""

from __future__ import annotations

from pipeline.extract.base import SnapshotInput
from pipeline.normalise.numbers import FigureError, parse_figure

MISSING = {"", "—", "–", "-", "n/a", "na", "none", "null", "?"}


def cell_number(
    text: str, snapshot: SnapshotInput, column: str, row: int, *, seconds: bool = False
) -> float | None:
    """A plain number (thousands separators and a unit allowed); None for a blank cell.

    With `seconds`, a value in ms is converted to seconds."""
    if text.strip().casefold() in MISSING:
        return None
    shown = text if len(text) <= 60 else text[:59] + "…"  # a huge cell must not flood the log
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
