"""Running one picklable work function over many batches: in process, in a pool, on Dask.

Every engine yields the results in the order the batches came in, and keeps only a bounded
window of batches in flight, so a million files cost the same memory as a thousand and every
engine produces the same output, line for line. Dask is imported only when it is asked for.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import islice
from typing import TYPE_CHECKING, Literal, TypeVar

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["ENGINES", "LOCAL_SCHEDULERS", "EngineError", "EngineName", "default_jobs", "run"]

EngineName = Literal["local", "processes", "dask"]
ENGINES: tuple[EngineName, ...] = ("local", "processes", "dask")
# Dask schedulers that need no cluster; anything else given to --scheduler is an address.
LOCAL_SCHEDULERS = ("sync", "synchronous", "threads", "processes")

# Batches in flight per worker: enough to hide a slow batch, small enough to bound memory.
_WINDOW_PER_WORKER = 4
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
    cores); ``dask`` on the scheduler at ``scheduler`` (an address such as
    ``tcp://10.0.0.5:8786``), or on one of Dask's own local schedulers named in
    ``LOCAL_SCHEDULERS`` (default ``processes``). ``work`` and the batches must pickle for the
    last two. Raises ``EngineError`` when Dask is missing or its scheduler cannot be reached.
    """
    if engine == "local":
        return map(work, batches)
    workers = jobs if jobs is not None else default_jobs()
    if engine == "processes":
        return _pooled(work, batches, workers)
    return _dask(work, batches, workers, scheduler or "processes")


def _pooled(work: Callable[[In], Out], batches: Iterable[In], workers: int) -> Iterator[Out]:
    pool = ProcessPoolExecutor(max_workers=workers)
    try:
        pending: deque[Future[Out]] = deque()
        window = workers * _WINDOW_PER_WORKER
        for batch in batches:
            pending.append(pool.submit(work, batch))
            if len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        # Interrupted (Ctrl-C, a closed pipe): drop the batches not started yet.
        pool.shutdown(cancel_futures=True)


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
    target: object = client if client is not None else scheduler
    try:
        size = max(workers, 1) * _WINDOW_PER_WORKER
        if client is not None:
            size = max(size, sum(client.nthreads().values()) * _WINDOW_PER_WORKER)
        source = iter(batches)
        while window := list(islice(source, size)):
            bag = dask.bag.from_sequence(window, npartitions=len(window)).map(work)
            results = bag.compute(scheduler=target)
            yield from results
    finally:
        if client is not None:
            client.close()


def _connect(address: str) -> Client:
    try:
        from distributed import Client
    except ImportError as error:
        raise EngineError(
            "the dask engine needs distributed: pip install 'repeat-guard-audit[dask]'"
        ) from error
    try:
        return Client(address, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError) as error:
        raise EngineError(f"cannot reach the Dask scheduler at {address}: {error}") from error
