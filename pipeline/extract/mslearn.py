"""Microsoft Learn source markdown: per-publisher model tables ("## <Publisher> models sold
directly by Azure"), each duplicated inside `::: moniker range` blocks for the two portals."""

from __future__ import annotations

import re
from typing import Any

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.support.text import clean_text

_SECTION = re.compile(
    r"^##\s+(?P<publisher>.+?)\s+models\s+sold\s+directly\s+by\s+Azure\s*$", re.IGNORECASE
)
_HEADING = re.compile(r"^#{1,2}\s")
# Link text and target stop at the next bracket (a target may hold one level of parentheses):
# '[^\]]*' retried at each of a million '[' was quadratic (minutes on a 10 MB line).
_LINK = re.compile(r"\[([^\[\]]*+)\]\((?:[^()]++|\([^()]*+\))*+\)")
_FOOTNOTE = re.compile(r"<sup>[^<]*</sup>", re.IGNORECASE)  # 'model-router<sup>1</sup>'
_CODE = re.compile(r"`([^`]*)`")
_TOOLS = re.compile(r"Tool calling:\**\s*(Yes|No)\b", re.IGNORECASE)
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _plain(markdown: str) -> str:
    text = _LINK.sub(r"\1", _FOOTNOTE.sub("", markdown))
    text = _CODE.sub(r"\1", text)
    text = text.replace("**", "").replace("*", "")
    return clean_text(re.sub(r"<br\s*/?>", " ", text, flags=re.IGNORECASE))


def _task(cell: str) -> str | None:
    bold = _BOLD.search(cell)
    first = bold.group(1) if bold else re.split(r"<br\s*/?>", cell, maxsplit=1)[0]
    return _plain(first) or None


def parse(snapshot: SnapshotInput) -> Frames:
    lines = snapshot.text().splitlines()
    publisher: str | None = None
    header: list[str] | None = None
    rows: dict[str, dict[str, Any]] = {}
    tables_seen = 0
    # Rows read per section: a section whose table vanished or was renamed is an error, not a
    # publisher silently missing from the catalogue.
    sections: dict[str, int] = {}
    in_table: set[str] = set()  # models of the current table: a repeat there is a duplicate
    type_key = capabilities_key = ""  # the current table's, set with its header
    for number, line in enumerate(lines, start=1):
        section = _SECTION.match(line)
        if section:
            publisher, header = clean_text(section.group("publisher")), None
            sections.setdefault(publisher, 0)
            continue
        if _HEADING.match(line):
            publisher, header = None, None
            continue
        if not line.lstrip().startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            keys = [_plain(c).casefold() for c in cells]
            if publisher and keys and keys[0] == "model" and any("capabilities" in k for k in keys):
                types = [k for k in keys if k.startswith("type")]
                if not types:  # the task is read from it
                    raise snapshot.fail(
                        f"line {number}: the table header has no 'Type' column: expected "
                        "'Model | Type | Capabilities ...'"
                    )
                type_key = types[0]
                capabilities_key = next(k for k in keys if "capabilities" in k)
                header, tables_seen = keys, tables_seen + 1
                in_table = set()
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue  # the |---|---| separator
        if len(cells) != len(header):
            raise snapshot.fail(
                f"line {number}: {len(cells)} cells, the table header has {len(header)}"
            )
        record = dict(zip(header, cells, strict=True))
        model_id = _plain(record["model"])
        if not model_id:
            raise snapshot.fail(f"line {number}: empty model cell")
        if model_id in in_table:
            raise snapshot.fail(
                f"line {number}: model {model_id!r} appears twice in one table; expected once"
            )
        in_table.add(model_id)
        sections[publisher] += 1  # type: ignore[index]
        tools = _TOOLS.search(record[capabilities_key])
        rows.setdefault(
            model_id,
            {
                "platform_model_id": model_id,
                "name": model_id,
                "publisher": publisher,
                "task": _task(record[type_key]),
                "function_calling": None if tools is None else tools.group(1).casefold() == "yes",
                "beta": None,
                "lora": None,
                "context_window": None,
                "price_input_usd_per_mtok": None,
                "price_output_usd_per_mtok": None,
                "planned_deprecation": None,
            },
        )
    if tables_seen == 0:
        raise snapshot.fail(
            "expected tables with headers 'Model | Type | Capabilities ...' under "
            "'## <Publisher> models sold directly by Azure' headings; found none"
        )
    if not rows:
        raise snapshot.fail("the model tables have no rows")
    empty = [name for name, count in sections.items() if count == 0]
    if empty:
        raise snapshot.fail(
            f"section '## {empty[0]} models sold directly by Azure' has no model rows: expected "
            "a table with headers 'Model | Type | Capabilities ...' under it"
        )
    return {"catalogue_entries": validated("catalogue_entries", snapshot, list(rows.values()))}


PARSER = Parser("mslearn_model_tables", "2", ("catalogue_entries",), parse)
