"""The Makefile's e2e targets from a checkout whose path holds a space: the environment they give
the tests names each host's executables by whole paths (``make -n``: nothing is installed)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# What .venv/.synced depends on: present, so that `make -n` can plan the targets.
_PREREQUISITES = ("uv.lock", "pyproject.toml", "core/pyproject.toml")
# Stands in for `uv run`: the recipe's variables, printed one a line, instead of pytest.
_PRINT_ENV = "env | grep ^REPEAT_GUARD_E2E | sort; :"


@pytest.fixture
def spaced_checkout(tmp_path: Path) -> Path:
    if shutil.which("make") is None:  # pragma: no cover - every machine that runs make test
        pytest.fail("make is not on PATH")
    checkout = tmp_path / "a check out"
    checkout.mkdir()
    shutil.copy(ROOT / "Makefile", checkout / "Makefile")
    for name in _PREREQUISITES:
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        (checkout / name).touch()
    return checkout


def _planned(checkout: Path, target: str) -> list[str]:
    # Run under `make test`, the outer make's level and flags would make this one print
    # "Entering/Leaving directory" lines among the recipe's: plan it as a make of its own.
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MAKELEVEL", "MFLAGS"}}
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", target, f"RUN={_PRINT_ENV}"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def test_e2e_gives_each_host_its_executables_by_whole_paths(spaced_checkout: Path) -> None:
    *_, line = _planned(spaced_checkout, "e2e")
    shown = subprocess.run(
        ["bash", "-c", line], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    env = dict(entry.split("=", 1) for entry in shown)
    npm = f"{spaced_checkout}/.tools/npm"
    assert env["REPEAT_GUARD_E2E_CLAUDE_CODE"].split(":") == [
        f"{npm}/claude-code/{version}/node_modules/.bin/claude"
        for version in ("2.1.332", "2.1.197")
    ]
    assert env["REPEAT_GUARD_E2E_GEMINI"].startswith(f"{npm}/gemini/")
    assert env["REPEAT_GUARD_E2E_OPENCLAW_PATH"] == f"{spaced_checkout}/.tools/node24/node"
    assert all(value.startswith(f"{spaced_checkout}/.tools/") for value in env.values())


def test_installs_and_e2e_latest_quote_the_checkouts_path(spaced_checkout: Path) -> None:
    planned = _planned(spaced_checkout, "e2e")
    node = f"'{spaced_checkout}/.tools/node24/node'"
    assert f"mkdir -p {node} && " in "\n".join(planned)
    assert any(f'PATH={node}:"$PATH" npm install' in line for line in planned)
    latest = "\n".join(_planned(spaced_checkout, "e2e-latest"))
    assert f"REPEAT_GUARD_E2E_CODEX='{spaced_checkout}/$d/node_modules/.bin/codex'" in latest
    assert f"REPEAT_GUARD_E2E_OPENCLAW_PATH={node}" in latest
