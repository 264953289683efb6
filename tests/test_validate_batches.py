"""Core validation in bounded memory: one scan of the rows, a chunk of them at a time (a query per
run of snapshots read the whole table once per run: hours at 90 days of polls)."""

import duckdb
import pandera.pandas as pa
import pytest

from pipeline.warehouse.validate import duplicate_keys, repeated_keys, validate_by_snapshot


class Figure(pa.DataFrameModel):
    snapshot_id: str
    value: float = pa.Field(ge=0)


@pytest.fixture
def con():
    with duckdb.connect() as con:
        con.execute("CREATE TABLE t (snapshot_id VARCHAR, value DOUBLE)")
        # s0..s9 with 1,000 rows each, one large snapshot of 10,000 rows
        con.execute(
            "INSERT INTO t SELECT 's' || (i // 1000), i FROM range(10000) AS r(i) "
            "UNION ALL SELECT 'big', i FROM range(10000) AS r(i)"
        )
        yield con


def test_only_the_snapshots_asked_for_are_checked(con):
    assert validate_by_snapshot(con, Figure, "t", ["s1", "s2"]) == (2000, None)
    assert validate_by_snapshot(con, Figure, "t", []) == (0, None)
    assert validate_by_snapshot(con, Figure, "t", ["nothing"]) == (0, None)


def test_a_bad_row_in_a_later_chunk_is_found_and_named(con, monkeypatch):
    import pipeline.warehouse.validate as validate

    seen: list[int] = []
    model_validate = Figure.validate
    monkeypatch.setattr(
        Figure, "validate", lambda rows, **kw: (seen.append(len(rows)), model_validate(rows, **kw))
    )
    con.execute("UPDATE t SET value = -1 WHERE snapshot_id = 's8' AND value = 8500")
    ids = [f"s{n}" for n in range(10)] + ["big"]
    checked, failures = validate.validate_by_snapshot(con, Figure, "t", ids, batch_rows=4096)
    assert checked == 20_000
    assert max(seen) <= 4096 and len(seen) >= 5  # chunks, never the whole table at once
    assert failures is not None and list(failures["snapshot_id"]) == ["s8"]
    assert list(failures["failure_case"]) == [-1.0]


def test_the_failures_stop_at_the_limit(con):
    con.execute("UPDATE t SET value = -1 WHERE snapshot_id = 'big'")
    checked, failures = validate_by_snapshot(con, Figure, "t", ["big"], batch_rows=2048, limit=5)
    assert failures is not None and len(failures) >= 5
    assert checked < 10_000  # stopped reading once it had enough


def test_every_per_snapshot_table_declares_a_key():
    """The key of a table derived per snapshot is checked over the rows a build appended, so
    each model declares one that names or hashes its snapshot."""
    from pipeline.schema.core import CORE_TABLES, unique_key
    from pipeline.schema.growing import PER_SNAPSHOT

    keys = {name: unique_key(CORE_TABLES[name]) for name in PER_SNAPSHOT}
    assert keys == {
        "observations": ("observation_id",),
        "model_figures": ("figure_id",),
        "endpoint_offers": ("snapshot_id", "catalogue_model_id", "endpoint_tag"),
        "catalogue_offers": ("snapshot_id", "catalogue_provider_id", "catalogue_model_id"),
    }


# the fixture's values 0..9,999 are each in one of s0..s9 and again in `big`


@pytest.mark.parametrize("pass_rows", [1_000_000, 1_000, 7])
def test_repeated_keys_are_counted_whatever_the_number_of_passes(con, pass_rows):
    assert duplicate_keys(con, "t", ["value"], pass_rows=pass_rows) == 10_000
    assert duplicate_keys(con, "t", ["snapshot_id", "value"], pass_rows=pass_rows) == 0


def test_repeated_keys_are_counted_among_the_snapshots_asked_for(con):
    assert duplicate_keys(con, "t", ["value"], ["s1", "s2"]) == 0
    assert duplicate_keys(con, "t", ["value"], ["s1", "big"], pass_rows=300) == 1_000
    assert duplicate_keys(con, "t", ["value"], []) == 0
    assert duplicate_keys(con, "t", ["value"], ["nothing"]) == 0


def test_a_key_repeated_within_one_pass_and_a_null_key_are_counted_once_each(con):
    con.execute("INSERT INTO t VALUES ('s1', 20000), ('s1', 20000), ('s1', 20000)")
    con.execute("INSERT INTO t VALUES ('s1', NULL), ('s2', NULL)")
    assert duplicate_keys(con, "t", ["snapshot_id", "value"], pass_rows=50) == 1
    assert duplicate_keys(con, "t", ["value"], ["s1", "s2"]) == 2  # 20000, and NULL


def test_a_table_whose_every_key_repeats_is_counted_in_sql(con):
    con.execute("INSERT INTO t SELECT * FROM t")  # a load appended twice
    assert duplicate_keys(con, "t", ["snapshot_id", "value"], pass_rows=3_000) == 20_000
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchone() == (0,)


@pytest.mark.parametrize("pass_rows", [1_000_000, 1_500])
def test_the_snapshots_of_repeated_keys_are_named_whatever_the_passes(con, pass_rows):
    con.execute("INSERT INTO t VALUES ('s3', 3001), ('s3', 3001), ('s7', 7002), ('big', 5)")
    key = ["snapshot_id", "value"]
    assert repeated_keys(con, "t", key, pass_rows=pass_rows, owners=True) == (
        3,
        ["big", "s3", "s7"],
    )
    assert repeated_keys(con, "t", key, ["s3", "s4"], pass_rows, owners=True) == (1, ["s3"])
    assert repeated_keys(con, "t", key, [], pass_rows, owners=True) == (0, [])
    assert repeated_keys(con, "t", key, pass_rows=pass_rows) == (3, [])  # not asked for


class Strict(pa.DataFrameModel):
    """As the project's models are: strict and coercing."""

    class Config:
        strict = True
        coerce = True


class Provider(Strict):
    provider_id: str = pa.Field(unique=True)
    kind: str = pa.Field(isin=["cloud", "chip"])


@pytest.fixture
def providers():
    with duckdb.connect() as con:
        con.execute("CREATE TABLE p (provider_id VARCHAR NOT NULL, kind VARCHAR NOT NULL)")
        con.execute("INSERT INTO p VALUES ('groq', 'chip'), ('azure', 'cloud')")
        yield con


def test_a_good_table_is_validated_in_sql_alone(providers, monkeypatch):
    from pipeline.warehouse.validate import validate_table

    def never(*args, **kwargs):
        raise AssertionError("Pandera read a table SQL found good")

    monkeypatch.setattr(Provider, "validate", never)
    assert validate_table(providers, Provider, "main.p") == (2, None)


@pytest.mark.parametrize(
    ("change", "failed_check"),
    [
        ("INSERT INTO p VALUES ('cerebras', 'reseller')", "isin"),
        ("INSERT INTO p VALUES ('groq', 'cloud')", "field_uniqueness"),
        ("ALTER TABLE p ADD COLUMN extra VARCHAR", "column_in_schema"),
    ],
)
def test_a_table_that_fails_in_sql_is_read_by_pandera_for_its_words(
    providers, change, failed_check
):
    from pipeline.warehouse.validate import validate_table

    providers.execute(change)
    _rows, failures = validate_table(providers, Provider, "main.p")
    assert failures is not None
    assert any(str(check).startswith(failed_check) for check in failures["check"])


class Year(Strict):
    snapshot_id: str
    year: str = pa.Field(str_matches=r"^\d{4}$")


@pytest.fixture
def years():
    with duckdb.connect() as con:
        con.execute("CREATE TABLE y (snapshot_id VARCHAR NOT NULL, year VARCHAR NOT NULL)")
        con.execute("INSERT INTO y SELECT 's' || (i % 5), (2000 + i)::VARCHAR FROM range(50) r(i)")
        yield con


def _reads(monkeypatch) -> list[int]:
    seen: list[int] = []
    model_validate = Year.validate
    monkeypatch.setattr(
        Year, "validate", lambda rows, **kw: (seen.append(len(rows)), model_validate(rows, **kw))[1]
    )
    return seen


def test_sql_names_the_snapshot_pandera_then_reads(years, monkeypatch):
    from pipeline.warehouse.validate import validate_rows

    seen = _reads(monkeypatch)
    assert validate_rows(years, Year, "main.y", ["s1", "s2"]) == (20, None)
    assert seen == []  # all good in SQL: Pandera reads nothing
    years.execute("UPDATE y SET year = 'soon' WHERE year = '2013'")  # in s3
    rows, failures = validate_rows(years, Year, "main.y", ["s1", "s3"])
    assert rows == 20 and seen == [10]  # the 10 rows of s3, not s1's
    assert failures is not None and list(failures["snapshot_id"]) == ["s3"]


def test_where_sql_is_stricter_pandera_has_the_last_word(years, monkeypatch):
    from pipeline.warehouse.validate import validate_rows

    seen = _reads(monkeypatch)
    years.execute("UPDATE y SET year = '٢٠٢٦' WHERE year = '2014'")  # digits RE2's \d refuses
    assert validate_rows(years, Year, "main.y", None) == (50, None)
    assert seen == [10]


def test_a_table_whose_columns_are_not_its_models_is_read_by_pandera(years):
    from pipeline.warehouse.validate import validate_rows

    years.execute("ALTER TABLE y ADD COLUMN extra INTEGER")
    rows, failures = validate_rows(years, Year, "main.y", ["s0"])
    assert rows == 10 and failures is not None
    assert "column_in_schema" in set(failures["check"].astype(str))


def test_the_staging_check_rejects_the_snapshot_whose_key_repeats():
    from pipeline.dagster.assets.staging import _check_frame
    from pipeline.schema.ddl import create_table
    from pipeline.schema.staging import FRAMES

    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'UTC'")
        con.execute("CREATE SCHEMA staging")
        con.execute(
            create_table(FRAMES["openrouter_poll_members"], "staging.openrouter_poll_members")
        )
        con.execute(
            "INSERT INTO staging.openrouter_poll_members (source_id, snapshot_id, observed_at, "
            "member_index, member_url, http_status, endpoints_staged, "
            "endpoints_without_statistics) SELECT 'or', 'or/' || s, TIMESTAMPTZ '2026-11-29', i, "
            "'https://openrouter.ai/api/v1/models/a/b/endpoints', 200, 1, 0 "
            "FROM range(2) a(s), range(1, 4) b(i)"
        )
        check, rejected = _check_frame(con, "openrouter_poll_members", ["or/0", "or/1"], [], 6)
        assert check.passed and rejected == {}
        con.execute(  # member #2 of or/1 again
            "INSERT INTO staging.openrouter_poll_members SELECT * FROM "
            "staging.openrouter_poll_members WHERE snapshot_id = 'or/1' AND member_index = 2"
        )
        check, rejected = _check_frame(con, "openrouter_poll_members", ["or/0", "or/1"], [], 7)
        assert not check.passed and list(rejected) == ["or/1"]
        assert "more than one row has the key" in rejected["or/1"]
