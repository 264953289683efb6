"""The exports' JSON writer: orjson's bytes, with sorted keys and a two-space indent, are the
canonical bytes of a release: the same document always gives the same bytes, they read back as
the document, and what JSON cannot hold is refused."""

import json
import math
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.release.contracts import EXPORT_FILES, problems
from pipeline.release.jsonio import dumps

leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e-05, 0.0001, 1e16, 1e-07, -0.0, 5e-324, 1.7976931348623157e308])
    | st.text()
)
documents = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@pytest.mark.e2e
@settings(max_examples=500, deadline=None)
@given(documents)
def test_the_bytes_read_back_as_the_document_and_do_not_depend_on_key_order(document):
    data = dumps(document)
    assert json.loads(data) == document and data.endswith(b"\n")
    if isinstance(document, dict):
        assert dumps(dict(reversed(list(document.items())))) == data


def test_the_bytes_of_every_bundled_export_are_the_writers(built):
    for name in EXPORT_FILES:
        stored = (built.exports / "latest" / name).read_bytes()
        assert dumps(json.loads(stored)) == stored
        assert stored.startswith(b'{\n  "') and stored.endswith(b"}\n")


@pytest.mark.parametrize(
    "value",
    [datetime(2026, 1, 1, tzinfo=UTC), {1, 2}, object(), b"bytes", 2**70],
    ids=lambda value: type(value).__name__,
)
def test_what_json_cannot_hold_is_refused(value):
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
