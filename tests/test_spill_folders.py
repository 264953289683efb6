"""Each DuckDB session spills into a folder of its own. DuckDB (1.5) names its spill files the
same in every instance and deletes them all when an instance closes, so a reader and a build
sharing one folder read each other's files ("Could not read enough bytes from file") or lose
them: seen when a comparison query ran beside a benchmark's build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pipeline.warehouse.connection import session

SPILL = """
import sys
from pipeline.warehouse.connection import session
con = session()
con.execute("SET memory_limit = '40MB'")
con.execute("SET threads = 1")
rows = con.execute(
    "SELECT sum(i * position) FROM (SELECT i, row_number() OVER (ORDER BY hash(i), s) AS position "
    "FROM (SELECT i, repeat('x', 40) || i AS s FROM range(1500000) t(i)))"
).fetchone()[0]
print(rows)
"""


def _folder(con) -> Path:
    return Path(con.execute("SELECT current_setting('temp_directory')").fetchone()[0])


def test_two_sessions_never_share_a_spill_folder_and_each_leaves_none():
    first, second = session(), session()
    try:
        assert _folder(first) != _folder(second)
        assert _folder(first).parent == _folder(second).parent
        folder = _folder(first)
        first.execute("SET memory_limit = '40MB'")
        first.execute("SET threads = 1")
        first.execute(
            "SELECT count(*) FROM (SELECT * FROM range(1500000) t(i) ORDER BY hash(i))"
        ).fetchone()
    finally:
        first.close()
        second.close()
    assert not folder.exists()  # DuckDB removes the folder it created


def test_processes_spilling_at_once_each_get_their_own_answer():
    runs = [
        subprocess.Popen([sys.executable, "-c", SPILL], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    answers = [run.communicate(timeout=300)[0].strip() for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0]
    assert len(set(answers)) == 1 and answers[0].isdigit()
