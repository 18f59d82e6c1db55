"""The audit against real outside parts (``make e2e``): its HTML page in headless Chromium, and
its Dask engine on a ``LocalCluster`` of worker processes started here."""

from __future__ import annotations

import io
import json
import shutil
import socket
import subprocess
import threading
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from distributed import LocalCluster

from repeat_guard_cli import main

from .corpus import write_corpus
from .local_cluster import LOCAL_ONLY
from .page import PageItems

pytestmark = pytest.mark.e2e

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1200,2000",
]


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["audit", *args])
    return status, out.getvalue(), err.getvalue()


# Chromium's own background services, which it calls whatever page it shows (seen with an
# empty page and the flags above): requests to these are not the page's.
CHROMIUM_OWN_HOSTS = frozenset(
    {"clients2.google.com", "update.googleapis.com", "accounts.google.com"}
)


class _Trap:
    """A TCP listener on 127.0.0.1 that Chromium is told to use as its proxy for everything:
    any fetch the page makes, to any host, arrives here and is recorded."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.requests: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(2)
                try:
                    request = connection.recv(4096)
                except OSError:
                    request = b""
                # A connection that sent nothing asked for nothing: Chromium opens one for its
                # own services now and then and exits before using it (a run saw one, with
                # an empty host). A page's fetch sends its request line as it connects.
                if request:
                    self.requests.append(request)

    def close(self) -> None:
        self.server.close()

    def hosts(self) -> set[str]:
        """The hosts asked for (from ``GET http://host/...`` or ``CONNECT host:443``)."""
        found = set()
        for request in self.requests:
            words = request.split(b"\r\n", 1)[0].decode("latin-1").split()
            target = words[1] if len(words) > 1 else ""
            found.add(target.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0])
        return found


class _Dom(PageItems):
    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, int] = {}
        self.days: dict[str, int] = {}
        self.tools: dict[str, int] = {}
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {key: value or "" for key, value in attrs}
        self.urls += [v for k, v in found.items() if k in ("src", "href", "action", "srcset")]
        if "data-value" in found:
            value = int(found["data-value"])
            if "data-day" in found:
                self.days[found["data-day"]] = value
            elif "data-tool" in found:
                self.tools[found["data-tool"]] = value
            elif "id" in found:
                self.values[found["id"]] = value
        super().handle_starttag(tag, attrs)


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("chromium")
    assert binary is not None, "make e2e installs the chromium package"
    profile = tmp_path / "profile"
    return subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_the_page_renders_in_chromium_with_the_json_numbers_and_fetches_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "corpus"
    write_corpus(root, 120, seed=11, broken_at=60)
    _write_files_without_calls(root / "other")
    page = tmp_path / "audit.html"
    status, out, err = _run([str(root), "--format", "json", "--html", str(page), "--jobs", "2"])
    assert status == 3  # the broken file
    totals = json.loads(out.splitlines()[-1])
    sentinel = tmp_path / "sentinel.html"
    sentinel.write_text('<img src="http://sentinel.test/pixel.png">', encoding="utf-8")
    trap = _Trap()
    try:
        proxy = [f"--proxy-server=http://127.0.0.1:{trap.port}", "--proxy-bypass-list=<-loopback>"]
        _chromium(tmp_path, *proxy, "--dump-dom", sentinel.as_uri())
        caught = trap.hosts()
        trap.requests.clear()
        dumped = _chromium(tmp_path, *proxy, "--dump-dom", page.as_uri())
        shot = tmp_path / "audit.png"
        _chromium(tmp_path, *proxy, f"--screenshot={shot}", page.as_uri())
    finally:
        trap.close()
    assert "sentinel.test" in caught  # the trap sees what a page fetches...
    assert trap.hosts() <= CHROMIUM_OWN_HOSTS  # ...and this page fetches nothing
    assert shot.stat().st_size > 10_000
    dom = _Dom()
    dom.feed(dumped.stdout)
    assert "h1" in dom.tags
    assert "svg" in dom.tags
    assert "script" not in dom.tags
    assert dom.urls == []
    for key in ("files", "sessions", "calls", "wasted", "reminders", "longest_run", "denied"):
        assert dom.values[f"total-{key}"] == totals[key], key
    for key in (
        "wasted_tokens",
        "wasted_input_tokens",
        "wasted_turns",
        "diagnostics",
        "held_no_call",
    ):
        assert dom.values[f"total-{key}"] == totals[key], key
    for form, count in totals["reminders_by_form"].items():
        assert dom.values[f"total-reminders-{form}"] == count
    dated = {day: item["wasted"] for day, item in totals["days"].items() if day != "unknown"}
    assert {day: n for day, n in dom.days.items() if n or day in dated} == dated
    assert dom.values["undated-wasted"] == totals["days"]["unknown"]["wasted"]
    assert dom.tools == {name: tool["wasted"] for name, tool in totals["tools"].items()}
    runs = [dom.values[f"run-{rank}"] for rank in range(1, 11)]
    assert runs == [run["length"] for run in totals["worst_runs"][:10]]
    # Every file accounted for as the JSON totals account for it: counts, then names.
    assert dom.values["files-found"] == totals["files_found"] == totals["files"] + 3
    for key, names in (
        ("held_no_call", "held_no_call_files"),
        ("not_transcripts", "not_transcript_files"),
    ):
        assert dom.values[f"total-{key}"] == dom.values[f"files-{key}"] == totals[key], key
        more = totals[key] - len(totals[names])
        rest = [f"… and {more:,} more"] if more else []
        assert dom.lists[f"files-{key}"] == totals[names] + rest, key
    assert (totals["held_no_call"], len(totals["held_no_call_files"])) == (105, 100)
    assert totals["not_transcripts"] == 3
    # And the diagnostics as stderr has them, listed on the page and in the JSON totals.
    printed = [line for line in err.splitlines() if ": note: " not in line]
    assert dom.values["files-diagnostics"] == totals["diagnostics"] == len(printed) == 2
    listed = [f"{d['file']}:{d['line']}: {d['message']}" for d in totals["first_diagnostics"]]
    assert dom.lists["files-diagnostics"] == printed == listed


def _write_files_without_calls(folder: Path) -> None:
    """105 Claude Code sessions of a prompt alone (five more than the totals name) and three
    files that are not transcripts, one of them named with markup."""
    folder.mkdir()
    for n in range(105):
        prompt = {"type": "user", "sessionId": f"chat-{n}", "message": {"content": "hi"}}
        (folder / f"chat-{n:03}.jsonl").write_text(json.dumps(prompt) + "\n", encoding="utf-8")
    for name in ("notes.txt", '<b>&"x".md', "image.png"):
        (folder / name).write_text("not a transcript\n", encoding="utf-8")


def test_a_dask_cluster_gives_the_local_output_in_every_format(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    write_corpus(root, 400, seed=13, broken_at=200)
    # The cluster is only a scheduler address here. Its HTTP servers listen on free ports of
    # 127.0.0.1 (see LOCAL_ONLY).
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, **LOCAL_ONLY) as cluster:
        for fmt in ("json", "csv", "text"):
            local = _run([str(root), "--format", fmt, "--jobs", "1"])
            remote = _run(
                [
                    str(root),
                    "--format",
                    fmt,
                    "--engine",
                    "dask",
                    "--scheduler",
                    cluster.scheduler_address,
                ]
            )
            assert remote == local
            assert local[0] == 3
