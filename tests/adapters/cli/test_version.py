"""``repeat-guard --version``: the version of the installed command, the one its project file
declares."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from repeat_guard_cli import main

PROJECT = Path(__file__).parents[3] / "adapters" / "cli" / "pyproject.toml"


def _declared() -> str:
    version = tomllib.loads(PROJECT.read_text(encoding="utf-8"))["project"]["version"]
    assert isinstance(version, str)
    return version


@pytest.mark.parametrize("argv", [["--version"], ["--version", "audit"]])
def test_version_prints_the_declared_version_and_exits_0(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out == f"repeat-guard {_declared()}\n"
    assert captured.err == ""


def test_only_version_reads_the_installed_metadata() -> None:
    probe = (
        "import sys\n"
        "from repeat_guard_cli import main\n"
        "main(['check-config', '--help'])\n"
        "print('importlib.metadata' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True)
    assert done.stderr.decode().split() == ["False"]
