"""Canonical text for tool-call arguments: the half of the chain key that compares arguments.

Two argument values that JSON cannot tell apart must give the same string, and the string must
be cheap to compute, because it is computed for every tracked call. Three paths give the same
text for the same value:

* the fastest hands values made only of ``str``, ``int``, ``bool``, ``None``, ``str``-keyed
  dicts, lists and tuples (exact types, no subclasses) to :mod:`orjson`, whose sorted compact
  output is byte for byte what :mod:`json` writes for them; integers past 64 bits, lone
  surrogates and nesting deeper than orjson's limit make it raise, and the next path runs;
* plain JSON data with floats goes, normalised, to the C encoder of :mod:`json`;
* everything else (non-JSON values, very deep nesting, reference cycles) goes through one
  iterative encoder that writes exactly the same text for JSON values and a deterministic,
  non-JSON token for the rest.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from json.encoder import encode_basestring

import orjson

try:
    # hashlib's own BLAKE2, without loading OpenSSL's _hashlib as importing hashlib does (a few
    # milliseconds of every hook process, which is a new process for every tool call).
    from _blake2 import blake2b
except ImportError:  # pragma: no cover  # a Python built without it: hashlib finds another
    from hashlib import blake2b

__all__ = ["KEY_TEXT_LIMIT", "argument_key", "arguments_from_text", "canonical_arguments"]

_dumps = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
).encode


def arguments_from_text(text: str) -> object:
    """Return the arguments a model sent as JSON text: the value it parses to, or ``text``
    itself when it is not JSON (or is nested too deeply to parse), which is then compared as
    the raw text it is. Never raises."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


class _NotPlain(Exception):
    """Raised inside the fast path when a value needs the general encoder."""


def canonical_arguments(value: object) -> str:
    """Return the canonical text of ``value``.

    Keys are sorted at every depth, the JSON is compact and keeps non-ASCII characters. Numbers
    are compared as JSON compares them: ``1`` and ``1.0`` give ``"1"``; ``True`` stays ``true``.
    For JSON values the result is valid JSON that parses back to an equal value. A key that is
    not a string is written as its value's canonical text in quotes, as ``json.dumps`` writes
    one: ``{1: "a"}`` gives the text of ``{"1": "a"}``. For any other value (NaN, bytes, sets,
    objects, cycles, nesting of any depth) the result is a deterministic string that is not
    valid JSON. Never raises.
    """
    try:
        # The usual arguments, a flat dict of strings and numbers, are checked by C code alone.
        if (type(value) is dict and _ORJSON_LEAVES.issuperset(map(type, value.values()))) or (
            _orjson_ready(value)
        ):
            return _orjson_dumps(value, option=_SORT_KEYS).decode()
    except (orjson.JSONEncodeError, RecursionError):
        pass  # a key that is not exactly a str, a big integer, a lone surrogate, deep nesting
    return _canonical(value, 0)


_orjson_dumps = orjson.dumps
_SORT_KEYS = orjson.OPT_SORT_KEYS
# The exact types orjson writes as json.dumps(sort_keys=True, separators=(",", ":"),
# ensure_ascii=False) does. Not float: orjson writes 1.0 and 1e+16 as "1.0" and "1e16".
_ORJSON_LEAVES = frozenset({str, int, bool, type(None)})


def _orjson_ready(value: object) -> bool:
    """Whether ``value`` holds only the leaves above, in exact dicts, lists and tuples.

    Dict keys are left to orjson, which refuses any key that is not exactly a ``str``.
    """
    kind = type(value)
    if kind in _ORJSON_LEAVES:
        return True
    if kind is dict:
        items: Iterable[object] = value.values()  # type: ignore[attr-defined]  # kind is dict
    elif kind is list or kind is tuple:
        items = value  # type: ignore[assignment]  # kind is list or tuple
    else:
        return False
    return all(type(item) in _ORJSON_LEAVES or _orjson_ready(item) for item in items)


# Canonical texts up to this many characters are their own key; longer ones are digested. Most
# tool arguments (a path, a pattern, a command) stay readable in the state, and a 10 MB write
# costs 33 characters.
KEY_TEXT_LIMIT = 64
# No canonical text starts with "#" (JSON text starts with one of {["-, a digit or a letter;
# non-JSON tokens with "<" or a letter), so a digest key can never equal a text key.
_DIGEST_MARK = "#"


def is_digest_key(key: str) -> bool:
    """Whether ``key``, made by ``argument_key``, is a digest rather than the text itself."""
    return key.startswith(_DIGEST_MARK)


def argument_key(canonical: str) -> str:
    """Return the chain key for the canonical argument text ``canonical``.

    Texts of at most ``KEY_TEXT_LIMIT`` characters are returned as they are; a longer text
    becomes ``#`` followed by the hex BLAKE2b-128 digest of its UTF-8 bytes (lone surrogates
    kept), so equal texts give equal keys and different texts different keys, up to the
    digest's collisions.
    """
    if len(canonical) <= KEY_TEXT_LIMIT:
        return canonical
    data = canonical.encode("utf-8", "surrogatepass")
    return _DIGEST_MARK + blake2b(data, digest_size=16).hexdigest()


# Set members and non-string keys are sorted by their own canonical text, which is computed by
# a nested call. Past this many such nestings the text is a fixed marker, so a pathological value
# (a frozenset 100,000 deep) cannot exhaust the Python stack, and the result does not depend on
# how deep the caller's stack already is.
_SORTED_DEPTH = 50


def _canonical(value: object, depth: int) -> str:
    if depth > _SORTED_DEPTH:
        return "<nested too deep>"
    try:
        return _dumps(_plain(value))
    except (_NotPlain, RecursionError, ValueError):
        # ValueError: an integer too long for str(); the general encoder writes it in hex.
        return _encode_general(value, depth)


def _plain(value: object) -> object:
    """Return ``value`` as data the C encoder writes canonically, or raise ``_NotPlain``.

    Returns the input object itself when nothing needs changing, so the common case allocates
    nothing.
    """
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return _plain_float(value)  # type: ignore[arg-type]  # kind is float, checked above
    if kind is dict:
        return _plain_dict(value)  # type: ignore[arg-type]  # kind is dict, checked above
    if kind is list or kind is tuple:
        return _plain_list(value)  # type: ignore[arg-type]  # kind is list or tuple
    raise _NotPlain


def _plain_float(value: float) -> float | int:
    if not math.isfinite(value):
        raise _NotPlain
    return int(value) if value.is_integer() else value


def _plain_dict(value: dict[object, object]) -> dict[object, object]:
    changed: dict[object, object] | None = None
    for key, item in value.items():
        if type(key) is not str:
            raise _NotPlain
        plain = _plain(item)
        if plain is not item:
            if changed is None:
                changed = dict(value)
            changed[key] = plain
    return value if changed is None else changed


def _plain_list(value: list[object] | tuple[object, ...]) -> list[object] | tuple[object, ...]:
    changed: list[object] | None = None
    for index, item in enumerate(value):
        plain = _plain(item)
        if plain is not item:
            if changed is None:
                changed = list(value)
            changed[index] = plain
    return value if changed is None else changed


# The general encoder: an explicit stack instead of recursion, so depth is unbounded.
# A stack entry is either a finished piece of text (str) or a value still to encode (_Todo).


class _Todo:
    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value


class _Leave:
    """Marks the end of a container on the stack: its id leaves the set of open containers."""

    __slots__ = ("ident",)

    def __init__(self, ident: int) -> None:
        self.ident = ident


def _encode_general(value: object, depth: int) -> str:
    out: list[str] = []
    open_ids: set[int] = set()
    stack: list[str | _Todo | _Leave] = [_Todo(value)]
    while stack:
        entry = stack.pop()
        if type(entry) is str:
            out.append(entry)
        elif type(entry) is _Leave:
            open_ids.discard(entry.ident)
        else:
            todo: _Todo = entry  # type: ignore[assignment]  # neither str nor _Leave
            _expand(todo.value, stack, out, open_ids, depth)
    return "".join(out)


def _expand(
    value: object,
    stack: list[str | _Todo | _Leave],
    out: list[str],
    open_ids: set[int],
    depth: int,
) -> None:
    """Write a scalar to ``out``, or push a container's pieces onto ``stack`` in reverse."""
    try:
        scalar = _scalar_text(value)
    except Exception:  # isinstance reads __class__, which a broken proxy's property may raise
        scalar = None
    if scalar is not None:
        out.append(scalar)
        return
    ident = id(value)
    if ident in open_ids:
        out.append("<cycle>")
        return
    try:
        parts = _container_parts(value, depth)
    except Exception:  # a container whose iteration raises is written as an opaque object
        parts = None
    if parts is None:
        out.append(_opaque_text(value))
        return
    open_ids.add(ident)
    opening, pieces, closing = parts
    stack.append(_Leave(ident))
    stack.append(closing)
    for piece in reversed(pieces):
        stack.append(piece)
    out.append(opening)


def _scalar_text(value: object) -> str | None:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        # The base-class methods: a subclass's own __str__, __int__ or __float__ may raise.
        return str(encode_basestring(str.__str__(value)))
    if isinstance(value, int):
        return _int_text(int.__int__(value))
    if isinstance(value, float):
        return _float_text(float.__float__(value))
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<bytes {bytes(value).hex()}>"
    return None


def _int_text(value: int) -> str:
    try:
        return str(value)
    except ValueError:  # longer than sys.get_int_max_str_digits()
        return f"<int {value:#x}>"


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return _int_text(int(value)) if value.is_integer() else repr(value)


def _container_parts(value: object, depth: int) -> tuple[str, list[str | _Todo], str] | None:
    if isinstance(value, Mapping):
        return "{", _mapping_pieces(value, depth), "}"
    if isinstance(value, list | tuple):
        return "[", _joined([_Todo(item) for item in value]), "]"
    if isinstance(value, set | frozenset):
        members = sorted(_canonical(item, depth + 1) for item in value)
        return "<set [", [",".join(members)], "]>"
    return None


def _mapping_pieces(value: Mapping[object, object], depth: int) -> list[str | _Todo]:
    keyed = sorted(
        ((_key_text(key, depth), type(key).__name__, item) for key, item in value.items()),
        key=lambda entry: (entry[0], entry[1]),
    )
    if len({(key, kind) for key, kind, _item in keyed}) < len(keyed):
        # Distinct keys with the same text (objects whose repr fails, say): order them by their
        # values too, so equal mappings give equal text whatever their insertion order.
        keyed.sort(key=lambda entry: (entry[0], entry[1], _canonical(entry[2], depth + 1)))
    pieces: list[str | _Todo] = []
    for index, (key, _kind, item) in enumerate(keyed):
        pieces.append(("," if index else "") + str(encode_basestring(key)) + ":")
        pieces.append(_Todo(item))
    return pieces


def _key_text(key: object, depth: int) -> str:
    """Keys as :func:`json.dumps` writes them; any other key by its canonical text."""
    if isinstance(key, str):
        return str.__str__(key)
    return _canonical(key, depth + 1)


def _joined(items: list[_Todo]) -> list[str | _Todo]:
    pieces: list[str | _Todo] = []
    for index, item in enumerate(items):
        if index:
            pieces.append(",")
        pieces.append(item)
    return pieces


def _opaque_text(value: object) -> str:
    kind = type(value)
    name = f"{kind.__module__}.{kind.__qualname__}"
    try:
        shown = repr(value)
    except Exception:  # a broken __repr__ must not break canonicalisation
        return f"<{name}>"
    return f"<{name} {shown}>"
