"""The worker pool: intake into the durable queue, workers that drain it, and the fallback.

Intake (`accept`) writes the job to Redis and returns; workers read jobs, run the processor
and acknowledge only after Slack took the message. When Redis is down, intake keeps
answering 2xx and hands the job to an in-memory queue instead (no dedup, lost on restart:
logged and counted) until Redis answers again (DESIGN.md §7). Unless the deployment asked
for a 202 that survives the loss of a server (`durable_intake`: Sentinel, or a replica
ack): a job held in one process's memory survives nothing, so intake then answers
"unavailable" (503, which senders retry) until a primary takes the write.

Each worker reads as its own consumer (`JobQueue.worker`), one job at a time, and keeps the
job's entry touched while it works on it: no pending entry is worked on by two workers, of
this process or another (enricher.pipeline.queue).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import Literal

import structlog
from redis.exceptions import RedisError

from enricher.errors import DeliveryFailed, NotReplicated
from enricher.metrics import Metrics
from enricher.pipeline.first_index import FirstIndex
from enricher.pipeline.ledger import Ledger
from enricher.pipeline.processor import Processor
from enricher.pipeline.queue import Job, JobQueue
from enricher.pipeline.retry import RetryLater, backoff_s

log = structlog.get_logger(__name__)

AcceptOutcome = Literal["queued", "duplicate", "degraded", "unavailable"]
READ_BLOCK_MS = 500
REDIS_RETRY_S = 2.0


class Pool:
    def __init__(
        self,
        *,
        queue: JobQueue,
        ledger: Ledger,
        processor: Processor,
        metrics: Metrics,
        workers: int,
        max_attempts: int,
        durable_intake: bool = False,
        first_index: FirstIndex | None = None,
    ) -> None:
        self.queue = queue
        self.ledger = ledger
        self.processor = processor
        self.metrics = metrics
        self.workers = workers
        self.max_attempts = max_attempts
        self.durable_intake = durable_intake
        self.first_index = first_index
        self.redis_ok = False
        self.memory: asyncio.Queue[Job] = asyncio.Queue()
        self.tasks: list[asyncio.Task[None]] = []
        #: Each worker's view of the queue (its own consumer), by worker number.
        self.readers: list[JobQueue] = []
        #: The tasks keeping jobs in progress touched (referenced until they end).
        self.keepers: set[asyncio.Task[None]] = set()
        self.stopping = asyncio.Event()
        self.in_flight = 0
        #: Groups this process's workers are working on now (a count per group).
        self.busy: Counter[str] = Counter()
        #: Groups whose job lost Redis mid-way: a post claim or resolve hold it took could
        #: not be given back. Given back once Redis answers again (`_release_orphans`).
        self.orphans: set[str] = set()

    # --- lifecycle ---

    async def start(self) -> None:
        await self._connect_redis()
        for number in range(self.workers):
            reader = self.queue.worker(number)
            self.readers.append(reader)
            self.tasks.append(asyncio.create_task(self._work(reader), name=f"worker-{number}"))
        self.tasks.append(asyncio.create_task(self._watch_redis(), name="redis-watch"))

    async def stop(self, grace_s: float) -> None:
        """Stop taking jobs, let in-flight ones finish within `grace_s`, then cancel.

        A job cut off by the deadline stays pending in Redis and is redelivered after restart.
        """
        self.stopping.set()
        deadline = time.monotonic() + grace_s
        while self.in_flight and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if not self.memory.empty():
            log.error(
                "service.jobs_lost_on_stop",
                count=self.memory.qsize(),
                reason="accepted while Redis was down and not yet delivered",
            )

    def workers_alive(self) -> tuple[int, int]:
        """(running, started) worker tasks."""
        workers = [t for t in self.tasks if t.get_name().startswith("worker-")]
        return sum(not t.done() for t in workers), len(workers)

    # --- Redis health ---

    async def _connect_redis(self) -> bool:
        try:
            await self.ledger.ping()
            await self.queue.ensure_group()
        except RedisError as exc:
            if self.redis_ok or not self.tasks:
                log.error("redis.unavailable", error=str(exc), effect=self._outage_effect)
            self.redis_ok = False
            return False
        if not self.redis_ok and self.tasks:
            try:
                await self._release_orphans()
            except RedisError as exc:
                log.error("redis.unavailable", error=str(exc), effect=self._outage_effect)
                return False
            log.info("redis.recovered")
            for reader in self.readers:
                reader.rewind()
        self.redis_ok = True
        return True

    async def _release_orphans(self) -> None:
        """Give back the claims and resolve holds of jobs cut off by the outage, so their
        re-run (the same worker re-reads the entry) claims at once, after a marker lookup,
        instead of meeting its own process's claim as in flight until POST_LEASE_S runs
        out (`Ledger.release_cut_off`: the post still owed, maybe made, also when the claim
        was lost with a dead primary). Runs while the workers are not reading (redis_ok is
        False); a group another worker is still on keeps its claim."""
        owner = self.processor.owner
        for group in sorted(self.orphans):
            if not self.busy[group]:
                await self.ledger.release_cut_off(group, owner)
                await self.ledger.release_resolve(group, owner)
            self.orphans.discard(group)
            log.info("redis.claim_released", group=group, busy=bool(self.busy[group]))

    async def _watch_redis(self) -> None:
        while not self.stopping.is_set():
            await asyncio.sleep(REDIS_RETRY_S)
            if not self.redis_ok:
                await self._connect_redis()

    def _redis_failed(self, exc: Exception, during: str) -> None:
        if self.redis_ok:
            log.error(
                "redis.unavailable", error=str(exc), during=during, effect=self._outage_effect
            )
        self.redis_ok = False

    @property
    def _outage_effect(self) -> str:
        if self.durable_intake:
            return "webhooks answered 503 until a primary takes writes"
        return "in-process delivery, no dedup, not durable"

    # --- intake ---

    async def accept(self, job: Job) -> AcceptOutcome:
        """Make the job durable (or at least queued in memory) before the 2xx goes out.

        The dedup mark and the enqueue are one Redis script: a crash between them cannot
        leave a delivery marked "seen" whose job was never queued. A firing job also marks
        its group's post as owed, so a resolve that a worker picks up first waits for it.

        With `durable_intake` every webhook tries Redis, even while it is known down, so
        intake resumes the moment a promoted replica takes writes; "unavailable" otherwise.
        """
        if self.redis_ok or self.durable_intake:
            try:
                seen = self.ledger.seen_key(job.dedup_key)
                owed = self.ledger.owed_post(job.group_key) if job.owes_page else None
                ttl_ms = self.ledger.dedup_ttl_ms_for(job.source)
                entry = await self.queue.enqueue_once(job, seen, ttl_ms, owed_post=owed)
                return "queued" if entry is not None else "duplicate"
            except NotReplicated as exc:
                log.warning("intake.not_replicated", group=job.group_key, error=str(exc))
                return "unavailable"
            except RedisError as exc:
                self._redis_failed(exc, "intake")
        if self.durable_intake:
            return "unavailable"
        self.metrics.degraded_intake.inc()
        await self.memory.put(job)
        return "degraded"

    # --- workers ---

    async def _work(self, reader: JobQueue) -> None:
        if self.first_index is not None:
            await self.first_index.wait(self.stopping)
        while not self.stopping.is_set():
            if not self.memory.empty():
                await self._run_memory_job(self.memory.get_nowait())
                continue
            if not self.redis_ok:
                with contextlib.suppress(TimeoutError):
                    job = await asyncio.wait_for(self.memory.get(), timeout=0.5)
                    await self._run_memory_job(job)
                continue
            try:
                jobs = await reader.read(count=1, block_ms=READ_BLOCK_MS)
            except RedisError as exc:
                self._redis_failed(exc, "read")
                continue
            for job in jobs:
                try:
                    await self._run_queued_job(reader, job)
                except RedisError as exc:
                    # Redis failed while a failed job was put back (retry_later, dead
                    # letter): the entry stays pending, and this worker must live on.
                    self.orphans.add(job.group_key)
                    self._redis_failed(exc, "requeue")

    async def _run_queued_job(self, reader: JobQueue, job: Job) -> None:
        if job.attempts > self.max_attempts:
            # Every try so far ended with no outcome: the process died during each one (a
            # body that crashes or exhausts it). A try more would only kill it again.
            await self._dead(job, "crashed: the process died during every try")
            return
        self.in_flight += 1
        self.busy[job.group_key] += 1
        try:
            async with self._kept(reader, job):
                outcome = await self.processor.process(
                    job, self.ledger, sole=self.busy[job.group_key] == 1
                )
            await self.queue.ack(job)
            self.metrics.end_to_end_seconds.observe(max(0.0, time.time() - job.received_at))
            log.info(
                "job.done", job=job.id, outcome=outcome, attempts=job.attempts, group=job.group_key
            )
        except RetryLater as exc:
            await self.queue.retry_later(job, exc.delay_s, count=False)
            log.info("job.retry_later", job=job.id, reason=exc.reason, delay_s=exc.delay_s)
        except DeliveryFailed as exc:
            await self._delivery_failed(job, exc)
        except RedisError as exc:
            # The job stays pending and is re-read once Redis is back.
            self.orphans.add(job.group_key)
            self._redis_failed(exc, "process")
        except Exception as exc:
            log.exception("job.crashed", job=job.id, error=type(exc).__name__)
            if job.attempts >= self.max_attempts:
                await self._dead(job, f"crashed: {type(exc).__name__}")
            else:
                await self.queue.retry_later(job, backoff_s(job.attempts))
        finally:
            self.in_flight -= 1
            self.busy[job.group_key] -= 1
            if not self.busy[job.group_key]:
                del self.busy[job.group_key]

    @contextlib.asynccontextmanager
    async def _kept(self, reader: JobQueue, job: Job) -> AsyncIterator[None]:
        """While the block runs, keep the job's entry touched, so no other consumer takes
        it over as abandoned. The job never waits for the keeper to end: a Redis call can
        swallow a cancellation (a chaos run saw a job wait 12 minutes on it), so `done`
        ends the keeper at its next wake whatever became of the cancel."""
        done = asyncio.Event()
        keeper = asyncio.create_task(_keep(reader, job, done), name=f"keep-{job.id}")
        self.keepers.add(keeper)
        keeper.add_done_callback(self.keepers.discard)
        try:
            yield
        finally:
            done.set()
            keeper.cancel()

    async def _delivery_failed(self, job: Job, exc: DeliveryFailed) -> None:
        self.metrics.slack_failures.labels(str(exc)).inc()
        if exc.permanent or job.attempts >= self.max_attempts:
            await self._dead(job, str(exc))
            return
        delay = backoff_s(job.attempts, exc.retry_after)
        log.warning(
            "slack.retry",
            job=job.id,
            error=str(exc),
            attempts=job.attempts,
            delay_s=round(delay, 2),
        )
        await self.queue.retry_later(job, delay)

    async def _dead(self, job: Job, reason: str) -> None:
        await self.queue.dead_letter(job, reason)
        await self.ledger.abandon(job.group_key)
        self.metrics.dead_letters.labels(reason.split(":")[0]).inc()
        log.error(
            "job.dead_letter",
            job=job.id,
            reason=reason,
            source=job.source,
            group=job.group_key,
            attempts=job.attempts,
        )

    async def _run_memory_job(self, job: Job) -> None:
        """Degraded path: deliver without Redis; transient failures retry in memory."""
        self.in_flight += 1
        try:
            await self.processor.process(job, None)
            self.metrics.end_to_end_seconds.observe(max(0.0, time.time() - job.received_at))
        except (DeliveryFailed, RetryLater) as exc:
            if isinstance(exc, DeliveryFailed) and exc.permanent:
                log.error(
                    "job.dropped",
                    reason=str(exc),
                    group=job.group_key,
                    detail="permanent Slack error while Redis is down: no dead-letter list",
                )
                self.metrics.dead_letters.labels(str(exc)).inc()
            else:
                retry = dataclasses.replace(job, attempts=job.attempts + 1)
                delay = backoff_s(job.attempts, getattr(exc, "retry_after", None))
                asyncio.get_running_loop().call_later(delay, self.memory.put_nowait, retry)
        finally:
            self.in_flight -= 1

    # --- observability ---

    async def refresh_gauges(self) -> None:
        if not self.redis_ok:
            self.metrics.queue_depth.set(self.memory.qsize())
            return
        try:
            self.metrics.queue_depth.set(await self.queue.backlog())
            self.metrics.pending_age.set(await self.queue.pending_age_s())
            self.metrics.dead_letter_depth.set(await self.queue.dead_count())
        except RedisError as exc:
            self._redis_failed(exc, "metrics")


async def _keep(reader: JobQueue, job: Job, done: asyncio.Event) -> None:
    """Touch the job's entry every third of the claim idle time until `done`."""
    interval = reader.claim_idle_ms / 3000
    while not done.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), timeout=interval)
        if done.is_set():
            return
        try:
            held = await reader.touch(job)
        except RedisError:
            continue  # the job's own Redis calls report it; touch again next time
        if not held and not done.is_set():
            log.warning(
                "job.taken_over",
                job=job.id,
                consumer=reader.consumer,
                fix="another consumer took this job as idle: the event loop was blocked "
                "longer than JOB_CLAIM_IDLE_S; raise it, or find what blocked the loop",
            )
            return


__all__ = ["AcceptOutcome", "Pool"]
