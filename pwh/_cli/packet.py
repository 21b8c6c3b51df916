"""``pwh packet build|verify``: the messages and exit codes around
:func:`pwh._harness.packet.build.build_packet` and :func:`pwh._harness.packet.verify.verify_packet`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pwh._cli.exit_codes import ExitCode
from pwh._harness.gate_error import GateError
from pwh._harness.packet import PacketError, PacketLeak, verify_packet
from pwh._harness.paths import shown

__all__ = ["VERBS", "add_commands", "add_packet_commands"]

REFERENCE_SUTS = frozenset({"reference", "reference-memory"})  # pwh's own dispatcher: must pass to publish


def add_packet_commands(subparsers: argparse._SubParsersAction) -> None:
    """``pwh packet build DIR [--sut NAME ...] [--tar PATH]`` and ``pwh packet verify DIR``.

    Both read the private-name deny-list from ``PWH_PRIVATE_NAMES`` (comma-separated).
    build: 0 built; 1 a boundary finding stopped it (nothing written), or the packet was written
    but the reference itself did not pass (not fit to attach to the RFC); 2 it could not build.
    verify: 0 verified; 1 problems found, listed per file; 2 not a packet.
    """
    packet = subparsers.add_parser("packet", help="build or verify the public test packet")
    sub = packet.add_subparsers(title="packet commands")
    build = sub.add_parser(
        "build",
        help="run the gate and write the public test packet to DIR",
        epilog="exit codes: 0 written; 1 the boundary scan stopped it, or the reference did not pass; 2 it could not run",
    )
    build.add_argument("dir", metavar="DIR", help="the packet directory (created, or an earlier packet replaced)")
    build.add_argument(
        "--sut", action="append", metavar="NAME", help="a SUT whose results the packet publishes (repeatable; default: reference)"
    )
    build.add_argument("--tar", metavar="PATH", help="also write the packet as one reproducible .tar.gz")
    build.add_argument(
        "--verdict",
        action="append",
        metavar="PATH",
        help="a verdict already gated (pwh gate --json) to publish as it is, for the SUT it names: that SUT is not gated "
        "again (repeatable; it must be a whole run of these features by this pwh)",
    )
    build.set_defaults(handler=_build_command)
    verify = sub.add_parser(
        "verify",
        help="check a packet against its manifest, the boundary scan, its schemas and its own verdicts",
        epilog="exit codes: 0 verified (and, with --rerun, every rerun verdict the same as the published one); "
        "1 problems, listed per file, or a rerun that differs; 2 not a packet, or a rerun that could not run",
    )
    verify.add_argument("dir", metavar="DIR|PACKET.tar.gz", help="the packet directory, or the .tar.gz that build --tar wrote")
    verify.add_argument(
        "--rerun",
        action="store_true",
        help="once verified, run the gate again over the packet's own features and compare with each published verdict",
    )
    verify.add_argument(
        "--sut",
        action="append",
        metavar="NAME",
        help="with --rerun: gate this SUT, a built-in name or module:factory (repeatable; default: the packet's SUTs that are "
        "built into pwh; a packet never names code to run)",
    )
    verify.set_defaults(handler=_verify_command)


def _private_names() -> list[str]:
    return [n.strip() for n in os.environ.get("PWH_PRIVATE_NAMES", "").split(",") if n.strip()]


def _build_command(args: argparse.Namespace) -> ExitCode:
    # Loaded here, not at the top: `pwh packet verify` (what a consumer runs) never loads the gate.
    from pwh._cli.common import unwritable, unwritable_folder
    from pwh._harness.packet.build import build_packet, result_dir_name
    from pwh._harness.verdicts import load_verdict

    problem = unwritable_folder(Path(args.dir))  # before any verdict is read or any gate runs
    if problem is not None:
        print(f"pwh: error: {shown(args.dir)} {problem}", file=sys.stderr)
        return ExitCode.ERROR
    if args.tar and unwritable(Path(args.tar)):
        print(f"pwh: error: --tar {shown(args.tar)} {unwritable(Path(args.tar))}", file=sys.stderr)
        return ExitCode.ERROR
    saved: dict[str, dict[str, Any]] = {}
    for path in args.verdict or ():
        loaded = load_verdict(path)  # every file checked before any gate runs
        if loaded["sut"] in saved:
            raise GateError(f"two saved verdicts for SUT {loaded['sut']!r}: give one")
        saved[loaded["sut"]] = loaded
    suts = args.sut or ([] if saved else ["reference"])
    gated = [s for s in dict.fromkeys(suts) if s not in saved]
    if saved:
        print(f"pwh packet build: publishing the saved verdicts of {', '.join(saved)}", flush=True)
    if gated:
        print(f"pwh packet build: running the gate for {', '.join(gated)}", flush=True)
    try:
        result = build_packet(
            Path(args.dir),
            suts,
            tar_path=Path(args.tar) if args.tar else None,
            gate=_gate_in_sight("build"),
            private_names=_private_names(),
            saved=saved,
        )
    except PacketLeak as exc:
        print(f"pwh: {exc}", file=sys.stderr)
        return ExitCode.FAILED
    except (PacketError, GateError) as exc:
        print(f"pwh: error: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    for sut, verdict in result.verdicts.items():
        print(f"  {sut}: RFC {verdict.upper()}, profile {result.profiles.get(sut, '?').upper()}")
    where = f" and {shown(result.tar_path)}" if result.tar_path else ""
    print(f"pwh packet build: wrote {len(result.files)} files to {shown(result.out_dir)}{where}")
    # Other SUTs' failures are what the packet publishes (LoopX's divergences); the reference's
    # own failure means the matrix or the reference is broken, and the packet must not go out.
    unfit = [sut for sut, verdict in result.verdicts.items() if sut in REFERENCE_SUTS and verdict != "pass"]
    for sut in unfit:
        print(
            f"pwh: the {sut} verdict is {result.verdicts[sut].upper()}: this packet is not fit to attach to the RFC "
            f"(see results/{result_dir_name(sut)}/report.md)",
            file=sys.stderr,
        )
    return ExitCode.FAILED if unfit else ExitCode.OK


def _gate_in_sight(verb: str) -> Callable[..., Any]:
    """``run_gate`` with its per-scenario progress on and each SUT's time said: a packet gates one
    SUT after another for minutes, and the terminal shows where it is."""

    def gate_with_progress(sut: str, **options: Any) -> Any:
        from pwh._harness import gate  # looked up at each call (the tests replace run_gate)

        started = time.monotonic()
        run = gate.run_gate(sut, **{**options, "progress": True})
        print(f"pwh packet {verb}: {sut} gated in {time.monotonic() - started:.0f} s", flush=True)
        return run

    return gate_with_progress


def _verify_command(args: argparse.Namespace) -> ExitCode:
    if args.sut and not args.rerun:
        raise GateError("--sut applies to --rerun only: add --rerun, or drop --sut")
    print(f"pwh packet verify: {shown(args.dir)}: every file against its manifest, the boundary scan and its schemas", flush=True)
    report = verify_packet(Path(args.dir), private_names=_private_names())
    # The report is the command's output, found problems or not (the exit code says which); only
    # what is not a packet at all is an error line. A failed verification is also said on stderr.
    (sys.stderr if report.not_a_packet else sys.stdout).write(report.render())
    if not report.ok and not report.not_a_packet:
        print(f"pwh packet verify: the packet does not verify ({len(report.problems)} problem(s) above)", file=sys.stderr)
    if not args.rerun or not report.ok:
        if args.rerun:
            print("pwh packet verify: no rerun: a packet that does not verify is never run", file=sys.stderr)
        return ExitCode(report.exit_code)  # VerifyReport says 0 verified, 1 problems, 2 not a packet
    return _rerun(Path(args.dir), args.sut)


def _rerun(path: Path, suts: list[str] | None) -> ExitCode:
    # Loaded here: a plain verify never loads the gate.
    from pwh._harness.packet.rerun import packet_root, rerun_packet, shown_sut
    from pwh._harness.verdicts import comparison_lines

    with packet_root(path) as root:
        results = rerun_packet(root, suts, out=lambda line: print(line, flush=True), gate=_gate_in_sight("verify"))
    for result in results:
        print("\n".join(comparison_lines(result.comparison, f"published results for {shown_sut(result.sut)}", "the rerun")))
        for note in result.notes:
            print(f"  note: {note}")
    differing = [shown_sut(r.sut) for r in results if not r.same]
    if differing:
        print(f"pwh packet verify: the rerun differs from the published results for {', '.join(differing)}", file=sys.stderr)
        return ExitCode.FAILED
    print(f"pwh packet verify: rerun of {', '.join(shown_sut(r.sut) for r in results)}: every row and scenario as published")
    return ExitCode.OK


VERBS: dict[str, Callable[[argparse._SubParsersAction], None]] = {"packet": add_packet_commands}


def add_commands(sub: argparse._SubParsersAction) -> None:
    """``pwh packet build`` and ``pwh packet verify``."""
    add_packet_commands(sub)
