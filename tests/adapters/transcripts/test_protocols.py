"""What a reader can do beside reading lines (``PathReading``, ``ResultsOptional``,
``FolderReading``, ``Annotating``), asked of its class once: the readers are asked it for every
file read and every folder walked."""

from __future__ import annotations

import pytest

from repeat_guard_transcripts import (
    READERS,
    Annotating,
    FolderReading,
    PathReading,
    ResultsOptional,
)
from repeat_guard_transcripts import _registry as registry

PROTOCOLS = [PathReading, ResultsOptional, FolderReading, Annotating]


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda protocol: protocol.__name__)
def test_each_readers_answer_is_isinstances_and_is_kept_for_its_class(protocol: type) -> None:
    for reader in READERS.values():
        asked = registry._kind_is(reader, protocol)
        assert asked is isinstance(reader, protocol)
        assert registry._KINDS[type(reader), protocol] is asked


def test_the_readers_of_folders_and_paths_are_the_ones_that_say_so() -> None:
    folders = [name for name, reader in READERS.items() if registry._reads_folders(reader)]
    paths = [name for name, reader in READERS.items() if registry._reads_paths(reader)]
    assert folders
    assert set(folders) <= set(paths)
    assert "claude-code" not in paths
    assert registry._leaves_results_out(READERS["claude-code"])
