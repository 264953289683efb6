"""strict_json.loads reads JSON with jiter alone: a key given twice in one object is refused by
name, anything that is not JSON fails with a ValueError naming where, and every document the
standard library writes reads back as it was."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.support import strict_json


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"a": 1, "a": 1}', "a"),
        ('{"x": {"b": [1, {"c": 1, "c": 2}]}}', "c"),
        ('{"a": 1, "\\u0061": 2}', "a"),  # the same key, escaped
        ('{"é": 1, "\\u00e9": 2}', "é"),
    ],
)
def test_a_key_given_twice_is_refused_with_its_name(text: str, key: str) -> None:
    for given_as in (text, text.encode()):
        with pytest.raises(strict_json.DuplicateKey) as raised:
            strict_json.loads(given_as)
        assert raised.value.key == key and isinstance(raised.value, ValueError)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("", "line 1 column 0"),
        ("[1,]", "trailing comma"),
        ("{'a': 1}", "key must be a string"),
        ('{"a": 1}x', "trailing characters"),
        ("01", "invalid number"),
        (b'"\xff"', "invalid unicode"),
        ('"\\ud800"', "hex escape"),  # a lone surrogate: not text any source means
        ("[" * 300 + "]" * 300, "recursion limit"),
        ("[" * 100_000 + "]" * 100_000, "recursion limit"),  # a hostile depth: an error, no crash
    ],
)
def test_what_is_not_json_fails_saying_where(text: str | bytes, where: str) -> None:
    with pytest.raises(ValueError, match=r"^not JSON: ") as raised:
        strict_json.loads(text)
    assert where in str(raised.value)
    assert not isinstance(raised.value, strict_json.DuplicateKey)


def test_large_and_special_numbers_read_as_python_reads_them() -> None:
    assert strict_json.loads("18446744073709551616") == 2**64  # an int beyond 64 bits, exact
    assert math.isinf(strict_json.loads("1e400"))
    assert math.copysign(1.0, strict_json.loads("-0.0")) == -1.0


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8).filter(lambda t: not any(0xD800 <= ord(c) <= 0xDFFF for c in t)),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.sampled_from([None, 2]), st.booleans())
def test_any_document_reads_back_as_it_was_written(
    document: Any, indent: int | None, ascii_only: bool
) -> None:
    text = json.dumps(document, indent=indent, ensure_ascii=ascii_only)
    assert strict_json.loads(text) == document
    assert strict_json.loads(text.encode()) == document
