"""Votes on a real Redis: one per user per page, tallies that follow, reset; the export."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
import redis.asyncio as aioredis

from enricher.feedback.export import cases, webhook_body
from enricher.feedback.store import FeedbackStore, Vote, page_id
from enricher.search.feedback import Tally
from enricher.slack.buttons import Verdict
from enricher.slack.delivery import PostRef
from enricher.slack.votes import PageVote
from enricher.sources import Parsed, parse_body
from quality.cases import Case, parse_case
from tests.enricher.slack.test_render import make_alert
from tests.helpers import make_vote

pytestmark = pytest.mark.anyio

ALERT = make_alert(
    alert_name="PGReplicaBehind",
    service="orders-db",
    labels={"alertname": "PGReplicaBehind", "service": "orders-db", "namespace": "db"},
    group_key='{}:{alertname="PGReplicaBehind"}',
    starts_at=datetime(2026, 11, 28, 3, 0, tzinfo=UTC),
    link="http://prometheus.example/graph?g0.expr=pg_replication_lag_seconds%20%3E%2030",
    metrics=("pg_replication_lag_seconds",),
)
LAG = "golden:postgres/PostgresReplicationLag.md"
DISK = "golden:postgres/PostgresDiskFull.md"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[FeedbackStore]:
    client = aioredis.Redis.from_url(redis_url)
    yield FeedbackStore(client, page_ttl_s=3600)
    await client.aclose()


def vote(user: str, doc: str, verdict: Verdict, *, ts: str = "1.1") -> Vote:
    source, _, path = doc.partition(":")
    return make_vote(ALERT, path, verdict, user=user, ts=ts, source=source)


class TestVotes:
    async def test_one_vote_per_user_per_page(self, store: FeedbackStore) -> None:
        """A second click changes the vote; the tallies always equal the stored votes."""
        assert await store.vote(vote("U1", LAG, "wrong")) == "new"
        assert await store.vote(vote("U1", LAG, "wrong")) == "same"
        assert await store.tallies("PGReplicaBehind") == {LAG: Tally(0, 1)}
        assert await store.vote(vote("U1", DISK, "right")) == "changed"
        assert await store.tallies("pg_replica_behind") == {DISK: Tally(1, 0)}
        assert await store.page_votes(PostRef("C1", "1.1")) == [PageVote("U1", DISK, "right")]

    async def test_users_and_pages_add_up(self, store: FeedbackStore) -> None:
        await store.vote(vote("U1", LAG, "right"))
        await store.vote(vote("U2", LAG, "right"))
        await store.vote(vote("U1", LAG, "right", ts="2.2"))
        await store.vote(vote("U3", DISK, "wrong", ts="2.2"))
        assert await store.tallies("PGReplicaBehind") == {LAG: Tally(3, 0), DISK: Tally(0, 1)}
        assert await store.tallies("SomethingElse") == {}
        assert len(await store.all_votes()) == 4

    async def test_reset_forgets_votes(self, store: FeedbackStore) -> None:
        """Reset one runbook's votes, then the alert's: tallies and the export follow."""
        await store.vote(vote("U1", LAG, "right"))
        await store.vote(vote("U2", DISK, "wrong", ts="2.2"))
        assert (await store.reset("pgreplicabehind", DISK)).votes == 1
        assert await store.tallies("PGReplicaBehind") == {LAG: Tally(1, 0)}
        assert (await store.reset("PGReplicaBehind")).votes == 1
        assert await store.tallies("PGReplicaBehind") == {}
        assert await store.all_votes() == []
        assert await store.alert_keys() == []

    async def test_pages_are_remembered(self, store: FeedbackStore) -> None:
        ref = PostRef("C1", "9.9")
        assert await store.page(ref) is None
        await store.remember_page(ref, ALERT)
        record = await store.page(ref)
        assert record is not None and record.alert == ALERT
        assert 0 < await store.redis.ttl(f"rbe:page:{page_id(ref)}") <= 3600


class TestExport:
    def test_a_case_per_page(self) -> None:
        """The most confirmed runbook is expected; a page only marked wrong expects none."""
        found = cases(
            [
                vote("U1", LAG, "right"),
                vote("U2", DISK, "right"),
                vote("U3", LAG, "right"),
                vote("U1", DISK, "wrong", ts="2.2"),
            ]
        )
        assert [c["expected_doc"] for c in found] == ["postgres/PostgresReplicationLag.md", None]
        assert found[0]["feedback"] == {
            "right": {"postgres/PostgresDiskFull.md": 1, "postgres/PostgresReplicationLag.md": 2},
            "wrong": {},
        }
        assert found[1]["feedback"]["wrong"] == {"postgres/PostgresDiskFull.md": 1}
        for line, case in enumerate(found, start=1):
            parsed = parse_case(json.dumps(case), line)
            assert isinstance(parsed, Case), parsed
            assert parsed.kind == "feedback"

    @pytest.mark.parametrize("source", ["alertmanager", "pagerduty"])
    def test_the_payload_searches_like_the_page(self, source: str) -> None:
        """The exported body parses back to the alert as the search reads it."""
        alert = ALERT
        if source == "pagerduty":
            alert = make_alert(
                source="pagerduty",
                alert_name="PatroniClusterHasNoLeader",
                service="billing-db",
                summary="PatroniClusterHasNoLeader billing-db (db-billing critical)",
                description="",
                labels={"service": "billing-db", "urgency": "high"},
                group_key="Q1ABC",
                link=None,
            )
        parsed = parse_body(json.dumps(webhook_body(alert)).encode())
        assert isinstance(parsed, Parsed)
        back = parsed.alert
        for field in ("source", "alert_name", "service", "summary", "description", "metrics"):
            assert getattr(back, field) == getattr(alert, field), field
