"""The failure cards of each verdict, embedded in the matrix page (``pwh report A.json B.json ...
--html``, and the packet's ``index.html``), so that every cell of the matrix links to a card on
the same page: one self-contained file, no sibling report needed.

The cards are exactly the single report's (:func:`pwh._harness.report.html.html_report`'s failures,
divergences and skips, rendered by the same code), each verdict's in a section of its own. The
single report's anchors (``f-N`` for a card, ``sc-N`` for a scenario in it, N its index in the
verdict's ``scenarios``) are made unique on the page by the column's prefix (``c2-sc-17``:
scenario 17 of the second column's verdict). A link inside a card to another anchor of
the same card set is given the same prefix; a link to a row (``#m03``, the single report's passing
list, not on this page) goes to the matrix's row instead; any other in-page link is dropped.

Rewriting the anchors on the rendered HTML is safe: every value taken from a verdict is escaped
there (``"`` as ``&quot;``), so `` id="`` and `` href="#`` occur only as the attributes html.py
writes. Control characters are shown escaped as everywhere on the matrix page (newlines kept).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pwh._harness.report.html import _HtmlPage, _scenario_kind
from pwh._harness.safe_text import for_terminal

__all__ = ["CARD_KINDS", "Cards", "column_anchor", "column_cards", "row_targets"]

_ID = re.compile(r' id="([^"]*)"')
_HREF = re.compile(r' href="#([^"]*)"')
CARD_KINDS = ("fail", "self-fail", "divergence", "skip")  # the statuses with a card, most severe first


def column_anchor(k: int) -> str:
    """The anchor of column ``k``'s (0-based) cards section; every anchor in it starts with it and ``-``."""
    return f"c{k + 1}"


@dataclass(frozen=True)
class Cards:
    """One verdict's cards as a page section, and every anchor the section holds."""

    html: str
    ids: frozenset[str]

    def scenario(self, k: int, index: int) -> str | None:
        """The anchor of scenario ``index`` of column ``k``'s verdict, when it has a card here."""
        anchor = f"{column_anchor(k)}-sc-{index}"
        return anchor if anchor in self.ids else None


def column_cards(k: int, verdict: dict[str, Any], heading: str, rows: Mapping[str, str], features_href: str | None) -> Cards:
    """Column ``k``'s failure cards (RFC failures, testbed self-check failures, divergences, skips)
    as ``<section id="cK">`` headed by ``heading`` (HTML, already escaped); ``rows``: the single
    report's row anchor (``m03``) → the matrix row's anchor."""
    page = _HtmlPage(verdict, features_href)
    text = "\n".join([*page.failures(), *page.skips()])
    own = set(_ID.findall(text))
    prefix = column_anchor(k) + "-"

    def link(m: re.Match[str]) -> str:
        target = m.group(1)
        if target in own:
            return f' href="#{prefix}{target}"'
        return f' href="#{rows[target]}"' if target in rows else ""

    text = _HREF.sub(link, _ID.sub(lambda m: f' id="{prefix}{m.group(1)}"', text))
    section = f'<section class="cards" id="{column_anchor(k)}"><h2>{heading}</h2>\n{for_terminal(text, lines=True)}\n</section>'
    return Cards(section, frozenset({column_anchor(k), *(prefix + i for i in own)}))


def row_targets(k: int, verdict: dict[str, Any], cards: Cards) -> dict[str, str]:
    """Where each row's cell in column ``k`` links: the card of the row's first scenario of its
    most severe status (an RFC failure before a self-check failure, a divergence, a skip), or the
    card of a row that failed without any scenario; a row without a card (it passed) is absent."""
    first: dict[tuple[str, str], int] = {}
    for i, x in enumerate(verdict.get("scenarios") or []):
        kind = _scenario_kind(x)[0]
        for row in x.get("tags") or []:
            first.setdefault((str(row), kind), i)
    out: dict[str, str] = {}
    for row in verdict.get("rows") or {}:
        found = [cards.scenario(k, first[(row, kind)]) for kind in CARD_KINDS if (row, kind) in first]
        empty = f"{column_anchor(k)}-f-{row.lower()}"
        target = next((a for a in found if a is not None), empty if empty in cards.ids else None)
        if target is not None:
            out[row] = target
    return out
