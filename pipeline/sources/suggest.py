"""The message for a source id the registry does not have, with the ids the user may have meant.

One helper for every command that takes a source id (`fetch`, `snapshot add|list|remove`), as
pipeline/normalise/entities.py suggests names: difflib's close matches, after the spelling a
newcomer may use is put into the registry's (`OpenRouter`, `aa_kimi` -> `openrouter`,
`aa-kimi`), and the ids that hold what was typed (`kimi` -> `aa-kimi-k2-6`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

MAX_SUGGESTIONS = 3
CUTOFF = 0.6  # difflib's ratio, as for names
MIN_PART = 3  # typed text this long is looked for inside the ids
SEE = "see `speedbook sources`"
_SEPARATORS = re.compile(r"[\s_./]+")


def _as_id(text: str) -> str:
    return _SEPARATORS.sub("-", text.strip().lower()).strip("-")


def close_ids(source_id: str, known: Iterable[str]) -> list[str]:
    """Up to MAX_SUGGESTIONS registered ids close to `source_id`, the closest first."""
    ids = sorted(set(known))
    typed = _as_id(source_id)
    if not typed:
        return []
    found = difflib.get_close_matches(typed, ids, n=MAX_SUGGESTIONS, cutoff=CUTOFF)
    if len(typed) >= MIN_PART:
        found += [i for i in ids if typed in i and i not in found]
    return found[:MAX_SUGGESTIONS]


def did_you_mean(source_id: str, known: Iterable[str]) -> str:
    """` (did you mean openrouter or openrouter-endpoints?)`, or `` when nothing is close."""
    close = close_ids(source_id, known)
    if not close:
        return ""
    names = close[0] if len(close) == 1 else ", ".join(close[:-1]) + " or " + close[-1]
    return f" (did you mean {names}?)"


def unknown_sources(source_ids: Sequence[str], known: Iterable[str]) -> str:
    """`unknown source id 'openroutr' (did you mean openrouter?); see `speedbook sources``, one
    message for one id or several."""
    ids = sorted(set(known))
    named = [f"{source_id!r}{did_you_mean(source_id, ids)}" for source_id in source_ids]
    noun = "source id" if len(named) == 1 else "source ids"
    return f"unknown {noun} {', '.join(named)}; {SEE}"
