"""A group's outputs, each sent once: the page posted under its claim and recorded, and
the notes that keep a delivery without lookups from sending anything twice.

`Outputs` is the part of the processor (enricher.pipeline.processor) that talks to Slack
and records what it sent; the processor decides what to send.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TypeVar

import structlog

from enricher.alert import Alert
from enricher.errors import DeliveryFailed
from enricher.feedback.store import FeedbackStore
from enricher.metrics import Metrics
from enricher.pipeline.history import PageHistory, Seen
from enricher.pipeline.ledger import Ledger
from enricher.pipeline.queue import Job
from enricher.result import SearchResult
from enricher.search.feedback import Tallies
from enricher.slack.delivery import OnSent, PostRef
from enricher.slack.history import history_line, with_history
from enricher.slack.posting import Poster, marker
from enricher.slack.render import SlackMessage
from enricher.slack.routing import Router

log = structlog.get_logger(__name__)

T = TypeVar("T")


def message_json(message: SlackMessage) -> str:
    return json.dumps(message.to_kwargs())


def acknowledgement(job: Job) -> tuple[str, float]:
    """The acknowledgement a job brings, as the ledger stores it: its delivery's dedup key
    and when it was made (the event's time, else when it arrived); ("", 0.0) for none."""
    ack = job.alert.acknowledged
    if ack is None:
        return "", 0.0
    return job.dedup_key, ack.at.timestamp() if ack.at else job.received_at


class Outputs:
    poster: Poster
    router: Router
    metrics: Metrics
    #: `<worker id>:<process nonce>`, the owner of this process's claims (enricher.service).
    owner: str
    feedback: FeedbackStore
    #: The "Last time" line's store (enricher.pipeline.history); None: no line.
    history: PageHistory | None = None

    def channel_for(self, alert: Alert) -> str:
        return self.router.channel_for(alert) or "default"

    async def _post_claimed(
        self, job: Job, ledger: Ledger, message: SlackMessage
    ) -> PostRef | None:
        """Post under a claim we hold (`Ledger.posting` gives it up on failure), then record.
        None: a dead attempt was sending it already (`_once`); recorded with no ts."""
        alert = job.alert
        async with ledger.posting(alert.group_key, self.owner):
            mark = marker(alert.group_key, alert.status)
            sent = await self._once(
                ledger, alert.group_key, "post",
                lambda on_sent: self._post(
                    alert, message, mark, since=job.received_at, on_sent=on_sent
                ),
            )
        await self._record(job, ledger, sent or PostRef(self.channel_for(alert), ""), message)
        if self.history is not None and sent is not None and alert.status == "firing":
            await self.history.fired(alert, job.received_at, alert.group_key, sent)
        return sent

    async def _seen(self, job: Job) -> Seen | None:
        """What a new firing page's "Last time" line says before its runbook is known;
        None: no line (history off, not firing, no alert name, Redis unreadable)."""
        alert = job.alert
        if self.history is None or alert.status != "firing" or not alert.alert_name:
            return None
        return await self.history.read(alert, job.received_at)

    @staticmethod
    def _with_history(
        message: SlackMessage, result: SearchResult, seen: Seen | None, tallies: Tallies
    ) -> SlackMessage:
        """A new firing page with its "Last time" line (enricher.slack.history), the votes
        for its runbook from the tallies its search read."""
        if seen is None:
            return message
        doc = result.matches[0].doc_id if result.matches else None
        return with_history(message, history_line(seen.history(doc, tallies)))

    async def _history_resolved(self, job: Job) -> None:
        """How long the firing lasted, for the next page's line (when the sender says)."""
        alert = job.alert
        if self.history is not None and alert.starts_at and alert.ends_at:
            lasted = (alert.ends_at - alert.starts_at).total_seconds()
            await self.history.resolved(alert, lasted)

    async def _once(
        self,
        ledger: Ledger,
        group_key: str,
        kind: str,
        send: Callable[[OnSent | None], Awaitable[T]],
    ) -> T | None:
        """`send(on_sent)`, unless an attempt that died already sent it: None then.

        With a delivery that can find what it sent (bot token), the marker lookups keep
        outputs single and this only sends. Without one (incoming webhook, console), the
        output is noted in the group's ledger record before it is sent, and again once it
        has left the process (the delivery calls `on_sent`); the write that stores its
        effect clears the notes. An attempt that finds the second note runs after a process
        died in between and does not send again; one that finds only the first cannot know
        whether the output left before the process died, sends it again and says so. A
        failure Slack answered clears the notes, so the retry sends again. (The guarantees
        this makes: docs/RELIABILITY.md.)
        """
        if self.poster.can_find:
            return await send(None)
        sent_before, begun_before = await ledger.output_notes(group_key, kind)
        if sent_before:
            self._warn_crashed(
                "slack.output_unconfirmed", group_key, kind,
                detail="an earlier attempt sent this and its process died before storing "
                "the answer; it is taken as delivered and not sent again",
                fix="check the channel for it; with a bot token (SLACK_BOT_TOKEN) the "
                "service looks for it instead",
            )
            return None
        if begun_before:
            self._warn_crashed(
                "slack.output_maybe_repeated", group_key, kind,
                detail="an earlier attempt was sending this when its process died, maybe "
                "after it had left; it is sent again, so the channel may show it twice",
                fix="with a bot token (SLACK_BOT_TOKEN) the service looks for it instead",
            )
        await ledger.note_attempt(group_key, kind)

        async def sent() -> None:
            await ledger.note_output(group_key, kind)

        try:
            return await send(sent)
        except DeliveryFailed:
            await ledger.forget_output(group_key, kind)
            raise

    def _warn_crashed(
        self, event: str, group_key: str, kind: str, *, detail: str, fix: str
    ) -> None:
        """What an earlier attempt's crash left, logged and counted (`slack.output_*`)."""
        log.warning(event, group=group_key, kind=kind.partition(":")[0], detail=detail, fix=fix)
        self.metrics.slack_failures.labels(event.removeprefix("slack.output_")).inc()

    async def _record(
        self, job: Job, ledger: Ledger, ref: PostRef, message: SlackMessage | None
    ) -> None:
        alert = job.alert
        acknowledged, acknowledged_at = acknowledgement(job)
        if not await ledger.record_post(
            alert.group_key,
            self.owner,
            channel=ref.channel,
            ts=ref.ts,
            fingerprints=job.fingerprints,
            status=alert.status,
            received_at=job.received_at,
            message=message_json(message) if message is not None else "",
            severity=alert.severity or "",
            acknowledged=acknowledged,
            acknowledged_at=acknowledged_at,
        ):
            # Our lease was taken over while we posted: the reader may see two messages.
            log.error("slack.duplicate_post", group=alert.group_key, ts=ref.ts)
            self.metrics.slack_failures.labels("duplicate_post").inc()

    async def _post(
        self,
        alert: Alert,
        message: SlackMessage,
        mark: str,
        *,
        since: float | None,
        on_sent: OnSent | None = None,
    ) -> PostRef:
        channel = self.channel_for(alert)
        ref = await self.poster.post(channel, message, mark, since=since, on_sent=on_sent)
        self.metrics.slack_posts.labels("post").inc()
        return ref
