"""The OpenTelemetry GenAI reader: an OTLP/JSON export of spans to guard events.

The file is one OTLP/JSON ``ExportTraceServiceRequest`` (``resourceSpans[].scopeSpans[]
.spans[]``, indented or not), or one such object a line, as the OpenTelemetry Collector's file
exporter writes. Attribute names follow the GenAI semantic conventions (semconv 1.38 to 1.43,
as ``opentelemetry-semantic-conventions`` 0.65b0 names them):

* a call is a span whose ``gen_ai.operation.name`` is ``execute_tool`` (a span without the
  attribute whose name starts ``execute_tool`` too): its tool ``gen_ai.tool.name`` (else the
  span's name less ``execute_tool``), its arguments ``gen_ai.tool.call.arguments`` parsed when
  it is JSON text, its result ``gen_ai.tool.call.result`` as recorded; ``status.code`` 2
  (ERROR) or an ``error.type`` marks it failed. Arguments are opt-in in the convention: a
  call without them still counts, with an identity of its own (its span), so it is never a
  repeat of another, and the file gets one note saying how many such calls it held;
* its session is the ``gen_ai.conversation.id`` of the span or its nearest ancestor that has
  one, else the trace id; its agent the ``gen_ai.agent.id`` (else ``gen_ai.agent.name``) of
  the span or its nearest ancestor, ``<session>/<agent>``, else the session;
* a prompt is an ``invoke_agent`` span with no ``invoke_agent`` ancestor in the file (one run
  of the agent for the user), at its start;
* a model call (a span of another operation, ``chat`` say, with ``gen_ai.usage.output_tokens``
  or ``gen_ai.usage.input_tokens``, else the older ``gen_ai.usage.completion_tokens`` and
  ``gen_ai.usage.prompt_tokens``) gives its tokens to the first call that starts after it
  under the same parent span (the tools it asked for run beside it in the agent's run):
  ``gen_ai.usage.input_tokens`` counts the cached tokens (the convention: it "SHOULD include
  all types of input tokens, including cached tokens"). An agent run's own totals are not a
  step's;
* events are ordered by ``startTimeUnixNano`` (spans are exported as they end, children before
  their parents), so the reader holds the file's spans (the few attributes it reads, ``_READ``)
  and yields the events at its end.

Nothing in the convention says a call was refused, and an exported span has ended: no denial,
no call never finished. A file of spans none of which is a GenAI call or agent run ends with the
note of a file that held no call (``no_call_note``), saying how many spans it read: a
recognised file never reads as a silent zero.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from itertools import chain
from typing import Final, NamedTuple

from repeat_guard import PromptSubmitted, ToolCallFinished

from ._document import Cursor, Element, walk_object
from ._items import Diagnostic, Item, Located, Location, SessionSeen
from ._reading import document_items, object_items, string, token_count
from ._registry import no_call_note

__all__ = ["OtelGenAiReader", "any_value"]

EXECUTE_TOOL: Final = "execute_tool"
INVOKE_AGENT: Final = "invoke_agent"
ERROR: Final = (2, "2", "STATUS_CODE_ERROR")
"""``status.code`` of a span that failed (the JSON encoding's integer, or the enum's name)."""

_DEPTH: Final = 64
"""How deep ``any_value`` converts nested arrays and lists before keeping the rest as is."""

_SPAN_ID: Final = r'"spanId"\s*:\s*"{}"'

_ANCESTORS: Final = 256
"""How far up its parents the reader looks for a span's conversation, agent or agent run."""

_USAGE: Final = ("output_tokens", "input_tokens", "completion_tokens", "prompt_tokens")
"""A model call's output and input tokens under the convention's names, then its older ones."""

_READ: Final = frozenset(
    {
        "gen_ai.operation.name",
        "gen_ai.tool.name",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "gen_ai.conversation.id",
        "gen_ai.agent.id",
        "gen_ai.agent.name",
        "error.type",
        *(f"gen_ai.usage.{name}" for name in _USAGE),
    }
)
"""The attributes the reader reads: a span keeps these alone until the file's end (a model
call's messages, often the bulk of an export, are dropped as soon as they are decoded)."""

_SCALARS: Final = ("stringValue", "boolValue", "doubleValue", "bytesValue")


def any_value(value: object, depth: int = 0) -> object:
    """The plain value of an OTLP/JSON ``AnyValue`` (``{"stringValue": ...}``, ``intValue`` as
    a string or a number, ``arrayValue.values``, ``kvlistValue.values``); anything else as is."""
    if not isinstance(value, dict) or depth > _DEPTH:
        return value
    for key in _SCALARS:
        if key in value:
            return value[key]
    if "intValue" in value:
        number = value["intValue"]
        return int(number) if isinstance(number, str) and _is_integer(number) else number
    if "arrayValue" in value:
        return [any_value(v, depth + 1) for v in _values(value["arrayValue"])]
    if "kvlistValue" in value:
        return _attributes(_values(value["kvlistValue"]), depth + 1)
    return value


def _is_integer(text: str) -> bool:
    """Whether ``text`` is a 64-bit integer's decimal digits, with a sign or not."""
    digits = text.removeprefix("-")
    return 0 < len(digits) <= 20 and digits.isascii() and digits.isdecimal()


def _values(holder: object) -> list[object]:
    values = holder.get("values") if isinstance(holder, dict) else None
    return values if isinstance(values, list) else []


def _attributes(
    pairs: object, depth: int = 0, keep: frozenset[str] | None = None
) -> dict[str, object]:
    """``[{key, value}]`` as a dict of plain values (only the keys in ``keep``, when given);
    pairs that are not such are passed over."""
    found: dict[str, object] = {}
    for pair in pairs if isinstance(pairs, list) else ():
        key = pair.get("key") if isinstance(pair, dict) else None
        if isinstance(key, str) and (keep is None or key in keep):
            found[key] = any_value(pair.get("value"), depth)
    return found


def _parsed(value: object) -> object:
    """A value recorded as JSON text, parsed; anything else as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _nanos(span: Mapping[str, object]) -> int:
    value = span.get("startTimeUnixNano")
    if isinstance(value, str) and _is_integer(value):
        return max(int(value), 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _stamp(nanos: int) -> str | None:
    if not 0 < nanos < 1 << 62:
        return None
    moment = datetime.fromtimestamp(nanos // 1_000_000_000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{nanos % 1_000_000_000:09d}Z"


class _Span(NamedTuple):
    """What the reader keeps of every span: where it is, its parent, and what it says."""

    line: int
    order: int
    trace: str
    ident: str
    parent: str
    name: str
    start: int
    attributes: dict[str, object]
    failed: bool

    def operation(self) -> str | None:
        operation = self.attributes.get("gen_ai.operation.name")
        if isinstance(operation, str):
            return operation
        return EXECUTE_TOOL if self.name.startswith(EXECUTE_TOOL) else None

    def own(self, *keys: str) -> str | None:
        for key in keys:
            value = self.attributes.get(key)
            if isinstance(value, str) and value:
                return value
        return None


_Test = Callable[[_Span], bool]
_LineOf = Callable[[object], int]
"""The line a span (as decoded) is on."""


def _failed(span: Mapping[str, object], attributes: Mapping[str, object]) -> bool:
    status = span.get("status")
    code = status.get("code") if isinstance(status, dict) else None
    return code in ERROR or "error.type" in attributes


class _OtelFile:
    """The spans of one file, held until its end."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.spans: dict[tuple[str, str], _Span] = {}
        self.read_spans = 0

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        iterator = iter(lines)
        first = next(iterator, b"")
        rest = chain([first], iterator)
        try:
            json.loads(first)
            whole = True
        except (ValueError, RecursionError):
            whole = False
        if first.lstrip()[:1] == b"{" and not whole:
            session = "?"  # the document's sessions are named by its spans, at its end
            for item in document_items(rest, self.file, session, _resource_spans, self._element):
                if not isinstance(item, SessionSeen):
                    yield item
        else:
            yield from object_items(rest, self.file, self._request)
        yield from self._finish()

    def _request(self, line: int, request: dict[str, object]) -> list[Item]:
        items: list[Item] = []
        for resource in _list(request, "resourceSpans"):
            items += self._resource(resource, lambda _span: line)
        if "resourceSpans" not in request:
            items.append(Diagnostic(self.file, line, "a line without resourceSpans"))
        return items

    def _element(self, text: str, element: Element) -> list[Item]:
        # A span's line: the line of its own "spanId" member, looked for after the last
        # span's (a parent's id is under "parentSpanId"); the element's first line when the
        # span has no id as plain text, or it is not found.
        position = [element.start]

        def line_of_span(span: object) -> int:
            ident = string(span, "spanId") if isinstance(span, dict) else None
            pattern = _SPAN_ID.format(re.escape(ident)) if ident else None
            found = re.compile(pattern).search(text, position[0], element.end) if pattern else None
            if found is None:
                return element.line
            position[0] = found.end()
            return element.line + text.count("\n", element.start, found.start())

        return self._resource(element.value, line_of_span)

    def _resource(self, resource: object, line_of: _LineOf) -> list[Item]:
        items: list[Item] = []
        for scope in _list(resource, "scopeSpans"):
            for span in _list(scope, "spans"):
                items += self._span(line_of(span), span)
        return items

    def _span(self, line: int, span: object) -> list[Item]:
        if not isinstance(span, dict):
            return [Diagnostic(self.file, line, "a span that is not an object")]
        trace, ident = string(span, "traceId"), string(span, "spanId")
        if not trace or not ident:
            return [Diagnostic(self.file, line, "a span without a traceId and a spanId")]
        self.read_spans += 1
        key = (trace, ident)
        if key in self.spans:  # the same span exported again
            return []
        attributes = _attributes(span.get("attributes"), keep=_READ)
        self.spans[key] = _Span(
            line,
            len(self.spans),
            trace,
            ident,
            string(span, "parentSpanId") or "",
            string(span, "name") or "",
            _nanos(span),
            attributes,
            _failed(span, attributes),
        )
        return []

    def _finish(self) -> Iterator[Item]:
        events: list[Located] = []
        unrecorded: list[int] = []
        steps: dict[tuple[str, str], tuple[int | None, int | None]] = {}
        for span in sorted(self.spans.values(), key=lambda span: (span.start, span.order)):
            found = self._event(span, unrecorded, steps)
            if found is not None:
                events.append(found)
        sessions: set[str] = set()
        for located in events:
            if located.where.session not in sessions:
                sessions.add(located.where.session)
                yield SessionSeen(located.where)
            yield located
        yield from self._notes(events, unrecorded)

    def _notes(self, events: list[Located], unrecorded: list[int]) -> Iterator[Item]:
        if unrecorded:
            message = (
                f"{len(unrecorded)} tool call(s) without gen_ai.tool.call.arguments (opt-in):"
                " counted, each its own call, never a repeat"
            )
            yield Diagnostic(self.file, min(unrecorded), message, "note")
        if self.read_spans and not events:
            lacked = "none a GenAI execute_tool or invoke_agent span"
            yield no_call_note(self.file, OtelGenAiReader.name, (self.read_spans, "span"), lacked)

    def _event(
        self,
        span: _Span,
        unrecorded: list[int],
        steps: dict[tuple[str, str], tuple[int | None, int | None]],
    ) -> Located | None:
        """The event ``span`` stands for, in the order of the spans' starts; a model call's
        tokens wait in ``steps`` (by trace and parent) for the next call beside it."""
        operation = span.operation()
        if operation == EXECUTE_TOOL:
            cost = steps.pop((span.trace, span.parent), (None, None))
            return self._call(span, unrecorded, cost)
        if operation == INVOKE_AGENT:
            if self._ancestor(span, _is_agent_run) is None:
                where = Location(self.file, span.line, self._session(span))
                event = PromptSubmitted(self._agent(span, where.session))
                return Located(where, event, timestamp=_stamp(span.start))
            return None
        cost = _usage(span.attributes)
        if cost != (None, None):
            steps[span.trace, span.parent] = cost
        return None

    def _call(
        self, span: _Span, unrecorded: list[int], cost: tuple[int | None, int | None]
    ) -> Located:
        where = Location(self.file, span.line, self._session(span))
        tool = span.own("gen_ai.tool.name") or span.name.removeprefix(EXECUTE_TOOL).strip()
        if "gen_ai.tool.call.arguments" in span.attributes:
            arguments = _parsed(span.attributes["gen_ai.tool.call.arguments"])
        else:
            unrecorded.append(span.line)
            arguments = {"unrecorded span": f"{span.trace}/{span.ident}"}
        result = span.attributes.get("gen_ai.tool.call.result")
        agent = self._agent(span, where.session)
        event = ToolCallFinished(agent, tool or EXECUTE_TOOL, arguments, False, result, span.failed)
        tokens, input_tokens = cost
        return Located(where, event, None, tokens, _stamp(span.start), None, input_tokens)

    def _session(self, span: _Span) -> str:
        found = self._ancestor(span, lambda s: s.own("gen_ai.conversation.id") is not None, True)
        conversation = None if found is None else found.own("gen_ai.conversation.id")
        return conversation or span.trace

    def _agent(self, span: _Span, session: str) -> str:
        found = self._ancestor(span, _names_agent, True)
        agent = None if found is None else found.own("gen_ai.agent.id", "gen_ai.agent.name")
        return f"{session}/{agent}" if agent else session

    def _ancestor(self, span: _Span, test: _Test, itself: bool = False) -> _Span | None:
        """The nearest span in ``span``'s line of parents (``span`` first when ``itself``)
        that passes ``test``; a loop of parents ends the search."""
        current: _Span | None = span if itself else self._parent(span)
        visited = 0
        while current is not None and visited < _ANCESTORS:
            if test(current):
                return current
            current, visited = self._parent(current), visited + 1
        return None

    def _parent(self, span: _Span) -> _Span | None:
        return self.spans.get((span.trace, span.parent)) if span.parent else None


def _usage(attributes: Mapping[str, object]) -> tuple[int | None, int | None]:
    """A model call's output and input tokens (the convention's names, else the older ones)."""
    output, input_, completion, prompt = (f"gen_ai.usage.{name}" for name in _USAGE)
    tokens = token_count(attributes, output)
    input_tokens = token_count(attributes, input_)
    if tokens is None:
        tokens = token_count(attributes, completion)
    if input_tokens is None:
        input_tokens = token_count(attributes, prompt)
    return tokens, input_tokens


def _is_agent_run(span: _Span) -> bool:
    return span.operation() == INVOKE_AGENT


def _names_agent(span: _Span) -> bool:
    return span.own("gen_ai.agent.id", "gen_ai.agent.name") is not None


def _list(holder: object, key: str) -> list[object]:
    value = holder.get(key) if isinstance(holder, dict) else None
    return value if isinstance(value, list) else []


def _resource_spans(cursor: Cursor) -> Iterator[Element | Diagnostic]:
    return walk_object(cursor, "resourceSpans")


class OtelGenAiReader:
    """Reads OTLP/JSON exports of OpenTelemetry GenAI spans."""

    name: Final = "otel-genai"
    description: Final = "OTLP/JSON span exports (GenAI execute_tool spans), one or one a line"

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` starts like an OTLP/JSON export of spans."""
        return head.lstrip()[:1] == b"{" and b'"resourceSpans"' in head[:4096]

    def read(self, lines: Iterable[bytes], file: str) -> Iterator[Item]:
        """Yield the items of one export; never raises for bad input."""
        return _OtelFile(file).read(lines)
