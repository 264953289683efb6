"""The one resource every asset shares: where the data lives and which date a build describes."""

from datetime import datetime

import dagster as dg

from pipeline.raw.snapshots import parse_utc
from pipeline.sources.registry import Source, load_registry
from pipeline.support.settings import Settings


class SpeedbookResource(dg.ConfigurableResource):
    registry: str
    warehouse: str
    exports: str
    as_of: str = ""  # ISO 8601; empty means "every snapshot on disk"

    @classmethod
    def from_settings(
        cls, settings: Settings, as_of: datetime | None = None
    ) -> "SpeedbookResource":
        return cls(
            registry=str(settings.registry),
            warehouse=str(settings.warehouse),
            exports=str(settings.exports),
            as_of=as_of.isoformat() if as_of else "",
        )

    @property
    def settings(self) -> Settings:
        return Settings.resolve(self.registry, self.warehouse, self.exports)

    @property
    def as_of_time(self) -> datetime | None:
        return parse_utc(self.as_of) if self.as_of else None

    def sources(self) -> dict[str, Source]:
        return load_registry(self.settings.registry)
