"""Where a command may write: the one check every output file passes before any work.

An output replaces its file atomically once the work is done, so the checks come first: a
long audit must not end in a path it could never write, and no output may destroy what the
command reads. Refused: an empty name; the input itself, or the configuration file; a file
in a folder being read that some reader recognises (the walk would read it as a
transcript: a page written beside the transcripts is fine); and, through ``check_target``,
anything but a regular file or a new path in a folder that takes new files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from repeat_guard_files import TargetError, check_target
from repeat_guard_transcripts import sniff_format

from ._errors import UsageError

__all__ = ["check_output"]


def check_output(option: str, target: str, inputs: Iterable[str], config: str | None) -> None:
    """Raise ``UsageError`` unless ``option``'s ``target`` may be written after reading
    ``inputs`` (files or folders) with the configuration file ``config``."""
    if not target:
        raise UsageError(f"{option} needs a file name, got ''")
    for source in inputs:
        _refuse_input(option, target, source)
    if config is not None and _same_file(config, target):
        raise UsageError(f"{option} {target} would overwrite the configuration file")
    try:
        check_target(target, folder=True)
    except TargetError as error:
        raise UsageError(str(error)) from error


def _refuse_input(option: str, target: str, source: str) -> None:
    if source == "-":
        return
    if _same_file(source, target):
        raise UsageError(f"{option} {target} would overwrite its own input; choose another file")
    if os.path.isdir(source) and _inside(target, source) and sniff_format(target) is not None:
        raise UsageError(
            f"{option} {target} would overwrite a transcript in {source}, which is read; "
            "choose another file"
        )


def _same_file(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


def _inside(path: str, folder: str) -> bool:
    real = os.path.realpath(path)
    return os.path.commonpath([real, os.path.realpath(folder)]) == os.path.realpath(folder)
