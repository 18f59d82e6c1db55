"""Build ``fixtures/goose/sessions.db``: goose's own schema, with sessions written by hand.

The ``CREATE TABLE`` statements are goose's (``block/goose``,
``crates/goose/src/session/session_manager.rs``, ``SessionStorage::create``, schema version 5;
Apache-2.0), and each message's ``content_json`` is what goose's ``MessageContent`` serialises
to (``crates/goose/src/conversation/message.rs`` and ``tool_result_serde.rs``: items tagged with
their ``type``, a tool call or result as ``{"status": "success", "value": ...}`` or
``{"status": "error", "error": ...}``; a refused call answered with ``DECLINED_RESPONSE``).
Run from the repository root::

    .venv/bin/python -m tests.adapters.transcripts.build_goose
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path

TARGET = Path(__file__).parent / "fixtures" / "goose" / "sessions.db"

SCHEMA = """
CREATE TABLE schema_version (
    version INTEGER PRIMARY KEY,
    applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE,
    session_type TEXT NOT NULL DEFAULT 'user',
    working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}',
    total_tokens INTEGER,
    input_tokens INTEGER,
    output_tokens INTEGER,
    accumulated_total_tokens INTEGER,
    accumulated_input_tokens INTEGER,
    accumulated_output_tokens INTEGER,
    schedule_id TEXT,
    recipe_json TEXT,
    user_recipe_values_json TEXT
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content_json TEXT NOT NULL,
    created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    tokens INTEGER,
    metadata_json TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id);
CREATE INDEX idx_messages_timestamp ON messages(timestamp);
CREATE INDEX idx_sessions_updated ON sessions(updated_at DESC);
CREATE INDEX idx_sessions_type ON sessions(session_type);
"""

DECLINED = (
    "The user has declined to run this tool. DO NOT attempt to call this tool again. "
    "If there are no alternative methods to proceed, clearly explain the situation and STOP."
)
Content = list[dict[str, object]]
LS: dict[str, object] = {"name": "developer__shell", "arguments": {"command": "ls"}}


def text(words: str) -> dict[str, object]:
    return {"type": "text", "text": words}


def request(ident: str, call: Mapping[str, object]) -> dict[str, object]:
    return {"type": "toolRequest", "id": ident, "toolCall": {"status": "success", "value": call}}


def response(ident: str, output: str) -> dict[str, object]:
    value = {"content": [{"type": "text", "text": output}], "isError": False}
    return {
        "type": "toolResponse",
        "id": ident,
        "toolResult": {"status": "success", "value": value},
    }


def failed(ident: str, error: str) -> dict[str, object]:
    return {"type": "toolResponse", "id": ident, "toolResult": {"status": "error", "error": error}}


# Session 1: three identical shell calls for one prompt; after a second prompt, the same call
# is declined by the user, and asked for once more without an answer (unfinished).
FIRST: list[tuple[str, Content]] = [
    ("user", [text("list the files")]),
    ("assistant", [text("Listing."), request("call_1", LS)]),
    ("user", [response("call_1", "a.txt\n")]),
    ("assistant", [request("call_2", LS)]),
    ("user", [response("call_2", "a.txt\n")]),
    ("assistant", [request("call_3", LS)]),
    ("user", [response("call_3", "a.txt\n")]),
    ("assistant", [text("done")]),
    ("user", [text("and again")]),
    ("assistant", [request("call_4", LS)]),
    ("user", [response("call_4", DECLINED)]),
    ("assistant", [request("call_5", LS)]),
]
# Session 2: a request goose could not parse, and a call whose tool failed (its id also used
# in session 1: calls are per session).
SECOND: list[tuple[str, Content]] = [
    ("user", [text("read it")]),
    (
        "assistant",
        [
            {
                "type": "toolRequest",
                "id": "bad",
                "toolCall": {"status": "error", "error": "no such tool"},
            }
        ],
    ),
    (
        "assistant",
        [
            request(
                "call_1",
                {
                    "name": "developer__text_editor",
                    "arguments": {"command": "view", "path": "a.txt"},
                },
            )
        ],
    ),
    ("user", [failed("call_1", "File does not exist")]),
]


def main() -> None:
    TARGET.unlink(missing_ok=True)
    with contextlib.closing(sqlite3.connect(TARGET)) as db, db:
        db.executescript(SCHEMA)
        db.execute("INSERT INTO schema_version (version) VALUES (5)")
        for number, (session, messages) in enumerate(
            (("20261206_1", FIRST), ("20261206_2", SECOND))
        ):
            db.execute(
                "INSERT INTO sessions (id, name, working_dir, created_at, extension_data) "
                "VALUES (?, ?, ?, ?, '{}')",
                (session, f"session {number + 1}", "/home/dev/proj", f"2026-12-06 01:0{number}:00"),
            )
            for offset, (role, content) in enumerate(messages):
                db.execute(
                    "INSERT INTO messages (session_id, role, content_json, created_timestamp, "
                    "metadata_json) VALUES (?, ?, ?, ?, ?)",
                    (
                        session,
                        role,
                        json.dumps(content),
                        1796518800 + 3600 * number + offset,
                        '{"userVisible":true,"agentVisible":true}',
                    ),
                )


if __name__ == "__main__":
    main()
