"""Updating a page after a vote: its votes lines rewritten (chat.update), off the request.

The click's answer cannot wait for Slack (3 s), so intake stores what to update in Redis
(`rbe:fb:dirty`: page -> channel, ts and the message as Slack showed it) and queues the
page here. One task updates pages one at a time, each from all of the page's votes at that
moment (enricher.slack.votes.with_votes), so the last update of a page shows every vote
however the clicks interleaved. An entry is deleted only if no newer click replaced it
meanwhile. Entries left by a stopped process are updated when the next one starts; a
transient Slack failure is retried with backoff, a permanent one is logged and dropped.
"""

from __future__ import annotations

import asyncio
import json
import random
from contextlib import suppress
from typing import Any

import redis.asyncio as aioredis
import structlog
from redis.exceptions import RedisError

from enricher.errors import DeliveryFailed
from enricher.feedback.store import FeedbackStore, page_id, text
from enricher.slack.delivery import PostRef
from enricher.slack.posting import Poster
from enricher.slack.render import SlackMessage
from enricher.slack.votes import with_votes

log = structlog.get_logger(__name__)

DIRTY = "rbe:fb:dirty"
#: Attempts of one update before it is left for the next process start.
MAX_ATTEMPTS = 8
MAX_BACKOFF_S = 60.0
#: How long a stop waits for a cancelled background task before leaving it behind.
STOP_WAIT_S = 5.0


async def stop_task(task: asyncio.Task[None] | None, what: str) -> None:
    """Cancel a background task and wait for it, at most STOP_WAIT_S: a task that does not
    end (one swallowed its cancellation inside a client library) must not hold up the
    service's shutdown. What it was doing is in Redis and is picked up at the next start."""
    if task is None or task.done():
        return
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=STOP_WAIT_S)
    if not done:
        log.warning("service.task_left_running", task=what, waited_s=STOP_WAIT_S)

_DONE = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0
"""


class MessageUpdater:
    def __init__(self, redis: aioredis.Redis, store: FeedbackStore, poster: Poster) -> None:
        self.redis = redis
        self.store = store
        self.poster = poster
        self._done = redis.register_script(_DONE)
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._attempts: dict[str, int] = {}
        self._task: asyncio.Task[None] | None = None

    async def schedule(self, ref: PostRef, shown: SlackMessage) -> None:
        """Remember the update in Redis, then queue it (raises RedisError when Redis is down)."""
        entry = {"channel": ref.channel, "ts": ref.ts, "message": shown.to_kwargs()}
        page = page_id(ref)
        await self.redis.hset(DIRTY, page, json.dumps(entry))
        self._queue.put_nowait(page)

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="feedback-updater")
        try:
            left: Any = await self.redis.hkeys(DIRTY)
        except RedisError as exc:
            log.warning("feedback.updates_unreadable", error=type(exc).__name__)
            return
        for page in left:
            self._queue.put_nowait(text(page))

    async def stop(self) -> None:
        await stop_task(self._task, "feedback-updater")

    async def update(self, page: str) -> None:
        """Rewrite one page's votes lines, if an update is still waiting for it."""
        raw = await self.redis.hget(DIRTY, page)
        if raw is None:
            return
        entry = json.loads(raw)
        ref = PostRef(str(entry["channel"]), str(entry["ts"]))
        shown = entry["message"]
        message = SlackMessage(
            str(shown.get("text", "")), list(shown["blocks"]), list(shown.get("attachments", []))
        )
        await self.poster.update(ref, with_votes(message, await self.store.page_votes(ref)))
        await self._done(keys=[DIRTY], args=[page, raw])
        log.info("feedback.message_updated", channel=ref.channel, ts=ref.ts)

    async def _run(self) -> None:
        while True:
            page = await self._queue.get()
            try:
                await self.update(page)
                self._attempts.pop(page, None)
            except DeliveryFailed as exc:
                if exc.permanent:
                    log.error("feedback.update_failed", page=page, error=str(exc))
                    self._attempts.pop(page, None)
                    with suppress(RedisError):
                        await self.redis.hdel(DIRTY, page)
                else:
                    self._retry(page, str(exc), exc.retry_after)
            except RedisError as exc:
                self._retry(page, type(exc).__name__, None)

    def _retry(self, page: str, error: str, retry_after: float | None) -> None:
        attempts = self._attempts.get(page, 0) + 1
        if attempts >= MAX_ATTEMPTS:
            log.error(
                "feedback.update_postponed",
                page=page,
                error=error,
                attempts=attempts,
                fix="it is retried when the service next starts",
            )
            self._attempts.pop(page, None)
            return
        self._attempts[page] = attempts
        delay = retry_after or min(MAX_BACKOFF_S, 2.0**attempts) * (0.5 + random.random() / 2)
        log.warning("feedback.update_retry", page=page, error=error, delay_s=round(delay, 1))
        asyncio.get_running_loop().call_later(delay, self._queue.put_nowait, page)


__all__ = ["DIRTY", "MessageUpdater"]
