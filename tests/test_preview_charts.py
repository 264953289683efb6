"""The preview page's chart geometry (pipeline/release/chart_geometry.py) and the history it
draws (pipeline/release/preview_history.py), on small inputs: scales and ticks, and series read
from Parquet with repeated, revised, missing and non-finite figures, and damaged files."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.release.chart_geometry import (
    LogScale,
    Scale,
    coordinate,
    finite,
    log_domain,
    spaced,
    tick_label,
)
from pipeline.release.preview_history import (
    HISTORY_COLUMNS,
    HISTORY_DAYS,
    HISTORY_FILE,
    SNAPSHOTS_FILE,
    FigureHistory,
    HistoryUnreadable,
    read_history,
)

# --- geometry ---------------------------------------------------------------------------------


def test_finite_refuses_what_cannot_be_drawn():
    assert finite(0) and finite(0.0) and finite(2314.5)
    for value in (math.nan, math.inf, -math.inf, None, "12", True):
        assert not finite(value)


def test_log_domain_rounds_out_to_1_2_5_and_survives_odd_input():
    assert log_domain([24.0, 432.0, 1439.27]) == (20.0, 2000.0)
    assert log_domain([0.27, 6.663]) == (0.2, 10.0)
    assert log_domain([298.0]) == (200.0, 500.0)  # one value: a step each side
    assert log_domain([100.0]) == (50.0, 200.0)  # a round value: still a step each side
    assert log_domain([]) == (1.0, 10.0)
    assert log_domain([0.0, math.nan, math.inf, -3.0]) == (1.0, 10.0)  # nothing positive
    assert log_domain([0.0, 51.0]) == (50.0, 100.0)  # a zero is drawn at the low end


def test_log_scale_maps_and_clamps():
    scale = LogScale(10.0, 1000.0, 8.0, 212.0)
    assert scale(10.0) == 8.0 and scale(1000.0) == 212.0
    assert scale(100.0) == pytest.approx(110.0)
    assert scale(0.0) == 8.0 and scale(5000.0) == 212.0  # clamped, never a log of zero
    upward = LogScale(0.1, 10.0, 288.0, 14.0)  # a y axis
    assert upward(1.0) == pytest.approx(151.0)
    assert LogScale(10.0, 5000.0, 0, 100).ticks() == [10.0, 100.0, 1000.0, 5000.0]  # decades
    assert LogScale(10.0, 1000.0, 0, 100).ticks() == [10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
    assert LogScale(20.0, 500.0, 0, 100).ticks() == [20.0, 50.0, 100.0, 200.0, 500.0]


def test_linear_scale_and_labels():
    scale = Scale(0.0, 50.0, 40.0, 190.0)
    assert scale(25.0) == 115.0 and Scale(5.0, 5.0, 0.0, 10.0)(5.0) == 5.0  # a flat series
    assert scale.ticks(5) == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0]
    assert [tick_label(v) for v in (0.0, 0.02, 0.5, 1.0, 20.0, 2000.0)] == [
        "0",
        "0.02",
        "0.5",
        "1",
        "20",
        "2,000",
    ]
    assert [coordinate(v) for v in (12.0, 12.34, -0.01, 7.25)] == ["12", "12.3", "0", "7.2"]


def test_labels_that_would_touch_are_left_out_ends_kept():
    assert spaced([8.0, 70.0, 130.0, 150.0, 212.0], 26) == [0, 1, 2, 4]
    assert spaced([8.0, 200.0, 212.0], 26) == [0, 2]
    assert spaced([8.0], 26) == [0]


# --- history ------------------------------------------------------------------------------------

DAY = "daily throughput chart"
ROUTED = "percentiles of live routed traffic"
ENDPOINT = "baseten/gpt-oss-120b/fp4/standard/-~fp4"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def figure(**fields) -> dict:
    row = {
        "endpoint_id": ENDPOINT,
        "metric": "output_tokens_per_s",
        "method": DAY,
        "statistic": None,
        "window_minutes": 1440,
        "value": 100.0,
        "qualifier": None,
        "observed_at": at("2026-07-17T00:00:00"),
        "observed_at_bound": "exact",
        "stale": True,
        "suspect": False,
        "snapshot_id": "openrouter-frontend-stats/a",
    }
    return row | fields


def history_tables(rows: list[dict]) -> tuple[pa.Table, pa.Table]:
    schema = pa.schema(
        [
            ("endpoint_id", pa.string()),
            ("metric", pa.string()),
            ("method", pa.string()),
            ("statistic", pa.string()),
            ("window_minutes", pa.int64()),
            ("value", pa.float64()),
            ("qualifier", pa.string()),
            ("observed_at", pa.timestamp("us", tz="UTC")),
            ("observed_at_bound", pa.string()),
            ("stale", pa.bool_()),
            ("suspect", pa.bool_()),
            ("snapshot_id", pa.string()),
        ]
    )
    figures = pa.Table.from_pylist(rows, schema=schema)
    # the captures of the real corpus: 2026-07-17 23:33 and 2026-07-18 08:32
    snapshots = pa.Table.from_pylist(
        [
            {
                "snapshot_id": "openrouter-frontend-stats/a",
                "retrieved_at": at("2026-07-17T23:33:39"),
            },
            {
                "snapshot_id": "openrouter-frontend-stats/b",
                "retrieved_at": at("2026-07-18T08:32:31"),
            },
        ],
        schema=pa.schema(
            [("snapshot_id", pa.string()), ("retrieved_at", pa.timestamp("us", tz="UTC"))]
        ),
    )
    return figures, snapshots


def test_one_point_per_time_the_newest_capture_wins():
    """The daily chart repeats a day in every capture of its week and revises the day in
    progress: Baseten's 2026-07-17 was 228 t/s at 23:33 and 227 t/s at 08:32 the next day."""
    rows = [
        figure(value=228.0, snapshot_id="openrouter-frontend-stats/a"),
        figure(value=227.0, snapshot_id="openrouter-frontend-stats/b"),
        figure(value=183.0, observed_at=at("2026-07-10T00:00:00")),
        figure(
            value=282.0,
            observed_at=at("2026-07-18T00:00:00"),
            snapshot_id="openrouter-frontend-stats/b",
        ),
    ]
    series = FigureHistory.from_tables(*history_tables(rows)).series({ENDPOINT})
    points = series[(ENDPOINT, "output_tokens_per_s", DAY, None, 1440)]
    assert [(p.observed_at, p.value) for p in points] == [
        ("2026-07-10T00:00:00Z", 183.0),
        ("2026-07-17T00:00:00Z", 227.0),
        ("2026-07-18T00:00:00Z", 282.0),
    ]


def test_only_points_of_central_statistics_of_output_speed():
    rows = [
        figure(method=ROUTED, statistic="p50", window_minutes=30, value=214.0),
        figure(method=ROUTED, statistic="p99", window_minutes=30, value=1584.53),  # a tail
        figure(metric="ttft_s", method=ROUTED, statistic="p50", window_minutes=30, value=0.27),
        figure(value=math.nan, observed_at=at("2026-07-11T00:00:00")),
        figure(value=math.inf, observed_at=at("2026-07-12T00:00:00")),
        figure(value=None, observed_at=at("2026-07-13T00:00:00")),
        figure(qualifier="at_least", observed_at=at("2026-07-14T00:00:00")),  # a bound
        figure(qualifier="approx", value=0.0, observed_at=at("2026-07-15T00:00:00")),
        figure(endpoint_id="other/endpoint/unknown/standard/-", value=1.0),
    ]
    series = FigureHistory.from_tables(*history_tables(rows)).series({ENDPOINT})
    assert set(series) == {
        (ENDPOINT, "output_tokens_per_s", ROUTED, "p50", 30),
        (ENDPOINT, "output_tokens_per_s", DAY, None, 1440),
    }
    (zero,) = series[(ENDPOINT, "output_tokens_per_s", DAY, None, 1440)]
    assert (zero.value, zero.approx, zero.observed_at) == (0.0, True, "2026-07-15T00:00:00Z")
    assert FigureHistory.from_tables(*history_tables(rows)).series(set()) == {}


def write_release(folder: Path, rows: list[dict]) -> Path:
    figures, snapshots = history_tables(rows)
    (folder / HISTORY_FILE).parent.mkdir(parents=True)
    (folder / SNAPSHOTS_FILE).parent.mkdir(parents=True)
    pq.write_table(figures, folder / HISTORY_FILE)
    pq.write_table(snapshots, folder / SNAPSHOTS_FILE)
    return folder


def test_read_history_from_a_release_folder(tmp_path):
    release = write_release(
        tmp_path, [figure(value=183.0), figure(value=227.0, observed_at=at("2026-07-18T00:00:00"))]
    )
    history = read_history(release)
    assert history is not None
    assert [
        p.value
        for p in history.series({ENDPOINT})[(ENDPOINT, "output_tokens_per_s", DAY, None, 1440)]
    ] == [183.0, 227.0]


def test_a_release_without_history_has_none(tmp_path):
    assert read_history(tmp_path) is None  # a 1.x release, or one written before the history
    write_release(tmp_path, [figure()])
    (tmp_path / SNAPSHOTS_FILE).unlink()
    assert read_history(tmp_path) is None


def test_damaged_history_files_are_named(tmp_path):
    release = write_release(tmp_path, [figure()])
    (release / HISTORY_FILE).write_bytes(b"PAR1 not really")
    with pytest.raises(
        HistoryUnreadable, match=r"endpoint_figures\.parquet: not a readable Parquet"
    ):
        read_history(release)

    pq.write_table(pa.table({"endpoint_id": ["x"], "value": [1.0]}), release / HISTORY_FILE)
    with pytest.raises(HistoryUnreadable) as missing:
        read_history(release)
    assert "endpoint_figures.parquet: expected the columns" in str(missing.value)
    assert "missing metric, method, statistic" in str(missing.value)
    assert all(name in str(missing.value) for name in HISTORY_COLUMNS)


def test_a_column_of_another_type_is_named(tmp_path):
    release = write_release(tmp_path, [figure()])
    table = pq.read_table(release / HISTORY_FILE)
    bad = table.set_column(
        table.column_names.index("value"), "value", pa.array(["fast"], pa.string())
    )
    pq.write_table(bad, release / HISTORY_FILE)
    with pytest.raises(HistoryUnreadable, match=r"endpoint_figures\.parquet: a column holds"):
        read_history(release)
    # a column of nulls only (no statistic anywhere) is read as the strings it stands for
    nulls = table.set_column(
        table.column_names.index("statistic"), "statistic", pa.nulls(1, pa.null())
    )
    pq.write_table(nulls, release / HISTORY_FILE)
    history = read_history(release)
    assert history is not None and history.series({ENDPOINT})


def test_a_release_s_history_is_read_for_the_endpoints_drawn(tmp_path):
    """read_history reads a release's day files only when a series is asked for, and only its
    endpoints' rows: the same series as the whole history held in memory, across day files,
    with the newest capture winning across them."""
    other = "other/endpoint/unknown/standard/-"
    rows = [
        figure(value=228.0, snapshot_id="openrouter-frontend-stats/a"),
        figure(value=227.0, snapshot_id="openrouter-frontend-stats/b"),
        figure(value=183.0, observed_at=at("2026-07-10T00:00:00")),
        figure(method=ROUTED, statistic="p50", window_minutes=30, value=214.0),
        figure(endpoint_id=other, value=1.0),
        figure(endpoint_id=other, value=2.0, observed_at=at("2026-07-10T00:00:00")),
    ]
    figures, snapshots = history_tables(rows)
    days = tmp_path / HISTORY_DAYS
    days.mkdir(parents=True)
    (tmp_path / SNAPSHOTS_FILE).parent.mkdir(parents=True)
    pq.write_table(snapshots, tmp_path / SNAPSHOTS_FILE)
    for day, picked in (("2026-07-10", [2, 5]), ("2026-07-17", [0, 3, 4]), ("2026-07-18", [1])):
        pq.write_table(figures.take(picked), days / f"{day}.parquet")
    history = read_history(tmp_path)
    held = FigureHistory.from_tables(figures, snapshots)
    assert history is not None
    for wanted in ({ENDPOINT}, {other}, {ENDPOINT, other}):
        assert history.series(wanted) == held.series(wanted)
    series = history.series({ENDPOINT})
    assert {key[0] for key in series} == {ENDPOINT}
    daily = series[(ENDPOINT, "output_tokens_per_s", DAY, None, 1440)]
    assert [p.value for p in daily] == [183.0, 227.0]  # the newer capture, from another file
