"""kill -9 between a PagerDuty incident's Slack page and its note: still exactly one of each
(issue 35). Modelled on the Slack crash windows (test_crash_recovery.TestKill9): a real
`python -m enricher` is killed and restarted with the same WORKER_ID, against the fake
Slack and the fake PagerDuty REST API on 127.0.0.1.

Two windows: the page is out and the note not yet sent (PagerDuty had asked it to wait), and
the note's request is in PagerDuty's hands when the process dies (PagerDuty stores it, the
answer never arrives). In the second, the restarted process finds the note by its ref
instead of adding it again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from scripts.chaos.harness import PD_SECRET, Enricher, enricher_env
from scripts.chaos.observed import log_events, unfinished_jobs
from scripts.index_copy import copy_index
from tests.conftest import wait_for
from tests.fakepagerduty import FakePagerDuty
from tests.fakeslack import FakeSlack
from tests.helpers import pd_body, sign

TITLE = "[FIRING:1] KafkaConsumerLagHigh kafka (critical)"
INCIDENT = "QCRASH1"
NOW = datetime.now(UTC)


def trigger() -> bytes:
    body = pd_body(TITLE, "kafka", incident=INCIDENT, event_id="ECRASH1")
    body["event"]["occurred_at"] = (NOW - timedelta(minutes=1)).isoformat()
    return json.dumps(body).encode()


@pytest.fixture()
def enricher(
    tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack,
    fake_pd: FakePagerDuty,
) -> Iterator[Enricher]:
    copy_index(golden_index, tmp_path / "qdrant")
    env = enricher_env(
        qdrant_path=tmp_path / "qdrant", redis_url=redis_url, slack_url=fake_slack.url,
        worker_id="pd-crash-1", WORKERS="2", JOB_CLAIM_IDLE_S="3", POST_LEASE_S="120",
        PAGERDUTY_API_TOKEN=fake_pd.token, PAGERDUTY_FROM="oncall-bot@example.com",
        PAGERDUTY_API_URL=fake_pd.url,
    )
    running = Enricher(env, tmp_path / "enricher.log")
    running.start()
    try:
        yield running
    finally:
        running.stop()


def send_trigger(enricher: Enricher) -> None:
    body = trigger()
    headers = {"X-PagerDuty-Signature": sign(body, PD_SECRET), "X-Webhook-Id": "wcrash"}
    response = httpx.post(f"{enricher.url}/webhook/pagerduty", content=body, headers=headers)
    assert response.json() == {"status": "queued"}


def pages(fake: FakeSlack) -> int:
    return sum(c.ok for c in fake.calls_to("chat.postMessage"))


class TestKill9BetweenPageAndNote:
    def test_page_out_note_waiting(
        self, enricher: Enricher, fake_slack: FakeSlack, fake_pd: FakePagerDuty, redis_url: str
    ) -> None:
        """PagerDuty said 429 (wait 4 s); the process dies while it waits: after the restart
        the note is added once, and the page is not posted again."""
        fake_pd.fail_next(1, status=429, retry_after=4)
        send_trigger(enricher)
        wait_for(lambda: len(fake_pd.posts()) == 1 and pages(fake_slack) == 1, timeout_s=60,
                 what="the page and the refused note")
        enricher.kill()
        assert fake_pd.all_notes() == {}

        enricher.start()
        wait_for(lambda: len(fake_pd.notes(INCIDENT)) == 1 and unfinished_jobs(redis_url) == 0,
                 timeout_s=120, what="the note after the restart")
        assert pages(fake_slack) == 1
        assert [c.status for c in fake_pd.posts()] == [429, 201]

    def test_note_in_flight_at_the_kill_is_found_not_repeated(
        self, enricher: Enricher, fake_slack: FakeSlack, fake_pd: FakePagerDuty, redis_url: str
    ) -> None:
        """PagerDuty has stored the note but not answered when the process dies: the
        restarted process takes the dead sender's claim over, lists the incident's notes,
        finds the ref, and adds nothing."""
        fake_pd.set_latency(3.0)
        send_trigger(enricher)
        wait_for(lambda: len(fake_pd.posts()) == 1, timeout_s=60, what="the note's request")
        assert pages(fake_slack) == 1, "the page goes before the note"
        enricher.kill()
        fake_pd.set_latency(0.0)
        assert len(fake_pd.notes(INCIDENT)) == 1

        enricher.start()
        wait_for(lambda: unfinished_jobs(redis_url) == 0 and any(
            c.method == "GET" for c in fake_pd.calls), timeout_s=120, what="the lookup")
        assert len(fake_pd.notes(INCIDENT)) == 1
        assert len(fake_pd.posts()) == 1
        assert pages(fake_slack) == 1
        assert log_events(enricher.log_path)["pagerduty.note_found"] == 1
