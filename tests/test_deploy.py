"""Dagster deployed the standard way, against the session's real PostgreSQL on 127.0.0.1
(tests/servers.py): the instance's storage from SPEEDBOOK_DAGSTER_STORAGE, the build lock across
machines on a PostgreSQL catalog, and deploy/ (dagster.yaml, workspace.yaml, the systemd units,
env.example) started as three processes. Secrets never reach a file, a message or any output."""

from __future__ import annotations

import configparser
import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psycopg2
import pytest
from conftest import BUNDLED_RAW, REPO_ROOT
from servers import Postgres, Process, free_ports, log_tail, start

from pipeline.cli import ui
from pipeline.dagster.envelope import storage_problem
from pipeline.dagster.runner import deploy_instance_yaml, instance_yaml
from pipeline.raw.s3_store import ENV_KEYS, ENV_SECRETS
from pipeline.sources.registry import load_crons, load_registry
from pipeline.support import settings as settings_module
from pipeline.support.locking import LockBusy
from pipeline.support.settings import Settings
from pipeline.warehouse.build_lock import ADVISORY_KEY, build_lock
from pipeline.warehouse.connection import MEMORY_ENV
from pipeline.warehouse.lake import LakeError

DEPLOY = REPO_ROOT / "deploy"
UNITS = sorted((DEPLOY / "systemd").glob("*.service"))
INSTALL_PREFIX = "/opt/speedbook"  # where the units expect the checkout
ENV_FILE = "/etc/speedbook/speedbook.env"  # where the units read the environment from
SPEEDBOOK = str(Path(sys.executable).parent / "speedbook")
BUILD_SECONDS = 600  # a whole build on a loaded 2-core machine
START_SECONDS = 120.0  # the three processes up, the location loaded, the daemon healthy


pytestmark = pytest.mark.e2e  # every test here needs PostgreSQL or whole builds


# --------------------------------------------------------------------------- helpers


@dataclass(frozen=True)
class Machine:
    """One machine's view of a shared deployment: its own warehouse folder (so its own flock),
    the shared catalog, lake data and Dagster storage through its environment."""

    root: Path
    env: dict[str, str]

    @property
    def warehouse(self) -> Path:
        return self.root / "warehouse"

    def build(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [SPEEDBOOK, "build", *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


def _base_env() -> dict[str, str]:
    """This process's environment without any Speedbook, PostgreSQL, AWS or Dagster setting."""
    prefixes = ("SPEEDBOOK_", "PG", "AWS_", "DAGSTER_")
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


def _database(database_url: str) -> str:
    return urlsplit(database_url).path.lstrip("/")


def _catalog(server: Postgres, database: str) -> str:
    """The lake's catalog as libpq's keywords, the password left to PGPASSWORD."""
    return f"postgres:dbname={database} host={server.host} port={server.port} user={server.user}"


def _storage_url(database_url: str, *, password: bool = True) -> str:
    """The instance storage setting for the database at `database_url`: the driver named, the
    password in the URL or (`password=False`) left to PGPASSWORD."""
    url = database_url.replace("postgresql://", "postgresql+psycopg2://", 1)
    if not password:
        parts = urlsplit(url)
        url = parts._replace(netloc=f"{parts.username}@{parts.hostname}:{parts.port}").geturl()
    return url


LARGEST = ("models-dev", "openrouter-frontend-stats")  # 10.6 of the corpus's 13 MB


def _machine(root: Path, server: Postgres, database_url: str, catalog: str = "") -> Machine:
    """A warehouse under `root` with a copy of the bundled snapshots but the two largest
    sources' (what these tests check is where runs and locks go, not the data: each build
    takes a fraction of the time), its Dagster instance storage in `database_url`;
    `catalog`: the lake's (the embedded default when empty)."""
    warehouse = root / "warehouse"
    shutil.copytree(BUNDLED_RAW, warehouse / "raw", ignore=shutil.ignore_patterns(*LARGEST))
    env = _base_env() | {
        "SPEEDBOOK_WAREHOUSE": str(warehouse),
        "SPEEDBOOK_EXPORTS": str(root / "exports"),
        "SPEEDBOOK_DAGSTER_STORAGE": _storage_url(database_url),
        "PGPASSWORD": server.password,
    }
    if catalog:
        env |= {"SPEEDBOOK_CATALOG": catalog, "SPEEDBOOK_LAKE_DATA": str(root.parent / "lake")}
    return Machine(root, env)


def _finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    out, err = process.communicate(timeout=BUILD_SECONDS)
    return process.returncode, out + err


def _files_holding(folder: Path, secret: str) -> list[Path]:
    needle = secret.encode()
    return [
        path
        for path in folder.rglob("*")
        if path.is_file() and not path.is_symlink() and needle in path.read_bytes()
    ]


def _runs(database_url: str) -> list[tuple[str, str, float, float]]:
    """Dagster's runs table in `database_url`: (job, status, start, end) by start time."""
    with psycopg2.connect(database_url) as con, con.cursor() as cur:
        cur.execute(
            "SELECT pipeline_name, status, start_time, end_time FROM runs ORDER BY start_time"
        )
        return list(cur.fetchall())


def _lock_held(database_url: str) -> bool:
    """Whether some session holds the build's advisory lock in `database_url`."""
    with psycopg2.connect(database_url) as con, con.cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid = %s AND objid = %s AND objsubid = 2",
            ADVISORY_KEY,
        )
        return bool(cur.fetchone()[0])


# --------------------------------------------------------------------------- the setting


def test_the_storage_setting_takes_a_psycopg2_url_or_nothing_and_never_quotes_it():
    assert storage_problem("") is None
    assert storage_problem("postgresql+psycopg2://u:p@127.0.0.1:5432/dagster") is None
    bad = (
        "postgresql://u:hunter22@db/d",  # SQLAlchemy 2.1: psycopg 3, which is not installed
        "postgres://u:hunter22@db/d",
        "sqlite:///hunter22.db",
        "dbname=d password=hunter22",
    )
    for value in bad:
        problem = storage_problem(value)
        assert problem is not None and "SPEEDBOOK_DAGSTER_STORAGE" in problem
        assert "hunter22" not in problem and value not in problem
    assert "name the driver: postgresql+psycopg2://" in str(storage_problem(bad[0]))


def test_the_instance_file_names_the_variable_never_the_url(tmp_path: Path):
    on_postgres = instance_yaml(tmp_path, on_postgres=True)
    assert "postgres_url:\n      env: SPEEDBOOK_DAGSTER_STORAGE\n" in on_postgres
    assert "storage:" not in instance_yaml(tmp_path)  # SQLite in the instance's folder
    # deploy/dagster.yaml is this function's text: one source for both
    assert (DEPLOY / "dagster.yaml").read_text(encoding="utf-8") == deploy_instance_yaml()


def test_a_bad_storage_setting_refuses_the_build_before_it_starts(
    settings: Settings, cli, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("SPEEDBOOK_DAGSTER_STORAGE", "postgresql://speedbook:hunter22@db/dagster")
    for command in ("build", "ui"):
        result = cli(command)
        assert result.status == 2
        assert "SPEEDBOOK_DAGSTER_STORAGE is not a PostgreSQL URL" in result.err
        assert "hunter22" not in result.out + result.err
    assert not (settings.dagster_home / "dagster.yaml").exists()


class Launched(Exception):
    """Raised instead of starting `dagster dev`."""


def test_speedbook_ui_opens_the_instance_on_postgresql_and_gives_dagster_dev_the_settings(
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    cli,
    postgres_database: str,
    postgres_server: Postgres,
):
    url = _storage_url(postgres_database)
    monkeypatch.setenv("SPEEDBOOK_DAGSTER_STORAGE", url)
    monkeypatch.setenv("SPEEDBOOK_CATALOG", "postgres:dbname=lake host=db.example.internal")
    monkeypatch.setenv("DAGSTER_HOME", str(settings.dagster_home))  # restored after the test
    given: list[dict[str, str]] = []

    def supervise(_command: list[str], env: dict[str, str]) -> int:
        given.append(dict(env))
        raise Launched

    monkeypatch.setattr(ui, "supervise", supervise)
    with pytest.raises(Launched):
        cli("ui")
    assert given[0]["SPEEDBOOK_DAGSTER_STORAGE"] == url
    assert given[0]["SPEEDBOOK_CATALOG"] == "postgres:dbname=lake host=db.example.internal"
    assert given[0]["DAGSTER_HOME"] == str(settings.dagster_home)
    assert _files_holding(settings.warehouse, postgres_server.password) == []
    with psycopg2.connect(postgres_database) as con, con.cursor() as cur:
        cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'runs'")
        assert cur.fetchone() == (1,)  # the instance made its tables there


def test_storage_that_does_not_answer_refuses_the_build_in_one_line_without_the_password(
    settings: Settings, cli, monkeypatch: pytest.MonkeyPatch
):
    url = "postgresql+psycopg2://speedbook:hunter22-secret@127.0.0.1:1/dagster"
    monkeypatch.setenv("SPEEDBOOK_DAGSTER_STORAGE", url)
    result = cli("build")
    assert result.status == 2, result.err
    line = result.err.strip().splitlines()[-1]
    assert line.startswith(
        "speedbook build: error: cannot open the Dagster instance's storage in PostgreSQL "
        "(SPEEDBOOK_DAGSTER_STORAGE): "
    )
    assert "Traceback" not in result.err
    assert "hunter22" not in result.out + result.err


# --------------------------------------------------------------------------- the build lock


@pytest.fixture
def on_catalog(
    settings: Settings,
    postgres_server: Postgres,
    postgres_database: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Settings, Settings]:
    """Two machines' settings on one catalog in PostgreSQL: two warehouse folders (two flocks)."""
    monkeypatch.setenv("PGPASSWORD", postgres_server.password)
    catalog = _catalog(postgres_server, _database(postgres_database))
    one = replace(settings, catalog=catalog, lake_data=str(tmp_path / "lake"))
    return one, replace(one, warehouse=tmp_path / "other-machine")


def test_a_build_on_another_machine_waits_for_the_advisory_lock_or_is_told_who_holds_it(
    on_catalog: tuple[Settings, Settings], postgres_database: str, postgres_server: Postgres
):
    here, there = on_catalog
    with build_lock(here):
        assert _lock_held(postgres_database)
        with pytest.raises(LockBusy) as busy, build_lock(there):
            pass
    message = str(busy.value)
    assert message.startswith("another build holds the warehouse (DuckLake (catalog postgres: ")
    assert f"speedbook build pid {os.getpid()} on " in message and "--wait SECONDS" in message
    assert "dbname=" not in message and postgres_server.password not in message
    assert not _lock_held(postgres_database)  # the connection closed, the lock went with it
    # a waiting build takes it once the holder lets go
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with build_lock(here):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        threading.Timer(1.0, release.set).start()
        started = time.monotonic()
        with build_lock(there, wait_seconds=30):
            waited = time.monotonic() - started
    finally:
        release.set()
        holder.join()
    assert 0.5 < waited < 30


def test_a_killed_build_leaves_the_advisory_lock_free(
    on_catalog: tuple[Settings, Settings], postgres_database: str
):
    here, there = on_catalog
    code = (
        "import sys, time\n"
        "from dataclasses import replace\n"
        "from pathlib import Path\n"
        "from pipeline.support.settings import Settings\n"
        "from pipeline.warehouse.build_lock import build_lock\n"
        "settings = replace(Settings.resolve(), warehouse=Path(sys.argv[1]), catalog=sys.argv[2])\n"
        "with build_lock(settings):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(600)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(here.warehouse), here.catalog],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"SPEEDBOOK_LAKE_DATA": here.lake_data},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LockBusy), build_lock(there):
            pass
    finally:
        holder.kill()
        holder.wait()
    with build_lock(there, wait_seconds=10):  # the server ended the killed build's session
        pass


@pytest.mark.parametrize(
    "catalog",
    [
        "postgres:dbname={db} host=127.0.0.1 port={port} user=postgres password=hunter22-wrong",
        "postgres:postgresql://postgres:hunter22-wrong@127.0.0.1:{port}/{db}",
        "postgres:dbname={db} host=127.0.0.1 port={port} user=postgres hunter22-wrong",
        "postgres:dbname={db} host=127.0.0.1 port=1 user=postgres",
    ],
    ids=["wrong-password", "wrong-password-url", "malformed", "no-server"],
)
def test_a_lock_that_cannot_connect_is_a_lake_error_without_the_connection_string(
    on_catalog: tuple[Settings, Settings],
    postgres_server: Postgres,
    postgres_database: str,
    catalog: str,
    monkeypatch: pytest.MonkeyPatch,
):
    here, _ = on_catalog
    monkeypatch.delenv("PGPASSWORD")
    target = catalog.format(db=_database(postgres_database), port=postgres_server.port)
    with pytest.raises(LakeError) as failed, build_lock(replace(here, catalog=target)):
        pass
    message = str(failed.value)
    assert message.startswith("cannot take the build lock in the catalog of DuckLake (")
    assert "hunter22" not in message and target.removeprefix("postgres:") not in message


def test_the_embedded_lake_takes_only_the_flock(settings: Settings):
    busy = pytest.raises(LockBusy, match=f"another build holds {settings.lock_file}")
    with build_lock(settings), busy, build_lock(settings):  # no server: the flock alone
        pass


# --------------------------------------------------------------------------- builds on PostgreSQL


def test_a_build_records_its_run_in_postgresql_and_writes_the_url_nowhere(
    tmp_path: Path, postgres_server: Postgres, postgres_database: str
):
    machine = _machine(tmp_path / "machine", postgres_server, postgres_database)
    status, output = _finish(machine.build())
    runs = _runs(postgres_database)
    assert status == 0, output
    assert [(job, state) for job, state, *_ in runs] == [("build", "SUCCESS")]
    assert "(its storage in PostgreSQL)" in output
    # neither the URL nor its password: in no file of the machine and in no output
    for secret in (_storage_url(postgres_database), postgres_server.password):
        assert secret not in output
        assert _files_holding(tmp_path, secret) == []
    config = (machine.warehouse / "dagster" / "dagster.yaml").read_text(encoding="utf-8")
    assert "env: SPEEDBOOK_DAGSTER_STORAGE" in config
    assert not (machine.warehouse / "dagster" / "history").exists()  # no SQLite run storage


def test_two_builds_from_two_machines_on_one_postgresql_catalog_serialize(
    tmp_path: Path, postgres_server: Postgres, postgres_database: str
):
    catalog = _catalog(postgres_server, _database(postgres_database))
    one, two, three = (
        _machine(tmp_path / name, postgres_server, postgres_database, catalog)
        for name in ("one", "two", "three")
    )
    # two builds at once, each willing to wait; separate folders, so no flock is shared
    first, second = one.build("--wait", "900"), two.build("--wait", "900")
    deadline = time.monotonic() + 120
    while not _lock_held(postgres_database):
        assert time.monotonic() < deadline and first.poll() is None and second.poll() is None
        time.sleep(0.2)
    # a third that will not wait is refused at once, as with the flock: exit status 3
    refused, refusal = _finish(three.build())
    finished = [_finish(first), _finish(second)]
    assert refused == 3, refusal
    assert "another build holds the warehouse (DuckLake (catalog postgres: PostgreSQL" in refusal
    assert "speedbook build pid " in refusal
    assert catalog.removeprefix("postgres:") not in refusal
    for status, output in finished:
        assert status == 0, output
    runs = _runs(postgres_database)
    assert [state for _, state, *_ in runs] == ["SUCCESS", "SUCCESS"]
    (_, _, start_a, end_a), (_, _, start_b, end_b) = runs
    assert start_a < end_a <= start_b < end_b, "the two builds' runs overlapped"
    outputs = refusal + "".join(output for _, output in finished)
    assert (
        postgres_server.password not in outputs
        and _files_holding(tmp_path, postgres_server.password) == []
    )


# --------------------------------------------------------------------------- deploy/

ENV_EXAMPLE = DEPLOY / "env.example"
SECRET_VARIABLES = {"PGPASSWORD", *ENV_KEYS, *ENV_SECRETS}
PLACEHOLDER = "replace-with-"
GRAPHQL = """{
  repositoriesOrError { ... on RepositoryConnection { nodes {
    location { name } schedules { name scheduleState { status } } } } }
  instance { daemonHealth { allDaemonStatuses { daemonType required healthy } } }
}"""


def _named(text: str) -> set[str]:
    """The variables an env file names: `NAME=` lines, set or commented out (optional)."""
    return set(re.findall(r"^(?:# )?([A-Z][A-Z0-9_]*)=", text, re.MULTILINE))


def _set(text: str) -> list[str]:
    """The variables an env file sets, in order."""
    return re.findall(r"^([A-Z][A-Z0-9_]*)=", text, re.MULTILINE)


def _referenced() -> set[str]:
    """Every variable deploy/'s files read: `${NAME}` in the units, `env: NAME` in the yaml."""
    found: set[str] = set()
    for path in [*UNITS, DEPLOY / "workspace.yaml", DEPLOY / "dagster.yaml"]:
        text = path.read_text(encoding="utf-8")
        found |= set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)\}", text))
        found |= set(re.findall(r"\benv: ([A-Z][A-Z0-9_]*)", text))
    return found


def _sourced(path: Path) -> dict[str, str]:
    """The variables a shell sets from env file `path` (`set -a; . FILE`), as an operator's
    shell does, in a clean environment."""
    result = subprocess.run(
        ["bash", "-c", 'set -a; . "$1"; set +a; env -0', "bash", str(path)],
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        check=True,
    )
    pairs = (item.split(b"=", 1) for item in result.stdout.split(b"\0") if b"=" in item)
    return {name.decode(): value.decode() for name, value in pairs}


def test_env_example_names_every_variable_and_holds_no_secret(tmp_path: Path):
    text = ENV_EXAMPLE.read_text(encoding="utf-8")
    settings_variables = {
        value for name, value in vars(settings_module).items() if name.startswith("ENV_")
    }
    sources = load_registry(settings_module.BUNDLED_METADATA / "sources.toml")
    api_keys = {source.api_key_env for source in sources.values() if source.api_key_env}
    wanted = _referenced() | settings_variables | api_keys | SECRET_VARIABLES
    wanted |= {"AWS_REGION", "AWS_ENDPOINT_URL", "DAGSTER_HOME", MEMORY_ENV}
    assert wanted - _named(text) == set()
    sourced = _sourced(ENV_EXAMPLE)
    assert set(_set(text)) <= set(sourced)
    assert " host=" in sourced["SPEEDBOOK_CATALOG"]  # quoted: one value, spaces and all
    for name in SECRET_VARIABLES | api_keys:
        value = sourced.get(name, "")
        assert value == "" or value.startswith(PLACEHOLDER), f"{name} looks like a real secret"
    assert urlsplit(sourced["SPEEDBOOK_DAGSTER_STORAGE"]).password is None
    assert storage_problem(sourced["SPEEDBOOK_DAGSTER_STORAGE"]) is None


@dataclass(frozen=True)
class Unit:
    """What systemd would run for a unit of deploy/systemd, with the checkout in place of the
    install prefix."""

    name: str
    argv: list[str]
    cwd: Path
    after: list[str]
    stop_seconds: float  # TimeoutStopSec: after SIGTERM, how long systemd waits before SIGKILL


def _unit(path: Path, env: dict[str, str]) -> Unit:
    parser = configparser.ConfigParser(interpolation=None)
    # systemd's keys are case-sensitive
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(path.read_text(encoding="utf-8"))
    service = parser["Service"]
    assert service["EnvironmentFile"] == ENV_FILE
    words = shlex.split(service["ExecStart"].replace(INSTALL_PREFIX, str(REPO_ROOT)))
    # `${NAME}` as systemd expands it: the variable's value, as one word
    argv = [re.sub(r"\$\{([A-Z][A-Z0-9_]*)\}", lambda m: env[m.group(1)], word) for word in words]
    cwd = Path(service["WorkingDirectory"].replace(INSTALL_PREFIX, str(REPO_ROOT)))
    after = parser["Unit"].get("After", "").split()
    return Unit(path.stem, argv, cwd, after, float(service["TimeoutStopSec"]))


def _verify_units(folder: Path, env_file: Path) -> None:
    """systemd's own check of the units (syntax, executables), on copies that point at this
    checkout and this env file; only where systemd-analyze is installed."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        return
    folder.mkdir()
    for path in UNITS:
        text = path.read_text(encoding="utf-8").replace(INSTALL_PREFIX, str(REPO_ROOT))
        (folder / path.name).write_text(text.replace(ENV_FILE, str(env_file)), encoding="utf-8")
    result = subprocess.run(
        [analyze, "verify", *sorted(str(p) for p in folder.iterdir())],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def _graphql(port: int) -> dict | None:
    """The webserver's answer to GRAPHQL, or None while it does not answer."""
    try:
        response = httpx.post(
            f"http://127.0.0.1:{port}/graphql", json={"query": GRAPHQL}, timeout=10
        )
    except httpx.HTTPError:
        return None
    return response.json().get("data") if response.status_code == 200 else None


def _ready(data: dict | None, schedules: set[str]) -> bool:
    """The location's schedules are listed, running, and every required daemon is healthy."""
    if not data or "nodes" not in data["repositoriesOrError"]:
        return False
    listed = {
        (schedule["name"], schedule["scheduleState"]["status"])
        for node in data["repositoriesOrError"]["nodes"]
        for schedule in node["schedules"]
    }
    daemons = data["instance"]["daemonHealth"]["allDaemonStatuses"]
    healthy = bool(daemons) and all(d["healthy"] for d in daemons if d["required"])
    return listed == {(name, "RUNNING") for name in schedules} and healthy


def _registry_without_ticks(path: Path) -> Path:
    """The bundled registry at `path`, every cadence's cron string at an hour half a day from now:
    no schedule ticks while the test runs."""
    hour = (time.gmtime().tm_hour + 12) % 24
    text = Settings.resolve().registry.read_text(encoding="utf-8")
    table, rest = text.split("[cadences]\n", 1)[1].split("\n\n", 1)
    moved = re.sub(r'= "[^"]*"', f'= "0 {hour} * * *"', table)
    path.write_text(text.replace(table + "\n\n" + rest, moved + "\n\n" + rest), encoding="utf-8")
    assert load_crons(path).keys() == load_crons(Settings.resolve().registry).keys()
    return path


def _stacks(process: Process) -> str:
    """Where a process that did not stop waits: its group's processes with their signal state
    (blocked, ignored, caught), and each one's Python stacks (SIGABRT to PYTHONFAULTHANDLER writes
    them to its log)."""
    tree = subprocess.run(
        ["ps", "-o", "pid,ppid,pgid,stat,wchan:24,etime,cmd", "-g", str(process.popen.pid)],
        capture_output=True,
        text=True,
    ).stdout
    states = []
    for line in tree.splitlines()[1:]:
        pid = line.split()[0]
        with contextlib.suppress(OSError):
            status = Path(f"/proc/{pid}/status").read_text().splitlines()
            states.append(f"{pid}: " + " ".join(s for s in status if s.startswith("Sig")))
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.popen.pid, signal.SIGABRT)
        time.sleep(2)
    return "\n".join([tree, *states, log_tail(process.log, 200)])


def test_deploy_starts_code_server_daemon_and_webserver_on_postgresql_and_stops_them(
    tmp_path: Path, postgres_server: Postgres, postgres_database: str
):
    from pipeline.dagster.graph import build_definitions

    warehouse = tmp_path / "warehouse"
    code_port, ui_port = free_ports(2)
    values = {
        "SPEEDBOOK_WAREHOUSE": str(warehouse),
        "SPEEDBOOK_EXPORTS": str(tmp_path / "exports"),
        "SPEEDBOOK_CATALOG": _catalog(postgres_server, _database(postgres_database)),
        "SPEEDBOOK_LAKE_DATA": str(tmp_path / "lake"),
        "SPEEDBOOK_SNAPSHOTS": str(BUNDLED_RAW),
        "SPEEDBOOK_RELEASES": "",  # no object store here: releases stay in exports/ only
        "SPEEDBOOK_RELEASE_CADENCE": "daily",
        # no password in the URL: libpq takes PGPASSWORD
        "SPEEDBOOK_DAGSTER_STORAGE": _storage_url(postgres_database, password=False),
        "PGPASSWORD": postgres_server.password,
        "AWS_ACCESS_KEY_ID": "",
        "AWS_SECRET_ACCESS_KEY": "",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": "",
        "OPENROUTER_API_KEY": "",
        "ARTIFICIAL_ANALYSIS_API_KEY": "",
        "DAGSTER_HOME": str(warehouse / "dagster"),
        "SPEEDBOOK_SCHEDULES": "running",
        "SPEEDBOOK_CODE_SERVER_PORT": str(code_port),
        "SPEEDBOOK_UI_PORT": str(ui_port),
    }
    # the operator's steps: env.example filled in, dagster.yaml copied into DAGSTER_HOME
    example = ENV_EXAMPLE.read_text(encoding="utf-8")
    assert sorted(_set(example)) == sorted(values), "a variable of env.example has no test value"
    env_file = tmp_path / "speedbook.env"
    env_file.write_text(
        "".join(f'{name}="{value}"\n' for name, value in values.items()), encoding="utf-8"
    )
    Path(values["DAGSTER_HOME"]).mkdir(parents=True)
    shutil.copy(DEPLOY / "dagster.yaml", Path(values["DAGSTER_HOME"]) / "dagster.yaml")
    # The bundled registry with every schedule's tick half a day away: a tick while the
    # deployment is up would start a refresh run that fetches from the internet. A hang is
    # diagnosed from the processes' own stacks (PYTHONFAULTHANDLER, _stacks).
    env = (
        _base_env()
        | _sourced(env_file)
        | {
            "SPEEDBOOK_REGISTRY": str(_registry_without_ticks(tmp_path / "sources.toml")),
            "PYTHONFAULTHANDLER": "1",
        }
    )
    _verify_units(tmp_path / "units", env_file)
    units = {unit.name: unit for unit in (_unit(path, env) for path in UNITS)}
    assert set(units) == {
        "speedbook-code-server",
        "speedbook-daemon",
        "speedbook-webserver",
    }
    for name in ("speedbook-daemon", "speedbook-webserver"):
        assert "speedbook-code-server.service" in units[name].after
    settings = Settings.resolve(warehouse=warehouse, snapshots=BUNDLED_RAW)
    schedules = {schedule.name for schedule in build_definitions(settings).schedules or ()}
    started = time.monotonic()
    processes: dict[str, Process] = {}
    try:
        for name in ("speedbook-code-server", "speedbook-daemon", "speedbook-webserver"):
            unit = units[name]
            processes[name] = start(name, unit.argv, tmp_path / f"{name}.log", env, cwd=unit.cwd)
        data = None
        while not _ready(data, schedules):
            failed = [name for name, process in processes.items() if not process.alive()]
            assert not failed, "\n".join(f"{n}:\n{log_tail(processes[n].log)}" for n in failed)
            assert time.monotonic() - started < START_SECONDS, f"not ready: {data}\n" + "\n".join(
                log_tail(p.log, 8) for p in processes.values()
            )
            time.sleep(1)
            data = _graphql(ui_port)
        up = time.monotonic() - started
        # the instance is PostgreSQL's: the daemon's heartbeats are there, one per daemon
        with psycopg2.connect(postgres_database) as con, con.cursor() as cur:
            cur.execute("SELECT count(*) FROM daemon_heartbeats")
            assert cur.fetchone()[0] == len(data["instance"]["daemonHealth"]["allDaemonStatuses"])
        # SIGTERM to each process group, as systemd stops a unit: each ends by itself, with
        # status 0, within its unit's TimeoutStopSec, and leaves nothing of its group behind
        for name in ("speedbook-webserver", "speedbook-daemon", "speedbook-code-server"):
            popen, stop = processes[name].popen, units[name].stop_seconds
            os.killpg(popen.pid, signal.SIGTERM)
            try:
                popen.wait(stop)
            except subprocess.TimeoutExpired:
                pytest.fail(
                    f"{name} did not end within {stop:.0f} s of SIGTERM:\n"
                    + _stacks(processes[name])
                )
            assert ui.wait_for_group(popen.pid, stop), f"{name} left processes behind"
            assert popen.returncode == 0, (
                f"{name}: {popen.returncode}\n{log_tail(processes[name].log)}"
            )
    finally:
        for process in processes.values():
            process.stop()
    assert up < 60, f"the deployment took {up:.0f} s to come up"
    for secret in (postgres_server.password, values["SPEEDBOOK_DAGSTER_STORAGE"]):
        logs = [p.log for p in processes.values()]
        assert [log for log in logs if secret in log.read_text(errors="replace")] == []
        assert _files_holding(warehouse, secret) == []
