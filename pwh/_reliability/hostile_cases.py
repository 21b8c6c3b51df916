"""The hostile producers of the reliability campaign: every way a careless or malicious provider
can misbehave, each a :class:`Case` naming the stable code it must end with.

Groups: exceptions (``SystemExit``/``KeyboardInterrupt`` included), timeouts (hang, busy loop,
sleep in C, a late answer), values (huge, 10^5-deep, cyclic, NaN, non-string keys, surrogates,
generators, modules), objects with hostile dunders or metaclasses and proxies over them, input
mutation, network (tried under :func:`~pwh._harness.network_guard.refuse_outbound`), environment values
and files. The runner is :mod:`pwh._reliability.hostile`.
"""

from __future__ import annotations

import gc
import os
import random
import socket
import string
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pwh._core import codes
from pwh._core.canonical import to_plain
from pwh._reliability.packets import OPEN_KIND, intent, not_applicable, proposed
from pwh._reliability.rig import Rig, Tally

HOSTILE, WITNESS = "a.hostile", "z.witness"
MARK = "pwh-campaign-marker"  # the args of the campaign's own KeyboardInterrupt / SystemExit
SLOW_MS = 100  # the hostile hook's limit in the timeout cases
INPUT_UNCHANGED = "input_unchanged"  # expectation: any stable ending, but nobody else saw a change


@dataclass
class Ctx:
    """What the hostile cases share: planted markers, events that release abandoned threads, and
    a log of hostile-object method calls by thread."""

    seed: int
    markers: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)
    calls: list[tuple[str, int]] = field(default_factory=list)
    workdir: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    late: list[str] = field(default_factory=list)
    keep: list[Any] = field(default_factory=list)  # hostile objects kept alive, never touched
    threads: list[threading.Thread] = field(default_factory=list)  # joined at the end
    files: list[Any] = field(default_factory=list)  # closed at the end
    churn_stop: threading.Event = field(default_factory=threading.Event)  # ends one case's churning thread
    pending: list[tuple[Rig, str, Tally]] = field(default_factory=list)  # late answers to check

    def mark(self, value: str) -> str:
        self.markers.append(value)
        return value

    def called(self, name: str) -> None:
        self.calls.append((name, threading.get_ident()))


@dataclass(frozen=True)
class Case:
    name: str
    group: str
    make: Callable[[Ctx], Callable[[Mapping[str, Any]], Any]]
    expect: str
    timeout_ms: int = 2000


# --------------------------------------------------------------------------------------------
# Hostile objects: every hook a provider could hide code in, each logging the thread it ran on
# --------------------------------------------------------------------------------------------


def hostile_classes(ctx: Ctx) -> dict[str, type]:
    def trap(name: str, result: Any = None, boom: bool = True) -> Callable[..., Any]:
        def method(*args: Any, **kwargs: Any) -> Any:
            ctx.called(name)
            if boom:
                raise RuntimeError("hostile " + name)
            return result

        return method

    dunders = {
        "__eq__": trap("__eq__"),
        "__ne__": trap("__ne__"),
        "__hash__": trap("__hash__", 1, False),
        "__str__": trap("__str__"),
        "__repr__": trap("__repr__"),
        "__format__": trap("__format__"),
        "__len__": trap("__len__"),
        "__iter__": trap("__iter__"),
        "__bool__": trap("__bool__"),
        "__getattr__": trap("__getattr__"),
        "__index__": trap("__index__"),
        "__float__": trap("__float__"),
        "__int__": trap("__int__"),
        "__reduce_ex__": trap("__reduce_ex__"),
        "__lt__": trap("__lt__"),
        "__contains__": trap("__contains__"),
        "__getitem__": trap("__getitem__"),
        "keys": trap("keys"),
        "items": trap("items"),
        "values": trap("values"),
        "__deepcopy__": trap("__deepcopy__"),
    }

    class Meta(type):
        __eq__ = trap("meta.__eq__")
        __hash__ = trap("meta.__hash__", 1, False)
        __repr__ = trap("meta.__repr__")
        __instancecheck__ = trap("meta.__instancecheck__", False, False)
        __subclasscheck__ = trap("meta.__subclasscheck__", False, False)

        @property
        def __name__(cls) -> str:  # type: ignore[override]
            ctx.called("meta.__name__")
            raise RuntimeError("hostile type name")

    def claimed_class(self: Any) -> type:
        ctx.called("__class__")
        return dict

    def iterate(self: Any) -> Any:
        ctx.called("__iter__")
        return iter(["a"])

    liar = dict(dunders, __class__=property(claimed_class))
    return {
        "object": type("HostileObject", (), dict(dunders)),
        "class_liar": type("ClassLiar", (), liar),
        "str": type("HostileStr", (str,), dict(dunders)),
        "dict": type("HostileDict", (dict,), dict(dunders)),
        "list": type("HostileList", (list,), dict(dunders)),
        "tuple": type("HostileTuple", (tuple,), dict(dunders)),
        "int": type("HostileInt", (int,), dict(dunders)),
        "float": type("HostileFloat", (float,), dict(dunders)),
        "meta": Meta("HostileMeta", (), {}),
        "mapping": type(
            "HostileMapping",
            (),
            dict(
                dunders,
                __getitem__=trap("__getitem__", 1, False),
                keys=trap("keys", ["a"], False),
                __len__=trap("__len__", 1, False),
                __iter__=iterate,
            ),
        ),
    }


def _result_with(did: str, value: Any, *, where: str = "payload") -> dict[str, Any]:
    """A well-formed result with ``value`` put inside its one intent (payload value, key or root)."""
    if where == "root":
        return value
    item = intent(did, kind=OPEN_KIND, payload={"note": "x"}, hook_id=HOSTILE)
    if where == "payload":
        item["payload"] = {"note": value}
    elif where == "key":
        item["payload"] = {value: "x"}
    elif where == "intent":
        item["budget"] = value
    return proposed(item)


def hostile_registration() -> dict[str, Any]:
    """The hostile hook may propose both campaign kinds (the open one leaves only the scanner)."""
    return {"intent_kinds": [OPEN_KIND, "campaign.follow_up"]}


# --------------------------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------------------------


def _raise(exc: Callable[[Ctx], BaseException]) -> Callable[[Ctx], Callable[[Mapping[str, Any]], Any]]:
    def make(ctx: Ctx) -> Callable[[Mapping[str, Any]], Any]:
        def produce(hook_input: Mapping[str, Any]) -> Any:
            raise exc(ctx)

        return produce

    return make


def _returning(value: Callable[[Ctx, Mapping[str, Any]], Any]) -> Callable[[Ctx], Callable[[Mapping[str, Any]], Any]]:
    return lambda ctx: lambda hook_input: value(ctx, hook_input)


def _exception_cases() -> list[Case]:
    class HostileError(Exception):
        def __str__(self) -> str:
            raise RuntimeError("hostile __str__")

        __repr__ = __str__

    class LoudExit(SystemExit):
        pass

    class Sneaky(BaseException):
        pass

    def recurse(n: int) -> int:
        return recurse(n + 1) + 1

    def private_error(ctx: Ctx) -> BaseException:
        return RuntimeError(
            f"cannot open {ctx.mark('/home/' + _word(ctx) + '/.ssh/id_rsa')} for {ctx.mark(_word(ctx) + '@corp-' + _word(ctx) + '.com')}"
        )

    cases = [
        ("runtime_error_with_private_text", private_error),
        ("value_error", lambda ctx: ValueError("bad")),
        ("system_exit", lambda ctx: SystemExit(MARK)),
        ("system_exit_subclass", lambda ctx: LoudExit(MARK)),
        ("keyboard_interrupt", lambda ctx: KeyboardInterrupt(MARK)),
        ("generator_exit", lambda ctx: GeneratorExit()),
        ("base_exception_subclass", lambda ctx: Sneaky(ctx.mark("token=" + _word(ctx) + "9Zq"))),
        ("memory_error", lambda ctx: MemoryError()),
        ("stop_iteration", lambda ctx: StopIteration()),
        ("hostile_str_exception", lambda ctx: HostileError(ctx.mark("ghp_" + _word(ctx, 36)))),
        (
            "exception_with_traceback_text",
            lambda ctx: RuntimeError(ctx.mark('Traceback (most recent call last): File "/srv/' + _word(ctx) + '.py", line 3')),
        ),
    ]
    out = [Case(name, "hostile_exception", _raise(exc), codes.PRODUCER_FAILED) for name, exc in cases]
    out.append(Case("recursion_error", "hostile_exception", lambda ctx: lambda i: recurse(0), codes.PRODUCER_FAILED))
    return out


def _timeout_cases() -> list[Case]:
    def hang(ctx: Ctx) -> Callable[[Mapping[str, Any]], Any]:
        def produce(hook_input: Mapping[str, Any]) -> Any:
            ctx.release.wait(60)
            return not_applicable()

        return produce

    def stubborn(ctx: Ctx) -> Callable[[Mapping[str, Any]], Any]:
        def produce(hook_input: Mapping[str, Any]) -> Any:
            try:
                ctx.release.wait(60)
            except BaseException:  # swallow the stop signal and answer late anyway
                ctx.release.wait(60)
            ctx.late.append(hook_input["dispatch_id"])
            return proposed(intent(hook_input["dispatch_id"], hook_id=HOSTILE))

        return produce

    def busy(ctx: Ctx) -> Callable[[Mapping[str, Any]], Any]:
        def produce(hook_input: Mapping[str, Any]) -> Any:
            n = 0
            while not ctx.stop.is_set():
                n += 1
            return not_applicable()

        return produce

    def sleepy(ctx: Ctx) -> Callable[[Mapping[str, Any]], Any]:
        def produce(hook_input: Mapping[str, Any]) -> Any:
            time.sleep(SLOW_MS * 3 / 1000)
            return not_applicable()

        return produce

    return [
        Case(name, "hostile_timeout", make, codes.PRODUCER_TIMED_OUT, SLOW_MS)
        for name, make in (("hangs", hang), ("answers_late", stubborn), ("busy_loop", busy), ("sleeps_in_c", sleepy))
    ]


def _deep(n: int, dicts: bool = False) -> Any:
    value: Any = "leaf"
    for _ in range(n):
        value = {"d": value} if dicts else [value]
    return value


def _value_cases() -> list[Case]:
    def cyclic(ctx: Ctx, i: Mapping[str, Any]) -> Any:
        loop: list[Any] = []
        loop.append(loop)
        ctx.keep.append(loop)
        return _result_with(i["dispatch_id"], loop)

    def gen(ctx: Ctx, i: Mapping[str, Any]) -> Any:
        yield proposed()

    values: list[tuple[str, Callable[[Ctx, Mapping[str, Any]], Any]]] = [
        ("huge_list", lambda ctx, i: _result_with(i["dispatch_id"], [0] * 1_000_000)),
        ("huge_string", lambda ctx, i: _result_with(i["dispatch_id"], "x" * 10_000_000)),
        ("huge_dict", lambda ctx, i: _result_with(i["dispatch_id"], {f"k{n}": n for n in range(100_000)})),
        ("deep_lists_1e5", lambda ctx, i: _result_with(i["dispatch_id"], _deep(100_000))),
        ("deep_dicts_1e5", lambda ctx, i: _result_with(i["dispatch_id"], _deep(100_000, dicts=True))),
        ("deep_result_root", lambda ctx, i: _deep(100_000)),
        ("cycle", cyclic),
        ("nan", lambda ctx, i: _result_with(i["dispatch_id"], float("nan"))),
        ("infinity", lambda ctx, i: _result_with(i["dispatch_id"], float("inf"))),
        ("int_over_64_bits", lambda ctx, i: _result_with(i["dispatch_id"], 10**30)),
        ("int_key", lambda ctx, i: _result_with(i["dispatch_id"], {1: "a"})),
        ("none_key", lambda ctx, i: _result_with(i["dispatch_id"], {None: "a"})),
        ("tuple_key", lambda ctx, i: _result_with(i["dispatch_id"], {("a", "b"): 1})),
        ("bytes_key", lambda ctx, i: _result_with(i["dispatch_id"], {b"k": 1})),
        ("lone_surrogate", lambda ctx, i: _result_with(i["dispatch_id"], "x\ud800")),
        ("surrogate_key", lambda ctx, i: _result_with(i["dispatch_id"], "k\udc00", where="key")),
        ("generator_result", lambda ctx, i: (x for x in [proposed()])),
        ("generator_function_result", gen),
        ("iterator_result", lambda ctx, i: iter([proposed()])),
        ("map_result", lambda ctx, i: map(dict, [proposed()])),
        ("bytes_result", lambda ctx, i: b"{}"),
        ("set_value", lambda ctx, i: _result_with(i["dispatch_id"], {1, 2})),
        ("complex_value", lambda ctx, i: _result_with(i["dispatch_id"], 1j)),
        ("function_value", lambda ctx, i: _result_with(i["dispatch_id"], print)),
        ("module_result", lambda ctx, i: os),
        ("type_result", lambda ctx, i: dict),
        ("none_result", lambda ctx, i: None),
        ("ellipsis_result", lambda ctx, i: ...),
        ("the_input_itself", lambda ctx, i: i),
        ("private_type_name", lambda ctx, i: _result_with(i["dispatch_id"], type(ctx.mark("ghp_" + _word(ctx, 36)), (), {})())),
        (
            "email_type_name",
            lambda ctx, i: _result_with(i["dispatch_id"], type(ctx.mark(_word(ctx) + "@" + _word(ctx) + ".com"), (), {})()),
        ),
    ]
    return [Case(name, "hostile_value", _returning(make), codes.RESULT_CONTRACT_REJECTED) for name, make in values]


def _object_cases() -> list[Case]:
    def obj(kind: str, where: str) -> Callable[[Ctx, Mapping[str, Any]], Any]:
        def value(ctx: Ctx, i: Mapping[str, Any]) -> Any:
            cls = hostile_classes(ctx)[kind]
            instance = cls("x") if kind in ("str",) else (cls(1) if kind in ("int", "float") else cls())
            ctx.keep.append(instance)
            if where == "key" and kind in ("object", "class_liar", "str", "int", "float", "meta"):
                return _result_with(i["dispatch_id"], instance, where="key")
            return _result_with(i["dispatch_id"], instance, where=where)

        return value

    def proxy_over(kind: str) -> Callable[[Ctx, Mapping[str, Any]], Any]:
        def value(ctx: Ctx, i: Mapping[str, Any]) -> Any:
            inner = hostile_classes(ctx)[kind]()
            ctx.keep.append(inner)
            return MappingProxyType(inner)

        return value

    def mutated_while_read(ctx: Ctx, i: Mapping[str, Any]) -> Any:
        result = _result_with(i["dispatch_id"], None)
        payload = result["intents"][0]["payload"] = {f"k{n:02d}": n for n in range(100)}
        stop = ctx.churn_stop = threading.Event()

        def churn() -> None:
            n = 0
            while not stop.is_set() and not ctx.stop.is_set() and n < 200_000:
                key = f"k{n % 100:02d}"
                payload.pop(key, None)
                payload[key] = n
                result.pop("status", None)
                result["status"] = "proposed"
                n += 1

        worker = threading.Thread(target=churn, daemon=True)
        ctx.threads.append(worker)
        worker.start()
        time.sleep(0.001)
        return result

    cases = [
        Case(f"{kind}_{where}", "hostile_object", _returning(obj(kind, where)), codes.RESULT_CONTRACT_REJECTED)
        for kind in ("object", "class_liar", "str", "dict", "list", "tuple", "int", "float", "meta", "mapping")
        for where in ("payload", "key", "root")
    ]
    cases += [
        Case(f"proxy_over_{kind}", "hostile_object", _returning(proxy_over(kind)), codes.RESULT_CONTRACT_REJECTED)
        for kind in ("mapping", "dict", "object")
    ]
    cases.append(Case("result_mutated_while_read", "hostile_object", _returning(mutated_while_read), INPUT_UNCHANGED))
    return cases


def _mutation_cases() -> list[Case]:
    def assign(ctx: Ctx) -> Callable[[Mapping[str, Any]], Any]:
        def produce(i: Any) -> Any:
            i["source"]["goal_id"] = "changed"
            return not_applicable()

        return produce

    def through_gc(ctx: Ctx) -> Callable[[Mapping[str, Any]], Any]:
        def produce(i: Any) -> Any:
            for proxy in (i, i["source"], i.get("projection") or i):
                inner = gc.get_referents(proxy)[0]
                for key in list(inner):
                    inner[key] = "changed"
            return not_applicable()

        return produce

    def delete(ctx: Ctx) -> Callable[[Mapping[str, Any]], Any]:
        def produce(i: Any) -> Any:
            del i["source"]
            return not_applicable()

        return produce

    def setattr_(ctx: Ctx) -> Callable[[Mapping[str, Any]], Any]:
        def produce(i: Any) -> Any:
            object.__setattr__(i, "x", 1)
            return not_applicable()

        return produce

    def keep_and_change_later(ctx: Ctx) -> Callable[[Mapping[str, Any]], Any]:
        def produce(i: Any) -> Any:
            def later() -> None:
                ctx.release.wait(60)
                try:
                    gc.get_referents(i["source"])[0]["goal_id"] = "changed_later"
                except Exception:
                    pass

            worker = threading.Thread(target=later, daemon=True)
            ctx.threads.append(worker)
            worker.start()
            return not_applicable()

        return produce

    def tuple_append(ctx: Ctx) -> Callable[[Mapping[str, Any]], Any]:
        def produce(i: Any) -> Any:
            i["projection"]["fact_refs"].append("x")
            return not_applicable()

        return produce

    return [
        Case("item_assignment", "hostile_mutation", assign, codes.PRODUCER_FAILED),
        Case("item_deletion", "hostile_mutation", delete, codes.PRODUCER_FAILED),
        Case("attribute_set", "hostile_mutation", setattr_, codes.PRODUCER_FAILED),
        Case("list_append", "hostile_mutation", tuple_append, codes.PRODUCER_FAILED),
        Case("through_gc_referents", "hostile_mutation", through_gc, INPUT_UNCHANGED),
        Case("kept_and_changed_later", "hostile_mutation", keep_and_change_later, INPUT_UNCHANGED),
        Case(
            "returns_changed_input",
            "hostile_mutation",
            _returning(lambda ctx, i: {**to_plain(i), "status": "proposed"}),
            codes.RESULT_CONTRACT_REJECTED,
        ),
    ]


def _network_cases() -> list[Case]:
    def attempt(action: Callable[[], Any]) -> Callable[[Ctx], Callable[[Mapping[str, Any]], Any]]:
        def make(ctx: Ctx) -> Callable[[Mapping[str, Any]], Any]:
            def produce(i: Mapping[str, Any]) -> Any:
                action()
                return not_applicable()

            return produce

        return make

    def tcp() -> None:
        with socket.create_connection(("203.0.113.7", 443), timeout=0.2):
            pass

    def raw_connect() -> None:
        with socket.socket() as s:
            s.settimeout(0.2)
            s.connect(("198.51.100.1", 80))

    def connect_ex() -> None:
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("198.51.100.2", 80)) == 0:
                return

    def udp() -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"x", ("192.0.2.1", 53))

    def dns() -> None:
        socket.getaddrinfo("telemetry.example-vendor.com", 443)

    def http() -> None:
        import urllib.request

        urllib.request.urlopen("http://api.example-vendor.com/collect", timeout=0.2)

    def ipv6() -> None:
        with socket.socket(socket.AF_INET6) as s:
            s.settimeout(0.2)
            s.connect(("2001:db8::1", 443))

    return [
        Case(name, "hostile_network", attempt(action), codes.PRODUCER_FAILED)
        for name, action in (
            ("tcp_create_connection", tcp),
            ("socket_connect", raw_connect),
            ("socket_connect_ex", connect_ex),
            ("udp_sendto", udp),
            ("dns_lookup", dns),
            ("http_urlopen", http),
            ("ipv6_connect", ipv6),
        )
    ]


def _environment_cases() -> list[Case]:
    def env(key: str, where: str) -> Callable[[Ctx, Mapping[str, Any]], Any]:
        def value(ctx: Ctx, i: Mapping[str, Any]) -> Any:
            text = os.environ.get(key, "")
            if where == "assignment":
                text = f"{key}={text}"
            if where == "note_ref":
                return proposed(intent(i["dispatch_id"], {"note_ref": text}, hook_id=HOSTILE))
            if where == "detail":
                return proposed(intent(i["dispatch_id"], {"note_ref": "n", "detail": text}, hook_id=HOSTILE))
            return _result_with(i["dispatch_id"], text, where="key" if where == "key" else "payload")

        return value

    cases = [
        Case(f"{key.lower()}_{where}", "hostile_environment", _returning(env(key, where)), codes.RESULT_CONTRACT_REJECTED)
        for key in ("PWH_CAMPAIGN_API_KEY", "PWH_CAMPAIGN_DSN", "PWH_CAMPAIGN_HOME", "HOME", "PATH")
        for where in ("detail", "note_ref", "open_value", "key", "assignment")
    ]
    cases += [
        Case(
            "whole_environment_as_payload",
            "hostile_environment",
            _returning(lambda ctx, i: _result_with(i["dispatch_id"], dict(os.environ), where="intent")),
            codes.RESULT_CONTRACT_REJECTED,
        ),
        Case(
            "environ_object",
            "hostile_environment",
            _returning(lambda ctx, i: _result_with(i["dispatch_id"], os.environ)),
            codes.RESULT_CONTRACT_REJECTED,
        ),
    ]
    return cases


def _file_cases() -> list[Case]:
    def path_of(ctx: Ctx) -> Path:
        assert ctx.workdir is not None
        return ctx.workdir / "private-notes.txt"

    def detail(text: Callable[[Ctx], str]) -> Callable[[Ctx, Mapping[str, Any]], Any]:
        return lambda ctx, i: proposed(intent(i["dispatch_id"], {"note_ref": "n", "detail": text(ctx)[:500]}, hook_id=HOSTILE))

    def open_file(ctx: Ctx, i: Mapping[str, Any]) -> Any:
        handle = open(path_of(ctx), "rb")
        ctx.files.append(handle)
        return _result_with(i["dispatch_id"], handle)

    def passwd(ctx: Ctx) -> str:
        try:
            return Path("/etc/passwd").read_text("utf-8", "replace").splitlines()[0]
        except (OSError, IndexError):
            return "root:x:0:0:root:/root:/bin/sh"

    return [
        Case("absolute_path_in_detail", "hostile_file", _returning(detail(lambda ctx: str(path_of(ctx)))), codes.RESULT_CONTRACT_REJECTED),
        Case(
            "file_content_in_detail",
            "hostile_file",
            _returning(detail(lambda ctx: path_of(ctx).read_text("utf-8"))),
            codes.RESULT_CONTRACT_REJECTED,
        ),
        Case(
            "file_content_open_payload",
            "hostile_file",
            _returning(lambda ctx, i: _result_with(i["dispatch_id"], path_of(ctx).read_text("utf-8"))),
            codes.RESULT_CONTRACT_REJECTED,
        ),
        Case("etc_passwd_line", "hostile_file", _returning(detail(passwd)), codes.RESULT_CONTRACT_REJECTED),
        Case("cwd_in_detail", "hostile_file", _returning(detail(lambda ctx: os.getcwd())), codes.RESULT_CONTRACT_REJECTED),
        Case(
            "path_object",
            "hostile_file",
            _returning(lambda ctx, i: _result_with(i["dispatch_id"], path_of(ctx))),
            codes.RESULT_CONTRACT_REJECTED,
        ),
        Case("open_file_object", "hostile_file", _returning(open_file), codes.RESULT_CONTRACT_REJECTED),
        Case(
            "file_bytes",
            "hostile_file",
            _returning(lambda ctx, i: _result_with(i["dispatch_id"], path_of(ctx).read_bytes())),
            codes.RESULT_CONTRACT_REJECTED,
        ),
        Case(
            "directory_listing_as_keys",
            "hostile_file",
            _returning(
                lambda ctx, i: _result_with(i["dispatch_id"], {str(p): 1 for p in (ctx.workdir or Path(".")).iterdir()}, where="intent")
            ),
            codes.RESULT_CONTRACT_REJECTED,
        ),
        Case(
            "unreadable_file", "hostile_file", lambda ctx: lambda i: Path("/nonexistent/" + _word(ctx)).read_text(), codes.PRODUCER_FAILED
        ),
    ]


def all_cases() -> list[Case]:
    return (
        _exception_cases()
        + _timeout_cases()
        + _value_cases()
        + _object_cases()
        + _mutation_cases()
        + _network_cases()
        + _environment_cases()
        + _file_cases()
    )


def _word(ctx: Ctx, n: int = 8) -> str:
    rnd = random.Random(f"{ctx.seed}:{len(ctx.markers)}:{n}")
    return "".join(rnd.choice(string.ascii_lowercase) for _ in range(n))
