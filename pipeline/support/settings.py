"""Where things live: project root, registry, warehouse and exports, overridable by env vars."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the installed `pipeline` package
ENV_METADATA = "SPEEDBOOK_METADATA"
# The reviewed files (registry, aliases, claims, platforms). Another folder can stand in for it,
# e.g. the benchmark's synthetic metadata; read once, when the package is imported.
METADATA_DIR = Path(os.environ.get(ENV_METADATA) or PACKAGE_DIR / "metadata").resolve()
SQL_DIR = PACKAGE_DIR / "warehouse" / "sql"
DICTIONARY_PATH = SQL_DIR / "DATA_DICTIONARY.md"  # generated: `speedbook dictionary`
SCHEMAS_DIR = PACKAGE_DIR / "release" / "schemas"

ENV_REGISTRY = "SPEEDBOOK_REGISTRY"
ENV_WAREHOUSE = "SPEEDBOOK_WAREHOUSE"
ENV_EXPORTS = "SPEEDBOOK_EXPORTS"


@dataclass(frozen=True)
class Settings:
    """Resolved locations for one invocation. Options beat env vars beat defaults."""

    registry: Path
    warehouse: Path
    exports: Path

    @property
    def raw_dir(self) -> Path:
        return self.warehouse / "raw"

    @property
    def database(self) -> Path:
        return self.warehouse / "speedbook.duckdb"

    @property
    def dagster_home(self) -> Path:
        return self.warehouse / "dagster"

    @property
    def lock_file(self) -> Path:
        return self.warehouse / "build.lock"

    @classmethod
    def resolve(
        cls,
        registry: str | Path | None = None,
        warehouse: str | Path | None = None,
        exports: str | Path | None = None,
    ) -> Settings:
        def pick(option: str | Path | None, env: str, default: Path) -> Path:
            chosen = option or os.environ.get(env) or default
            return Path(chosen).expanduser().resolve()

        return cls(
            registry=pick(registry, ENV_REGISTRY, METADATA_DIR / "sources.toml"),
            warehouse=pick(warehouse, ENV_WAREHOUSE, Path("warehouse")),
            exports=pick(exports, ENV_EXPORTS, Path("exports")),
        )
