"""Injected time and identity for the fakes, so two runs of one script are byte-identical."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta


class StepClock:
    """A clock that moves only when asked: one fixed step per reading."""

    def __init__(self, start: datetime | None = None, step: timedelta = timedelta(seconds=1)) -> None:
        self._now = start or datetime(2026, 8, 26, tzinfo=UTC)
        self._step = step

    def now(self) -> str:
        self._now += self._step
        return self._now.strftime("%Y-%m-%dT%H:%M:%SZ")


class SeededIds:
    """Opaque identifiers from a seeded generator: ``receipt_5f0c9a1b2e3d``.

    (Faker makes the *private* values planted in leak scenarios; opaque ids need only a seeded
    source, and importing Faker for them would cost every scenario a second of start-up.)
    """

    def __init__(self, seed: int = 0) -> None:
        self._random = random.Random(seed)
        self._seen: set[str] = set()

    def next(self, prefix: str) -> str:
        while True:
            value = f"{prefix}_{self._random.getrandbits(48):012x}"
            if value not in self._seen:
                self._seen.add(value)
                return value
