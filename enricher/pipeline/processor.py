"""From a queued job to a Slack message: parse, search, render, post or update, exactly once.

Rules for one alert group (Alertmanager groupKey, PagerDuty incident id):

- The first firing job posts. Redis holds the post record (ledger), claimed *before* the
  Slack call, so two workers or two replicas never both post.
- A repeat with the same firing alerts changes nothing. When the group gains or loses
  firing alerts, the message is updated in place (chat.update), never posted again.
- An edit notifies no one, so when a firing group gets worse (alerts join, or its highest
  severity rises) the watchers are also told: a thread reply broadcast to the channel
  (`reply_broadcast`) saying what changed and what is firing now (an incoming webhook,
  which cannot thread, posts it as a new message). Alerts leaving a group stay silent.
- A resolve updates the original message and replies in its thread. If the firing post is
  still in flight, the resolve waits (retry later), so it never arrives first. One resolve
  of a group runs at a time (`Ledger.hold_resolve`), so two different resolve bodies of
  one group do not both reply. A firing job older than an already applied resolve is
  superseded and dropped.
- An acknowledgement (PagerDuty) edits the page to say who took it and when, once, and
  like a resolve waits for the firing page and holds the group while it edits; a later
  acknowledgement replaces the line, an older one or one after the resolve changes nothing.
- A group that fires again after it resolved gets a new message.
- An incoming webhook or the console cannot find what it sent: each of their outputs is
  noted in the ledger once it has left the process (`_once`), so an attempt after a crash
  does not send it again.

A PagerDuty incident also gets the match as a note (enricher.pipeline.notes): owed on the
group's record under the post claim, sent after the page by every job of the group, once.

The feedback loop (enricher.feedback, enricher.gaps): a search reads on-call's votes for
the alert's name; a posted page is remembered so its buttons can be clicked; a no-match
page is recorded as a runbook gap; an edit or a resolve keeps the page's votes lines.
None of this can hold a page back: when Redis fails it is logged and skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Literal

import structlog
from redis.exceptions import RedisError

from enricher.alert import Alert
from enricher.feedback.store import FeedbackStore
from enricher.gaps.store import GapStore
from enricher.metrics import Metrics
from enricher.pipeline.first_index import STILL_INDEXING, FirstIndex
from enricher.pipeline.ledger import AlreadyPosted, InFlight, Ledger, PostRecord
from enricher.pipeline.notes import IncidentNotes
from enricher.pipeline.outputs import Outputs, acknowledgement, message_json
from enricher.pipeline.queue import Job
from enricher.pipeline.retry import RetryLater
from enricher.result import SearchResult
from enricher.search.feedback import NO_FEEDBACK, Tallies
from enricher.search.searcher import Searcher
from enricher.slack.acknowledged import acknowledged_line, render_acknowledged_update
from enricher.slack.blocks import context
from enricher.slack.delivery import PostRef
from enricher.slack.posting import Poster, marker
from enricher.slack.render import (
    SlackMessage,
    render_escalation,
    render_message,
    render_resolved_update,
    render_thread_reply,
)
from enricher.slack.routing import Router
from enricher.slack.votes import with_votes
from enricher.sources.alertmanager import severity_rank

log = structlog.get_logger(__name__)

#: "recovered": an earlier attempt's post, found by its marker; "unconfirmed": an earlier
#: attempt sent it and died before recording it, and it cannot be looked for (not re-sent).
Outcome = Literal[
    "posted",
    "updated",
    "resolved",
    "acknowledged",
    "duplicate",
    "superseded",
    "recovered",
    "unconfirmed",
]


def _message_from(raw: str) -> SlackMessage | None:
    if not raw:
        return None
    data = json.loads(raw)
    attachments = list(data.get("attachments") or [])
    return SlackMessage(str(data["text"]), list(data["blocks"]), attachments)


def joined(before: tuple[str, ...], after: tuple[str, ...]) -> int:
    """How many firing alerts are new in `after`. Past the tracked count the lists end in a
    `#<count>:<digest>` element (enricher.sources.alertmanager): then the counts decide."""
    new = {item for item in set(after) - set(before) if not item.startswith("#")}
    if new:
        return len(new)
    totals = [_tracked_total(ids) for ids in (before, after)]
    return max(0, totals[1] - totals[0])


def _tracked_total(ids: tuple[str, ...]) -> int:
    tail = ids[-1] if ids else ""
    count = tail[1:].partition(":")[0]
    # A sender's own fingerprint may start with "#" too: only `#<digits>:` is the count.
    if tail.startswith("#") and count.isascii() and count.isdigit():
        return int(count)
    return len(ids)


def _acknowledged_already(job: Job, record: PostRecord) -> Outcome | None:
    """Why an acknowledgement changes nothing on a posted page, None when it does: the
    page resolved, shows this one already, or shows a later one."""
    if record.status == "resolved":
        return "superseded"
    key, at = acknowledgement(job)
    if record.acknowledged == key:
        return "duplicate"
    if record.acknowledged and record.acknowledged_at > at:
        return "superseded"
    return None


class Processor(Outputs):
    """Does one job. Raises RetryLater or DeliveryFailed; the worker pool decides what next."""

    def __init__(
        self,
        *,
        searcher: Searcher,
        poster: Poster,
        router: Router,
        metrics: Metrics,
        owner: str,
        runbook_base_url: str | None,
        lease_s: float,
        feedback: FeedbackStore,
        gaps: GapStore,
        first_index: FirstIndex | None = None,
        notes: IncidentNotes | None = None,
    ) -> None:
        self.searcher = searcher
        self.poster = poster
        self.router = router
        self.metrics = metrics
        self.owner = owner
        self.runbook_base_url = runbook_base_url
        self.lease_s = lease_s
        self.feedback = feedback
        self.gaps = gaps
        self.first_index = first_index
        self.notes = notes

    async def _render(self, alert: Alert, result: SearchResult) -> SlackMessage:
        """Off the event loop like the search: a page's render is a few ms of CPU, and the
        intake's acks share this loop (issue 23, docs/PERFORMANCE.md)."""
        return await asyncio.to_thread(
            render_message, alert, result, runbook_base_url=self.runbook_base_url
        )

    async def enrich(self, alert: Alert, tallies: Tallies | None = None) -> SearchResult:
        """Search off the event loop: embedded Qdrant and the models are synchronous.
        `tallies`: on-call's votes for the alert, when the caller has read them already."""
        started = time.perf_counter()
        if tallies is None:
            tallies = await self._tallies(alert)
        if self.first_index is not None and self.first_index.pending:
            result = SearchResult(status="unavailable", tier=None, reason=STILL_INDEXING)
        else:
            result = await asyncio.to_thread(self.searcher.search, alert, feedback=tallies)
            if self.first_index is not None:
                result = self.first_index.settle(result)
        elapsed = time.perf_counter() - started
        self.metrics.search_seconds.observe(elapsed)
        self.metrics.enrichments.labels(result.status, result.tier or "none").inc()
        top = result.matches[0] if result.matches else None
        shown = (*result.matches, *result.leads)
        log.info(
            "alert.enriched",
            alert=alert.alert_name,
            service=alert.service,
            source=alert.source,
            status=result.status,
            tier=result.tier,
            score=top.score if top else None,
            doc=top.doc_id if top else None,
            leads=[m.doc_id for m in result.leads] or None,
            feedback=[f"{m.doc_id}: {m.feedback}" for m in shown if m.feedback] or None,
            reason=result.reason,
            ms=round(elapsed * 1000, 1),
        )
        return result

    async def _tallies(self, alert: Alert) -> Tallies:
        if not alert.alert_name:
            return NO_FEEDBACK
        try:
            return await self.feedback.tallies(alert.alert_name)
        except RedisError as exc:
            log.warning("feedback.unreadable", alert=alert.alert_name, error=type(exc).__name__)
            return NO_FEEDBACK

    async def _posted(self, job: Job, result: SearchResult, ref: PostRef) -> None:
        """A new page is out: remember it for its buttons, and count it as a gap when no
        runbook matched."""
        alert = job.alert
        gap = result.status == "no_match"
        if gap:
            self.metrics.gap_pages.inc()
        try:
            if ref.ts:  # an incoming webhook's post has no ts: no buttons to click
                await self.feedback.remember_page(ref, alert)
            if gap:
                await self.gaps.record(alert, result, at=job.received_at)
        except RedisError as exc:
            log.warning(
                "feedback.page_unrecorded",
                group=alert.group_key,
                gap=gap,
                error=type(exc).__name__,
                fix="its buttons are ignored and the gap report misses it; check Redis",
            )

    async def _with_votes(self, ref: PostRef, message: SlackMessage) -> SlackMessage:
        """The message with the page's votes lines, so an edit or a resolve keeps them."""
        try:
            votes = await self.feedback.page_votes(ref)
        except RedisError as exc:
            log.warning("feedback.unreadable", ts=ref.ts, error=type(exc).__name__)
            return message
        return with_votes(message, votes)

    async def process(self, job: Job, ledger: Ledger | None, *, sole: bool = False) -> Outcome:
        """Post, update or resolve the job's page. `sole`: no other worker of this process
        is on the job's group (`Ledger.claim_post`)."""
        if ledger is None:
            return await self._without_ledger(job.alert)
        if job.alert.status == "resolved":
            outcome = await self._resolve(job, ledger)
        elif job.alert.acknowledged is not None:
            outcome = await self._acknowledge(job, ledger, sole)
        else:
            outcome = await self._fire(job, ledger, sole)
        if self.notes is not None:  # after the page: its incident note (pipeline.notes)
            await self.notes.deliver(job, self.owner)
        return outcome

    async def _without_ledger(self, alert: Alert) -> Outcome:
        """Redis is down: no dedup and no post records, but the page still goes out."""
        if alert.status == "firing":
            result = await self.enrich(alert)
        else:
            result = SearchResult("no_match", None)
        message = await self._render(alert, result)
        await self._post(alert, message, "", since=None)
        return "posted"

    async def _fire(self, job: Job, ledger: Ledger, sole: bool) -> Outcome:
        alert = job.alert
        claim = await ledger.claim_post(alert.group_key, self.owner, self.lease_s, sole=sole)
        if isinstance(claim, InFlight):
            raise RetryLater("post in flight", delay_s=min(30.0, claim.age_s + 1))
        if isinstance(claim, AlreadyPosted):
            record = await ledger.get_post(alert.group_key)
            if record is None:  # released between the two calls: try again shortly
                raise RetryLater("post record changed", delay_s=1)
            if record.status == "resolved":
                if job.received_at < record.received_at:
                    return "superseded"
                if not await ledger.reopen(alert.group_key, self.owner, self.lease_s):
                    raise RetryLater("reopen raced", delay_s=1)
                return await self._post_new(job, ledger)
            if set(record.fingerprints) == set(job.fingerprints):
                return "duplicate"
            return await self._update_group(job, record, ledger)
        if claim.takeover and self.poster.can_find:
            # An earlier attempt may have reached Slack: find it before posting again.
            async with ledger.posting(alert.group_key, self.owner, unverified=True):
                found = await self.poster.find_marker(
                    self.channel_for(alert), marker(alert.group_key, alert.status), job.received_at
                )
            if found is not None:
                await self._record(job, ledger, found, None)
                return "recovered"
        return await self._post_new(job, ledger)

    async def _post_new(self, job: Job, ledger: Ledger) -> Outcome:
        # The "Last time" counts are read while the search runs: they do not depend on it.
        tallies = await self._tallies(job.alert)
        result, seen = await asyncio.gather(self.enrich(job.alert, tallies), self._seen(job))
        message = await self._render(job.alert, result)
        if job.alert.acknowledged is not None:  # its trigger was never posted here
            message = render_acknowledged_update(job.alert, message)
        message = self._with_history(message, result, seen, tallies)
        if self.notes is not None:
            await self.notes.owe(job, result, self.owner)
        sent = await self._post_claimed(job, ledger, message)
        if sent is None:
            return "unconfirmed"
        await self._posted(job, result, sent)
        return "posted"

    async def _update_group(self, job: Job, record: PostRecord, ledger: Ledger) -> Outcome:
        alert = job.alert
        if job.received_at < record.received_at:
            return "superseded"  # an older view of the group than the message shows
        result = await self.enrich(alert)
        message = await self._render(alert, result)
        rose = severity_rank(alert.severity) > severity_rank(record.severity)
        more = joined(record.fingerprints, job.fingerprints)
        # Marked per notification: a retry after a lost answer (or a crash) does not repeat it.
        mark = marker(alert.group_key, "escalated:" + job.dedup_key)
        kind = f"escalated:{mark}"
        text = render_escalation(alert, severity_rose=rose, joined=more)
        if self.poster.can_update and record.ts:
            ref = PostRef(record.channel, record.ts)
            await self.poster.update(ref, await self._with_votes(ref, message))
            self.metrics.slack_posts.labels("update").inc()
            if rose or more:
                await self._once(
                    ledger, alert.group_key, kind,
                    lambda on_sent: self.poster.reply_once(
                        ref, text, mark, broadcast=True, on_sent=on_sent
                    ),
                )
                self.metrics.slack_posts.labels("escalation").inc()
        elif rose or more:
            section = {"type": "section", "text": {"type": "mrkdwn", "text": text}}
            escalation = SlackMessage(text, [section])
            await self._once(
                ledger, alert.group_key, kind,
                lambda on_sent: self._post(alert, escalation, mark, since=None, on_sent=on_sent),
            )
        if rose or more:
            log.info(
                "alert.escalated",
                group=alert.group_key,
                severity_rose=rose,
                joined=more,
                firing=alert.firing_count,
            )
        await ledger.update_post(
            alert.group_key,
            fingerprints=job.fingerprints,
            message=message_json(message),
            received_at=job.received_at,
            severity=alert.severity or "",
            output=kind,
        )
        return "updated"

    @contextlib.asynccontextmanager
    async def _holding(self, ledger: Ledger, group_key: str) -> AsyncIterator[None]:
        """The group's hold while a resolve or an acknowledgement edits its page
        (`Ledger.hold_resolve`): one at a time, so their edits never cross."""
        wait_s = await ledger.hold_resolve(group_key, self.owner, self.lease_s)
        if wait_s is not None:
            # A resolve takes a second or two; a crashed holder's hold runs out on its own.
            raise RetryLater("resolve in flight", delay_s=min(5.0, wait_s + 0.5))
        try:
            yield
        finally:
            await ledger.release_resolve(group_key, self.owner)

    async def _acknowledge(self, job: Job, ledger: Ledger, sole: bool) -> Outcome:
        """Say on the page who took it and when, once. Like a resolve, it waits for the
        firing page and holds the group (`Ledger.hold_resolve`), so a resolve and an
        acknowledgement never edit the message at the same time. A page never posted here
        is posted now, with the line."""
        alert = job.alert
        record = await ledger.get_post(alert.group_key)
        if record is None:
            if await ledger.state(alert.group_key) is not None:
                raise RetryLater("firing post not delivered yet", delay_s=5)
            return await self._fire(job, ledger, sole)
        if (done := _acknowledged_already(job, record)) is not None:
            return done
        async with self._holding(ledger, alert.group_key):
            return await self._acknowledge_posted(job, ledger)

    async def _acknowledge_posted(self, job: Job, ledger: Ledger) -> Outcome:
        """Edit the page; when it cannot be edited as it was (a webhook's post, a message
        not stored), the line goes in its thread or to the channel, once."""
        alert = job.alert
        record = await ledger.get_post(alert.group_key)  # again, under the hold
        if record is None:
            return "superseded"  # the group fired again meanwhile and is being posted anew
        if (done := _acknowledged_already(job, record)) is not None:
            return done
        original = _message_from(record.message)
        message = None
        mark = marker(alert.group_key, "acknowledged:" + job.dedup_key)
        kind = f"acknowledged:{mark}"
        line = acknowledged_line(alert)
        if self.poster.can_update and record.ts and original is not None:
            ref = PostRef(record.channel, record.ts)
            message = render_acknowledged_update(alert, original)
            await self.poster.update(ref, await self._with_votes(ref, message))
        elif self.poster.can_update and record.ts:
            ref = PostRef(record.channel, record.ts)
            await self._once(
                ledger, alert.group_key, kind,
                lambda on_sent: self.poster.reply_once(ref, line, mark, on_sent=on_sent),
            )
        else:
            note = SlackMessage(line, [context([line])])
            await self._once(
                ledger, alert.group_key, kind,
                lambda on_sent: self._post(alert, note, mark, since=None, on_sent=on_sent),
            )
        self.metrics.slack_posts.labels("acknowledged").inc()
        await ledger.update_post(
            alert.group_key,
            message=message_json(message) if message is not None else None,
            acknowledged=acknowledgement(job),
            output=kind,
        )
        return "acknowledged"

    async def _resolve(self, job: Job, ledger: Ledger) -> Outcome:
        alert = job.alert
        record = await ledger.get_post(alert.group_key)
        if record is None:
            if await ledger.state(alert.group_key) is not None:
                # The firing page is owed (accepted, in flight, or its post is being retried,
                # perhaps by a replica that died): a resolve must not overtake it.
                raise RetryLater("firing post not delivered yet", delay_s=5)
            claim = await ledger.claim_post(alert.group_key, self.owner, self.lease_s)
            if isinstance(claim, InFlight):
                raise RetryLater("firing post in flight", delay_s=min(30.0, claim.age_s + 1))
            if isinstance(claim, AlreadyPosted):
                raise RetryLater("post record changed", delay_s=1)
            if claim.takeover:
                await ledger.release_claim(
                    alert.group_key, self.owner, owed=True, check_marker=True
                )
                raise RetryLater("firing post not delivered yet", delay_s=5)
            # Nothing was posted for this group (its firing page predates us, or was never
            # sent): post the short resolved message so the channel still hears about it.
            message = await self._render(alert, SearchResult("no_match", None))
            await self._post_claimed(job, ledger, message)
            return "resolved"
        if record.status == "resolved":
            return "duplicate"
        async with self._holding(ledger, alert.group_key):
            return await self._resolve_posted(job, ledger)

    async def _resolve_posted(self, job: Job, ledger: Ledger) -> Outcome:
        """Edit the group's message and reply in its thread, under the group's resolve hold."""
        alert = job.alert
        record = await ledger.get_post(alert.group_key)  # again: another hold may have ended
        if record is None:  # the group fired again meanwhile and is being posted anew
            return "superseded"
        if record.status == "resolved":
            return "duplicate"
        if self.poster.can_update and record.ts:
            ref = PostRef(record.channel, record.ts)
            original = _message_from(record.message)
            update = render_resolved_update(alert, original)
            await self.poster.update(ref, await self._with_votes(ref, update))
            # The group's "resolved" marker: one reply per thread.
            mark = marker(alert.group_key, alert.status)
            reply = render_thread_reply(alert)
            await self._once(
                ledger, alert.group_key, "resolve",
                lambda on_sent: self.poster.reply_once(ref, reply, mark, on_sent=on_sent),
            )
            self.metrics.slack_posts.labels("resolve").inc()
        else:
            message = await self._render(alert, SearchResult("no_match", None))
            await self._once(
                ledger, alert.group_key, "resolve",
                lambda on_sent: self._post(alert, message, "", since=None, on_sent=on_sent),
            )
        await ledger.update_post(
            alert.group_key, status="resolved", received_at=job.received_at, output="resolve"
        )
        await self._history_resolved(job)
        return "resolved"



__all__ = ["Outcome", "Processor"]
