"""PagerDuty incident notes through the real service (issue 35, item 1): a signed trigger
gives one Slack page and one note, the page first and never held back by the note.

Real Redis, the real embedded index with the golden runbooks, the real models, the fake
Slack and the fake PagerDuty REST API (tests.fakepagerduty) on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from structlog.testing import capture_logs

from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.notes.content import SIGNATURE
from enricher.service import Services
from scripts.chaos.observed import unfinished_jobs
from tests.conftest import wait_for
from tests.fakepagerduty import FakePagerDuty, running_fake_pagerduty
from tests.fakeslack import FakeSlack
from tests.helpers import PD_SECRETS, dumps, pd_body, service_settings, sign

TITLE = "[FIRING:1] KafkaConsumerLagHigh kafka (critical)"
FROM = "oncall-bot@example.com"
#: Pinned to the test run's start: PagerDuty refuses nothing within 48 h.
NOW = datetime.now(UTC)


def event(event_type: str, event_id: str, *, incident: str = "Q1ABC", title: str = TITLE) -> bytes:
    body = pd_body(title, "kafka", event_type=event_type, event_id=event_id, incident=incident)
    body["event"]["occurred_at"] = (NOW - timedelta(minutes=1)).isoformat()
    return dumps(body)


@dataclass
class Running:
    client: TestClient
    slack: FakeSlack
    pd: FakePagerDuty
    sent: int = 0

    def send(self, body: bytes) -> dict[str, Any]:
        self.sent += 1
        headers = {"X-PagerDuty-Signature": sign(body, PD_SECRETS[0]),
                   "X-Webhook-Id": f"w{self.sent}"}
        response = self.client.post("/webhook/pagerduty", content=body, headers=headers)
        assert response.status_code == 202
        result: dict[str, Any] = response.json()
        return result

    def pages(self) -> int:
        return sum(c.ok for c in self.slack.calls_to("chat.postMessage"))


@pytest.fixture()
def start(
    tmp_path: Path, golden_index: Path, redis_url: str, embedder: Embedder,
    fake_slack: FakeSlack,
) -> Iterator[Callable[..., Running]]:
    with contextlib.ExitStack() as stack:

        def run(pd: FakePagerDuty, **extra: Any) -> Running:
            values = {"pagerduty_api_token": pd.token, "pagerduty_from": FROM,
                      "pagerduty_api_url": pd.url, **extra}
            settings = service_settings(tmp_path, golden_index, redis_url, fake_slack, **values)
            services = Services.build(settings, embedder=embedder)
            return Running(stack.enter_context(TestClient(create_app(services))), fake_slack, pd)

        yield run


class TestIncidentNotes:
    def test_trigger_gets_one_page_and_one_note_whatever_follows(
        self, start: Callable[..., Running], fake_pd: FakePagerDuty, redis_url: str
    ) -> None:
        """The note names the runbook, its link and score, and carries its ref; the
        redelivered trigger, an acknowledgement and the resolve add no second note."""
        running = start(fake_pd)
        running.send(event("incident.triggered", "E1"))
        wait_for(lambda: len(fake_pd.notes("Q1ABC")) == 1, what="the note")
        assert running.pages() == 1
        note = fake_pd.notes("Q1ABC")[0]
        content = note["content"]
        assert content.startswith("Runbook: ")
        assert "https://git.example.com/ops/runbooks/blob/main/" in content
        assert "\nMatch " in content and SIGNATURE in content
        assert note["user"]["summary"] == FROM

        assert running.send(event("incident.triggered", "E1")) == {"status": "duplicate"}
        running.send(event("incident.acknowledged", "E2"))
        running.send(event("incident.resolved", "E3"))
        wait_for(lambda: len(running.slack.calls_to("chat.update")) >= 2, what="the edits")
        wait_for(lambda: unfinished_jobs(redis_url) == 0, what="every job done")
        assert len(fake_pd.posts()) == 1
        assert running.pages() == 2  # the page and its resolve reply

    def test_rate_limited_note_waits_while_the_page_goes_out(
        self, start: Callable[..., Running], fake_pd: FakePagerDuty
    ) -> None:
        """429 with Retry-After: the page is out at once; the note follows after the wait."""
        fake_pd.fail_next(2, status=429, retry_after=1)
        running = start(fake_pd)
        with capture_logs() as logs:
            running.send(event("incident.triggered", "E1"))
            wait_for(lambda: running.pages() == 1, what="the page")
            wait_for(lambda: len(fake_pd.notes("Q1ABC")) == 1, what="the note")
        assert [c.status for c in fake_pd.posts()] == [429, 429, 201]
        retries = [e for e in logs if e["event"] == "pagerduty.note_retry"]
        assert [r["delay_s"] for r in retries] == [1.0, 1.0], "Retry-After honoured"

    def test_server_error_is_looked_up_before_it_is_sent_again(
        self, start: Callable[..., Running], fake_pd: FakePagerDuty
    ) -> None:
        """After a 500 PagerDuty may hold the note: the retry lists the incident's notes
        first, then adds it, once."""
        fake_pd.fail_next(1, status=500)
        running = start(fake_pd)
        running.send(event("incident.triggered", "E1"))
        wait_for(lambda: len(fake_pd.notes("Q1ABC")) == 1, what="the note")
        assert [(c.method, c.status) for c in fake_pd.calls] == [
            ("POST", 500), ("GET", 200), ("POST", 201)
        ]
        assert running.pages() == 1

    def test_refused_key_is_stated_once_in_readyz_and_the_log(
        self, start: Callable[..., Running], fake_pd: FakePagerDuty, redis_url: str
    ) -> None:
        """401/403: permanent. Pages still go out; /readyz names the problem as a warning
        (still ready); one log line."""
        running = start(fake_pd, pagerduty_api_token="wrong-key")
        with capture_logs() as logs:
            running.send(event("incident.triggered", "E1", incident="Q1"))
            running.send(event("incident.triggered", "E2", incident="Q2"))
            wait_for(lambda: len(fake_pd.posts()) == 2 and unfinished_jobs(redis_url) == 0,
                     what="both note attempts, their jobs done")
            wait_for(lambda: running.pages() == 2, what="both pages")
        ready = running.client.get("/readyz")
        assert ready.status_code == 200, "the pages go out: the replica stays in service"
        check = ready.json()["checks"]["pagerduty_notes"]
        assert check["ok"] is True and "PAGERDUTY_API_TOKEN" in check["warning"]
        assert [e["status"] for e in logs if e["event"] == "pagerduty.notes_refused"] == [403]
        assert fake_pd.all_notes() == {}

    def test_unknown_incident_is_dropped_with_a_log_line(
        self, start: Callable[..., Running]
    ) -> None:
        with running_fake_pagerduty(incidents=()) as pd:
            running = start(pd)
            with capture_logs() as logs:
                running.send(event("incident.triggered", "E1"))
                wait_for(lambda: len(pd.posts()) == 1, what="the note attempt")
                wait_for(lambda: any(e["event"] == "pagerduty.note_dropped" for e in logs),
                         what="the log line")
            assert running.pages() == 1
            assert running.client.get("/readyz").json()["checks"]["pagerduty_notes"]["ok"]

    def test_no_match_gets_no_note_by_default(
        self, start: Callable[..., Running], fake_pd: FakePagerDuty, redis_url: str
    ) -> None:
        running = start(fake_pd)
        title = "[FIRING:1] ZqxWobbleFlux zorp (critical)"
        running.send(event("incident.triggered", "E1", incident="QNONE", title=title))
        wait_for(lambda: running.pages() == 1, what="the page")
        wait_for(lambda: unfinished_jobs(redis_url) == 0, what="the job done")
        assert fake_pd.calls == []


class TestNotesUnderFaults:
    def test_random_429s_and_500s_lose_and_double_no_note(
        self, start: Callable[..., Running], fake_pd: FakePagerDuty, redis_url: str
    ) -> None:
        """A burst of incidents while PagerDuty answers a quarter of the calls with 429 or
        500 (half the 500s after it stored the note): one page and one note each."""
        fake_pd.set_fault_rates(0.15, 0.15, seed=35)
        running = start(fake_pd)
        incidents = [f"QF{n:02d}" for n in range(12)]
        for n, incident in enumerate(incidents):
            running.send(event("incident.triggered", f"EF{n}", incident=incident))
        wait_for(lambda: all(fake_pd.notes(i) for i in incidents)
                 and unfinished_jobs(redis_url) == 0, timeout_s=240, what="every note")
        assert {i: len(fake_pd.notes(i)) for i in incidents} == dict.fromkeys(incidents, 1)
        assert running.pages() == len(incidents)
        statuses = Counter((c.method, c.status) for c in fake_pd.calls)
        print(f"PagerDuty calls under faults: {dict(statuses)}")
        assert statuses["POST", 429] and statuses["POST", 500], "the faults were exercised"
