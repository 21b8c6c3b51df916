"""The named depths the models run at: one table for the tests' Hypothesis profiles and for
``pwh soak --profile``.

``ci`` is what the test command runs (short histories, few examples, minutes in all); ``dev`` is a
longer look while working; ``deep`` makes long histories, where a crash after many replays and
profile changes can reach states the short ones never do. A soak is bounded by its minutes, not by
an example count, so for ``pwh soak`` a profile sets how long each generated history is.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelProfile:
    name: str
    max_examples: int  # per test, under pytest
    soak_steps: int  # steps per generated history, under ``pwh soak``
    about: str


PROFILES: dict[str, ModelProfile] = {
    p.name: p
    for p in (
        ModelProfile("ci", 40, 20, "the test command's depth: 40 examples a test; soak histories of 20 steps"),
        ModelProfile("dev", 100, 50, "a longer look: 100 examples a test; soak histories of 50 steps"),
        ModelProfile("deep", 2000, 120, "long histories: 2,000 examples a test; soak histories of 120 steps"),
    )
}
DEFAULT_PROFILE = "ci"


def register_hypothesis_profiles() -> None:
    """Register every profile with Hypothesis under its name (``--hypothesis-profile NAME`` or
    ``PWH_HYPOTHESIS_PROFILE`` then chooses one for the tests). Hypothesis is imported here, not
    at the top: the CLI reads this table for ``--help`` without paying for it."""
    from hypothesis import HealthCheck, settings

    for p in PROFILES.values():
        checks = list(HealthCheck) if p.name == "deep" else [HealthCheck.too_slow] if p.name == "ci" else []
        settings.register_profile(p.name, max_examples=p.max_examples, deadline=None, suppress_health_check=checks)
