"""How a host writes a command's exit status into a result's text (``repeat_guard.exits``)."""

from __future__ import annotations

import pytest

from repeat_guard.exits import copilot_shell_exit


@pytest.mark.parametrize(
    ("text", "read"),
    [
        # As Copilot CLI 1.0.102 ends its bash tool's result (shell ids count up from 0).
        (
            "pre-commit: ruff failed\n<shellId: 4 completed with exit code 1>",
            ("pre-commit: ruff failed\n<completed with exit code 1>", 1),
        ),
        (
            "a.txt\n<shellId: 0 completed with exit code 0>",
            ("a.txt\n<completed with exit code 0>", 0),
        ),
        ("x<shellId: 12 completed with exit code -2>\n", ("x<completed with exit code -2>", -2)),
        # The ending mid-text is the command's own output; other texts are not Copilot's shell.
        ("<shellId: 1 completed with exit code 1> then more", None),
        ("no shell", None),
        ("<shellId: x completed with exit code 1>", None),
    ],
)
def test_copilot_shell_endings(text: str, read: tuple[str, int] | None) -> None:
    assert copilot_shell_exit(text) == read


def test_two_runs_of_the_same_failing_command_read_the_same() -> None:
    first = copilot_shell_exit("boom\n<shellId: 1 completed with exit code 3>")
    second = copilot_shell_exit("boom\n<shellId: 7 completed with exit code 3>")
    assert first == second == ("boom\n<completed with exit code 3>", 3)
