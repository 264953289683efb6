"""Publishing releases: immutable version folders, switched into place atomically.

A release is `exports/<version>/` with the three exports, datapackage.json and the schemas.
Versions are CalVer of the data date (YYYY.MM.DD, then .1, .2 for later releases on one date).
A release is written into a temporary folder, validated, fsynced and renamed into place; only
then is `exports/latest` (a symlink) switched, itself by an atomic rename. A crash at any moment
leaves every published release complete and `latest` pointing at one of them.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pipeline.release.contracts import EXPORT_FILES, check, schema_path
from pipeline.release.datapackage import build_datapackage
from pipeline.release.jsonio import dumps

VERSION = re.compile(r"^(\d{4})\.(\d{2})\.(\d{2})(?:\.(\d+))?$")
LATEST = "latest"


def version_key(version: str) -> tuple[int, int, int, int]:
    match = VERSION.match(version)
    if match is None:
        raise ValueError(f"not a release version: {version!r}")
    year, month, day, n = match.groups()
    return int(year), int(month), int(day), int(n or 0)


def list_versions(exports_dir: Path) -> list[str]:
    """Published versions, oldest first (temporary folders are never listed)."""
    if not exports_dir.is_dir():
        return []
    found = [
        p.name
        for p in exports_dir.iterdir()
        if p.is_dir() and not p.is_symlink() and VERSION.match(p.name)
    ]
    return sorted(found, key=version_key)


def latest_version(exports_dir: Path) -> str | None:
    link = exports_dir / LATEST
    if link.is_symlink():
        target = os.readlink(link)
        if VERSION.match(target) and (exports_dir / target).is_dir():
            return target
    versions = list_versions(exports_dir)
    return versions[-1] if versions else None


def base_version(data_date: datetime) -> str:
    return data_date.strftime("%Y.%m.%d")


def next_version(data_date: datetime, existing: list[str]) -> str:
    base = base_version(data_date)
    same_day = [v for v in existing if v == base or v.startswith(base + ".")]
    if not same_day:
        return base
    return f"{base}.{max(version_key(v)[3] for v in same_day) + 1}"


def _fsync_dir(path: Path) -> None:
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


@dataclass(frozen=True)
class PublishResult:
    version: str
    published: bool  # False when the content equals an existing release of the same data date
    path: Path
    message: str


Render = Callable[[str], dict[str, dict[str, Any]]]


def render_files(documents: dict[str, dict[str, Any]]) -> dict[str, bytes]:
    """Validate every export against its schema, then serialise it; a contract failure raises
    before anything is written."""
    for name, document in documents.items():
        check(name, document)
    files = {name: dumps(document) for name, document in documents.items()}
    files["datapackage.json"] = dumps(
        build_datapackage({n: files[n] for n in EXPORT_FILES}, documents)
    )
    return files


def _same_content(release: Path, files: dict[str, bytes]) -> bool:
    return all(
        (release / name).is_file() and (release / name).read_bytes() == data
        for name, data in files.items()
    )


@dataclass(frozen=True)
class Plan:
    version: str
    is_new: bool  # False when a release of the same data date already has exactly this content
    files: dict[str, bytes]


def plan_release(exports_dir: Path, data_date: datetime, render: Render) -> Plan:
    """Decide the version: an existing release of the same data date with identical content is
    reused (nothing new), otherwise the next free CalVer of the data date."""
    existing = list_versions(exports_dir)
    base = base_version(data_date)
    for version in reversed([v for v in existing if v == base or v.startswith(base + ".")]):
        files = render_files(render(version))
        if _same_content(exports_dir / version, files):
            return Plan(version, False, files)
    version = next_version(data_date, existing)
    return Plan(version, True, render_files(render(version)))


def point_latest_at_newest(exports_dir: Path) -> None:
    """`latest` follows the newest data date, whatever order releases were published in."""
    versions = list_versions(exports_dir)
    link = exports_dir / LATEST
    if versions and (not link.is_symlink() or os.readlink(link) != versions[-1]):
        tmp = exports_dir / f".latest-{os.getpid()}"
        tmp.unlink(missing_ok=True)
        os.symlink(versions[-1], tmp)
        os.replace(tmp, link)
        _fsync_dir(exports_dir)


def write_release(exports_dir: Path, version: str, files: dict[str, bytes]) -> Path:
    """Write a complete release into a temporary folder, then rename it into place."""
    exports_dir.mkdir(parents=True, exist_ok=True)
    target = exports_dir / version
    if target.exists():
        raise FileExistsError(f"release {version} already exists; releases are immutable")
    staging = Path(tempfile.mkdtemp(prefix=f".tmp-{version}-", dir=exports_dir))
    try:
        for name, data in sorted(files.items()):
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            _write(path, data)
        (staging / "schemas").mkdir(exist_ok=True)
        for name in EXPORT_FILES:
            shutil.copyfile(schema_path(name), staging / "schemas" / schema_path(name).name)
        for directory in {p.parent for p in staging.rglob("*")} | {staging}:
            _fsync_dir(directory)
        os.chmod(staging, 0o755)  # mkdtemp makes it private; a release is for everyone to read
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _fsync_dir(exports_dir)
    return target


def publish(exports_dir: Path, plan: Plan) -> PublishResult:
    if not plan.is_new:
        point_latest_at_newest(exports_dir)
        return PublishResult(
            plan.version,
            False,
            exports_dir / plan.version,
            f"nothing new: identical to release {plan.version}",
        )
    path = write_release(exports_dir, plan.version, plan.files)
    point_latest_at_newest(exports_dir)
    return PublishResult(plan.version, True, path, f"published release {plan.version}")
