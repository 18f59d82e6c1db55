# dask 2026.8 ships py.typed but leaves dask.bag unannotated (every call is untyped under
# --strict); this stub package replaces it for mypy and declares only the submodule used.
