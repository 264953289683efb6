"""The last published release, as the next publish needs it: kept by the build (in the warehouse
folder, `.last-release.json`) so that a publish at every poll does not read, hash and parse the
30 MB release before it again to compare with (0.7 s of one more poll at 90 days).

It holds, for one version, each export's envelope (its top-level texts, numbers, booleans and
nulls, and its `snapshots`: all the plan, the citation check and `latest` read of a release they
do not compare) and the changelog's view of it (`changelog.ReleaseView`). It is a cache, used
only while it describes that very release: every file of the release folder the one the publish
wrote (the same inode, size and modification time; an edit or a replaced file changes them), and
the view made by the code now running (a digest of the changelog's and the contract's sources).
Otherwise (no file, another version or folder, a file touched, damaged JSON, other code) the
release is read whole, as before. JSON, read by orjson: a hostile file can only be refused.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from pipeline.release import changelog, contract
from pipeline.release.changelog import ReleaseView

LAST_RELEASE = ".last-release.json"
FORMAT = 1
MAX_BYTES = 1 << 30  # a digest is about half of the release's inference.json
Documents = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class Digest:
    version: str
    envelopes: Documents
    view: ReleaseView


def envelopes(documents: Mapping[str, Mapping[str, Any]]) -> Documents:
    """Each document's top-level texts, numbers, booleans and nulls, and its `snapshots`."""
    return {
        name: {
            key: value
            for key, value in document.items()
            if key == "snapshots" or isinstance(value, str | int | float | bool | None)
        }
        for name, document in documents.items()
    }


def _code() -> str:
    """What the views are made by: the changelog's and the contract's sources."""
    digest = hashlib.sha256(str(FORMAT).encode())
    sources = [Path(changelog.__file__), *sorted(Path(contract.__file__).parent.glob("*.py"))]
    for path in sources:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _identity(folder: Path, names: Iterable[str]) -> dict[str, list[int]]:
    found = {}
    for name in names:
        info = os.stat(folder / name, follow_symlinks=False)
        found[name] = [info.st_ino, info.st_size, info.st_mtime_ns]
    return found


def _pairs(index: Mapping[Any, Any]) -> list[list[Any]]:
    return [[list(key) if isinstance(key, tuple) else key, value] for key, value in index.items()]


def _keyed(pairs: list[list[Any]]) -> dict[Any, Any]:
    return {tuple(key) if isinstance(key, list) else key: value for key, value in pairs}


def save(
    path: Path, folder: Path, files: Iterable[str], documents: Documents, view: ReleaseView
) -> bool:
    """Keep the digest of the release in `folder` (its `files`: the exports and whatever else
    makes it complete) at `path`, replacing the last one; False when it cannot be written (a
    full disk, a number JSON cannot hold), which costs the next publish a read of the release,
    nothing more. Written whole, then renamed: a reader finds the old digest or the new one
    (no fsync: a digest lost to a crash only means the same). The caller holds the warehouse's
    build lock: what a killed build left half-written is deleted."""
    for leftover in path.parent.glob(f"{path.name}.*.tmp"):  # of a build killed while saving
        leftover.unlink(missing_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(orjson.dumps(_record(folder, files, documents, view)))
        os.replace(temporary, path)
    except (OSError, TypeError, ValueError):  # orjson's JSONEncodeError is a TypeError
        temporary.unlink(missing_ok=True)
        return False
    return True


def _record(
    folder: Path, files: Iterable[str], documents: Documents, view: ReleaseView
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "code": _code(),
        "version": view.info["version"],
        "folder": str(folder.resolve()),
        "files": _identity(folder, files),
        "envelopes": envelopes(documents),
        "view": {
            "info": view.info,
            "indexes": {name: _pairs(index) for name, index in view.indexes.items()},
            "headline_count": view.headline_count,
            "headlines": view.headlines,
            "snapshots": view.snapshots,
        },
    }


def load(path: Path, exports_dir: Path, files: Iterable[str]) -> Digest | None:
    """The digest at `path` when it describes a release of `exports_dir` as it is on disk (each
    of its `files`, as `save` was given them), and was made by this code; None otherwise. Like
    the warehouse beside it, the file is the build's own state: its envelopes and view are taken
    as written once the release's files and the code are found to be those it names."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        record = orjson.loads(path.read_bytes())
        version = record["version"]
        folder = exports_dir / version
        if (
            Path(version).name != version  # a folder name, not a path out of exports_dir
            or record["format"] != FORMAT
            or record["code"] != _code()
            or sorted(record["files"]) != sorted(files)
            or Path(record["folder"]) != folder.resolve()
            or record["files"] != _identity(folder, record["files"])
        ):
            return None
        view = record["view"]
        return Digest(
            version=version,
            envelopes=record["envelopes"],
            view=ReleaseView(
                info=view["info"],
                indexes={name: _keyed(pairs) for name, pairs in view["indexes"].items()},
                headline_count=view["headline_count"],
                headlines=view["headlines"],
                snapshots=view["snapshots"],
            ),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
