"""The whole matrix against the reference served over the stdio protocol, the other part:
M01 to M12 (tests/suts/test_stdio_matrix_a.py says why two files, and runs the rest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.suts.test_stdio_matrix_a import PART_B, assert_served_reference_passes

# `extended` (CI runs it after the test command): the served reference's whole matrix over the stdio protocol; tests/suts/test_stdio_seam.py runs the protocol on the writeback and seed-003 rows in the test command.
pytestmark = pytest.mark.extended


def test_the_served_reference_passes_m01_to_m12(tmp_path: Path) -> None:
    assert_served_reference_passes(PART_B, tmp_path)
