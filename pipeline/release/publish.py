"""Publishing releases: immutable version folders, switched into place atomically.

A release is `exports/<version>/`: the three exports, datapackage.json, CHANGELOG.md,
changes.json, the schemas, and whatever the `populate` callbacks add. Versions are CalVer of the
data date (YYYY.MM.DD, then .1, .2 for later releases on one date).

Crash safety, step by step (a SIGKILL may land between any two of them):
1. take an flock on the `exports/` folder itself (the kernel drops it when the holder dies, and
   it leaves no file behind), then delete what killed publishers left behind (`.tmp-*`
   folders, `.latest-*` links): under the lock nobody else can be writing them;
2. write every file into `exports/.tmp-*` (made before the version is decided, so that work
   such as the Parquet files can begin at once), fsync, check it is complete and valid;
3. rename the folder to `exports/<version>` (atomic; a folder under a version name is therefore
   always complete) and fsync the parent;
4. point a new symlink at the newest complete release and rename it over `exports/latest`
   (atomic), so `latest` always names a complete release.
Listing ignores dot-folders, so a leftover `.tmp-*` is never taken for a release.

A build hands in a check of the snapshots a release cites (`SnapshotCheck`: still stored, not
withdrawn, its bytes still those of the sha256 the release records). A release is published
only if every snapshot it cites passes, and `latest` passes over a release that cites one that
no longer does. A build of every snapshot (not --as-of) takes `latest` for its content, even
from a newer release whose snapshots it can no longer use: publishing its content again under
a new version when it equals an older release.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from pipeline.release.changelog import (
    ReleaseView,
    UnreadableRelease,
    compare,
    parse_release,
    render_markdown,
    summary_line,
    view_of,
)
from pipeline.release.contract import Release
from pipeline.release.contracts import EXPORT_FILES, check, schema_path
from pipeline.release.datapackage import build_datapackage, resource_hash
from pipeline.release.jsonio import dumps
from pipeline.support.faults import pause_point
from pipeline.support.locking import wait_for_flock

VERSION = re.compile(r"^(\d{4})\.(\d{2})\.(\d{2})(?:\.(\d+))?$")
LATEST = "latest"
DATAPACKAGE = "datapackage.json"
CHANGELOG_MD = "CHANGELOG.md"
CHANGES_JSON = "changes.json"
TMP_PREFIX = ".tmp-"
LATEST_TMP_PREFIX = ".latest-"
# Test hook (pipeline.support.faults.pause_point, read from its own variable):
# "<point>:<marker file>" makes publish write the marker and sleep at that point, so a test can
# SIGKILL it there.
# Points: writing, written, populated, renamed, switching.
PAUSE_ENV = "SPEEDBOOK_TEST_PUBLISH_PAUSE"

Documents = dict[str, dict[str, Any]]
Render = Callable[[str], Documents]
# Writes more release content (Parquet, a preview page...) into the staging folder before the
# rename: populate(staging_dir, version). It must not change the files already there.
Populate = Callable[[Path, str], None]


class Work(Protocol):
    """Work going on beside the publish (pipeline/support/apart.py's Apart is one)."""

    def wait(self) -> object: ...  # until it ends; raises what it failed with

    def stop(self) -> None: ...  # end it now, without waiting


# Begins writing more release content into the staging folder (begin(staging_dir)) as soon as
# the publish holds its lock, before the version is decided; the plan and the changelog are
# worked out meanwhile, and the release waits for the work before its check. When nothing is
# published, the work is stopped. It must not touch the files a populate callback or the publish
# writes.
Begin = Callable[[Path], Work]
# Why a snapshot a release cites (by id and the sha256 the release records) can no longer be
# vouched for, or None when it can.
SnapshotCheck = Callable[[str, str], str | None]
# The documents of a release folder by version, None when it is damaged (read once per publish).
ReadRelease = Callable[[str], "Documents | None"]


class PublishError(RuntimeError):
    """A release could not be published; nothing visible changed."""


class ReleaseDamaged(ValueError):
    """A release folder is incomplete or its files do not match its datapackage.json."""


def version_key(version: str) -> tuple[int, int, int, int]:
    match = VERSION.match(version)
    if match is None:
        raise ValueError(f"not a release version: {version!r}")
    year, month, day, n = match.groups()
    return int(year), int(month), int(day), int(n or 0)


def list_versions(exports_dir: Path) -> list[str]:
    """Published versions, oldest first (temporary folders and `latest` are never listed)."""
    if not exports_dir.is_dir():
        return []
    found = [
        p.name
        for p in exports_dir.iterdir()
        if VERSION.match(p.name) and p.is_dir() and not p.is_symlink()
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


def _same_date(versions: Sequence[str], base: str) -> list[str]:
    return [v for v in versions if v == base or v.startswith(base + ".")]


def next_version(data_date: datetime, existing: list[str]) -> str:
    base = base_version(data_date)
    same_day = _same_date(existing, base)
    if not same_day:
        return base
    return f"{base}.{max(version_key(v)[3] for v in same_day) + 1}"


# --- reading and checking release folders --------------------------------------------------------


def checked_exports(folder: Path) -> tuple[list[str], dict[str, bytes]]:
    """Why a folder is not a complete release (datapackage.json missing or unreadable, or an
    export missing, unreadable or not the bytes datapackage.json records; empty when complete),
    and the bytes of the exports it could read, so a reader need not read them again."""
    try:
        package = json.loads((folder / DATAPACKAGE).read_text(encoding="utf-8"))
        resources = {r["path"]: r for r in package["resources"]}
    except FileNotFoundError:
        return [f"{DATAPACKAGE} is missing"], {}
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        return [f"{DATAPACKAGE} is unreadable: {error}"], {}
    found, exports = [], {}
    for name in EXPORT_FILES:
        try:
            data = (folder / name).read_bytes()
        except FileNotFoundError:
            found.append(f"{name} is missing")
            continue
        except OSError as error:
            found.append(f"{name} is unreadable: {error}")
            continue
        recorded = resources.get(name, {}).get("hash")
        # hashing a ~20 MB inference.json is what checking a release costs: callers check once
        if recorded != resource_hash(data):
            found.append(f"{name} does not match the sha256 in {DATAPACKAGE}")
        exports[name] = data
    return found, exports


def release_problems(folder: Path) -> list[str]:
    return checked_exports(folder)[0]


def is_complete(folder: Path) -> bool:
    return folder.is_dir() and not release_problems(folder)


def read_exports(folder: Path) -> dict[str, bytes]:
    """The exports' bytes of a release folder, checked for completeness first."""
    if not folder.is_dir():
        raise ReleaseDamaged(f"{folder} is not a folder")
    found, exports = checked_exports(folder)
    if found:
        raise ReleaseDamaged(f"{folder}: " + "; ".join(found))
    return exports


def decode_exports(folder: Path, exports: Mapping[str, bytes]) -> Documents:
    """The documents of the exports' bytes read from `folder` (read_exports)."""
    try:
        return {name: json.loads(exports[name].decode("utf-8")) for name in EXPORT_FILES}
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ReleaseDamaged(f"{folder}: not valid JSON: {error}") from None


def read_release(folder: Path) -> Documents:
    """The three export documents of a release folder, checked for completeness first."""
    return decode_exports(folder, read_exports(folder))


# --- rendering and planning ---------------------------------------------------------------------


def render_files(documents: Documents) -> dict[str, bytes]:
    """Validate every export against its schema, then serialise it; a contract failure raises
    before anything is written."""
    for name, document in documents.items():
        check(name, document)
    files = {name: dumps(document) for name, document in documents.items()}
    files[DATAPACKAGE] = dumps(build_datapackage({n: files[n] for n in EXPORT_FILES}, documents))
    return files


def _content(documents: Documents) -> Documents:
    """What a release says: its documents without the --as-of bound, a build setting (a build of
    the same snapshots under another bound, or none, says the same)."""
    return {name: {k: v for k, v in d.items() if k != "as_of"} for name, d in documents.items()}


@dataclass(frozen=True)
class Plan:
    version: str
    is_new: bool  # False when the newest release of the data date has exactly this content
    files: dict[str, bytes]  # what to publish; none when nothing is new
    documents: Documents  # the stored release's when nothing is new


def plan_release(
    exports_dir: Path,
    data_date: datetime,
    render: Render,
    *,
    new: bool = False,
    read: ReadRelease | None = None,
) -> Plan:
    """Decide the version. When the newest release of the same data date says the same (its
    documents equal these, apart from the `as_of` bound), nothing is new; otherwise the next free
    CalVer of the data date. Releases are compared by content, never by bytes. Only the newest
    one is compared: content equal to an older same-date release (a reverted change) is a new
    release, because it differs from what the newest one says. A damaged newest release says
    nothing: a new version. `new`: a new version whatever the content (the release `latest`
    names must be replaced). `read`: the publish's reader of release folders."""
    existing = list_versions(exports_dir)
    same_date = _same_date(existing, base_version(data_date))
    if same_date and not new:
        newest = same_date[-1]
        stored = (read or _reader(exports_dir))(newest)
        if stored is not None and _content(stored) == _content(render(newest)):
            return Plan(newest, False, {}, stored)
    version = next_version(data_date, existing)
    documents = render(version)
    return Plan(version, True, render_files(documents), documents)


def cited_snapshots(documents: Documents) -> dict[str, str]:
    """Every snapshot the exports cite: id -> the sha256 they record for it."""
    cited: dict[str, str] = {}
    for document in documents.values():
        for ref in document.get("snapshots") or ():
            if isinstance(ref, Mapping) and isinstance(ref.get("id"), str):
                cited[ref["id"]] = str(ref.get("sha256") or "")
    return cited


def unusable_citations(documents: Documents, check: SnapshotCheck) -> list[str]:
    """`<snapshot id>: <why>` for each cited snapshot the check refuses, by id."""
    return [
        f"{snapshot_id}: {why}"
        for snapshot_id, sha256 in sorted(cited_snapshots(documents).items())
        if (why := check(snapshot_id, sha256)) is not None
    ]


def _reader(exports_dir: Path) -> ReadRelease:
    """Release folders read (hashed and parsed) at most once per publish."""
    seen: dict[str, Documents | None] = {}

    def read(version: str) -> Documents | None:
        if version not in seen:
            try:
                seen[version] = read_release(exports_dir / version)
            except ReleaseDamaged:
                seen[version] = None
        return seen[version]

    return read


def _checked_once(check: SnapshotCheck) -> SnapshotCheck:
    """`check`, asked at most once per snapshot in a publish (it reads and hashes the bytes)."""
    seen: dict[tuple[str, str], str | None] = {}

    def checked(snapshot_id: str, sha256: str) -> str | None:
        if (snapshot_id, sha256) not in seen:
            seen[snapshot_id, sha256] = check(snapshot_id, sha256)
        return seen[snapshot_id, sha256]

    return checked


# --- writing -------------------------------------------------------------------------------------


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


def clean_leftovers(exports_dir: Path) -> list[str]:
    """Delete what a killed publisher left: `.tmp-*` folders and `.latest-*` links. Call only
    while holding the publish lock, so none of them belongs to a live publisher."""
    removed = []
    if not exports_dir.is_dir():
        return removed
    for path in sorted(exports_dir.iterdir()):
        if path.name.startswith(TMP_PREFIX) and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
            removed.append(path.name)
        elif path.name.startswith(LATEST_TMP_PREFIX) and path.is_symlink():
            path.unlink()
            removed.append(path.name)
    return removed


def point_latest_at_newest(
    exports_dir: Path,
    checked: str | None = None,
    usable: Callable[[str], bool] | None = None,
) -> str | None:
    """`latest` follows the newest complete release (by version), whatever order releases were
    published in; returns the version it names. `checked` names a release the caller has just
    verified (write_release checks it before the rename), so it is not hashed again. With
    `usable` (complete, and every snapshot it cites still good), `latest` passes over releases
    that fail it; when none passes, it names the newest complete one."""
    # newest first, so only the releases above the newest complete one are ever hashed
    newest_first = list(reversed(list_versions(exports_dir)))
    newest = None
    if usable is not None:
        newest = next((v for v in newest_first if v == checked or usable(v)), None)
    if newest is None:
        newest = next(
            (v for v in newest_first if v == checked or is_complete(exports_dir / v)), None
        )
    return point_latest_at(exports_dir, newest)


def point_latest_at(exports_dir: Path, version: str | None) -> str | None:
    """Switch `latest` to `version` (a complete release) by renaming a new symlink over it."""
    link = exports_dir / LATEST
    if link.exists() and not link.is_symlink():
        raise PublishError(f"{link} is not a symlink; move it away so it can be switched")
    if version is None or (link.is_symlink() and os.readlink(link) == version):
        return version
    tmp = exports_dir / f"{LATEST_TMP_PREFIX}{os.getpid()}"
    tmp.unlink(missing_ok=True)
    os.symlink(version, tmp)
    pause_point("switching", PAUSE_ENV)
    os.replace(tmp, link)
    _fsync_dir(exports_dir)
    return version


def _staging_folder(exports_dir: Path) -> Path:
    """A temporary folder to write a release into, renamed to its version when complete."""
    exports_dir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=exports_dir))


def _abandon(staging: Path, begun: Sequence[Work]) -> None:
    for work in begun:
        work.stop()  # before the folder goes: nothing may write into it afterwards
    shutil.rmtree(staging, ignore_errors=True)


def write_release(
    exports_dir: Path,
    version: str,
    files: dict[str, bytes],
    populate: Sequence[Populate] = (),
    *,
    staging: Path | None = None,
    begun: Sequence[Work] = (),
) -> Path:
    """Write a complete release into a temporary folder (`staging`, made by _staging_folder, in
    which `begun` work writes already), check it, then rename it into place."""
    target = exports_dir / version
    if target.exists():
        raise FileExistsError(f"release {version} already exists; releases are immutable")
    if staging is None:
        staging = _staging_folder(exports_dir)
    try:
        for index, (name, data) in enumerate(sorted(files.items())):
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            _write(path, data)
            if index == 0:
                pause_point("writing", PAUSE_ENV)
        (staging / "schemas").mkdir(exist_ok=True)
        for name in EXPORT_FILES:
            shutil.copyfile(schema_path(name), staging / "schemas" / schema_path(name).name)
        pause_point("written", PAUSE_ENV)
        for callback in populate:
            callback(staging, version)
        for work in begun:
            work.wait()
        # the exports were checked against their schemas when rendered; the hashes prove these
        # are those bytes, whatever a populate callback did
        found = release_problems(staging)
        if found:
            raise PublishError(f"release {version} failed its final check: " + "; ".join(found))
        for path in staging.rglob("*"):
            # a file with other links is an earlier release's (its unchanged Parquet days),
            # made durable when that release was published; the folder's fsync keeps the link.
            # At 90 days of polls a release links 89 of them.
            info = path.lstat()
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                with open(path, "rb") as handle:
                    os.fsync(handle.fileno())
        for directory in {p.parent for p in staging.rglob("*")} | {staging}:
            _fsync_dir(directory)
        os.chmod(staging, 0o755)  # mkdtemp makes it private; a release is for everyone to read
        pause_point("populated", PAUSE_ENV)
        os.rename(staging, target)
    except BaseException:
        _abandon(staging, begun)
        raise
    _fsync_dir(exports_dir)
    pause_point("renamed", PAUSE_ENV)
    return target


# --- the whole step ------------------------------------------------------------------------------


@contextmanager
def publish_lock(exports_dir: Path, wait_seconds: float = 60.0) -> Iterator[None]:
    """One publisher at a time per exports folder: an flock on the folder itself."""
    handle = os.open(exports_dir, os.O_RDONLY)
    try:
        if not wait_for_flock(handle, wait_seconds):
            raise PublishError(
                f"another build is publishing into {exports_dir}; try again when it ends"
            )
        yield
    finally:
        os.close(handle)


def previous_release(
    exports_dir: Path,
    version: str,
    *,
    read: ReadRelease | None = None,
    usable: Callable[[Documents], bool] | None = None,
) -> tuple[str | None, Release | None]:
    """The newest complete release before `version`, parsed; (None, None) for the first. Walks
    newest-first and stops at the first complete one, so each publish hashes one earlier release
    (once: reading it is the check), however long the history grows. With `usable`, a release
    it refuses (one citing a snapshot no longer good, which `latest` passed over) is skipped."""
    read = read or _reader(exports_dir)
    for candidate in reversed(list_versions(exports_dir)):
        if version_key(candidate) >= version_key(version):
            continue
        documents = read(candidate)
        if documents is None or (usable is not None and not usable(documents)):
            continue  # damaged (a hand edit, a bad disk): compare with the one before it
        try:
            return candidate, parse_release(documents)
        except UnreadableRelease:
            continue
    return None, None


@dataclass(frozen=True)
class Written:
    """What a publish wrote, still in memory: the files it wrote into the folder by name (the
    exports, datapackage.json, CHANGELOG.md, changes.json), the exports parsed and the changes, so
    the history can record the release without parsing 50 MB of it back."""

    files: Mapping[str, bytes]
    release: Release
    changes: dict[str, Any]
    view: ReleaseView  # what the changelog read of `release` (its figures, for the history)


@dataclass(frozen=True)
class PublishResult:
    version: str
    published: bool  # False when the content equals the newest release of the same data date
    path: Path
    message: str
    previous: str | None = None  # the release the changelog compares with
    summary: str = ""  # one line: what changed since `previous`
    cleaned: tuple[str, ...] = ()  # leftovers of killed publishers that were deleted
    written: Written | None = None  # what was published, when it was


def publish_release(
    exports_dir: Path,
    data_date: datetime,
    render: Render,
    populate: Sequence[Populate] = (),
    *,
    lock_wait: float = 60.0,
    notes: Sequence[Mapping[str, Any]] = (),
    check: SnapshotCheck | None = None,
    take_latest: bool = False,
    parsed: Callable[[str], Release] | None = None,
    begin: Sequence[Begin] = (),
) -> PublishResult:
    """Plan, write and switch one release under the publish lock. A release with new content
    gets CHANGELOG.md and changes.json against the newest complete release before it, with the
    build's `notes` (snapshots it could not use or that were withdrawn: each a mapping with a
    `text`). With `check`, nothing citing a snapshot it refuses is published, and `latest`
    passes over releases that cite one.

    `take_latest` (a build of every snapshot, not an --as-of one): this build's content becomes
    `latest`, even when its data date is older than the release `latest` names (that release's
    newest snapshots were rejected, damaged or withdrawn since). Content equal to an older
    release is then published again under a new version, its changelog against the release it
    replaces as `latest`, so that consumers see what changed.

    `parsed(version)`: `render(version)` parsed into the contract's models, when the caller has
    it (parsing a 30 MB export takes about half a second, and its populate callbacks need it too);
    parsed here when None.

    `begin`: work on more release content begun as soon as the lock is held, beside the plan
    and the changelog (the Parquet files, written by a process of their own), and stopped when
    nothing is published."""
    exports_dir.mkdir(parents=True, exist_ok=True)
    with publish_lock(exports_dir, lock_wait):
        cleaned = tuple(clean_leftovers(exports_dir))
        read = _reader(exports_dir)
        checked = _checked_once(check) if check is not None else None

        def cites_only_good(documents: Documents) -> bool:
            return checked is None or not unusable_citations(documents, checked)

        def usable(version: str) -> bool:
            documents = read(version)
            return documents is not None and cites_only_good(documents)

        # the staging folder is made, and the work beside the changelog begun, before the
        # version is known: the plan reads and compares 30 MB, which the work need not wait for
        staging = _staging_folder(exports_dir)
        begun: list[Work] = []
        try:
            for start in begin:
                begun.append(start(staging))
            plan = plan_release(exports_dir, data_date, render, read=read)
            refused = unusable_citations(plan.documents, checked) if checked is not None else []
            if refused:
                raise PublishError(
                    f"release {plan.version} not published: it would cite {len(refused)} "
                    f"snapshot(s) that are no longer good ({refused[0]}); build again to read "
                    "their sources from their last good snapshots"
                )
            current = latest_version(exports_dir) if take_latest else None
            if current is not None and read(current) is None:
                current = None  # damaged: nothing to replace, the usual rules pass over it
            # latest names a newer release than this build's: this build replaces it
            replaced = (
                current
                if current is not None
                and current != plan.version
                and version_key(current) > version_key(plan.version)
                else None
            )
            if not plan.is_new and replaced is None:
                _abandon(staging, begun)
                if take_latest:
                    point_latest_at(exports_dir, plan.version)
                else:
                    point_latest_at_newest(
                        exports_dir, usable=usable if checked is not None else None
                    )
                return PublishResult(
                    plan.version,
                    False,
                    exports_dir / plan.version,
                    f"nothing new: identical to release {plan.version}",
                    cleaned=cleaned,
                )
            if not plan.is_new:
                plan = plan_release(exports_dir, data_date, render, new=True)
            # the changelog says what changed for those reading `latest`: from the release it
            # named, even when that one cites a snapshot withdrawn since (the change to tell)
            previous: str | None = None
            old: Release | ReleaseView | None = None
            if current is not None and current != plan.version:
                try:
                    old = parse_release(read(current))  # type: ignore[arg-type]
                    previous = current
                except UnreadableRelease:
                    pass  # not one this contract reads: the usual rules pass over it
            if previous is None:
                previous, old = previous_release(
                    exports_dir,
                    plan.version,
                    read=read,
                    usable=cites_only_good if checked is not None else None,
                )
            release = parsed(plan.version) if parsed is not None else parse_release(plan.documents)
            view = view_of(release)
            changes = compare(old, view)
            notes = [dict(note) for note in notes]
            if replaced is not None:
                notes.append(
                    _replacement_note(replaced, read(replaced), checked)  # type: ignore[arg-type]
                )
            if notes:
                changes["notes"] = notes
            files = plan.files | {
                CHANGELOG_MD: render_markdown(changes).encode("utf-8"),
                CHANGES_JSON: dumps(changes),
            }
            path = write_release(
                exports_dir, plan.version, files, populate, staging=staging, begun=begun
            )
            if take_latest:
                point_latest_at(exports_dir, plan.version)
            else:
                point_latest_at_newest(
                    exports_dir,
                    checked=plan.version,
                    usable=usable if checked is not None else None,
                )
            summary = summary_line(changes)  # it names the release this one replaces
            return PublishResult(
                plan.version,
                True,
                path,
                f"published release {plan.version}: {summary}",
                previous=previous,
                summary=summary,
                cleaned=cleaned,
                written=Written(files, release, changes, view),
            )
        except BaseException:
            _abandon(staging, begun)
            raise


def _replacement_note(
    replaced: str, documents: Documents, check: SnapshotCheck | None
) -> dict[str, str]:
    why = unusable_citations(documents, check) if check is not None else []
    reason = (
        f"it cites {len(why)} snapshot(s) no longer good ({why[0]})"
        if why
        else "it was built from snapshots this build no longer reads (see the notes above)"
    )
    return {
        "kind": "replaces",
        "release": replaced,
        "text": f"replaces release {replaced} as latest: {reason}",
    }


def find_release(exports_dir: Path, ref: str) -> Path:
    """A release folder from a version (`2026.11.29`), `latest`, or a path to a folder.
    Raises LookupError naming what exists when nothing matches."""
    if ref == LATEST:
        version = latest_version(exports_dir)
        if version is None:
            raise LookupError(f"no releases in {exports_dir}")
        return exports_dir / version
    if VERSION.match(ref):
        folder = exports_dir / ref
        if folder.is_dir():
            return folder
        versions = list_versions(exports_dir)
        known = ", ".join(versions) if versions else "none"
        raise LookupError(f"no release {ref} in {exports_dir} (published: {known})")
    folder = Path(ref).expanduser()
    if folder.is_dir():
        return folder.resolve()
    raise LookupError(f"{ref!r} is neither a release version (YYYY.MM.DD[.N]) nor a folder")
