"""A column of table cells read at once (`plain_numbers`) reads what `cell_number` reads, or
leaves the column to it: never a different number, never a number where it would refuse."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_parse_support import bundled

from pipeline.extract import ExtractError
from pipeline.extract.cells import SECONDS, TOKENS_PER_S, USD, Units, cell_number, plain_numbers

SNAPSHOT = bundled("aa-llama-3-3-instruct-70b")


def one_by_one(texts: list[str], units: Units) -> list[float | None] | None:
    try:
        return [cell_number(text, SNAPSHOT, "column", 1, units) for text in texts]
    except ExtractError:
        return None


def test_plain_numbers_blanks_and_separators_are_read_at_once() -> None:
    texts = ["1,753.0", "321", "—", "", "0.5", "n/a", "12,345,678"]
    assert plain_numbers(texts, TOKENS_PER_S) == [1753.0, 321.0, None, None, 0.5, None, 12345678.0]
    assert plain_numbers(["$2.92", "—", "$1,200"], USD) == [2.92, None, 1200.0]
    assert plain_numbers(["—", ""], SECONDS) == [None, None]
    assert plain_numbers([], SECONDS) == []


@pytest.mark.parametrize(
    "odd",
    [
        "1e5",  # what float() reads but a table's cell does not hold
        "inf",
        "nan",
        "1_000",
        "+3",
        "-3",
        " 12",
        "1.2.3",
        "12,34",
        "1\t2",  # a TAB inside a cell would read as two cells
        "$12",  # a price in a speed column
        "500 ms",  # a unit: cell by cell
        "N/A",  # blank only once casefolded: cell by cell
    ],
)
def test_anything_else_leaves_the_column_to_the_cell_by_cell_reading(odd: str) -> None:
    assert plain_numbers(["1", odd, "2"], TOKENS_PER_S) is None


# The peak is the process's own (VmHWM, kB): getrusage's would count the parent's pages at fork.
HOSTILE_COLUMN = """
import re
from pipeline.extract.cells import TOKENS_PER_S, plain_numbers
texts = ["1" + ",000" * 1000] * 7_999 + ["1" + ",000" * 999 + ",00"]
assert plain_numbers(texts, TOKENS_PER_S) is None
with open("/proc/self/status") as status:
    print(re.search(r"VmHWM:\\s*(\\d+) kB", status.read()).group(1))
"""


@pytest.mark.timeout(60)
def test_a_hostile_column_is_refused_without_the_matcher_holding_its_length() -> None:
    """8,000 cells of a thousand digit groups each, the last one short of a group: the column is
    matched without groups to give back, then left to the cell-by-cell reading. A matcher that
    could give them back held about a gigabyte for this 30 MB column (its process peaked at
    984 MB, against 174 MB)."""
    done = subprocess.run(
        [sys.executable, "-c", HOSTILE_COLUMN], capture_output=True, text=True, check=True
    )
    assert int(done.stdout) < 500_000  # kB
    one = "1" + ",000" * 1000
    assert plain_numbers([one, one], TOKENS_PER_S) == [float("1" + "000" * 1000)] * 2


@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                ["1", "12", "1,234", "1,234.5", "$3", "—", "", "n/a", "0.25", "\t", "١٢٣", "１２"]
            ),
            st.from_regex(r"\$?[0-9,.]{0,8}", fullmatch=True),
            st.text(max_size=6),
        ),
        max_size=8,
    ),
    st.sampled_from([TOKENS_PER_S, SECONDS, USD]),
)
def test_a_column_read_at_once_is_what_each_cell_reads(texts: list[str], units: Units) -> None:
    at_once = plain_numbers(texts, units)
    if at_once is not None:
        assert at_once == one_by_one(texts, units)
