"""Writing a changed JSON value back into the text it was read from, changing only what changed.

People commit their agents' settings files and read their diffs: a tool that adds its entries
must not re-indent the file, rewrite ``\\u00e9`` as ``é`` or ``1.50`` as ``1.5``. ``splice_json``
takes the file's text and the value it should now hold, and compares the two the way the value
was read: a value equal to the one its text spells (same types, same keys, same elements) keeps
its text byte for byte; an object keeps the members that stay, in place, loses those that went
and gains new ones at its end; an array is aligned element by element (``difflib``), so that an
element removed takes its separator with it and one added goes where it belongs. Only the text
of a value that is new, or whose type changed, is written afresh, in the file's own way: its
line ending (CRLF when the file has one), its indent (the first indented line's, two spaces in a
file without one), the separator after its keys, on one line inside a container written on one
line, ASCII escapes in a file that is all ASCII. Everything outside the document's value (a
byte-order mark, the whitespace around it, a final newline or its absence) stays as it was.

So adding an element at the end of an array and removing it again gives back the original text
byte for byte, as does adding a member to an object and removing it. The one loss: a container
emptied by a change is written ``{}`` or ``[]``, whatever whitespace it held before it was filled.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ._text import escape_lone_surrogates

__all__ = ["splice_json"]

_BOM = "\ufeff"
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_INDENTED_LINE = re.compile(r"\n([ \t]+)[^ \t\r\n]")
_DECODER = json.JSONDecoder()
_GONE = object()


@dataclass(frozen=True, slots=True)
class _Style:
    """How the document writes what a new value must be written like."""

    newline: str
    indent: str
    colon: str  # between a key and its value
    comma: str  # between the elements of a container written on one line
    ascii: bool
    multiline: bool  # for a container with nothing inside to tell (an empty one)


@dataclass(frozen=True, slots=True)
class _Child:
    """A member of an object (``key`` set) or an element of an array, by its place in the text."""

    key: str | None
    start: int  # of the key, or of the element
    key_end: int  # just past the key (``start`` for an element)
    value_start: int
    end: int  # just past the value
    value: object


# An edit of the original text: replace text[start:end] by the string (start == end: insert).
_Edit = tuple[int, int, str]


def splice_json(text: str | None, value: object) -> str:
    """Return JSON text for ``value``, spliced into ``text`` where it differs from what ``text``
    holds: every byte of ``text`` that spells a part of ``value`` that did not change stays.

    ``text`` is the file's text (an optional byte-order mark, then one JSON value that names no
    key twice in an object, with any whitespace around it), or ``None`` or blank for a file that
    is absent or empty, which gets ``value`` with a two-space indent and a final newline.
    ``value`` is made of what ``json`` writes (dicts with string keys, lists, strings, numbers,
    booleans, ``None``). Raises ``ValueError`` when ``text`` is not JSON or ``value`` holds NaN
    or an infinity.
    """
    start = _skip(text, 1 if text.startswith(_BOM) else 0) if text is not None else 0
    if text is None or start == len(text):
        fresh = _Style("\n", "  ", ": ", ", ", ascii=False, multiline=True)
        return _render(value, fresh, "", multiline=True) + "\n"
    old, end = _DECODER.raw_decode(text, start)
    if _skip(text, end) != len(text):
        raise ValueError(f"not one JSON value: text follows it at character {_skip(text, end)}")
    edits: list[_Edit] = []
    _splice_value(text, start, end, old, value, _style(text, start, end, old), edits)
    return _apply(text, edits)


def _skip(text: str, position: int) -> int:
    match = _WHITESPACE.match(text, position)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _style(text: str, start: int, end: int, root: object) -> _Style:
    body = text[start:end]
    indented = _INDENTED_LINE.search(body)
    colon = ": "
    if isinstance(root, dict) and root:
        first = _children(text, start)[0][0]
        written = text[first.key_end : first.value_start]
        colon = written if written in (":", ": ", " : ", " :") else colon
    return _Style(
        newline="\r\n" if "\r\n" in text else "\n",
        indent=indented[1] if indented else "  ",
        colon=colon,
        comma=", " if colon.endswith(" ") else ",",
        ascii=text.isascii(),
        multiline="\n" in body or not root,
    )


def _render(value: object, style: _Style, base: str, *, multiline: bool) -> str:
    if multiline:
        written = json.dumps(
            value,
            indent=style.indent,
            separators=(",", style.colon),
            ensure_ascii=style.ascii,
            allow_nan=False,
        ).replace("\n", style.newline + base)
    else:
        written = json.dumps(
            value, separators=(style.comma, style.colon), ensure_ascii=style.ascii, allow_nan=False
        )
    # A string may hold a lone surrogate: written as the escape it was read from.
    return escape_lone_surrogates(written)


def _same(old: object, new: object) -> bool:
    # As JSON tells values apart: 1 is not 1.0 nor true; key order does not matter.
    return _key(old) == _key(new)


def _key(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True)


def _children(text: str, opening: int) -> tuple[list[_Child], int]:
    """The members or elements of the container opening at ``opening``, and where it closes."""
    is_object = text[opening] == "{"
    position = _skip(text, opening + 1)
    children: list[_Child] = []
    while text[position] not in "]}":
        start = key_end = position
        key: str | None = None
        if is_object:
            key, key_end = _DECODER.raw_decode(text, position)
            position = _skip(text, _skip(text, key_end) + 1)  # past the colon
        value, end = _DECODER.raw_decode(text, position)
        children.append(_Child(key, start, key_end, position, end, value))
        position = _skip(text, end)
        if text[position] == ",":
            position = _skip(text, position + 1)
    return children, position


def _line_indent(text: str, position: int) -> str:
    line = text.rfind("\n", 0, position) + 1
    match = re.compile(r"[ \t]*").match(text, line)
    assert match is not None  # the pattern matches the empty string
    return match[0]


def _splice_value(
    text: str, start: int, end: int, old: object, new: object, style: _Style, edits: list[_Edit]
) -> None:
    if _same(old, new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        _splice_object(text, start, old, new, style, edits)
    elif isinstance(old, list) and isinstance(new, list | tuple):
        _splice_array(text, start, new, style, edits)
    else:
        base = _line_indent(text, start)
        edits.append((start, end, _render(new, style, base, multiline=style.multiline)))


def _splice_object(
    text: str,
    start: int,
    old: Mapping[str, object],
    new: Mapping[str, object],
    style: _Style,
    edits: list[_Edit],
) -> None:
    children, closing = _children(text, start)
    kept = [child.key in new for child in children]
    added = [(key, item) for key, item in new.items() if key not in old]
    if _rewrite_emptied(text, start, closing, kept, new, style, edits):
        return
    for child in children:
        item = new.get(child.key or "", _GONE)
        if item is not _GONE:
            _splice_value(text, child.value_start, child.end, child.value, item, style, edits)
    _remove_children(children, kept, edits)
    if added:
        layout = _Layout.of(text, start, children, kept, style)
        members = [
            json.dumps(key, ensure_ascii=style.ascii) + style.colon + layout.render(item)
            for key, item in added
        ]
        edits.append(layout.append(children, kept, members))


def _splice_array(
    text: str, start: int, new: Sequence[object], style: _Style, edits: list[_Edit]
) -> None:
    children, closing = _children(text, start)
    pairs, inserted = _align([child.value for child in children], new)
    kept = [index in pairs for index in range(len(children))]
    if _rewrite_emptied(text, start, closing, kept, new, style, edits):
        return
    for index, item in pairs.items():
        child = children[index]
        _splice_value(text, child.value_start, child.end, child.value, item, style, edits)
    _remove_children(children, kept, edits)
    layout = _Layout.of(text, start, children, kept, style)
    for before, items in inserted.items():
        rendered = [layout.render(item) for item in items]
        edits.append(layout.insert(children, kept, before, rendered))


def _align(
    old: Sequence[object], new: Sequence[object]
) -> tuple[dict[int, object], dict[int, list[object]]]:
    """Pair old elements with new ones (an old index to the new value it becomes), and the new
    elements that have no old one, by the old index they go before (``len(old)``: the end)."""
    matcher = difflib.SequenceMatcher(
        None, [_key(item) for item in old], [_key(item) for item in new], autojunk=False
    )
    pairs: dict[int, object] = {}
    inserted: dict[int, list[object]] = {}
    for _, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        # Equal runs pair up; a replaced run pairs as far as both go, and the rest of the new
        # one goes in after what it paired with.
        common = min(old_end - old_start, new_end - new_start)
        for offset in range(common):
            pairs[old_start + offset] = new[new_start + offset]
        if new_end - new_start > common:
            inserted.setdefault(old_start + common, []).extend(new[new_start + common : new_end])
    return pairs, inserted


def _rewrite_emptied(
    text: str,
    start: int,
    closing: int,
    kept: Sequence[bool],
    new: Sequence[object] | Mapping[str, object],
    style: _Style,
    edits: list[_Edit],
) -> bool:
    """When no old child stays, write the container afresh (``{}``, ``[]`` when it is empty);
    return whether it was."""
    if any(kept):
        return False
    if not new:
        edits.append((start + 1, closing, ""))
    else:
        fresh = _render(new, style, _line_indent(text, start), multiline=style.multiline)
        edits.append((start, closing + 1, fresh))
    return True


def _remove_children(children: Sequence[_Child], kept: Sequence[bool], edits: list[_Edit]) -> None:
    # A child before the first that stays goes with the separator after it; any other, with the
    # separator before it, so that the whitespace before the first child stays where it was.
    first = kept.index(True)
    for index, child in enumerate(children):
        if kept[index]:
            continue
        if index < first:
            edits.append((child.start, children[index + 1].start, ""))
        else:
            edits.append((children[index - 1].end, child.end, ""))


@dataclass(frozen=True, slots=True)
class _Layout:
    """How the children of one container are laid out: on lines of their own (``separator``
    holds the line break and indent before each) or on the container's line."""

    separator: str
    multiline: bool
    style: _Style

    @classmethod
    def of(
        cls,
        text: str,
        opening: int,
        children: Sequence[_Child],
        kept: Sequence[bool],
        style: _Style,
    ) -> _Layout:
        multiline = "\n" in text[opening : children[0].start]
        if not multiline:
            return cls(style.comma[1:], multiline=False, style=style)
        last = max(index for index, stays in enumerate(kept) if stays)
        before = (
            opening if last == 0 else text.rindex(",", children[last - 1].end, children[last].start)
        )
        return cls(text[before + 1 : children[last].start], multiline=True, style=style)

    def render(self, value: object) -> str:
        base = self.separator[self.separator.rfind("\n") + 1 :]
        return _render(value, self.style, base, multiline=self.multiline)

    def append(
        self, children: Sequence[_Child], kept: Sequence[bool], items: Sequence[str]
    ) -> _Edit:
        return self.insert(children, kept, len(children), items)

    def insert(
        self, children: Sequence[_Child], kept: Sequence[bool], before: int, items: Sequence[str]
    ) -> _Edit:
        """The edit that puts ``items`` before the old child ``before`` (after the last child
        that stays before it, or before the first that stays)."""
        staying = [index for index in range(before) if kept[index]]
        if staying:
            end = children[staying[-1]].end
            return (end, end, "".join("," + self.separator + item for item in items))
        first = children[kept.index(True)].start
        return (first, first, "".join(item + "," + self.separator for item in items))


def _apply(text: str, edits: list[_Edit]) -> str:
    # Edits never overlap. An insertion at the point where a removal starts goes before it, one
    # at the point where a removal ends after it: sorting by start, then end, does both.
    pieces: list[str] = []
    cursor = 0
    for start, end, replacement in sorted(edits, key=lambda edit: (edit[0], edit[1])):
        assert start >= cursor, "overlapping edits"
        pieces.append(text[cursor:start])
        pieces.append(replacement)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)
