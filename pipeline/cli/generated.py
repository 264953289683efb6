"""Files generated from the code and committed (the data dictionary, the export schemas): write
one when it changed, or with --check say whether it is out of date."""

from __future__ import annotations

from pathlib import Path

from pipeline.support.errors import CommandError


def bring_up_to_date(path: Path, text: str, *, check: bool, command: str) -> bool:
    """Write `text` at `path` unless it is there already (with `check`, write nothing); print
    what happened. Returns True when `check` found the file out of date."""
    try:
        existing = path.read_text(encoding="utf-8") if path.exists() else None
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"cannot read {path}: {error}") from None
    if existing == text:
        print(f"{path} {'is up to date' if check else 'unchanged'}")
        return False
    if check:
        print(f"{path} is out of date: run `speedbook {command}`")
        return True
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)  # a reader never sees half a file
    except OSError as error:
        raise CommandError(f"cannot write {path}: {error}") from None
    print(f"wrote {path}")
    return False
