"""Chat transcripts for the public-boundary scanner (SPEC §2 INP, JNL-6, M13; RFC §7 excludes them).

A transcript shows itself by its turns, not by the case of its role names: ``User: …`` alone (the
capitalised or upper-case label a chat export writes), two or more turns by different roles in any case and
dress (``user: …`` then ``assistant: …``; ``### User:``, ``**user**:``, ``> user:``, ``[user] …``),
a chat template's markup (``<|im_start|>``, ``<|user|>``, ``<start_of_turn>``, ``[INST]``), or a
JSON message with a ``role``. One lower-case ``user: …`` line is a field label (``user: anonymous``),
not a turn.
"""

from __future__ import annotations

import re
from itertools import islice

__all__ = ["TRANSCRIPT_ROLES", "has_transcript"]

TRANSCRIPT_ROLES = frozenset({"user", "assistant", "system", "tool", "developer", "human"})

_ROLE_LINE = re.compile(r"^[ \t>]*(?:User|USER|Assistant|ASSISTANT|System|SYSTEM|Human|HUMAN|AI)[ \t]*:[ \t]*\S", re.MULTILINE)
_ROLES = r"user|assistant|system|human|ai|bot|model|agent|developer"
_TURN = re.compile(
    rf"^[ \t>#*\-]{{0,8}}(?:\[(?P<bracketed>{_ROLES})\][ \t]|\**(?P<labelled>{_ROLES})\**[ \t]*:)",
    re.MULTILINE | re.IGNORECASE,
)
_CHAT_MARKUP = re.compile(
    r"<\|im_start\|>|<\|im_end\|>|<\|(?:start|end)_header_id\|>|<\|eot_id\|>|<\|begin_of_text\|>"
    r"|<\|(?:user|assistant|system|end)\|>|<(?:start|end)_of_turn>|\[/?INST\]|<<SYS>>"
)
_ROLE_JSON = re.compile(r"\"role\"\s*:\s*\"(?:user|assistant|system|tool|developer)\"")
_MAX_TURNS = 64  # the first turns are enough to tell


def _turns_by_two_roles(text: str) -> bool:
    roles: set[str] = set()
    for match in islice(_TURN.finditer(text), _MAX_TURNS):
        roles.add((match.group("bracketed") or match.group("labelled")).lower())
        if len(roles) >= 2:
            return True
    return False


def has_transcript(text: str, colon: bool) -> bool:
    """True when ``text`` holds a chat transcript (see the module docstring); ``colon``: ``":" in text``."""
    if colon:
        if (
            "User" in text
            or "Assistant" in text
            or "System" in text
            or "Human" in text
            or "AI" in text
            or "USER" in text
            or "SYSTEM" in text
            or "ASSISTANT" in text
            or "HUMAN" in text
        ) and _ROLE_LINE.search(text):
            return True
        if '"role"' in text and _ROLE_JSON.search(text):
            return True
    if "\n" in text and (colon or "[" in text) and _turns_by_two_roles(text):
        return True
    return bool(("<|" in text or "INST]" in text or "<<SYS>>" in text or "_of_turn>" in text) and _CHAT_MARKUP.search(text))
