"""The public-boundary scan of a text file, line by line (rule M13).

The dispatcher scans values (:meth:`pwh._core.boundary.BoundaryScanner.scan_value`); a file's text is
scanned only by the harness: the packet's files when it is built and verified, and the
reliability campaigns' outputs. Each line is judged on its own by the scanner's rules, and a
finding names ``line N`` (1-based), never the text.
"""

from __future__ import annotations

from pwh._core.boundary.scanner import _DEFAULT, BoundaryScanner, Finding

__all__ = ["scan_text"]


def scan_text(text: str, scanner: BoundaryScanner | None = None) -> list[Finding]:
    """The findings of ``scanner`` (default: no private names, no allow-list) in ``text``, by line.
    Anything that is not a string, or a scanner that fails, reads as ``unscannable`` at ``line 0``:
    not proven clean, never a crash."""
    if not issubclass(type(text), str):
        return [Finding("unscannable", "line 0")]
    rules = scanner or _DEFAULT
    found: set[tuple[str, str]] = set()
    seen: dict[str, tuple[str, ...]] = {}  # a line repeated in this text is judged once (reports repeat many)
    try:
        for number, line in enumerate(str.__str__(text).split("\n"), start=1):
            line = line.rstrip("\r")
            if line and not line.isspace():
                categories = seen.get(line)
                if categories is None:
                    categories = seen[line] = rules.text_categories(line)
                for category in categories:
                    found.add((f"line {number}", category))
    except Exception:
        found.add(("line 0", "unscannable"))
    return [Finding(category, path) for path, category in sorted(found)]
