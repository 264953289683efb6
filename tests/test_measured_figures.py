"""core.measured_observations is kept between builds: a build adds the figures of the snapshots
new to it, drops those that left its scope, and makes them all again when a mapping they were
made with changed. Whichever way, it holds exactly what core.figures_from_staging computes from
scratch, and a lake built bit by bit holds what a lake built at once does; so do the current
figures kept with them (core.current_measured) and the mart's."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pyarrow as pa
from conftest import BUNDLED_RAW, UP_TO_CORE, failures, lake_at, materialize, progress_lines

from pipeline.support.settings import BUNDLED_METADATA, Settings

MEASURED = "core.measured_observations"


def _rows(settings: Settings, relation: str) -> pa.Table:
    with lake_at(settings.warehouse, read_only=True) as con:
        return con.sql(f"SELECT * FROM {relation} ORDER BY observation_id").to_arrow_table()


def _same_as_from_scratch(settings: Settings) -> pa.Table:
    """The kept figures, checked against the view that computes them from staging; and their
    kept current figures, and the mart's, against those taken from every figure."""
    kept_and_scratch = [
        (MEASURED, "core.figures_from_staging"),
        ("core.current_measured", f"core.current_of(['{MEASURED}'])"),
        ("mart.current_observations", "core.current_of(['core.observations'])"),
    ]
    with lake_at(settings.warehouse, read_only=True) as con:
        for kept, scratch in kept_and_scratch:
            [(extra, missing)] = con.execute(
                f"SELECT (SELECT count(*) FROM (FROM {kept} EXCEPT ALL FROM {scratch})), "
                f"(SELECT count(*) FROM (FROM {scratch} EXCEPT ALL FROM {kept}))"
            ).fetchall()
            assert (extra, missing) == (0, 0), kept
    return _rows(settings, MEASURED)


def _build(settings: Settings) -> list[str]:
    with progress_lines() as lines:
        result = materialize(settings, UP_TO_CORE)
    assert result.success, failures(result)
    # without the elapsed time the command line puts first
    return [line.split("] ", 1)[-1] for line in lines if "measured figures" in line]


def _newest_of_each_source(raw: Path) -> list[Path]:
    """The newest snapshot file of every source with more than one."""
    newest = []
    for folder in sorted(p for p in raw.iterdir() if p.is_dir()):
        snapshots = sorted(p for p in folder.iterdir() if not p.name.endswith(".meta.json"))
        if len(snapshots) > 1:
            newest.append(snapshots[-1])
    return newest


def _warehouse(root: Path) -> Settings:
    return Settings.resolve(
        registry=Settings.resolve().registry,
        warehouse=root / "warehouse",
        exports=root / "exports",
    )


def _hold(paths: list[Path], held: Path) -> None:
    held.mkdir()
    for path in paths:
        for part in (path, path.with_name(path.name + ".meta.json")):
            shutil.move(part, held / f"{part.parent.name}--{part.name}")


def _put_back(held: Path, raw: Path) -> None:
    for part in held.iterdir():
        source, name = part.name.split("--", 1)
        shutil.move(part, raw / source / name)


def test_a_build_adds_the_new_snapshots_figures_as_a_whole_build_makes_them(built, tmp_path):
    raw = tmp_path / "warehouse" / "raw"
    shutil.copytree(BUNDLED_RAW, raw)
    (raw / ".snapshot-index.json").unlink(missing_ok=True)
    newest = _newest_of_each_source(raw)
    # Artificial Analysis's newer pages add figures under names already known; the catalogues'
    # and OpenRouter's newer responses name models that change the ids of unreviewed models the
    # kept figures name (an unreviewed entity is named by the labels in scope)
    adding = [p for p in newest if p.parent.name.startswith("aa-")]
    rekeying = [p for p in newest if p not in adding]
    assert len(adding) >= 2 and rekeying, newest  # the test means something
    _hold(adding, tmp_path / "adding")
    _hold(rekeying, tmp_path / "rekeying")
    settings = _warehouse(tmp_path)

    first = _build(settings)
    assert len(first) == 1 and "from all snapshots" in first[0], first
    before = _same_as_from_scratch(settings)
    current = _rows(settings, "core.current_measured")

    _put_back(tmp_path / "adding", raw)
    second = _build(settings)
    added = _same_as_from_scratch(settings).num_rows - before.num_rows
    assert added > 0
    # the newer pages' figures replaced current ones (merged in, as checked above)
    assert not _rows(settings, "core.current_measured").equals(current)
    assert second == [
        f"warehouse: measured figures: {added:,} added from {len(adding):,} snapshot(s), "
        "0 snapshot(s) dropped"
    ]

    _put_back(tmp_path / "rekeying", raw)
    third = _build(settings)
    assert len(third) == 1 and "made again (core.endpoint_keys changed)" in third[0], third
    assert _same_as_from_scratch(settings).equals(_rows(built, MEASURED))  # as built at once

    assert _build(settings) == [
        "warehouse: measured figures: 0 added from 0 snapshot(s), 0 snapshot(s) dropped"
    ]


def test_a_withdrawn_snapshot_takes_its_figures_with_it(built, tmp_path, cli):
    from test_build import copy_of

    settings = copy_of(built, tmp_path)
    with lake_at(settings.warehouse, read_only=True) as con:
        [(snapshot_id, figures)] = con.execute(
            f"SELECT snapshot_id, count(*) FROM {MEASURED} WHERE source_id = 'aa-gpt-oss-120b' "
            "GROUP BY snapshot_id ORDER BY snapshot_id DESC LIMIT 1"
        ).fetchall()
    assert figures > 0
    source, file = snapshot_id.split("/")
    where = ("--warehouse", str(settings.warehouse), "--exports", str(settings.exports))
    assert cli("snapshot", "remove", source, file, "--reason", "test", *where).status == 0
    lines = _build(settings)
    kept = _same_as_from_scratch(settings)
    assert snapshot_id not in set(kept.column("snapshot_id").to_pylist())
    assert kept.num_rows == _rows(built, MEASURED).num_rows - figures
    assert lines and (lines[-1].endswith("1 snapshot(s) dropped") or "all snapshots" in lines[-1])


def test_a_changed_mapping_makes_every_figure_again(built, tmp_path):
    from test_build import copy_of

    metadata = tmp_path / "metadata"
    shutil.copytree(BUNDLED_METADATA, metadata)
    aliases = metadata / "provider_aliases.csv"
    text = aliases.read_text(encoding="utf-8")
    line = "\ngroq,groq,LLMPerf framework name"
    assert line in text
    # a reviewer drops an alias: LLMPerf's label `groq` now resolves by the provider's id, by
    # another rule than the one the kept figures were made with
    aliases.write_text(text.replace(line, ""), encoding="utf-8")
    settings = dataclasses.replace(copy_of(built, tmp_path / "copy"), metadata=metadata)
    lines = _build(settings)
    kept = _same_as_from_scratch(settings)
    assert lines == [
        f"warehouse: measured figures made again (core.labels changed): {kept.num_rows:,} "
        "from all snapshots"
    ]
    assert kept.equals(_rows(built, MEASURED))  # the same endpoint, so the same figures
