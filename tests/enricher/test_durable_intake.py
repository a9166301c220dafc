"""Intake when 202 must survive the loss of a Redis server (issue 22): with
REDIS_MIN_REPLICAS_ACK the webhook is answered 202 only once a replica holds the job, and
503 (which senders retry) when none confirms in time or no primary answers; never the
in-process fallback of the single-Redis default.

Real redis-server processes (a primary, and a replica started mid-test), the real service
in process, the fake Slack on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
import redis
from starlette.testclient import TestClient
from structlog.testing import capture_logs

from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.service import Services
from scripts.local_redis import RedisServer
from tests.conftest import wait_for
from tests.fakeslack import FakeSlack
from tests.helpers import AM_TOKEN, am_alert, am_body, attach_replica, dumps, service_settings

BEARER = {"Authorization": f"Bearer {AM_TOKEN}"}
BODY = dumps(am_body(am_alert("PostgresReplicationLag", "postgres", fingerprint="d1")))


@dataclass
class Running:
    client: TestClient
    primary: RedisServer
    fake: FakeSlack

    def send(self) -> httpx2.Response:
        return self.client.post("/webhook/alertmanager", content=BODY, headers=BEARER)

    def posts(self) -> int:
        return len([c for c in self.fake.calls_to("chat.postMessage") if c.ok])


@pytest.fixture()
def running(
    tmp_path: Path, golden_index: Path, fake_slack: FakeSlack, embedder: Embedder
) -> Iterator[Running]:
    """The service with REDIS_MIN_REPLICAS_ACK=1 on a primary that has no replica yet."""
    primary = RedisServer(tmp_path / "primary")
    (tmp_path / "primary").mkdir()
    primary.start()
    settings = service_settings(
        tmp_path, golden_index, primary.url, fake_slack,
        redis_min_replicas_ack=1, redis_min_replicas_ack_timeout_ms=100,
    )
    services = Services.build(settings, embedder=embedder)
    try:
        with TestClient(create_app(services)) as client:
            yield Running(client, primary, fake_slack)
    finally:
        primary.kill()


class TestReplicaAck:
    def test_no_replica_confirming_is_503_and_the_retry_is_202_once_one_does(
        self, running: Running, tmp_path: Path
    ) -> None:
        """Without a replica WAIT times out: 503 with the reason, logged and counted. The
        job is on the primary, so the sender's retry is a duplicate, and that answer too
        waits for a replica: 202 once one holds it. One page either way."""
        with capture_logs() as logs:
            refused = running.send()
        assert refused.status_code == 503
        assert refused.json()["status"] == "unavailable"
        assert refused.headers["retry-after"] == "1"
        assert [e for e in logs if e["event"] == "intake.not_replicated"]
        assert "reached 0 of the 1 replica(s)" in next(
            e["error"] for e in logs if e["event"] == "intake.not_replicated"
        )
        assert running.send().status_code == 503, "a repeat is not confirmed either"
        metrics = running.client.get("/metrics").text
        assert 'rbe_intake_unavailable_total{source="alertmanager"} 2.0' in metrics

        replica = attach_replica(tmp_path, running.primary)
        try:
            # As a sender does: retry the 503 (on a busy machine one WAIT of 100 ms can
            # still miss the replica's answer).
            wait_for(lambda: running.send().status_code == 202,
                     what="a 202 once a replica holds the job")
            accepted = running.send()
            assert accepted.status_code == 202
            assert accepted.json() == {"status": "duplicate"}
            with redis.Redis(port=replica.port) as copy:
                assert copy.keys("rbe:seen:*"), "the replica holds the dedup mark"
            wait_for(lambda: running.posts() == 1, what="the page")
        finally:
            replica.kill()

    def test_redis_down_is_503_not_the_in_process_fallback(self, running: Running) -> None:
        """The default answers 202 "degraded" and delivers from memory when Redis is down;
        a deployment that asked for a replica ack gets 503, and nothing is posted."""
        running.primary.kill()
        response = running.send()
        assert response.status_code == 503
        assert response.json()["status"] == "unavailable"
        assert 'rbe_intake_degraded_total 0.0' in running.client.get("/metrics").text
        assert running.posts() == 0
