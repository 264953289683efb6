"""Geometry of the preview page's inline SVG charts: linear scales, round axis ticks, and
coordinates written short. Pure arithmetic, no markup: the templates draw what this computes.

Every value reaching a chart is checked to be a finite number first (`finite`): a NaN or an
infinity from a damaged file is left out of the drawing, never turned into a coordinate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

# 1, 2, 2.5 and 5 times a power of ten: steps people read without effort.
_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)


def finite(value: object) -> bool:
    """A real, finite number (not a bool, NaN or infinity)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def coordinate(value: float) -> str:
    """A coordinate in SVG user units, to a tenth: '12.5', '40', '-3.2'."""
    text = f"{value:.1f}"
    text = text[:-2] if text.endswith(".0") else text
    return "0" if text == "-0" else text


def nice_step(span: float, count: int) -> float:
    """The round step (1, 2, 2.5 or 5 times a power of ten) that cuts `span` into at most
    `count` intervals."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    return next(step * power for step in _STEPS if step * power >= raw * (1 - 1e-9))


@dataclass(frozen=True)
class Scale:
    """A linear map from a domain of values onto a range of SVG units (`end` may be smaller
    than `start`: a y axis grows upwards)."""

    low: float
    high: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        if self.high == self.low:
            return (self.start + self.end) / 2
        share = (value - self.low) / (self.high - self.low)
        return self.start + share * (self.end - self.start)

    def ticks(self, count: int = 4) -> list[float]:
        """Round values from low to high, `count` intervals at most."""
        step = nice_step(self.high - self.low, count)
        first = math.ceil(self.low / step - 1e-9)
        values = []
        index = first
        while index * step <= self.high * (1 + 1e-9) + 1e-12:
            values.append(round(index * step, 10))
            index += 1
        return values


@dataclass(frozen=True)
class LogScale:
    """A logarithmic map from a domain of positive values onto a range of SVG units: speeds
    and times that span orders of magnitude (20 t/s beside 2,000 t/s) all stay readable. A value
    at or below the domain's low end (a zero) is drawn at the low end."""

    low: float
    high: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        if self.high <= self.low:
            return (self.start + self.end) / 2
        value = min(max(value, self.low), self.high)
        share = math.log10(value / self.low) / math.log10(self.high / self.low)
        return self.start + share * (self.end - self.start)

    def ticks(self) -> list[float]:
        """Powers of ten within the domain, with 2 and 5 times them over two decades or less,
        and always both ends."""
        decades = math.log10(self.high / self.low)
        steps = (1.0, 2.0, 5.0) if decades <= 2 + 1e-9 else (1.0,)
        values = {self.low, self.high}
        power = 10.0 ** math.floor(math.log10(self.low))
        while power <= self.high * (1 + 1e-9):
            for step in steps:
                value = round(step * power, 12)
                if self.low * (1 - 1e-9) <= value <= self.high * (1 + 1e-9):
                    values.add(value)
            power *= 10
        return sorted(values)


def _round_down(value: float) -> float:
    """The largest 1, 2 or 5 times a power of ten at or below a positive value."""
    power = 10.0 ** math.floor(math.log10(value))
    return max(step * power for step in (1.0, 2.0, 5.0) if step * power <= value * (1 + 1e-9))


def _round_up(value: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten at or above a positive value."""
    power = 10.0 ** math.floor(math.log10(value))
    return min(step * power for step in (1.0, 2.0, 5.0, 10.0) if step * power >= value * (1 - 1e-9))


def log_domain(values: Iterable[float]) -> tuple[float, float]:
    """A domain for a LogScale: from a round value (1, 2 or 5 times a power of ten) at or below
    the smallest positive value to one at or above the largest; (1, 10) when nothing is
    positive, and one step each side of a single value."""
    positive = [v for v in values if finite(v) and v > 0]
    if not positive:
        return 1.0, 10.0
    low, high = _round_down(min(positive)), _round_up(max(positive))
    if high <= low:
        low, high = _round_down(low * 0.99), _round_up(high * 1.01)
    return low, high


def tick_label(value: float) -> str:
    """An axis label with no digit it does not need: '0', '20', '2,000', '0.5', '0.02'."""
    if value >= 1 or value == 0:
        return f"{value:,.0f}" if value == round(value) else f"{value:,.1f}"
    decimals = max(0, -math.floor(math.log10(value)))
    return f"{value:.{decimals}f}"


def spaced(positions: list[float], gap: float) -> list[int]:
    """Which of the ascending `positions` to label so that labels stay `gap` apart: the first
    and the last always, and each one between that has room."""
    if len(positions) <= 2:
        return list(range(len(positions)))
    kept = [0]
    for index in range(1, len(positions) - 1):
        here = positions[index]
        if here - positions[kept[-1]] >= gap and positions[-1] - here >= gap:
            kept.append(index)
    return [*kept, len(positions) - 1]


def zero_based(values: Iterable[float], count: int = 4) -> tuple[float, float]:
    """A domain from zero to a round value at or above the largest of `values`: how a
    magnitude is drawn honestly. (0, 1) when there is nothing positive to draw."""
    top = max((v for v in values if finite(v)), default=0.0)
    if top <= 0:
        return 0.0, 1.0
    step = nice_step(top, count)
    return 0.0, math.ceil(top / step - 1e-9) * step


def spread(values: Iterable[float]) -> tuple[float, float]:
    """The smallest and largest of `values` (a series' own range); (0, 0) for none."""
    kept = [v for v in values if finite(v)]
    return (min(kept), max(kept)) if kept else (0.0, 0.0)


def polyline(points: Iterable[tuple[float, float]]) -> str:
    """'x,y x,y ...' for an SVG polyline."""
    return " ".join(f"{coordinate(x)},{coordinate(y)}" for x, y in points)
