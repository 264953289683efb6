"""Figures as sources write them ('~2,314 t/s', '>1,000 per user', '35–434 t/s across models',
'11K+', '$0.35') read into a value or range, a qualifier, a unit and a context, and written back
in one canonical form.

The grammar, in order: an optional qualifier word or sign, a number (optionally '$'/'US$',
thousands separators grouping three digits, a K/M/B multiplier attached), an optional attached
'+' or '-plus', an optional unit, an optional second number after '–', '-', 'to' (or 'and' after
'between') making a range, and whatever follows as the context. Anything else is refused with a
FigureError: nothing is guessed. Each step is one anchored, linear regex on at most
MAX_TEXT_LENGTH characters, so no input can make parsing slow.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, localcontext

from pipeline.schema.vocabulary import QUALIFIERS
from pipeline.support.text import shorten, strip_invisible

__all__ = [
    "MAX_DIGITS",
    "MAX_TEXT_LENGTH",
    "QUALIFIERS",
    "UNITS",
    "Figure",
    "FigureError",
    "format_figure",
    "parse_count_statement",
    "parse_figure",
]

MAX_TEXT_LENGTH = 200
MAX_DIGITS = 30
UNITS = ("t/s", "s", "ms", "usd", "models")


class FigureError(ValueError):
    """A text that cannot be read as a figure (or a Figure that cannot be written)."""


@dataclass(frozen=True)
class Figure:
    """One figure. A point has `value`; a range (qualifier 'range') has `low` and `high`."""

    value: float | None
    low: float | None
    high: float | None
    unit: str | None
    qualifier: str | None
    context: str | None
    text: str


_I = re.IGNORECASE

_QUALIFIER = re.compile(
    r"(?:(?P<approx>~|≈|∼|about|around|approx(?:imately|\.)?|roughly|circa|ca\.|c\.)"
    r"|(?P<at_least>>=|≥|>|over|more\s+than|at\s+least|above)"
    r"|(?P<up_to><=|≤|<|up\s+to|at\s+most|no\s+more\s+than|less\s+than|under|below)"
    r"|(?P<between>between))"
    r"(?![a-z])\s*",
    _I,
)
_DASHES = "-–—−‐‑"  # hyphen-minus, en dash, em dash, minus sign, hyphen, non-breaking hyphen
_CURRENCY = r"(?:us\$|\$)"
_NEGATIVE = re.compile(rf"{_CURRENCY}?\s*[{_DASHES}]\s*{_CURRENCY}?\.?[0-9]", _I)
_AMOUNT = re.compile(
    rf"(?P<currency>{_CURRENCY})?\s*"
    r"(?P<number>[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?|\.[0-9]+)"
    r"(?P<multiplier>[kmb](?![a-z]))?",
    _I,
)
_MALFORMED = re.compile(r"[0-9]|[.,][0-9]")  # right after a number: '1,0000', '1.2.3', '2,3'
_PLUS = re.compile(r"\+|-plus(?![a-z])", _I)  # attached: '1,000+', '2,000-plus'
_UNIT = re.compile(
    r"\s*(?:"
    r"(?P<tps>t/s|tps|(?:output\s+)?(?:tokens?|toks?)\s*(?:/|\s+per\s+|-per-|\s+a\s+)\s*"
    r"(?:s|secs?|seconds?))"
    r"|(?P<ms>ms|msecs?|milliseconds?)"
    r"|(?P<s>s|secs?|seconds?)"
    r"|(?P<models>models?)"
    r"|(?P<usd>usd)"
    r")(?![a-z0-9])",
    _I,
)
_UNIT_NAMES = {"tps": "t/s", "ms": "ms", "s": "s", "models": "models", "usd": "usd"}
_RANGE_SEPARATOR = re.compile(rf"\s*[{_DASHES}]\s*|\s+to\s+", _I)
_BETWEEN_SEPARATOR = re.compile(rf"\s*[{_DASHES}]\s*|\s+(?:to|and)\s+", _I)
# A context may carry numbers ('on 8B-class', 'per 8 GPUs') but must not start with one: '2 3',
# '2 and 3', '2/3' are two numbers, not a figure and its context.
_SECOND_NUMBER = re.compile(
    rf"(?:(?:and|or|to|vs\.?|versus|by|plus|x)\s+|[/&+×=*{_DASHES}]\s*)?"
    rf"[~≈<>≥≤]?\s*[{_DASHES}]?\s*{_CURRENCY}?\.?[0-9]",
    _I,
)
_CONTEXT_LEAD = "·•|,;: "  # separators a context is cleaned of: '~321 t/s · Llama 3.3 70B'
_NOT_FINITE = re.compile(r"(?<![a-z])(?:nan|inf|infinity)(?![a-z])|∞", _I)
_DIGIT = re.compile(r"[0-9]")
_MULTIPLIERS = {"k": Decimal(1_000), "m": Decimal(1_000_000), "b": Decimal(1_000_000_000)}
_PARENTHESIS = re.compile(r"\(([^()]*)\)")
_FIGURE_START = re.compile(
    rf"(?:{_QUALIFIER.pattern})?{_CURRENCY}?\s*[{_DASHES}]?\s*{_CURRENCY}?\.?[0-9]", _I
)


@dataclass(frozen=True)
class _Amount:
    number: Decimal
    digits: str  # the number as written, for messages
    unit: str | None  # 'usd' when written with '$'
    multiplied: bool
    end: int


def _shown(text: str) -> str:
    return repr(shorten(text, 80))


def _error(text: str, why: str) -> FigureError:
    return FigureError(f"cannot read {_shown(text)} as a figure: {why}")


def _prepare(text: object) -> str:
    """The text whitespace-collapsed, without invisible characters (a zero-width space pasted
    into '2,314\u200b t/s' is not a reason to refuse it)."""
    if not isinstance(text, str):
        kind = type(text).__name__
        raise FigureError(f"cannot read a {kind} as a figure: expected text, got {kind}")
    return " ".join(strip_invisible(text).split())


def _read_amount(s: str, pos: int) -> _Amount | None:
    match = _AMOUNT.match(s, pos)
    if match is None:
        return None
    number = match.group("number")
    end = match.end("number")
    if _MALFORMED.match(s, end):
        shown = s[match.start("number") : end + 2]
        why = "thousands separators group three digits, one decimal point"
        raise _error(s, f"malformed number {shown!r} ({why})")
    digits = number.replace(",", "").replace(".", "")
    if len(digits) > MAX_DIGITS:
        raise _error(s, f"the number has {len(digits)} digits, more than {MAX_DIGITS}")
    value = Decimal(number.replace(",", ""))
    multiplier = match.group("multiplier")
    if multiplier:
        with localcontext(prec=100):  # exact: the default 28 digits would round
            value *= _MULTIPLIERS[multiplier.lower()]
    unit = "usd" if match.group("currency") else None
    return _Amount(value, number, unit, bool(multiplier), match.end())


def _read_unit(s: str, amount: _Amount) -> tuple[str | None, int]:
    """The unit after an amount, and where reading goes on. Letters running straight into the
    number ('1e9', '5x', '2nd') are refused unless they are a unit ('1.54s', '100models')."""
    pos = amount.end
    if amount.unit is None:
        match = _UNIT.match(s, pos)
        if match is not None:
            return _UNIT_NAMES[match.lastgroup or ""], match.end()
    if pos < len(s) and s[pos].isalpha():
        raise _error(s, f"the number runs into letters at {s[amount.end - 1 : pos + 8]!r}")
    return amount.unit, pos


def _to_float(s: str, amount: Decimal, unit: str | None) -> float:
    value = float(amount)
    # format_figure must write it back in at most MAX_DIGITS digits, or parsing that would fail.
    if len(_DIGIT.findall(_format_number(value, unit))) > MAX_DIGITS:
        raise _error(s, f"the number has more than {MAX_DIGITS} digits once written out")
    return value


def _absorbed(context: str) -> bool:
    """Would the parser read this (as the start of what follows a number) as a unit or range?"""
    return bool(
        _UNIT.match(context)
        or _PLUS.match(context)
        or context[:1] in _DASHES
        or re.match(r"(?:to|and)\s", context, _I)
    )


def _context(s: str, pos: int) -> str | None:
    rest = s[pos:].strip()
    cleaned = rest.lstrip(_CONTEXT_LEAD)
    if _SECOND_NUMBER.match(cleaned):
        raise _error(s, f"two numbers that are not a range ({rest!r} follows the first)")
    if not cleaned:
        return None
    # Keep the separator when the cleaned context would read as a unit or range once written
    # after the number by format_figure: the round trip must give back the same figure.
    return rest if cleaned != rest and _absorbed(cleaned) else cleaned


def _no_number(s: str) -> FigureError:
    if not s:
        return FigureError("cannot read an empty text as a figure: it has no number")
    if _NOT_FINITE.search(s):
        return _error(s, "NaN and infinity are not figures")
    if not _DIGIT.search(s):
        return _error(s, "it has no number")
    return _error(s, "it does not start with a number (an optional ~, >, 'up to' ... first)")


def parse_figure(text: str) -> Figure:
    """Read one figure. Raises FigureError, naming the text and the reason, for anything it
    cannot read: no number, two numbers that are not a range, a negative number, more than
    MAX_DIGITS digits, NaN or infinity, a text longer than MAX_TEXT_LENGTH characters.

    `text` is the input whitespace-collapsed, invisible characters removed. `context` is what
    follows the figure as written ('per server', 'on 8B-class', 'sold directly'), with a leading
    '·', ',', ';', ':' or '|' dropped unless the rest would then read as a unit or a range
    ('5 · s' keeps '· s'), or None."""
    s = _prepare(text)
    if len(s) > MAX_TEXT_LENGTH:
        raise _error(s, f"{len(s)} characters is longer than a figure ({MAX_TEXT_LENGTH} at most)")
    pos = 0
    qualifier: str | None = None
    match = _QUALIFIER.match(s)
    if match is not None:
        qualifier, pos = match.lastgroup, match.end()
    if _NEGATIVE.match(s, pos):
        raise _error(s, "a negative number is not a figure")
    first = _read_amount(s, pos)
    if first is None:
        raise _no_number(s)
    plus = _PLUS.match(s, first.end)
    if plus is not None:
        if qualifier not in (None, "at_least"):
            raise _error(s, f"'+' contradicts the qualifier {qualifier!r}")
        qualifier = "at_least"
        first = _Amount(first.number, first.digits, first.unit, first.multiplied, plus.end())
    unit, pos = _read_unit(s, first)

    separator = (_BETWEEN_SEPARATOR if qualifier == "between" else _RANGE_SEPARATOR).match(s, pos)
    second = None
    if separator is not None:
        if _NEGATIVE.match(s, separator.end()):
            raise _error(s, "a negative number is not a figure")
        second = _read_amount(s, separator.end())
    if second is not None:
        if qualifier not in (None, "between"):
            raise _error(s, f"a range cannot also be {qualifier!r}")
        if second.multiplied and not first.multiplied:
            raise _error(s, "ambiguous range: write the K/M/B multiplier on both numbers")
        if _PLUS.match(s, second.end):
            raise _error(s, "a range cannot also be 'at least' ('+')")
        second_unit, pos = _read_unit(s, second)
        if unit and second_unit and unit != second_unit:
            raise _error(s, f"the range mixes units {unit!r} and {second_unit!r}")
        unit = unit or second_unit
        low, high = _to_float(s, first.number, unit), _to_float(s, second.number, unit)
        if low > high:
            raise _error(s, f"the range runs backwards ({first.digits} is above {second.digits})")
        return Figure(None, low, high, unit, "range", _context(s, pos), s)
    if qualifier == "between":
        raise _error(s, "'between' needs two numbers ('between 35 and 434')")
    value = _to_float(s, first.number, unit)
    return Figure(value, None, None, unit, qualifier, _context(s, pos), s)


def _format_number(value: float, unit: str | None) -> str:
    """Thousands separators and the fewest decimals that give back the same float (Python's
    shortest repr): 1753.0 -> '1,753', 0.35 -> '0.35'. US dollars keep at least two decimals."""
    number = Decimal(repr(value + 0.0)).normalize()  # + 0.0 turns -0.0 into 0.0
    if unit == "usd" and int(number.as_tuple().exponent) > -2:
        with localcontext(prec=100):
            number = number.quantize(Decimal("0.01"))
    return f"{number:,f}"


_UNIT_SUFFIX = {None: "", "t/s": " t/s", "s": " s", "ms": " ms", "models": " models", "usd": ""}
_QUALIFIER_PREFIX = {None: "", "approx": "~", "at_least": ">", "up_to": "up to "}


def _checked(figure: Figure, value: float | None, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FigureError(f"cannot format {figure!r}: {name} is {value!r}, not a finite number")
    if value < 0:
        raise FigureError(f"cannot format {figure!r}: {name} is negative")
    return float(value)


def format_figure(figure: Figure) -> str:
    """The canonical text of a figure: '~321 t/s', '>1,000 per user', 'up to 740 t/s on
    gpt-oss-120b', '35–434 t/s across models', '$0.35', '>100 models'. Numbers get thousands
    separators and the fewest decimals that give the value back ('1,753.0' is written '1,753');
    US dollars keep at least two decimals. At least is written '>', whether the source wrote
    '>1,000', 'over 1,000' or '1,000+'. A figure without a number is written as its text."""
    if figure.unit not in _UNIT_SUFFIX:
        raise FigureError(f"cannot format {figure!r}: unknown unit {figure.unit!r}")
    if figure.qualifier not in (*_QUALIFIER_PREFIX, "range"):
        raise FigureError(f"cannot format {figure!r}: unknown qualifier {figure.qualifier!r}")
    currency = "$" if figure.unit == "usd" else ""
    if figure.qualifier == "range":
        low = _checked(figure, figure.low, "low")
        high = _checked(figure, figure.high, "high")
        body = (
            f"{currency}{_format_number(low, figure.unit)}–"
            f"{currency}{_format_number(high, figure.unit)}"
        )
    elif figure.value is None and figure.qualifier is None and figure.text.strip():
        return " ".join(figure.text.split())
    else:
        value = _checked(figure, figure.value, "value")
        body = _QUALIFIER_PREFIX[figure.qualifier] + currency + _format_number(value, figure.unit)
    context = " ".join(figure.context.split()) if figure.context else ""
    return body + _UNIT_SUFFIX[figure.unit] + (f" {context}" if context else "")


def parse_count_statement(text: str) -> tuple[Figure | None, list[Figure]]:
    """A platform's stated model count: the main figure and the figures in parentheses.

    '100+ models' -> (at least 100 models, []); '1,900+ sold directly (11K+ incl. community)'
    -> (at least 1,900 'sold directly', [at least 11,000 'incl. community']). A statement that
    does not start with a number ('Hundreds of models', 'Multi-provider') is unquantified:
    (None, []), for the caller to keep as text. A parenthesis that does not start with a number
    stays part of the main figure's context. A statement that starts with a number but cannot
    be read ('2 and 3 models') raises FigureError."""
    s = _prepare(text)
    inner: list[str] = []

    def take(match: re.Match[str]) -> str:
        content = match.group(1).strip()
        if _FIGURE_START.match(content):
            inner.append(content)
            return " "
        return match.group(0)

    main = " ".join(_PARENTHESIS.sub(take, s).split())
    figure = parse_figure(main) if _FIGURE_START.match(main) else None
    return figure, [parse_figure(content) for content in inner]
