# distributed 2026.8 ships py.typed but leaves Client and LocalCluster unannotated; only what
# the audit's dask engine (Client) and its tests (LocalCluster) use.

from types import TracebackType
from typing import Self

class Client:
    def __init__(self, address: str | None = ..., *, timeout: float = ...) -> None: ...
    def nthreads(self) -> dict[str, int]: ...
    def close(self) -> None: ...

class LocalCluster:
    def __init__(
        self,
        *,
        n_workers: int = ...,
        threads_per_worker: int = ...,
        processes: bool = ...,
        dashboard_address: str = ...,
        worker_dashboard_address: str = ...,
    ) -> None: ...
    @property
    def scheduler_address(self) -> str: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...
