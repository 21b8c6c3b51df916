"""``pwh report A.json B.json ...``: several saved verdicts as one row × implementation table.

It lives in :mod:`pwh._harness.report.matrix`, beside the other report formats; this module keeps
its old import path working."""

from __future__ import annotations

from pwh._harness.report.matrix import (
    MATRIX_SCHEMA_VERSION,
    column_changes,
    matrix,
    matrix_html,
    matrix_json,
    matrix_markdown,
    matrix_table,
    release_order,
)

__all__ = [
    "MATRIX_SCHEMA_VERSION",
    "column_changes",
    "matrix",
    "matrix_html",
    "matrix_json",
    "matrix_markdown",
    "matrix_table",
    "release_order",
]
