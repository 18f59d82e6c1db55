"""Hypothesis settings for a mutation campaign only (``make mutation`` copies this file).

A campaign runs the tests once per mutant while other work shares the machine. A health check
that finds input generation slow, or a deadline missed, then fails a test for the machine's
load, not for the mutant, and would count that mutant as killed: neither may fail a test here.
"""

from hypothesis import HealthCheck, settings

settings.register_profile("mutation", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("mutation")
