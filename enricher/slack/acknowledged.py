"""The page once someone acknowledged it (PagerDuty's `incident.acknowledged`): who took it
and when, "👀 Acknowledged by Jane Doe at 03:12 UTC", as PagerDuty's own Slack app shows it.

The line is a context block under the page's header, marked by its block_id, so a later
acknowledgement replaces it and a resolve (enricher.slack.render) keeps it. Pure.
"""

from __future__ import annotations

from datetime import UTC, datetime

from enricher.alert import Alert
from enricher.slack.blocks import context
from enricher.slack.render import (
    BLOCKS_JSON_MAX,
    MAX_BLOCKS,
    SlackMessage,
    clock,
    message_size,
)
from enricher.slack.text import safe_line

#: The block_id of the page's "Acknowledged by" line.
BLOCK_ID = "acknowledged"
#: How much of the acknowledger's name the line shows.
NAME_MAX = 80


def acknowledged_line(alert: Alert, *, now: datetime | None = None) -> str:
    """Who (when the event names someone) and when (the event's time, else `now`)."""
    at = now or datetime.now(UTC)
    ack = alert.acknowledged
    by = f" by {safe_line(ack.by, NAME_MAX)}" if ack is not None and ack.by else ""
    when = ack.at if ack is not None and ack.at else at
    return f"👀 Acknowledged{by} at {clock(when, at)}"


def render_acknowledged_update(
    alert: Alert, original: SlackMessage, *, now: datetime | None = None
) -> SlackMessage:
    """The page for chat.update: the original, still FIRING, with the line under its header
    in place of an earlier one; its last cards are dropped if the line tips it over Slack's
    limits."""
    line = {**context([acknowledged_line(alert, now=now)]), "block_id": BLOCK_ID}
    blocks = [b for b in original.blocks if b.get("block_id") != BLOCK_ID]
    blocks.insert(1 if blocks and blocks[0].get("type") == "header" else 0, line)
    attachments = list(original.attachments)

    def fits() -> bool:
        count = len(blocks) + sum(len(a.get("blocks", [])) for a in attachments)
        return count <= MAX_BLOCKS and message_size(blocks, attachments) <= BLOCKS_JSON_MAX

    while not fits():
        if attachments:
            attachments.pop()
        else:
            blocks.pop()
    return SlackMessage(original.text, blocks, attachments)
