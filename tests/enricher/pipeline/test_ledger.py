"""The ledger on a real Redis: dedup windows, and one post per group raced by two replicas."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import cast

import pytest
import redis
import redis.asyncio as aioredis
from structlog.testing import capture_logs

from enricher.alert import Alert
from enricher.pipeline.ledger import AlreadyPosted, Claimed, InFlight, Ledger, PostRecord
from enricher.pipeline.queue import JobQueue, new_job
from enricher.pipeline.replication import ReplicaAck
from enricher.settings import Settings
from enricher.sources import Parsed
from scripts.local_redis import RedisServer
from tests.helpers import attach_replica

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def clients(redis_url: str) -> AsyncIterator[tuple[aioredis.Redis, aioredis.Redis]]:
    """Two connections, as two replicas of the service would have."""
    first = aioredis.Redis.from_url(redis_url)
    second = aioredis.Redis.from_url(redis_url)
    yield first, second
    await first.aclose()
    await second.aclose()


@pytest.fixture
def ledgers(clients: tuple[aioredis.Redis, aioredis.Redis]) -> tuple[Ledger, Ledger]:
    return Ledger(clients[0], dedup_ttl_s=DEDUP_TTL_S), Ledger(clients[1], dedup_ttl_s=DEDUP_TTL_S)


#: The product's defaults (POST_LEASE_S, DEDUP_TTL_S, JOB_CLAIM_IDLE_S), unless a test says
#: otherwise.
PRODUCT = Settings()
LEASE_S = PRODUCT.post_lease_s
DEDUP_TTL_S = PRODUCT.dedup_ttl_s
CLAIM_IDLE_MS = int(PRODUCT.job_claim_idle_s * 1000)


def post_key(group_key: str) -> str:
    return "rbe:post:" + hashlib.sha256(group_key.encode()).hexdigest()


async def notes(client: aioredis.Redis, group_key: str) -> list[str]:
    """The output notes (`out:<kind>` and `try:<kind>` fields) of a group's record."""
    fields = cast(list[bytes], await client.hkeys(post_key(group_key)))
    return [f.decode() for f in fields if f.startswith((b"out:", b"try:"))]


async def record(
    ledger: Ledger,
    group_key: str,
    owner: str,
    *,
    ts: str,
    fingerprints: tuple[str, ...] | list[str] = (),
    channel: str = "C1",
) -> bool:
    """A firing post recorded the way the processor records it."""
    return await ledger.record_post(
        group_key,
        owner,
        channel=channel,
        ts=ts,
        fingerprints=fingerprints,
        status="firing",
        received_at=1700000000.5,
        message='{"text": "page", "blocks": []}',
    )


async def accepted(ledger: Ledger, queue: JobQueue, dedup_key: str) -> bool:
    """Intake as the service does it: the ledger's seen mark, set atomically with the append."""
    alert = Alert("alertmanager", "firing", "A", None, None, "", "", group_key="g")
    job = new_job(Parsed(alert, dedup_key, ()))
    entry = await queue.enqueue_once(job, ledger.seen_key(dedup_key), ledger.dedup_ttl_ms)
    return entry is not None


class TestDedupWindow:
    async def test_repeat_within_window(
        self, clients: tuple[aioredis.Redis, aioredis.Redis], ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """Only the first sighting of a key counts, whichever replica sees the repeat."""
        a, b = ledgers
        qa, qb = (
            JobQueue(clients[0], consumer="a", claim_idle_ms=CLAIM_IDLE_MS),
            JobQueue(clients[1], consumer="b", claim_idle_ms=CLAIM_IDLE_MS),
        )
        assert await accepted(a, qa, "am|group|firing|fp1@t0")
        assert not await accepted(a, qa, "am|group|firing|fp1@t0")
        assert not await accepted(b, qb, "am|group|firing|fp1@t0")
        assert await accepted(b, qb, "am|group|resolved|fp1@t0")

    async def test_window_expires(self, clients: tuple[aioredis.Redis, aioredis.Redis]) -> None:
        """After `dedup_ttl_s` the same key is new again."""
        ledger = Ledger(clients[0], dedup_ttl_s=0.1)
        queue = JobQueue(clients[0], consumer="a", claim_idle_ms=CLAIM_IDLE_MS)
        assert await accepted(ledger, queue, "pd|webhook-1")
        await asyncio.sleep(0.2)
        assert await accepted(ledger, queue, "pd|webhook-1")

    async def test_default_window_covers_repeat_interval(
        self, clients: tuple[aioredis.Redis, aioredis.Redis], ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """By default a key is remembered longer than Alertmanager's 4 h repeat_interval."""
        await accepted(
            ledgers[0], JobQueue(clients[0], consumer="a", claim_idle_ms=CLAIM_IDLE_MS), "am|long"
        )
        key = "rbe:seen:" + hashlib.sha256(b"am|long").hexdigest()
        assert 4 * 3600 < await clients[0].ttl(key) <= 6 * 3600


class TestClaimRace:
    async def test_exactly_one_claim_per_group(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """Two replicas racing on 50 groups, several rounds: each group has exactly one poster."""
        a, b = ledgers
        for round_ in range(5):
            keys = [f"round-{round_}-group-{n}" for n in range(50)]
            results = await asyncio.gather(
                *(
                    ledger.claim_post(key, owner, LEASE_S)
                    for key in keys
                    for ledger, owner in ((a, "replica-a"), (b, "replica-b"))
                )
            )
            for key, pair in zip(keys, zip(results[::2], results[1::2], strict=True), strict=True):
                claimed = [r for r in pair if isinstance(r, Claimed)]
                waiting = [r for r in pair if isinstance(r, InFlight)]
                assert len(claimed) == 1 and len(waiting) == 1, key
                assert not claimed[0].takeover
                assert waiting[0].owner in {"replica-a", "replica-b"}

    async def test_own_live_lease_is_in_flight(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """A second claim under the same owner id waits too: a restarted process may reuse it."""
        a, _ = ledgers
        assert await a.claim_post("g", "worker-1", LEASE_S) == Claimed()
        result = await a.claim_post("g", "worker-1", LEASE_S)
        assert isinstance(result, InFlight)
        assert result.owner == "worker-1"
        assert result.age_s >= 0


class TestPosted:
    async def test_posted_group_is_updated_not_posted(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """Once the ts is stored, every later claim gets the stored message back, and the
        record holds the message and its arrival time from the same atomic write."""
        a, b = ledgers
        await a.claim_post("g", "worker-a", LEASE_S)
        assert await a.record_post(
            "g",
            "worker-a",
            channel="C1",
            ts="1700000000.000100",
            fingerprints=["fp2", "fp1", "fp2"],
            status="firing",
            received_at=1700000000.5,
            message='{"text": "page", "blocks": []}',
        )

        expected = AlreadyPosted("C1", "1700000000.000100", ("fp1", "fp2"), "firing")
        assert await b.claim_post("g", "worker-b", LEASE_S) == expected
        assert await a.claim_post("g", "worker-a", LEASE_S) == expected
        assert await b.get_post("g") == PostRecord(
            group_key="g",
            owner="worker-a",
            channel="C1",
            ts="1700000000.000100",
            fingerprints=("fp1", "fp2"),
            status="firing",
            message='{"text": "page", "blocks": []}',
            received_at=1700000000.5,
        )

    async def test_update_post(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """An update stores what the edited message now shows and keeps channel and ts."""
        a, b = ledgers
        await a.claim_post("g", "worker-a", LEASE_S)
        await record(a, "g", "worker-a", ts="1.1", fingerprints=["fp1"])

        assert await b.update_post("g", fingerprints=["fp3", "fp1"])
        assert await b.update_post("g", status="resolved")

        assert await a.claim_post("g", "worker-a", LEASE_S) == AlreadyPosted(
            "C1", "1.1", ("fp1", "fp3"), "resolved"
        )

    async def test_update_without_post(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """Updating a group that was never posted, or is only claimed, changes nothing."""
        a, _ = ledgers
        assert not await a.update_post("never", status="resolved")
        await a.claim_post("claimed", "worker-a", LEASE_S)
        assert not await a.update_post("claimed", status="resolved")
        assert await a.get_post("claimed") is None

    async def test_records_expire(
        self, clients: tuple[aioredis.Redis, aioredis.Redis], ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """Claims and posts both carry the post TTL, so records never pile up."""
        a, _ = ledgers
        await a.claim_post("g", "worker-a", LEASE_S)
        assert 0 < await clients[0].ttl(post_key("g")) <= a.post_ttl_s
        await record(a, "g", "worker-a", ts="1.1")
        assert 0 < await clients[0].ttl(post_key("g")) <= a.post_ttl_s


class TestCrashWindow:
    async def test_stale_lease_is_taken_over(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """A claim whose lease ran out goes to the next claimer, flagged as a takeover."""
        a, b = ledgers
        assert await a.claim_post("g", "dead-worker", lease_s=0.05) == Claimed()
        await asyncio.sleep(0.1)

        assert await b.claim_post("g", "worker-b", LEASE_S) == Claimed(
            takeover=True, previous_owner="dead-worker"
        )
        assert isinstance(await a.claim_post("g", "worker-c", LEASE_S), InFlight)

    async def test_late_owner_cannot_record(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """After a takeover the old owner's record is refused and the new owner's post stays."""
        a, b = ledgers
        await a.claim_post("g", "slow-worker", lease_s=0.05)
        await asyncio.sleep(0.1)
        await b.claim_post("g", "worker-b", LEASE_S)
        assert await record(b, "g", "worker-b", ts="2.2", fingerprints=["fp"])

        assert not await record(a, "g", "slow-worker", ts="3.3", fingerprints=["fp"])
        stored = await a.get_post("g")
        assert stored is not None
        assert (stored.owner, stored.ts) == ("worker-b", "2.2")

    async def test_record_refuses_non_owner(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """Only the worker holding the claim can store the post."""
        a, b = ledgers
        await a.claim_post("g", "worker-a", LEASE_S)

        assert not await record(b, "g", "worker-b", ts="1.1")
        assert await b.get_post("g") is None
        assert await record(a, "g", "worker-a", ts="1.1")

    async def test_record_after_claim_vanished(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """A post whose claim is gone (Redis lost it) is still stored, so it can be updated."""
        a, _ = ledgers
        assert await record(a, "g", "worker-a", ts="1.1", fingerprints=["fp"])
        assert await a.claim_post("g", "worker-b", LEASE_S) == AlreadyPosted(
            "C1", "1.1", ("fp",), "firing"
        )


class TestOutputNotes:
    """Deliveries that cannot look up what they sent note each output before it is sent
    and once it is out."""

    async def test_a_noted_output_is_seen_by_the_next_attempt(
        self, ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """The attempt after a crash finds the note of what the dead one sent."""
        a, b = ledgers
        assert isinstance(await a.claim_post("g", "w:1", LEASE_S), Claimed)
        assert await b.output_notes("g", "post") == (False, False)
        await a.note_attempt("g", "post")
        assert await b.output_notes("g", "post") == (False, True)
        await a.note_output("g", "post")
        assert await b.output_notes("g", "post") == (True, True)
        assert await b.output_notes("g", "resolve") == (False, False), "each kind has its own"

    async def test_an_answered_failure_clears_the_note(
        self, ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """A send that Slack refused is sent again."""
        a, _ = ledgers
        await a.claim_post("g", "w:1", LEASE_S)
        await a.note_attempt("g", "post")
        await a.note_output("g", "post")
        await a.forget_output("g", "post")
        assert await a.output_notes("g", "post") == (False, False)

    async def test_storing_the_effect_clears_the_note(
        self, clients: tuple[aioredis.Redis, aioredis.Redis], ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """Once the post is recorded (or the update stored), its note is gone with it."""
        a, _ = ledgers
        await a.claim_post("g", "w:1", LEASE_S)
        await a.note_attempt("g", "post")
        await a.note_output("g", "post")
        assert await record(a, "g", "w:1", ts="")
        await a.note_attempt("g", "escalated:m1")
        await a.note_output("g", "escalated:m1")
        assert await a.update_post("g", fingerprints=["f1", "f2"], output="escalated:m1")
        await a.note_attempt("g", "resolve")
        await a.note_output("g", "resolve")
        assert await a.update_post("g", status="resolved", output="resolve")
        assert await notes(clients[0], "g") == []

    async def test_a_new_message_starts_without_notes(
        self, clients: tuple[aioredis.Redis, aioredis.Redis], ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """A group that fires again after it resolved gets a new message, whose resolve is
        not held back by a note a crash left on the old one."""
        a, _ = ledgers
        await a.claim_post("g", "w:1", LEASE_S)
        await record(a, "g", "w:1", ts="")
        await a.update_post("g", status="resolved")
        await a.note_attempt("g", "resolve")
        await a.note_output("g", "resolve")  # the process died before storing the resolve
        assert await a.reopen("g", "w:1", LEASE_S)
        assert await notes(clients[0], "g") == []

    async def test_no_record_no_note(
        self, clients: tuple[aioredis.Redis, aioredis.Redis], ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """Without a record (expired) there is nothing to guard and no key is left behind."""
        a, _ = ledgers
        await a.note_output("gone", "resolve")
        assert await clients[0].exists(post_key("gone")) == 0


    async def test_with_a_sync_connection_the_note_lands_before_anything_else_runs(
        self, redis_url: str, clients: tuple[aioredis.Redis, aioredis.Redis]
    ) -> None:
        """The note is in Redis by the time `note_output` first hands the event loop back, so
        no other task can run between an output leaving the process and its note (a kill -9
        in that gap would repeat the output)."""
        sync = redis.Redis.from_url(redis_url)
        ledger = Ledger(clients[0], dedup_ttl_s=DEDUP_TTL_S, notes=sync)
        await ledger.claim_post("g", "w:1", LEASE_S)
        step = ledger.note_output("g", "post")
        with pytest.raises(StopIteration):
            step.send(None)  # one step: done without suspending
        assert await notes(clients[0], "g") == ["out:post"]
        ledger.close()


class TestResolveHold:
    async def test_one_holder_per_group(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """Two replicas racing on 50 groups: each group's resolve is held by exactly one; the
        other learns how long the hold has left."""
        a, b = ledgers
        keys = [f"resolve-group-{n}" for n in range(50)]
        results = await asyncio.gather(
            *(
                ledger.hold_resolve(key, owner, 60)
                for key in keys
                for ledger, owner in ((a, "replica-a"), (b, "replica-b"))
            )
        )
        for key, pair in zip(keys, zip(results[::2], results[1::2], strict=True), strict=True):
            held = [r for r in pair if r is None]
            waiting = [r for r in pair if r is not None]
            assert len(held) == 1 and len(waiting) == 1, key
            assert 0 < waiting[0] <= 60

    async def test_only_the_holder_releases(self, ledgers: tuple[Ledger, Ledger]) -> None:
        a, b = ledgers
        assert await a.hold_resolve("g", "worker-a", LEASE_S) is None
        assert not await b.release_resolve("g", "worker-b")
        assert await b.hold_resolve("g", "worker-b", LEASE_S) is not None
        assert await a.release_resolve("g", "worker-a")
        assert await b.hold_resolve("g", "worker-b", LEASE_S) is None

    async def test_a_crashed_holders_hold_runs_out(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """Nobody releases a hold whose worker died; its lease ends it."""
        a, b = ledgers
        assert await a.hold_resolve("g", "dead:1", lease_s=0.2) is None
        await asyncio.sleep(0.3)
        assert await b.hold_resolve("g", "worker-b", LEASE_S) is None


class TestRelease:
    async def test_release_lets_a_retry_claim(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """After a failed post the owner releases, and the next claim is a fresh one."""
        a, b = ledgers
        await a.claim_post("g", "worker-a", LEASE_S)

        assert not await b.release_claim("g", "worker-b")
        assert isinstance(await b.claim_post("g", "worker-b", LEASE_S), InFlight)
        assert await a.release_claim("g", "worker-a")
        assert await b.claim_post("g", "worker-b", LEASE_S) == Claimed()

    async def test_posted_record_is_not_released(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """Releasing after the ts is stored keeps the post, so nobody posts it again."""
        a, _ = ledgers
        await a.claim_post("g", "worker-a", LEASE_S)
        await record(a, "g", "worker-a", ts="1.1")

        assert not await a.release_claim("g", "worker-a")
        assert isinstance(await a.claim_post("g", "worker-a", LEASE_S), AlreadyPosted)


class TestOwedPosts:
    async def test_failed_post_leaves_the_group_pending(
        self, ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """A post that failed but is owed keeps the group "pending"; the retry claims it,
        asked to look for the marker only when Slack may have stored the message."""
        a, b = ledgers
        assert isinstance(await a.claim_post("g", "w1", LEASE_S), Claimed)
        assert await a.release_claim("g", "w1", owed=True, check_marker=False)
        assert await a.state("g") == "pending"
        assert await b.claim_post("g", "w2", LEASE_S) == Claimed(
            takeover=False, previous_owner=None
        )
        assert await b.release_claim("g", "w2", owed=True, check_marker=True)
        claim = await a.claim_post("g", "w1", LEASE_S)
        assert isinstance(claim, Claimed) and claim.takeover

    async def test_release_without_debt_forgets_the_group(
        self, ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """A permanent failure releases the claim for good."""
        a, _ = ledgers
        await a.claim_post("g", "w1", LEASE_S)
        assert await a.release_claim("g", "w1")
        assert await a.state("g") is None

    async def test_abandon_only_drops_pending(self, ledgers: tuple[Ledger, Ledger]) -> None:
        """Dead-lettering a firing job frees its pending group, never a posted one."""
        a, _ = ledgers
        await a.claim_post("g", "w1", LEASE_S)
        await a.release_claim("g", "w1", owed=True)
        assert await a.abandon("g")
        assert await a.state("g") is None
        await a.claim_post("p", "w1", LEASE_S)
        await record(a, "p", "w1", ts="1.0", fingerprints=["f"], channel="C")
        assert not await a.abandon("p")
        assert await a.state("p") == "posted"


class TestCutOff:
    """`release_cut_off`: a job of the group lost Redis mid-way (issue 22, a failover)."""

    async def test_own_claim_goes_back_with_a_lookup_owed(
        self, ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """Our own live claim would read as in flight until the lease ran out; given back,
        the re-run claims at once and looks for the marker first."""
        a, _ = ledgers
        await a.claim_post("g", "w1", LEASE_S)
        assert isinstance(await a.claim_post("g", "w1", LEASE_S), InFlight)
        assert await a.release_cut_off("g", "w1")
        claim = await a.claim_post("g", "w1", LEASE_S)
        assert isinstance(claim, Claimed) and claim.takeover

    async def test_pending_group_is_flagged_for_a_lookup(
        self, ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """A claim lost with the old primary leaves the intake's "pending": the post may
        have gone out all the same, so the re-run looks before posting."""
        a, _ = ledgers
        await a.claim_post("g", "w1", LEASE_S)
        await a.release_claim("g", "w1", owed=True, check_marker=False)
        assert await a.claim_post("g", "w1", LEASE_S) == Claimed(takeover=False)
        await a.release_claim("g", "w1", owed=True, check_marker=False)
        assert await a.release_cut_off("g", "w1")
        claim = await a.claim_post("g", "w1", LEASE_S)
        assert isinstance(claim, Claimed) and claim.takeover

    async def test_own_claim_no_worker_is_on_is_taken_over_with_a_lookup(
        self, ledgers: tuple[Ledger, Ledger]
    ) -> None:
        """`sole`: the claim is ours but none of our workers is on the group (its record and
        ack died with a failed-over primary): taken over at once, marker lookup owed. Another
        owner's live claim stays in flight, `sole` or not."""
        a, b = ledgers
        await a.claim_post("g", "w1", LEASE_S)
        assert isinstance(await a.claim_post("g", "w1", LEASE_S), InFlight)
        assert await a.claim_post("g", "w1", LEASE_S, sole=True) == Claimed(
            takeover=True, previous_owner="w1"
        )
        assert isinstance(await b.claim_post("g", "w2", LEASE_S, sole=True), InFlight)

    async def test_posts_and_other_owners_claims_are_left_alone(
        self, ledgers: tuple[Ledger, Ledger]
    ) -> None:
        a, b = ledgers
        await a.claim_post("p", "w1", LEASE_S)
        await record(a, "p", "w1", ts="1.0")
        await b.claim_post("o", "w2", LEASE_S)
        assert not await a.release_cut_off("p", "w1")
        assert not await a.release_cut_off("o", "w1")
        assert not await a.release_cut_off("none", "w1")
        assert await a.state("p") == "posted"
        assert isinstance(await a.claim_post("o", "w1", LEASE_S), InFlight)
        assert await a.state("none") is None


def waits_sent(port: int) -> int:
    """How many WAIT commands the server at `port` has run."""
    with redis.Redis(port=port) as client:
        stats = client.info("commandstats").get("cmdstat_wait") or {}
    return int(stats.get("calls", 0))


class TestClaimsOnReplicas:
    """With REDIS_MIN_REPLICAS_ACK a claim reaches a replica before its post is made: a claim
    lost with a dead primary would let the job's re-run post again without a marker lookup
    (the duplicate a CI failover run showed)."""

    @pytest.fixture
    def primary(self, tmp_path: Path) -> Iterator[RedisServer]:
        (tmp_path / "primary").mkdir()
        server = RedisServer(tmp_path / "primary")
        server.start()
        yield server
        server.kill()

    @pytest.fixture
    def replica(self, primary: RedisServer, tmp_path: Path) -> Iterator[RedisServer]:
        """A replica of `primary` that acknowledges its writes."""
        server = attach_replica(tmp_path, primary)
        yield server
        server.kill()

    @staticmethod
    @contextlib.asynccontextmanager
    async def ledger_on(primary: RedisServer, timeout_ms: int) -> AsyncIterator[Ledger]:
        client = aioredis.Redis.from_url(primary.url)
        try:
            yield Ledger(
                client,
                dedup_ttl_s=DEDUP_TTL_S,
                replica_ack=ReplicaAck(replicas=1, timeout_ms=timeout_ms),
            )
        finally:
            await client.aclose()

    async def test_a_claim_returns_once_the_replica_holds_it(
        self, primary: RedisServer, replica: RedisServer
    ) -> None:
        async with self.ledger_on(primary, timeout_ms=2000) as ledger:
            before = waits_sent(primary.port)
            assert await ledger.claim_post("g", "w1", LEASE_S) == Claimed()
            assert waits_sent(primary.port) == before + 1
        with redis.Redis(port=replica.port) as copy:
            assert copy.hget(post_key("g"), "state") == b"claimed"
            assert copy.hget(post_key("g"), "owner") == b"w1"

    async def test_a_reopened_group_is_on_the_replica_too(
        self, primary: RedisServer, replica: RedisServer
    ) -> None:
        async with self.ledger_on(primary, timeout_ms=2000) as ledger:
            await ledger.claim_post("g", "w1", LEASE_S)
            await record(ledger, "g", "w1", ts="1.0")
            await ledger.update_post("g", status="resolved")
            before = waits_sent(primary.port)
            assert await ledger.reopen("g", "w2", LEASE_S)
            assert waits_sent(primary.port) == before + 1
        with redis.Redis(port=replica.port) as copy:
            assert copy.hget(post_key("g"), "owner") == b"w2"

    async def test_a_claim_no_replica_confirms_is_used_and_logged(
        self, primary: RedisServer
    ) -> None:
        """No replica answers: the page must still go out, so the claim stands (the risk,
        a duplicate only if the primary also dies now, is logged with what to check)."""
        async with self.ledger_on(primary, timeout_ms=50) as ledger:
            with capture_logs() as logs:
                assert await ledger.claim_post("g", "w1", LEASE_S) == Claimed()
            warned = [e for e in logs if e["event"] == "ledger.claim_not_replicated"]
            assert [(e["replicas"], e["wanted"]) for e in warned] == [(0, 1)]
            assert "INFO replication" in warned[0]["risk"]
            assert isinstance(await ledger.claim_post("g", "w2", LEASE_S), InFlight)
