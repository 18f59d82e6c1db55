"""Every test runs with the resident guard off unless it turns it on: a hook call made in a test
must not leave a guard process behind. Tests of the guard start and stop their own."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_resident_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPEAT_GUARD_DAEMON", "off")
