"""DuckDB's extensions the warehouse uses, loaded offline and signed.

The lake needs `ducklake`, and by where its catalog and data live `sqlite_scanner`,
`postgres_scanner` or `httpfs`. Each is loaded from the PyPI package of DuckDB's signed binary
(`duckdb-extension-<name>`, pinned with DuckDB in pyproject.toml) when it is installed and built
for this DuckDB, so a build needs no network; otherwise DuckDB's own `INSTALL` fetches it from
its repository. Connections never allow unsigned extensions: the signature is checked either way.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import duckdb

LAKE = "ducklake"
SQLITE = "sqlite_scanner"
POSTGRES = "postgres_scanner"
HTTPFS = "httpfs"


class ExtensionError(RuntimeError):
    """An extension could be neither loaded from its package nor installed."""


def packaged_binary(name: str) -> Path | None:
    """The binary of extension `name` in its installed package, built for this DuckDB; None when
    the package is missing or built for another version."""
    spec = importlib.util.find_spec(f"duckdb_extension_{name}")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    binary = folder / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    return binary if binary.is_file() else None


def load(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Load extension `name` (signed) into `con`: from its package, else through INSTALL."""
    loaded = con.execute(
        "SELECT loaded FROM duckdb_extensions() WHERE extension_name = ?", [name]
    ).fetchone()
    if loaded and loaded[0]:
        return
    binary = packaged_binary(name)
    try:
        if binary is not None:
            con.execute(f"LOAD '{binary.as_posix()}'")
        else:
            con.execute(f"INSTALL {name}")
            con.execute(f"LOAD {name}")
    except duckdb.Error as error:
        where = binary or "DuckDB's extension repository (no package for this DuckDB)"
        raise ExtensionError(
            f"DuckDB extension {name} could not be loaded from {where}: {error}. Install the "
            f"package pinned in pyproject.toml (duckdb-extension-{name.replace('_', '-')}) for "
            f"DuckDB {duckdb.__version__}: make install"
        ) from None
