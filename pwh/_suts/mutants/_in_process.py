"""The base of mutants whose defect needs providers in this process."""

from __future__ import annotations

from typing import Any

from pwh import Dispatcher
from pwh._core.runner import ThreadRunner


class InProcess(Dispatcher):
    """A mutant whose defect needs the provider's live objects in this process (a shared input, an
    answer kept by reference, state noted from inside a wrapped provider): it runs its providers
    on the thread runner, as a dispatcher built that way would."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        kw.setdefault("runner", ThreadRunner())
        super().__init__(*args, **kw)
