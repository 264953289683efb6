"""Live fetching: bring registered sources up to date as new snapshots, failing safely.

``fetch_sources(settings, ...)`` is a plain function (asyncio inside, ``asyncio.run`` at the
edge); ``speedbook fetch`` and ``build --live`` call it.
"""

from pipeline.fetch.client import FetchError, FetchReport, fetch_sources
from pipeline.fetch.policy import DEFAULT_OPTIONS, USER_AGENT, FetchOptions

__all__ = [
    "DEFAULT_OPTIONS",
    "USER_AGENT",
    "FetchError",
    "FetchOptions",
    "FetchReport",
    "fetch_sources",
]
