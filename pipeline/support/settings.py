"""Where things live: registry, reviewed files, warehouse and exports, overridable by env vars."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the installed `pipeline` package
# The reviewed files (registry, aliases, claims, platforms) the package ships. Another folder can
# stand in for it (`Settings.metadata`, e.g. the benchmark's synthetic metadata).
BUNDLED_METADATA = PACKAGE_DIR / "metadata"
SQL_DIR = PACKAGE_DIR / "warehouse" / "sql"
DICTIONARY_PATH = SQL_DIR / "DATA_DICTIONARY.md"  # generated: `speedbook dictionary`
SCHEMAS_DIR = PACKAGE_DIR / "release" / "schemas"

DATABASE_FILE = "speedbook.duckdb"  # the warehouse's DuckDB file, in its folder
ENV_REGISTRY = "SPEEDBOOK_REGISTRY"
ENV_WAREHOUSE = "SPEEDBOOK_WAREHOUSE"
ENV_EXPORTS = "SPEEDBOOK_EXPORTS"
ENV_METADATA = "SPEEDBOOK_METADATA"
# `running`: the code location's schedules start running when the instance first sees them
# (`speedbook ui --schedules-running`); otherwise they start stopped
ENV_SCHEDULES = "SPEEDBOOK_SCHEDULES"
SCHEDULES_RUNNING = "running"


@dataclass(frozen=True)
class Settings:
    """Resolved locations for one invocation. Options beat env vars beat defaults."""

    registry: Path
    warehouse: Path
    exports: Path
    metadata: Path = BUNDLED_METADATA  # the folder of reviewed files

    @property
    def raw_dir(self) -> Path:
        return self.warehouse / "raw"

    @property
    def database(self) -> Path:
        return self.warehouse / DATABASE_FILE

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
        metadata: str | Path | None = None,
    ) -> Settings:
        def pick(option: str | Path | None, env: str, default: Path) -> Path:
            chosen = option or os.environ.get(env) or default
            return Path(chosen).expanduser().resolve()

        metadata_dir = pick(metadata, ENV_METADATA, BUNDLED_METADATA)
        return cls(
            registry=pick(registry, ENV_REGISTRY, metadata_dir / "sources.toml"),
            warehouse=pick(warehouse, ENV_WAREHOUSE, Path("warehouse")),
            exports=pick(exports, ENV_EXPORTS, Path("exports")),
            metadata=metadata_dir,
        )
