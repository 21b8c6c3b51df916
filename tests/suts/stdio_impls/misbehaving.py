"""A stand-in implementation behind the stdio protocol that breaks it in one way, chosen by its
one argument: ``handshake`` (a start answer missing its fields), ``outcome`` (a dispatch answer
whose ``admitted`` is a string), ``silent`` (it exits without answering the first dispatch)."""

import json
import sys

MODE = sys.argv[1]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    ident, op = request["id"], request["op"]
    if op == "start":
        if MODE == "handshake":
            send({"id": ident, "ok": {"protocol": "pwh-seam-stdio/1", "name": "misbehaving"}})
        else:
            send(
                {
                    "id": ident,
                    "ok": {
                        "protocol": "pwh-seam-stdio/1",
                        "name": "misbehaving",
                        "version": "0",
                        "language": "python",
                        "operations": ["install", "dispatch", "journal_records", "close"],
                        "crash_points": [],
                        "faults": [],
                    },
                }
            )
    elif op in ("register_intent_kind", "install"):
        send({"id": ident, "ok": []})
    elif op == "dispatch":
        if MODE == "silent":
            sys.exit(0)
        send({"id": ident, "ok": {"receipt_id": "r", "event_kind": "todo_completed", "admitted": "yes"}})
    elif op in ("set_profile", "restart"):
        send({"id": ident, "ok": None})
    elif op == "journal_records":
        send({"id": ident, "ok": []})
    elif op == "close":
        send({"id": ident, "ok": None})
        break
    else:
        send({"id": ident, "unsupported": "not offered by this stand-in"})
