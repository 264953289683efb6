"""A cheap fingerprint of everything a build reads, so that a build with nothing new can say so
at once instead of re-running the graph.

It hashes the code (pipeline/, sql/, schemas/), the reviewed files, the registry, the as-of bound
and, for each source folder of the snapshot store, its modification time and its outcome log's:
storing a snapshot adds files to the folder (changing its mtime) and a fetch appends to the log.
It reads no snapshot, so it costs a few stat calls per source however large the store grows.
"""

from __future__ import annotations

import hashlib
import os
from datetime import datetime
from pathlib import Path

from pipeline.settings import METADATA_DIR, PROJECT_ROOT, SCHEMAS_DIR, SQL_DIR, Settings

CODE_DIRS = (PROJECT_ROOT / "pipeline", SQL_DIR, SCHEMAS_DIR)
CODE_SUFFIXES = (".py", ".sql", ".json", ".toml", ".csv")


def _stat_line(path: Path) -> str:
    try:
        stat = os.stat(path)
    except OSError:
        return f"{path.name}:missing"
    return f"{path.name}:{stat.st_mtime_ns}:{stat.st_size}"


def _file_hashes(directory: Path) -> list[str]:
    lines = []
    for path in sorted(directory.rglob("*")):
        if path.is_file() and path.suffix in CODE_SUFFIXES and "__pycache__" not in path.parts:
            lines.append(
                f"{path.relative_to(directory)}:{hashlib.sha256(path.read_bytes()).hexdigest()}"
            )
    return lines


def build_fingerprint(settings: Settings, as_of: datetime | None) -> str:
    digest = hashlib.sha256()
    for line in (
        f"as_of:{as_of.isoformat() if as_of else ''}",
        f"registry:{hashlib.sha256(settings.registry.read_bytes()).hexdigest()}",
        *(f"code:{line}" for directory in CODE_DIRS for line in _file_hashes(directory)),
        *(f"metadata:{line}" for line in _file_hashes(METADATA_DIR)),
    ):
        digest.update(line.encode() + b"\n")
    raw = settings.raw_dir
    if raw.is_dir():
        for entry in sorted(os.scandir(raw), key=lambda e: e.name):
            if entry.is_dir():
                digest.update(f"raw:{_stat_line(Path(entry.path))}".encode())
                digest.update(f"log:{_stat_line(Path(entry.path) / '_outcomes.jsonl')}\n".encode())
    return digest.hexdigest()
