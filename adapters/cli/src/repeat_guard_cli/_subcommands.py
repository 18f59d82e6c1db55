"""Subcommands whose parsers get their arguments when they are used.

A command line runs one subcommand, and ``repeat-guard --help`` names each by its summary alone.
So each subcommand's parser is made with its name, summary and formatter, and gets its arguments
and epilog (some of which import what they describe: the hosts' dialects for ``install``, the
readers for ``replay``) only once it parses its part of a command line or shows its help.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

__all__ = ["Commands", "DeferredParser", "Fill", "add_command"]

Fill = Callable[[argparse.ArgumentParser], None]
"""Adds a subcommand's arguments (and epilog) to its parser."""


class DeferredParser(argparse.ArgumentParser):
    """A subcommand's parser, filled in by ``fill`` before its first use."""

    def __init__(self, *, fill: Fill | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._fill = fill

    def _filled(self) -> None:
        fill, self._fill = self._fill, None
        if fill is not None:
            fill(self)

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        self._filled()
        return super().parse_known_args(*args, **kwargs)

    def format_usage(self) -> str:
        self._filled()
        return super().format_usage()

    def format_help(self) -> str:
        self._filled()
        return super().format_help()


if TYPE_CHECKING:  # argparse's action takes no type argument at run time
    Commands: TypeAlias = argparse._SubParsersAction[DeferredParser]
    """The command's subparsers (``add_subparsers(parser_class=DeferredParser)``)."""


def add_command(
    commands: Commands,
    name: str,
    summary: str,
    fill: Fill,
    formatter: type[argparse.HelpFormatter] = argparse.RawDescriptionHelpFormatter,
    description: str | None = None,
) -> None:
    """Add the subcommand ``name``: ``summary`` in the command's help, its description unless
    ``description`` is given; ``fill`` adds the rest when it is used."""
    commands.add_parser(
        name,
        help=summary,
        description=summary if description is None else description,
        formatter_class=formatter,
        fill=fill,
    )
