"""How the tests start a Dask ``LocalCluster``: every server it opens on 127.0.0.1 only."""

from __future__ import annotations

from typing import Final

LOCAL_ONLY: Final = {"dashboard_address": "127.0.0.1:0", "worker_dashboard_address": "127.0.0.1:0"}
"""Keyword arguments for ``LocalCluster``. ``dashboard_address=None`` does not keep a scheduler
from serving HTTP: it listens on 0.0.0.0:8787 (checked with ``ss -ltnp``), so a second cluster
or anything else on that port made it fall back and leak a socket, which the tests' warnings
filter turns into an error; the workers' HTTP servers listen on 0.0.0.0 unless given an
address. Free ports of 127.0.0.1 avoid both."""
