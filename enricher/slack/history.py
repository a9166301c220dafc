""""Last time" on the page: a context line under the header saying what this alert did
before, from what the service recorded itself (enricher.pipeline.history):

    Fired 4× in the last 7 days · last resolved after 12 min · this runbook: 👍 3 👎 0 ·
    previous page

A group that keeps coming back is named as flapping ("⚠ Flapping: fired 9× in the last
hour"). Pure: the counts come in, the line and the page with it go out.
"""

from __future__ import annotations

from dataclasses import dataclass

from enricher.slack.blocks import context
from enricher.slack.render import BLOCKS_JSON_MAX, MAX_BLOCKS, SlackMessage, message_size
from enricher.slack.text import is_http_url

#: The block_id of the page's history line.
BLOCK_ID = "history"
#: Fires within the last hour, this page included, from which the alert is flapping.
FLAPPING_AT = 3


@dataclass(frozen=True)
class History:
    """What this alert (name and service) did before this page."""

    #: Pages within the last 7 days and the last hour, this one included.
    fired_week: int
    fired_hour: int
    #: How long its last resolved firing lasted (seconds); None when none is known.
    resolved_after_s: float | None = None
    #: On-call's votes for the page's runbook under this alert name.
    right: int = 0
    wrong: int = 0
    voted: bool = False
    #: The last page of the same alert in Slack; "" when unknown.
    previous_url: str = ""


def _duration(seconds: float) -> str:
    minutes = max(0, round(seconds / 60))
    if minutes < 60:
        return f"{max(minutes, 1)} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{round(hours / 24)} days"


def history_line(history: History) -> str | None:
    """The line, None on an alert's first page with nothing to say."""
    parts: list[str] = []
    flapping = history.fired_hour >= FLAPPING_AT
    if flapping:
        parts.append(f"⚠ Flapping: fired {history.fired_hour}× in the last hour")
    if history.fired_week > 1 and not (flapping and history.fired_hour == history.fired_week):
        parts.append(f"fired {history.fired_week}× in the last 7 days")
    if history.resolved_after_s is not None:
        parts.append(f"last resolved after {_duration(history.resolved_after_s)}")
    if history.voted:
        parts.append(f"this runbook: 👍 {history.right} 👎 {history.wrong}")
    if history.previous_url and is_http_url(history.previous_url):
        parts.append(f"<{history.previous_url}|previous page>")
    if not parts:
        return None
    first = parts[0]
    parts[0] = first[:1].upper() + first[1:]
    return " · ".join(parts)


def with_history(message: SlackMessage, line: str | None) -> SlackMessage:
    """The page with the line under its header (after an acknowledgement line); unchanged
    when there is no line or it would tip the page over Slack's limits."""
    if line is None:
        return message
    blocks = [b for b in message.blocks if b.get("block_id") != BLOCK_ID]
    block = {**context([line]), "block_id": BLOCK_ID}
    at = 1 if blocks and blocks[0].get("type") == "header" else 0
    blocks.insert(at, block)
    attachments = list(message.attachments)
    count = len(blocks) + sum(len(a.get("blocks", [])) for a in attachments)
    if count > MAX_BLOCKS or message_size(blocks, attachments) > BLOCKS_JSON_MAX:
        return message
    return SlackMessage(message.text, blocks, attachments)
