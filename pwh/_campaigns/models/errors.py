"""The models' own errors, in one module every part of the models may import (no cycle)."""

from __future__ import annotations

__all__ = ["CannotExpress", "ModelError", "StepNotApplicable"]


class ModelError(Exception):
    """The model could not run a step (not: the SUT broke a rule)."""


class CannotExpress(ModelError):
    """The SUT raised ``Unsupported`` half-way through a step that touches the primary Turn: the
    run cannot be judged past it (the case is reported as the adapter's limit, not as a finding)."""


class StepNotApplicable(ModelError):
    """A step that makes no sense in the current state (e.g. replaying writeback 3 of 2): a
    hand-edited or shrunk trace, never something the SUT did."""
