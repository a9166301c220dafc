"""Webhook to Slack through the real service: search, render, post, update, resolve, failures.

Real Redis, real embedded Qdrant with the golden runbooks, the real models, and the fake
Slack API on 127.0.0.1 (slack_sdk pointed at it with base_url).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
import respx
from qdrant_client import QdrantClient
from starlette.testclient import TestClient
from structlog.testing import capture_logs

from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.index.server import ServerIndex
from enricher.search.searcher import Searcher
from enricher.service import Services
from enricher.slack.cards import COLORS
from scripts.local_redis import RedisServer
from tests.conftest import wait_for
from tests.fakeslack import FakeSlack
from tests.helpers import (
    AM_TOKEN,
    CHANNEL,
    PD_SECRETS,
    am_alert,
    am_body,
    dumps,
    pd_body,
    resolved,
    service_settings,
    sign,
)

BEARER = {"Authorization": f"Bearer {AM_TOKEN}"}
LAG = am_alert(
    "PostgresReplicationLag",
    "postgres",
    fingerprint="a1",
    summary="Replica orders-db-2 is 84s behind the primary",
    description="WAL replay lag on the orders replica has been above 30s for 5 minutes.",
)


@dataclass
class Running:
    client: TestClient
    services: Services
    fake: FakeSlack

    def alertmanager(self, body: dict[str, Any]) -> httpx2.Response:
        return self.client.post("/webhook/alertmanager", content=dumps(body), headers=BEARER)

    def metrics(self) -> str:
        return self.client.get("/metrics").text

    def posts(self) -> list[dict[str, Any]]:
        return [c.body for c in self.fake.calls_to("chat.postMessage") if c.ok]

    def text_of(self, body: dict[str, Any]) -> str:
        """The blocks and the attachment cards of a message, as JSON text."""
        shown = [*body.get("blocks", []), *body.get("attachments", [])]
        return json.dumps(shown, ensure_ascii=False)


@pytest.fixture()
def running(
    tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack, embedder: Embedder
) -> Iterator[Running]:
    settings = service_settings(tmp_path, golden_index, redis_url, fake_slack)
    services = Services.build(settings, embedder=embedder)
    with TestClient(create_app(services)) as client:
        yield Running(client, services, fake_slack)


class TestFiring:
    def test_firing_alert_posts_runbook_sections(self, running: Running) -> None:
        """The page carries the right runbook with path, section, revision, score and a link."""
        assert running.alertmanager(am_body(LAG)).status_code == 202
        wait_for(lambda: len(running.posts()) == 1, what="the Slack post")
        post = running.posts()[0]
        blocks = running.text_of(post)
        assert post["channel"] == CHANNEL
        assert "PostgresReplicationLag" in post["text"]
        assert "postgres/PostgresReplicationLag.md" in blocks
        assert "Postgres replication lag" in blocks
        assert "rev " in blocks
        assert "match " in blocks and "%" in blocks
        assert (
            "https://git.example.com/ops/runbooks/blob/main/postgres/PostgresReplicationLag.md#"
            in blocks
        )
        assert post["metadata"]["event_type"] == "runbook_enricher_page"

    def test_stale_runbook_is_flagged(self, running: Running) -> None:
        """A runbook last reviewed long ago shows the stale warning with its age."""
        alert = am_alert(
            "KubeNodeNotReady",
            "kubernetes",
            fingerprint="n1",
            summary="Node worker-7 has been NotReady for 15 minutes",
        )
        running.alertmanager(am_body(alert))
        wait_for(lambda: len(running.posts()) == 1, what="the Slack post")
        blocks = running.text_of(running.posts()[0])
        assert "kubernetes/KubeNodeNotReady.md" in blocks
        assert "stale" in blocks and "days ago" in blocks

    def test_repeat_delivery_posts_once(self, running: Running) -> None:
        """Alertmanager HA duplicates and re-sends of the same group post one message."""
        for _ in range(3):
            running.alertmanager(am_body(LAG))
        wait_for(lambda: len(running.posts()) == 1, what="the Slack post")
        wait_for(lambda: "rbe_queue_depth 0.0" in running.metrics(), what="an empty queue")
        assert len(running.posts()) == 1
        metrics = running.client.get("/metrics").text
        assert 'rbe_webhooks_deduplicated_total{source="alertmanager"} 2.0' in metrics

    def test_group_gaining_alerts_updates_the_message(self, running: Running) -> None:
        """A second alert joining the group edits the posted message instead of posting
        again, and tells the channel in a broadcast thread reply (an edit notifies no one)."""
        running.alertmanager(am_body(LAG))
        wait_for(lambda: len(running.posts()) == 1, what="the first post")
        second = {**LAG, "fingerprint": "a2", "labels": {**LAG["labels"], "instance": "db-3"}}
        running.alertmanager(am_body(LAG, second))
        wait_for(lambda: len(running.fake.calls_to("chat.update")) == 1, what="the update")
        update = running.fake.calls_to("chat.update")[0].body
        assert update["ts"] == running.fake.calls_to("chat.postMessage")[0].body.get(
            "ts", update["ts"]
        )
        assert "2 alerts" in running.text_of(update)
        wait_for(lambda: len(running.posts()) == 2, what="the notification")
        top_level, reply = running.posts()
        assert "thread_ts" not in top_level
        assert reply["reply_broadcast"] is True and "1 more alert firing" in reply["text"]

    def test_posted_page_carries_colored_runbook_attachments(self, running: Running) -> None:
        """The runbook match is an attachment card, red for a critical alert, with source,
        revision and score; the resolve's chat.update turns it green."""
        running.alertmanager(am_body(LAG))
        wait_for(lambda: len(running.posts()) == 1, what="the Slack post")
        post = running.posts()[0]
        card = post["attachments"][0]
        assert card["color"] == COLORS["critical"]
        card_text = json.dumps(card["blocks"], ensure_ascii=False)
        assert "postgres/PostgresReplicationLag.md" in card_text and "rev " in card_text
        assert "PostgresReplicationLag.md" not in json.dumps(post["blocks"])
        running.alertmanager(resolved(am_body(LAG)))
        wait_for(lambda: len(running.fake.calls_to("chat.update")) == 1, what="the update")
        update = running.fake.calls_to("chat.update")[0].body
        assert {a["color"] for a in update["attachments"]} == {COLORS["resolved"]}

    def test_severity_rise_in_a_group_notifies(self, running: Running) -> None:
        """A critical joining a warning group edits the page and broadcasts a thread reply
        that names what is firing now, not just the first alert."""
        warn = am_alert("HighErrorRate", "checkout", fingerprint="w1", summary="checkout 5xx")
        warn["labels"] = {**warn["labels"], "severity": "warning", "namespace": "shop"}
        body = am_body(warn)
        body["commonLabels"]["severity"] = "warning"
        running.alertmanager(body)
        wait_for(lambda: len(running.posts()) == 1, what="the first post")
        crit = am_alert("HighErrorRate", "payments", fingerprint="c1", summary="payments 5xx")
        crit["labels"] = {**crit["labels"], "namespace": "payments"}
        grown = am_body(warn, crit)
        grown["commonLabels"] = {"alertname": "HighErrorRate"}
        grown["commonAnnotations"] = {}
        running.alertmanager(grown)
        wait_for(lambda: len(running.posts()) == 2, what="the escalation reply")
        reply = running.posts()[1]
        assert reply["thread_ts"] and reply["reply_broadcast"] is True
        assert "is now *critical*" in reply["text"]
        assert "namespace=payments" in reply["text"] and "namespace=shop" in reply["text"]
        update = running.fake.calls_to("chat.update")[0].body
        assert "payments 5xx" in running.text_of(update)

    def test_alerts_leaving_a_group_stay_silent(self, running: Running) -> None:
        """A group that shrinks is edited, without a notification."""
        second = {**LAG, "fingerprint": "a2", "labels": {**LAG["labels"], "instance": "db-3"}}
        running.alertmanager(am_body(LAG, second))
        wait_for(lambda: len(running.posts()) == 1, what="the first post")
        running.alertmanager(am_body(LAG))
        wait_for(lambda: len(running.fake.calls_to("chat.update")) == 1, what="the update")
        wait_for(lambda: "rbe_queue_depth 0.0" in running.metrics(), what="an empty queue")
        assert len(running.posts()) == 1

    def test_no_confident_match_still_pages(self, running: Running) -> None:
        """An alert no runbook covers is posted, saying plainly that nothing matched."""
        alert = am_alert(
            "OfficePrinterTonerLow",
            "facilities",
            fingerprint="p1",
            summary="Printer on floor 3 is low on toner",
            description="The toner cartridge of printer HP-3F is at 4 percent.",
        )
        running.alertmanager(am_body(alert))
        wait_for(lambda: len(running.posts()) == 1, what="the Slack post")
        assert "No confident runbook match" in running.text_of(running.posts()[0])


class TestResolve:
    def test_resolve_updates_original_and_replies_in_thread(self, running: Running) -> None:
        """Resolving edits the original message to RESOLVED and replies in its thread."""
        running.alertmanager(am_body(LAG))
        wait_for(lambda: len(running.posts()) == 1, what="the firing post")
        ts = running.fake.messages(CHANNEL)[0]["ts"]
        running.alertmanager(resolved(am_body(LAG)))
        wait_for(lambda: len(running.fake.calls_to("chat.update")) == 1, what="the update")
        wait_for(lambda: len(running.posts()) == 2, what="the thread reply")
        update = running.fake.calls_to("chat.update")[0].body
        assert update["ts"] == ts
        assert "RESOLVED" in running.text_of(update)
        assert "postgres/PostgresReplicationLag.md" in running.text_of(update)
        reply = running.posts()[1]
        assert reply["thread_ts"] == ts
        assert "Resolved at" in reply["text"]

    def test_pagerduty_incident_posts_and_resolves(self, running: Running) -> None:
        """A PagerDuty incident is posted from its title and updated when it resolves."""
        body = dumps(pd_body("[FIRING:1] KafkaConsumerLagHigh kafka (critical)", "kafka"))
        headers = {"X-PagerDuty-Signature": sign(body, PD_SECRETS[1]), "X-Webhook-Id": "w1"}
        assert (
            running.client.post("/webhook/pagerduty", content=body, headers=headers).status_code
            == 202
        )
        wait_for(lambda: len(running.posts()) == 1, what="the Slack post")
        assert "kafka/KafkaConsumerLagHigh.md" in running.text_of(running.posts()[0])
        done = dumps(
            pd_body(
                "[FIRING:1] KafkaConsumerLagHigh kafka (critical)",
                "kafka",
                event_type="incident.resolved",
                event_id="02EVT",
            )
        )
        headers = {"X-PagerDuty-Signature": sign(done, PD_SECRETS[0]), "X-Webhook-Id": "w2"}
        running.client.post("/webhook/pagerduty", content=done, headers=headers)
        wait_for(lambda: len(running.fake.calls_to("chat.update")) == 1, what="the update")


class TestFailures:
    @pytest.mark.parametrize(
        "fault",
        [httpx.ConnectTimeout("qdrant unreachable"), httpx.Response(500)],
        ids=["timeout", "server-error"],
    )
    def test_search_unavailable_still_pages(
        self, running: Running, fault: httpx.ConnectTimeout | httpx.Response
    ) -> None:
        """Qdrant (server mode) timing out or failing: the page goes out marked "search
        unavailable", distinct from "no confident match"."""
        remote = QdrantClient(
            url="http://qdrant.invalid:6333", timeout=1, check_compatibility=False
        )
        live = running.services.processor.searcher
        running.services.processor.searcher = Searcher(
            ServerIndex(remote, live.index.name), live.embedder, live.config
        )
        with respx.mock(assert_all_called=False) as mock:
            route = mock.post(url__regex=r".*/points/query")
            if isinstance(fault, httpx.Response):
                route.mock(return_value=fault)
            else:
                route.mock(side_effect=fault)
            running.alertmanager(am_body(LAG))
            wait_for(lambda: len(running.posts()) == 1, what="the Slack post")
        blocks = running.text_of(running.posts()[0])
        assert "Runbook search is unavailable" in blocks
        assert "No confident runbook match" not in blocks
        assert 'rbe_enrichments_total{status="unavailable",tier="none"} 1.0' in running.metrics()

    def test_rate_limit_is_retried_after_retry_after(self, running: Running) -> None:
        """A 429 with Retry-After is retried later and delivered once."""
        running.fake.fail_next(2, status=429, retry_after=1, method="chat.postMessage")
        running.alertmanager(am_body(LAG))
        wait_for(lambda: len(running.posts()) == 1, what="the post after 429s")
        failed = [c for c in running.fake.calls_to("chat.postMessage") if not c.ok]
        assert [c.status for c in failed] == [429, 429]

    def test_server_errors_are_retried(self, running: Running) -> None:
        """Slack 500s are retried until the post goes through."""
        running.fake.fail_next(2, status=500, method="chat.postMessage")
        running.alertmanager(am_body(LAG))
        wait_for(lambda: len(running.posts()) == 1, what="the post after 500s")

    def test_marker_lookup_without_history_scope_still_posts(self, running: Running) -> None:
        """After an ambiguous 500 the worker looks for its marker; without the history scope
        it warns and posts instead of giving up the page."""
        running.fake.fail_next(1, status=500, method="chat.postMessage")
        running.fake.fail_next(1, error="missing_scope", method="conversations.history")
        with capture_logs() as logs:
            running.alertmanager(am_body(LAG))
            wait_for(lambda: len(running.posts()) == 1, what="the post")
        assert any(e["event"] == "slack.marker_lookup_unavailable" for e in logs)
        assert [c.ok for c in running.fake.calls_to("conversations.history")] == [False]

    def test_reply_lookup_without_history_scope_still_replies(self, running: Running) -> None:
        """A resolve checks the thread for its own earlier reply first; without the history
        scope it warns and replies rather than leaving the thread without one."""
        running.alertmanager(am_body(LAG))
        wait_for(lambda: len(running.posts()) == 1, what="the firing post")
        running.fake.fail_next(1, error="missing_scope", method="conversations.replies")
        with capture_logs() as logs:
            running.alertmanager(resolved(am_body(LAG)))
            wait_for(lambda: len(running.posts()) == 2, what="the thread reply")
        assert any(e["event"] == "slack.reply_lookup_unavailable" for e in logs)
        assert [c.ok for c in running.fake.calls_to("conversations.replies")] == [False]

    def test_reply_lookup_blip_is_retried_in_place(self, running: Running) -> None:
        """A 500 from the reply lookup is retried at once (it is a read), not by sending the
        whole resolve back to the queue."""
        running.alertmanager(am_body(LAG))
        wait_for(lambda: len(running.posts()) == 1, what="the firing post")
        running.fake.fail_next(1, status=500, method="conversations.replies")
        running.alertmanager(resolved(am_body(LAG)))
        wait_for(lambda: len(running.posts()) == 2, what="the thread reply")
        assert [c.ok for c in running.fake.calls_to("conversations.replies")] == [False, True]
        assert len(running.fake.calls_to("chat.update")) == 1

    def test_permanent_error_goes_to_dead_letter(self, running: Running) -> None:
        """channel_not_found is not retried: the job is dead-lettered and counted."""
        running.fake.fail_next(1, error="channel_not_found", method="chat.postMessage")
        running.alertmanager(am_body(LAG))
        wait_for(lambda: "rbe_dead_letter_depth 1.0" in running.metrics(), what="the dead letter")
        assert 'rbe_dead_letters_total{reason="channel_not_found"} 1.0' in running.metrics()
        assert running.posts() == []

    def test_permanent_errors_in_a_row_make_delivery_unready(self, running: Running) -> None:
        """After SLACK_PERMANENT_ERRORS_UNREADY (3) permanent errors in a row /readyz says
        delivery is failing and why; one success makes it ready again."""
        running.fake.fail_next(3, error="invalid_auth", method="chat.postMessage")
        for n in range(1, 4):
            running.alertmanager({**am_body(LAG), "groupKey": f"dead-{n}"})

            def lettered(depth: str = f"rbe_dead_letter_depth {n}.0") -> bool:
                return depth in running.metrics()

            wait_for(lettered, what=f"dead letter {n}")
            ready = running.client.get("/readyz")
            assert (ready.status_code == 200) is (n < 3)
        delivery = ready.json()["checks"]["delivery"]
        assert delivery["ok"] is False and "invalid_auth" in delivery["detail"]
        running.alertmanager(am_body(LAG))
        wait_for(lambda: len(running.posts()) == 1, what="the post")
        assert running.client.get("/readyz").json()["checks"]["delivery"]["ok"] is True

    def test_redis_down_still_delivers(self, running: Running, redis_server: RedisServer) -> None:
        """With Redis killed, intake answers 202 and the page is delivered in-process."""
        redis_server.kill()
        try:
            response = running.alertmanager(am_body(LAG))
            assert response.json() == {"status": "degraded"}
            wait_for(lambda: len(running.posts()) == 1, what="the degraded post")
            assert running.client.get("/readyz").json()["checks"]["redis"]["ok"] is False
        finally:
            redis_server.start()
