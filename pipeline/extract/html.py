"""HTML helpers for parsers: parse once with lxml, find tables by their header text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import lxml.etree
import lxml.html

from pipeline.text import clean_text, strip_invisible

_INVISIBLE = ("script", "style", "template", "noscript")
_SPACES = re.compile(r"\s+")
_EMPTY = "<html></html>"


def parse_html(text: str) -> lxml.html.HtmlElement:
    """Parse a document and drop elements whose text is never shown (scripts, styles).

    A page with nothing to parse (blank, only a comment) is an empty document, not an error here:
    the parser then reports the table it expected."""
    parser = lxml.html.HTMLParser(encoding="utf-8", huge_tree=True, remove_comments=True)
    # lxml turns NUL into U+FFFD and refuses some control characters outright.
    text = strip_invisible(text)
    # Bytes in a fixed encoding: lxml refuses a str with an <?xml encoding?> declaration, and a
    # <meta charset> must not re-decode text that is already decoded.
    data = (text if text.strip() else _EMPTY).encode("utf-8", "replace")
    try:
        document = lxml.html.document_fromstring(data, parser=parser)
    except lxml.etree.ParserError:
        document = lxml.html.document_fromstring(_EMPTY.encode(), parser=parser)
    for element in list(document.iter(*_INVISIBLE)):
        element.drop_tree()
    return document


def element_text(element: lxml.html.HtmlElement) -> str:
    """Visible text of an element, whitespace-collapsed, markup and control characters removed."""
    return clean_text(_SPACES.sub(" ", element.text_content()))


def header_key(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold()


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]  # as written (cleaned)
    rows: tuple[tuple[lxml.html.HtmlElement, ...], ...]  # cells of each body row

    def column(self, *patterns: str) -> int | None:
        """Index of the first header containing any of the patterns (case-insensitive)."""
        for index, header in enumerate(self.headers):
            key = header_key(header)
            if any(pattern in key for pattern in patterns):
                return index
        return None


def tables(document: lxml.html.HtmlElement) -> Iterator[Table]:
    for table in document.iter("table"):
        header_cells = table.xpath("./thead/tr[1]/th | ./thead/tr[1]/td")
        body_rows = table.xpath("./tbody/tr")
        if not header_cells:
            all_rows = table.xpath("./tr | ./tbody/tr")
            if not all_rows:
                continue
            header_cells = all_rows[0].xpath("./th | ./td")
            body_rows = all_rows[1:]
        headers = tuple(element_text(cell) for cell in header_cells)
        rows = tuple(tuple(row.xpath("./td | ./th")) for row in body_rows)
        yield Table(headers, rows)


def find_table(document: lxml.html.HtmlElement, *required: tuple[str, ...]) -> Table | None:
    """The first table having, for every group in `required`, a header containing one of it."""
    for table in tables(document):
        if all(table.column(*group) is not None for group in required):
            return table
    return None


def describe_tables(document: lxml.html.HtmlElement) -> str:
    found = [" | ".join(table.headers) for table in tables(document)]
    return "; ".join(f"[{h}]" for h in found) if found else "no tables"
