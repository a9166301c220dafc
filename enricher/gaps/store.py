"""Gaps in Redis: per (alert name, service), when it paged with no confident match.

Keys (`<gap>` is a digest of the alert name's `name_key` and the service):

    rbe:gap:<gap>          hash: alert_name, service (as last seen)
    rbe:gap:<gap>:pages    zset: page (group key and arrival) -> epoch seconds
    rbe:gap:<gap>:leads    hash: lead runbook path -> pages it was offered on
    rbe:gaps               zset: <gap> -> last page, epoch seconds
    rbe:gaps:audited       hash: name_key(alert name) -> {"file", "at"}: rules the runbook
                           audit (`python -m enricher.audit`) found no runbook for

Pages are members keyed by their group and arrival, so a retried job counts once; pages
older than RETENTION_S are trimmed at each write and every key expires RETENTION_S after
its last one. A window (`--days`) counts the pages inside it, first and last seen too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
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
_AUDITED = "rbe:gaps:audited"


@dataclass(frozen=True)
class Audited:
    """The runbook audit called the alert's rule "no runbook" before it paged."""

    rule_file: str
    at: datetime


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
    #: Known before it paged: the last audit found no runbook for its rule.
    audited: Audited | None = None

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
            "audited": (
                {"rule_file": self.audited.rule_file, "at": self.audited.at.isoformat()}
                if self.audited
                else None
            ),
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

    async def mark_audited(
        self, missing: Mapping[str, str], covered: Iterable[str], *, at: float
    ) -> None:
        """What an audit found: `missing` maps alert names with no runbook to their rule file;
        the marks of `covered` names (a runbook found for every rule of that name) go."""
        keys = {name_key(name): file for name, file in missing.items()}
        cleared = {name_key(name) for name in covered} - set(keys)
        async with self.redis.pipeline(transaction=True) as pipe:
            if keys:
                marks = {k: json.dumps({"file": f, "at": at}) for k, f in keys.items()}
                pipe.hset(_AUDITED, mapping=marks)  # type: ignore[arg-type]
            if cleared:
                pipe.hdel(_AUDITED, *cleared)
            pipe.expire(_AUDITED, RETENTION_S)
            await pipe.execute()

    async def _audited(self, alert_name: str) -> Audited | None:
        raw: Any = await self.redis.hget(_AUDITED, name_key(alert_name))
        if raw is None:
            return None
        mark = json.loads(text(raw))
        return Audited(rule_file=str(mark["file"]), at=_utc(float(mark["at"])))

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
                    audited=await self._audited(name),
                )
            )
        return ranked(out)


__all__ = ["RETENTION_S", "Audited", "Gap", "GapStore", "ranked"]
