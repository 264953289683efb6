"""`speedbook build` refuses bad options with one line, before it takes the lock or builds."""

from __future__ import annotations

import pytest


def _no_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bad input must be refused before any build starts."""
    import pipeline.runner

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("a build started")

    monkeypatch.setattr(pipeline.runner, "execute", fail)


@pytest.mark.parametrize(
    ("as_of", "message"),
    [
        ("yesterday", "is not a date (YYYY-MM-DD) or ISO 8601 time"),
        ("2026-13-01", "is not a date (YYYY-MM-DD) or ISO 8601 time"),
        ("0001-01-01T00:00:00+05:00", "is out of range"),
        ("9999-12-31T23:00:00-05:00", "is out of range"),
        ("2999-01-01", "is in the future"),
    ],
)
def test_a_bad_as_of_is_one_line(settings, cli, monkeypatch, as_of, message):
    _no_build(monkeypatch)
    result = cli("build", "--as-of", as_of)
    assert result.status == 2
    assert message in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1
