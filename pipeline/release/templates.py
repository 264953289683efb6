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


def escape_markdown(value: Any) -> str:
    """A value as Markdown text: None as a dash, booleans as yes/no, whitespace (line breaks
    included) collapsed to single spaces, and markup characters backslash-escaped."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = " ".join(str(value).split())
    return _MARKDOWN_SPECIAL.sub(lambda match: "\\" + match.group(0), text)


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


def markdown_table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table, every cell escaped, as lines followed by a blank one."""
    text = render_markdown_template("table.md.jinja", headers=headers, rows=rows)
    return [*text.splitlines(), ""]
