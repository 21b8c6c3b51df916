"""Leak campaign (M13): seeded Faker values planted in sources, projections, producer results and
exception messages, followed into the journal, the gate reports and the public packet; and the
scanner's false positives on the project's own public files.

Names cannot be recognised by shape, so the campaign declares every name it plants to the
scanners (dispatcher and packet), as a host declares its organisation's names with
``PWH_PRIVATE_NAMES``; every other kind (e-mail, URL, IP, path, key, token, host) must be found
by structure alone. A planted value *leaks* when it appears, in any case, in a journal record,
in a report rendered from a verdict carrying the runs' failure texts, or in a written packet;
the packet build must refuse (``PacketLeak``, nothing written) rather than publish one.
"""

from __future__ import annotations

import random
import shutil
import string
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pwh._core import codes
from pwh._core.boundary import BoundaryScanner
from pwh._harness.text_scan import scan_text
from pwh._reliability.packets import OPEN_KIND, intent, proposed, source
from pwh._reliability.rig import Rig, Tally, carries, failure_texts, rejection_ok, stable

HOOK = "a.campaign"
SOURCE_SITES = ("goal_id", "agent_id", "todo_id", "turn_instance_id", "receipt_id", "effect_id", "state_revision")
PROJECTION_SITES = ("fact_ref", "segment_ref")
RESULT_SITES = ("note_ref", "detail", "open_value", "open_key", "strict_key", "operation", "write_scope", "type_name")
EXCEPTION_SITES = ("message", "exception_type_name", "str_override")
CATEGORIES = {
    "leak_source": SOURCE_SITES,
    "leak_projection": PROJECTION_SITES,
    "leak_result": RESULT_SITES,
    "leak_exception": EXCEPTION_SITES,
}


@dataclass
class Planted:
    category: str
    site: str
    kind: str
    value: str
    refused: bool = False  # the dispatcher refused it with the right stable code
    in_journal: bool = False
    in_reports: bool = False


class PrivateValues:
    """Seeded Faker values of every kind the RFC forbids, plus the names to declare."""

    KINDS = (
        "name",
        "user_name",
        "email",
        "url",
        "ipv4",
        "ipv6",
        "file_path",
        "home_path",
        "hostname",
        "aws_key",
        "google_key",
        "openai_key",
        "github_token",
        "slack_token",
        "jwt",
        "bearer",
    )

    def __init__(self, seed: int) -> None:
        from faker import Faker  # a test/gate extra: imported only when the campaign runs

        self.fake = Faker()
        self.fake.seed_instance(seed)
        self.rnd = random.Random(seed)

    def _chars(self, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
        return "".join(self.rnd.choice(alphabet) for _ in range(n))

    def make(self, kind: str) -> str:
        f = self.fake
        return {
            "name": lambda: f.name(),
            "user_name": lambda: f.user_name() + self._chars(2, string.digits),
            "email": lambda: f.email(),
            "url": lambda: f.url() + f.uri_path(),
            "ipv4": lambda: f.ipv4_public() if self.rnd.random() < 0.5 else f.ipv4_private(),
            "ipv6": lambda: f.ipv6(),
            "file_path": lambda: f.file_path(depth=3, absolute=True),
            "home_path": lambda: f"/home/{f.user_name()}/{f.file_name()}",
            "hostname": lambda: f.domain_word() + "." + f.domain_name(),
            "aws_key": lambda: "AKIA" + self._chars(16, string.ascii_uppercase + string.digits),
            "google_key": lambda: "AIza" + self._chars(35),
            "openai_key": lambda: "sk-" + self._chars(20) + self._chars(4, string.digits) + self._chars(20),
            "github_token": lambda: "ghp_" + self._chars(36),
            "slack_token": lambda: "xoxb-" + self._chars(12, string.digits) + "-" + self._chars(24),
            "jwt": lambda: "eyJ" + self._chars(20) + ".eyJ" + self._chars(30) + "." + self._chars(20),
            "bearer": lambda: "Bearer " + self._chars(30) + self._chars(4, string.digits),
        }[kind]()


# --------------------------------------------------------------------------------------------
# Planting one value and dispatching
# --------------------------------------------------------------------------------------------


def _source_with(p: Planted, n: int) -> dict[str, Any]:
    src = source(n)
    if p.site == "fact_ref":
        src["event"]["fact_refs"] = [p.value]
    elif p.site == "segment_ref":
        src["event"]["segment_ref"] = p.value
    elif p.site == "effect_id":
        src["effect_id"] = src["plan_effect_id"] = p.value
    elif p.category == "leak_source":
        src[p.site] = p.value
    return src


def _produce(p: Planted) -> Callable[[Mapping[str, Any]], Any]:
    def produce(i: Mapping[str, Any]) -> Any:
        did, v = i["dispatch_id"], p.value
        if p.category == "leak_exception":
            if p.site == "message":
                raise RuntimeError(f"lookup failed for {v}")
            if p.site == "exception_type_name":
                raise type(v, (Exception,), {})("lookup failed")
            raise type("Loud", (Exception,), {"__str__": lambda self: v})()
        if p.category != "leak_result":
            return proposed(intent(did, {"note_ref": "n"}))
        if p.site == "note_ref":
            return proposed(intent(did, {"note_ref": v}))
        if p.site == "detail":
            return proposed(intent(did, {"note_ref": "n", "detail": f"see {v} for details"}))
        if p.site == "open_value":
            return proposed(intent(did, {"note": v}, kind=OPEN_KIND))
        if p.site == "open_key":
            return proposed(intent(did, {v: "x"}, kind=OPEN_KIND))
        if p.site == "strict_key":
            return proposed(intent(did, {"note_ref": "n", v: 1}))
        if p.site == "operation":
            return proposed(intent(did, operation=v))
        if p.site == "write_scope":
            return proposed(intent(did, requested_write_scope=[v]))
        item = intent(did, {"note": "x"}, kind=OPEN_KIND)
        item["payload"] = {"note": type(v, (), {})()}  # an object whose class is named after the value
        return proposed(item)

    return produce


def _expected(p: Planted) -> str:
    if p.category == "leak_exception":
        return codes.PRODUCER_FAILED
    if p.category == "leak_result":
        return codes.RESULT_CONTRACT_REJECTED
    return codes.INPUT_BOUNDARY_REJECTED  # or the whole dispatch refused (checked below)


def _dispatch_one(p: Planted, n: int, scanner: BoundaryScanner) -> list[str]:
    """Plant ``p``, dispatch, judge the outcome and the journal; the outcome's failure texts."""
    rig = Rig(scanner=scanner)
    try:
        rig.install(HOOK, _produce(p), intent_kinds=["campaign.follow_up", OPEN_KIND])
        calls = 0
        outcome = rig.dispatch(_source_with(p, n))
        calls = rig.calls.get(HOOK, 0)
        if not outcome.admitted:
            p.refused = p.category in ("leak_source", "leak_projection") and stable(outcome.code) and rejection_ok(outcome.rejection)
        else:
            hook = outcome.hook(HOOK)
            p.refused = hook.failure_code == _expected(p) and (hook.rejection is None or rejection_ok(hook.rejection))
            if p.category in ("leak_source", "leak_projection") and calls:
                p.refused = False  # the provider saw the private input
        p.in_journal = bool(carries(_dump(rig.journal.records()), [p.value]))
        return failure_texts(outcome)
    finally:
        rig.close()


def _dump(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------------------------
# Reports and the packet
# --------------------------------------------------------------------------------------------


def _scenario(i: int, label: str, seen: str) -> dict[str, Any]:
    return {
        "id": f"campaign/{i}",
        "tags": ["M13"],
        "feature": "features/campaign.feature",
        "line": i + 1,
        "scenario": f"leak campaign {label}",
        "params": "",
        "outcome": "failed",
        "expected": "a compact stable code",
        "seen": seen,
        "failed_step": "Then nothing private is kept",
    }


def _reports(scenarios: list[dict[str, Any]]) -> str:
    from pwh._harness.gate import GateRun
    from pwh._harness.report import cucumber_json, html_report, junit_xml, markdown_report, verdict_json, verdict_table

    verdict = GateRun("campaign", scenarios).verdict()
    return "\n".join(
        (
            verdict_table(verdict),
            verdict_json(verdict),
            junit_xml(verdict),
            cucumber_json(verdict),
            markdown_report(verdict),
            html_report(verdict),
        )
    )


def _packet(scenarios: list[dict[str, Any]], values: list[str], names: list[str], folder: Path, tally: Tally) -> None:
    """Build a packet from this verdict: refused (nothing written) or written without any value."""
    from pwh._harness.gate import GateRun
    from pwh._harness.packet import PacketError, PacketLeak
    from pwh._harness.packet.build import build_packet

    run = GateRun("campaign", scenarios)
    out = folder / "packet"
    tally.tried += len(values)
    try:
        build_packet(out, ["reference", "campaign"], gate=lambda sut, **_: run, private_names=names)
    except PacketLeak:
        if out.exists():
            tally.leaked += len(values)
            tally.note("a refused build left files behind")
        else:
            tally.isolated += len(values)
        return
    except PacketError as exc:
        tally.uncaught += len(values)
        tally.note(f"the packet could not be built: {type(exc).__name__}")
        return
    text = "\n".join(p.read_text("utf-8", "replace") for p in sorted(out.rglob("*")) if p.is_file())
    found = carries(text, values)
    tally.leaked += len(found)
    tally.isolated += len(values) - len(found)
    if found:
        tally.note(f"{len(found)} planted value(s) published in a packet")
    shutil.rmtree(out, ignore_errors=True)


def run_leaks(tallies: dict[str, Tally], *, values: int, batch: int, packets: bool, seed: int) -> None:
    """Plant ``values`` private values, ``batch`` at a time; each batch is rendered into the
    reports and (when ``packets``) built into two packets: one from the runs' failure texts,
    one from a careless adapter's raw texts (which must be refused)."""
    gen = PrivateValues(seed)
    rnd = random.Random(seed)
    sites = [(cat, site) for cat, names in CATEGORIES.items() for site in names]
    folder = Path(tempfile.mkdtemp(prefix="pwh-campaign-leaks-"))
    try:
        done = 0
        while done < values:
            size = min(batch, values - done)
            planted = []
            for k in range(size):
                category, site = sites[(done + k) % len(sites)]
                kind = PrivateValues.KINDS[rnd.randrange(len(PrivateValues.KINDS))]
                planted.append(Planted(category, site, kind, gen.make(kind)))
            _batch(planted, done, tallies, folder, packets)
            done += size
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _batch(planted: list[Planted], offset: int, tallies: dict[str, Tally], folder: Path, packets: bool) -> None:
    names = [p.value for p in planted if p.kind in ("name", "user_name")]
    scanner = BoundaryScanner(private_names=names)
    clean: list[Any] = []
    raw: list[Any] = []
    for i, p in enumerate(planted):
        try:
            texts = _dispatch_one(p, offset + i, scanner)
        except Exception as exc:
            tallies.setdefault(p.category, Tally()).uncaught += 1
            tallies[p.category].note(f"{p.site}/{p.kind}: {type(exc).__name__} escaped")
            texts = []
        label = f"{p.category} {p.site} {p.kind}"
        clean.append(_scenario(len(clean), label, "; ".join(texts) or "no failure"))
        raw.append(_scenario(len(raw), label, f"the provider said: lookup failed for {p.value}"))
    reports = _reports(clean)
    for p in planted:
        p.in_reports = bool(carries(reports, [p.value]))
        tally = tallies.setdefault(p.category, Tally())
        tally.tried += 1
        if p.in_journal or p.in_reports:
            tally.leaked += 1
            tally.note(f"{p.site}/{p.kind}: planted value in the {'journal' if p.in_journal else 'reports'}")
        elif p.refused:
            tally.isolated += 1
        else:
            tally.note(f"{p.site}/{p.kind}: not refused with the expected stable code")
    if packets:
        values = [p.value for p in planted]
        tally = tallies.setdefault("leak_packet", Tally())
        _packet(clean, values, names, folder, tally)
        _packet(raw, values, names, folder, tally)


# --------------------------------------------------------------------------------------------
# False positives on the project's own public files
# --------------------------------------------------------------------------------------------


def public_files() -> list[Path]:
    """``features/*.feature``, ``pwh/schemas/*.json``, ``pwh/vectors/identity.json``, README.md and
    ``docs/**/*.md``: what pwh publishes as prose and data, which its own scanner must pass."""
    from pwh._harness.gate import project_root

    root = project_root()
    pwh = Path(__file__).resolve().parent.parent
    files = sorted((root / "features").glob("*.feature")) + sorted((pwh / "schemas").glob("*.json"))
    files += [pwh / "vectors" / "identity.json", root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return [f for f in files if f.is_file()]


def run_false_positives(tallies: dict[str, Tally]) -> None:
    tally = tallies.setdefault("scanner_false_positives", Tally())
    scanner = BoundaryScanner()
    for path in public_files():
        tally.tried += 1
        try:
            found = scan_text(path.read_text("utf-8"), scanner)
        except Exception as exc:
            tally.uncaught += 1
            tally.note(f"{path.name}: {type(exc).__name__}")
            continue
        tally.false_positives += len(found)
        if found:
            tally.note(f"{path.name}: " + "; ".join(f"{f.path} {f.category}" for f in found))
        else:
            tally.isolated += 1
