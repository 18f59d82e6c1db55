"""The packages on a hook's path import their names plainly: each name of ``__all__`` is bound
when the package is imported, and none is looked up lazily."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "repeat_guard",
    "repeat_guard.tally",
    "repeat_guard_cli",
    "repeat_guard_entry",
    "repeat_guard_hookcall",
    "repeat_guard_hookcall.config_file",
    "repeat_guard_hooks",
    "repeat_guard_hooks.installer",
    "repeat_guard_hooks.resident",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_is_bound_by_the_import(package: str) -> None:
    module = importlib.import_module(package)
    assert not hasattr(module, "__getattr__")
    assert set(module.__all__) <= set(vars(module))
