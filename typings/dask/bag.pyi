# dask 2026.8 ships py.typed but no annotations in dask.bag; only what the audit's dask
# engine calls (repeat_guard_audit._engine): from_sequence, Bag.map, Bag.compute (with the
# processes scheduler's pool).

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

_T = TypeVar("_T")
_U = TypeVar("_U")

class Bag(Generic[_T]):
    def map(self, func: Callable[[_T], _U]) -> Bag[_U]: ...
    def compute(self, *, scheduler: object = ..., pool: object = ...) -> list[_T]: ...

def from_sequence(
    seq: Sequence[_T], partition_size: int | None = ..., npartitions: int | None = ...
) -> Bag[_T]: ...
