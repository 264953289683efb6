"""Reading one table cell as a number: blanks are missing values, anything else must parse."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipeline.extract.base import SnapshotInput
from pipeline.support.figures import FigureError, parse_figure
from pipeline.support.text import clean_text, shorten

MISSING = {"", "—", "–", "-", "n/a", "na", "none", "null", "?"}
# Most cells are a bare number ('691', '1,753.0'): read those without the general parser.
# Possessive repeats (++, *+): a group given back could only leave a ',' or a TAB that nothing
# else matches, and keeping none to give back keeps a hostile column's match in constant memory
# (8,000 cells of a thousand groups each held a gigabyte of backtracking state).
_NUMBER = r"\d{1,3}(?:,\d{3})++(?:\.\d+)?|\d{1,15}(?:\.\d+)?"
_PLAIN = re.compile(rf"\$?({_NUMBER})")
# A column of them, TAB-separated: matched in one call instead of one per cell.
_PLAIN_COLUMN = re.compile(rf"\$?(?:{_NUMBER})(?:\t\$?(?:{_NUMBER}))*+")


@dataclass(frozen=True)
class Units:
    """The units a column's figures may be written in, each with the divisor that turns it into
    the column's unit. A bare number is taken to be in the column's unit already."""

    name: str  # the column's unit, for messages: 'expected a <name> figure'
    divisors: Mapping[str, float]  # unit as parse_figure names it ('usd' for '$') -> divisor


TOKENS_PER_S = Units("tokens/s", {"t/s": 1})
SECONDS = Units("seconds", {"s": 1, "ms": 1000})
USD = Units("USD", {"usd": 1})


def require_unit(
    snapshot: SnapshotInput, unit: str | None, units: Units, where: str, text: str
) -> None:
    """Refuse a figure written in a unit the column does not hold: '500 ms' is not a speed."""
    if unit is not None and unit not in units.divisors:
        raise snapshot.fail(f"{where}: expected a {units.name} figure, got {shorten(text, 60)!r}")


def _missing(text: str) -> bool:
    """A blank cell: empty, a dash, 'n/a' and the like."""
    return text.strip().casefold() in MISSING


def plain_numbers(texts: Sequence[str], units: Units) -> list[float | None] | None:
    """A column's cells as cell_number reads them, when each is a plain number (a '$' only in a
    USD column) or exactly a blank as written ('', '—', 'n/a'): matched in one call for the
    column, where a cell at a time cost 50 µs of a page's 300. None for anything else: the
    caller then reads cell by cell, and cell_number names the culprit."""
    present = list(texts) if MISSING.isdisjoint(texts) else [t for t in texts if t not in MISSING]
    if not present:
        return [None] * len(texts)
    joined = "\t".join(present)
    # a cell holding a TAB would read as two: the separators must be the joins alone
    if joined.count("\t") != len(present) - 1 or _PLAIN_COLUMN.fullmatch(joined) is None:
        return None
    # the match allows a '$' only before a number and a ',' only between its digits
    if "$" in joined:
        if "usd" not in units.divisors:
            return None
        joined = joined.replace("$", "")
    numbers: list[float | None] = list(map(float, joined.replace(",", "").split("\t")))
    if len(present) == len(texts):
        return numbers
    given = iter(numbers)
    return [None if text in MISSING else next(given) for text in texts]


def cell_number(
    text: str, snapshot: SnapshotInput, column: str, row: int, units: Units
) -> float | None:
    """A plain number (thousands separators and a unit of `units` allowed), converted to the
    column's unit; None for a blank cell."""
    plain = _PLAIN.fullmatch(text)
    if plain is None:
        if _missing(text):  # '—' as written: cleaning would not change it
            return None
        text = clean_text(text, max_length=10_000)  # raw cell text: markup and spacing go first
        plain = _PLAIN.fullmatch(text)
    if plain:
        if text.startswith("$"):
            require_unit(snapshot, "usd", units, f"column {column!r}, row {row}", text)
        return float(plain.group(1).replace(",", ""))
    if _missing(text):
        return None
    where = f"column {column!r}, row {row}"
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
    require_unit(snapshot, figure.unit, units, where, text)
    return figure.value / units.divisors.get(figure.unit, 1)  # type: ignore[arg-type]
