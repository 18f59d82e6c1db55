"""``python -m repeat_guard_acp_agent``: serve the guarded agent loop as an ACP agent on stdio."""

import sys

from ._main import serve_main

if __name__ == "__main__":
    sys.exit(serve_main())
