"""The report renderers the verbs write with, imported in this one place (``pwh gate`` writes a
verdict's reports, ``pwh report`` renders saved verdicts again), by their public names."""

from __future__ import annotations

from pwh._harness.report import cucumber_json, html_report, junit_xml, markdown_report, verdict_json, verdict_table
from pwh._harness.report.matrix import matrix, matrix_json, matrix_markdown, matrix_table
from pwh._harness.report.matrix_page import matrix_html

__all__ = [
    "cucumber_json",
    "html_report",
    "junit_xml",
    "markdown_report",
    "matrix",
    "matrix_html",
    "matrix_json",
    "matrix_markdown",
    "matrix_table",
    "verdict_json",
    "verdict_table",
]
