# dask 2026.8 leaves dask.multiprocessing unannotated; only what the audit's dask engine calls
# (repeat_guard_audit._engine): the multiprocessing context Dask's processes scheduler uses.

from multiprocessing.context import BaseContext

def get_context() -> BaseContext: ...
