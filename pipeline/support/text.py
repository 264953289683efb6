"""Untrusted text from sources: strip markup and invisible characters before anything reaches
an export, let only absolute http(s) URLs through, decode snapshot bytes, read a page's text.

Everything here is linear-time regex or C-level work (no recursion), so hostile input (megabytes on
one line, tags nested thousands deep, unclosed comments) costs time proportional to its size.
"""

from __future__ import annotations

import codecs
import functools
import re
import threading
import unicodedata
from html import unescape
from urllib.parse import urlsplit

import lxml.etree
import lxml.html

__all__ = [
    "TextDecodeError",
    "clean_text",
    "decode_text",
    "link_url",
    "page_text",
    "safe_url",
    "strip_invisible",
    "url_for_message",
    "url_placeholder",
    "url_problem",
]

ELLIPSIS = "…"
MAX_URL_LENGTH = 2048

# Control, format (zero-width, bidi overrides, soft hyphen, BOM), private-use and surrogate code
# points: never meaningful in a name or a figure, and some are used to disguise text.
_ASCII_INVISIBLE = dict.fromkeys((*range(0x00, 0x09), *range(0x0E, 0x1C), 0x7F))
_MAX_REPLACES = 4  # distinct invisible characters removed one str.replace each; more: one regex

# Markup. Every pattern ends in `|\Z` alternatives so that an unclosed comment, element or tag
# runs to the end of the text (as in a browser) instead of being retried at each later `<`, which
# would be quadratic.
_COMMENT = re.compile(r"<!--(?:-?>|.*?(?:--!?>|\Z))", re.DOTALL)
# Possessive quantifiers: the match never needs to backtrack, so the engine keeps no state for
# it (a megabyte of '<a "' would otherwise cost seconds).
_TAG = re.compile(
    r"""<(?:/?[A-Za-z]|[!?/])(?:[^'">]++|"[^"]*+(?:"|\Z)|'[^']*+(?:'|\Z))*+(?:>|\Z)"""
)


def _hidden_elements(*names: str) -> re.Pattern[str]:
    """An element whose content is never shown, start tag to end tag (or to the end of text)."""
    alternatives = "|".join(names)
    return re.compile(
        rf"<({alternatives})(?![A-Za-z0-9-])[^>]*+(?:>|\Z).*?(?:</\1\s*>|\Z)",
        re.DOTALL | re.IGNORECASE,
    )


_CLEAN_HIDDEN = _hidden_elements("script", "style", "template")
_PAGE_HIDDEN = ("script", "style", "noscript", "template")
_PAGE_HIDDEN_RE = _hidden_elements(*_PAGE_HIDDEN)

# Elements after which a reader sees a break: their text must not run into the next cell's.
_BREAKS = frozenset(
    (
        "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "dialog",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
        "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
        "summary", "table", "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul",
    )
)  # fmt: skip
# A space goes before each such tag (the tag is then removed with the others). Starting the
# pattern with a literal '<' lets the regex engine skip ahead quickly.
_BREAK_TAG = re.compile(rf"<(?=/?(?:{'|'.join(sorted(_BREAKS))})(?![A-Za-z0-9-]))", re.IGNORECASE)
_TAG_START = re.compile(r"(?<!<)<+(?=[A-Za-z!?/])")  # (?<!<): one attempt per run of "<"
_WINDOW, _WINDOW_GROWTH, _WINDOW_MARGIN = 65_536, 16, 256
# Entities so common that decoding them with str.replace is worth a fast path (see _unescape).
_COMMON_ENTITIES = (
    ("&lt;", "<"),
    ("&gt;", ">"),
    ("&quot;", '"'),
    ("&#39;", "'"),
    ("&nbsp;", "\xa0"),
)

_CHARSET = re.compile(r"""charset\s*=\s*["']?([^"';,\s]+)""", re.IGNORECASE)
# WHATWG: a byte order mark decides the encoding, whatever the header says.
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Never valid unescaped in a URL (RFC 3986), and what breaks out of an HTML attribute.
_URL_FORBIDDEN = frozenset('<>"`{}|\\^')
# A placeholder to fill in: upper-case words joined by underscores (ACCOUNT_ID, YOUR_API_KEY).
_PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z][A-Z0-9]*)+")


class TextDecodeError(ValueError):
    """Snapshot bytes that are not valid text in their declared (or default UTF-8) encoding."""

    def __init__(
        self, message: str, *, where: str, encoding: str, offset: int | None = None
    ) -> None:
        super().__init__(message)
        self.where = where
        self.encoding = encoding
        self.offset = offset


@functools.cache
def _invisible() -> re.Pattern[str]:
    """A character class of every Cc, Cf, Co and Cs code point except whitespace, built once.

    Cc, Co and Cs are fixed by the standard; format characters (Cf) are looked up in the planes
    Unicode assigns them in (0, 1 and 14), so the class follows this Python's Unicode version."""
    codes = [*range(0x00, 0x09), *range(0x0E, 0x1C), *range(0x7F, 0x85), *range(0x86, 0xA0)]
    for plane in (0x00000, 0x10000, 0xE0000):
        codes += [code for code in range(plane, plane + 0x10000) if _is_format(code)]
    ranges: list[list[int]] = []
    for code in sorted(codes):
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    # Surrogates and private use; noncharacters such as U+FFFFF are Cn, not Co.
    ranges += [[0xD800, 0xF8FF], [0xF0000, 0xFFFFD], [0x100000, 0x10FFFD]]
    # Merged ranges matter: a class of many single characters makes every search slow.
    members = "".join(
        re.escape(chr(low)) + (f"-{re.escape(chr(high))}" if high > low else "")
        for low, high in ranges
    )
    return re.compile(f"[{members}]")


def _is_format(code: int) -> bool:
    return unicodedata.category(chr(code)) == "Cf"


def strip_invisible(value: str) -> str:
    """Remove control, format, private-use and surrogate characters (Unicode Cc, Cf, Co, Cs),
    keeping whitespace controls (tab, newline, ...) for the caller to collapse."""
    if value.isascii():
        return value.translate(_ASCII_INVISIBLE)
    invisible = _invisible()
    match = invisible.search(value)
    # str.replace per distinct character beats a regex substitution per occurrence (think of a
    # zero-width space between every word); many distinct characters fall back to the regex.
    for _ in range(_MAX_REPLACES):
        if match is None:
            return value
        start = match.start()
        value = value.replace(value[start], "")
        match = invisible.search(value, start)
    return value if match is None else invisible.sub("", value)


def _normalise(value: str) -> str:
    """Invisible characters out, NFC, whitespace collapsed to single spaces, trimmed."""
    value = strip_invisible(value)
    if not unicodedata.is_normalized("NFC", value):
        value = unicodedata.normalize("NFC", value)
    return " ".join(value.split())


def _strip_markup(value: str, hidden: re.Pattern[str], break_with_space: bool = False) -> str:
    value = _COMMENT.sub("", value)
    value = hidden.sub(" ", value)
    if break_with_space:
        value = _BREAK_TAG.sub(" <", value)
    return _TAG.sub("", value)


# html.unescape's own pattern: each match decodes on its own exactly as it does in context, so
# decoding the distinct ones once (cached) gives html.unescape's result about three times faster.
_CHARREF = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")


@functools.lru_cache(maxsize=4096)
def _decode_entity(entity: str) -> str:
    return unescape(entity)


def _decode_charref(match: re.Match[str]) -> str:
    return _decode_entity(match.group())


def _unescape(value: str) -> str:
    """html.unescape, with a faster path when every '&' starts one of a few common entities: each
    '&' begins at most one of them, so replacing them in turn ('&amp;' last, so that its '&'
    never starts a new entity) decodes exactly what html.unescape would."""
    count = value.count("&")
    common = value.count("&amp;") + sum(value.count(entity) for entity, _ in _COMMON_ENTITIES)
    if count != common:
        return _CHARREF.sub(_decode_charref, value)
    for entity, char in _COMMON_ENTITIES:
        value = value.replace(entity, char)
    return value.replace("&amp;", "&")


def shorten(value: str, max_length: int) -> str:
    """At most `max_length` characters, ending in an ellipsis when cut: how a long label is kept
    and how a huge cell is quoted in an error without flooding the log."""
    if len(value) <= max_length:
        return value
    cut = max_length - 1
    # Do not leave a combining mark without its base character.
    while cut > 0 and unicodedata.category(value[cut])[0] == "M":
        cut -= 1
    return value[:cut].rstrip() + ELLIPSIS


def _decode_and_normalise(value: str) -> str:
    """Entities decoded (and markup they spell removed), then _normalise, then any '<' still
    followed by a tag start dropped: removing a tag can join '<' + '<b>script>' into '<script>'."""
    if "&" in value:
        value = _unescape(value)
        if "<" in value:
            value = _strip_markup(value, _CLEAN_HIDDEN)
    value = _normalise(value)
    return _TAG_START.sub("", value) if "<" in value else value


def clean_text(value: str, max_length: int = 500) -> str:
    """Plain text from an untrusted string: tags, comments and script/style/template content
    removed, entities decoded, invisible characters removed, NFC, whitespace collapsed, and at
    most `max_length` characters (a longer text is cut and ends in '…').

    A '<' that does not start a tag ('a < b') is kept. Markup spelled with entities
    ('&lt;script&gt;') is removed too, after decoding: nothing that looks like a tag survives.
    """
    if max_length < 1:
        raise ValueError(f"max_length must be at least 1, got {max_length}")
    # Fast path, the common case by far (a table cell, a label): printable ASCII with nothing
    # that could start a tag or an entity needs only its whitespace collapsed.
    if value.isascii() and "<" not in value and "&" not in value:
        collapsed = " ".join(value.split())
        if collapsed.isprintable():
            return shorten(collapsed, max_length) if len(collapsed) > max_length else collapsed
    # Invisible characters go first so that they cannot disguise a tag ('<\u200bscript>').
    value = strip_invisible(value)
    if "<" in value:
        value = _strip_markup(value, _CLEAN_HIDDEN)
    # Only max_length characters survive. Decoding a prefix is enough once it yields clearly more
    # than that: a cut only changes the last few characters (an entity or a combining sequence
    # split in two, a tag left open), and an open tag swallowing the rest makes the prefix short.
    window = max(_WINDOW, 4 * max_length)
    while True:
        part = value[:window]
        text = _decode_and_normalise(part)
        if len(part) == len(value) or len(text) > max_length + _WINDOW_MARGIN:
            return shorten(text, max_length)
        window *= _WINDOW_GROWTH


# Labels repeat from snapshot to snapshot (a provider's name, its variants): a parser may clean
# each short text once per process. Only short ones, so a hostile page cannot fill the memory.
REMEMBERED_TEXTS = 1 << 16
# characters at most of a remembered text: a cache full of them holds about 25 MB of ASCII, and
# up to 120 MB of texts of other scripts that cleaning changes (both kept, each as UCS-4)
REMEMBERED_LENGTH = 200


@functools.lru_cache(maxsize=REMEMBERED_TEXTS)
def _remembered_clean_text(value: str, max_length: int) -> str:
    return clean_text(value, max_length)


def clean_repeated_text(value: str, max_length: int = 500) -> str:
    """clean_text, remembered for texts of at most REMEMBERED_LENGTH characters."""
    if len(value) > REMEMBERED_LENGTH:
        return clean_text(value, max_length)
    return _remembered_clean_text(value, max_length)


def url_problem(value: object) -> str | None:
    """Why `value` is not a URL Speedbook stores or publishes, or None when it is: the one rule
    for the registry, `snapshot add`, metadata records, redirects and the exports.

    A URL must be absolute http or https with a host and a valid port, at most 2,048 characters,
    with no whitespace, control, invisible or markup characters, and no user name or password
    (it would be published as it is). The reason never repeats the URL, so never a password."""
    if not isinstance(value, str):
        return f"is not text ({type(value).__name__})"
    if len(value) > MAX_URL_LENGTH:
        return f"is longer than {MAX_URL_LENGTH:,} characters"
    for char in value:
        if char.isspace():
            return "contains whitespace"
        if char in _URL_FORBIDDEN:
            return f"contains {char!r}, which a URL may not hold unescaped"
        if unicodedata.category(char)[0] in "CZ":
            return f"contains the invisible or control character U+{ord(char):04X}"
    try:
        parts = urlsplit(value)
        _ = parts.port  # raises ValueError on a malformed port
    except ValueError:
        return "is not a valid URL (a bad port or host)"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "is not an http(s) URL"
    if parts.username is not None or parts.password is not None:
        return "holds a user name or password: put no credential in a URL"
    return None


def url_for_message(value: str, max_length: int = 100) -> str:
    """A URL quoted for an error message: any user name and password masked, shortened."""
    try:
        parts = urlsplit(value)
        if "@" in parts.netloc:
            value = parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]).geturl()
    except ValueError:
        value = re.sub(r"//[^/@]*@", "//***@", value)
    return repr(shorten(value, max_length))


def url_placeholder(value: str) -> str | None:
    """The placeholder of a URL template, or None for an address one can open: a path segment, or
    the value of a query parameter, that is upper-case words joined by underscores, as in the
    Cloudflare catalogue's `.../accounts/ACCOUNT_ID/ai/models/search`. Such a URL is published as
    text (`url_template`), never as a link."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    pieces = [*parts.path.split("/"), *(pair.partition("=")[2] for pair in parts.query.split("&"))]
    return next((piece for piece in pieces if _PLACEHOLDER.fullmatch(piece)), None)


def link_url(value: object) -> str | None:
    """The URL, if it can be a link: safe_url accepts it and it is not a template."""
    url = safe_url(value)
    return url if url is not None and url_placeholder(url) is None else None


def safe_url(value: object) -> str | None:
    """The URL, stripped, if url_problem finds nothing wrong with it; otherwise None."""
    if not isinstance(value, str):
        return None
    url = value.strip()
    return url if url and url_problem(url) is None else None


def _charset(content_type: str | None) -> str:
    if content_type:
        match = _CHARSET.search(content_type)
        if match:
            return match.group(1).strip().lower()
    return "utf-8"


def decode_text(data: bytes, content_type: str | None, where: str) -> str:
    """Snapshot bytes as text: a byte order mark decides the encoding, else the charset in
    `content_type`, else UTF-8; the BOM is dropped. Invalid bytes raise TextDecodeError naming
    `where` (the snapshot) and the byte offset."""
    encoding = _charset(content_type)
    skip = 0
    for bom, bom_encoding in _BOMS:
        if data.startswith(bom):
            encoding, skip = bom_encoding, len(bom)
            break
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise TextDecodeError(
            f"{where}: unknown charset {encoding!r} (content type {content_type!r})",
            where=where,
            encoding=encoding,
        ) from None
    try:
        text = data[skip:].decode(encoding)
    except UnicodeDecodeError as error:
        offset = skip + error.start
        sample = data[offset : offset + 4].hex(" ")
        raise TextDecodeError(
            f"{where}: not valid {encoding} at byte offset {offset} (bytes {sample}): "
            f"{error.reason}",
            where=where,
            encoding=encoding,
            offset=offset,
        ) from None
    except LookupError:  # a codec that is not a text encoding, e.g. 'base64'
        raise TextDecodeError(
            f"{where}: charset {encoding!r} is not a text encoding", where=where, encoding=encoding
        ) from None
    return text.removeprefix("\ufeff")


# The visible text in C (libxslt) rather than a Python loop over every element: a space around
# each block or cell, nothing from hidden elements, text nodes as they are.
_VISIBLE_TEXT_XSLT = f"""<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
<xsl:output method="text" encoding="UTF-8"/>
<xsl:template match="{"|".join(sorted(_BREAKS))}">
<xsl:text> </xsl:text><xsl:apply-templates/><xsl:text> </xsl:text>
</xsl:template>
<xsl:template match="{"|".join(_PAGE_HIDDEN)}"/>
</xsl:stylesheet>"""
_local = threading.local()  # lxml wants an XSLT object used by the thread that compiled it


def _visible_text_transform() -> lxml.etree.XSLT:
    transform = getattr(_local, "transform", None)
    if transform is None:
        transform = _local.transform = lxml.etree.XSLT(lxml.etree.XML(_VISIBLE_TEXT_XSLT))
    return transform


def _page_text_by_regex(document: str) -> str:
    """The fallback for documents lxml gives up on (nesting deeper than libxml2's limit)."""
    return _normalise(_unescape(_strip_markup(document, _PAGE_HIDDEN_RE, True)))


def page_text(html: str) -> str:
    """The visible text of an HTML document, whitespace-collapsed into single spaces: no script,
    style, noscript or template content, no comments, entities decoded, a space wherever a block
    or table cell ends, invisible characters removed, NFC. Claim quotes are matched against it."""
    # lxml refuses NUL and other control characters in its input.
    document = strip_invisible(html)
    if not document.strip():
        return ""
    parser = lxml.html.HTMLParser(
        encoding="utf-8", huge_tree=True, remove_comments=True, remove_pis=True
    )
    try:
        # Bytes with a fixed encoding, so a <meta charset> or <?xml encoding?> cannot override.
        root = lxml.html.document_fromstring(document.encode("utf-8", "replace"), parser=parser)
    except (lxml.etree.ParserError, ValueError):
        return _page_text_by_regex(document)
    if any(entry.level_name == "FATAL" for entry in parser.error_log):
        # libxml2 stops at its nesting limit (2,048 with huge_tree) and drops the rest.
        return _page_text_by_regex(document)
    try:
        text = str(_visible_text_transform()(root))
    except lxml.etree.XSLTError:
        return _page_text_by_regex(document)
    return _normalise(text)
