"""The running service: what the app needs, built once from settings, and the worker pool.

Intake (`accept`) writes the job to Redis and returns; workers read jobs, run the processor
and acknowledge only after Slack took the message. When Redis is down, intake keeps
answering 2xx and hands the job to an in-memory queue instead (no dedup, lost on restart:
logged and counted) until Redis answers again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import redis.asyncio as aioredis
import structlog
from qdrant_client import QdrantClient
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from enricher import index
from enricher.delivery import Delivery, build_delivery
from enricher.embedding import Embedder
from enricher.errors import BadRequest, ConfigError, DeliveryFailed
from enricher.jobs import Job, JobQueue
from enricher.ledger import Ledger
from enricher.metrics import Metrics
from enricher.routing import parse_routes
from enricher.search import Searcher, build_searcher
from enricher.settings import Settings
from enricher.worker import Processor, RetryLater, backoff_s

log = structlog.get_logger(__name__)

AcceptOutcome = Literal["queued", "duplicate", "degraded"]
READ_BLOCK_MS = 500
REDIS_RETRY_S = 2.0


@dataclass
class Services:
    settings: Settings
    embedder: Embedder
    client: QdrantClient
    searcher: Searcher
    delivery: Delivery
    processor: Processor
    metrics: Metrics
    worker_id: str
    redis: aioredis.Redis
    queue: JobQueue
    ledger: Ledger
    redis_ok: bool = False
    memory: asyncio.Queue[Job] = field(default_factory=asyncio.Queue)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    in_flight: int = 0

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        delivery: Delivery | None = None,
        embedder: Embedder | None = None,
    ) -> Services:
        """Everything that can be checked before serving is checked here (ConfigError).

        `delivery` and `embedder` can be handed in (tests, benchmarks) to reuse loaded parts.
        """
        embedder = embedder or Embedder(settings)
        client = index.open_client(settings)
        index.verify_collection(client, settings.qdrant_collection, embedder.identity)
        if not settings.allow_unauthenticated and not (
            settings.alertmanager_auth_configured or settings.pagerduty_auth_configured
        ):
            raise ConfigError(
                "no webhook auth configured: set ALERTMANAGER_BEARER_TOKENS (or "
                "ALERTMANAGER_BASIC_AUTH) and/or PAGERDUTY_SIGNING_SECRETS; for a local demo "
                "only, ALLOW_UNAUTHENTICATED=true"
            )
        router = parse_routes(settings.slack_routes, settings.slack_channel)
        delivery = delivery or build_delivery(settings)
        metrics = Metrics()
        worker_id = settings.worker_id or socket.gethostname()
        searcher = build_searcher(settings, client, embedder)
        processor = Processor(
            searcher=searcher,
            delivery=delivery,
            router=router,
            metrics=metrics,
            owner=f"{worker_id}:{os.getpid()}",
            runbook_base_url=settings.runbook_base_url,
            lease_s=settings.post_lease_s,
        )
        # redis-py's from_url has no retry policy: one retry lets a stale pooled connection
        # reconnect after a Redis restart instead of failing the first command.
        redis_client = aioredis.Redis.from_url(
            settings.redis_url,
            socket_timeout=2,
            socket_connect_timeout=2,
            retry=Retry(NoBackoff(), 1),
        )
        queue = JobQueue(
            redis_client,
            consumer=worker_id,
            claim_idle_ms=int(settings.job_claim_idle_s * 1000),
        )
        ledger = Ledger(redis_client, dedup_ttl_s=settings.dedup_ttl_s)
        return cls(
            settings=settings,
            embedder=embedder,
            client=client,
            searcher=searcher,
            delivery=delivery,
            processor=processor,
            metrics=metrics,
            worker_id=worker_id,
            redis=redis_client,
            queue=queue,
            ledger=ledger,
        )

    # --- lifecycle ---

    async def start(self) -> None:
        await self._connect_redis()
        for number in range(self.settings.workers):
            self.tasks.append(asyncio.create_task(self._work(number), name=f"worker-{number}"))
        self.tasks.append(asyncio.create_task(self._watch_redis(), name="redis-watch"))
        log.info(
            "service.started",
            workers=self.settings.workers,
            redis=self.redis_ok,
            worker_id=self.worker_id,
        )

    async def stop(self, grace_s: float = 10.0) -> None:
        """Stop taking jobs, let in-flight ones finish within `grace_s`, then exit.

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
        await self.delivery.close()
        await self.redis.aclose()
        self.client.close()
        log.info("service.stopped")

    async def _connect_redis(self) -> bool:
        try:
            await self.redis.ping()
            await self.queue.ensure_group()
        except RedisError as exc:
            if self.redis_ok or not self.tasks:
                log.error(
                    "redis.unavailable",
                    error=str(exc),
                    effect="in-process delivery, no dedup, not durable",
                )
            self.redis_ok = False
            return False
        if not self.redis_ok and self.tasks:
            log.info("redis.recovered")
        self.redis_ok = True
        return True

    async def _watch_redis(self) -> None:
        while not self.stopping.is_set():
            await asyncio.sleep(REDIS_RETRY_S)
            if not self.redis_ok:
                await self._connect_redis()

    def _redis_failed(self, exc: Exception, during: str) -> None:
        if self.redis_ok:
            log.error(
                "redis.unavailable",
                error=str(exc),
                during=during,
                effect="in-process delivery, no dedup, not durable",
            )
        self.redis_ok = False

    # --- intake ---

    async def accept(self, job: Job) -> AcceptOutcome:
        """Make the job durable (or at least queued in memory) before the 2xx goes out.

        The dedup mark and the enqueue are one Redis script: a crash between them cannot
        leave a delivery marked "seen" whose job was never queued. A firing job also marks
        its group's post as owed, so a resolve that a worker picks up first waits for it.
        """
        if self.redis_ok:
            try:
                seen = self.ledger.seen_key(job.dedup_key)
                owed = self.ledger.owed_post(job.group_key) if job.status == "firing" else None
                entry = await self.queue.enqueue_once(
                    job, seen, self.ledger.dedup_ttl_ms, owed_post=owed
                )
                return "queued" if entry is not None else "duplicate"
            except RedisError as exc:
                self._redis_failed(exc, "intake")
        self.metrics.degraded_intake.inc()
        await self.memory.put(job)
        return "degraded"

    # --- workers ---

    async def _work(self, number: int) -> None:
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
                jobs = await self.queue.read(count=1, block_ms=READ_BLOCK_MS)
            except RedisError as exc:
                self._redis_failed(exc, "read")
                continue
            for job in jobs:
                await self._run_queued_job(job)

    async def _run_queued_job(self, job: Job) -> None:
        self.in_flight += 1
        try:
            outcome = await self.processor.process(job, self.ledger)
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
        except BadRequest as exc:  # a stored body that no longer parses: nothing will fix it
            await self._dead(job, f"unparseable: {exc.reason}")
        except RedisError as exc:
            # The job stays pending and is re-read once Redis is back.
            self._redis_failed(exc, "process")
        except Exception as exc:
            log.exception("job.crashed", job=job.id, error=type(exc).__name__)
            if job.attempts >= self.settings.delivery_max_attempts:
                await self._dead(job, f"crashed: {type(exc).__name__}")
            else:
                await self.queue.retry_later(job, backoff_s(job.attempts))
        finally:
            self.in_flight -= 1

    async def _delivery_failed(self, job: Job, exc: DeliveryFailed) -> None:
        self.metrics.slack_failures.labels(str(exc)).inc()
        if exc.permanent or job.attempts >= self.settings.delivery_max_attempts:
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
            permanent = isinstance(exc, DeliveryFailed) and exc.permanent
            if permanent:
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
        except BadRequest as exc:
            log.error("job.dropped", reason=exc.reason, group=job.group_key)
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

    async def readiness(self) -> dict[str, dict[str, Any]]:
        checks: dict[str, dict[str, Any]] = {
            "models": {"ok": True, "detail": self.embedder.identity.dense}
        }
        try:
            await asyncio.wait_for(
                asyncio.to_thread(
                    index.verify_collection,
                    self.client,
                    self.settings.qdrant_collection,
                    self.embedder.identity,
                ),
                timeout=3,
            )
            checks["qdrant"] = {"ok": True}
        except Exception as exc:  # any failure means "not ready", with its reason
            checks["qdrant"] = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}
        try:
            await asyncio.wait_for(self.redis.ping(), timeout=2)
            checks["redis"] = {"ok": True}
        except (RedisError, TimeoutError) as exc:
            checks["redis"] = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}
        workers = [t for t in self.tasks if t.get_name().startswith("worker-")]
        alive = sum(not t.done() for t in workers)
        checks["workers"] = {
            "ok": alive == len(workers) and alive > 0,
            "detail": f"{alive}/{len(workers)} running",
        }
        return checks
