"""Where the warehouse keeps what it knows about its sources that is not corpus.

The snapshot store (`<warehouse>/raw/`) holds the bytes sources published and is committed; the
fetch logs (`<warehouse>/state/fetch/<source_id>.jsonl`, pipeline/raw/outcomes.py) say when each
source was last asked and what happened, which is this machine's state: beside the store, never
in it, and ignored by git. Kept free of imports so the build fingerprint can read it cheaply."""

from __future__ import annotations

from pathlib import Path


def fetch_log_dir(raw_dir: Path) -> Path:
    """The fetch logs' folder of the warehouse whose snapshot store is `raw_dir`."""
    return raw_dir.parent / "state" / "fetch"
