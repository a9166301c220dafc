""""Last time" on the page through the real service (issue 35, item 3): the line is right
across a resolve, a vote and a re-fire, and names flapping.

Real Redis, the real embedded index with the golden runbooks, the real models, the fake
Slack on 127.0.0.1. Times are the bodies' own (startsAt, endsAt) and the webhooks' arrival;
nothing depends on today's date.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.service import Services
from enricher.slack.history import BLOCK_ID
from scripts.chaos.observed import unfinished_jobs
from tests.conftest import wait_for
from tests.fakeslack import FakeSlack
from tests.helpers import AM_TOKEN, CHANNEL, am_alert, am_body, dumps, service_settings

SECRET = "slack-signing-secret-for-tests"
GROUP = "g-history"
FIRING = am_alert("KafkaConsumerLagHigh", "kafka", fingerprint="k1",
                  summary="consumer group lag is growing", starts="2026-11-28T03:00:00Z")


@dataclass
class Running:
    client: TestClient
    fake: FakeSlack
    redis_url: str

    def send(self, body: dict[str, Any]) -> None:
        body["groupKey"] = GROUP
        response = self.client.post("/webhook/alertmanager", content=dumps(body),
                                    headers={"Authorization": f"Bearer {AM_TOKEN}"})
        assert response.status_code == 202
        wait_for(lambda: unfinished_jobs(self.redis_url) == 0, what="the job done")

    def fire(self, starts: str) -> dict[str, Any]:
        before = len(self.pages())
        self.send(am_body({**FIRING, "startsAt": starts}))
        wait_for(lambda: len(self.pages()) > before, what="the page")
        return self.pages()[0]

    def resolve(self, starts: str, ends: str) -> None:
        alert = {**FIRING, "status": "resolved", "startsAt": starts, "endsAt": ends}
        self.send(am_body(alert))

    def pages(self) -> list[dict[str, Any]]:
        """Top-level messages, newest first (the resolve replies are in threads)."""
        return [m for m in self.fake.messages(CHANNEL) if not m.get("thread_ts")]


def line(message: dict[str, Any]) -> str | None:
    for block in message.get("blocks", []):
        if block.get("block_id") == BLOCK_ID:
            return str(block["elements"][0]["text"])
    return None


@pytest.fixture()
def running(
    tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack, embedder: Embedder
) -> Iterator[Running]:
    settings = service_settings(
        tmp_path, golden_index, redis_url, fake_slack, slack_signing_secret=SECRET
    )
    services = Services.build(settings, embedder=embedder)
    with TestClient(create_app(services)) as client:
        yield Running(client, fake_slack, redis_url)


class TestLastTime:
    def test_line_across_a_resolve_a_vote_and_re_fires(self, running: Running) -> None:
        first = running.fire("2026-11-28T03:00:00Z")
        assert line(first) is None, "an alert's first page has nothing to say"
        assert "Runbook: " in first["text"], "the golden index matches this alert"

        running.resolve("2026-11-28T03:00:00Z", "2026-11-28T03:12:00Z")
        body, headers = running.fake.click(CHANNEL, first["ts"], user="U0ONCALL1",
                                           action_id="rbe_feedback_right",
                                           signing_secret=SECRET)
        assert running.client.post("/slack/interactions", content=body,
                                   headers=headers).status_code == 200

        second = running.fire("2026-11-28T05:00:00Z")
        previous = f"https://slack.com/archives/{CHANNEL}/p{first['ts'].replace('.', '')}"
        assert line(second) == (
            "Fired 2× in the last 7 days · last resolved after 12 min · "
            f"this runbook: 👍 1 👎 0 · <{previous}|previous page>"
        )
        blocks = second["blocks"]
        assert blocks[0]["type"] == "header" and blocks[1]["block_id"] == BLOCK_ID

        running.resolve("2026-11-28T05:00:00Z", "2026-11-28T06:30:00Z")
        third = running.fire("2026-11-28T07:00:00Z")
        shown = line(third)
        assert shown is not None
        assert shown.startswith("⚠ Flapping: fired 3× in the last hour · last resolved after "
                                "1 h 30 min · this runbook: 👍 1 👎 0 · ")
        assert second["ts"].replace(".", "") in shown
        assert json.dumps(third).count(BLOCK_ID) == 1
