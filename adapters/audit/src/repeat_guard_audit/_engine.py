"""Running one picklable work function over many batches: in process, in a pool, on Dask.

Every engine yields the results in the order the batches came in, and keeps only a bounded
window of batches in flight, so a million files cost the same memory as a thousand and every
engine produces the same output, line for line. Dask is imported only when it is asked for, and
the process pool (``concurrent.futures.process`` and ``multiprocessing``, about a seventh of the
audit command's start) only when it starts.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Literal, TypeVar

from repeat_guard_transcripts import collector_paused

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing.context import BaseContext

    from distributed import Client

__all__ = ["ENGINES", "LOCAL_SCHEDULERS", "EngineError", "EngineName", "default_jobs", "run"]

EngineName = Literal["local", "processes", "dask"]
ENGINES: tuple[EngineName, ...] = ("local", "processes", "dask")
# Dask schedulers that need no cluster; anything else given to --scheduler is an address.
LOCAL_SCHEDULERS = ("sync", "synchronous", "threads", "processes")

# Batches in flight per worker: enough to hide a slow batch, small enough to bound memory.
_WINDOW_PER_WORKER = 4
# The signals that end the command: held while the pool starts a process or its thread.
_HELD = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
# How long to wait for a Dask scheduler to answer.
CONNECT_SECONDS = 10.0

In = TypeVar("In")
Out = TypeVar("Out")


class EngineError(Exception):
    """The engine asked for cannot run here (Dask not installed, scheduler unreachable)."""


def default_jobs() -> int:
    """The number of cores this process may use."""
    return len(os.sched_getaffinity(0))


def run(
    work: Callable[[In], Out],
    batches: Iterable[In],
    engine: EngineName = "local",
    jobs: int | None = None,
    scheduler: str | None = None,
) -> Iterator[Out]:
    """Yield ``work(batch)`` for each batch, in the order of ``batches``.

    ``local`` runs in this process; ``processes`` in a pool of ``jobs`` processes (default: the
    cores), never more than the batches, and in this process when that is one; ``dask`` on the
    scheduler at ``scheduler`` (an address such as ``tcp://10.0.0.5:8786``), or on one of Dask's
    own local schedulers named in ``LOCAL_SCHEDULERS`` (default ``processes``). ``work`` and the
    batches must pickle for the last two. Raises ``EngineError`` when Dask is missing or its
    scheduler cannot be reached.
    """
    if engine == "local":
        return map(work, batches)
    workers = jobs if jobs is not None else default_jobs()
    if engine == "processes":
        return _pooled(work, batches, workers)
    return _dask(work, batches, workers, scheduler or "processes")


@contextlib.contextmanager
def _pool(workers: int, context: BaseContext | None = None) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` processes, shut down on the way out, the batches not started yet
    dropped. Work that stops early (Ctrl-C, SIGTERM or SIGHUP made an exception, a closed
    pipe) kills the workers first: one busy with a batch would make the shutdown wait for it,
    and one left behind would wait forever for work, or block writing a result nobody reads."""
    from concurrent.futures import ProcessPoolExecutor  # the module's docstring says why here

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_unheld)
    try:
        yield pool
    except BaseException:
        _kill_workers(pool)
        raise
    finally:
        pool.shutdown(cancel_futures=True)


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    # The executor has no public way to stop its workers before Python 3.14. A worker killed
    # while writing a result leaves the executor's thread waiting for the rest of it, which
    # would hold the shutdown forever: once this process's end of the results pipe, unused
    # here, is closed, the workers' ends are the last, and their death ends that wait.
    for process in list(pool._processes.values()):
        process.kill()
    pool._result_queue._writer.close()  # type: ignore[attr-defined]


@contextlib.contextmanager
def _held() -> Iterator[None]:
    """Hold the ending signals while a submit may start the pool's processes or its thread. One
    arriving then was raised inside fork's at-fork handlers, which swallow it (the command went
    on, blocked on a report nobody reads), or between the executor's thread made and started (a
    shutdown that cannot join it, exit 70). Held, it is raised as soon as the submit returns."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _unheld() -> None:
    """In each worker: a process inherits the mask it was started under; take the signals back."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)


def _pooled(work: Callable[[In], Out], batches: Iterable[In], workers: int) -> Iterator[Out]:
    source = iter(batches)
    window = workers * _WINDOW_PER_WORKER
    first = list(itertools.islice(source, window))
    # No more processes than the batches they would get: each costs a start, and a thousand
    # of them for one file had taken seconds. A pool of one is this process with extra copying.
    workers = min(workers, len(first))
    if workers <= 1:
        yield from map(work, itertools.chain(first, source))
        return
    with _pool(workers) as pool:
        pending: deque[Future[Out]] = deque()
        for batch in itertools.chain(first, source):
            with _held():
                pending.append(pool.submit(work, batch))
            if len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _dask(
    work: Callable[[In], Out], batches: Iterable[In], workers: int, scheduler: str
) -> Iterator[Out]:
    try:
        import dask.bag
    except ImportError as error:
        raise EngineError(
            "the dask engine needs Dask: pip install 'repeat-guard-audit[dask]'"
        ) from error
    client = None if scheduler in LOCAL_SCHEDULERS else _connect(scheduler)
    with contextlib.ExitStack() as stack:
        if client is not None:
            stack.callback(client.close)
        options = _dask_options(client, scheduler, workers, stack)
        size = max(workers, 1) * _WINDOW_PER_WORKER
        if client is not None:
            size = max(size, sum(client.nthreads().values()) * _WINDOW_PER_WORKER)
        source = iter(batches)
        while window := list(itertools.islice(source, size)):
            bag = dask.bag.from_sequence(window, npartitions=len(window)).map(work)
            yield from bag.compute(**options)


def _dask_options(
    client: Client | None, scheduler: str, workers: int, stack: contextlib.ExitStack
) -> dict[str, object]:
    """How to compute on ``scheduler``: the client of a cluster, or a local scheduler; Dask's
    processes run in a pool of ours (``_pool``, with the context Dask would use), so that work
    that stops early leaves none of them behind."""
    if client is not None:
        return {"scheduler": client}
    if scheduler != "processes":
        return {"scheduler": scheduler}
    from dask.multiprocessing import get_context

    pool = stack.enter_context(_pool(max(workers, 1), get_context()))
    return {"scheduler": scheduler, "pool": pool}


def _connect(address: str) -> Client:
    try:
        from distributed import Client
    except ImportError as error:
        raise EngineError(
            "the dask engine needs distributed: pip install 'repeat-guard-audit[dask]'"
        ) from error
    try:
        # A Client that failed to connect is left in a reference cycle; its __del__ stops
        # distributed's loop runner under the class-wide lock that a new Client's start holds.
        # Collected in the middle of that start, it would wait on that lock forever.
        with collector_paused():
            return Client(address, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError) as error:
        raise EngineError(f"cannot reach the Dask scheduler at {address}: {error}") from error
    except ValueError as error:  # no port, a port that is not a number, ...
        raise EngineError(
            f"--scheduler {address} is neither an address (tcp://HOST:PORT) nor one of "
            f"{', '.join(LOCAL_SCHEDULERS)}"
        ) from error
