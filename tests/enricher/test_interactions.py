"""Feedback end to end: a page with buttons, Slack's signed clicks to the real app, votes
in real Redis, the message updated on the fake Slack, and the next page ranked with them.

Signed requests are built by the fake Slack as Slack builds them (FakeSlack.click); forged
ones are the same bodies with a wrong secret, an old timestamp, no signature, or tampering.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
import redis
import redis.asyncio as aioredis
from starlette.testclient import TestClient
from structlog.testing import capture_logs

from enricher.app import create_app
from enricher.feedback.store import FeedbackStore, page_id
from enricher.index.embedding import Embedder
from enricher.search.feedback import Tally
from enricher.service import Services
from enricher.slack.delivery import PostRef
from tests.conftest import REPO, wait_for
from tests.fakeslack import FakeSlack, signed_headers
from tests.helpers import AM_TOKEN, CHANNEL, am_alert, am_body, dumps, service_settings

SECRET = "slack-signing-secret-for-tests"
ONCALL = "U0ONCALL1"
#: A renamed alert the search answers with no confident match, its runbook the first lead.
EXPORT = am_alert(
    "NightlyPartnerExportFailed",
    "partner-exports",
    fingerprint="s1",
    summary="nightly partner feed export job failed",
)
CRON = "batch/CronJobFailed.md"
#: One it answers with the wrong runbook (the right one is redis/RedisDown.md).
SESSIONS = am_alert(
    "SessionsCacheUnreachable",
    "redis",
    fingerprint="c1",
    summary="sessions cache is not answering PING",
)
SESSION_STORE = "auth/SessionStoreUnavailable.md"


@dataclass
class Running:
    client: TestClient
    services: Services
    fake: FakeSlack

    def page(self, alert: dict[str, Any], group: str) -> dict[str, Any]:
        """Fire `alert` as a new group; the message Slack stored for it."""
        body = am_body(alert)
        body["groupKey"] = group
        before = len(self.fake.calls_to("chat.postMessage"))
        response = self.client.post(
            "/webhook/alertmanager",
            content=dumps(body),
            headers={"Authorization": f"Bearer {AM_TOKEN}"},
        )
        assert response.status_code == 202
        wait_for(lambda: len(self.fake.calls_to("chat.postMessage")) > before, what="the page")
        message = self.fake.messages(CHANNEL)[0]
        # The worker remembers the page for its buttons right after Slack answers the post;
        # a click sent in between (no person is that fast) finds no record and is ignored.
        key = f"rbe:page:{page_id(PostRef(CHANNEL, message['ts']))}"
        with redis.Redis.from_url(self.services.settings.redis_url) as sync:
            wait_for(lambda: bool(sync.exists(key)), what="the page's record")
        return message

    def interact(self, body: bytes, headers: dict[str, str]) -> httpx2.Response:
        return self.client.post("/slack/interactions", content=body, headers=headers)

    def request(
        self, ts: str, action: str, doc: str, user: str = ONCALL
    ) -> tuple[bytes, dict[str, str]]:
        """Slack's signed request for `user` clicking `action` on runbook `doc`'s card."""
        return self.fake.click(
            CHANNEL, ts, user=user, action_id=action, value_has=doc, signing_secret=SECRET
        )

    def click(self, ts: str, action: str, doc: str, user: str = ONCALL) -> httpx2.Response:
        return self.interact(*self.request(ts, action, doc, user))

    def tallies(self, alert_name: str) -> dict[str, Tally]:
        """The votes for an alert name, keyed by runbook path, read as the service reads them."""

        async def read() -> dict[str, Tally]:
            client = aioredis.Redis.from_url(self.services.settings.redis_url)
            try:
                return dict(await FeedbackStore(client, page_ttl_s=60).tallies(alert_name))
            finally:
                await client.aclose()

        return {doc.partition(":")[2]: tally for doc, tally in asyncio.run(read()).items()}

    def updates(self) -> list[dict[str, Any]]:
        return [c.body for c in self.fake.calls_to("chat.update") if c.ok]


@pytest.fixture()
def running(
    tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack, embedder: Embedder
) -> Iterator[Running]:
    settings = service_settings(
        tmp_path, golden_index, redis_url, fake_slack, slack_signing_secret=SECRET
    )
    services = Services.build(settings, embedder=embedder)
    with TestClient(create_app(services)) as client:
        yield Running(client, services, fake_slack)


def text_of(message: dict[str, Any]) -> str:
    return json.dumps(
        [*message.get("blocks", []), *message.get("attachments", [])], ensure_ascii=False
    )


class TestVerification:
    def test_forged_and_stale_requests_get_401(self, running: Running) -> None:
        """No signature, a wrong secret, a tampered body or an old timestamp: 401, counted,
        and nothing is stored."""
        message = running.page(EXPORT, "g-forged")
        body, good = running.request(message["ts"], "rbe_feedback_right", CRON)
        stale = signed_headers(body, SECRET, int(time.time()) - 301)
        forged = [
            {"content-type": good["content-type"]},
            signed_headers(body, "not-the-secret"),
            {**good, "x-slack-signature": good["x-slack-signature"][:-2] + "00"},
            stale,
        ]
        for headers in forged:
            assert running.interact(body, headers).status_code == 401
        assert running.interact(body.replace(b"right", b"wrong"), good).status_code == 401
        assert running.tallies(EXPORT["labels"]["alertname"]) == {}
        assert 'rbe_webhooks_rejected_total{reason="Unauthorized",source="slack"} 5.0' in (
            running.client.get("/metrics").text
        )

    def test_signed_requests_we_cannot_use_get_200(self, running: Running) -> None:
        """Signed by Slack but not a vote (another action, a page we have no record of, a
        shape we do not read): 200, so the user sees no error, and logged."""
        message = running.page(EXPORT, "g-ignored")
        body, _ = running.request(message["ts"], "rbe_feedback_right", CRON)
        other = body.replace(b"rbe_feedback_right", b"somebody_elses_button")
        unknown_page = body.replace(message["ts"].encode(), b"1111.2222")
        shortcut = b"payload=" + json.dumps({"type": "shortcut"}).encode()
        with capture_logs() as logs:
            for request in (other, unknown_page, shortcut):
                assert running.interact(request, signed_headers(request, SECRET)).status_code == 200
        ignored = [e for e in logs if e["event"] == "feedback.ignored"]
        assert len(ignored) == 3
        assert "stale page" in ignored[1]["reason"]
        assert running.tallies(EXPORT["labels"]["alertname"]) == {}
        assert running.updates() == []

    def test_without_a_signing_secret_every_click_is_refused(
        self, tmp_path: Path, golden_index: Path, redis_url: str, embedder: Embedder
    ) -> None:
        settings = service_settings(tmp_path, golden_index, redis_url, None)
        with TestClient(create_app(Services.build(settings, embedder=embedder))) as client:
            body = b"payload=%7B%7D"
            response = client.post(
                "/slack/interactions", content=body, headers=signed_headers(body, SECRET)
            )
        assert response.status_code == 401
        assert "SLACK_SIGNING_SECRET" in response.json()["error"]


class TestVoting:
    def test_a_click_is_stored_and_shown(self, running: Running) -> None:
        """The vote is in Redis when Slack gets its 200; the page then says who voted.
        (Header names in any case: HTTP does not care, nor does the check.)"""
        message = running.page(EXPORT, "g-vote")
        assert "rbe_feedback_right" in text_of(message)
        body, headers = running.request(message["ts"], "rbe_feedback_right", CRON)
        shouted = {name.upper(): value for name, value in headers.items()}
        assert running.interact(body, shouted).status_code == 200
        assert running.tallies(EXPORT["labels"]["alertname"]) == {CRON: Tally(1, 0)}
        wait_for(lambda: bool(running.updates()), what="the chat.update")
        shown = running.fake.messages(CHANNEL)[0]
        assert shown["ts"] == message["ts"]
        assert f"✔ confirmed by <@{ONCALL}>" in text_of(shown)

    def test_a_second_click_changes_the_vote(self, running: Running) -> None:
        message = running.page(EXPORT, "g-change")
        running.click(message["ts"], "rbe_feedback_right", CRON)
        wait_for(lambda: len(running.updates()) == 1, what="the first update")
        running.click(message["ts"], "rbe_feedback_wrong", CRON)
        wait_for(lambda: len(running.updates()) == 2, what="the second update")
        assert running.tallies(EXPORT["labels"]["alertname"]) == {CRON: Tally(0, 1)}
        shown = text_of(running.fake.messages(CHANNEL)[0])
        assert f"✘ marked wrong by <@{ONCALL}>" in shown and "confirmed by" not in shown

    def test_votes_move_the_next_page(self, running: Running) -> None:
        """Before: no confident match, the right runbook only a lead. One confirmation, and
        the next page of the alert carries it as the match, saying why."""
        first = running.page(EXPORT, "g-before")
        assert "No confident runbook match" in text_of(first)
        running.click(first["ts"], "rbe_feedback_right", CRON)
        wait_for(lambda: bool(running.updates()), what="the update")
        second = running.page({**EXPORT, "fingerprint": "s2"}, "g-after")
        shown = text_of(second)
        assert "No confident runbook match" not in shown
        assert "Runbook: " in second["text"] and "cron" in second["text"].lower()
        assert "confirmed 1× for this alert" in shown

    def test_a_runbook_marked_wrong_is_not_matched_again(self, running: Running) -> None:
        """Shown on the first page (as a match or a lead), marked wrong: the next page of
        the alert neither matches it nor offers it as a lead."""
        first = running.page(SESSIONS, "g-wrong-1")
        assert SESSION_STORE in json.dumps(first["attachments"])
        running.click(first["ts"], "rbe_feedback_wrong", SESSION_STORE)
        second = running.page({**SESSIONS, "fingerprint": "c2"}, "g-wrong-2")
        assert SESSION_STORE not in json.dumps(second["attachments"])

    def test_a_resolve_keeps_the_votes_line(self, running: Running) -> None:
        message = running.page(EXPORT, "g-resolve")
        running.click(message["ts"], "rbe_feedback_wrong", CRON, user="U0OTHER22")
        wait_for(lambda: bool(running.updates()), what="the vote's update")
        body = am_body({**EXPORT, "status": "resolved", "endsAt": "2026-11-28T04:00:00Z"})
        body["groupKey"] = "g-resolve"
        running.client.post(
            "/webhook/alertmanager",
            content=dumps(body),
            headers={"Authorization": f"Bearer {AM_TOKEN}"},
        )
        wait_for(lambda: len(running.updates()) == 2, what="the resolve's update")
        (stored,) = [m for m in running.fake.messages(CHANNEL) if m["ts"] == message["ts"]]
        shown = text_of(stored)
        assert "RESOLVED" in shown
        assert "✘ marked wrong by <@U0OTHER22>" in shown


class TestGaps:
    def test_a_no_match_page_is_a_gap(self, running: Running) -> None:
        """Off-topic alerts show up in `python -m enricher.gaps --json`, and in /metrics."""
        vacuum = am_alert(
            "PostgresVacuumStalled",
            "postgres",
            fingerprint="v1",
            summary="autovacuum has not finished on orders for 6 hours",
        )
        running.page(vacuum, "g-gap-1")
        running.page({**vacuum, "fingerprint": "v2"}, "g-gap-2")
        assert "rbe_runbook_gap_pages_total 2.0" in running.client.get("/metrics").text
        done = subprocess.run(
            [sys.executable, "-m", "enricher.gaps", "--json"],
            env={**os.environ, "REDIS_URL": running.services.settings.redis_url},
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        rows = [json.loads(line) for line in done.stdout.splitlines()]
        (row,) = [r for r in rows if r["alert_name"] == "PostgresVacuumStalled"]
        assert row["service"] == "postgres"
        assert row["pages"] == 2
        assert row["first_seen"] <= row["last_seen"]
        assert row["runbook_path"] == "postgres/PostgresVacuumStalled.md"
