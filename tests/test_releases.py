"""Releases end to end on the bundled corpus: time travel, one release per content, a changelog
in every release, `speedbook diff` and `speedbook releases`, and the warehouse's history.

One module-scoped warehouse goes through five builds (Dagster, in-process):
  1. --as-of 2026-06-30  -> 2026.06.28, the first release (the June 2026 picture)
  2. every snapshot       -> 2026.11.29
  3. the same again       -> nothing new: the build fingerprint matches, no run starts
  4. the same, --force    -> the graph runs, and the publish step finds nothing new
  5. a new Artificial Analysis page for Llama 3.3 70B with another Groq figure -> 2026.11.29.1
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import BUNDLED_RAW, progress_lines

from pipeline.cli import main
from pipeline.raw.snapshots import SnapshotStore
from pipeline.release import history, publish
from pipeline.release.changelog import figures, parse_release, view_of
from pipeline.release.contracts import EXPORT_FILES, validate_directory
from pipeline.release.history import figure_rows, record_releases
from pipeline.release.publish import (
    CHANGELOG_MD,
    PublishError,
    latest_version,
    list_versions,
    next_version,
    plan_release,
    publish_lock,
    publish_release,
    read_release,
)
from pipeline.support.settings import BUNDLED_METADATA, Settings
from pipeline.warehouse.connection import connect

AA_LLAMA = "aa-llama-3-3-instruct-70b"
GROQ_LLAMA = "groq/llama-3.3-70b-instruct/unknown/standard/-"
CEREBRAS_LLAMA = "cerebras/llama-3.3-70b-instruct/unknown/standard/-"
JUNE, NOVEMBER, NOVEMBER_1 = "2026.06.28", "2026.11.29", "2026.11.29.1"
STEPS = ("june", "all", "again", "forced", "groq")
# The scenario's five builds run in the setup of the module's first test, under that test's
# timeout: 6 minutes on a loaded machine. (A timeout's signal inside a DuckDB query surfaces as
# "Query interrupted" in the build, not as pytest's timeout.)
pytestmark = pytest.mark.timeout(1500)
# what a build says when its fingerprint matches (pipeline/dagster/envelope.py), and what the
# publish step says when the exports equal the newest release of their data date
FINGERPRINT_SKIP = f"nothing new since the last build: release {NOVEMBER} stands"
PUBLISH_SKIP = f"nothing new: identical to release {NOVEMBER}"


@dataclass
class Scenario:
    settings: Settings
    lines: list[list[str]]  # progress lines of each build
    versions: list[list[str]]  # releases after each build

    def step(self, name: str) -> int:
        return STEPS.index(name)


def _build(settings: Settings, *options: str) -> list[str]:
    """`speedbook build` in-process; returns its progress lines."""
    with progress_lines() as lines:
        locations = ["--registry", str(settings.registry), "--warehouse", str(settings.warehouse)]
        status = main(["build", *options, *locations, "--exports", str(settings.exports)])
    assert status == 0, lines
    return lines


def _add_groq_page(settings: Settings, speed: str) -> None:
    """A later capture of the AA Llama 3.3 70B page on which Groq's figure moved."""
    store = SnapshotStore(settings.raw_dir)
    page = store.latest(AA_LLAMA)
    html = store.read(page).decode("utf-8")
    assert "<td>321</td>" in html
    store.add(
        AA_LLAMA,
        html.replace("<td>321</td>", f"<td>{speed}</td>").encode("utf-8"),
        url=page.url,
        retrieved_at=datetime(2026, 11, 29, 12, tzinfo=UTC),
        content_type=page.content_type,
        obtained_by="manual",
        extension="html",
        note="test: Groq's figure changed",
    )


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    root = tmp_path_factory.mktemp("releases")
    shutil.copytree(BUNDLED_RAW, root / "warehouse" / "raw")
    settings = Settings.resolve(
        BUNDLED_METADATA / "sources.toml", root / "warehouse", root / "exports"
    )
    result = Scenario(settings, [], [])
    for step in STEPS:
        if step == "groq":
            _add_groq_page(settings, "333")
        options = {"june": ["--as-of", "2026-06-30"], "forced": ["--force"]}.get(step, [])
        result.lines.append(_build(settings, *options))
        result.versions.append(list_versions(settings.exports))
    return result


def _inference(scenario: Scenario, version: str) -> dict:
    return json.loads((scenario.settings.exports / version / "inference.json").read_text())


def _speed(document: dict, provider: str, model: str, **variant: str | None) -> float:
    row = next(p for p in document["providers"] if p["id"] == provider)
    values = [
        f["value"]
        for f in row["figures"]
        if f["model"]["id"] == model
        and f["metric"] == "output_tokens_per_s"
        and all(f["variant"][k] == v for k, v in variant.items())
        and f["source"].startswith("aa-")
    ]
    assert len(values) == 1, values
    return values[0]


def _provider_ids(scenario: Scenario, version: str) -> set[str]:
    inference = json.loads((scenario.settings.exports / version / "inference.json").read_text())
    return {provider["id"] for provider in inference["providers"]}


def _changes(scenario: Scenario, version: str) -> dict:
    return json.loads((scenario.settings.exports / version / "changes.json").read_text())


# --- versions and time travel -------------------------------------------------------------------


@pytest.mark.e2e
def test_as_of_june_gives_the_june_picture_and_the_default_build_the_later_one(scenario):
    june, november = _inference(scenario, JUNE), _inference(scenario, NOVEMBER)
    assert june["as_of"] == "2026-06-30T23:59:59Z"
    assert june["data_date"] == "2026-06-28T00:00:00Z"
    assert all(s["retrieved_at"] <= "2026-06-30T23:59:59Z" for s in june["snapshots"])
    assert _speed(june, "cerebras", "gpt-oss-120b", reasoning_effort="high") == 1753.0
    assert _speed(june, "groq", "llama-3.3-70b-instruct") == 322.0
    assert _speed(june, "deepinfra", "gpt-oss-120b", service_tier="standard") == 51.7
    assert _speed(november, "groq", "llama-3.3-70b-instruct") == 321.0
    assert _speed(november, "cerebras", "llama-3.3-70b-instruct") == 2314.0


@pytest.mark.e2e
def test_versions_follow_the_data_date_and_latest_the_newest(scenario):
    assert scenario.versions[scenario.step("june")] == [JUNE]
    assert scenario.versions[scenario.step("all")] == [JUNE, NOVEMBER]
    assert scenario.versions[scenario.step("groq")] == [JUNE, NOVEMBER, NOVEMBER_1]
    exports = scenario.settings.exports
    assert os.readlink(exports / "latest") == NOVEMBER_1
    assert latest_version(exports) == NOVEMBER_1
    for version in scenario.versions[scenario.step("groq")]:
        assert _inference(scenario, version)["version"] == version
        assert json.loads((exports / version / "datapackage.json").read_text())["version"] == (
            version
        )


@pytest.mark.e2e
def test_a_second_build_over_unchanged_inputs_skips_the_run(scenario):
    """The build fingerprint matches the last successful build: the runner says so and returns
    before Dagster runs, so the publish step never speaks."""
    lines = scenario.lines[scenario.step("again")]
    assert scenario.versions[scenario.step("again")] == [JUNE, NOVEMBER]
    assert any(FINGERPRINT_SKIP in line for line in lines), lines
    assert not any(PUBLISH_SKIP in line for line in lines), lines
    assert not any(line.split("] ", 1)[-1].startswith("raw: ") for line in lines), lines
    assert any(f"published release {NOVEMBER}" in x for x in scenario.lines[scenario.step("all")])


@pytest.mark.e2e
def test_a_forced_build_of_the_same_content_publishes_nothing_and_says_so(scenario):
    """--force runs the whole graph; the publish step finds exports identical to 2026.11.29."""
    lines = scenario.lines[scenario.step("forced")]
    assert scenario.versions[scenario.step("forced")] == [JUNE, NOVEMBER]
    assert any(PUBLISH_SKIP in line for line in lines), lines
    assert not any(FINGERPRINT_SKIP in line for line in lines), lines
    assert any(line.split("] ", 1)[-1].startswith("raw: ") for line in lines), lines
    assert not any("published release" in line for line in lines), lines


@pytest.mark.e2e
def test_every_release_is_complete_and_valid(scenario):
    exports = scenario.settings.exports
    for version in list_versions(exports):
        folder = exports / version
        assert validate_directory(folder) == {name: [] for name in EXPORT_FILES}
        names = {p.name for p in folder.iterdir()}
        assert {"CHANGELOG.md", "changes.json", "datapackage.json", "schemas"} <= names
        assert read_release(folder)  # the files match the hashes in datapackage.json
    assert not [p for p in exports.iterdir() if p.name.startswith((".tmp-", ".latest-"))]


# --- changelogs ---------------------------------------------------------------------------------


@pytest.mark.e2e
def test_the_first_release_says_it_is_the_first(scenario):
    changes = _changes(scenario, JUNE)
    assert changes["first_release"] is True and changes["from"] is None
    assert changes["contents"]["providers"] == len(_inference(scenario, JUNE)["providers"])
    text = (scenario.settings.exports / JUNE / "CHANGELOG.md").read_text()
    assert text.startswith(f"# Speedbook {JUNE}\n")
    assert "This is the first release" in text


@pytest.mark.e2e
def test_the_november_changelog_compares_with_june(scenario):
    changes = _changes(scenario, NOVEMBER)
    assert changes["from"]["version"] == JUNE and changes["to"]["version"] == NOVEMBER
    groq = [f for f in changes["figures"]["changed"] if f["endpoint"] == GROQ_LLAMA]
    assert len(groq) == 1
    assert (groq[0]["old"]["value"], groq[0]["new"]["value"]) == (322.0, 321.0)
    assert groq[0]["relative_change"] == pytest.approx(-1 / 322, abs=1e-4)
    # the providers the November release has and the June one had not: the seed's three among
    # them, with every provider OpenRouter's July statistics first named
    added = {p["id"] for p in changes["providers"]["added"]}
    assert added == _provider_ids(scenario, NOVEMBER) - _provider_ids(scenario, JUNE)
    assert {"baseten", "nebius", "novita-ai"} <= added
    assert len(changes["platforms"]["added"]) == 8
    assert len(changes["catalogue"]["added"]) == 75
    newly_stale = {f["endpoint"] for f in changes["stale"]["newly_stale"]}
    assert "deepinfra/gpt-oss-120b/unknown/standard/high" in newly_stale


@pytest.mark.e2e
def test_an_added_snapshot_with_a_changed_figure_gives_a_release_naming_it(scenario):
    changes = _changes(scenario, NOVEMBER_1)
    assert changes["from"]["version"] == NOVEMBER
    changed = {f["endpoint"]: f for f in changes["figures"]["changed"]}
    assert sorted(changed) == [CEREBRAS_LLAMA, GROQ_LLAMA]
    figure = changed[GROQ_LLAMA]
    assert (figure["old"]["value"], figure["new"]["value"]) == (321.0, 333.0)
    assert figure["new"]["snapshot"].startswith(f"{AA_LLAMA}/20261129T120000Z-")
    # the page captured by hand is no reconstruction: its figures keep their source's tier
    cerebras = changed[CEREBRAS_LLAMA]
    assert (cerebras["old"]["value"], cerebras["new"]["value"]) == (2314.0, 2314.0)
    assert (cerebras["old"]["tier"], cerebras["new"]["tier"]) == ("T2", "T1")
    text = (scenario.settings.exports / NOVEMBER_1 / "CHANGELOG.md").read_text()
    assert "| Groq | Llama 3.3 70B |" in text
    assert "| \\~321.0 tokens/s | 333.0 tokens/s | +3.7% |" in text  # rebuilt: approx


# --- the commands -------------------------------------------------------------------------------


@pytest.mark.e2e
def test_diff_between_june_and_november_lists_groq_322_to_321(scenario, cli):
    exports = str(scenario.settings.exports)
    result = cli("diff", JUNE, NOVEMBER, "--exports", exports)
    assert result.status == 0, result.err
    assert f"Changes from release {JUNE}" in result.out
    groq = [line for line in result.out.splitlines() if line.startswith("| Groq | Llama 3.3 70B")]
    # June's page was rebuilt from TokenDyno's article (exact figures), November's from Agent
    # Fieldbook's, which rounds them: only the new figure is approximate (docs/methodology.md)
    assert any("| 322.0 tokens/s | \\~321.0 tokens/s | -0.3% | T2 |" in line for line in groq)
    assert "## Providers added" in result.out and "## Catalogue entries added" in result.out
    as_json = cli("diff", JUNE, NOVEMBER, "--json", "--exports", exports)
    assert json.loads(as_json.out) == _changes(scenario, NOVEMBER)


@pytest.mark.e2e
def test_diff_defaults_to_the_two_newest_releases(scenario, cli):
    result = cli("diff", "--exports", str(scenario.settings.exports))
    assert result.status == 0, result.err
    assert result.out.startswith(f"# Speedbook {NOVEMBER_1}\n")
    assert "| \\~321.0 tokens/s | 333.0 tokens/s |" in result.out
    only_old = cli("diff", JUNE, "--exports", str(scenario.settings.exports))
    assert only_old.out.startswith(f"# Speedbook {NOVEMBER_1}\n")
    folders = cli(
        "diff", str(scenario.settings.exports / JUNE), str(scenario.settings.exports / "latest")
    )
    assert folders.status == 0
    assert "| 322.0 tokens/s | 333.0 tokens/s | +3.4% | T2 -> T1 |" in folders.out


@pytest.mark.e2e
def test_releases_lists_versions_with_data_date_and_what_changed(scenario, cli):
    result = cli("releases", "--exports", str(scenario.settings.exports))
    assert result.status == 0, result.err
    lines = result.out.splitlines()
    june = next(line for line in lines if line.startswith(JUNE))
    june_providers = len(
        read_release(scenario.settings.exports / JUNE)["inference.json"]["providers"]
    )
    assert "2026-06-28" in june and f"first release: {june_providers} providers" in june
    latest = next(line for line in lines if line.startswith(NOVEMBER_1))
    assert latest.startswith(f"{NOVEMBER_1} *")
    assert "figures: 2 changed" in latest and "1 cited snapshot changed" in latest
    rows = json.loads(cli("releases", "--json", "--exports", str(scenario.settings.exports)).out)
    assert [r["version"] for r in rows] == [JUNE, NOVEMBER, NOVEMBER_1]
    assert [r["latest"] for r in rows] == [False, False, True]


def _one_line_error(result, *fragments: str) -> None:
    assert result.status != 0
    assert result.out == ""
    assert len(result.err.strip().splitlines()) == 1, result.err
    for fragment in fragments:
        assert fragment in result.err


@pytest.mark.e2e
def test_diff_errors_are_one_line(scenario, cli, tmp_path):
    exports = scenario.settings.exports
    _one_line_error(
        cli("diff", "2026.01.01", NOVEMBER, "--exports", str(exports)),
        "no release 2026.01.01",
        f"published: {JUNE}, {NOVEMBER}, {NOVEMBER_1}",
    )
    _one_line_error(cli("diff", "yesterday", "--exports", str(exports)), "neither a release")
    lonely = tmp_path / "lonely"
    shutil.copytree(exports / JUNE, lonely / JUNE)
    _one_line_error(cli("diff", "--exports", str(lonely)), "need two releases", "has 1")
    _one_line_error(cli("diff", "--exports", str(tmp_path / "none")), "has 0")


@pytest.mark.e2e
def test_a_damaged_release_folder_is_reported_not_compared(scenario, cli, tmp_path):
    copy = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, copy, symlinks=True)
    document = copy / NOVEMBER / "inference.json"
    document.write_bytes(document.read_bytes().replace(b"321.0", b"999.0"))
    _one_line_error(
        cli("diff", JUNE, NOVEMBER, "--exports", str(copy)),
        "damaged release",
        "inference.json does not match the sha256 in datapackage.json",
    )
    (copy / JUNE / "model_platforms.json").unlink()
    _one_line_error(cli("diff", JUNE, NOVEMBER_1, "--exports", str(copy)), "is missing")
    rows = json.loads(cli("releases", "--json", "--exports", str(copy)).out)
    assert [r["damaged"] is not None for r in rows] == [True, True, False]
    assert rows[2]["summary"].startswith("first release")  # nothing readable before it


# --- publishing details -------------------------------------------------------------------------


def test_next_version_counts_releases_of_one_data_date():
    day = datetime(2026, 11, 29, tzinfo=UTC)
    assert next_version(day, []) == "2026.11.29"
    assert next_version(day, ["2026.11.28", "2026.11.29"]) == "2026.11.29.1"
    assert next_version(day, ["2026.11.29", "2026.11.29.1", "2026.11.29.2"]) == "2026.11.29.3"


def _render_from(folder: Path, data_date: str | None = None):
    documents = read_release(folder)

    def render(version: str) -> dict:
        extra = {"data_date": data_date} if data_date else {}
        return {name: doc | {"version": version} | extra for name, doc in documents.items()}

    return render


@pytest.mark.e2e
def test_content_equal_to_an_older_release_of_the_date_is_a_new_release(scenario, tmp_path):
    """Reverting to what 2026.11.29 said differs from the newest (.1), so it is published."""
    exports = scenario.settings.exports
    day = datetime(2026, 11, 29, tzinfo=UTC)
    plan = plan_release(exports, day, _render_from(exports / NOVEMBER))
    assert (plan.version, plan.is_new) == ("2026.11.29.2", True)
    same = plan_release(exports, day, _render_from(exports / NOVEMBER_1))
    assert (same.version, same.is_new) == (NOVEMBER_1, False)


@pytest.mark.e2e
def test_releases_are_compared_by_content_not_by_bytes(scenario, tmp_path):
    """The newest release of the date re-encoded (the standard library's bytes, recorded in its
    datapackage.json) says the same: nothing new. A newer data date (a poll's) is new."""
    exports = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, exports, symlinks=True)
    folder = exports / NOVEMBER_1
    package = json.loads((folder / publish.DATAPACKAGE).read_text())
    for resource in package["resources"]:
        document = json.loads((folder / resource["path"]).read_text())
        data = json.dumps(document, indent=4, ensure_ascii=True).encode()
        (folder / resource["path"]).write_bytes(data)
        resource["hash"], resource["bytes"] = publish.resource_hash(data), len(data)
    (folder / publish.DATAPACKAGE).write_text(json.dumps(package))
    day = datetime(2026, 11, 29, tzinfo=UTC)
    plan = plan_release(exports, day, _render_from(scenario.settings.exports / NOVEMBER_1))
    assert (plan.version, plan.is_new, plan.files) == (NOVEMBER_1, False, {})
    later = _render_from(scenario.settings.exports / NOVEMBER_1, "2026-11-29T23:00:00Z")
    plan = plan_release(exports, day, later)
    assert (plan.version, plan.is_new) == ("2026.11.29.2", True)
    damaged = exports / NOVEMBER_1 / "inference.json"
    damaged.write_bytes(damaged.read_bytes()[:-10])  # a damaged newest release says nothing
    plan = plan_release(exports, day, _render_from(scenario.settings.exports / NOVEMBER_1))
    assert (plan.version, plan.is_new) == ("2026.11.29.2", True)


@pytest.mark.e2e
def test_publishing_the_same_exports_again_publishes_nothing_and_says_so(scenario, tmp_path):
    exports = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, exports, symlinks=True)
    before = _hashes_of(exports)
    day = datetime(2026, 11, 29, 12, tzinfo=UTC)
    result = publish_release(exports, day, _render_from(exports / NOVEMBER_1))
    assert (result.published, result.version) == (False, NOVEMBER_1)
    assert result.message == f"nothing new: identical to release {NOVEMBER_1}"
    assert _hashes_of(exports) == before


def _hashes_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.e2e
def test_another_as_of_bound_over_the_same_snapshots_is_nothing_new(scenario):
    """`build --as-of 2026-07-15` reads the same snapshots as --as-of 2026-06-30."""
    exports = scenario.settings.exports
    documents = read_release(exports / JUNE)

    def render(version: str) -> dict:
        stamp = {"version": version, "as_of": "2026-07-15T23:59:59Z"}
        return {name: document | stamp for name, document in documents.items()}

    plan = plan_release(exports, datetime(2026, 6, 28, tzinfo=UTC), render)
    assert (plan.version, plan.is_new) == (JUNE, False)


@pytest.mark.e2e
def test_populate_callbacks_add_content_before_the_rename(scenario, tmp_path):
    exports = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, exports, symlinks=True)
    render = _render_from(exports / NOVEMBER_1, "2026-12-01T00:00:00Z")
    seen = []

    def preview(staging: Path, version: str) -> None:
        seen.append((staging.name, version, (staging / "inference.json").is_file()))
        (staging / "index.html").write_text(f"<h1>{version}</h1>")

    result = publish_release(exports, datetime(2026, 12, 1, tzinfo=UTC), render, [preview])
    assert result.published and result.version == "2026.12.01" and result.previous == NOVEMBER_1
    assert seen[0][0].startswith(".tmp-") and seen[0][1:] == ("2026.12.01", True)
    assert (exports / "2026.12.01" / "index.html").read_text() == "<h1>2026.12.01</h1>"
    assert os.readlink(exports / "latest") == "2026.12.01"


@pytest.mark.e2e
@pytest.mark.parametrize("failure", ["raises", "clobbers an export"])
def test_a_failing_populate_callback_publishes_nothing(scenario, tmp_path, failure):
    exports = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, exports, symlinks=True)
    before = sorted(p.name for p in exports.iterdir())

    def broken(staging: Path, version: str) -> None:
        if failure == "raises":
            raise RuntimeError("parquet writer failed")
        (staging / "inference.json").write_text("{}")

    render = _render_from(exports / NOVEMBER_1, "2026-12-01T00:00:00Z")
    expected = RuntimeError if failure == "raises" else PublishError
    with pytest.raises(expected):
        publish_release(exports, datetime(2026, 12, 1, tzinfo=UTC), render, [broken])
    assert sorted(p.name for p in exports.iterdir()) == before
    assert os.readlink(exports / "latest") == NOVEMBER_1


class _Beside:
    """Work begun beside a publish, as the Parquet writer is: records what was asked of it."""

    def __init__(self, staging: Path, fail: bool = False) -> None:
        self.staging, self.fail = staging, fail
        self.calls: list[str] = []
        (staging / "parquet").mkdir()  # begun as soon as the folder exists
        (staging / "parquet" / "begun.txt").write_text("begun")

    def wait(self) -> None:
        self.calls.append("wait")
        if self.fail:
            raise OSError("writing the Parquet files failed: disk full")
        (self.staging / "parquet" / "done.txt").write_text("done")

    def stop(self) -> None:
        self.calls.append("stop")


@pytest.mark.e2e
def test_work_begun_beside_the_changelog_is_waited_for_before_the_rename(scenario, tmp_path):
    exports = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, exports, symlinks=True)
    render = _render_from(exports / NOVEMBER_1, "2026-12-01T00:00:00Z")
    begun: list[_Beside] = []

    def begin(staging: Path) -> _Beside:
        # before the plan, the changelog or any export: the folder is empty
        assert not any(staging.iterdir()) and not (exports / "2026.12.01").exists()
        begun.append(_Beside(staging))
        return begun[-1]

    result = publish_release(exports, datetime(2026, 12, 1, tzinfo=UTC), render, begin=[begin])
    assert result.published and begun[0].calls == ["wait"]
    folder = exports / "2026.12.01"
    assert (folder / "parquet" / "done.txt").read_text() == "done"
    assert (folder / CHANGELOG_MD).is_file()
    assert validate_directory(folder) == {name: [] for name in EXPORT_FILES}


@pytest.mark.e2e
@pytest.mark.parametrize("where", ["the begun work", "the changelog"])
def test_a_failure_beside_or_in_the_changelog_publishes_nothing_and_stops_the_work(
    scenario, tmp_path, monkeypatch, where
):
    exports = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, exports, symlinks=True)
    before = sorted(p.name for p in exports.iterdir())
    render = _render_from(exports / NOVEMBER_1, "2026-12-01T00:00:00Z")
    begun: list[_Beside] = []

    def begin(staging: Path) -> _Beside:
        begun.append(_Beside(staging, fail=where == "the begun work"))
        return begun[-1]

    if where == "the changelog":

        def broken(*_args: object) -> dict:
            raise ValueError("the changelog could not be made")

        monkeypatch.setattr(publish, "compare", broken)
    with pytest.raises(OSError if where == "the begun work" else ValueError):
        publish_release(exports, datetime(2026, 12, 1, tzinfo=UTC), render, begin=[begin])
    assert begun[0].calls[-1] == "stop"  # ended before its folder was deleted
    assert sorted(p.name for p in exports.iterdir()) == before  # no .tmp- folder left
    assert os.readlink(exports / "latest") == NOVEMBER_1


@pytest.mark.e2e
def test_work_begun_for_a_release_with_nothing_new_is_stopped_and_its_folder_removed(
    scenario, tmp_path
):
    exports = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, exports, symlinks=True)
    before = sorted(p.name for p in exports.iterdir())
    latest = os.readlink(exports / "latest")
    render = _render_from(exports / latest, None)
    begun: list[_Beside] = []

    def begin(staging: Path) -> _Beside:
        begun.append(_Beside(staging))
        return begun[-1]

    data_date = datetime.fromisoformat(render(latest)["inference.json"]["data_date"])
    result = publish_release(exports, data_date, render, begin=[begin])
    assert not result.published and result.version == latest
    assert begun[0].calls == ["stop"]  # never waited for: nothing was to be written
    assert sorted(p.name for p in exports.iterdir()) == before


@dataclass
class HashCount:
    """Which folders were checked against their datapackage.json, and how many files hashed."""

    folders: list[str]
    hashes: int = 0


@pytest.fixture
def hashing(monkeypatch: pytest.MonkeyPatch) -> HashCount:
    count = HashCount([])
    check, digest = publish.checked_exports, publish.resource_hash

    def counted_check(folder: Path) -> tuple[list[str], dict[str, bytes]]:
        count.folders.append(folder.name)
        return check(folder)

    def counted_digest(data: bytes) -> str:
        count.hashes += 1
        return digest(data)

    monkeypatch.setattr(publish, "checked_exports", counted_check)
    monkeypatch.setattr(publish, "resource_hash", counted_digest)
    return count


def _publish_day(exports: Path, documents: dict, day: int) -> publish.PublishResult:
    """Publish `documents` as the release of 2026-12-<day> (read beforehand: reading a release
    hashes it, and the tests count hashing)."""
    stamp = {"data_date": f"2026-12-{day:02d}T00:00:00Z"}

    def render(version: str) -> dict:
        return {name: doc | {"version": version} | stamp for name, doc in documents.items()}

    result = publish_release(exports, datetime(2026, 12, day, tzinfo=UTC), render)
    assert result.published
    return result


@pytest.mark.e2e
def test_publishing_hashes_only_the_previous_release_and_the_new_one(scenario, tmp_path, hashing):
    """With five earlier releases, a publish checks the release its changelog compares with
    (once) and its own staging folder; older releases are never re-hashed."""
    exports = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, exports, symlinks=True)
    documents = read_release(exports / NOVEMBER_1)
    _publish_day(exports, documents, 1)
    _publish_day(exports, documents, 2)
    hashing.folders.clear()
    hashing.hashes = 0
    result = _publish_day(exports, documents, 3)
    assert (result.version, result.previous) == ("2026.12.03", "2026.12.02")
    assert hashing.folders[0] == "2026.12.02"
    assert hashing.folders[1].startswith(".tmp-")  # the final check before the rename
    assert len(hashing.folders) == 2, hashing.folders
    assert hashing.hashes == 2 * len(EXPORT_FILES)
    assert os.readlink(exports / "latest") == "2026.12.03"


@pytest.mark.e2e
def test_a_damaged_previous_release_is_skipped_for_the_next_one(scenario, tmp_path, hashing):
    exports = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, exports, symlinks=True)
    documents = read_release(exports / NOVEMBER)
    (exports / NOVEMBER_1 / "model_platforms.json").write_text("{}", encoding="utf-8")
    hashing.folders.clear()
    result = _publish_day(exports, documents, 1)
    assert result.previous == NOVEMBER
    assert hashing.folders[:2] == [NOVEMBER_1, NOVEMBER]
    assert len(hashing.folders) == 3 and hashing.folders[2].startswith(".tmp-")
    assert json.loads((result.path / "changes.json").read_text())["from"]["version"] == NOVEMBER


def _empty_lake(target: Path) -> Settings:
    """A warehouse of its own under `target`: an empty lake whose history a test fills (a lake
    cannot be copied: its catalog names its data folder)."""
    return Settings.resolve(BUNDLED_METADATA / "sources.toml", target / "warehouse", target)


def _only(exports: Path, versions: list[str], target: Path) -> Path:
    """A folder holding only these release folders of `exports`."""
    for version in versions:
        shutil.copytree(exports / version, target / version)
    return target


@pytest.mark.e2e
def test_history_hashes_each_new_release_once_and_known_ones_never(scenario, tmp_path, hashing):
    with connect(_empty_lake(tmp_path / "lake")) as con:
        hashing.folders.clear()
        hashing.hashes = 0
        recorded = record_releases(con, scenario.settings.exports)
        assert recorded == [JUNE, NOVEMBER, NOVEMBER_1]
        assert hashing.folders == recorded
        assert hashing.hashes == 3 * len(EXPORT_FILES)
        hashing.folders.clear()
        assert record_releases(con, scenario.settings.exports) == []
        assert hashing.folders == []


def _history_rows(settings: Settings, version: str) -> tuple[list[tuple], list[tuple]]:
    with connect(settings, read_only=True) as con:
        release = con.execute(
            "SELECT * EXCLUDE (built_at) FROM history.releases WHERE version = ?", [version]
        )
        releases = release.fetchall()
        figure = con.execute(
            "SELECT * FROM history.release_figures WHERE version = ? ORDER BY ALL", [version]
        )
        return releases, figure.fetchall()


@pytest.mark.e2e
def test_history_records_what_a_publish_wrote_without_parsing_it_again(
    scenario, tmp_path, hashing, monkeypatch
):
    """A release the build has just published is recorded from what it wrote: its folder is
    still read and hashed (reading it is the check), but not parsed again, and the rows are
    those that reading it back gives."""
    exports = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, exports, symlinks=True)
    result = _publish_day(exports, read_release(exports / NOVEMBER_1), 1)
    assert result.written is not None
    assert result.written.files["inference.json"] == (result.path / "inference.json").read_bytes()
    only = _only(exports, [result.version], tmp_path / "only")
    parsed: list[object] = []

    def counted(documents: object) -> object:
        parsed.append(documents)
        return parse_release(documents)

    monkeypatch.setattr(history, "parse_release", counted)
    rows = {}
    for how, written in (("written", {result.version: result.written}), ("read-back", None)):
        lake = _empty_lake(tmp_path / how)
        parsed.clear()
        hashing.folders.clear()
        with connect(lake) as con:
            assert record_releases(con, only, written=written) == [result.version]
        assert hashing.folders == [result.version]
        assert len(parsed) == (0 if written else 1)
        rows[how] = _history_rows(lake, result.version)
    assert rows["written"] == rows["read-back"] and len(rows["written"][1]) > 0


@pytest.mark.e2e
def test_history_reads_back_a_folder_that_is_not_what_the_publish_wrote(scenario, tmp_path):
    """What a publish says it wrote is taken only for a folder holding those very bytes: another
    release's is read from the folder itself, and a damaged one is not recorded."""
    exports = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, exports, symlinks=True)
    documents = read_release(exports / NOVEMBER_1)
    first, second = _publish_day(exports, documents, 1), _publish_day(exports, documents, 2)
    both = [first.version, second.version]
    damaged = _only(exports, both, tmp_path / "damaged")
    (damaged / first.version / "inference.json").write_text("{}", encoding="utf-8")
    lake = _empty_lake(tmp_path / "lake")
    with connect(lake) as con:
        wrong = {first.version: second.written, second.version: first.written}
        assert record_releases(con, damaged, written={first.version: first.written}) == [
            second.version
        ]
        con.execute("DELETE FROM history.release_figures WHERE version = ?", [second.version])
        con.execute("DELETE FROM history.releases WHERE version = ?", [second.version])
        assert record_releases(con, _only(exports, both, tmp_path / "good"), written=wrong) == both
    reference = _empty_lake(tmp_path / "reference")
    with connect(reference) as con:
        assert record_releases(con, tmp_path / "good") == both
    for version in both:
        assert _history_rows(lake, version) == _history_rows(reference, version)
    releases, _ = _history_rows(lake, first.version)
    assert releases[0][1] == datetime(2026, 12, 1, tzinfo=UTC)  # its own data date


@pytest.mark.e2e
def test_history_rows_are_the_changelog_figures(scenario):
    """One reader of live figures: history.release_figures holds what changelogs compare."""
    documents = read_release(scenario.settings.exports / NOVEMBER_1)
    rows = figure_rows(NOVEMBER_1, documents)
    found = figures(documents)
    keys = [(r["endpoint_id"], r["metric"], r["scope"], r["method"], r["statistic"]) for r in rows]
    assert keys == list(found)
    groq = next(
        r
        for r in rows
        if r["endpoint_id"] == GROQ_LLAMA and r["metric"] == "output_tokens_per_s"
        if r["source_id"] == AA_LLAMA
    )
    assert groq["value"] == 333.0 and groq["scope"] == "live" and groq["tier"] == "T1"
    assert groq["retrieved_at"] == datetime(2026, 11, 29, 12, tzinfo=UTC)
    assert groq["snapshot_id"].startswith(f"{AA_LLAMA}/20261129T120000Z-")
    headlines = [p for p in documents["inference.json"]["providers"] if p.get("headline")]
    assert sum(r["is_headline"] for r in rows) == len(headlines)
    # a publish hands the history its changelog's view: the same rows, not read again
    read = view_of(documents).indexes["figures"]
    assert figure_rows(NOVEMBER_1, documents, read) == rows
    first = dict(list(read.items())[:3])  # the rows are those of the figures handed over
    assert figure_rows(NOVEMBER_1, documents, first) == rows[:3]


@pytest.mark.e2e
def test_one_publisher_at_a_time(scenario, tmp_path):
    exports = tmp_path / "exports"
    shutil.copytree(scenario.settings.exports, exports, symlinks=True)
    render = _render_from(exports / NOVEMBER_1, "2026-12-01T00:00:00Z")
    with publish_lock(exports), pytest.raises(PublishError, match="another build is publishing"):
        publish_release(exports, datetime(2026, 12, 1, tzinfo=UTC), render, lock_wait=0.3)
    assert list_versions(exports) == [JUNE, NOVEMBER, NOVEMBER_1]
    assert sorted(p.name for p in exports.iterdir()) == [*list_versions(exports), "latest"]


# --- history in the warehouse -------------------------------------------------------------------


@pytest.mark.e2e
def test_history_keeps_every_release_across_rebuilds(scenario):
    with connect(scenario.settings, read_only=True) as con:
        rows = con.execute(
            "SELECT version, data_date, as_of, previous_version, snapshot_count, figures, "
            "content_hashes['inference.json'], summary FROM history.releases ORDER BY version"
        ).fetchall()
        assert [r[0] for r in rows] == [JUNE, NOVEMBER, NOVEMBER_1]
        june, _, newest = rows
        assert june[2] is not None and newest[2] is None  # as_of only for the --as-of build
        assert [r[3] for r in rows] == [None, JUNE, NOVEMBER]
        package = json.loads((scenario.settings.exports / JUNE / "datapackage.json").read_text())
        hashes = {r["path"]: r["hash"] for r in package["resources"]}
        assert june[6] == hashes["inference.json"]
        # the new Groq page replaced the snapshot the release cites for that source
        assert newest[7].startswith("figures: 2 changed; ")
        assert newest[7].endswith("; 1 cited snapshot changed")
        counts = dict(
            con.execute(
                "SELECT version, count(*) FROM history.release_figures GROUP BY ALL"
            ).fetchall()
        )
        assert counts == {r[0]: r[5] for r in rows}
        unknown = con.execute(
            "SELECT count(*) FROM history.release_figures WHERE version = ? "
            "AND endpoint_id NOT IN (SELECT endpoint_id FROM core.endpoints)",
            [NOVEMBER_1],
        ).fetchone()[0]
        assert unknown == 0  # endpoint ids spelled as the core tables spell them


@pytest.mark.e2e
def test_figure_history_shows_an_endpoint_over_releases_and_snapshots(scenario):
    with connect(scenario.settings, read_only=True) as con:
        rows = con.execute(
            "SELECT record, release_version, value, source_id FROM mart.figure_history "
            "WHERE endpoint_id = ? AND metric = 'output_tokens_per_s' AND scope = 'live' "
            "AND source_id = ? ORDER BY at_time, record, release_version",
            [GROQ_LLAMA, AA_LLAMA],
        ).fetchall()
        releases = [(r[1], r[2]) for r in rows if r[0] == "release"]
        assert releases == [(JUNE, 322.0), (NOVEMBER, 321.0), (NOVEMBER_1, 333.0)]
        snapshots = [r[2] for r in rows if r[0] == "snapshot" and r[3] == AA_LLAMA]
        assert snapshots == [322.0, 321.0, 333.0]
        tables = con.execute(
            "SELECT table_name, comment FROM duckdb_tables() WHERE schema_name = 'history' "
            "UNION ALL SELECT view_name, comment FROM duckdb_views() "
            "WHERE view_name = 'figure_history'"
        ).fetchall()
        assert len(tables) == 3 and all(comment for _, comment in tables)


@pytest.mark.e2e
def test_a_warehouse_that_missed_releases_catches_up_from_the_folders(scenario, tmp_path):
    with connect(_empty_lake(tmp_path / "lake")) as con:
        added = record_releases(con, scenario.settings.exports)
        assert added == [JUNE, NOVEMBER, NOVEMBER_1]
        assert record_releases(con, scenario.settings.exports) == []
        built = con.execute(
            "SELECT built_at FROM history.releases WHERE version = ?", [NOVEMBER_1]
        ).fetchone()[0]
        mtime = (scenario.settings.exports / NOVEMBER_1).stat().st_mtime
        assert abs(built.timestamp() - mtime) < 1
