"""Gaps in Redis: per (alert name, service), when it paged with no confident match.

Keys (`<gap>` is a digest of the alert name's `name_key` and the service):

    rbe:gap:<gap>          hash: alert_name, service (as last seen)
    rbe:gap:<gap>:pages    zset: page (group key and arrival) -> epoch seconds
    rbe:gap:<gap>:leads    hash: lead runbook path -> pages it was offered on
    rbe:gaps               zset: <gap> -> last page, epoch seconds

Pages are members keyed by their group and arrival, so a retried job counts once; pages
older than RETENTION_S are trimmed at each write and every key expires RETENTION_S after
its last one. A window (`--days`) counts the pages inside it, first and last seen too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as aioredis

from enricher.alert import Alert
from enricher.feedback.store import FeedbackStore, read_hash, text
from enricher.result import SearchResult
from enricher.search.names import name_key

RETENTION_S = 90 * 86400
_GAPS = "rbe:gaps"


@dataclass(frozen=True)
class Gap:
    alert_name: str
    service: str | None
    pages: int
    first_seen: datetime
    last_seen: datetime
    #: Runbooks offered as leads (not confident), path -> pages, most offered first.
    leads: Mapping[str, int] = field(default_factory=dict)
    #: Runbooks on-call has since confirmed for the alert name (doc ids).
    confirmed: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        """Where its runbook would live by convention: `<service>/<AlertName>.md`."""
        return f"{self.service or 'unknown-service'}/{self.alert_name or 'UnnamedAlert'}.md"

    def to_json(self) -> dict[str, object]:
        return {
            "alert_name": self.alert_name,
            "service": self.service,
            "pages": self.pages,
            "first_seen": self.first_seen.isoformat(),
            "last_seen": self.last_seen.isoformat(),
            "leads": dict(self.leads),
            "confirmed": list(self.confirmed),
            "runbook_path": self.path,
        }


def _gap_id(alert_name: str, service: str | None) -> str:
    return hashlib.sha256(f"{name_key(alert_name)}|{service or ''}".encode()).hexdigest()[:32]


def ranked(gaps: list[Gap]) -> list[Gap]:
    """Most pages first; ties by the latest page."""
    return sorted(gaps, key=lambda g: (-g.pages, -g.last_seen.timestamp(), g.alert_name))


def _utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


class GapStore:
    """Raises `redis.exceptions.RedisError` when Redis is down; the processor logs it and
    posts the page anyway."""

    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis

    async def record(self, alert: Alert, result: SearchResult, *, at: float) -> None:
        gap = _gap_id(alert.alert_name, alert.service)
        base = f"rbe:gap:{gap}"
        page = hashlib.sha256(f"{alert.group_key}|{at!r}".encode()).hexdigest()[:24]
        async with self.redis.pipeline(transaction=True) as pipe:
            meta = {"alert_name": alert.alert_name, "service": alert.service or ""}
            pipe.hset(base, mapping=meta)  # type: ignore[arg-type]
            pipe.zadd(f"{base}:pages", {page: at})
            pipe.zremrangebyscore(f"{base}:pages", "-inf", at - RETENTION_S)
            for lead in result.leads:
                pipe.hincrby(f"{base}:leads", lead.path, 1)
            pipe.zadd(_GAPS, {gap: at})
            pipe.zremrangebyscore(_GAPS, "-inf", at - RETENTION_S)
            for key in (base, f"{base}:pages", f"{base}:leads", _GAPS):
                pipe.expire(key, RETENTION_S)
            await pipe.execute()

    async def gaps(self, *, since: float, feedback: FeedbackStore | None = None) -> list[Gap]:
        """Every gap with a page since `since` (epoch s), counted inside the window, ranked."""
        out: list[Gap] = []
        found: Any = await self.redis.zrangebyscore(_GAPS, since, "+inf")
        for gap in found:
            base = f"rbe:gap:{text(gap)}"
            meta = await read_hash(self.redis, base)
            pages: Any = await self.redis.zrangebyscore(
                f"{base}:pages", since, "+inf", withscores=True
            )
            if not meta or not pages:
                continue
            name = meta.get("alert_name", "")
            leads = {k: int(v) for k, v in (await read_hash(self.redis, f"{base}:leads")).items()}
            confirmed: tuple[str, ...] = ()
            if feedback is not None:
                tallies = await feedback.tallies(name)
                confirmed = tuple(doc for doc, t in tallies.items() if t.net > 0)
            times = [float(score) for _, score in pages]
            out.append(
                Gap(
                    alert_name=name,
                    service=meta.get("service") or None,
                    pages=len(pages),
                    first_seen=_utc(min(times)),
                    last_seen=_utc(max(times)),
                    leads=dict(sorted(leads.items(), key=lambda kv: (-kv[1], kv[0]))),
                    confirmed=confirmed,
                )
            )
        return ranked(out)


__all__ = ["RETENTION_S", "Gap", "GapStore", "ranked"]
