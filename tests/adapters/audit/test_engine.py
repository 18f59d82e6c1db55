"""The engines: same results, same order, whatever runs the work; Dask only when asked."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Generator, Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.process import BaseProcess
from typing import NoReturn

import pytest
from distributed import LocalCluster

from repeat_guard_audit import EngineError, default_jobs, run
from repeat_guard_audit import _engine as engine

from ..processes import children, running
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
    before = children(os.getpid())
    results = run(square, [2, 3], "processes", jobs=64)
    assert next(results) == 4
    assert len(children(os.getpid()) - before) == 2
    assert list(results) == [9]
    assert children(os.getpid()) == before  # each ended with its pipe of batches


def process_id(_: object) -> int:
    return os.getpid()


@pytest.mark.parametrize(("batches", "jobs"), [(1, 8), (0, 2), (9, 1)])
def test_a_pool_of_one_process_is_this_process(batches: int, jobs: int) -> None:
    # A lone batch, or one job: no process is started, and no pool is made for nothing.
    before = children(os.getpid())
    assert list(run(process_id, range(batches), "processes", jobs)) == [os.getpid()] * batches
    assert children(os.getpid()) == before


def test_a_pool_imports_neither_multiprocessing_nor_concurrent_futures() -> None:
    code = (
        "import os, sys\n"
        "from repeat_guard_audit import run\n"
        "assert len(set(run(lambda _: os.getpid(), range(8), 'processes', 2))) == 2\n"
        "print(sorted({'multiprocessing', 'concurrent.futures'} & set(sys.modules)))\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout == "[]\n"


def test_a_pool_left_early_drops_the_work_not_started() -> None:
    before = children(os.getpid())
    results = run(square, range(1000), "processes", jobs=2)
    assert isinstance(results, Generator)
    assert next(results) == 0
    workers = children(os.getpid()) - before
    assert len(workers) == 2
    results.close()  # what a consumer's exception or a closed pipe does to the generator
    # Killed, not left to finish their batches, or to wait for more work: none is running.
    assert not any(map(running, workers))
    assert children(os.getpid()) == before


def test_batches_and_results_of_any_value_go_through_the_pipes() -> None:
    values = [None, (), "", 0, {"a": [1, None]}, None]
    assert list(run(lambda value: value, values, "processes", jobs=2)) == values


def fails_on_two(value: int) -> int:
    if value == 2:
        raise ValueError(f"no {value}")
    return value


class _Unpicklable(Exception):
    def __reduce__(self) -> str | tuple[object, ...]:
        raise TypeError("cannot pickle this one")


def fails_unpicklably(value: int) -> int:
    raise _Unpicklable(f"no {value}")


def test_what_the_work_raises_in_a_worker_is_raised_here_and_no_worker_stays() -> None:
    before = children(os.getpid())
    with pytest.raises(ValueError, match=r"^no 2$"):
        list(run(fails_on_two, range(10), "processes", jobs=2))
    # An exception that cannot travel is told in words.
    with pytest.raises(RuntimeError, match=r"^_Unpicklable: no 0$"):
        list(run(fails_unpicklably, range(10), "processes", jobs=2))
    assert children(os.getpid()) == before


def dies_on_three(value: int) -> int:
    if value == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    if value == 4:
        os._exit(5)
    return value


@pytest.mark.parametrize(
    ("values", "how"), [([0, 1, 2, 3], "killed by signal 9"), ([0, 1, 4], "exit status 5")]
)
def test_a_worker_that_ends_with_work_to_do_is_an_engine_error(values: list[int], how: str) -> None:
    before = children(os.getpid())
    with pytest.raises(
        EngineError, match=rf"^a worker process ended before its work was done \({how}\)$"
    ):
        list(run(dies_on_three, values, "processes", jobs=2))
    assert children(os.getpid()) == before


def test_a_worker_gone_while_it_waits_for_a_batch_is_an_engine_error() -> None:
    before = children(os.getpid())

    def batches() -> Iterator[int]:
        yield from range(2 * engine._WINDOW_PER_WORKER)  # read before the workers start
        # Asked for one more, the pool has a worker waiting for it: every worker is killed
        # first, so the batch goes down a pipe nobody reads any more.
        workers = children(os.getpid()) - before
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        while any(map(running, workers)):
            time.sleep(0.01)
        yield 3

    with pytest.raises(EngineError, match=r"\(killed by signal 9\)$"):
        list(run(square, batches(), "processes", jobs=2))
    assert children(os.getpid()) == before


def test_a_worker_that_cannot_be_started_is_an_engine_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = children(os.getpid())
    forks: list[int] = []
    fork = os.fork

    def fork_once() -> int:
        if forks:
            raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))
        forks.append(pid := fork())
        return pid

    monkeypatch.setattr(os, "fork", fork_once)
    with pytest.raises(EngineError, match=r"^cannot start a worker process: Resource temporarily"):
        list(run(square, range(10), "processes", jobs=2))
    assert children(os.getpid()) == before  # the one started is killed and waited for


def _serve_here(
    work: object, batches: list[object], inherited: list[int]
) -> tuple[int, list[tuple[bool, object]]]:
    """``engine._serve`` run in this process (where coverage sees it): its exit status and what
    it wrote, its batches sent down a pipe first."""
    batches_in, batches_out = os.pipe()
    results_in, results_out = os.pipe()
    with open(batches_out, "wb") as pipe:
        for batch in batches:
            engine._send(pipe, (batch,))
    handlers = {number: signal.getsignal(number) for number in engine._HELD}
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(os, "_exit", sys.exit)
            with pytest.raises(SystemExit) as ended:
                engine._serve(work, batches_in, results_out, inherited)  # type: ignore[arg-type]
            assert {signal.getsignal(number) for number in engine._HELD} == {signal.SIG_DFL}
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
    with open(results_in, "rb") as pipe:
        written = list(iter(lambda: engine._receive(pipe), None))
    return ended.value.code, written  # type: ignore[return-value]


def test_a_worker_sends_each_result_or_exception_and_ends_with_its_batches() -> None:
    # and closes first what it inherited of the other workers' pipes
    spare_in, spare_out = os.pipe()
    status, written = _serve_here(fails_on_two, [1, 2, 3], [spare_in])
    os.close(spare_out)
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(spare_in)
    assert status == 0
    assert [(ok, value if ok else repr(value)) for ok, value in written] == [
        (True, 1),
        (False, "ValueError('no 2')"),
        (True, 3),
    ]


def test_a_worker_tells_an_exception_that_cannot_be_pickled_in_words() -> None:
    status, written = _serve_here(fails_unpicklably, [5], [])
    assert status == 0
    assert [(ok, repr(value)) for ok, value in written] == [
        (False, "RuntimeError('_Unpicklable: no 5')")
    ]


def interrupted(_: object) -> NoReturn:
    raise KeyboardInterrupt


def test_a_worker_that_cannot_go_on_ends_saying_nothing() -> None:
    assert _serve_here(interrupted, [2], []) == (1, [])


class _Handed(Exception):
    """Raised by a stand-in for the worker's side, where the real one would end the process."""


def test_a_worker_closes_the_pipes_of_the_workers_started_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The first "fork" gives a sleeping process as the first worker; the second plays the
    # child, whose side is handed the descriptors it must close.
    sleeper = os.posix_spawn("/bin/sleep", ["sleep", "60"], os.environ)
    forks = iter([sleeper, 0])
    handed: list[tuple[int, int, list[int]]] = []

    def serve(work: object, batches: int, results: int, inherited: list[int]) -> NoReturn:
        handed.append((batches, results, inherited))
        raise _Handed

    monkeypatch.setattr(os, "fork", lambda: next(forks))
    monkeypatch.setattr(engine, "_serve", serve)
    with pytest.raises(_Handed):
        engine._Forked(square, 2)
    [(batches, results, inherited)] = handed
    # its own pipes' other ends, then the first worker's ends held here: six pipe ends
    assert len(inherited) == 4
    assert len({batches, results, *inherited}) == 6
    assert not running(sleeper)  # the first worker, killed and waited for on the way out
    for end in (batches, results, *inherited[:2]):  # what the child would have ended with
        os.close(end)


def test_a_pool_for_dask_left_by_an_exception_kills_its_workers() -> None:
    workers: list[BaseProcess] = []

    def leave(pool: ProcessPoolExecutor) -> None:
        assert pool.submit(square, 3).result() == 9
        workers.extend(pool._processes.values())
        raise KeyError

    with pytest.raises(KeyError), engine._pool(2) as pool:
        leave(pool)
    assert workers
    assert not any(worker.is_alive() for worker in workers)


def test_without_the_cpu_affinity_the_jobs_are_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "sched_getaffinity")
    assert default_jobs() == (os.cpu_count() or 1)
