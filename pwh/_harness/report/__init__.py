"""Everything a gate run is shown as: the terminal verdict table, JUnit XML and Cucumber JSON for
CI dashboards, and a Markdown or single-file HTML report to attach to the RFC; and, for several
verdicts, one row × SUT matrix (:mod:`pwh._harness.report.matrix`).

Every renderer takes the saved verdict alone (the dict ``pwh gate --json`` writes, described by
``pwh/schemas/gate_verdict.json``), so ``pwh report`` renders a saved verdict to the same bytes the
gate wrote. All of it is deterministic: no times, no absolute paths, no host names, sorted where
order is not meaningful. One module per format:

- :mod:`~pwh._harness.report.text`: the terminal table and the verdict as JSON;
- :mod:`~pwh._harness.report.junit`: JUnit XML;
- :mod:`~pwh._harness.report.markdown`: the Markdown report;
- :mod:`~pwh._harness.report.html`: the HTML page (its stylesheet is ``report.css``);
- :mod:`~pwh._harness.report.cucumber`: Cucumber JSON;
- :mod:`~pwh._harness.report.matrix`: several verdicts as one row × SUT matrix (terminal, JSON,
  Markdown), the rows and scenarios that differ first; its HTML page
  (:mod:`~pwh._harness.report.matrix_page`) embeds each verdict's failure cards
  (:mod:`~pwh._harness.report.matrix_cards`) and is also the packet's ``index.html``;
- :mod:`~pwh._harness.report._common`: what they share (status words, what a verdict covers).
"""

from __future__ import annotations

from pwh._harness.report._common import (
    PARTIAL_TAIL,
    STATUS_MARK,
    VERDICT_WORD,
    covers_facts,
    covers_lines,
    summary_lines,
    turn_judged_rows,
)
from pwh._harness.report.cucumber import cucumber_json
from pwh._harness.report.html import RULE_ORDER, html_report
from pwh._harness.report.junit import escape, junit_xml, quoteattr
from pwh._harness.report.markdown import markdown_report
from pwh._harness.report.text import detail_lines, verdict_json, verdict_table

__all__ = [
    "PARTIAL_TAIL",
    "RULE_ORDER",
    "STATUS_MARK",
    "VERDICT_WORD",
    "covers_facts",
    "covers_lines",
    "cucumber_json",
    "detail_lines",
    "escape",
    "html_report",
    "junit_xml",
    "markdown_report",
    "quoteattr",
    "summary_lines",
    "turn_judged_rows",
    "verdict_json",
    "verdict_table",
]
