"""The line under a card's feedback buttons that says who voted (pure).

`with_votes` rewrites a message so that under each card's buttons (enricher.slack.buttons)
a context line names the voters ("✔ confirmed by <@U1>", "✘ marked wrong by <@U2>"). It
is a function of the message and all of the page's votes, and replaces the lines it wrote
before, so running it again, or on a message re-rendered from scratch, gives the same page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from enricher.slack.buttons import ACTIONS_PREFIX, Verdict, doc_tag
from enricher.slack.render import SlackMessage
from enricher.slack.text import safe_line

VOTES_PREFIX = "rbe_votes:"
#: Voters named per verdict; the rest are counted.
NAMED_VOTERS = 5
#: Slack user (U…) and enterprise user (W…) ids: only these become mentions.
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,30}")

Blocks = list[dict[str, Any]]


@dataclass(frozen=True)
class PageVote:
    """One user's current vote on a page."""

    user: str
    doc_id: str
    verdict: Verdict


def mention(user: str) -> str:
    """`<@U123>` for a Slack user id; anything else is shown as inert text."""
    return f"<@{user}>" if _USER_ID.fullmatch(user) else safe_line(user, 40)


def _voters(users: Sequence[str]) -> str:
    shown = ", ".join(mention(u) for u in users[:NAMED_VOTERS])
    more = len(users) - NAMED_VOTERS
    return shown + (f" and {more} more" if more > 0 else "")


def votes_line(votes: Sequence[PageVote]) -> dict[str, Any] | None:
    """The context block under a card's buttons; None without votes."""
    right = sorted(v.user for v in votes if v.verdict == "right")
    wrong = sorted(v.user for v in votes if v.verdict == "wrong")
    elements = []
    if right:
        elements.append({"type": "mrkdwn", "text": "✔ confirmed by " + _voters(right)})
    if wrong:
        elements.append({"type": "mrkdwn", "text": "✘ marked wrong by " + _voters(wrong)})
    if not elements:
        return None
    return {"type": "context", "elements": elements}


def _with_votes_in(blocks: Blocks, votes: Sequence[PageVote]) -> Blocks:
    out: Blocks = []
    for block in blocks:
        block_id = str(block.get("block_id", ""))
        if block_id.startswith(VOTES_PREFIX):
            continue  # written by an earlier run: replaced below
        out.append(block)
        if block.get("type") == "actions" and block_id.startswith(ACTIONS_PREFIX):
            tag = block_id.removeprefix(ACTIONS_PREFIX)
            line = votes_line([v for v in votes if doc_tag(v.doc_id) == tag])
            if line is not None:
                out.append({**line, "block_id": VOTES_PREFIX + tag})
    return out


def with_votes(message: SlackMessage, votes: Sequence[PageVote]) -> SlackMessage:
    """The message with each card's votes line as `votes` say (module docstring)."""
    attachments = [
        {**card, "blocks": _with_votes_in(list(card.get("blocks", [])), votes)}
        for card in message.attachments
    ]
    return SlackMessage(message.text, _with_votes_in(message.blocks, votes), attachments)


__all__ = ["PageVote", "mention", "votes_line", "with_votes"]
