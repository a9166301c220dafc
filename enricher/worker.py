"""From a queued job to a Slack message: parse, search, render, post or update, exactly once.

Rules for one alert group (Alertmanager groupKey, PagerDuty incident id):

- The first firing job posts. Redis holds the post record (ledger), claimed *before* the
  Slack call, so two workers or two replicas never both post.
- A repeat with the same firing alerts changes nothing. When the group gains or loses
  firing alerts, the message is updated in place (chat.update), never posted again.
- A resolve updates the original message and replies in its thread. If the firing post is
  still in flight, the resolve waits (retry later), so it never arrives first. One resolve
  of a group runs at a time (`Ledger.hold_resolve`), so two different resolve bodies of
  one group do not both reply. A firing job older than an already applied resolve is
  superseded and dropped.
- A group that fires again after it resolved gets a new message.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from dataclasses import dataclass
from typing import Literal

import structlog
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from enricher.alert import Alert
from enricher.alertmanager import normalize_group, parse_alertmanager
from enricher.delivery import Delivery, PostRef
from enricher.errors import DeliveryFailed
from enricher.jobs import Job
from enricher.ledger import AlreadyPosted, InFlight, Ledger, PostRecord
from enricher.metrics import Metrics
from enricher.pagerduty import normalize_incident, parse_pagerduty
from enricher.render import (
    SlackMessage,
    render_message,
    render_resolved_update,
    render_thread_reply,
)
from enricher.result import SearchResult
from enricher.routing import Router
from enricher.search import Searcher

log = structlog.get_logger(__name__)

Outcome = Literal[
    "posted", "updated", "resolved", "duplicate", "superseded", "ignored", "recovered"
]


class RetryLater(Exception):
    """The job cannot be done yet (a claim in flight); put it back for `delay_s`."""

    def __init__(self, reason: str, delay_s: float) -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay_s = delay_s


@dataclass(frozen=True)
class Parsed:
    alert: Alert
    #: Identity of the firing alerts the message shows; a change means "update the message".
    fingerprints: tuple[str, ...]


def parse_job(job: Job) -> Parsed | None:
    if job.source == "alertmanager":
        payload = parse_alertmanager(job.body)
        firing = sorted(
            f"{a.fingerprint or ''}@{a.starts_at.isoformat()}"
            for a in payload.alerts
            if a.status == "firing"
        )
        return Parsed(normalize_group(payload), tuple(firing))
    alert = normalize_incident(parse_pagerduty(job.body))
    return None if alert is None else Parsed(alert, (alert.group_key,))


#: Longest wait between delivery attempts: after a Slack outage ends, every page is out
#: within about this long.
MAX_BACKOFF_S = 60.0


def backoff_s(attempts: int, retry_after: float | None = None) -> float:
    """Slack's Retry-After when given, else exponential with jitter up to MAX_BACKOFF_S."""
    if retry_after is not None:
        return max(0.5, retry_after)
    return float(min(MAX_BACKOFF_S, 2.0 ** min(attempts, 9)) * (0.5 + random.random() / 2))


def _message_json(message: SlackMessage) -> str:
    return json.dumps({"text": message.text, "blocks": message.blocks})


def _message_from(raw: str) -> SlackMessage | None:
    if not raw:
        return None
    data = json.loads(raw)
    return SlackMessage(text=str(data["text"]), blocks=list(data["blocks"]))


class Processor:
    """Does one job. Raises RetryLater or DeliveryFailed; the worker pool decides what next."""

    def __init__(
        self,
        *,
        searcher: Searcher,
        delivery: Delivery,
        router: Router,
        metrics: Metrics,
        owner: str,
        runbook_base_url: str | None = None,
        lease_s: float = 120.0,
    ) -> None:
        self.searcher = searcher
        self.delivery = delivery
        self.router = router
        self.metrics = metrics
        self.owner = owner
        self.runbook_base_url = runbook_base_url
        self.lease_s = lease_s

    async def enrich(self, alert: Alert) -> SearchResult:
        """Search off the event loop: embedded Qdrant and the models are synchronous."""
        started = time.perf_counter()
        result = await asyncio.to_thread(self.searcher.search, alert)
        elapsed = time.perf_counter() - started
        self.metrics.search_seconds.observe(elapsed)
        self.metrics.enrichments.labels(result.status, result.tier or "none").inc()
        top = result.matches[0] if result.matches else None
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
            reason=result.reason,
            ms=round(elapsed * 1000, 1),
        )
        return result

    def channel_for(self, alert: Alert) -> str:
        return self.router.channel_for(alert) or "default"

    async def process(self, job: Job, ledger: Ledger | None) -> Outcome:
        parsed = parse_job(job)
        if parsed is None:
            return "ignored"
        if ledger is None:
            return await self._without_ledger(parsed)
        if parsed.alert.status == "resolved":
            return await self._resolve(job, parsed, ledger)
        return await self._fire(job, parsed, ledger)

    async def _without_ledger(self, parsed: Parsed) -> Outcome:
        """Redis is down: no dedup and no post records, but the page still goes out."""
        alert = parsed.alert
        if alert.status == "firing":
            result = await self.enrich(alert)
        else:
            result = SearchResult("no_match", None)
        message = render_message(alert, result, runbook_base_url=self.runbook_base_url)
        await self._post(alert, message, "", since=None)
        return "posted"

    async def _fire(self, job: Job, parsed: Parsed, ledger: Ledger) -> Outcome:
        alert = parsed.alert
        claim = await ledger.claim_post(alert.group_key, self.owner, self.lease_s)
        if isinstance(claim, InFlight):
            raise RetryLater("post in flight", delay_s=min(30.0, claim.age_s + 1))
        if isinstance(claim, AlreadyPosted):
            record = await ledger.get_post(alert.group_key)
            if record is None:  # released between the two calls: try again shortly
                raise RetryLater("post record changed", delay_s=1)
            if record.status == "resolved":
                if job.received_at < record.received_at:
                    return "superseded"
                if not await ledger.reopen(alert.group_key, self.owner):
                    raise RetryLater("reopen raced", delay_s=1)
                return await self._post_new(job, parsed, ledger)
            if set(record.fingerprints) == set(parsed.fingerprints):
                return "duplicate"
            return await self._update_group(job, parsed, record, ledger)
        if claim.takeover and self.delivery.can_update:
            # An earlier attempt may have reached Slack: find it before posting again. A read,
            # so blips are retried in place rather than sending the job back to the queue.
            try:
                found: PostRef | None = await _quick_retries()(
                    self._find_marker, self.channel_for(alert), _marker(alert), job.received_at
                )
            except BaseException:
                await ledger.release_claim(
                    alert.group_key, self.owner, owed=True, check_marker=True
                )
                raise
            if found is not None:
                await self._record(job, parsed, ledger, found, None)
                return "recovered"
        return await self._post_new(job, parsed, ledger)

    async def _post_new(self, job: Job, parsed: Parsed, ledger: Ledger) -> Outcome:
        result = await self.enrich(parsed.alert)
        message = render_message(parsed.alert, result, runbook_base_url=self.runbook_base_url)
        await self._post_claimed(job, parsed, ledger, message)
        return "posted"

    async def _record(
        self, job: Job, parsed: Parsed, ledger: Ledger, ref: PostRef, message: SlackMessage | None
    ) -> None:
        alert = parsed.alert
        if not await ledger.record_post(
            alert.group_key,
            self.owner,
            channel=ref.channel,
            ts=ref.ts,
            fingerprints=parsed.fingerprints,
            status=alert.status,
        ):
            # Our lease was taken over while we posted: the reader may see two messages.
            log.error("slack.duplicate_post", group=alert.group_key, ts=ref.ts)
            self.metrics.slack_failures.labels("duplicate_post").inc()
            return
        await ledger.update_post(
            alert.group_key,
            received_at=job.received_at,
            message=_message_json(message) if message is not None else None,
        )

    async def _update_group(
        self, job: Job, parsed: Parsed, record: PostRecord, ledger: Ledger
    ) -> Outcome:
        alert = parsed.alert
        result = await self.enrich(alert)
        message = render_message(alert, result, runbook_base_url=self.runbook_base_url)
        if self.delivery.can_update and record.ts:
            await self.delivery.update(PostRef(record.channel, record.ts), message)
            self.metrics.slack_posts.labels("update").inc()
        await ledger.update_post(
            alert.group_key,
            fingerprints=parsed.fingerprints,
            message=_message_json(message),
            received_at=job.received_at,
        )
        return "updated"

    async def _resolve(self, job: Job, parsed: Parsed, ledger: Ledger) -> Outcome:
        alert = parsed.alert
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
            message = render_message(alert, SearchResult("no_match", None))
            await self._post_claimed(job, parsed, ledger, message)
            return "resolved"
        if record.status == "resolved":
            return "duplicate"
        wait_s = await ledger.hold_resolve(alert.group_key, self.owner, self.lease_s)
        if wait_s is not None:
            # A resolve takes a second or two; a crashed holder's hold runs out on its own.
            raise RetryLater("resolve in flight", delay_s=min(5.0, wait_s + 0.5))
        try:
            return await self._resolve_posted(job, alert, ledger)
        finally:
            await ledger.release_resolve(alert.group_key, self.owner)

    async def _resolve_posted(self, job: Job, alert: Alert, ledger: Ledger) -> Outcome:
        """Edit the group's message and reply in its thread, under the group's resolve hold."""
        record = await ledger.get_post(alert.group_key)  # again: another hold may have ended
        if record is None:  # the group fired again meanwhile and is being posted anew
            return "superseded"
        if record.status == "resolved":
            return "duplicate"
        if self.delivery.can_update and record.ts:
            ref = PostRef(record.channel, record.ts)
            original = _message_from(record.message)
            await self.delivery.update(ref, render_resolved_update(alert, original))
            marker = _marker(alert)  # the group's "resolved" marker: one reply per thread
            if not await self._reply_found(ref, marker):
                await self.delivery.reply(ref, render_thread_reply(alert), marker)
            self.metrics.slack_posts.labels("resolve").inc()
        else:
            await self._post(
                alert, render_message(alert, SearchResult("no_match", None)), "", since=None
            )
        await ledger.update_post(alert.group_key, status="resolved", received_at=job.received_at)
        return "resolved"

    async def _post_claimed(
        self, job: Job, parsed: Parsed, ledger: Ledger, message: SlackMessage
    ) -> None:
        """Post under a claim we hold and record it. On failure the claim is given up: for
        good after a permanent error, else as "pending" (the job retries, a resolve waits),
        flagged for a marker lookup when Slack may have stored the message anyway."""
        alert = parsed.alert
        try:
            ref = await self._post(alert, message, _marker(alert), since=job.received_at)
        except DeliveryFailed as exc:
            await ledger.release_claim(
                alert.group_key,
                self.owner,
                owed=not exc.permanent,
                check_marker=_maybe_delivered(exc),
            )
            raise
        except BaseException:
            await ledger.release_claim(alert.group_key, self.owner, owed=True, check_marker=True)
            raise
        await self._record(job, parsed, ledger, ref, message)

    async def _post(
        self, alert: Alert, message: SlackMessage, marker: str, *, since: float | None
    ) -> PostRef:
        """chat.postMessage with quick retries for blips. A retry after a 5xx or timeout first
        looks for the marker: Slack may have stored the message and only the answer was lost."""
        channel = self.channel_for(alert)
        tries = 0

        async def attempt() -> PostRef:
            nonlocal tries
            tries += 1
            if tries > 1 and marker:
                found = await self._find_marker(channel, marker, since)
                if found is not None:
                    return found
            return await self.delivery.post(channel, message, marker)

        ref: PostRef = await _quick_retries()(attempt)
        self.metrics.slack_posts.labels("post").inc()
        return ref

    async def _reply_found(self, ref: PostRef, marker: str) -> bool:
        """Whether an earlier attempt of this resolve already replied in the thread (its
        answer lost, or the process gone before `status=resolved` was stored). Like the
        marker lookup, skipped with a warning when the history scope is missing. A read, so
        blips are retried in place rather than sending the whole resolve back to the queue."""
        try:
            found: bool = await _quick_retries()(self.delivery.find_reply, ref, marker)
            return found
        except DeliveryFailed as exc:
            _skip_lookup(exc, "slack.reply_lookup_unavailable", ref.channel, "thread replies")
            return False

    async def _find_marker(self, channel: str, marker: str, since: float | None) -> PostRef | None:
        """The marker lookup is a safeguard, not a requirement: without the history scope
        (or on any permanent error) it is skipped, with a warning, and the post goes ahead,
        accepting the rare duplicate. Transient errors propagate so the job is retried."""
        try:
            return await self.delivery.find_marker(channel, marker, since)
        except DeliveryFailed as exc:
            _skip_lookup(exc, "slack.marker_lookup_unavailable", channel, "posts")
            return None


def _skip_lookup(exc: DeliveryFailed, event: str, channel: str, what: str) -> None:
    """A lookup that failed for good is skipped with a warning; a transient failure is
    raised again so the job is retried."""
    if not exc.permanent:
        raise exc
    log.warning(
        event,
        error=str(exc),
        channel=channel,
        fix=f"grant the bot channels:history (and groups:history) to rule out duplicate "
        f"{what} after a crash",
    )


def _maybe_delivered(exc: DeliveryFailed) -> bool:
    """5xx and timeouts may have been processed by Slack; 429 and permanent errors were not."""
    return not exc.permanent and exc.retry_after is None


def _is_blip(exc: BaseException) -> bool:
    """5xx and timeouts: worth a quick retry in place. 429 waits in the queue instead (its
    Retry-After can be long and must not hold a worker), permanent errors never retry."""
    return isinstance(exc, DeliveryFailed) and _maybe_delivered(exc)


def _quick_retries() -> AsyncRetrying:
    """Up to 3 tries within about a second; after that the job goes back to the queue with
    a longer backoff (worker pool), so a Slack outage never pins a worker."""
    return AsyncRetrying(
        stop=stop_after_attempt(3),
        wait=wait_exponential_jitter(multiplier=0.2, max=1.0),
        retry=retry_if_exception(_is_blip),
        reraise=True,
    )


def _marker(alert: Alert) -> str:
    """Stored as Slack message metadata to find a post whose `ts` we failed to store."""
    return hashlib.sha256(f"{alert.group_key}|{alert.status}".encode()).hexdigest()[:32]


__all__ = ["Outcome", "Processor", "RetryLater", "backoff_s", "parse_job"]
