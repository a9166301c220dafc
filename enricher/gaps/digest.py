"""The runbook-gap digest: the top gaps of the last interval, posted to a Slack channel.

With GAP_REPORT_CHANNEL set, the service posts it every GAP_REPORT_INTERVAL_S (weekly by
default), each gap with a link to create its runbook at the conventional path. One
replica sends each digest: the send is claimed in Redis for the interval (`SET NX EX`),
so a restart or a second replica does not repeat it, and a failed send gives the claim up.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import suppress
from urllib.parse import quote

import redis.asyncio as aioredis
import structlog
from redis.exceptions import RedisError

from enricher.errors import DeliveryFailed
from enricher.feedback.store import FeedbackStore
from enricher.feedback.updater import stop_task
from enricher.gaps.store import Gap, GapStore
from enricher.slack.posting import Poster
from enricher.slack.render import SlackMessage
from enricher.slack.text import cut, is_http_url, link, literal, safe_line

log = structlog.get_logger(__name__)

DIGEST_TOP = 10
_CLAIM = "rbe:gaps:digest"
#: How often a running service checks whether a digest is due.
CHECK_S = 3600.0


def create_url(gap: Gap, *, template: str | None, base: str | None) -> str | None:
    """Where to create the gap's runbook: the template with `{path}`, else its would-be
    address under the runbook base URL; None without either (or when not http/https)."""
    path = quote(gap.path, safe="/")
    if template:
        url = template.replace("{path}", path)
    elif base:
        url = base.rstrip("/") + "/" + path
    else:
        return None
    return url if is_http_url(url) else None


def render_digest(
    gaps: list[Gap], *, days: float, template: str | None, base: str | None
) -> SlackMessage:
    """The digest message: a header line, then one line per gap (at most DIGEST_TOP)."""
    span = f"{days:g} day{'s' if days != 1 else ''}"
    if not gaps:
        text = f"📚 No runbook gaps in the last {span}: every page had a confident match."
        return SlackMessage(text, [{"type": "section", "text": {"type": "mrkdwn", "text": text}}])
    head = f"📚 *Runbook gaps, last {span}*: alerts that paged with no confident runbook"
    lines = [head]
    for gap in gaps[:DIGEST_TOP]:
        name = literal(gap.alert_name or "unnamed alert", 120)
        service = literal(gap.service or "no service", 60)
        pages = f"{gap.pages} page{'s' if gap.pages != 1 else ''}"
        line = f"• {name} ({service}): {pages}"
        url = create_url(gap, template=template, base=base)
        where = link(url, "create " + gap.path) if url else f"`{safe_line(gap.path, 200)}`"
        line += " · " + where
        if gap.confirmed:
            line += " · _on-call confirmed " + safe_line(", ".join(gap.confirmed[:2]), 200) + "_"
        lines.append(line)
    if len(gaps) > DIGEST_TOP:
        lines.append(f"_and {len(gaps) - DIGEST_TOP} more: `python -m enricher.gaps`_")
    text = cut("\n".join(lines), 3000)
    fallback = f"Runbook gaps, last {span}: {len(gaps)} alert(s) paged without a runbook"
    return SlackMessage(fallback, [{"type": "section", "text": {"type": "mrkdwn", "text": text}}])


class Digest:
    def __init__(
        self,
        redis: aioredis.Redis,
        gaps: GapStore,
        feedback: FeedbackStore,
        poster: Poster,
        *,
        channel: str,
        interval_s: float,
        template: str | None,
        base: str | None,
    ) -> None:
        self.redis = redis
        self.gaps = gaps
        self.feedback = feedback
        self.poster = poster
        self.channel = channel
        self.interval_s = interval_s
        self.template = template
        self.base = base
        self._task: asyncio.Task[None] | None = None

    async def send_if_due(self, now: float | None = None) -> bool:
        """Post the digest unless one went out within the interval; True when posted."""
        now = time.time() if now is None else now
        if not await self.redis.set(_CLAIM, str(now), nx=True, ex=int(self.interval_s)):
            return False
        try:
            gaps = await self.gaps.gaps(since=now - self.interval_s, feedback=self.feedback)
            message = render_digest(
                gaps, days=self.interval_s / 86400, template=self.template, base=self.base
            )
            await self.poster.post(self.channel, message, "", since=None)
        except (DeliveryFailed, RedisError):
            with suppress(RedisError):
                await self.redis.delete(_CLAIM)
            raise
        log.info("gaps.digest_sent", channel=self.channel, gaps=len(gaps))
        return True

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="gap-digest")

    async def stop(self) -> None:
        await stop_task(self._task, "gap-digest")

    async def _run(self) -> None:
        while True:
            try:
                await self.send_if_due()
            except (DeliveryFailed, RedisError) as exc:
                log.warning(
                    "gaps.digest_failed",
                    error=str(exc) or type(exc).__name__,
                    fix="retried within the hour",
                )
            await asyncio.sleep(min(self.interval_s, CHECK_S))


__all__ = ["DIGEST_TOP", "Digest", "create_url", "render_digest"]
