"""Test-wide settings: Hypothesis profiles (quick for CI, deeper ones behind `pwh soak`)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("deep", max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("PWH_HYPOTHESIS_PROFILE", "ci"))


# The slowest files (whole gate runs, each a child pytest of its own) are collected first: with
# `-n auto --dist loadfile` each worker takes whole files in collection order, so starting the long
# ones first lets the workers finish together instead of one waiting on a late long file.
SLOW_FIRST = ("tests/whole_gate/", "tests/suts/test_loopx.py", "tests/harness/test_packet.py")


def pytest_collection_modifyitems(items: list) -> None:
    def rank(item: object) -> int:
        path = str(getattr(item, "nodeid", ""))
        return next((i for i, prefix in enumerate(SLOW_FIRST) if path.startswith(prefix)), len(SLOW_FIRST))

    items.sort(key=rank)  # stable: the order within each group stays as collected
