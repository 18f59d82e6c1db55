"""Running one picklable work function over many batches: in process, in a pool, on Dask.

Every engine yields the results in the order the batches came in, and keeps only a bounded
window of batches in flight, so a million files cost the same memory as a thousand and every
engine produces the same output, line for line. Dask is imported only when it is asked for.

The process pool is this process forked, each worker fed one batch at a time over a pipe of its
own: ``concurrent.futures`` and ``multiprocessing`` had cost about a seventh of the command's
start to import, and their threads and queues about a millisecond of this process's time for
every batch, taken from the workers on a machine with as many cores as workers. Dask's local
``processes`` scheduler, which needs an executor, runs in a ``ProcessPoolExecutor`` of ours.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import select
import signal
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any, Generic, Literal, NamedTuple, NoReturn, TypeVar

from repeat_guard_transcripts import collector_paused

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor
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
    """The number of cores this process may use (where the system does not say, the cores)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run(
    work: Callable[[In], Out],
    batches: Iterable[In],
    engine: EngineName = "local",
    jobs: int | None = None,
    scheduler: str | None = None,
) -> Iterator[Out]:
    """Yield ``work(batch)`` for each batch, in the order of ``batches``.

    ``local`` runs in this process; ``processes`` in ``jobs`` processes forked from this one
    (default: the cores), never more than the batches, and in this process when that is one
    (the batches and the results must pickle; what ``work`` raises is raised here); ``dask``
    on the scheduler at ``scheduler`` (an address such as ``tcp://10.0.0.5:8786``), or on one
    of Dask's own local schedulers named in ``LOCAL_SCHEDULERS`` (default ``processes``), where
    ``work`` must pickle too. Raises ``EngineError`` when Dask is missing or its scheduler
    cannot be reached, and when a worker process cannot start or ends with work to do.
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
    pool = _Forked(work, workers)
    finished = False
    try:
        yield from pool.results(itertools.chain(first, source), window)
        finished = True
    finally:
        # Work that stops early (Ctrl-C, SIGTERM or SIGHUP made an exception, a closed pipe,
        # a worker gone) kills the workers: one busy with a batch would make the end wait for
        # it. Otherwise each ends when its pipe of batches closes.
        pool.close(kill=not finished)


class _Worker(NamedTuple):
    pid: int
    batches: IO[bytes]  # written here, read by the worker
    results: IO[bytes]  # written by the worker, read here


class _Forked(Generic[In, Out]):
    """``workers`` processes forked from this one, each running ``work`` on the batches it is
    sent, one at a time, and sending each result back (pickled, after its length)."""

    def __init__(self, work: Callable[[In], Out], workers: int) -> None:
        self._workers: list[_Worker] = []
        self._ended: set[int] = set()
        self._ready = select.poll()  # no descriptor of its own for a worker to inherit
        self._by_pipe: dict[int, int] = {}  # a results pipe's descriptor -> its worker
        try:
            for _ in range(workers):
                self._start(work)
        except BaseException:
            self.close(kill=True)
            raise

    def _start(self, work: Callable[[In], Out]) -> None:
        batches_in, batches_out = os.pipe()
        results_in, results_out = os.pipe()
        # The ends of the other workers' pipes, which this one must not hold open: a worker
        # waiting for batches stops when every writer of its pipe is gone.
        others = [end.fileno() for worker in self._workers for end in worker[1:]]
        try:
            with _held():
                pid = os.fork()
                if pid == 0:  # the worker: never returns
                    _serve(work, batches_in, results_out, [batches_out, results_in, *others])
        except OSError as error:  # too many processes, too little memory
            for end in (batches_in, batches_out, results_in, results_out):
                os.close(end)
            raise EngineError(f"cannot start a worker process: {error.strerror}") from error
        os.close(batches_in)
        os.close(results_out)
        self._by_pipe[results_in] = len(self._workers)
        batches = open(batches_out, "wb")  # noqa: SIM115  # open until ``close``
        self._workers.append(_Worker(pid, batches, open(results_in, "rb")))  # noqa: SIM115
        self._ready.register(results_in, select.POLLIN)

    def results(self, batches: Iterable[In], window: int) -> Iterator[Out]:
        """Yield ``work(batch)`` for each batch, in order, with at most ``window`` batches sent
        and not yet yielded (those done early wait here for their turn)."""
        source = iter(batches)
        idle = list(reversed(range(len(self._workers))))
        doing: dict[int, int] = {}  # worker -> the number of the batch it works on
        done: dict[int, Out] = {}
        sent = given = 0
        while True:
            while idle and sent - given < window:
                try:
                    batch = next(source)
                except StopIteration:
                    break
                worker = idle.pop()
                self._give(worker, batch)
                doing[worker] = sent
                sent += 1
            if given == sent:
                return
            if given in done:
                yield done.pop(given)
                given += 1
                continue
            for pipe, _ in self._ready.poll():
                worker = self._by_pipe[pipe]
                result = self._result(worker)  # an idle worker's pipe is ready only at its end
                done[doing.pop(worker)] = result
                idle.append(worker)

    def _give(self, worker: int, batch: In) -> None:
        try:
            _send(self._workers[worker].batches, (batch,))
        except BrokenPipeError:  # the worker is gone
            raise self._gone(worker) from None

    def _result(self, worker: int) -> Out:
        answer = _receive(self._workers[worker].results)
        if answer is None:
            raise self._gone(worker)
        succeeded, value = answer
        if not succeeded:
            raise value
        result: Out = value
        return result

    def _gone(self, worker: int) -> EngineError:
        """The error to raise for ``worker``, which ended with work to do: how it ended."""
        pid = self._workers[worker].pid
        _, status = os.waitpid(pid, 0)
        self._ended.add(pid)
        code = os.waitstatus_to_exitcode(status)
        how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        return EngineError(f"a worker process ended before its work was done ({how})")

    def close(self, kill: bool) -> None:
        """Close every pipe and wait for every worker to end, killing them first if ``kill``."""
        for pid, batches, results in self._workers:
            if kill and pid not in self._ended:
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):  # what a dead worker never read is dropped
                batches.close()
            results.close()
        for pid, _, _ in self._workers:
            if pid not in self._ended:
                os.waitpid(pid, 0)
                self._ended.add(pid)


def _serve(work: Callable[[In], Out], batches: int, results: int, inherited: list[int]) -> NoReturn:
    """A worker's life: ``work`` on each batch read from the pipe ``batches``, its result (or
    the exception it raised) written to the pipe ``results``, until the batches end. Ends the
    process, never returning into the caller: a worker killed by a signal ends at once and
    says nothing, as the signal's default does."""
    status = 0
    try:
        for end in inherited:
            os.close(end)
        for number in _HELD:
            signal.signal(number, signal.SIG_DFL)
        _unheld()
        with open(batches, "rb") as inbox, open(results, "wb") as outbox:
            while (message := _receive(inbox)) is not None:
                try:
                    _send(outbox, (True, work(message[0])))
                except Exception as error:  # the work's own: raised again where it is taken
                    _send(outbox, (False, _picklable(error)))
    except BaseException:  # this process's end (a pipe closed by a killed command): say nothing
        status = 1
    finally:
        os._exit(status)


def _picklable(error: Exception) -> Exception:
    import pickle  # only with a pool, as the module's docstring says

    try:
        pickle.dumps(error)
    except Exception:  # whatever could not be pickled: its words still can
        return RuntimeError(f"{type(error).__name__}: {error}")
    return error


_LENGTH = 8  # bytes before each message: its length


def _send(pipe: IO[bytes], value: object) -> None:
    import pickle  # only with a pool, as the module's docstring says

    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(len(data).to_bytes(_LENGTH, "little") + data)
    pipe.flush()


def _receive(pipe: IO[bytes]) -> Any:
    """The next value sent down ``pipe``, or ``None`` when it ended (the sender is gone)."""
    import pickle  # only with a pool, as the module's docstring says

    header = pipe.read(_LENGTH)
    if len(header) < _LENGTH:
        return None
    size = int.from_bytes(header, "little")
    data = pipe.read(size)
    return None if len(data) < size else pickle.loads(data)


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
