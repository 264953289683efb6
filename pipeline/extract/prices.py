"""Prices in one unit, USD per million tokens, whatever each source writes: OpenRouter per token
as strings ('0.00000007'), Cloudflare, models.dev and Artificial Analysis per million tokens as
numbers. Every parser converts through `usd_per_mtok`."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pipeline.extract.jsondoc import Failing, json_number

PER_TOKEN = 1
PER_MILLION_TOKENS = 1_000_000


def _per_million(number: float, per_tokens: int) -> float:
    if per_tokens == PER_MILLION_TOKENS:
        return number
    # In decimal, from the shortest repr of the float: '0.0000000679' per token is 0.0679 per
    # million exactly, not 0.06790000000000001.
    return float(Decimal(repr(number)) * PER_MILLION_TOKENS / per_tokens)


def usd_per_mtok(
    where: Failing, value: Any, what: str, *, per_tokens: int, variable: bool = False
) -> float | None:
    """`value`, a USD price for `per_tokens` tokens (a JSON number or a string holding one), as
    USD per million tokens; None for null. With `variable`, -1 means variable pricing (OpenRouter's
    routers): no price. A price that is not a finite number, or negative, is an error naming
    `what`."""
    if value is None:
        return None
    number = json_number(where, value, what)
    if variable and number == -1:
        return None
    if number < 0:
        expected = "a price or -1 for variable pricing" if variable else "a price of 0 or more"
        raise where.fail(f"{what} is negative: {value!r} (expected {expected})")
    return _per_million(number, per_tokens)
