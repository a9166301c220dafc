"""The Block Kit blocks a page is made of, as the plain dicts chat.postMessage takes (pure).

Plain dicts, not slack-sdk's block objects: a page is built two or three times while it is
fitted to Slack's limits, and `to_dict()` validates and walks every attribute each time.
Keys are in the order slack-sdk writes them (sorted), so the JSON is the same either way.
The limits are enforced by the callers (enricher.slack.render), sections also here.
"""

from __future__ import annotations

from typing import Any

from enricher.slack.text import cut

__all__ = [
    "CONTEXT_MAX_ELEMENTS",
    "HEADER_MAX",
    "SECTION_MAX",
    "Block",
    "context",
    "header",
    "section",
]

SECTION_MAX = 3000
HEADER_MAX = 150
CONTEXT_MAX_ELEMENTS = 10

Block = dict[str, Any]


def _mrkdwn(text: str) -> Block:
    return {"text": text, "type": "mrkdwn"}


def header(text: str) -> Block:
    """A header of `text`, already cut to HEADER_MAX as plain text (`truncate_plain`)."""
    return {"text": {"emoji": True, "text": text, "type": "plain_text"}, "type": "header"}


def section(text: str) -> Block:
    """A mrkdwn section, cut (entity- and link-safe) to SECTION_MAX."""
    return {"text": _mrkdwn(cut(text, SECTION_MAX)), "type": "section"}


def context(elements: list[str]) -> Block:
    """A context line of mrkdwn elements, the first CONTEXT_MAX_ELEMENTS."""
    return {"elements": [_mrkdwn(e) for e in elements[:CONTEXT_MAX_ELEMENTS]], "type": "context"}
