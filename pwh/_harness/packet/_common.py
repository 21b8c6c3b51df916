"""What the packet's builder, verifier and commands share: the manifest's name and schema version,
the exit codes, the error types, the canonical JSON bytes and the paths as a user may see them.

Its own module so that :mod:`.verify` can use them without importing :mod:`.build` (and, through
it, the gate): checking a published packet needs none of what makes one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from string import Template
from typing import Any

from pwh._core.boundary import BoundaryScanner

MANIFEST = "manifest.json"
FRONT_PAGE = "index.html"  # every published verdict as one matrix page (front_page)
MANIFEST_SCHEMA_VERSION = "pwh_packet_manifest_v0"
EXIT_VERIFIED, EXIT_PROBLEMS, EXIT_NOT_A_PACKET = 0, 1, 2
WITHHELD = "<withheld>"

Problem = tuple[str, str, str]  # (file, kind, detail)


class PacketError(Exception):
    """The packet could not be built, or the directory is not a packet (exit 2)."""


class PacketLeak(PacketError):
    """A file would carry private data across the public boundary; nothing was written.

    ``findings`` holds (file, "line N", category) triples; the message names them, never the value.
    """

    def __init__(self, findings: Sequence[tuple[str, str, str]]) -> None:
        self.findings = tuple(findings)
        self.file, self.line, self.category = self.findings[0]
        shown = "; ".join(f"{f} {line}: {cat}" for f, line, cat in self.findings[:10])
        more = f" (and {len(self.findings) - 10} more)" if len(self.findings) > 10 else ""
        super().__init__(f"the packet would leak private data — {shown}{more}; nothing was written")


def json_bytes(value: Any) -> bytes:
    """The packet's one JSON form (sorted keys, 2-space indent, final newline): what a build writes
    and what verify requires of the manifest."""
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def shown_rel(rel: str, scanner: BoundaryScanner) -> str:
    """``rel`` with every segment the scanner flags (or that is not a plain name) withheld."""
    return "/".join(
        seg if re.fullmatch(r"[A-Za-z0-9._-]{1,100}", seg) and not scanner.scan_value(seg) else WITHHELD for seg in rel.split("/")
    )


def result_dir_name(sut: str) -> str:
    """A filesystem-safe directory name for a SUT spec (``a.b:factory`` -> ``a.b-factory``): the
    one directory a verdict naming that SUT may be published in."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", sut).strip(".-")[:100] or "sut"


def consumer_readme(
    dirs: Mapping[str, str], verdicts: Mapping[str, str], profiles: Mapping[str, str] | None = None, version: str | None = None
) -> str:
    """The packet's own README: what it is and how to judge another implementation with it. Built
    from the verdicts alone (and the pwh ``version`` that built the packet), so verify renders it
    again and compares: the verdict table lists the reference first, then the others by directory.

    The text is ``consumer_readme.md.tmpl`` (package data), a :class:`string.Template` with
    ``$version``, ``$rows`` (the verdict table's rows) and ``$baseline`` (the results directory
    to compare with); a literal dollar sign there is written ``$$``.
    """
    from pwh._harness.safe_text import for_markdown_code
    from pwh._version import __version__

    profiles = profiles or {}
    order = sorted(dirs, key=lambda sut: (dirs[sut] != "reference", dirs[sut]))
    rows = "\n".join(
        f"| `{for_markdown_code(sut)}` | `results/{dirs[sut]}/` | {verdicts[sut].upper()} | {profiles.get(sut, '?').upper()} |"
        for sut in order
    )
    baseline = "reference" if "reference" in dirs.values() else dirs[order[0]]
    text = resources.files("pwh._harness.packet").joinpath("consumer_readme.md.tmpl").read_text(encoding="utf-8")
    return Template(text).substitute(version=version or __version__, rows=rows, baseline=baseline)


def front_page(verdicts: Mapping[str, Mapping[str, Any]]) -> str:
    """The packet's front page, ``index.html``: every published verdict (by its results directory
    name) as one row × SUT matrix page (:func:`pwh._harness.report.matrix_page.matrix_html`), the
    reference first, then the others by directory, as the README's table; each failing, differing
    or skipped cell links to its card on the page, each column to its ``results/<sut>/report.html``
    and each ``feature:line`` to the packet's ``features/``. Built from the verdicts alone, so verify
    renders it again and compares."""
    from pwh._harness.report.matrix import matrix
    from pwh._harness.report.matrix_page import matrix_html

    order = sorted(verdicts, key=lambda name: (name != "reference", name))
    labels = {name: f"results/{name}/verdict.json" for name in order}
    data = matrix([(labels[name], dict(verdicts[name])) for name in order])
    reports = {labels[name]: f"results/{name}/report.html" for name in order}
    return matrix_html(data, features_href="features/", report_hrefs=reports)
