"""What a scripted hook does when called: the phrases feature files may use, and their code.

Each behaviour is a plain-English phrase (used verbatim in steps such as ``hook "b.flaky" is
installed and raises an error``), the registration budget it needs, and the producer body. A
phrase not listed here is an undefined step, which ``pwh scenarios check`` reports.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fakes._packets import intent_for, not_applicable, proposed

Body = Callable[[Mapping[str, Any], "CallContext"], Any]


@dataclass
class CallContext:
    """What a producer body may know besides its input: its own call count and the release
    latch that lets abandoned 'hanging' producers end when the scenario does."""

    call_number: int
    release: threading.Event
    private_values: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Behaviour:
    phrase: str
    body: Body
    budget: dict[str, int] = field(default_factory=dict)


def _one(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i))


def _two(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i, {"note_ref": "first"}), intent_for(i, {"note_ref": "second"}))


def _raise(i: Mapping[str, Any], c: CallContext) -> Any:
    raise RuntimeError("provider exploded while reading " + c.private_values.get("path", "/srv/private/state.db"))


def _hang(i: Mapping[str, Any], c: CallContext) -> Any:
    try:
        c.release.wait(60)
    except BaseException:  # swallow the stop signal: the late answer must still be dropped
        c.release.wait(60)
    return proposed(intent_for(i, {"note_ref": "late_answer"}))


def _busy(i: Mapping[str, Any], c: CallContext) -> Any:
    while not c.release.is_set():
        pass
    return proposed(intent_for(i, {"note_ref": "late_answer"}))


def _oversize(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i, {"note_ref": "big", "filler": "x" * 20000}))


def _invalid(i: Mapping[str, Any], c: CallContext) -> Any:
    return {"status": "done", "message": "all good"}


def _wrong_hook(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i, hook_id="zz.impostor"))


def _external_write(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i, external_write_performed=True))


def _authority(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i, grants_new_action_authority=True))


def _differs(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i, {"note_ref": f"call_{c.call_number}"}))


def _first_fails(i: Mapping[str, Any], c: CallContext) -> Any:
    if c.call_number == 1:
        raise RuntimeError("transient")
    return proposed(intent_for(i))


def _mutates(i: Mapping[str, Any], c: CallContext) -> Any:
    i["source"]["todo_id"] = "todo_changed"  # type: ignore[index]
    return not_applicable()


def _leak(kind: str) -> Body:
    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        return proposed(intent_for(i, {"note_ref": "n", "detail": "see " + c.private_values[kind]}))

    return body


def _scope(scope: str) -> Body:
    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        return proposed(intent_for(i, requested_write_scope=[scope]))

    return body


BEHAVIOURS: dict[str, Behaviour] = {
    b.phrase: b
    for b in (
        Behaviour("proposes one intent", _one),
        Behaviour("proposes two intents", _two),
        Behaviour("answers not applicable", lambda i, c: not_applicable()),
        Behaviour("raises an error", _raise),
        Behaviour("does not return within its timeout", _hang, {"timeout_ms": 200}),
        Behaviour("loops forever without returning", _busy, {"timeout_ms": 200}),
        Behaviour("returns a result over its byte limit", _oversize, {"max_result_bytes": 16384}),
        Behaviour("returns an invalid result", _invalid),
        Behaviour("proposes an intent for another hook", _wrong_hook),
        Behaviour("proposes an intent that claims an external write", _external_write),
        Behaviour("proposes an intent that claims new action authority", _authority),
        Behaviour("proposes a different intent on every call", _differs),
        Behaviour("fails on its first call only", _first_fails),
        Behaviour("tries to change its input", _mutates),
        Behaviour("proposes an intent carrying a private e-mail address", _leak("email")),
        Behaviour("proposes an intent carrying a private URL", _leak("url")),
        Behaviour("proposes an intent carrying an absolute path", _leak("path")),
        Behaviour("proposes an intent carrying a credential", _leak("credential")),
        Behaviour("proposes an intent requesting write scope report.publish", _scope("report.publish")),
        Behaviour("proposes an intent requesting write scope repo.push", _scope("repo.push")),
    )
}

# Behaviours whose provider never answers in time: the scenario must release them at the end.
HANGING = frozenset({"does not return within its timeout", "loops forever without returning"})
