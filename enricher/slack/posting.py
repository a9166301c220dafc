"""Slack calls that survive lost answers: quick retries, and markers to find what got through.

Slack can store a message and still answer 5xx or time out. Each top-level post therefore
carries a marker in its metadata (`marker`), and a retry first looks for it; a resolve's
thread reply is looked for the same way before it is sent. The lookups need the history
scopes: without them (or on any permanent error) they are skipped with a warning, and the
rare duplicate after a crash is accepted.

Retries here are short (about a second in all). A longer outage sends the job back to the
queue with a longer backoff (enricher.pipeline.pool), so no worker is pinned by Slack.

A delivery that cannot look (incoming webhook, console) makes one try per call: a retry in
place would be blind, and the ledger's note of the output (enricher.pipeline.ledger) must
be cleared between tries, which the queue's retry does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

import structlog
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from enricher.errors import DeliveryFailed
from enricher.slack.delivery import Delivery, OnSent, PostRef
from enricher.slack.health import DeliveryHealth
from enricher.slack.render import SlackMessage

log = structlog.get_logger(__name__)

T = TypeVar("T")
P = ParamSpec("P")


def marker(group_key: str, status: str) -> str:
    """Stored as Slack message metadata to find a post whose `ts` we failed to store."""
    return hashlib.sha256(f"{group_key}|{status}".encode()).hexdigest()[:32]


class Poster:
    """A `Delivery` behind quick retries and marker lookups, its writes watched by `health`."""

    def __init__(self, delivery: Delivery, *, unready_after: int = 3) -> None:
        self.delivery = delivery
        self.health = DeliveryHealth(unready_after)

    @property
    def can_update(self) -> bool:
        return self.delivery.can_update

    @property
    def can_find(self) -> bool:
        return self.delivery.can_find

    async def post(
        self,
        channel: str,
        message: SlackMessage,
        mark: str,
        *,
        since: float | None,
        on_sent: OnSent | None = None,
    ) -> PostRef:
        """chat.postMessage. A retry after a 5xx or timeout first looks for `mark`: Slack
        may have stored the message and only the answer was lost. No mark: no lookup.
        `on_sent`: see `Delivery` (called by deliveries without lookups)."""
        tries = 0

        async def attempt() -> PostRef:
            nonlocal tries
            tries += 1
            if tries > 1 and mark:
                found = await self._lookup_marker(channel, mark, since)
                if found is not None:
                    return found
            return await self.delivery.post(channel, message, mark, on_sent=on_sent)

        with self.health.watch():
            if not self.can_find:
                return await attempt()
            return await _quickly(attempt)

    async def update(self, ref: PostRef, message: SlackMessage) -> None:
        with self.health.watch():
            await self.delivery.update(ref, message)

    async def find_marker(self, channel: str, mark: str, since: float | None) -> PostRef | None:
        """The post an earlier attempt may have made. A read, so blips are retried in place
        rather than sending the job back to the queue."""
        return await _quickly(self._lookup_marker, channel, mark, since)

    async def reply_once(
        self,
        ref: PostRef,
        text: str,
        mark: str,
        *,
        broadcast: bool = False,
        on_sent: OnSent | None = None,
    ) -> None:
        """Reply in the thread unless an earlier attempt already did (its answer lost, or
        the process gone before that was stored). Without lookups the caller's ledger
        note (`on_sent`) does that instead."""
        if not self.can_find:
            with self.health.watch():
                await self.delivery.reply(ref, text, mark, broadcast=broadcast)
            if on_sent is not None:
                await on_sent()
            return
        try:
            found = await _quickly(self.delivery.find_reply, ref, mark)
        except DeliveryFailed as exc:
            _skip_lookup(exc, "slack.reply_lookup_unavailable", ref.channel, "thread replies")
            found = False
        if not found:
            with self.health.watch():
                await self.delivery.reply(ref, text, mark, broadcast=broadcast)

    async def close(self) -> None:
        await self.delivery.close()

    async def _lookup_marker(self, channel: str, mark: str, since: float | None) -> PostRef | None:
        try:
            return await self.delivery.find_marker(channel, mark, since)
        except DeliveryFailed as exc:
            _skip_lookup(exc, "slack.marker_lookup_unavailable", channel, "posts")
            return None


def _skip_lookup(exc: DeliveryFailed, event: str, channel: str, what: str) -> None:
    """A lookup that failed for good is skipped with a warning; a transient failure is
    raised again so the caller retries."""
    if not exc.permanent:
        raise exc
    log.warning(
        event,
        error=str(exc),
        channel=channel,
        fix=f"grant the bot channels:history (and groups:history) to rule out duplicate "
        f"{what} after a crash",
    )


def _is_blip(exc: BaseException) -> bool:
    """5xx and timeouts: worth a quick retry in place. 429 waits in the queue instead (its
    Retry-After can be long and must not hold a worker), permanent errors never retry."""
    return isinstance(exc, DeliveryFailed) and exc.maybe_delivered


async def _quickly(call: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
    """`await call(*args)`, up to 3 tries within about a second. (`call` must be a coroutine
    function: tenacity would not await what a plain callable returns.)"""
    retrying = AsyncRetrying(
        stop=stop_after_attempt(3),
        wait=wait_exponential_jitter(multiplier=0.2, max=1.0),
        retry=retry_if_exception(_is_blip),
        reraise=True,
    )
    result: T = await retrying(call, *args, **kwargs)
    return result


__all__ = ["Poster", "marker"]
