"""What each alert did before, per alert name and service, for the page's "Last time" line
(enricher.slack.history). Recorded by the service itself: its posts, its resolves; the
votes come from the feedback store.

    rbe:hist:<sha256(name, service)>        zset: one member per page, scored by when its
                                            webhook arrived; at most CAP members
    rbe:hist:<sha256(name, service)>:last   hash: url (the last page's permalink, made from
                                            channel and ts, no Slack call), resolved_s

Both expire TTL_S after their last write, so memory is bounded per key (CAP) and in time.
Reading is one round trip (two ZCOUNTs, O(log n), and an HMGET): measured by
scripts/bench_history.py at 10k entries. It needs nothing the search finds, so the
processor reads while the search runs, and the votes come later from the tallies the search
read anyway (`Seen.history`). Times are the jobs' own (`received_at`), never the clock of
the reader, so a re-run of a job reads what the first run read.

Redis failing here is logged and the line left out: it never holds a page back.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
import structlog
from redis.exceptions import RedisError

from enricher.alert import Alert
from enricher.search.feedback import Tallies
from enricher.slack.delivery import PostRef
from enricher.slack.history import History

log = structlog.get_logger(__name__)

WEEK_S = 7 * 86400
HOUR_S = 3600
#: Pages kept per alert: 7 days of one every minute, and then some.
CAP = 10_000
TTL_S = 8 * 86400
SLACK_URL = "https://slack.com"


def permalink(ref: PostRef, workspace_url: str = SLACK_URL) -> str:
    """A message's link made from its channel and ts (`/archives/<channel>/p<ts digits>`),
    as chat.getPermalink would answer it, without the call."""
    return f"{workspace_url.rstrip('/')}/archives/{ref.channel}/p{ref.ts.replace('.', '')}"


@dataclass(frozen=True)
class Seen:
    """What Redis holds for an alert as of one page, before the page's runbook is known."""

    fired_week: int
    fired_hour: int
    resolved_after_s: float | None
    previous_url: str

    def history(self, doc_id: str | None, tallies: Tallies) -> History:
        """The page's history, with on-call's votes for its runbook `doc_id`."""
        tally = tallies.get(doc_id) if doc_id else None
        return History(
            fired_week=self.fired_week,
            fired_hour=self.fired_hour,
            resolved_after_s=self.resolved_after_s,
            right=tally.right if tally else 0,
            wrong=tally.wrong if tally else 0,
            voted=tally is not None,
            previous_url=self.previous_url,
        )


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class PageHistory:
    def __init__(self, redis: aioredis.Redis, *, prefix: str = "rbe:hist:") -> None:
        self.redis = redis
        self.prefix = prefix

    def key(self, alert: Alert) -> str | None:
        if not alert.alert_name:
            return None
        who = f"{alert.alert_name}\0{alert.service or ''}"
        return self.prefix + hashlib.sha256(who.encode()).hexdigest()

    async def read(self, alert: Alert, at: float) -> Seen | None:
        """The alert's history as of `at` (this page's own time), this page counted in."""
        key = self.key(alert)
        if key is None:
            return None
        try:
            pipe = self.redis.pipeline(transaction=False)
            pipe.zcount(key, at - WEEK_S, "+inf")
            pipe.zcount(key, at - HOUR_S, "+inf")
            pipe.hmget(key + ":last", "url", "resolved_s")
            week, hour, (url, resolved) = await pipe.execute()
        except RedisError as exc:
            log.warning("history.unreadable", alert=alert.alert_name, error=type(exc).__name__)
            return None
        return Seen(
            fired_week=int(week) + 1,
            fired_hour=int(hour) + 1,
            resolved_after_s=float(_text(resolved)) if resolved else None,
            previous_url=_text(url) if url else "",
        )

    async def fired(self, alert: Alert, at: float, group_key: str, ref: PostRef) -> None:
        """A page went out: count it, and keep its link for the next one."""
        key = self.key(alert)
        if key is None:
            return
        member = f"{hashlib.sha256(group_key.encode()).hexdigest()[:12]}:{at!r}"
        try:
            pipe = self.redis.pipeline(transaction=True)
            pipe.zadd(key, {member: at})
            pipe.zremrangebyrank(key, 0, -CAP - 1)
            pipe.expire(key, TTL_S)
            if ref.ts:
                pipe.hset(key + ":last", "url", permalink(ref))
            pipe.expire(key + ":last", TTL_S)
            await pipe.execute()
        except RedisError as exc:
            log.warning("history.unrecorded", alert=alert.alert_name, error=type(exc).__name__)

    async def resolved(self, alert: Alert, lasted_s: float) -> None:
        key = self.key(alert)
        if key is None:
            return
        try:
            pipe = self.redis.pipeline(transaction=True)
            pipe.hset(key + ":last", "resolved_s", repr(max(0.0, lasted_s)))
            pipe.expire(key + ":last", TTL_S)
            await pipe.execute()
        except RedisError as exc:
            log.warning("history.unrecorded", alert=alert.alert_name, error=type(exc).__name__)
