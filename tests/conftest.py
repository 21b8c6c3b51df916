"""Test-wide settings: Hypothesis profiles (quick for CI, deeper ones behind `pwh soak`)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("deep", max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("PWH_HYPOTHESIS_PROFILE", "ci"))
