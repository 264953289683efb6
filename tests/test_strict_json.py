"""strict_json.loads reads what json.loads reads, refuses a key given twice, and fails as json.loads
fails: jiter reads first, the standard library decides whatever jiter refuses."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.support import strict_json


def _standard(text: str | bytes) -> Any:
    """The standard library's reading, with a hook that refuses a key given twice (written here
    apart from the module's, as the reference it is held to)."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        if len({key for key, _ in pairs}) != len(pairs):
            raise strict_json.DuplicateKey("?")
        return dict(pairs)

    return json.loads(text, object_pairs_hook=unique)


def _outcome(loads: Callable[[str | bytes], Any], text: str | bytes) -> tuple[str, Any]:
    """What `loads` makes of `text`: its document, or the kind of its failure (with the words of
    bad JSON)."""
    try:
        return "ok", loads(text)
    except strict_json.DuplicateKey:
        return "twice", None
    except RecursionError:
        return "too deep", None
    except ValueError as error:
        return "bad", str(error)


def _reference(text: str | bytes) -> tuple[str, Any]:
    return _outcome(_standard, text)


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types; NaN equals NaN, 0.0 differs from -0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _agree(text: str | bytes) -> None:
    (kind, value), (our_kind, ours) = _reference(text), _outcome(strict_json.loads, text)
    assert our_kind == kind, text
    assert _same(ours, value), text


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"a": 1, "a": 1}', "a"),
        ('{"x": {"b": [1, {"c": 1, "c": 2}]}}', "c"),
        ('{"a": 1, "\\u0061": 2}', "a"),  # the same key, escaped
        ('{"é": 1, "\\u00e9": 2}', "é"),
        ('{"a": 1, "b": "\\ud800", "a": 2}', "a"),  # jiter refuses the surrogate: json decides
    ],
)
def test_a_key_given_twice_is_refused_with_its_name(text: str, key: str) -> None:
    with pytest.raises(strict_json.DuplicateKey) as raised:
        strict_json.loads(text)
    assert raised.value.key == key
    assert isinstance(raised.value, ValueError)
    with pytest.raises(strict_json.DuplicateKey):
        strict_json.loads(text.encode())


@pytest.mark.parametrize(
    "text",
    [
        '"\\ud800"',  # a lone surrogate escape: jiter refuses it, json reads it
        "[" * 300 + "]" * 300,  # past jiter's nesting limit, within json's
        "NaN",
        "[-Infinity, Infinity]",
        "1e400",
        "18446744073709551616",  # beyond 64 bits: an int, not a float
        "-0.0",
        b'\xef\xbb\xbf{"a": 1}',  # bytes with a UTF-8 byte-order mark, as json.loads reads them
        '{"a": [1, 2.5, "x", null, true]}'.encode("utf-16"),
    ],
)
def test_what_jiter_reads_otherwise_is_read_as_json_reads_it(text: str | bytes) -> None:
    assert _reference(text)[0] == "ok"
    _agree(text)


@pytest.mark.parametrize(
    "text",
    ["", " ", "[1,]", "{'a': 1}", '{"a": 1}x', "01", '"\x01"', "\ufeff{}", b'"\xff"', "nul"],
)
def test_bad_json_fails_with_the_standard_librarys_words(text: str | bytes) -> None:
    kind, words = _reference(text)
    assert kind == "bad"
    with pytest.raises(ValueError) as raised:
        strict_json.loads(text)
    assert str(raised.value) == words


def test_nesting_too_deep_for_either_is_a_recursion_error() -> None:
    with pytest.raises(RecursionError):
        strict_json.loads("[" * 100_000 + "]" * 100_000)


_FRAGMENTS = [
    "{", "}", "[", "]", ",", ":", " ", "\n", '"a"', '"b"', '"\\u0061"', '"\\ud800"', '"\\""',
    '"é"', "1", "-0", "1e5", "1.5", "1E+2", "01", ".1", "1.", "+1", "-", "1e999",
    "123456789012345678901234567890", "true", "false", "null", "nul", "NaN", "Infinity",
    "\ufeff", '"\t"',
]  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=10).map("".join))
def test_any_text_reads_as_json_reads_it(text: str) -> None:
    _agree(text)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(_JSON, st.sampled_from([None, 2]), st.booleans())
def test_any_document_reads_back_as_it_was_written(
    document: Any, indent: int | None, ascii_only: bool
) -> None:
    text = json.dumps(document, indent=indent, ensure_ascii=ascii_only)
    assert _same(strict_json.loads(text), document)
    _agree(text)
