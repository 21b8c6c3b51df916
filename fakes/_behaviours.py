"""What a scripted hook does when called: the phrases feature files may use, and their code.

Each behaviour is a plain-English phrase (used verbatim in steps such as ``hook "b.flaky" is
installed and raises an error``), the registration budget it needs, and the producer body. A
phrase not listed here is an undefined step, which ``pwh scenarios check`` reports.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fakes._packets import NUMBER_INTENT_KIND, dispatch_id_for, intent_for, not_applicable, proposed
from pwh._core.contracts import REGISTRATION_SCHEMA_VERSION

Body = Callable[[Mapping[str, Any], "CallContext"], Any]


@dataclass
class CallContext:
    """What a producer body may know besides its input: its own call count and the release
    latch that lets abandoned 'hanging' producers end when the scenario does."""

    call_number: int
    release: threading.Event
    private_values: dict[str, str] = field(default_factory=dict)
    host_pid: int = 0  # the scenario's own process: a provider elsewhere runs in the SUT's worker
    # The primary receipt ids committed so far, read from the primary store on demand (an
    # implementation may hash the receipt id it hands a hook, so an input need not carry it).
    committed_receipt_ids: Callable[[], list[str]] = field(default=lambda: [])

    def apart_from_host(self) -> bool:
        """Whether this call runs in another process than the scenario's (a worker process)."""
        return self.host_pid != 0 and os.getpid() != self.host_pid


@dataclass(frozen=True)
class Behaviour:
    phrase: str
    body: Body
    budget: dict[str, int] = field(default_factory=dict)
    intent_kinds: tuple[str, ...] = ()  # the test intent kinds it proposes, when not the general one


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


def _pause(i: Mapping[str, Any], c: CallContext) -> Any:
    c.release.wait(0.1)  # well inside its timeout: a slow but honest provider
    return proposed(intent_for(i))


def _busy(i: Mapping[str, Any], c: CallContext) -> Any:
    while not c.release.is_set():
        pass
    return proposed(intent_for(i, {"note_ref": "late_answer"}))


def _exits(i: Mapping[str, Any], c: CallContext) -> Any:
    # Ending the process is only safe where the process is the SUT's worker; in the host's own
    # process (a SUT that calls providers in-process) the same provider fails the ordinary way.
    if c.apart_from_host():
        os._exit(3)
    raise RuntimeError("the provider would end its process")


def _holds_the_lock(i: Mapping[str, Any], c: CallContext) -> Any:
    # One C call that never releases the interpreter lock (a backtracking match, hours long) where
    # it can be killed; in the host's own process, a plain hang that the scenario releases.
    if c.apart_from_host():
        re.fullmatch(r"(a+)+$", "a" * 40 + "!")
    else:
        c.release.wait(60)
    return proposed(intent_for(i, {"note_ref": "late_answer"}))


def _oversize(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i, {"note_ref": "big", "filler": "x" * 20000}))


def _oversize_second(i: Mapping[str, Any], c: CallContext) -> Any:
    # The excess lies after a whole valid intent (its flags, nulls and numbers already counted).
    return proposed(intent_for(i), intent_for(i, {"note_ref": "big", "filler": "x" * 20000}))


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


def _later_differs(i: Mapping[str, Any], c: CallContext) -> Any:
    """The same first intent on every call; only the second one changes."""
    return proposed(intent_for(i, {"note_ref": "steady"}), intent_for(i, {"note_ref": f"call_{c.call_number}"}))


def _first_fails(i: Mapping[str, Any], c: CallContext) -> Any:
    if c.call_number == 1:
        raise RuntimeError("transient")
    return proposed(intent_for(i))


def _mutates(i: Mapping[str, Any], c: CallContext) -> Any:
    i["source"]["todo_id"] = "todo_changed"
    return not_applicable()


def _with_detail(i: Mapping[str, Any], value: Any) -> Any:
    """An otherwise valid intent whose payload gets a value no digest could be computed for."""
    intent = intent_for(i)
    intent["payload"]["detail"] = value
    return proposed(intent)


def _escaped_oversize(i: Mapping[str, Any], c: CallContext) -> Any:
    # 5,000 control characters: short as a string, 30,000 bytes once escaped in JSON.
    return proposed(intent_for(i, {"note_ref": "big", "filler": "\u0001" * 5000}))


def _bigint(i: Mapping[str, Any], c: CallContext) -> Any:
    return _with_detail(i, 2**70)


def _nan(i: Mapping[str, Any], c: CallContext) -> Any:
    return _with_detail(i, float("nan"))


def _infinity(i: Mapping[str, Any], c: CallContext) -> Any:
    return _with_detail(i, float("-inf"))


def _not_json(i: Mapping[str, Any], c: CallContext) -> Any:
    return _with_detail(i, {"a", "set"})


def _int_key(i: Mapping[str, Any], c: CallContext) -> Any:
    return {1: "one", **proposed(intent_for(i))}


def _deep(i: Mapping[str, Any], c: CallContext) -> Any:
    nested: Any = "bottom"
    for _ in range(200):
        nested = [nested]
    return _with_detail(i, nested)


def _wrong_digest(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i, intent_id="pwi_" + "0" * 64))


def _copies_b_reporter(i: Mapping[str, Any], c: CallContext) -> Any:
    """An intent of this hook's own dispatch whose intent_id is the one hook "b.reporter" is about
    to propose for the same receipt (its correct digest): a forged identity, never a valid one."""
    receipts = c.committed_receipt_ids()
    receipt_id = receipts[-1] if receipts else i["source"]["receipt_id"]
    theirs = dispatch_id_for(receipt_id, "b.reporter", REGISTRATION_SCHEMA_VERSION, i["source"]["event_kind"])
    mine = intent_for(i)
    mine["intent_id"] = intent_for({**i, "hook_id": "b.reporter", "dispatch_id": theirs})["intent_id"]
    return proposed(mine)


def _unregistered_kind(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i, kind="synthetic.unregistered"))


def _bad_payload(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i, {"note_ref": "n", "unexpected_field": 1}))


def _twice(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i), intent_for(i))


def _three(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(*(intent_for(i, {"note_ref": f"n{k}"}) for k in range(3)))


def _other_dispatch(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for({**i, "dispatch_id": "pwh_" + "1" * 64}))


def _big_budget(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i, budget={"max_attempts": 1, "max_result_bytes": 65536}))


def _echo_input(i: Mapping[str, Any], c: CallContext) -> Any:
    intent = intent_for(i)
    intent["payload"] = i["projection"]  # the frozen input itself, handed back
    return proposed(intent)


def _fraction(i: Mapping[str, Any], c: CallContext) -> Any:
    return proposed(intent_for(i, {"note_ref": "scored", "score": 0.375}, kind=NUMBER_INTENT_KIND))


def _leak(kind: str) -> Body:
    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        return proposed(intent_for(i, {"note_ref": "n", "detail": "see " + c.private_values[kind]}))

    return body


def _scope(scope: str) -> Body:
    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        return proposed(intent_for(i, requested_write_scope=[scope]))

    return body


def _scopes(*scopes: str) -> Body:
    """One intent per scope, in that order (an empty name: an intent requesting none)."""

    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        return proposed(*(intent_for(i, {"note_ref": f"n{k}"}, requested_write_scope=[s] if s else []) for k, s in enumerate(scopes)))

    return body


BEHAVIOURS: dict[str, Behaviour] = {
    b.phrase: b
    for b in (
        Behaviour("proposes one intent", _one),
        Behaviour("proposes two intents", _two),
        Behaviour("proposes one intent after a short pause", _pause, {"timeout_ms": 5000}),
        Behaviour("answers not applicable", lambda i, c: not_applicable()),
        Behaviour("raises an error", _raise),
        Behaviour("does not return within its timeout", _hang, {"timeout_ms": 200}),
        Behaviour("loops forever without returning", _busy, {"timeout_ms": 200}),
        Behaviour("ends its own process when it runs apart from the host", _exits),
        Behaviour("holds the interpreter lock past its timeout when it runs apart from the host", _holds_the_lock, {"timeout_ms": 200}),
        Behaviour("returns a result over its byte limit", _oversize, {"max_result_bytes": 16384}),
        Behaviour("returns a result over its byte limit in its second intent", _oversize_second, {"max_result_bytes": 16384}),
        Behaviour("returns an invalid result", _invalid),
        Behaviour("proposes an intent for another hook", _wrong_hook),
        Behaviour("proposes an intent that claims an external write", _external_write),
        Behaviour("proposes an intent that claims new action authority", _authority),
        Behaviour("proposes a different intent on every call", _differs),
        Behaviour("proposes two intents, only the second different on every call", _later_differs),
        Behaviour("fails on its first call only", _first_fails),
        Behaviour("tries to change its input", _mutates),
        Behaviour("returns NaN inside its intent", _nan),
        Behaviour("returns minus infinity inside its intent", _infinity),
        Behaviour("returns a result over its byte limit once escaped", _escaped_oversize),
        Behaviour("returns an integer beyond 64 bits", _bigint),
        Behaviour("hands its own input back as the intent payload", _echo_input),
        Behaviour("proposes an intent with a fractional score", _fraction, intent_kinds=(NUMBER_INTENT_KIND,)),
        Behaviour("returns a value that is not JSON", _not_json),
        Behaviour("returns a result with a non-string key", _int_key),
        Behaviour("returns a list instead of a result", lambda i, c: []),
        Behaviour("returns a result nested 200 levels deep", _deep),
        Behaviour("proposes an intent whose identity is not its digest", _wrong_digest),
        Behaviour("proposes an intent under b.reporter's intent identity", _copies_b_reporter),
        Behaviour("proposes an intent of a kind it did not register", _unregistered_kind),
        Behaviour("proposes an intent whose payload breaks its schema", _bad_payload),
        Behaviour("proposes the same intent twice", _twice),
        Behaviour("proposes more intents than its budget allows", _three),
        Behaviour("proposes an intent for another dispatch", _other_dispatch),
        Behaviour("proposes an intent with a larger budget than its own", _big_budget),
        Behaviour("proposes an intent carrying a private e-mail address", _leak("email")),
        Behaviour("proposes an intent carrying a private URL", _leak("url")),
        Behaviour("proposes an intent carrying an absolute path", _leak("path")),
        Behaviour("proposes an intent carrying a credential", _leak("credential")),
        Behaviour("proposes an intent requesting write scope report.publish", _scope("report.publish")),
        Behaviour("proposes an intent requesting write scope repo.push", _scope("repo.push")),
        Behaviour("proposes two intents, only the second requesting write scope report.publish", _scopes("", "report.publish")),
    )
}
