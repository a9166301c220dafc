"""A PagerDuty acknowledgement through the real service: the page says who took it and when,
once, and keeps saying it when it resolves (issue 33, item 7b).

Real Redis, the real embedded index with the golden runbooks, the real models, and the fake
Slack on 127.0.0.1: with a bot token (the page is edited) and with an incoming webhook (it
cannot be edited: the line is posted, once).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.service import Services
from enricher.slack.acknowledged import BLOCK_ID
from enricher.slack.render import clock
from tests.conftest import wait_for
from tests.fakeslack import FakeSlack
from tests.helpers import CHANNEL, PD_SECRETS, dumps, pd_body, service_settings, sign

TITLE = "[FIRING:1] KafkaConsumerLagHigh kafka (critical)"
NOW = datetime.now(UTC)


def event(
    event_type: str, event_id: str, *, agent: str | None = None, minutes_ago: int = 1
) -> bytes:
    body = pd_body(TITLE, "kafka", event_type=event_type, event_id=event_id)
    body["event"]["occurred_at"] = (NOW - timedelta(minutes=minutes_ago)).isoformat()
    if agent is not None:
        body["event"]["agent"] = {"id": "PUSER", "summary": agent, "type": "user_reference"}
    return dumps(body)


def at(minutes_ago: int) -> str:
    return clock(NOW - timedelta(minutes=minutes_ago), datetime.now(UTC))


@dataclass
class Running:
    client: TestClient
    fake: FakeSlack
    sent: int = 0

    def send(self, body: bytes) -> dict[str, Any]:
        self.sent += 1
        signature = sign(body, PD_SECRETS[0])
        headers = {"X-PagerDuty-Signature": signature, "X-Webhook-Id": f"w{self.sent}"}
        response = self.client.post("/webhook/pagerduty", content=body, headers=headers)
        assert response.status_code == 202
        result: dict[str, Any] = response.json()
        return result

    def ok(self, method: str) -> list[dict[str, Any]]:
        return [c.body for c in self.fake.calls_to(method) if c.ok]


def lines(message: dict[str, Any]) -> list[str]:
    """The "Acknowledged" lines a message shows under its header."""
    return [
        element["text"]
        for block in message.get("blocks", [])
        if block.get("block_id") == BLOCK_ID
        for element in block["elements"]
    ]


@pytest.fixture()
def start(
    tmp_path: Path, golden_index: Path, redis_url: str, embedder: Embedder
) -> Iterator[Callable[[FakeSlack, bool], Running]]:
    """Start the service against the fake Slack, by bot token or (`webhook`) incoming webhook."""
    with contextlib.ExitStack() as stack:

        def run(fake: FakeSlack, webhook: bool) -> Running:
            extra = {"slack_webhook_url": fake.webhook_url} if webhook else {}
            bot = None if webhook else fake
            settings = service_settings(tmp_path, golden_index, redis_url, bot, **extra)
            services = Services.build(settings, embedder=embedder)
            return Running(stack.enter_context(TestClient(create_app(services))), fake)

        yield run


class TestAcknowledged:
    def test_the_page_says_who_and_when_once_and_keeps_it_on_resolve(
        self, start: Callable[[FakeSlack, bool], Running], fake_slack: FakeSlack
    ) -> None:
        """The acknowledgement edits the page (still FIRING) with one line; its retry is a
        duplicate; a later one replaces the line and an older one changes nothing; the
        resolve keeps the line."""
        running = start(fake_slack, False)
        running.send(event("incident.triggered", "E1", minutes_ago=10))
        wait_for(lambda: len(running.ok("chat.postMessage")) == 1, what="the page")
        ts = fake_slack.messages(CHANNEL)[0]["ts"]

        running.send(event("incident.acknowledged", "E2", agent="Jane Doe", minutes_ago=8))
        wait_for(lambda: len(running.ok("chat.update")) == 1, what="the acknowledged page")
        update = running.ok("chat.update")[0]
        assert update["ts"] == ts
        assert "FIRING" in json.dumps(update["blocks"])
        assert lines(update) == [f"👀 Acknowledged by Jane Doe at {at(8)}"]
        assert running.send(event("incident.acknowledged", "E2", agent="Jane Doe")) == {
            "status": "duplicate"
        }

        running.send(event("incident.acknowledged", "E3", agent="Sam Dba", minutes_ago=5))
        wait_for(lambda: len(running.ok("chat.update")) == 2, what="the second acknowledgement")
        assert lines(running.ok("chat.update")[1]) == [f"👀 Acknowledged by Sam Dba at {at(5)}"]

        running.send(event("incident.acknowledged", "E4", agent="Late Larry", minutes_ago=7))
        running.send(event("incident.resolved", "E5", minutes_ago=2))
        wait_for(lambda: len(running.ok("chat.update")) == 3, what="the resolved page")
        wait_for(lambda: len(running.ok("chat.postMessage")) == 2, what="the resolve reply")
        resolved = running.ok("chat.update")[2]
        assert "RESOLVED" in json.dumps(resolved["blocks"])
        assert lines(resolved) == [f"👀 Acknowledged by Sam Dba at {at(5)}"], "Larry's is older"
        assert not any("Late Larry" in json.dumps(u) for u in running.ok("chat.update"))

    def test_a_webhook_page_gets_the_line_posted_once(
        self, start: Callable[[FakeSlack, bool], Running], fake_slack: FakeSlack
    ) -> None:
        """An incoming webhook cannot edit: the line is posted as a message, once."""
        running = start(fake_slack, True)
        running.send(event("incident.triggered", "E1", minutes_ago=10))
        wait_for(lambda: len(running.ok("webhook.incoming")) == 1, what="the page")
        running.send(event("incident.acknowledged", "E2", agent="Jane Doe", minutes_ago=8))
        wait_for(lambda: len(running.ok("webhook.incoming")) == 2, what="the line")
        line = running.ok("webhook.incoming")[1]
        assert f"Acknowledged by Jane Doe at {at(8)}" in line["text"]
        running.send(event("incident.acknowledged", "E2", agent="Jane Doe"))
        running.send(event("incident.resolved", "E3", minutes_ago=2))
        wait_for(lambda: len(running.ok("webhook.incoming")) == 3, what="the resolve")
        texts = [m["text"] for m in running.ok("webhook.incoming")]
        assert sum("Acknowledged" in t for t in texts) == 1

    def test_an_incident_never_triggered_here_pages_with_the_line(
        self, start: Callable[[FakeSlack, bool], Running], fake_slack: FakeSlack
    ) -> None:
        """An acknowledgement whose trigger never reached us (the subscription started
        later, or the trigger was refused) is the page, with the line: it must not wait for
        a firing page that nobody owes (the fuzz run left such jobs retrying forever)."""
        running = start(fake_slack, False)
        running.send(event("incident.acknowledged", "E1", agent="Jane Doe", minutes_ago=3))
        wait_for(lambda: len(running.ok("chat.postMessage")) == 1, what="the page")
        page = running.ok("chat.postMessage")[0]
        assert "FIRING" in json.dumps(page["blocks"])
        assert lines(page) == [f"👀 Acknowledged by Jane Doe at {at(3)}"]
