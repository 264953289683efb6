"""The README is a front door and docs/ the library: the README stays short, neither cites commit
hashes (they belong in commit messages), and every relative link in them leads to a file that
exists. Links are read with markdown-it, as a renderer reads them, so code spans and code blocks
are not taken for links."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from conftest import REPO_ROOT
from markdown_it import MarkdownIt

README = REPO_ROOT / "README.md"
DOCS = REPO_ROOT / "docs"
README_MAX_LINES = 250
# The pages this branch writes; the others (identity.md, storage.md, ...) belong to their helpers
# and may quote a third party's commit as provenance (a capture's origin).
OWN_PAGES = (
    "architecture.md",
    "sources.md",
    "releases.md",
    "operations.md",
    "analysts.md",
    "contributing.md",
    "decisions.md",
    "commands.md",
)
# Pages other branches write (bench, deploy, release), linked before they are merged. Empty this
# once those branches are in: from then on a link to any of them must resolve like any other.
PAGES_OF_OTHER_BRANCHES = frozenset(
    {"docs/deployment.md", "docs/exports.md", "docs/methodology.md"}
)
# 7 to 40 hex digits standing alone, with a digit and a letter among them (a word like "defaced"
# or a number like "2026112" is no hash); a snapshot file's hash prefix follows a '-' and is left.
HASH = re.compile(r"(?<![\w/.-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w])")


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def _links(path: Path) -> list[str]:
    """Every link and image target of a markdown file, as markdown-it reads them."""
    targets = []
    for token in MarkdownIt("commonmark").enable("table").parse(path.read_text(encoding="utf-8")):
        for child in [token, *(token.children or [])]:
            if child.type == "link_open":
                targets.append(str(child.attrs["href"]))
            elif child.type == "image":
                targets.append(str(child.attrs["src"]))
    return targets


def _broken(path: Path) -> list[str]:
    broken = []
    for target in _links(path):
        parts = urlsplit(target)
        if parts.scheme or parts.netloc or not parts.path:  # a URL, or an anchor on the page
            continue
        resolved = (path.parent / unquote(parts.path)).resolve()
        if resolved.exists():
            continue
        relative = resolved.relative_to(REPO_ROOT) if resolved.is_relative_to(REPO_ROOT) else None
        if relative is not None and relative.as_posix() in PAGES_OF_OTHER_BRANCHES:
            continue
        broken.append(f"{path.relative_to(REPO_ROOT)}: {target}")
    return broken


def test_the_readme_is_under_250_lines():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines < README_MAX_LINES, f"README.md has {lines} lines: move the depth to docs/"


@pytest.mark.parametrize("path", [README, *(DOCS / name for name in OWN_PAGES)], ids=str)
def test_no_commit_hashes(path: Path):
    found = [
        f"line {number}: {match.group()}"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for match in HASH.finditer(line)
    ]
    assert found == [], f"{path.name} cites commit hashes (keep them in commit messages): {found}"


def test_every_relative_link_leads_to_a_file():
    broken = [link for page in _pages() for link in _broken(page)]
    assert broken == [], "links to nothing:\n" + "\n".join(broken)


def test_the_checks_catch_what_they_look_for(tmp_path: Path):
    """The hash pattern and the link reader, on text written to fail them."""
    assert HASH.findall("merged at 9f9b0f9, see c33b8d8554df7c7da12928a09048fc99a6f59d8f") == [
        "9f9b0f9",
        "c33b8d8554df7c7da12928a09048fc99a6f59d8f",
    ]
    assert HASH.findall("a defaced page, 2026112 rows, 20261129T000000Z-0d8e49656f17.html") == []
    page = tmp_path / "page.md"
    page.write_text(
        "[here](missing.md) ![img](gone.png) [web](https://example.org/x) [top](#top)\n"
        "`[code](not-a-link.md)`\n\n    [block](not-a-link-either.md)\n",
        encoding="utf-8",
    )
    assert _links(page) == ["missing.md", "gone.png", "https://example.org/x", "#top"]
