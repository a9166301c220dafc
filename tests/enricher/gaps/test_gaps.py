"""The runbook-gap report on a real Redis, and its digest posted to the fake Slack."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
import redis.asyncio as aioredis

from enricher.feedback.store import FeedbackStore
from enricher.gaps.digest import DIGEST_TOP, Digest, create_url, render_digest
from enricher.gaps.store import Gap, GapStore
from enricher.result import SearchResult
from enricher.slack.delivery import BotDelivery
from enricher.slack.posting import Poster
from tests.enricher.slack.test_render import make_alert, make_match
from tests.fakeslack import FakeSlack
from tests.helpers import make_vote

pytestmark = pytest.mark.anyio

DAY = 86400.0
T0 = 1_800_000_000.0
VACUUM = make_alert(alert_name="PostgresVacuumStalled", service="postgres", group_key="g1")
EXPORT = make_alert(alert_name="NightlyPartnerExportFailed", service="exports", group_key="g2")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_url)
    yield client
    await client.aclose()


def no_match(*leads: str) -> SearchResult:
    return SearchResult(
        "no_match", "global", leads=tuple(make_match(path=p, doc_id="runbooks:" + p) for p in leads)
    )


class TestGapStore:
    async def test_pages_per_alert_and_service_most_first(self, redis: aioredis.Redis) -> None:
        gaps = GapStore(redis)
        await gaps.record(EXPORT, no_match("batch/CronJobFailed.md"), at=T0)
        for day in range(3):
            await gaps.record(VACUUM, no_match(), at=T0 + day * DAY)
        await gaps.record(EXPORT, no_match("batch/CronJobFailed.md"), at=T0 + DAY)
        found = await gaps.gaps(since=T0 - DAY)
        assert [(g.alert_name, g.service, g.pages) for g in found] == [
            ("PostgresVacuumStalled", "postgres", 3),
            ("NightlyPartnerExportFailed", "exports", 2),
        ]
        assert found[0].first_seen == datetime.fromtimestamp(T0, UTC)
        assert found[0].last_seen == datetime.fromtimestamp(T0 + 2 * DAY, UTC)
        assert found[1].leads == {"batch/CronJobFailed.md": 2}

    async def test_a_window_counts_only_its_pages(self, redis: aioredis.Redis) -> None:
        gaps = GapStore(redis)
        for day in range(5):
            await gaps.record(VACUUM, no_match(), at=T0 + day * DAY)
        (gap,) = await gaps.gaps(since=T0 + 3 * DAY - 1)
        assert gap.pages == 2
        assert gap.first_seen == datetime.fromtimestamp(T0 + 3 * DAY, UTC)
        assert await gaps.gaps(since=T0 + 10 * DAY) == []

    async def test_a_retried_page_counts_once(self, redis: aioredis.Redis) -> None:
        gaps = GapStore(redis)
        await gaps.record(VACUUM, no_match(), at=T0)
        await gaps.record(VACUUM, no_match(), at=T0)
        (gap,) = await gaps.gaps(since=0)
        assert gap.pages == 1

    async def test_a_later_confirmation_is_reported(self, redis: aioredis.Redis) -> None:
        gaps, feedback = GapStore(redis), FeedbackStore(redis, page_ttl_s=3600)
        await gaps.record(EXPORT, no_match("batch/CronJobFailed.md"), at=T0)
        await feedback.vote(make_vote(EXPORT, "batch/CronJobFailed.md", at=T0 + 60))
        (gap,) = await gaps.gaps(since=0, feedback=feedback)
        assert gap.confirmed == ("runbooks:batch/CronJobFailed.md",)
        assert gap.to_json()["confirmed"] == ["runbooks:batch/CronJobFailed.md"]


def gap(name: str, pages: int, service: str | None = "postgres") -> Gap:
    at = datetime.fromtimestamp(T0, UTC)
    return Gap(name, service, pages, at, at)


class TestDigest:
    @pytest.mark.parametrize(
        ("template", "base", "url"),
        [
            (
                "https://github.com/acme/runbooks/new/main?filename={path}",
                None,
                "https://github.com/acme/runbooks/new/main?filename=postgres/Vacuum.md",
            ),
            (
                None,
                "https://git.example.com/runbooks/blob/main/",
                "https://git.example.com/runbooks/blob/main/postgres/Vacuum.md",
            ),
            (None, None, None),
            ("javascript:alert(1)//{path}", None, None),
        ],
    )
    def test_where_to_create_the_runbook(
        self, template: str | None, base: str | None, url: str | None
    ) -> None:
        assert create_url(gap("Vacuum", 1), template=template, base=base) == url

    def test_the_top_gaps_with_links(self) -> None:
        gaps = [gap(f"Alert{i}", 20 - i) for i in range(DIGEST_TOP + 2)]
        gaps.append(gap("<!channel>", 1, service=None))
        message = render_digest(gaps, days=7, template=None, base="https://git.example.com/rb")
        text = message.blocks[0]["text"]["text"]
        assert "last 7 days" in text
        assert "<https://git.example.com/rb/postgres/Alert0.md|create postgres/Alert0.md>" in text
        assert "20 pages" in text and "Alert11" not in text
        assert "and 3 more" in text
        assert "<!channel>" not in text

    def test_no_gaps_says_so(self) -> None:
        message = render_digest([], days=7, template=None, base=None)
        assert "No runbook gaps" in message.text

    async def test_one_digest_per_interval(
        self, redis: aioredis.Redis, fake_slack: FakeSlack
    ) -> None:
        """Posted once; a second replica (or a restart) within the interval posts nothing."""
        gaps, feedback = GapStore(redis), FeedbackStore(redis, page_ttl_s=3600)
        await gaps.record(VACUUM, no_match(), at=T0)
        poster = Poster(BotDelivery("xoxb-test", fake_slack.url))
        digests = [
            Digest(
                redis,
                gaps,
                feedback,
                poster,
                channel="C0GAPS",
                interval_s=7 * DAY,
                template=None,
                base=None,
            )
            for _ in range(2)
        ]
        try:
            assert await digests[0].send_if_due(now=T0 + DAY)
            assert not await digests[1].send_if_due(now=T0 + DAY + 60)
        finally:
            await poster.close()
        (post,) = [c.body for c in fake_slack.calls_to("chat.postMessage") if c.ok]
        assert post["channel"] == "C0GAPS"
        assert "PostgresVacuumStalled" in post["blocks"][0]["text"]["text"]
