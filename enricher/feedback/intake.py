"""A click on a page's feedback button, as Slack posts it to /slack/interactions.

Slack signs each request: `X-Slack-Signature: v0=<hex HMAC-SHA256>` over
`v0:{X-Slack-Request-Timestamp}:{raw body}`, keyed with the app's signing secret. A request
whose timestamp is more than five minutes off is refused as a replay, and so is one
without a valid signature (401, `verify_slack_request`).

Everything else gets 200, because Slack shows any other status to the clicking user as an
error they can do nothing about: an action that is not ours, a page whose record expired
(stale), a payload of a shape we do not read. Each is logged (`feedback.ignored`) and
dropped. A vote is stored in Redis before the answer (a click is not lost to a restart);
the message is updated afterwards (enricher.feedback.updater).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qs

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from enricher.errors import Unauthorized
from enricher.feedback.store import FeedbackStore, Vote, VoteOutcome
from enricher.feedback.updater import MessageUpdater
from enricher.signatures import any_match, hmac_sha256, presented
from enricher.slack.buttons import ACTIONS, ButtonValue
from enricher.slack.delivery import PostRef
from enricher.slack.render import SlackMessage

log = structlog.get_logger(__name__)

#: Slack's replay window: requests with a timestamp further off are refused.
MAX_SKEW_S = 300


def verify_slack_request(
    body: bytes,
    *,
    timestamp: str | None,
    signature: str | None,
    secret: str,
    now: float | None = None,
) -> None:
    """Unauthorized unless `signature` holds a `v0=` HMAC of this body and timestamp, and the
    timestamp is within MAX_SKEW_S of `now`."""
    if not timestamp or not signature:
        raise Unauthorized("missing X-Slack-Signature or X-Slack-Request-Timestamp header")
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 12):
        raise Unauthorized("X-Slack-Request-Timestamp is not a Unix time")
    if abs((time.time() if now is None else now) - int(timestamp)) > MAX_SKEW_S:
        raise Unauthorized(
            "X-Slack-Request-Timestamp is more than 5 minutes off: a replayed request, or "
            "this host's clock is wrong (check NTP)"
        )
    expected = hmac_sha256(secret, b"v0:" + timestamp.encode() + b":" + body)
    if not any_match([expected], presented(signature, "v0")):
        raise Unauthorized("X-Slack-Signature does not match: check SLACK_SIGNING_SECRET")


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Id(_Model):
    id: str = Field(min_length=1, max_length=64)


class _Action(_Model):
    action_id: str = ""
    value: str = ""


class _Container(_Model):
    channel_id: str | None = None
    message_ts: str | None = None


class _Message(_Model):
    ts: str | None = None
    text: str = ""
    blocks: list[dict[str, Any]] = []
    attachments: list[dict[str, Any]] = []


class BlockActions(_Model):
    """The parts of a `block_actions` payload a vote needs."""

    type: Literal["block_actions"]
    user: _Id
    actions: list[_Action] = []
    container: _Container = _Container()
    channel: _Id | None = None
    message: _Message | None = None


@dataclass(frozen=True)
class Accepted:
    outcome: VoteOutcome | Literal["ignored"]
    reason: str = ""
    verdict: str = ""


def _payload(body: bytes) -> BlockActions | str:
    """The block actions in a form-encoded `payload=`, or why there are none."""
    try:
        values = parse_qs(body.decode(), strict_parsing=False).get("payload")
    except UnicodeDecodeError:
        return "body is not form-encoded text"
    if not values:
        return "no payload field"
    try:
        return BlockActions.model_validate_json(values[0])
    except ValidationError as exc:
        return f"not a block action we read: {exc.errors()[0]['loc']}"[:200]


def _attachments(cards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cards as we post them (Slack adds `id` and other fields to what it sends back)."""
    keep = ("color", "fallback", "blocks")
    return [{k: card[k] for k in keep if k in card} for card in cards]


class FeedbackIntake:
    def __init__(self, store: FeedbackStore, updater: MessageUpdater) -> None:
        self.store = store
        self.updater = updater

    async def accept(self, body: bytes, now: float | None = None) -> Accepted:
        """Record the vote in a signed request's body and schedule the message update.
        Raises RedisError when the vote cannot be stored (the caller answers 503)."""
        payload = _payload(body)
        if isinstance(payload, str):
            return _ignored(payload)
        ours = [a for a in payload.actions if a.action_id in ACTIONS]
        if not ours:
            return _ignored("no feedback action", actions=[a.action_id for a in payload.actions])
        action = ours[0]
        value = ButtonValue.decode(action.value)
        channel = payload.container.channel_id or (payload.channel.id if payload.channel else "")
        ts = payload.container.message_ts or (payload.message.ts if payload.message else "")
        if value is None or not channel or not ts:
            return _ignored("button value or message unknown", action=action.action_id)
        ref = PostRef(channel, ts)
        record = await self.store.page(ref)
        if record is None:
            return _ignored("stale page: no record of it (expired or not ours)", channel=channel)
        alert = record.alert
        vote = Vote(
            user=payload.user.id,
            at=time.time() if now is None else now,
            verdict=ACTIONS[action.action_id],
            alert_name=alert.alert_name,
            service=alert.service,
            doc_id=value.doc_id,
            path=value.path,
            revision=value.revision,
            channel=channel,
            ts=ts,
            alert=alert,
        )
        outcome = await self.store.vote(vote)
        log.info(
            "feedback.vote",
            outcome=outcome,
            user=vote.user,
            verdict=vote.verdict,
            alert=vote.alert_name,
            service=vote.service,
            doc=vote.doc_id,
            revision=vote.revision,
        )
        message = payload.message
        if message is not None:
            shown = SlackMessage(message.text, message.blocks, _attachments(message.attachments))
            await self.updater.schedule(ref, shown)
        return Accepted(outcome, verdict=vote.verdict)


def _ignored(reason: str, **fields: Any) -> Accepted:
    log.info("feedback.ignored", reason=reason, **fields)
    return Accepted("ignored", reason)


__all__ = ["MAX_SKEW_S", "Accepted", "BlockActions", "FeedbackIntake", "verify_slack_request"]
