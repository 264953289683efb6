"""Loading a JSON snapshot with errors that name the snapshot."""

from __future__ import annotations

import json
from typing import Any

from pipeline.extract.base import SnapshotInput


def load_json(snapshot: SnapshotInput) -> Any:
    text = snapshot.text()
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise snapshot.fail(f"not valid JSON: {error.msg} at line {error.lineno}") from None
    except RecursionError:
        raise snapshot.fail("JSON nested too deeply to read") from None
