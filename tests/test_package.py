"""The package installs: a wheel carries every data file the code reads (SQL, export schemas,
templates, reviewed metadata), and a non-editable install builds the bundled corpus into the same
exports as the development checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from conftest import BUNDLED_RAW, REPO_ROOT

from pipeline.release.contracts import EXPORT_FILES
from pipeline.support.settings import Settings

pytestmark = pytest.mark.e2e
PIP = (sys.executable, "-m", "pip", "--quiet", "--no-input", "--disable-pip-version-check")
OFFLINE = ("--no-deps", "--no-index")


# the top-level folders a wheel carries inside the package (pyproject.toml's force-include),
# where pipeline/support/settings.py looks first
SHIPPED = {"sql": "pipeline/sql", "schemas": "pipeline/schemas"}


def _in_wheel(name: str) -> str:
    """Where the wheel holds the checkout's file `name`."""
    top, _, rest = name.partition("/")
    return f"{SHIPPED[top]}/{rest}" if top in SHIPPED else name


def _tracked_package_data() -> list[str]:
    """Every file under pipeline/ and the shipped folders that git tracks and that is not Python
    source, named as the wheel holds it."""
    listed = subprocess.run(
        ["git", "ls-files", "pipeline", *SHIPPED],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return sorted(_in_wheel(name) for name in listed if not name.endswith(".py"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the source tree (so the build leaves nothing in the repo),
    offline: the dev extra installs the setuptools the build backend needs."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, source / name)
    for folder in ("pipeline", *SHIPPED):
        shutil.copytree(
            REPO_ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [*PIP, "wheel", *OFFLINE, "--no-build-isolation", "--wheel-dir", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("speedbook-*.whl")
    return built


def test_the_wheel_holds_every_data_file_of_the_package(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = _tracked_package_data()
    assert any(name.startswith("pipeline/sql/") for name in expected)
    assert any(name.startswith("pipeline/schemas/") for name in expected)
    assert "pipeline/metadata/sources.toml" in expected
    missing = [name for name in expected if name not in names]
    assert missing == [], f"package data left out of the wheel: {missing}"
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "speedbook = pipeline.cli:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_a_wheel_install_builds_the_bundled_corpus_like_the_checkout(
    wheel: Path, built: Settings, tmp_path: Path
) -> None:
    # A fresh environment: the wheel installed into its own prefix, the dependencies borrowed
    # from this one by a .pth line (its editable finder is not run: .pth files of a directory
    # added that way are not processed), and a working directory outside the checkout.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPEEDBOOK_", "PYTHON"))}
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    subprocess.run(
        [*PIP, "install", *OFFLINE, "--ignore-installed", "--prefix", str(env_dir), str(wheel)],
        check=True,
        capture_output=True,
    )
    site = Path(
        sysconfig.get_path("purelib", vars={"base": str(env_dir), "platbase": str(env_dir)})
    )
    (site / "borrowed-dependencies.pth").write_text(
        sysconfig.get_path("purelib") + "\n", encoding="utf-8"
    )
    python = env_dir / "bin" / "python"
    where = subprocess.run(
        [str(python), "-c", "import pipeline; print(pipeline.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env=env,
    ).stdout.strip()
    assert Path(where).is_relative_to(site), where

    warehouse, exports = tmp_path / "warehouse", tmp_path / "exports"
    shutil.copytree(BUNDLED_RAW, warehouse / "raw")
    result = subprocess.run(
        [
            str(python),
            "-m",
            "pipeline.cli",
            "build",
            "--warehouse",
            f"{warehouse}",
            "--exports",
            f"{exports}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for name in (*EXPORT_FILES, "datapackage.json"):
        installed = (exports / "latest" / name).read_bytes()
        assert installed == (built.exports / "latest" / name).read_bytes(), name
