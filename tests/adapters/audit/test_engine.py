"""The engines: same results, same order, whatever runs the work; Dask only when asked."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Generator, Iterator

import pytest
from distributed import LocalCluster

from repeat_guard_audit import EngineError, default_jobs, run
from repeat_guard_audit import _engine as engine

from .local_cluster import LOCAL_ONLY


def square(value: int) -> int:
    return value * value


def blocked_here(_: object) -> frozenset[int]:
    return frozenset(signal.pthread_sigmask(signal.SIG_BLOCK, []))


def test_a_signal_sent_while_held_is_raised_when_the_hold_ends() -> None:
    seen: list[str] = []
    previous = signal.signal(signal.SIGHUP, lambda number, frame: seen.append("raised"))
    try:
        with engine._held():
            assert blocked_here(None) >= engine._HELD
            # to this thread: other threads of the test process (not the command's) may take it
            signal.pthread_kill(threading.get_ident(), signal.SIGHUP)
            seen.append("held")
        seen.append("after")
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert seen == ["held", "raised", "after"]
    assert not engine._HELD & blocked_here(None)


def test_the_workers_take_the_held_signals_back() -> None:
    with engine._held():
        engine._unheld()  # what each worker runs first
        assert not engine._HELD & blocked_here(None)
    # and the pool's real workers, started while the signals were held
    assert not any(engine._HELD & mask for mask in run(blocked_here, range(4), "processes", 2))


def test_default_jobs_is_the_usable_cores() -> None:
    assert default_jobs() >= 1


@pytest.mark.parametrize(
    ("name", "scheduler"),
    [
        ("local", None),
        ("processes", None),
        ("dask", "sync"),
        ("dask", "threads"),
    ],
)
def test_every_engine_returns_every_result_in_order(name: str, scheduler: str | None) -> None:
    # More batches than any window holds: order must survive the window's refills.
    values = list(range(50))
    results = run(square, values, name, jobs=2, scheduler=scheduler)  # type: ignore[arg-type]
    assert list(results) == [value * value for value in values]


def test_dask_local_processes_run_in_a_pool_of_ours() -> None:
    # A builtin: the spawned workers import the work, and they cannot import the tests.
    assert list(run(str, range(20), "dask", jobs=2, scheduler="processes")) == [
        str(n) for n in range(20)
    ]


def test_the_pool_takes_its_size_from_the_cores_by_default() -> None:
    assert list(run(square, [3, 4], "processes")) == [9, 16]


def test_dask_defaults_to_its_local_process_scheduler(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []
    original = engine._dask

    def spy(work: object, batches: object, workers: int, scheduler: str) -> Iterator[int]:
        seen.append(scheduler)
        return original(square, [2], workers, "sync")

    monkeypatch.setattr(engine, "_dask", spy)
    assert list(run(square, [2], "dask")) == [4]
    assert seen == ["processes"]


def test_a_dask_cluster_gets_the_work_by_address() -> None:
    # The cluster is only a scheduler address here. Its HTTP servers listen on free ports of
    # 127.0.0.1 (see LOCAL_ONLY).
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, **LOCAL_ONLY) as cluster:
        results = run(square, range(20), "dask", scheduler=cluster.scheduler_address)
        assert list(results) == [value * value for value in range(20)]


def test_an_unreachable_scheduler_is_an_engine_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "CONNECT_SECONDS", 0.2)
    with pytest.raises(
        EngineError, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9"
    ):
        list(run(square, [1], "dask", scheduler="tcp://127.0.0.1:9"))


@pytest.mark.parametrize("module", ["dask.bag", "distributed"])
def test_missing_dask_is_an_engine_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(EngineError, match=r"repeat-guard-audit\[dask\]"):
        list(run(square, [1], "dask", scheduler="tcp://127.0.0.1:9"))


def test_the_pool_starts_no_more_processes_than_it_has_batches() -> None:
    results = run(square, [2, 3], "processes", jobs=64)
    assert next(results) == 4
    assert len(multiprocessing.active_children()) == 2
    assert list(results) == [9]


def process_id(_: object) -> int:
    return os.getpid()


@pytest.mark.parametrize(("batches", "jobs"), [(1, 8), (0, 2), (9, 1)])
def test_a_pool_of_one_process_is_this_process(batches: int, jobs: int) -> None:
    # A lone batch, or one job: no process is started, and no pool is made for nothing.
    assert list(run(process_id, range(batches), "processes", jobs)) == [os.getpid()] * batches
    assert not multiprocessing.active_children()


def test_the_pool_is_imported_only_when_it_starts() -> None:
    code = (
        "import sys\n"
        "from repeat_guard_audit import run\n"
        "assert list(run(abs, [-1], 'processes', 2)) == [1]\n"
        "print(sorted({'multiprocessing', 'concurrent.futures'} & set(sys.modules)))\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout == "[]\n"


def test_a_pool_left_early_drops_the_work_not_started() -> None:
    results = run(square, range(1000), "processes", jobs=2)
    assert isinstance(results, Generator)
    assert next(results) == 0
    workers = multiprocessing.active_children()
    assert workers
    results.close()  # what a consumer's exception or a closed pipe does to the generator
    # Killed, not left to finish their batches, or to wait for more work: none is running.
    assert not any(worker.is_alive() for worker in workers)
