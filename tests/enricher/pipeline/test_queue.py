"""The job queue on a real Redis: delivery, crash recovery, delays, dead letters, outages."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any, cast

import pytest
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.typing import EncodableT, FieldT

from enricher.alert import Alert
from enricher.pipeline.queue import Job, JobQueue, new_job
from enricher.sources import Parsed
from scripts.local_redis import RedisServer
from tests.helpers import am_alert, am_body

pytestmark = pytest.mark.anyio

# Holds the netstring separators used by the delayed set, a NUL and non-ASCII text.
SUMMARY = 'disk "full" on \x00 nöde :12:,\n'


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    # from_url() builds a client without retries; as the service should, retry once so the first
    # command after a Redis restart does not fail on a stale pooled connection.
    redis_client = aioredis.Redis.from_url(redis_url, retry=Retry(NoBackoff(), 1))
    yield redis_client
    await redis_client.aclose()


async def dead_entries(client: aioredis.Redis) -> list[tuple[bytes, dict[bytes, bytes]]]:
    return cast(list[tuple[bytes, dict[bytes, bytes]]], await client.xrange("rbe:dead"))


async def make_queue(
    client: aioredis.Redis, consumer: str = "host-0", *, claim_idle_ms: int = 60_000, **kwargs: Any
) -> JobQueue:
    queue = JobQueue(client, consumer=consumer, claim_idle_ms=claim_idle_ms, **kwargs)
    await queue.ensure_group()
    return queue


def alert(n: int = 0) -> Alert:
    return Alert(
        source="alertmanager",
        status="firing",
        alert_name=f"DiskFull{n}",
        service="node",
        severity="warning",
        summary=SUMMARY,
        description="",
        labels={"alertname": f"DiskFull{n}", "instance": "n-1:9100"},
        group_key=f"group-{n}",
        starts_at=datetime(2026, 11, 28, 3, 0, tzinfo=UTC),
        metrics=("node_filesystem_avail_bytes",),
    )


def job(n: int = 0, *, received_at: float = 1700000000.25) -> Job:
    parsed = Parsed(alert(n), f"dedup-{n}", (f"fp-{n}@2026-11-28T03:00:00+00:00",))
    return new_job(parsed, received_at=received_at)


async def put(queue: JobQueue, job: Job) -> str:
    """Append `job` the way intake does (`enqueue_once`), under a seen key of its own."""
    entry_id = await queue.enqueue_once(job, f"test-seen:{uuid.uuid4()}", 60_000)
    assert entry_id is not None
    return entry_id


async def in_stream(client: aioredis.Redis) -> int:
    """Unfinished jobs in the stream, read or not (not the delayed ones)."""
    return int(await client.xlen("rbe:jobs"))


async def delayed(client: aioredis.Redis) -> int:
    """Jobs waiting out a `retry_later` delay."""
    return int(await client.zcard("rbe:delayed"))


async def pending(client: aioredis.Redis) -> int:
    return int((await client.xpending("rbe:jobs", "enrichers"))["pending"])


class TestRoundtrip:
    async def test_enqueue_read_ack(self, client: aioredis.Redis) -> None:
        """A job comes back field for field, body byte for byte, and is gone once acked."""
        queue = await make_queue(client)
        entry_id = await put(queue, job(1))

        [got] = await queue.read(count=10)

        assert got == Job(
            id=entry_id,
            alert=alert(1),
            dedup_key="dedup-1",
            fingerprints=("fp-1@2026-11-28T03:00:00+00:00",),
            received_at=1700000000.25,
            attempts=1,
        )
        await queue.ack(got)
        assert await in_stream(client) == 0
        assert await pending(client) == 0
        assert await queue.read(count=10) == []

    async def test_entry_queued_as_a_raw_body_is_parsed_on_read(
        self, client: aioredis.Redis
    ) -> None:
        """An entry of the first format (raw body, before the edge parsed once) still becomes
        its page after an upgrade, with the key and arrival time intake gave it."""
        queue = await make_queue(client)
        body = json.dumps(am_body(am_alert("KubePodCrashLooping", service="checkout")))
        legacy: dict[FieldT, EncodableT] = {
            "source": "alertmanager",
            "body": body.encode(),
            "dedup_key": "dedup-legacy",
            "group_key": "ignored: the body has its own",
            "status": "firing",
            "received_at": "1700000000.5",
            "prior_attempts": "0",
        }
        await client.xadd("rbe:jobs", legacy)

        [got] = await queue.read()

        assert (got.alert.alert_name, got.alert.service) == ("KubePodCrashLooping", "checkout")
        assert (got.dedup_key, got.received_at, got.attempts) == ("dedup-legacy", 1700000000.5, 1)
        assert got.fingerprints and all("@" in f for f in got.fingerprints)

    async def test_raw_body_that_makes_no_page_is_dead_lettered(
        self, client: aioredis.Redis
    ) -> None:
        """A first-format entry whose body no longer parses is buried, not retried forever."""
        queue = await make_queue(client)
        fields: dict[FieldT, EncodableT] = {
            "source": "alertmanager",
            "body": b"{}",
            "dedup_key": "d",
            "group_key": "g",
            "status": "firing",
            "received_at": "1",
            "prior_attempts": "0",
        }
        await client.xadd("rbe:jobs", fields)

        assert await queue.read() == []
        assert await queue.dead_count() == 1

    async def test_read_respects_count(self, client: aioredis.Redis) -> None:
        """`read` returns at most `count` jobs and leaves the rest for the next call."""
        queue = await make_queue(client)
        for n in range(5):
            await put(queue, job(n))

        first = await queue.read(count=3)
        second = await queue.read(count=3)

        assert [j.dedup_key for j in first + second] == [f"dedup-{n}" for n in range(5)]

    async def test_ensure_group_is_idempotent(self, client: aioredis.Redis) -> None:
        """Creating the group twice is not an error, and queued jobs survive it."""
        queue = await make_queue(client)
        await put(queue, job())
        await queue.ensure_group()
        assert len(await queue.read()) == 1

    async def test_rejects_decoding_client(self, redis_url: str) -> None:
        """A client that decodes replies to str would corrupt bodies, so it is refused."""
        decoding = aioredis.Redis.from_url(redis_url, decode_responses=True)
        with pytest.raises(ValueError, match="decode_responses=False"):
            JobQueue(decoding, consumer="host-0", claim_idle_ms=60_000)
        await decoding.aclose()

    async def test_ack_needs_an_entry_id(self, client: aioredis.Redis) -> None:
        """A job that never went through the queue cannot be acknowledged."""
        queue = await make_queue(client)
        with pytest.raises(ValueError, match=r"JobQueue\.read"):
            await queue.ack(job())


class TestCrashRecovery:
    async def test_dead_consumer_work_is_claimed(self, client: aioredis.Redis) -> None:
        """A job read but never acked by a crashed consumer is taken over once it is idle."""
        crashed = await make_queue(client, "host-0")
        await put(crashed, job())
        [lost] = await crashed.read()
        patient = await make_queue(client, "host-1", claim_idle_ms=60_000)
        assert await patient.read() == []

        rescuer = await make_queue(client, "host-2", claim_idle_ms=50)
        await asyncio.sleep(0.1)
        [again] = await rescuer.read()

        assert again.id == lost.id
        assert again.alert == alert()
        assert again.attempts >= 2
        await rescuer.ack(again)
        assert await pending(client) == 0
        assert await in_stream(client) == 0

    async def test_restarted_consumer_rereads_its_own_pending(self, client: aioredis.Redis) -> None:
        """A new process with the same consumer name is handed its unfinished job first."""
        before = await make_queue(client, "host-0")
        await put(before, job(1))
        [lost] = await before.read()
        await put(before, job(2))

        after = await make_queue(client, "host-0")
        got = await after.read(count=10)

        assert (got[0].id, got[0].attempts) == (lost.id, 2)
        assert [j.dedup_key for j in got] == ["dedup-1", "dedup-2"]

    async def test_own_backlog_is_read_only_once(self, client: aioredis.Redis) -> None:
        """After the leftovers are handed out, jobs in progress are not handed out again."""
        queue = await make_queue(client, "host-0")
        await put(queue, job())
        assert len(await queue.read()) == 1
        assert await queue.read() == []

    async def test_entry_deleted_while_pending_is_dropped(self, client: aioredis.Redis) -> None:
        """A pending entry whose data was deleted is cleared instead of being returned."""
        before = await make_queue(client, "host-0")
        await put(before, job())
        [lost] = await before.read()
        await client.xdel("rbe:jobs", lost.id)

        after = await make_queue(client, "host-0")

        assert await after.read() == []
        assert await pending(client) == 0

    async def test_malformed_entry_is_dead_lettered(self, client: aioredis.Redis) -> None:
        """An entry the queue did not write is moved to the dead letters, not retried forever."""
        queue = await make_queue(client)
        await client.xadd("rbe:jobs", {"source": "nagios", "body": b"?"})
        await put(queue, job())

        got = await queue.read(count=10)

        assert [j.dedup_key for j in got] == ["dedup-0"]
        assert await queue.dead_count() == 1
        [(_, fields)] = await dead_entries(client)
        assert fields[b"reason"] == b"malformed entry"
        assert await in_stream(client) == 1


class TestWorkers:
    async def test_each_worker_reads_its_own_leftovers_after_a_restart(
        self, client: aioredis.Redis
    ) -> None:
        """Four workers die holding a job each; their restarted selves (same WORKER_ID),
        reading all at once, each get back the one job they held, counted as a second try."""
        process = await make_queue(client, "host")
        held: list[Job] = []
        for n in range(4):
            await put(process, job(n))
            [taken] = await process.worker(n).read()
            held.append(taken)

        restarted = await make_queue(client, "host")
        got = await asyncio.gather(*(restarted.worker(n).read() for n in range(4)))

        assert [[(j.id, j.attempts) for j in jobs] for jobs in got] == [
            [(h.id, 2)] for h in held
        ]
        assert [restarted.worker(n).consumer for n in range(2)] == ["host-0", "host-1"]

    async def test_new_jobs_go_to_one_worker_each(self, client: aioredis.Redis) -> None:
        """Workers reading at once share the new jobs out: none is handed to two."""
        process = await make_queue(client, "host")
        for n in range(8):
            await put(process, job(n))
        got = await asyncio.gather(*(process.worker(n).read(count=2) for n in range(4)))
        ids = [j.id for jobs in got for j in jobs]
        assert len(ids) == len(set(ids)) == 8
        assert {j.attempts for jobs in got for j in jobs} == {1}


class TestTouch:
    async def test_touched_job_is_not_taken_over(self, client: aioredis.Redis) -> None:
        """A job its worker keeps touching never looks idle to another consumer, and the
        touches do not count as attempts."""
        worker = await make_queue(client, "host-0")
        await put(worker, job())
        [held] = await worker.read()
        other = await make_queue(client, "other-0", claim_idle_ms=100)
        for _ in range(4):
            await asyncio.sleep(0.05)
            assert await worker.touch(held)
            assert await other.read() == []
        await asyncio.sleep(0.15)  # no touch for longer than the idle time: taken over
        [taken] = await other.read()
        assert (taken.id, taken.attempts) == (held.id, 2)

    async def test_touch_says_when_the_job_is_no_longer_held(
        self, client: aioredis.Redis
    ) -> None:
        """After another consumer took the job, a touch does not take it back."""
        worker = await make_queue(client, "host-0")
        await put(worker, job())
        [held] = await worker.read()
        other = await make_queue(client, "other-0", claim_idle_ms=1)
        await asyncio.sleep(0.01)
        [taken] = await other.read()

        assert not await worker.touch(held)
        await other.ack(taken)
        assert not await other.touch(taken)
        assert await pending(client) == 0


class TestRetryLater:
    async def test_delayed_job_returns_when_due(self, client: aioredis.Redis) -> None:
        """A job retried with a short delay is read again later as a new entry, attempt 2."""
        queue = await make_queue(client)
        await put(queue, job())
        [first] = await queue.read()

        assert await queue.retry_later(first, 0.05)
        await asyncio.sleep(0.1)
        [second] = await queue.read()

        assert second.id != first.id
        assert second.attempts == 2
        assert (second.alert, second.dedup_key, second.group_key) == (alert(), "dedup-0", "group-0")
        assert await delayed(client) == 0

    async def test_delayed_job_is_not_read_early_and_does_not_block(
        self, client: aioredis.Redis
    ) -> None:
        """A job that is not due stays parked while jobs behind it are served."""
        queue = await make_queue(client)
        await put(queue, job(1))
        [waiting] = await queue.read()
        await queue.retry_later(waiting, 3600)
        await put(queue, job(2))

        got = await queue.read(count=10)

        assert [j.dedup_key for j in got] == ["dedup-2"]
        assert await delayed(client) == 1
        assert await in_stream(client) == 1

    async def test_jobs_are_conserved(self, client: aioredis.Redis) -> None:
        """Across retries every job is in exactly one place, and all of them finish once."""
        queue = await make_queue(client)
        for n in range(20):
            await put(queue, job(n))
        first = await queue.read(count=20)
        for j in first[::2]:
            await queue.retry_later(j, 0)
            assert await in_stream(client) + await delayed(client) == 20
        for j in first[1::2]:
            await queue.ack(j)

        retried = await queue.read(count=20)
        for j in retried:
            await queue.ack(j)

        assert sorted(j.dedup_key for j in retried) == sorted(j.dedup_key for j in first[::2])
        assert {j.attempts for j in retried} == {2}
        assert (await in_stream(client), await delayed(client), await pending(client)) == (
            0,
            0,
            0,
        )

    async def test_retry_of_finished_job_does_nothing(self, client: aioredis.Redis) -> None:
        """Retrying an entry someone already acked does not bring it back."""
        queue = await make_queue(client)
        await put(queue, job())
        [got] = await queue.read()
        await queue.ack(got)

        assert not await queue.retry_later(got, 0)
        assert await delayed(client) == 0


class TestDeadLetter:
    async def test_dead_letter_moves_and_counts(self, client: aioredis.Redis) -> None:
        """A dead-lettered job leaves the queue and is kept with its reason and body."""
        queue = await make_queue(client)
        await put(queue, job())
        [got] = await queue.read()

        assert await queue.dead_letter(got, "channel_not_found")

        counts = (await in_stream(client), await pending(client), await queue.dead_count())
        assert counts == (0, 0, 1)
        [(_, fields)] = await dead_entries(client)
        assert fields[b"reason"] == b"channel_not_found"
        assert json.loads(fields[b"alert"])["summary"] == SUMMARY
        assert fields[b"entry_id"] == got.id.encode()
        assert b"dead_at" in fields

    async def test_dead_letter_of_finished_job_does_nothing(self, client: aioredis.Redis) -> None:
        """Dead-lettering an entry that was already acked adds no dead letter."""
        queue = await make_queue(client)
        await put(queue, job())
        [got] = await queue.read()
        await queue.ack(got)

        assert not await queue.dead_letter(got, "invalid_auth")
        assert await queue.dead_count() == 0


class TestGauges:
    async def test_depth_counts_unread_and_unacked(self, client: aioredis.Redis) -> None:
        """Depth is every unfinished job in the stream, read or not."""
        queue = await make_queue(client)
        for n in range(3):
            await put(queue, job(n))
        [got] = await queue.read(count=1)
        assert await in_stream(client) == 3
        await queue.ack(got)
        assert await in_stream(client) == 2

    async def test_pending_age(self, client: aioredis.Redis) -> None:
        """The age of the oldest unfinished job grows while it waits and is 0 when none is left."""
        queue = await make_queue(client)
        assert await queue.pending_age_s() == 0.0
        await put(queue, job())
        await asyncio.sleep(0.06)

        assert await queue.pending_age_s() >= 0.05
        [got] = await queue.read()
        await queue.ack(got)
        assert await queue.pending_age_s() == 0.0


class TestRedisOutage:
    async def test_outage_raises_then_recovers(
        self, client: aioredis.Redis, redis_server: RedisServer
    ) -> None:
        """With Redis down every call raises ConnectionError; once back, the queue works again."""
        queue = await make_queue(client)
        await put(queue, job(1))
        [held] = await queue.read()
        redis_server.kill()
        try:
            with pytest.raises(RedisConnectionError):
                await put(queue, job(2))
            with pytest.raises(RedisConnectionError):
                await queue.read()
            with pytest.raises(RedisConnectionError):
                await queue.ack(held)
            with pytest.raises(RedisConnectionError):
                await queue.backlog()
        finally:
            redis_server.start()

        # The fixture's Redis has no persistence, so the stream and group are gone.
        await queue.ensure_group()
        await put(queue, job(3))
        [got] = await queue.read()
        await queue.ack(got)
        assert got.dedup_key == "dedup-3"
        assert await in_stream(client) == 0

    async def test_read_recreates_a_lost_group(
        self, client: aioredis.Redis, redis_server: RedisServer
    ) -> None:
        """Jobs accepted after a Redis restart, before any worker re-created the group, are read."""
        queue = await make_queue(client)
        redis_server.kill()
        redis_server.start()

        await put(queue, job())
        [got] = await queue.read()

        assert got.dedup_key == "dedup-0"


class TestEnqueueOnce:
    async def test_repeat_is_refused_atomically(self, client: aioredis.Redis) -> None:
        """The dedup mark and the append happen together: a repeat appends nothing."""
        queue = await make_queue(client)
        first = await queue.enqueue_once(job(), "rbe:seen:k", 60_000)
        again = await queue.enqueue_once(job(), "rbe:seen:k", 60_000)
        assert first is not None and again is None
        assert await in_stream(client) == 1
        assert await client.pttl("rbe:seen:k") > 0

    async def test_firing_job_marks_its_post_as_owed(self, client: aioredis.Redis) -> None:
        """A new group's post record is created as "pending" with the job; an existing one
        is left alone."""
        queue = await make_queue(client)
        await queue.enqueue_once(job(1), "rbe:seen:1", 60_000, owed_post=("rbe:post:g1", 600))
        assert await client.hget("rbe:post:g1", "state") == b"pending"
        assert 0 < await client.ttl("rbe:post:g1") <= 600
        await client.hset("rbe:post:g2", "state", "posted")
        await queue.enqueue_once(job(2), "rbe:seen:2", 60_000, owed_post=("rbe:post:g2", 600))
        assert await client.hget("rbe:post:g2", "state") == b"posted"


class TestWaitingAndAge:
    async def test_waiting_does_not_count_as_an_attempt(self, client: aioredis.Redis) -> None:
        """retry_later(count=False) brings the job back with the same attempt count."""
        queue = await make_queue(client)
        await put(queue, job())
        [first] = await queue.read()
        assert await queue.retry_later(first, 0.01, count=False)
        await asyncio.sleep(0.05)
        [second] = await queue.read()
        assert second.attempts == first.attempts

    async def test_age_and_backlog_include_delayed_jobs(self, client: aioredis.Redis) -> None:
        """A job parked by retry_later still counts in the backlog and keeps its age, which
        comes from when it was accepted, not when it was re-queued."""
        queue = await make_queue(client)
        old = job(received_at=time.time() - 600)
        await put(queue, old)
        [got] = await queue.read()
        await queue.retry_later(got, 60)
        assert await in_stream(client) == 0
        assert await queue.backlog() == 1
        assert await queue.pending_age_s() >= 599
