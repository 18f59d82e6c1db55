"""``merge_wastes``: many wastes added up in one pass give what folding ``merge_waste`` gives."""

from __future__ import annotations

import functools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repeat_guard_audit import Waste, merge_audits, merge_waste

from .test_waste import wastes


def folded(items: list[Waste], keep: int) -> Waste:
    return functools.reduce(lambda total, waste: merge_waste(total, waste, keep), items, Waste())


# Drawing wastes is slow while other work loads the machine; the speed of drawing is not what
# this test checks.
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(wastes(), max_size=8), st.integers(min_value=0, max_value=4))
def test_one_pass_equals_the_fold(items: list[Waste], keep: int) -> None:
    assert merge_audits(items, keep) == folded(items, keep)
    assert merge_audits(iter(items), keep) == merge_audits(reversed(items), keep)


def test_nothing_adds_up_to_the_empty_waste() -> None:
    assert merge_audits([], 3) == Waste()
