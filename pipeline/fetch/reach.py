"""Which hosts a fetch run could reach, and when the network itself looks unreachable.

Offline, every source used to fail on its own: four attempts with backoff each, a line per retry,
and a poll's hundreds of requests one after another, so 48 unreachable sources took 159 s and
1,286 lines of stderr. Two rules end that:

- A host that could not be reached (its name does not resolve, it refuses or cannot be routed
  to) after all of a request's attempts is not asked again in the same run: the other requests
  to it (a poll's members, the sources that share it) fail at once, naming why.
- When no host has answered at all, at least OFFLINE_MIN_HOSTS hosts and half of the run's
  hosts could not be reached, and no attempt that might still answer is under way, the
  network looks unreachable: that is said once, nothing is retried for a failure to connect,
  and no request starts any more. One host that answers (any HTTP status, a reset or a read
  timeout after connecting) shows the network works, and then only the per-host rule applies.

Pure bookkeeping (no I/O), so the rules are tested without a network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from urllib.parse import urlsplit

OFFLINE_MIN_HOSTS = 3
SHOWN_HOSTS = 3


def endpoint(url: str) -> str:
    """The host and port a URL connects to (a refused port says nothing of another one)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port else host


@dataclass
class Reachability:
    """What one fetch run has learnt about the hosts it asked."""

    hosts: frozenset[str]  # every endpoint the run's sources name
    answered: set[str] = field(default_factory=set)
    failed: dict[str, str] = field(default_factory=dict)  # endpoint -> first failure to connect
    down: dict[str, str] = field(default_factory=dict)  # endpoint -> why it is not asked again
    offline: str | None = None  # why the network looks unreachable, once it does
    in_flight: int = 0  # attempts under way, any of which may still answer

    def reached(self, url: str) -> None:
        """A server at `url` answered (or at least accepted the connection)."""
        self.answered.add(endpoint(url))

    def not_reached(self, url: str, reason: str) -> str | None:
        """A connection to `url` failed before any server answered; returns the message that
        the network looks unreachable when this failure is the one that shows it."""
        self.failed.setdefault(endpoint(url), reason)
        if self.offline is not None or self.answered or self.in_flight:
            return None
        needed = max(OFFLINE_MIN_HOSTS, math.ceil(len(self.hosts) / 2))
        if len(self.failed) < needed:
            return None
        shown = "; ".join(f"{host}: {why}" for host, why in list(self.failed.items())[:SHOWN_HOSTS])
        more = len(self.failed) - SHOWN_HOSTS
        self.offline = (
            f"the network looks unreachable: none of {len(self.failed)} hosts could be reached "
            f"and none answered ({shown}{f'; {more} more' if more > 0 else ''})"
        )
        return self.offline

    def give_up(self, url: str, reason: str) -> None:
        """Every attempt at `url` failed to connect: the run does not ask its host again."""
        self.down.setdefault(endpoint(url), reason)

    def blocked(self, url: str) -> str | None:
        """Why no request (or retry) to `url` is made any more, or None when it may be."""
        if self.offline is not None:
            return "the network looks unreachable"
        host = endpoint(url)
        if host in self.down:
            return f"{host} could not be reached earlier in this run ({self.down[host]})"
        return None
