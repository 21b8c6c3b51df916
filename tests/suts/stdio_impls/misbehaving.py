"""A stand-in implementation behind the stdio protocol that breaks it in one way, chosen by its
one argument: ``handshake`` (a start answer missing its fields), ``outcome`` (a dispatch answer
whose ``admitted`` is a string), ``silent`` (it exits without answering the first dispatch),
``opened`` (an open answer without its instance), ``leaky`` (it calls a provider installed on
another instance than the one whose request is open), ``lingering`` (it keeps the protocol, but
does not exit when its stdin ends), ``commit`` (it offers a writeback boundary whose commits
answer without ``committed``), ``turn`` (it offers a turn seam whose verdict's ``accepted`` is a
string)."""

import json
import sys
import time

MODE = sys.argv[1]
PROTOCOL = "pwh-seam-stdio/2"


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


instances: dict[int, list[dict[str, str]]] = {}
tokens = []  # every provider installed, on any instance
pending = None  # a dispatch whose provider call is out
for line in sys.stdin:
    request = json.loads(line)
    if "reply" in request:
        if pending is not None:  # a harness that answered the call gets its answer
            send({"id": pending, "ok": {"receipt_id": "r", "event_kind": "todo_completed", "admitted": True}})
            pending = None
        continue
    ident, op = request["id"], request["op"]
    if op == "start":
        if MODE == "handshake":
            send({"id": ident, "ok": {"protocol": PROTOCOL, "name": "misbehaving"}})
        else:
            send(
                {
                    "id": ident,
                    "ok": {
                        "protocol": PROTOCOL,
                        "name": "misbehaving",
                        "version": "0",
                        "language": "python",
                        "operations": ["install", "dispatch", "journal_records", "close"]
                        + (["writeback_open"] if MODE == "commit" else [])
                        + (["turn_open"] if MODE == "turn" else []),
                        "crash_points": [],
                        "faults": [],
                    },
                }
            )
    elif op == "open":
        instances[len(instances) + 1] = []
        send({"id": ident, "ok": {} if MODE == "opened" else {"instance": len(instances)}})
    elif op in ("register_intent_kind", "install"):
        if op == "install" and request["provider"]:
            tokens.append(request["provider"])
        send({"id": ident, "ok": []})
    elif op == "dispatch":
        if MODE == "silent":
            sys.exit(0)
        if MODE == "leaky" and tokens:
            send({"call": 1, "hook": tokens[0], "input": {}})
            pending = ident
            continue
        source = request["source"]
        instances[request["instance"]].append({"receipt_id": source["receipt_id"]})
        admitted = "yes" if MODE == "outcome" else True
        send({"id": ident, "ok": {"receipt_id": source["receipt_id"], "event_kind": "todo_completed", "admitted": admitted}})
    elif op == "turn_open":
        send({"id": ident, "ok": {"turn": 1, "name": "misbehaving", "operations": ["accept_host_output"]}})
    elif op == "turn_accept_host_output":
        send({"id": ident, "ok": {"accepted": "yes", "event_kind": "todo_completed"}})
    elif op == "writeback_open":
        send({"id": ident, "ok": {"writeback": 1, "operations": ["prepare", "install", "commit_completion", "commit_replan"]}})
    elif op in ("writeback_register_intent_kind", "writeback_install"):
        send({"id": ident, "ok": []})
    elif op in ("writeback_commit_completion", "writeback_commit_replan"):
        send({"id": ident, "ok": {"receipt_id": "r", "event_kind": "todo_completed"}})  # no committed
    elif op in ("set_profile", "restart", "writeback_prepare", "writeback_plant", "writeback_close"):
        send({"id": ident, "ok": None})
    elif op == "journal_records":
        send({"id": ident, "ok": instances[request["instance"]]})
    elif op == "close":
        instances.pop(request["instance"], None)
        send({"id": ident, "ok": None})
    else:
        send({"id": ident, "unsupported": "not offered by this stand-in"})
if MODE == "lingering":
    time.sleep(120)
