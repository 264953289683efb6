"""`speedbook sql`: read-only queries on a built warehouse, three output formats, and refusals."""

import csv
import io
import json
import subprocess
import sys

import pytest
from conftest import lake_at

from pipeline.cli.sql import RefusedQuery, check_query
from pipeline.warehouse.connection import connect

# the leaderboard ranks within one variant, method and statistic: the probe medians' winner
FASTEST = (
    "SELECT model_id, provider_id, output_tokens_per_s FROM mart.leaderboard "
    "WHERE rank = 1 AND model_id = 'llama-3.3-70b-instruct' "
    "AND method = 'fixed-workload probe' AND statistic = 'median'"
)


@pytest.fixture
def sql(built, cli):
    def run(*args: str):
        return cli("sql", *args, "--warehouse", str(built.warehouse))

    return run


def test_json_csv_and_table_formats(sql):
    result = sql(FASTEST, "--format", "json")
    assert result.status == 0, result.err
    assert json.loads(result.out) == [
        {
            "model_id": "llama-3.3-70b-instruct",
            "provider_id": "cerebras",
            "output_tokens_per_s": 2314.0,
        }
    ]
    result = sql(FASTEST, "--format", "csv")
    assert list(csv.reader(io.StringIO(result.out))) == [
        ["model_id", "provider_id", "output_tokens_per_s"],
        ["llama-3.3-70b-instruct", "cerebras", "2314.0"],
    ]
    result = sql(FASTEST)
    lines = result.out.splitlines()
    assert lines[0].split() == ["model_id", "provider_id", "output_tokens_per_s"]
    assert lines[2].split() == ["llama-3.3-70b-instruct", "cerebras", "2,314.0"]
    assert lines[-1] == "(1 row)"


def test_lists_timestamps_and_nulls_come_out_as_json_values(sql):
    result = sql(
        "SELECT claim_sources, first_retrieved_at, live_value FROM mart.peak_vs_live "
        "WHERE claim_id = 'sambanova-llama-3-8b-1000'",
        "--format",
        "json",
    )
    (row,) = json.loads(result.out)
    assert row["claim_sources"] == [
        "tokendyno-fastest-llm-inference-2026",
        "venturebeat-sambanova-llama-3-8b",
    ]
    assert row["first_retrieved_at"] == "2026-06-28T00:00:00+00:00"
    assert row["live_value"] is None


@pytest.mark.parametrize(
    "query",
    [
        "DESCRIBE mart.leaderboard",
        "SHOW TABLES",
        "SUMMARIZE core.models",
        "PRAGMA table_info('mart.source_health')",
        "EXPLAIN SELECT * FROM mart.leaderboard",
        "FROM core.models LIMIT 1",
        "WITH t AS (SELECT 1 AS x) SELECT x FROM t;",
        # a PIVOT whose columns DuckDB looks up first is several statements to it (a MULTI)
        "PIVOT mart.leaderboard ON tier USING max(output_tokens_per_s) GROUP BY model_id",
        "/* pivot */ PIVOT (FROM core.models) ON model_id USING count(*); -- done",
        "WITH m AS (FROM core.models) PIVOT m ON model_id USING count(*)",
        "SELECT * FROM (PIVOT core.models ON model_id USING count(*))",
        "EXPLAIN PIVOT core.models ON model_id USING count(*)",
        "EXPLAIN (FORMAT json) PIVOT core.models ON model_id USING count(*)",
        "UNPIVOT (SELECT 1 AS a, 2 AS b) ON a, b INTO NAME k VALUE v",
        "VALUES (1, 'a'), (2, 'b')",
        "TABLE core.models",
        "SHOW ALL TABLES",
        "EXPLAIN SUMMARIZE core.models",
        "FROM core.models SELECT count(*)",
    ],
)
def test_reading_statements_run(sql, query):
    result = sql(query)
    assert result.status == 0, result.err
    assert result.out.strip()


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("DROP TABLE core.observations", "DROP statements are refused"),
        ("INSERT INTO core.models VALUES ('x', 'X', NULL)", "INSERT statements are refused"),
        ("ATTACH '/tmp/other.duckdb' AS other", "ATTACH statements are refused"),
        ("COPY core.models TO '/tmp/models.csv'", "COPY statements are refused"),
        ("INSTALL httpfs", "INSTALL statements are refused"),
        ("LOAD httpfs", "LOAD statements are refused"),
        ("SET threads = 1", "SET statements are refused"),
        ("PRAGMA threads = 1", "only the PRAGMAs that describe the schema"),
        ("UPDATE core.models SET name = 'x'", "UPDATE statements are refused"),
        ("CREATE TABLE t AS SELECT 1", "CREATE statements are refused"),
        ("SELECT 1; DROP TABLE core.models", "one statement at a time, got 2"),
        ("WITH x AS (SELECT 1) DELETE FROM core.models", "DELETE statements are refused"),
        ("EXPLAIN ANALYZE DELETE FROM core.models", "EXPLAIN ANALYZE runs the statement"),
        ("EXPLAIN DROP TABLE core.models", "DROP statements are refused"),
        ("CALL pragma_table_info('core.models')", "CALL statements are refused"),
        ("PRAGMA import_database('/tmp')", "only the PRAGMAs that describe the schema"),
        ("   ", "the query is empty"),
        ("SELEC 1", "not valid SQL"),
        # a write around a PIVOT is a MULTI too: refused by what it is, not let through
        ("CREATE TABLE t AS PIVOT core.models ON model_id", "CREATE statements are refused"),
        ("INSERT INTO core.models PIVOT core.models ON model_id", "INSERT statements are"),
        (
            "WITH m AS (FROM core.models) INSERT INTO core.models PIVOT m ON model_id",
            "this statement is not a query and is refused",
        ),
        ("COPY (PIVOT core.models ON model_id) TO '/tmp/p.csv'", "COPY statements are refused"),
        ("EXPLAIN CREATE TABLE t AS PIVOT core.models ON model_id", "CREATE statements are"),
        ("EXPLAIN (ANALYZE) SELECT 1", "EXPLAIN (ANALYZE) runs the statement"),
        ("EXPLAIN ANALYZE PIVOT core.models ON model_id", "EXPLAIN ANALYZE runs the statement"),
        ("SET VARIABLE x = (PIVOT core.models ON model_id)", "SET statements are refused"),
        # a write hidden after a ; or behind comments
        ("PIVOT core.models ON model_id; DROP TABLE core.models", "got 2 (PIVOT; DROP)"),
        ("SELECT 1; /* x */ DELETE FROM core.models -- y", "got 2 (SELECT; DELETE)"),
        ("SELECT 1 -- ; DROP TABLE core.models\n; DROP TABLE core.models", "got 2"),
        ("/* SELECT */ DROP TABLE core.models", "DROP statements are refused"),
        ("-- SELECT 1\nCHECKPOINT", "CHECKPOINT statements are refused"),
        ("/* x */ PRAGMA threads = 1", "only the PRAGMAs that describe the schema"),
    ],
)
def test_writing_and_other_statements_are_refused(sql, built, query, message):
    def models() -> int:
        with connect(built, read_only=True) as con:
            return con.execute("SELECT count(*) FROM core.models").fetchone()[0]

    before = models()
    result = sql(query)
    assert result.status == 2
    assert result.out == ""
    assert result.err.startswith("speedbook sql: error: refused: ")
    assert message in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert models() == before > 0  # nothing was lost


def test_files_and_urls_cannot_be_read(sql, tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    for query in (
        f"SELECT * FROM read_csv('{secret}')",
        f"FROM '{secret}'",
        "SELECT * FROM 'https://example.org/x.parquet'",
    ):
        result = sql(query)
        assert result.status == 2
        assert "disabled by configuration" in result.err


def test_a_failing_query_is_one_clear_line(sql):
    result = sql("SELECT * FROM mart.no_such_view")
    assert result.status == 2
    assert result.err.startswith("speedbook sql: error: Catalog Error: ")
    assert len(result.err.strip().splitlines()) == 1


def test_query_from_stdin(sql, monkeypatch):
    monkeypatch.setattr(
        sys, "stdin", io.StringIO("SELECT count(*) AS n FROM core.models WHERE reviewed\n")
    )
    result = sql("-", "--format", "json")
    assert json.loads(result.out) == [{"n": 15}]


def test_missing_warehouse_says_to_build(cli, tmp_path):
    result = cli("sql", "SELECT 1", "--warehouse", str(tmp_path / "nowhere"))
    assert result.status == 2
    assert "run `speedbook build` first" in result.err


def test_a_warehouse_being_written_answers_with_its_last_completed_build(cli, tmp_path):
    """A lake another process is writing (its transaction open) is read as its last commit."""
    with lake_at(tmp_path) as con:
        con.execute("CREATE SCHEMA core")
        con.execute("CREATE TABLE core.models AS SELECT 'a' AS model_id")
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pipeline.support.settings import Settings;"
            " from pipeline.warehouse.connection import connect;"
            " con = connect(Settings.resolve(warehouse=sys.argv[1])); con.execute('BEGIN');"
            " con.execute(\"INSERT INTO core.models VALUES ('b'), ('c')\");"
            " print('open', flush=True); time.sleep(60)",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "open"
        result = cli(
            "sql",
            "SELECT count(*) AS n FROM core.models",
            "--format",
            "json",
            "--warehouse",
            str(tmp_path),
        )
    finally:
        writer.kill()
        writer.wait()
    assert result.status == 0, result.err
    assert json.loads(result.out) == [{"n": 1}]


def test_a_refusal_never_names_a_query_as_what_it_refuses():
    """`speedbook sql` refused a PIVOT saying "SELECT statements are refused"."""
    refused = [
        "CREATE TABLE t AS PIVOT core.models ON model_id",
        "COPY (PIVOT core.models ON model_id) TO '/tmp/p.csv'",
        "WITH m AS (SELECT 1) INSERT INTO t PIVOT m ON x",
        "UPDATE EXTENSIONS",
        "VACUUM",
    ]
    queries = {"SELECT", "WITH", "FROM", "PIVOT", "VALUES", "TABLE", "DESCRIBE", "SHOW"}
    for text in refused:
        with pytest.raises(RefusedQuery) as error:
            check_query(text)
        named = str(error.value).split(" statements are refused", 1)[0]
        assert named not in queries, error.value


def test_check_query_uses_the_parser_not_keywords():
    # a keyword inside a string or a comment is not a statement
    check_query("SELECT 'DROP TABLE core.models' AS text -- INSERT")
    with pytest.raises(RefusedQuery):
        check_query("/* SELECT */ DROP TABLE core.models")


def test_a_reader_that_stops_early_ends_the_command_quietly(built):
    """`speedbook snapshot list | head -1` printed a BrokenPipeError traceback; every command
    ends quietly with the status a shell gives a command SIGPIPE stopped (141)."""
    query = ["sql", "SELECT * FROM range(200000)", "--format", "csv", "--max-rows", "200000"]
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", *query, "--warehouse", str(built.warehouse)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # what head does once it has its line: here before any is written
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141
    assert "Traceback" not in err and "BrokenPipe" not in err, err
