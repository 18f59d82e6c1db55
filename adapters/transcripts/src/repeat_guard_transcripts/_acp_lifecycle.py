"""The life of one ACP tool call, as one table.

Theory of operation: every frame that concerns a call (its ``tool_call``, each
``tool_call_update``, the permission request that carries it, the client's answer, the end of
its turn, a ``session/load`` replaying it as history) is reduced to a ``Signal``. The call's
``Phase`` and the signal pick one row of ``TRANSITIONS``: the next phase and the ``Effect`` the
reader carries out. Everything that decides when a call counts lives in this file:

* a call counts once, when it first completes or fails; later frames for it change nothing;
* a call whose permission the user rejected counts as denied, at the agent's failed (or
  completed) update for it, or at the end of its turn when the agent sends none;
* a ``cancelled`` answer (the turn was cancelled) leaves the call open: it counts, not as a
  denial, if the agent reports it finished;
* a call still open when its turn ends (or the file ends) never finished: it is reported;
* a call's frames seen while a ``session/load`` replays history are history, never counted.

Special cases seen in real recordings:

* newer claude-agent-acp opens each call with a ``pending`` ``tool_call_update`` rather than a
  ``tool_call``: an opening, not an anomaly;
* a recording that starts in the middle shows updates for calls it never announced: the call
  is taken up where it is, with a note.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["TRANSITIONS", "Effect", "Phase", "Signal"]


class Phase(Enum):
    """Where a call is."""

    # Members are singletons compared by identity: hash them so too. Enum's own hash is a
    # Python method (of the member's name), and a reader looks up ``TRANSITIONS`` per frame.
    __hash__ = object.__hash__

    NEW = "new"  # no frame seen yet
    OPEN = "open"  # announced or updated, not finished
    ASKED = "asked"  # its permission request awaits an answer
    REJECTED = "rejected"  # the user rejected it; it waits for its failed update
    DONE = "done"  # counted, reported or history: nothing more happens to it


class Signal(Enum):
    """What a frame says about a call."""

    __hash__ = object.__hash__  # as Phase's

    ANNOUNCE = "tool_call"
    ANNOUNCE_FINISHED = "tool_call completed or failed"
    PENDING = "update pending"
    PROGRESS = "update in_progress or without status"
    ASK = "permission requested"
    ALLOW = "permission allowed"
    REJECT = "permission rejected"
    CANCEL = "permission cancelled"
    COMPLETE = "completed"
    FAIL = "failed"
    TURN_END = "turn ended"
    HISTORY = "replayed by session/load"


class Effect(Enum):
    """What the reader does on a transition."""

    NONE = "none"
    NOTE = "note: never announced"  # taken up mid-way; counts later as usual
    COUNT = "count"  # a finished call reaches the guard
    COUNT_NOTED = "count, with a note: never announced"
    DENY = "count as denied"
    UNFINISHED = "report unfinished"


_P, _S, _E = Phase, Signal, Effect

# Frames that only add details leave an open call where it is.
_DETAILS = (_S.ANNOUNCE, _S.PENDING, _S.PROGRESS)

TRANSITIONS: dict[Phase, dict[Signal, tuple[Phase, Effect]]] = {
    _P.NEW: {
        _S.ANNOUNCE: (_P.OPEN, _E.NONE),
        _S.ANNOUNCE_FINISHED: (_P.DONE, _E.COUNT),
        _S.PENDING: (_P.OPEN, _E.NONE),
        _S.PROGRESS: (_P.OPEN, _E.NOTE),
        _S.ASK: (_P.ASKED, _E.NONE),
        _S.ALLOW: (_P.NEW, _E.NONE),
        _S.REJECT: (_P.NEW, _E.NONE),
        _S.CANCEL: (_P.NEW, _E.NONE),
        _S.COMPLETE: (_P.DONE, _E.COUNT_NOTED),
        _S.FAIL: (_P.DONE, _E.COUNT_NOTED),
        _S.TURN_END: (_P.NEW, _E.NONE),
        _S.HISTORY: (_P.DONE, _E.NONE),
    },
    _P.OPEN: {
        **{signal: (_P.OPEN, _E.NONE) for signal in _DETAILS},
        _S.ANNOUNCE_FINISHED: (_P.DONE, _E.COUNT),
        _S.ASK: (_P.ASKED, _E.NONE),
        _S.ALLOW: (_P.OPEN, _E.NONE),
        _S.REJECT: (_P.REJECTED, _E.NONE),
        _S.CANCEL: (_P.OPEN, _E.NONE),
        _S.COMPLETE: (_P.DONE, _E.COUNT),
        _S.FAIL: (_P.DONE, _E.COUNT),
        _S.TURN_END: (_P.DONE, _E.UNFINISHED),
        _S.HISTORY: (_P.DONE, _E.NONE),
    },
    _P.ASKED: {
        **{signal: (_P.ASKED, _E.NONE) for signal in _DETAILS},
        _S.ANNOUNCE_FINISHED: (_P.DONE, _E.COUNT),
        _S.ASK: (_P.ASKED, _E.NONE),
        _S.ALLOW: (_P.OPEN, _E.NONE),
        _S.REJECT: (_P.REJECTED, _E.NONE),
        _S.CANCEL: (_P.OPEN, _E.NONE),
        _S.COMPLETE: (_P.DONE, _E.COUNT),
        _S.FAIL: (_P.DONE, _E.COUNT),
        _S.TURN_END: (_P.DONE, _E.UNFINISHED),
        _S.HISTORY: (_P.DONE, _E.NONE),
    },
    _P.REJECTED: {
        **{signal: (_P.REJECTED, _E.NONE) for signal in (*_DETAILS, _S.ASK)},
        _S.ALLOW: (_P.REJECTED, _E.NONE),
        _S.REJECT: (_P.REJECTED, _E.NONE),
        _S.CANCEL: (_P.REJECTED, _E.NONE),
        _S.ANNOUNCE_FINISHED: (_P.DONE, _E.DENY),
        _S.COMPLETE: (_P.DONE, _E.DENY),
        _S.FAIL: (_P.DONE, _E.DENY),
        _S.TURN_END: (_P.DONE, _E.DENY),
        _S.HISTORY: (_P.DONE, _E.NONE),
    },
    _P.DONE: {signal: (_P.DONE, _E.NONE) for signal in Signal},
}
