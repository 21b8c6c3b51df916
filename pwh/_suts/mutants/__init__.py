"""The mutant library: deliberately broken SUT adapters, each breaking exactly one rule of the RFC,
so the gate and the models can prove they catch it.

Load one as a SUT with ``pwh gate --sut mutant:NAME``. :data:`MUTANTS` names each,
with the row it breaks, the clause, and the instruments (``matrix``, ``models``) that must catch
it; ``tests/whole_gate/test_gate.py`` and ``tests/campaigns/test_models.py`` hold them to it.
"""

from __future__ import annotations

from typing import Any

from pwh._suts.mutants._registry import MUTANTS, Mutant, mutant

from . import (
    _invariants,  # noqa: F401  (one per model invariant)
    _limits,  # noqa: F401  (one per limit scenario: both sides of a limit, whole records, late answers)
    _one_method,  # noqa: F401  (the reference with one method replaced, one per matrix rule)
    _semantic,  # noqa: F401  (registers the semantic mutants: one rule kept on one path, kind or position only)
    _writeback,  # noqa: F401  (registers the writeback wiring's mutants)
)

__all__ = ["MUTANTS", "Mutant", "caught_by", "mutant"]


def caught_by(instrument: str) -> dict[str, str]:
    """Mutant name -> the row it breaks, for the mutants ``instrument`` must catch."""
    return {name: m.row for name, m in sorted(MUTANTS.items()) if instrument in m.caught_by}


def __getattr__(name: str) -> Any:
    """``mutant:NAME`` as a SUT factory."""
    found = MUTANTS.get(name)
    if found is None:
        raise AttributeError(name)
    return found.factory
