"""SIGTERM while jobs are in flight (the fake Slack answers slowly): the process stops taking
jobs, finishes the ones it holds, exits with code 0, and after a restart every accepted page
is posted exactly once."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from scripts.chaos.harness import AM_TOKEN, CHANNEL, Enricher, enricher_env
from scripts.chaos.observed import log_events, unfinished_jobs
from scripts.chaos.observed import marker as marker_of
from scripts.chaos.workload import am_body, runbook_alerts
from scripts.index_copy import copy_index
from scripts.local_redis import RedisServer
from tests.conftest import wait_for
from tests.fakeslack import running_fake_slack

GROUPS = 12
SLACK_LATENCY_S = 1.0


@dataclasses.dataclass
class Outcome:
    exit_code: int
    posted_before_exit: int
    #: job.done events logged between SIGTERM and exit, and whether stop() ran to its end.
    finished_while_stopping: int
    stopped: bool
    posts_by_marker: dict[str, int]
    markers: list[str]


def top_level_posts(messages: list[dict[str, object]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for message in messages:
        meta = message.get("metadata")
        if isinstance(meta, dict) and not message.get("thread_ts"):
            key = str(meta["event_payload"]["key"])
            counts[key] = counts.get(key, 0) + 1
    return counts


@pytest.fixture(scope="module")
def outcome(
    tmp_path_factory: pytest.TempPathFactory, golden_index: Path, redis_server: RedisServer
) -> Iterator[Outcome]:
    """Send GROUPS pages, SIGTERM once a few are posted, restart, wait for the rest."""
    if redis_server.proc is None:
        redis_server.start()
    redis.Redis.from_url(redis_server.url).flushall()
    tmp = tmp_path_factory.mktemp("sigterm")
    copy_index(golden_index, tmp / "qdrant")
    with running_fake_slack(token="xoxb-test") as fake:
        fake.set_latency(SLACK_LATENCY_S)
        env = enricher_env(qdrant_path=tmp / "qdrant", redis_url=redis_server.url,
                           slack_url=fake.url, worker_id="sigterm-1", WORKERS="4")
        enricher = Enricher(env, tmp / "enricher.log")
        enricher.start()
        try:
            markers: list[str] = []
            for number in range(GROUPS):
                service, name = runbook_alerts()[number]
                key = f'{{}}:{{alertname="{name}", sigterm_test="{number}"}}'
                markers.append(marker_of(key, "firing"))
                body = am_body(key, name, service, number, [f"s{number}"], "firing")
                response = httpx.post(f"{enricher.url}/webhook/alertmanager", content=body,
                                      headers={"Authorization": f"Bearer {AM_TOKEN}"})
                assert response.json() == {"status": "queued"}
            wait_for(lambda: len(fake.calls_to("chat.postMessage")) >= 2, timeout_s=60,
                     what="the first posts")
            done_before = log_events(enricher.log_path)["job.done"]
            exit_code = enricher.terminate(timeout_s=60)
            events = log_events(enricher.log_path)
            posted_before_exit = len(fake.calls_to("chat.postMessage"))
            enricher.start()
            wait_for(lambda: set(top_level_posts(fake.messages(CHANNEL))) >= set(markers),
                     timeout_s=90, what="every page after the restart")
            wait_for(lambda: unfinished_jobs(redis_server.url) == 0, timeout_s=60,
                     what="an empty queue")
            time.sleep(SLACK_LATENCY_S * 2)  # a late duplicate would arrive by now
            yield Outcome(exit_code, posted_before_exit, events["job.done"] - done_before,
                          events["service.stopped"] == 1,
                          top_level_posts(fake.messages(CHANNEL)), markers)
        finally:
            enricher.stop()


class TestSigterm:
    def test_exits_with_code_0(self, outcome: Outcome) -> None:
        """SIGTERM is a clean shutdown: exit code 0, not death by the signal (143)."""
        assert outcome.exit_code == 0

    def test_finishes_jobs_in_flight(self, outcome: Outcome) -> None:
        """Jobs held at SIGTERM are finished (posted and acknowledged) before the exit."""
        assert outcome.stopped
        assert outcome.finished_while_stopping >= 1

    def test_stops_taking_jobs(self, outcome: Outcome) -> None:
        """The stopping process leaves the backlog in Redis for the next one."""
        assert outcome.posted_before_exit < GROUPS

    def test_every_page_posted_exactly_once_after_restart(self, outcome: Outcome) -> None:
        """Jobs finished before exit are not posted again; the rest are posted after restart."""
        assert outcome.posts_by_marker == dict.fromkeys(outcome.markers, 1)
