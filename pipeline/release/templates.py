"""The release's Jinja2 templates (package data in pipeline/release/templates/).

Two environments, each escaping every value a template writes, so nothing from a source becomes
markup: HTML pages autoescape (the preview page), and Markdown files escape Markdown in each value
(CHANGELOG.md): `[x](javascript:alert(1))` or `![p](https://tracker/p.png)` in a catalogue id
stay text. Links in HTML go through the `link_url` filter (absolute http(s) URLs only, and never
a template with a placeholder to fill in, such as ACCOUNT_ID).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import jinja2

from pipeline.support.text import link_url

# CommonMark lets any ASCII punctuation be backslash-escaped. These are the characters that can
# open inline markup in a line of text or a table cell (links and images, emphasis, code, raw
# HTML and autolinks, entities, strikethrough, math) or end a cell; the others (#, >, -, +, 1.)
# act only at the start of a line, which a value never is.
_MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]<&~$|]|_(?![A-Za-z0-9])|(?<![A-Za-z0-9])_")


class MarkdownText(str):
    """Markdown this module has already escaped value by value (a table): written as it is."""


def escape_markdown(value: Any) -> str:
    """A value as Markdown text: None as a dash, booleans as yes/no, whitespace (line breaks
    included) collapsed to single spaces, and markup characters backslash-escaped."""
    if isinstance(value, MarkdownText):
        return value
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = " ".join(str(value).split())
    return _MARKDOWN_SPECIAL.sub(r"\\\g<0>", text)


def _href(value: Any) -> str | None:
    return link_url(value) if isinstance(value, str) else None


@cache
def _environment(kind: str) -> jinja2.Environment:
    loader = jinja2.PackageLoader("pipeline.release", "templates")
    options: dict[str, Any] = {
        "loader": loader,
        "undefined": jinja2.StrictUndefined,  # a misspelt name fails, never renders as ''
        "trim_blocks": True,
        "lstrip_blocks": True,
        "keep_trailing_newline": True,
    }
    if kind == "html":
        environment = jinja2.Environment(autoescape=True, **options)
        environment.filters["link_url"] = _href
    else:
        # autoescape is HTML's; Markdown's escaping is applied to every value instead
        environment = jinja2.Environment(autoescape=False, finalize=escape_markdown, **options)
    return environment


def render_html_template(name: str, **context: Any) -> str:
    return _environment("html").get_template(name).render(**context)


def render_markdown_template(name: str, **context: Any) -> str:
    """A Markdown file: every value escaped, one trailing newline."""
    text = _environment("markdown").get_template(name).render(**context)
    return text.rstrip("\n") + "\n"


def table_text(headers: list[str], rows: list[list[Any]]) -> MarkdownText:
    """A Markdown table, every header and cell escaped, for a template to write as it is.
    Written here rather than by a template: a changelog after one OpenRouter poll has 18,000
    rows of ten cells, and Jinja's per-value work (a loop object, a finalize call, an output
    chunk per cell) was 1.2 s of it. A value repeated across rows is escaped once."""
    escaped: dict[tuple[type, Any], str] = {}

    def cell(value: Any) -> str:
        try:
            key = (type(value), value)
            if key not in escaped:
                escaped[key] = escape_markdown(value)
            return escaped[key]
        except TypeError:  # not hashable
            return escape_markdown(value)

    def line(values: list[Any]) -> str:
        return "| " + " | ".join(cell(value) for value in values) + " |"

    lines = [line(headers), "|" + "---|" * len(headers), *(line(row) for row in rows)]
    return MarkdownText("\n".join(lines))


def markdown_table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table, every cell escaped, as lines followed by a blank one."""
    return [*table_text(headers, rows).split("\n"), ""]
