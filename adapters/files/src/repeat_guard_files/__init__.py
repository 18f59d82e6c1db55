"""Replacing a file atomically: the one writer every command of repeat-guard that writes a file
uses (the installer's settings files, ``replay --annotate``, ``audit --html``).

``write_atomically(target, write)`` writes through a temporary file in the target's folder and
renames it over the target once complete; ``check_target`` refuses, before any work, a target
that is not a new path or a regular file (``TargetError``).
"""

from ._atomic import TargetError, Terminated, check_target, termination_raises, write_atomically

__all__ = ["TargetError", "Terminated", "check_target", "termination_raises", "write_atomically"]
