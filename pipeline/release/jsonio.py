"""The bytes of a release's JSON files: orjson's, with sorted keys, a two-space indent and one
trailing newline. These are the canonical bytes (the same document always gives the same bytes);
releases are compared by content, never by these bytes (publish.plan_release).

orjson writes NaN and infinities as null: every export is checked against its schema before it
is written (`contracts.check` refuses a NaN wherever a number or a null may stand), and the
datapackage and changes documents are built from checked exports. A value JSON cannot hold (an
integer past 64 bits, a date) raises orjson's JSONEncodeError, a TypeError.
"""

from __future__ import annotations

from typing import Any

import orjson

OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
# a date, a dataclass or a str or int subclass is no JSON value: refused, never written its way
OPTIONS |= orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
OPTIONS |= orjson.OPT_PASSTHROUGH_SUBCLASS


def dumps(document: Any) -> bytes:
    return orjson.dumps(document, option=OPTIONS)
