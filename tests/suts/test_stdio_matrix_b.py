"""The whole matrix against the reference served over the stdio protocol, the other part:
M01 to M12 (tests/suts/test_stdio_matrix_a.py says why two files, and runs the rest)."""

from __future__ import annotations

from pathlib import Path

from tests.suts.test_stdio_matrix_a import PART_B, assert_served_reference_passes


def test_the_served_reference_passes_m01_to_m12(tmp_path: Path) -> None:
    assert_served_reference_passes(PART_B, tmp_path)
