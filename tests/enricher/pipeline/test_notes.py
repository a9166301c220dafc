"""The incident note's own claim on the page's ledger record, on a real Redis, against
PagerDuty's documented API through respx: never sent before the page, never by two workers,
taken over from a dead sender with the lookup first."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
import redis.asyncio as aioredis
import respx

from enricher.notes.client import NotesClient, NotesConfig
from enricher.pipeline.ledger import Claimed, Ledger
from enricher.pipeline.notes import IncidentNotes
from enricher.pipeline.queue import Job, new_job
from enricher.pipeline.retry import RetryLater
from enricher.result import Match, SearchResult
from enricher.sources import Parsed, parse
from tests.helpers import dumps, pd_body

pytestmark = pytest.mark.anyio
API = "https://api.pagerduty.test"
NOTES = f"{API}/incidents/Q1ABC/notes"
CREATED = {"note": {"id": "PN1", "user": {"id": "PU", "type": "user_reference"},
                    "content": "x", "created_at": "2026-11-28T03:00:00Z"}}
MATCH = Match(doc_id="d", title="Kafka lag", section="Mitigation", source="s", path="k.md",
              score=0.9, stale=False, age_days=1, text="Scale up.", actionable=True)
RESULT = SearchResult("matched", "alert_name", matches=(MATCH,))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def parts(redis_url: str) -> AsyncIterator[tuple[aioredis.Redis, IncidentNotes]]:
    client = aioredis.Redis.from_url(redis_url)
    ledger = Ledger(client, dedup_ttl_s=3600)
    notes = IncidentNotes(client, ledger, NotesClient(NotesConfig(API, "k", "a@b.c")),
                          mode="matched", base_url=None, lease_s=120)
    yield client, notes
    await notes.client.aclose()
    await client.aclose()


def trigger() -> Job:
    parsed = parse("pagerduty", dumps(pd_body("[FIRING:1] KafkaLag kafka", "kafka")))
    assert isinstance(parsed, Parsed)
    return new_job(parsed, received_at=1_800_000_000.0)


async def posted(notes: IncidentNotes, job: Job, owner: str) -> None:
    """The page's claim, its note owed under it, then the page recorded."""
    claim = await notes.ledger.claim_post(job.group_key, owner, 120)
    assert isinstance(claim, Claimed)
    await notes.owe(job, RESULT, owner)
    assert await notes.ledger.record_post(
        job.group_key, owner, channel="C1", ts="1.0", fingerprints=job.fingerprints,
        status="firing", received_at=job.received_at, message="")


class TestNoteClaim:
    @respx.mock
    async def test_not_before_the_page_then_once(
        self, parts: tuple[aioredis.Redis, IncidentNotes]
    ) -> None:
        _, notes = parts
        route = respx.post(NOTES).mock(return_value=httpx.Response(201, json=CREATED))
        job = trigger()
        claim = await notes.ledger.claim_post(job.group_key, "w1:a", 120)
        assert isinstance(claim, Claimed)
        await notes.owe(job, RESULT, "w1:a")
        await notes.deliver(job, "w1:a")
        assert not route.called, "the page is not recorded yet"
        await notes.ledger.record_post(
            job.group_key, "w1:a", channel="C1", ts="1.0", fingerprints=job.fingerprints,
            status="firing", received_at=job.received_at, message="")
        await notes.deliver(job, "w1:a")
        await notes.deliver(job, "w2:b")
        assert route.call_count == 1
        assert "Runbook: Kafka lag › Mitigation" in route.calls.last.request.content.decode()

    @respx.mock
    async def test_a_live_sender_makes_others_wait_and_a_dead_ones_is_taken_over(
        self, parts: tuple[aioredis.Redis, IncidentNotes]
    ) -> None:
        client, notes = parts
        job = trigger()
        await posted(notes, job, "w1:a")
        key = notes.ledger.owed_post(job.group_key)[0]
        seconds, _ = await client.time()
        await client.hset(key, mapping={"note_state": "sending", "note_owner": "w9:z",
                                        "note_at": str(seconds), "note_lease": "120"})
        with pytest.raises(RetryLater):
            await notes.deliver(job, "w1:b")
        listed = respx.get(NOTES).mock(return_value=httpx.Response(200, json={"notes": []}))
        created = respx.post(NOTES).mock(return_value=httpx.Response(201, json=CREATED))
        await client.hset(key, "note_at", str(seconds - 121))  # its lease ran out
        await notes.deliver(job, "w1:b")
        assert listed.called and created.call_count == 1, "looked up, then added once"

    @respx.mock
    async def test_a_dead_predecessor_is_taken_over_at_once_and_its_note_found(
        self, parts: tuple[aioredis.Redis, IncidentNotes]
    ) -> None:
        client, notes = parts
        job = trigger()
        await posted(notes, job, "w1:a")
        key = notes.ledger.owed_post(job.group_key)[0]
        raw = await client.hget(key, "note_ref")
        assert isinstance(raw, bytes)
        ref = raw.decode()
        seconds, _ = await client.time()
        await client.hset(key, mapping={"note_state": "sending", "note_owner": "w1:a",
                                        "note_at": str(seconds), "note_lease": "120"})
        stored = {"notes": [{**CREATED["note"], "content": f"… ref {ref}"}]}
        respx.get(NOTES).mock(return_value=httpx.Response(200, json=stored))
        created = respx.post(NOTES).mock(return_value=httpx.Response(201, json=CREATED))
        await notes.deliver(job, "w1:restarted")
        assert not created.called
        assert await client.hget(key, "note_state") == b"done"
