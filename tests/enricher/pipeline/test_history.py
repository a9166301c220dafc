"""The history store on a real Redis (enricher.pipeline.history): counts by the jobs' own
times, bounded per key (CAP) and in time (TTL_S)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from enricher.alert import Alert
from enricher.pipeline.history import CAP, HOUR_S, TTL_S, WEEK_S, PageHistory, permalink
from enricher.search.feedback import Tally
from enricher.slack.delivery import PostRef

pytestmark = pytest.mark.anyio
AT = 1_800_000_000.0
ALERT = Alert(source="alertmanager", status="firing", alert_name="DiskFull", service="db",
              severity="critical", summary="", description="", group_key="g1")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    redis = aioredis.Redis.from_url(redis_url)
    yield redis
    await redis.aclose()


class TestPageHistory:
    async def test_counts_the_week_and_the_hour_by_the_pages_own_times(
        self, client: aioredis.Redis
    ) -> None:
        history = PageHistory(client)
        for n, at in enumerate([AT - WEEK_S - 1, AT - 2 * HOUR_S, AT - 60, AT - 30]):
            await history.fired(ALERT, at, f"g{n}", PostRef("C1", f"{at:.6f}"))
        await history.resolved(ALERT, 720.0)
        seen = await history.read(ALERT, AT)
        assert seen is not None
        assert (seen.fired_week, seen.fired_hour) == (4, 3), "this page counted in"
        assert seen.resolved_after_s == 720.0
        assert seen.previous_url == permalink(PostRef("C1", f"{AT - 30:.6f}"))
        page = seen.history("d", {"d": Tally(3, 1), "other": Tally(9, 9)})
        assert (page.right, page.wrong, page.voted) == (3, 1, True)
        assert (page.fired_week, page.previous_url) == (4, seen.previous_url)
        unvoted = seen.history("e", {"d": Tally(3, 1)})
        assert (unvoted.right, unvoted.wrong, unvoted.voted) == (0, 0, False)
        assert seen.history(None, {"d": Tally(3, 1)}).voted is False

    async def test_a_rerun_of_the_same_page_counts_once(self, client: aioredis.Redis) -> None:
        history = PageHistory(client)
        for _ in range(2):
            await history.fired(ALERT, AT, "g1", PostRef("C1", "1.000001"))
        seen = await history.read(ALERT, AT + 1)
        assert seen is not None and seen.fired_week == 2

    async def test_bounded_per_key_and_in_time(self, client: aioredis.Redis) -> None:
        history = PageHistory(client)
        key = history.key(ALERT)
        assert key is not None
        await client.zadd(key, {f"old{n}": AT - n for n in range(CAP + 50)})
        await history.fired(ALERT, AT + 1, "g1", PostRef("C1", "1.000001"))
        assert await client.zcard(key) == CAP
        assert 0 < await client.ttl(key) <= TTL_S
        assert 0 < await client.ttl(key + ":last") <= TTL_S

    async def test_an_alert_without_a_name_has_no_history(self, client: aioredis.Redis) -> None:
        nameless = Alert(source="pagerduty", status="firing", alert_name="", service=None,
                         severity=None, summary="", description="")
        history = PageHistory(client)
        await history.fired(nameless, AT, "g", PostRef("C1", "1.0"))
        assert await history.read(nameless, AT) is None
        assert await client.dbsize() == 0


def test_permalink_is_made_from_channel_and_ts() -> None:
    assert permalink(PostRef("C0ONCALL", "1700000000.000100")) == (
        "https://slack.com/archives/C0ONCALL/p1700000000000100"
    )
