"""``python -m repeat_guard_cli``: the same as the ``repeat-guard`` command."""

import sys

from repeat_guard_entry import console

sys.exit(console())
