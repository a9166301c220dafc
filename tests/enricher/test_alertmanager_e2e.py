"""End to end with a real Alertmanager (Debian's prometheus-alertmanager) as the client.

Alertmanager -> the app under uvicorn on a free port -> fake Slack on 127.0.0.1.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.service import Services
from scripts.local_redis import free_port
from tests.conftest import wait_for
from tests.fakeslack import FakeSlack
from tests.helpers import AM_TOKEN, CHANNEL, served_in_thread, service_settings

CONFIG = """
route:
  receiver: enricher
  group_by: [{group_by}]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: enricher
    webhook_configs:
      - url: http://127.0.0.1:{port}/webhook/alertmanager
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials: {token}
"""


@pytest.fixture()
def app_port(
    tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack, embedder: Embedder
) -> Iterator[int]:
    settings = service_settings(tmp_path, golden_index, redis_url, fake_slack)
    app = create_app(Services.build(settings, embedder=embedder))
    with served_in_thread(app, lifespan="on") as port:
        yield port


@pytest.fixture()
def group_by(request: pytest.FixtureRequest) -> str:
    """The route's group_by; a test overrides it with `@pytest.mark.parametrize`."""
    return str(getattr(request, "param", "alertname, service"))


@pytest.fixture()
def alertmanager(tmp_path: Path, app_port: int, group_by: str) -> Iterator[str]:
    binary = shutil.which("prometheus-alertmanager")
    if binary is None:
        pytest.fail("prometheus-alertmanager is not installed: run `make setup`")
    config = tmp_path / "alertmanager.yml"
    config.write_text(CONFIG.format(port=app_port, token=AM_TOKEN, group_by=group_by))
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.path={tmp_path / 'am-data'}",
            "--cluster.listen-address=",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        try:
            return httpx.get(f"{url}/-/ready", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(ready, what="Alertmanager to start")
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def push(url: str, alerts: list[dict[str, Any]]) -> None:
    response = httpx.post(f"{url}/api/v2/alerts", json=alerts, timeout=5)
    assert response.status_code == 200, response.text


def lag_alert(instance: str, *, ends: datetime | None = None) -> dict[str, Any]:
    alert: dict[str, Any] = {
        "labels": {
            "alertname": "PostgresReplicationLag",
            "service": "postgres",
            "severity": "critical",
            "instance": instance,
        },
        "annotations": {
            "summary": "Replica orders-db-2 is 84s behind the primary",
            "description": "WAL replay lag has been above 30s for 5 minutes.",
        },
        "startsAt": (datetime.now(UTC) - timedelta(minutes=5)).isoformat(),
        "generatorURL": "http://prometheus.example/graph",
    }
    if ends is not None:
        alert["endsAt"] = ends.isoformat()
    return alert


class TestRealAlertmanager:
    def test_firing_then_resolved_group(self, alertmanager: str, fake_slack: FakeSlack) -> None:
        """Two firing alerts become one page with the runbook; the resolve edits that page."""
        push(alertmanager, [lag_alert("db-2:9187"), lag_alert("db-3:9187")])

        def top() -> list[dict[str, Any]]:
            return [m for m in fake_slack.messages(CHANNEL) if not m.get("thread_ts")]

        def shown(page: dict[str, Any]) -> str:
            return json.dumps([*page["blocks"], *page.get("attachments", [])], ensure_ascii=False)

        # Alertmanager may notify once before the second alert joins (group_wait is 1 s):
        # then the one page is edited to the group of two.
        wait_for(
            lambda: len(top()) == 1 and "2 alerts" in shown(top()[0]),
            what="the firing page of both alerts",
        )
        page = top()[0]
        blocks = shown(page)
        assert "PostgresReplicationLag" in page["text"]
        assert "postgres/PostgresReplicationLag.md" in blocks
        assert "Postgres replication lag" in blocks
        assert "match " in blocks
        assert "rev " in blocks
        assert "2 alerts" in blocks

        ended = datetime.now(UTC) - timedelta(seconds=1)
        push(alertmanager, [lag_alert("db-2:9187", ends=ended), lag_alert("db-3:9187", ends=ended)])
        wait_for(
            lambda: any(
                "RESOLVED" in json.dumps(c.body.get("blocks", []))
                for c in fake_slack.calls_to("chat.update")
                if c.ok
            ),
            timeout_s=30,
            what="the resolve update",
        )
        ts = page_ts(fake_slack)
        update = [c.body for c in fake_slack.calls_to("chat.update") if c.ok][-1]
        assert update["ts"] == ts
        replies = [
            c.body for c in fake_slack.calls_to("chat.postMessage") if c.body.get("thread_ts")
        ]
        wait_for(
            lambda: bool(
                [
                    c
                    for c in fake_slack.calls_to("chat.postMessage")
                    if c.body.get("thread_ts") == ts
                ]
            ),
            what="the thread reply",
        )
        assert all(r["thread_ts"] == ts for r in replies)
        top_level = [
            c
            for c in fake_slack.calls_to("chat.postMessage")
            if c.ok and not c.body.get("thread_ts")
        ]
        assert len(top_level) == 1


    @pytest.mark.parametrize("group_by", ["alertname"], indirect=True)
    def test_severity_rise_inside_a_group_notifies(
        self, alertmanager: str, fake_slack: FakeSlack
    ) -> None:
        """group_by [alertname]: a warning for checkout is posted; a critical for payments
        joins the group; the page is edited and a broadcast thread reply tells the channel,
        naming the payments pod and namespace."""
        push(alertmanager, [error_alert("checkout", "shop", "checkout-7f9c", "warning")])
        wait_for(lambda: len(fake_slack.messages(CHANNEL)) == 1, what="the warning page")
        push(
            alertmanager,
            [
                error_alert("checkout", "shop", "checkout-7f9c", "warning"),
                error_alert("payments", "payments", "payments-api-5d8b", "critical"),
            ],
        )

        def escalation() -> list[dict[str, Any]]:
            return [m for m in fake_slack.messages(CHANNEL) if m.get("reply_broadcast")]

        wait_for(lambda: bool(escalation()), timeout_s=30, what="the notifying reply")
        reply = escalation()[0]
        assert reply["thread_ts"] == page_ts(fake_slack)
        assert "is now *critical*" in reply["text"]
        assert "namespace=payments" in reply["text"] and "payments-api-5d8b" in reply["text"]
        update = [c.body for c in fake_slack.calls_to("chat.update") if c.ok][-1]
        assert "HighErrorRate · critical" in json.dumps(update["blocks"], ensure_ascii=False)


def error_alert(service: str, namespace: str, pod: str, severity: str) -> dict[str, Any]:
    return {
        "labels": {
            "alertname": "HighErrorRate",
            "service": service,
            "namespace": namespace,
            "pod": pod,
            "severity": severity,
        },
        "annotations": {"summary": f"{service} is returning 5xx"},
        "startsAt": (datetime.now(UTC) - timedelta(minutes=2)).isoformat(),
        "generatorURL": "http://prometheus.example/graph",
    }


def page_ts(fake: FakeSlack) -> str:
    pages = [m for m in fake.messages(CHANNEL) if not m.get("thread_ts")]
    return str(pages[-1]["ts"])
