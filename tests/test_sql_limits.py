"""`speedbook sql` limits: a timeout, a memory limit and a row limit on the table format, and
refusals that name the statement refused."""

import csv
import io
import json
import time

import pytest

from pipeline.cli import build_parser

ENDLESS = "SELECT count(*) FROM range(1000000000000)"


@pytest.fixture
def sql(built, cli):
    def run(*args: str):
        return cli("sql", *args, "--warehouse", str(built.warehouse))

    return run


def test_the_defaults_are_a_minute_a_gigabyte_and_a_thousand_rows():
    args = build_parser().parse_args(["sql", "SELECT 1"])
    assert (args.timeout, args.memory_limit, args.max_rows) == (60.0, "1GB", 1000)


@pytest.mark.timeout(30, func_only=True)
def test_an_endless_query_stops_at_the_timeout_with_one_line(sql):
    started = time.monotonic()
    result = sql(ENDLESS, "--timeout", "1")
    elapsed = time.monotonic() - started
    assert result.status == 2
    assert result.out == ""
    assert result.err.strip() == (
        "speedbook sql: error: the query ran longer than 1 s and was stopped "
        "(raise the limit with --timeout SECONDS)"
    )
    assert elapsed < 10


@pytest.mark.timeout(30, func_only=True)
def test_the_timeout_also_covers_fetching_the_rows(sql):
    # the result streams: the time is spent while rows are fetched, not in execute()
    result = sql("SELECT range FROM range(1000000000000)", "--timeout", "1", "--format", "csv")
    assert result.status == 2
    assert "ran longer than 1 s" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_a_quick_query_is_not_cut_by_the_timer(sql):
    result = sql("SELECT 42 AS answer", "--timeout", "0.5", "--format", "json")
    assert result.status == 0, result.err
    assert json.loads(result.out) == [{"answer": 42}]


def test_the_memory_limit_is_set_and_cannot_be_changed_by_the_query(sql):
    result = sql("SELECT current_setting('memory_limit') AS m", "--format", "json")
    assert json.loads(result.out) == [{"m": "953.6 MiB"}]  # 1 GB, as DuckDB spells it
    result = sql("SELECT current_setting('memory_limit') AS m", "--memory-limit", "200MB")
    assert "190.7 MiB" in result.out
    result = sql("SET memory_limit = '8GB'")
    assert result.status == 2 and "refused" in result.err


@pytest.mark.timeout(60)
def test_a_query_over_the_memory_limit_fails_with_one_line(sql):
    result = sql(
        "SELECT max(len(x)) FROM (SELECT list(range) AS x FROM range(100000000))",
        "--memory-limit",
        "100MB",
    )
    assert result.status == 2
    assert result.err.startswith("speedbook sql: error: Out of Memory Error: ")
    assert result.err.rstrip().endswith("(the limit is --memory-limit 100MB)")
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize("value", ["lots", "0", "-1GB", "1 GB; DROP", "100XB"])
def test_a_bad_memory_limit_is_a_usage_error(cli, built, value):
    result = cli("sql", "SELECT 1", "--memory-limit", value, "--warehouse", str(built.warehouse))
    assert result.status == 2
    assert "--memory-limit" in result.err


@pytest.mark.parametrize("option", ["--timeout", "--max-rows"])
@pytest.mark.parametrize("value", ["0", "-3", "nan", "inf", "x"])
def test_bad_timeouts_and_row_limits_are_usage_errors(cli, built, option, value):
    result = cli("sql", "SELECT 1", option, value, "--warehouse", str(built.warehouse))
    assert result.status == 2
    assert option in result.err


def test_the_table_shows_the_first_rows_and_says_how_many_there_are(sql):
    result = sql("SELECT range AS n FROM range(2500)")
    assert result.status == 0, result.err
    lines = result.out.splitlines()
    assert lines[-1] == "(showing 1,000 of 2,500 rows; use --format csv for all)"
    assert lines[2].strip() == "0" and lines[-2].strip() == "999"
    assert len(lines) == 2 + 1000 + 1

    result = sql("SELECT range AS n FROM range(2500)", "--max-rows", "3")
    assert result.out.splitlines()[-1] == "(showing 3 of 2,500 rows; use --format csv for all)"
    result = sql("SELECT range AS n FROM range(3)", "--max-rows", "3")
    assert result.out.splitlines()[-1] == "(3 rows)"


def test_csv_and_json_print_every_row(sql):
    result = sql("SELECT range AS n FROM range(2500)", "--format", "csv")
    rows = list(csv.reader(io.StringIO(result.out)))
    assert rows[0] == ["n"] and len(rows) == 2501 and rows[-1] == ["2499"]
    result = sql("SELECT range AS n FROM range(2500)", "--format", "json", "--max-rows", "5")
    assert [record["n"] for record in json.loads(result.out)] == list(range(2500))
    result = sql("SELECT 1 AS n WHERE false", "--format", "json")
    assert json.loads(result.out) == []


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("INSTALL httpfs", "INSTALL statements are refused"),
        ("FORCE INSTALL httpfs", "FORCE INSTALL statements are refused"),
        ("LOAD httpfs", "LOAD statements are refused"),
        ("ANALYZE", "ANALYZE statements are refused"),
        ("VACUUM", "VACUUM statements are refused"),
        ("CHECKPOINT", "CHECKPOINT statements are refused"),
        ("FORCE CHECKPOINT", "FORCE CHECKPOINT statements are refused"),
        ("/* a comment */ CHECKPOINT", "CHECKPOINT statements are refused"),
        ("CALL pragma_table_info('core.models')", "CALL statements are refused"),
        ("TRUNCATE core.models", "TRUNCATE statements are refused"),
        ("USE memory", "USE statements are refused"),
        ("RESET threads", "RESET statements are refused"),
        ("DEALLOCATE p", "DEALLOCATE statements are refused"),
        ("COMMENT ON TABLE core.models IS 'x'", "COMMENT statements are refused"),
        ("IMPORT DATABASE '/tmp/x'", "IMPORT statements are refused"),
        ("UPDATE EXTENSIONS", "UPDATE statements are refused"),
        ("WITH x AS (SELECT 1) DELETE FROM core.models", "DELETE statements are refused"),
        ("PRAGMA threads = 1", "only the PRAGMAs that describe the schema"),
    ],
)
def test_refusals_name_the_statement_refused(sql, query, message):
    result = sql(query)
    assert result.status == 2
    assert result.err.startswith("speedbook sql: error: refused: ")
    assert message in result.err
    assert len(result.err.strip().splitlines()) == 1
