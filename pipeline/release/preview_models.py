"""The per-model sections of the preview page: each model's endpoints, ranked as inference.json's
`rankings` rank them, with their figures drawn (templates/preview_models.html.jinja lays them
out).

One section per model with measured endpoints, the models with the most measured endpoints first.
Within a section, one group per method (scope, method, statistic and window of a ranking: the
central statistic of each method, p50 or median, or none where the source states none), and in a
group one table per ranking (a variant): figures of different methods, statistics or variants
are never ranked together, and a suspect figure is listed last without a rank, as the export
lists it. Each endpoint has

- a percentile strip per metric (output speed, time to first token): its central figure as a
  dot, ticks at the tails the source gives in the same snapshot (p75, p90, p95, p99), on an axis
  shared by the whole model section, so its endpoints line up across methods;
- a sparkline of the central figure's history where the release's Parquet has one (the daily
  throughput chart's series, the 30-minute p50 over the captures): preview_history.py;

and each group whose endpoints have both metrics a latency-against-throughput chart: one point
per endpoint (time to first token against output speed of the same snapshot, method and
statistic) with the curves t = ttft + n / speed through the endpoint that finishes an answer of
n = 100 and n = 1,000 tokens first.

Every text comes from the export (its `display` strings, formatting.py's labels); every chart has
its data in a table under it. Nothing here ranks: the rows keep the order of the export's
rankings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from pipeline.release.chart_geometry import (
    LogScale,
    Scale,
    coordinate,
    finite,
    log_domain,
    polyline,
    spaced,
    spread,
    tick_label,
)
from pipeline.release.contract.common import Variant
from pipeline.release.contract.inference import (
    EndpointFigure,
    ModelEndpoint,
    ModelRow,
    RankedEndpoint,
    Ranking,
)
from pipeline.release.formatting import (
    amount_text,
    date_text,
    digits,
    measurement_text,
    speed,
    variant_label,
    with_variant,
)
from pipeline.release.preview_history import FigureHistory, Point, SeriesKey
from pipeline.support.text import link_url

MODEL_SECTIONS_SHOWN = 8  # the models with the most measured endpoints; inference.json has all
SPEED, TTFT = "output_tokens_per_s", "ttft_s"
METRIC_NAMES = {SPEED: "output speed", TTFT: "time to first token"}
METRIC_UNITS = {SPEED: "t/s", TTFT: "s"}
# Statistics in the order a method's central one is chosen, then the tails drawn as ticks.
STATISTIC_ORDER: tuple[str | None, ...] = (None, "median", "p50", "p75", "p90", "p95", "p99")
TAILS = ("p75", "p90", "p95", "p99")
ANSWER_TOKENS = (100, 1000)

# Geometry, in SVG user units (CSS pixels at 100%).
STRIP_WIDTH, STRIP_HEIGHT, STRIP_PAD = 220, 22, 8
TICK_HALF = {"p75": 4, "p90": 6, "p95": 8, "p99": 10}  # the further the tail, the longer the tick
SPARK_WIDTH, SPARK_HEIGHT = 230, 36
SPARK_LEFT, SPARK_RIGHT, SPARK_TOP, SPARK_BOTTOM = 42, 186, 4, 20
PLOT_WIDTH, PLOT_HEIGHT = 640, 330
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 56, 480, 14, 288
CURVE_SAMPLES = 40
AXIS_LABEL_GAP = 26  # room for a label such as '1,000' at 9px

FigureKey = tuple[str, str, str | None, str | None, int | None]  # metric, scope, method, stat, win


# --- view models -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Credit:
    """'Data: Artificial Analysis', linked: what a source's terms require where it is shown."""

    publisher: str
    url: str | None


@dataclass(frozen=True)
class AxisTick:
    at: str  # the coordinate
    label: str


@dataclass(frozen=True)
class Axis:
    """The axis of one metric, shared by every strip of a model section."""

    metric: str
    name: str  # 'output speed'
    unit: str
    low: float
    high: float
    ticks: list[AxisTick]


@dataclass(frozen=True)
class Mark:
    """A figure on a strip: the central one (a dot) or a tail (a tick)."""

    statistic: str  # 'p50'; 'value' for a figure whose source states no statistic
    value: float
    text: str  # '298 t/s', '~2,314 t/s'
    x: str
    top: str
    bottom: str


@dataclass(frozen=True)
class Strip:
    id: str
    metric: str
    title: str
    desc: str
    center: Mark
    ticks: list[Mark]
    spread: tuple[str, str]  # the line from the smallest to the largest mark
    stale: bool
    suspect: bool


@dataclass(frozen=True)
class Sparkline:
    id: str
    title: str
    desc: str
    line: str  # polyline points
    ends: tuple[tuple[str, str], tuple[str, str]]  # (x, y) of the first and the last point
    first_value: str
    last_value: str
    first_at: str
    last_at: str
    count: int


@dataclass(frozen=True)
class StatCell:
    statistic: str
    text: str | None


@dataclass(frozen=True)
class MetricRow:
    """One line of a group's data table: an endpoint's figures of one metric."""

    metric: str
    cells: list[StatCell]
    day: str  # 'stale, as of 2026-07-18'


@dataclass(frozen=True)
class EndpointRow:
    rank: int | None
    endpoint: str
    label: str  # 'Baseten (FP4)'
    display: str  # the ranked figure as the export writes it
    stale: bool
    suspect: bool
    speed: Strip | None
    ttft: Strip | None
    history: Sparkline | None
    history_size: int  # points in the history (one point draws no sparkline)
    history_cells: list[str | None]  # its value at each of the group's history_at, if any
    figures: list[MetricRow]


@dataclass(frozen=True)
class RankingView:
    variant: str  # 'FP4', 'Turbo, BF16'; 'precision not stated' for the plain variant
    rows: list[EndpointRow]


@dataclass(frozen=True)
class ScatterPoint:
    number: int
    label: str
    x: str
    y: str
    speed: str
    ttft: str
    finish: list[str | None]  # seconds to each of ANSWER_TOKENS
    stale: bool
    suspect: bool


@dataclass(frozen=True)
class Curve:
    tokens: str  # '100', '1,000'
    seconds: str
    label: str  # who finishes first: the endpoint's label
    number: int
    line: str
    label_x: str
    label_y: str
    style: str  # short or long: dashes a reader tells apart without colour


@dataclass(frozen=True)
class Scatter:
    id: str
    title: str
    desc: str
    x_ticks: list[AxisTick]
    y_ticks: list[AxisTick]
    points: list[ScatterPoint]
    curves: list[Curve]


@dataclass(frozen=True)
class MethodView:
    id: str
    measurement: str  # 'routed traffic p50, 30 min'
    method: str
    statistic: str | None
    window: int | None
    statistics: list[str]  # the data table's columns: the central statistic, then the tails
    history: str | None  # what the sparklines show, when any row has one
    history_at: list[str]  # the times of the history table's columns
    has_ttft: bool
    rankings: list[RankingView]
    rules: list[str]
    scatter: Scatter | None
    entries: int


@dataclass(frozen=True)
class ModelSection:
    number: int
    id: str
    name: str
    reviewed: bool
    measured: int  # endpoints with at least one figure
    endpoints: int
    speed_axis: Axis
    ttft_axis: Axis | None
    methods: list[MethodView]
    credits: list[Credit]


@dataclass(frozen=True)
class ModelSections:
    sections: list[ModelSection]
    more: int  # models with measured endpoints not shown
    history: bool  # the release has a history to draw


# --- building them ---------------------------------------------------------------------------


def _statistic_rank(statistic: str | None) -> int:
    return STATISTIC_ORDER.index(statistic) if statistic in STATISTIC_ORDER else len(TAILS) + 3


def _figure_key(figure: EndpointFigure) -> FigureKey:
    return (figure.metric, figure.scope, figure.method, figure.statistic, figure.window_minutes)


def _index(endpoint: ModelEndpoint) -> dict[FigureKey, EndpointFigure]:
    return {_figure_key(f): f for f in endpoint.figures}


@dataclass(frozen=True)
class _Group:
    scope: str
    method: str
    statistic: str | None
    window: int | None
    rankings: list[Ranking]

    def key(self, metric: str, statistic: str | None = None) -> FigureKey:
        chosen = self.statistic if statistic is None else statistic
        return (metric, self.scope, self.method, chosen, self.window)


def _groups(model: ModelRow) -> list[_Group]:
    """The model's rankings of the central statistic of each method, grouped by method."""
    central: dict[tuple[str, str, int | None], str | None] = {}
    for ranking in model.rankings:
        where = (ranking.scope, ranking.method, ranking.window_minutes)
        if where not in central or _statistic_rank(ranking.statistic) < _statistic_rank(
            central[where]
        ):
            central[where] = ranking.statistic
    groups = [
        _Group(
            scope,
            method,
            statistic,
            window,
            [
                r
                for r in model.rankings
                if (r.scope, r.method, r.window_minutes, r.statistic)
                == (scope, method, window, statistic)
            ],
        )
        for (scope, method, window), statistic in central.items()
    ]
    for group in groups:
        group.rankings.sort(key=lambda r: (-len(r.entries), _ranking_variant(r)))
    return sorted(groups, key=lambda g: measurement_text(g.method, g.statistic, g.window))


def _ranking_variant(ranking: Ranking) -> str:
    variant = Variant(
        precision=ranking.precision,
        service_tier=ranking.service_tier,
        reasoning_effort=ranking.reasoning_effort,
        region=ranking.region,
        key=None,
    )
    return variant_label(variant) or "precision not stated"


def _short(figure: EndpointFigure) -> str:
    """'298 t/s', '~1.586 s': the amount with its unit only (a table's column names the metric)."""
    return amount_text(figure.value, figure.low, figure.high, figure.qualifier, "", figure.unit)


def _axis(metric: str, values: Iterable[float]) -> Axis:
    low, high = log_domain(values)
    scale = LogScale(low, high, STRIP_PAD, STRIP_WIDTH - STRIP_PAD)
    return Axis(
        metric=metric,
        name=METRIC_NAMES[metric],
        unit=METRIC_UNITS[metric],
        low=low,
        high=high,
        ticks=_ticks(scale, AXIS_LABEL_GAP),
    )


def _ticks(scale: LogScale, gap: float) -> list[AxisTick]:
    """The scale's round values that have room for a label, where they fall."""
    values = scale.ticks()
    positions = [scale(v) for v in values]
    if scale.end < scale.start:  # a y axis: positions fall as values rise
        positions = [-p for p in positions]
    return [
        AxisTick(coordinate(scale(values[i])), tick_label(values[i]))
        for i in spaced(positions, gap)
    ]


def _strip_marks(
    figures: Mapping[FigureKey, EndpointFigure], group: _Group, metric: str
) -> tuple[EndpointFigure, list[EndpointFigure]] | None:
    """The central figure of a metric and the tails of the same snapshot, or None."""
    central = figures.get(group.key(metric))
    if central is None or not finite(central.value):
        return None
    tails = []
    for statistic in TAILS:
        if statistic == group.statistic:
            continue
        tail = figures.get(group.key(metric, statistic))
        if tail is not None and finite(tail.value) and tail.snapshot == central.snapshot:
            tails.append(tail)
    return central, tails


def _mark(figure: EndpointFigure, scale: LogScale, half: int) -> Mark:
    x = coordinate(scale(float(figure.value)))  # type: ignore[arg-type]
    middle = STRIP_HEIGHT / 2
    return Mark(
        statistic=figure.statistic or "value",
        value=float(figure.value),  # type: ignore[arg-type]
        text=_short(figure),
        x=x,
        top=coordinate(middle - half),
        bottom=coordinate(middle + half),
    )


def _strip(
    ident: str,
    label: str,
    marks: tuple[EndpointFigure, list[EndpointFigure]] | None,
    axis: Axis | None,
    measurement: str,
) -> Strip | None:
    if marks is None or axis is None:
        return None
    central, tails = marks
    scale = LogScale(axis.low, axis.high, STRIP_PAD, STRIP_WIDTH - STRIP_PAD)
    center = _mark(central, scale, 0)
    ticks = [_mark(t, scale, TICK_HALF[t.statistic or "p75"]) for t in tails]
    xs = [float(m.x) for m in (center, *ticks)]
    flags = [word for word, on in (("stale", central.stale), ("suspect", central.suspect)) if on]
    return Strip(
        id=ident,
        metric=central.metric,
        title=f"{label}: {METRIC_NAMES[central.metric]}, {measurement}",
        desc=", ".join([*(f"{m.statistic} {m.text}" for m in (center, *ticks)), *flags]),
        center=center,
        ticks=ticks,
        spread=(coordinate(min(xs)), coordinate(max(xs))),
        stale=central.stale,
        suspect=central.suspect,
    )


def _when(point: Point, sub_daily: bool) -> str:
    """'2026-07-18 08:32 UTC' for a series finer than a day, else '2026-07-18'; ' or later'
    when the time is a lower bound (formatting.date_text's words)."""
    text = date_text(point.observed_at, point.bound, False).removeprefix("as of ")
    if sub_daily:
        time = point.observed_at[11:16]
        text = text.replace(point.observed_at[:10], f"{point.observed_at[:10]} {time} UTC", 1)
    return text


def _short_when(point: Point, sub_daily: bool) -> str:
    """The label at a sparkline's end: '07-18 08:32' or '2026-07-18' (the full time is in its
    title and table)."""
    text = (
        f"{point.observed_at[5:10]} {point.observed_at[11:16]}"
        if sub_daily
        else (point.observed_at[:10])
    )
    return f"{text} or later" if point.bound == "lower_bound" else text


def _point_text(point: Point) -> str:
    return ("~" if point.approx else "") + digits(point.value)


def _sparkline(
    ident: str,
    label: str,
    series: list[Point],
    measurement: str,
    span: tuple[float, float],
    sub_daily: bool,
) -> Sparkline | None:
    if len(series) < 2:
        return None
    times = [_seconds(p.observed_at) for p in series]
    low, high = spread(p.value for p in series)
    xs = Scale(span[0], span[1], SPARK_LEFT, SPARK_RIGHT)
    ys = Scale(low, high, SPARK_BOTTOM, SPARK_TOP)
    coords = [(xs(t), ys(p.value)) for t, p in zip(times, series, strict=True)]
    first, last = series[0], series[-1]
    return Sparkline(
        id=ident,
        title=f"{label}: {METRIC_NAMES[SPEED]} over time, {measurement}",
        desc=(
            f"{len(series)} figures, from {_point_text(first)} t/s on {_when(first, sub_daily)} "
            f"to {_point_text(last)} t/s on {_when(last, sub_daily)}; lowest {digits(low)} t/s, "
            f"highest {digits(high)} t/s"
        ),
        line=polyline(coords),
        ends=(
            (coordinate(coords[0][0]), coordinate(coords[0][1])),
            (coordinate(coords[-1][0]), coordinate(coords[-1][1])),
        ),
        first_value=_point_text(first),
        last_value=_point_text(last),
        first_at=_short_when(first, sub_daily),
        last_at=_short_when(last, sub_daily),
        count=len(series),
    )


def _seconds(observed_at: str) -> float:
    """Seconds since the epoch of an export time (2026-07-18T08:32:31Z), for x positions."""
    return datetime.strptime(observed_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def _metric_row(
    figures: Mapping[FigureKey, EndpointFigure], group: _Group, metric: str, statistics: list[str]
) -> MetricRow | None:
    central = figures.get(group.key(metric))
    if central is None:
        return None
    cells = []
    for statistic in statistics:
        figure = figures.get(group.key(metric, None if statistic == "value" else statistic))
        same = figure is not None and figure.snapshot == central.snapshot
        cells.append(StatCell(statistic, _short(figure) if figure and same else None))
    return MetricRow(
        metric=METRIC_NAMES[metric],
        cells=cells,
        day=date_text(central.observed_at, central.observed_at_bound, central.stale)
        + (" · suspect" if central.suspect else ""),
    )


def _finish(speed_value: float, ttft: float, tokens: int) -> float | None:
    """Seconds to the last of `tokens` output tokens: t = ttft + tokens / speed."""
    return ttft + tokens / speed_value if speed_value > 0 else None


@dataclass(frozen=True)
class _Pair:
    label: str
    speed: EndpointFigure
    ttft: EndpointFigure


def _scatter(ident: str, model: str, measurement: str, pairs: list[_Pair]) -> Scatter | None:
    if not pairs:
        return None
    speeds = [float(p.speed.value) for p in pairs]  # type: ignore[arg-type]
    ttfts = [float(p.ttft.value) for p in pairs]  # type: ignore[arg-type]
    xs = LogScale(*log_domain(speeds), PLOT_LEFT, PLOT_RIGHT)
    ys = LogScale(*log_domain(ttfts), PLOT_BOTTOM, PLOT_TOP)
    points = []
    for number, (pair, s, t) in enumerate(zip(pairs, speeds, ttfts, strict=True), start=1):
        finish = [_finish(s, t, n) for n in ANSWER_TOKENS]
        points.append(
            ScatterPoint(
                number=number,
                label=pair.label,
                x=coordinate(xs(s)),
                y=coordinate(ys(t)),
                speed=_short(pair.speed),
                ttft=_short(pair.ttft),
                finish=[f"{speed(f)} s" if f is not None else None for f in finish],
                stale=pair.speed.stale or pair.ttft.stale,
                suspect=pair.speed.suspect or pair.ttft.suspect,
            )
        )
    curves = []
    for index, tokens in enumerate(ANSWER_TOKENS):
        eligible = [
            (point.stale, f, point)
            for point, s, t in zip(points, speeds, ttfts, strict=True)
            if not point.suspect and (f := _finish(s, t, tokens)) is not None
        ]
        if not eligible:
            continue
        # fresh figures before stale ones, as the rankings order them; then the first to finish
        _, seconds, first = min(eligible, key=lambda item: (item[0], item[1], item[2].number))
        curves.append(_curve(tokens, seconds, first, xs, ys, index))
    curves = _spread_labels(curves)
    firsts = " ".join(
        f"First to {c.tokens} tokens: {c.label} (point {c.number}), {c.seconds}." for c in curves
    )
    return Scatter(
        id=ident,
        title=f"{model}: time to first token against output speed, {measurement}",
        desc=(
            f"{len(points)} endpoints; lower right finishes sooner. Curves: the time to 100 and "
            f"to 1,000 output tokens, t = time to first token + tokens / output speed. {firsts}"
        ),
        x_ticks=_ticks(xs, AXIS_LABEL_GAP),
        y_ticks=_ticks(ys, 14),
        points=points,
        curves=curves,
    )


def _curve(
    tokens: int, seconds: float, first: ScatterPoint, xs: LogScale, ys: LogScale, index: int
) -> Curve:
    """The points (speed, ttft) that finish `tokens` tokens in `seconds`: ttft = seconds -
    tokens / speed, drawn from where it enters the plot (at its top or its bottom edge) to its
    right edge."""
    start = xs.low
    for edge in (ys.low, ys.high):
        if seconds > edge:
            start = max(start, tokens / (seconds - edge))
    start = min(start, xs.high)
    samples = []
    for step in range(CURVE_SAMPLES + 1):
        # evenly spaced on the logarithmic axis
        speed_at = start * (xs.high / start) ** (step / CURVE_SAMPLES)
        samples.append((xs(speed_at), ys(seconds - tokens / speed_at)))
    end_x, end_y = samples[-1]
    return Curve(
        tokens=f"{tokens:,}",
        seconds=f"{speed(seconds)} s",
        label=first.label,
        number=first.number,
        line=polyline(samples),
        label_x=coordinate(end_x + 6),
        label_y=coordinate(end_y + 3),
        style="short" if index == 0 else "long",
    )


def _spread_labels(curves: list[Curve]) -> list[Curve]:
    """Keep two curve labels at the plot's right edge at least a line apart."""
    if len(curves) != 2 or abs(float(curves[0].label_y) - float(curves[1].label_y)) >= 12:
        return curves
    upper, lower = sorted(curves, key=lambda c: float(c.label_y))
    moved = replace(upper, label_y=coordinate(float(lower.label_y) - 12))
    return [moved if c is upper else c for c in curves]


def _credits(figures: Iterable[EndpointFigure]) -> list[Credit]:
    found = {
        (f.attribution.publisher, f.attribution.url) for f in figures if f.attribution is not None
    }
    return [Credit(publisher, link_url(url)) for publisher, url in sorted(found)]


def measured(model: ModelRow) -> int:
    return sum(1 for endpoint in model.endpoints if endpoint.figures)


def _section(number: int, model: ModelRow, series: Mapping[SeriesKey, list[Point]]) -> ModelSection:
    endpoints = {e.id: e for e in model.endpoints}
    figures = {e.id: _index(e) for e in model.endpoints}
    groups = _groups(model)
    speed_values: list[float] = []
    ttft_values: list[float] = []
    shown: list[EndpointFigure] = []
    for group in groups:
        for ranking in group.rankings:
            for entry in ranking.entries:
                for metric, values in ((SPEED, speed_values), (TTFT, ttft_values)):
                    marks = _strip_marks(figures.get(entry.endpoint, {}), group, metric)
                    if marks:
                        values.extend(float(f.value) for f in (marks[0], *marks[1]))  # type: ignore[arg-type]
                        shown.append(marks[0])
    speed_axis = _axis(SPEED, speed_values)
    ttft_axis = _axis(TTFT, ttft_values) if ttft_values else None
    methods = [
        _method(f"m{number}-{g_no}", model, g, endpoints, figures, series, speed_axis, ttft_axis)
        for g_no, g in enumerate(groups, start=1)
    ]
    # the most endpoints first; of as many, the method whose source gives the most statistics
    methods.sort(key=lambda m: (-m.entries, -len(m.statistics), m.measurement))
    return ModelSection(
        number=number,
        id=f"model-{number}",
        name=model.name,
        reviewed=model.reviewed,
        measured=measured(model),
        endpoints=len(model.endpoints),
        speed_axis=speed_axis,
        ttft_axis=ttft_axis,
        methods=methods,
        credits=_credits(shown),
    )


def _label(entry: RankedEndpoint, endpoint: ModelEndpoint | None) -> str:
    if endpoint is None:
        return entry.endpoint
    return with_variant(endpoint.provider.name, endpoint.variant)


def _method(
    ident: str,
    model: ModelRow,
    group: _Group,
    endpoints: Mapping[str, ModelEndpoint],
    figures: Mapping[str, Mapping[FigureKey, EndpointFigure]],
    series: Mapping[SeriesKey, list[Point]],
    speed_axis: Axis,
    ttft_axis: Axis | None,
) -> MethodView:
    measurement = measurement_text(group.method, group.statistic, group.window)
    sub_daily = group.window is not None and group.window < 1440
    keys = {
        entry.endpoint: (entry.endpoint, SPEED, group.method, group.statistic, group.window)
        for ranking in group.rankings
        for entry in ranking.entries
    }
    moments = {
        p.observed_at: _when(p, sub_daily) for key in keys.values() for p in series.get(key, [])
    }
    history_at = sorted(moments)
    times = [_seconds(moment) for moment in history_at]
    span = (times[0], times[-1]) if times else (0.0, 0.0)
    present = {
        s
        for e in keys
        for (metric, scope, method, s, window) in figures.get(e, {})
        if (scope, method, window) == (group.scope, group.method, group.window)
        and metric in (SPEED, TTFT)
    }
    statistics = [group.statistic or "value"] + [
        s for s in TAILS if s in present and s != group.statistic
    ]
    rankings, pairs = [], []
    row_no = 0
    for ranking in group.rankings:
        rows = []
        for entry in ranking.entries:
            row_no += 1
            own = figures.get(entry.endpoint, {})
            endpoint = endpoints.get(entry.endpoint)
            label = _label(entry, endpoint)
            speed_marks = _strip_marks(own, group, SPEED)
            ttft_marks = _strip_marks(own, group, TTFT)
            history = series.get(keys[entry.endpoint], [])
            rows.append(
                EndpointRow(
                    rank=entry.rank,
                    endpoint=entry.endpoint,
                    label=label,
                    display=entry.display,
                    stale=entry.stale,
                    suspect=entry.suspect,
                    speed=_strip(f"{ident}-{row_no}s", label, speed_marks, speed_axis, measurement),
                    ttft=_strip(f"{ident}-{row_no}t", label, ttft_marks, ttft_axis, measurement),
                    history=_sparkline(
                        f"{ident}-{row_no}h", label, history, measurement, span, sub_daily
                    ),
                    history_size=len(history),
                    history_cells=_cells(history, history_at),
                    figures=[
                        row
                        for metric in (SPEED, TTFT)
                        if (row := _metric_row(own, group, metric, statistics)) is not None
                    ],
                )
            )
            if speed_marks and ttft_marks and speed_marks[0].snapshot == ttft_marks[0].snapshot:
                pairs.append(_Pair(label, speed_marks[0], ttft_marks[0]))
        rankings.append(RankingView(_ranking_variant(ranking), rows))
    drawn = any(row.history for ranking in rankings for row in ranking.rows)
    return MethodView(
        id=ident,
        measurement=measurement,
        method=group.method,
        statistic=group.statistic,
        window=group.window,
        statistics=statistics,
        history=_history_name(group, measurement) if drawn else None,
        history_at=[moments[moment] for moment in history_at],
        has_ttft=any(row.ttft for ranking in rankings for row in ranking.rows),
        rankings=rankings,
        rules=sorted({r.rule for r in group.rankings}),
        scatter=_scatter(f"{ident}-x", model.name, measurement, pairs),
        entries=row_no,
    )


def _cells(series: list[Point], moments: list[str]) -> list[str | None]:
    """A series' values at each of the given times (None where it has none); [] for none."""
    if not series:
        return []
    at = {p.observed_at: _point_text(p) for p in series}
    return [at.get(moment) for moment in moments]


def _history_name(group: _Group, measurement: str) -> str:
    """What a group's sparklines show: 'routed traffic p50, 30 min, in each snapshot', or the
    daily chart's 'one figure a day'."""
    if group.method == "daily throughput chart":
        return f"{measurement}: one figure a day, as the chart gives it"
    return f"{measurement}, in each snapshot"


def model_sections(
    models: list[ModelRow], history: FigureHistory | None, shown: int = MODEL_SECTIONS_SHOWN
) -> ModelSections:
    """The sections of the models with measured endpoints, the most measured first."""
    candidates = sorted(
        (m for m in models if measured(m)), key=lambda m: (-measured(m), m.name, m.id)
    )
    chosen = candidates[:shown]
    wanted = {e.id for m in chosen for e in m.endpoints if e.figures}
    series = history.series(wanted) if history is not None else {}
    return ModelSections(
        sections=[_section(n, m, series) for n, m in enumerate(chosen, start=1)],
        more=len(candidates) - len(chosen),
        history=history is not None,
    )


__all__ = ["MODEL_SECTIONS_SHOWN", "Credit", "ModelSections", "model_sections"]
