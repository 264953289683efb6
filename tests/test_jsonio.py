"""The exports' JSON writer: the bytes of json.dumps(indent=2, sort_keys=True), faster."""

import json
import math
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.release.contracts import EXPORT_FILES, problems
from pipeline.release.jsonio import dumps


def standard(document: Any) -> bytes:
    text = json.dumps(document, ensure_ascii=False, indent=2, sort_keys=True, allow_nan=False)
    return (text + "\n").encode("utf-8")


leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e-05, 0.0001, 1e16, 1e-07, -0.0, 5e-324, 1.7976931348623157e308])
    | st.text()
)
documents = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=1500, deadline=None)
@given(documents)
def test_the_bytes_are_the_standard_librarys(document):
    assert dumps(document) == standard(document)


def test_the_bytes_of_every_bundled_export_are_the_standard_librarys(built):
    for name in EXPORT_FILES:
        stored = (built.exports / "latest" / name).read_bytes()
        assert dumps(json.loads(stored)) == stored == standard(json.loads(stored))


@pytest.mark.parametrize(
    "value",
    [datetime(2026, 1, 1, tzinfo=UTC), {1, 2}, object(), b"bytes"],
    ids=lambda value: type(value).__name__,
)
def test_what_the_standard_library_refuses_is_refused(value):
    with pytest.raises(TypeError):
        dumps({"key": value})


def test_a_nan_in_an_export_is_refused_before_it_is_written(built):
    """orjson writes NaN as null; the contract check every export passes first refuses it."""
    document = json.loads((built.exports / "latest" / "inference.json").read_bytes())
    holders = list(_holders_of_floats(document))
    assert len(holders) > 100
    for holder, key in holders[:: len(holders) // 20]:
        kept, holder[key] = holder[key], math.nan
        assert problems("inference.json", document), f"a NaN at {key!r} passed"
        holder[key] = kept


def _holders_of_floats(value: Any) -> Any:
    """(container, key) of every float in a document."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(item, float):
            yield value, key
        elif isinstance(item, (dict, list)):
            yield from _holders_of_floats(item)
