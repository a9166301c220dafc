"""The page update after a vote, on a real Redis and the fake Slack: done by the next
process when this one stopped first, retried after a Slack error, all votes shown."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import redis.asyncio as aioredis

from enricher.feedback.store import FeedbackStore
from enricher.feedback.updater import DIRTY, MessageUpdater
from enricher.result import SearchResult
from enricher.slack.delivery import BotDelivery, PostRef
from enricher.slack.posting import Poster
from enricher.slack.render import SlackMessage, render_message
from tests.enricher.slack.test_render import make_alert, make_match
from tests.fakeslack import FakeSlack
from tests.helpers import make_vote

pytestmark = pytest.mark.anyio

CHANNEL = "C0ONCALL"
ALERT = make_alert()
MATCH = make_match()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def parts(
    redis_url: str, fake_slack: FakeSlack
) -> AsyncIterator[tuple[aioredis.Redis, FeedbackStore, Poster]]:
    client = aioredis.Redis.from_url(redis_url)
    poster = Poster(BotDelivery("xoxb-test", fake_slack.url))
    yield client, FeedbackStore(client, page_ttl_s=3600), poster
    await poster.close()
    await client.aclose()


async def until(
    predicate: Callable[[], Awaitable[bool]], what: str, timeout_s: float = 20.0
) -> None:
    """Poll; the timeout only bounds a hung test."""
    for _ in range(int(timeout_s / 0.05)):
        if await predicate():
            return
        await asyncio.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def done(redis: aioredis.Redis) -> Callable[[], Awaitable[bool]]:
    """Whether no update is waiting any more (its entry is deleted after chat.update)."""

    async def check() -> bool:
        return int(await redis.hlen(DIRTY)) == 0

    return check


async def posted_page(
    store: FeedbackStore, poster: Poster, users: list[str]
) -> tuple[PostRef, SlackMessage]:
    message = render_message(ALERT, SearchResult("matched", "global", matches=(MATCH,)))
    ref = await poster.post(CHANNEL, message, "", since=None)
    for user in users:
        vote = make_vote(ALERT, MATCH.path, user=user, ts=ref.ts)
        await store.vote(vote.model_copy(update={"channel": ref.channel}))
    return ref, message


def updates(fake: FakeSlack) -> list[str]:
    return [json.dumps(c.body, ensure_ascii=False) for c in fake.calls_to("chat.update") if c.ok]


async def test_the_next_process_finishes_an_update(
    parts: tuple[aioredis.Redis, FeedbackStore, Poster], fake_slack: FakeSlack
) -> None:
    """Scheduled by a process that stopped before doing it: the next one does it on start."""
    redis, store, poster = parts
    ref, message = await posted_page(store, poster, ["U01ANA", "U02BOB"])
    await MessageUpdater(redis, store, poster).schedule(ref, message)  # never started
    assert updates(fake_slack) == []
    successor = MessageUpdater(redis, store, poster)
    await successor.start()
    try:
        await until(done(redis), "the update")
    finally:
        await successor.stop()
    (update,) = updates(fake_slack)
    assert "✔ confirmed by <@U01ANA>, <@U02BOB>" in update


async def test_a_slack_error_is_retried(
    parts: tuple[aioredis.Redis, FeedbackStore, Poster], fake_slack: FakeSlack
) -> None:
    redis, store, poster = parts
    ref, message = await posted_page(store, poster, ["U01ANA"])
    fake_slack.fail_next(1, status=500, method="chat.update")
    updater = MessageUpdater(redis, store, poster)
    await updater.start()
    try:
        await updater.schedule(ref, message)
        await until(done(redis), "the retried update")
    finally:
        await updater.stop()
    assert len([c for c in fake_slack.calls_to("chat.update") if not c.ok]) == 1
    assert len(updates(fake_slack)) == 1
