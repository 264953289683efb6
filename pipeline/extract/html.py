"""HTML helpers for parsers: parse once with lxml, find tables by their header text."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import lxml.etree

from pipeline.support.text import clean_repeated_text, clean_text

_INVISIBLE = ("script", "style", "template", "noscript")
_SPACES = re.compile(r"\s+")
_EMPTY = "<html></html>"
# the C0 control characters lxml refuses (all but TAB, LF and CR): one byte each in UTF-8, which
# no other character's encoding contains, so deleting them from the bytes deletes them from the
# text (bytes.translate: a sixth of the time of a regex search over the text)
_LXML_UNSAFE = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20)])


Element = lxml.etree._Element


def _drop(element: Element) -> None:
    """Remove an element but keep the text that follows it (what lxml.html's drop_tree does)."""
    parent = element.getparent()
    if parent is None:
        return
    if element.tail:
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + element.tail
        else:
            parent.text = (parent.text or "") + element.tail
    parent.remove(element)


_local = threading.local()  # each thread's parser and XSLT: neither may serve two threads


def _html_parser() -> lxml.etree.HTMLParser:
    """This thread's HTML parser (a parser serves one thread; making one per page cost 3 µs).
    lxml.etree's, not lxml.html's: plain elements, without the per-element Python class lookup
    that makes lxml.html trees several times slower to walk."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = lxml.etree.HTMLParser(
            encoding="utf-8", huge_tree=True, remove_comments=True
        )
    return parser


def parse_html(text: str) -> Element:
    """Parse a document and drop elements whose text is never shown (scripts, styles).

    A page with nothing to parse (blank, only a comment) is an empty document, not an error here:
    the parser then reports the table it expected."""
    parser = _html_parser()
    # Bytes in a fixed encoding: lxml refuses a str with an <?xml encoding?> declaration, and a
    # <meta charset> must not re-decode text that is already decoded. lxml turns NUL into U+FFFD
    # and refuses other C0 control characters outright, so they go; invisible characters inside
    # the text are clean_text's business, cell by cell.
    data = (text if text.strip() else _EMPTY).encode("utf-8", "replace")
    data = data.translate(None, _LXML_UNSAFE)
    try:
        document = lxml.etree.fromstring(data, parser=parser)
    except (lxml.etree.ParserError, lxml.etree.XMLSyntaxError):
        document = None
    if document is None:  # nothing lxml could read: an empty document
        document = lxml.etree.fromstring(_EMPTY.encode(), parser=parser)
    for element in list(document.iter(*_INVISIBLE)):
        _drop(element)
    return document


def element_text(element: Element) -> str:
    """Visible text of an element, whitespace-collapsed, markup and control characters removed."""
    if len(element) == 0:  # no child elements: its own text is all there is (most table cells)
        return clean_repeated_text(element.text or "")  # headers and names recur page after page
    return clean_text("".join(element.itertext()))  # clean_text collapses the whitespace


def header_key(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold()


def _find_column(headers: tuple[str, ...], patterns: tuple[str, ...]) -> int | None:
    for index, header in enumerate(headers):
        key = header_key(header)
        if any(pattern in key for pattern in patterns):
            return index
    return None


# A source's pages repeat the same headers, and a parser asks for the same columns on each: the
# answer is kept (for tables of ordinary width only, so a hostile page cannot fill the memory).
@lru_cache(maxsize=1024)
def _cached_column(headers: tuple[str, ...], patterns: tuple[str, ...]) -> int | None:
    return _find_column(headers, patterns)


_CACHED_WIDTH = 64


class _Headed:
    """Header lookup shared by both table shapes."""

    headers: tuple[str, ...]

    def column(self, *patterns: str) -> int | None:
        """Index of the first header containing any of the patterns (case-insensitive)."""
        if len(self.headers) <= _CACHED_WIDTH:
            return _cached_column(self.headers, patterns)
        return _find_column(self.headers, patterns)


@dataclass
class Table(_Headed):
    headers: tuple[str, ...]  # as written (cleaned)
    rows: tuple[tuple[Element, ...], ...]  # cells of each body row


_HEADER_CELLS = lxml.etree.XPath("./thead/tr[1]/th | ./thead/tr[1]/td")
_BODY_ROWS = lxml.etree.XPath("./tbody/tr")
_ALL_ROWS = lxml.etree.XPath("./tr | ./tbody/tr")
_CELLS = lxml.etree.XPath("./td | ./th")
_CELL_TAGS = ("td", "th")


def tables(document: Element) -> Iterator[Table]:
    for table in document.iter("table"):
        header_cells = _HEADER_CELLS(table)
        body_rows = _BODY_ROWS(table)
        if not header_cells:
            all_rows = _ALL_ROWS(table)
            if not all_rows:
                continue
            header_cells = _CELLS(all_rows[0])
            body_rows = all_rows[1:]
        headers = tuple(element_text(cell) for cell in header_cells)
        rows = tuple(tuple(c for c in row if c.tag in _CELL_TAGS) for row in body_rows)
        yield Table(headers, rows)


# Every table's text in one libxslt call: tables start with CR, rows end with LF, cells end
# with TAB (ending each cell, not separating them, spares a position() test per cell: a third
# of the transform's time). normalize-space() turns CR, LF and TAB inside cells into spaces, so the
# separators cannot occur in cell text. Header: the first row of <thead>, else the first row.
_TEXT_TABLES_XSLT = """<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
<xsl:output method="text" encoding="UTF-8"/>
<xsl:template match="/">
  <xsl:for-each select="//table">
    <xsl:text>&#xD;</xsl:text>
    <xsl:choose>
      <xsl:when test="thead/tr">
        <xsl:apply-templates select="thead/tr[1]"/>
        <xsl:apply-templates select="tbody/tr"/>
      </xsl:when>
      <xsl:otherwise><xsl:apply-templates select="tr|tbody/tr"/></xsl:otherwise>
    </xsl:choose>
  </xsl:for-each>
</xsl:template>
<xsl:template match="tr">
  <xsl:for-each select="th|td">
    <xsl:value-of select="normalize-space(.)"/>
    <xsl:text>&#x9;</xsl:text>
  </xsl:for-each>
  <xsl:text>&#xA;</xsl:text>
</xsl:template>
</xsl:stylesheet>"""


@dataclass
class TextTable(_Headed):
    """A table as text: cleaned headers, and each body row's cells whitespace-normalised but
    otherwise as written (clean what you keep)."""

    headers: tuple[str, ...]
    rows: list[list[str]]


def text_tables(document: Element) -> list[TextTable]:
    """Every table of the document as text, in document order: the fast path for pages whose
    tables hold only text (one C call per page instead of Python work per cell)."""
    transform = getattr(_local, "tables", None)
    if transform is None:
        transform = _local.tables = lxml.etree.XSLT(lxml.etree.XML(_TEXT_TABLES_XSLT))
    found = []
    for block in str(transform(document)).split("\r")[1:]:
        lines = block.split("\n")[:-1]
        if not lines:
            continue
        # each line ends with its last cell's TAB; a row of no cells is one empty cell, as before
        rows = [line[:-1].split("\t") for line in lines]
        headers = tuple(clean_repeated_text(cell) for cell in rows[0])
        found.append(TextTable(headers, rows[1:]))
    return found


def find_text_table(document: Element, *required: tuple[str, ...]) -> TextTable | None:
    for table in text_tables(document):
        if all(table.column(*group) is not None for group in required):
            return table
    return None


def describe_tables(document: Element) -> str:
    found = [" | ".join(table.headers) for table in tables(document)]
    return "; ".join(f"[{h}]" for h in found) if found else "no tables"
