"""The worker pool on a real Redis with the real service: a job is worked on by one worker."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from starlette.testclient import TestClient
from structlog.testing import capture_logs

from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.pipeline.queue import JobQueue, new_job
from enricher.service import Services
from enricher.sources import from_group
from enricher.sources.alertmanager import parse_alertmanager
from scripts.chaos.observed import unfinished_jobs
from scripts.chaos.workload import am_body, runbook_alerts
from scripts.local_redis import RedisServer
from tests.conftest import wait_for
from tests.fakeslack import FakeSlack
from tests.helpers import AM_TOKEN, service_settings

#: Far shorter than one (slowed) Slack call, so an untouched job in progress looks idle.
CLAIM_IDLE_S = 0.3


@pytest.fixture()
def slow_slack_client(
    tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack, embedder: Embedder
) -> Iterator[TestClient]:
    fake_slack.set_latency(1.0)
    settings = service_settings(tmp_path, golden_index, redis_url, None, workers=2,
                                job_claim_idle_s=CLAIM_IDLE_S,
                                slack_webhook_url=fake_slack.webhook_url)
    with TestClient(create_app(Services.build(settings, embedder=embedder))) as client:
        yield client


def logged(logs: list[MutableMapping[str, Any]], event: str) -> bool:
    return any(e["event"] == event for e in logs)


class TestOneWorkerPerJob:
    def test_a_job_held_longer_than_the_idle_time_is_not_taken_over(
        self, slow_slack_client: TestClient, fake_slack: FakeSlack, redis_url: str
    ) -> None:
        """Slack takes a second to answer, more than JOB_CLAIM_IDLE_S: the worker keeps its
        job touched, so the idle second worker does not take it as abandoned."""
        service, name = runbook_alerts()[0]
        body = am_body("{}:{pool=\"1\"}", name, service, 1, ["0001aa"], "firing")
        with capture_logs() as logs:
            response = slow_slack_client.post("/webhook/alertmanager", content=body,
                                              headers={"Authorization": f"Bearer {AM_TOKEN}"})
            assert response.json() == {"status": "queued"}
            # The job is acked a moment before its line is logged: wait for both, or the
            # capture may close in between.
            wait_for(lambda: unfinished_jobs(redis_url) == 0 and logged(logs, "job.done"),
                     timeout_s=30, what="the job")
        worked = [(e["event"], e.get("outcome"), e.get("attempts")) for e in logs
                  if e["event"] in ("job.done", "job.retry_later", "job.taken_over")]
        assert worked == [("job.done", "posted", 1)]
        assert len(fake_slack.calls_to("webhook.incoming")) == 1


@pytest.fixture()
def durable_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis of its own that keeps its data across a kill (AOF, fsync always)."""
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis", durable=True)
    server.start()
    try:
        yield server
    finally:
        server.kill()


class TestRedisLostMidJob:
    def test_a_job_cut_off_does_not_wait_for_its_own_claim(
        self, tmp_path: Path, golden_index: Path, durable_redis: RedisServer,
        fake_slack: FakeSlack, embedder: Embedder,
    ) -> None:
        """Redis dies while the worker's post is in Slack: the post goes out, storing it
        fails. Once Redis is back (the same data), the pool gives the claim back with a
        marker lookup owed, so the re-run finds the post instead of meeting its own
        process's claim as "post in flight" until POST_LEASE_S (120 s) runs out (the wait
        outlasts that lease, so without the fix this fails on what the log shows)."""
        fake_slack.set_latency(1.5)
        settings = service_settings(tmp_path, golden_index, durable_redis.url, fake_slack,
                                    workers=1)
        service, name = runbook_alerts()[0]
        key = '{}:{pool="cut-off"}'
        body = am_body(key, name, service, 1, ["0001cc"], "firing")
        post = "rbe:post:" + hashlib.sha256(key.encode()).hexdigest()

        def state() -> bytes | None:
            with redis.Redis.from_url(durable_redis.url) as client:
                value = client.hget(post, "state")
            assert value is None or isinstance(value, bytes)
            return value

        with capture_logs() as logs, TestClient(
            create_app(Services.build(settings, embedder=embedder))
        ) as client:
            response = client.post("/webhook/alertmanager", content=body,
                                   headers={"Authorization": f"Bearer {AM_TOKEN}"})
            assert response.json() == {"status": "queued"}
            wait_for(lambda: state() == b"claimed", what="the worker's claim")
            durable_redis.kill()
            wait_for(lambda: any(e["event"] == "redis.unavailable" and e.get("during") ==
                                 "process" for e in logs), what="the job to meet the outage")
            durable_redis.start()
            wait_for(lambda: unfinished_jobs(durable_redis.url) == 0 and state() == b"posted"
                     and logged(logs, "job.done"), timeout_s=200, what="the job to finish")
        worked = [(e["event"], e.get("outcome"), e.get("reason")) for e in logs
                  if e["event"] in ("job.done", "job.retry_later", "redis.claim_released")]
        assert worked == [("redis.claim_released", None, None), ("job.done", "recovered", None)]
        posts = [c for c in fake_slack.calls_to("chat.postMessage") if c.ok]
        assert len(posts) == 1


class TestFailoverLeftovers:
    def test_a_claim_whose_record_died_with_the_primary_is_found_not_waited_out(
        self, tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack,
        embedder: Embedder,
    ) -> None:
        """What a promoted replica can hold after the primary died (RELIABILITY.md, "What is
        in flight at a failover"): the page was posted and its record and ack written on
        the old primary, but only the claim had reached the replica, so the job comes back
        and meets its own process's claim. No worker of the process is on the group, so
        the claim is a leftover: taken over with the marker lookup, which finds the page.
        (Before: "post in flight" until POST_LEASE_S, 120 s, ran out; this wait is 30 s.)"""
        settings = service_settings(tmp_path, golden_index, redis_url, fake_slack, workers=2)
        services = Services.build(settings, embedder=embedder)
        service, name = runbook_alerts()[0]
        key = '{}:{pool="failover"}'
        body = am_body(key, name, service, 1, ["0001dd"], "firing")
        post = "rbe:post:" + hashlib.sha256(key.encode()).hexdigest()
        headers = {"Authorization": f"Bearer {AM_TOKEN}"}

        def done(logs: list[MutableMapping[str, Any]], n: int) -> bool:
            ended = [e for e in logs if e["event"] == "job.done"]
            return unfinished_jobs(redis_url) == 0 and len(ended) == n

        with capture_logs() as logs, TestClient(create_app(services)) as client:
            assert client.post("/webhook/alertmanager", content=body,
                               headers=headers).json() == {"status": "queued"}
            wait_for(lambda: done(logs, 1), timeout_s=30, what="the first job")
            with redis.Redis.from_url(redis_url) as r:
                seconds, micros = r.time()
                r.delete(post, *r.keys("rbe:seen:*"))
                r.hset(post, mapping={
                    "state": "claimed", "owner": services.processor.owner,
                    "claimed_at": f"{seconds + micros / 1e6:.6f}",
                    "lease_s": repr(settings.post_lease_s), "group_key": key,
                })
            assert client.post("/webhook/alertmanager", content=body,
                               headers=headers).json() == {"status": "queued"}
            wait_for(lambda: done(logs, 2), timeout_s=30, what="the job to come back and end")
        worked = [(e["event"], e.get("outcome"), e.get("reason")) for e in logs
                  if e["event"] in ("job.done", "job.retry_later")]
        assert worked == [("job.done", "posted", None), ("job.done", "recovered", None)]
        assert len([c for c in fake_slack.calls_to("chat.postMessage") if c.ok]) == 1


class TestPoisonJob:
    def test_a_job_whose_every_try_died_is_dead_lettered_not_tried_again(
        self, tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack,
        embedder: Embedder
    ) -> None:
        """A job read DELIVERY_MAX_ATTEMPTS times and never finished (its process died during
        each try) goes to the dead-letter stream when it is read again, instead of killing
        the process once more."""
        service, name = runbook_alerts()[0]
        body = am_body("{}:{poison=\"1\"}", name, service, 1, ["00aa11"], "firing")
        job = new_job(from_group(parse_alertmanager(body)))
        settings = service_settings(tmp_path, golden_index, redis_url, fake_slack, workers=1,
                                    worker_id="poison", delivery_max_attempts=2)

        async def crash_twice() -> None:
            client = aioredis.Redis.from_url(redis_url)
            queue = JobQueue(client, consumer="poison", claim_idle_ms=60_000)
            await queue.ensure_group()
            await queue.enqueue_once(job, "rbe:seen:poison", 60_000)
            for _ in range(2):  # a process that reads the job, then dies before any outcome
                assert len(await queue.worker(0).read(count=1)) == 1
            await client.aclose()

        asyncio.run(crash_twice())
        with capture_logs() as logs, TestClient(create_app(Services.build(settings,
                                                                          embedder=embedder))):
            wait_for(lambda: unfinished_jobs(redis_url) == 0 and logged(logs, "job.dead_letter"),
                     timeout_s=30, what="the job")
        dead = [e for e in logs if e["event"] == "job.dead_letter"]
        assert [(e["reason"], e["attempts"]) for e in dead] == [
            ("crashed: the process died during every try", 3)
        ]
        assert fake_slack.calls_to("chat.postMessage") == []
