"""Builders shared by the app tests: settings for a running service and webhook bodies."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import redis
import uvicorn

from enricher.alert import Alert
from enricher.feedback.store import Vote
from enricher.settings import Settings
from enricher.slack.buttons import Verdict
from scripts.index_copy import copy_index
from scripts.local_redis import RedisServer, free_port
from tests.conftest import MODELS_DIR, wait_for
from tests.fakeslack import FakeSlack

AM_TOKEN = "am-secret-token"
PD_SECRETS = ("pd-old-secret", "pd-new-secret")
CHANNEL = "C0ONCALL"


def service_settings(
    tmp_path: Path, golden_index: Path, redis_url: str, fake: FakeSlack | None, **extra: Any
) -> Settings:
    qdrant = tmp_path / "qdrant"
    copy_index(golden_index, qdrant)
    slack: dict[str, Any] = {}
    if fake is not None:
        slack = {
            "slack_bot_token": "xoxb-test",
            "slack_channel": CHANNEL,
            "slack_api_url": fake.url,
        }
    values: dict[str, Any] = {
        "models_dir": MODELS_DIR,
        "qdrant_path": qdrant,
        "redis_url": redis_url,
        "alertmanager_bearer_tokens": (AM_TOKEN,),
        "pagerduty_signing_secrets": PD_SECRETS,
        "workers": 2,
        "runbook_base_url": "https://git.example.com/ops/runbooks/blob/main",
        **slack,
        **extra,
    }
    return Settings(**values)


def am_alert(
    name: str,
    service: str,
    *,
    status: str = "firing",
    fingerprint: str = "f1",
    summary: str = "",
    description: str = "",
    starts: str = "2026-11-28T03:00:00Z",
) -> dict[str, Any]:
    return {
        "status": status,
        "labels": {
            "alertname": name,
            "service": service,
            "severity": "critical",
            "instance": f"{service}-{fingerprint}",
        },
        "annotations": {"summary": summary or f"{name} on {service}", "description": description},
        "startsAt": starts,
        "endsAt": "2026-11-28T04:00:00Z" if status == "resolved" else "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus.example/graph",
        "fingerprint": fingerprint,
    }


def am_body(*alerts: dict[str, Any], status: str | None = None) -> dict[str, Any]:
    first = alerts[0]
    name = first["labels"]["alertname"]
    firing = any(a["status"] == "firing" for a in alerts)
    return {
        "version": "4",
        "groupKey": f'{{}}:{{alertname="{name}"}}',
        "truncatedAlerts": 0,
        "status": status or ("firing" if firing else "resolved"),
        "receiver": "runbook-enricher",
        "groupLabels": {"alertname": name},
        "commonLabels": {
            "alertname": name,
            "service": first["labels"]["service"],
            "severity": "critical",
        },
        "commonAnnotations": dict(first["annotations"]),
        "externalURL": "http://alertmanager.example:9093",
        "alerts": list(alerts),
    }


def pd_body(
    title: str,
    service: str,
    *,
    event_type: str = "incident.triggered",
    incident: str = "Q1ABC",
    event_id: str = "01EVT",
) -> dict[str, Any]:
    return {
        "event": {
            "id": event_id,
            "event_type": event_type,
            "resource_type": "incident",
            # Recent: an event older than PagerDuty's 48 h of retries is refused as a replay.
            "occurred_at": (datetime.now(UTC) - timedelta(minutes=1)).isoformat(),
            "agent": None,
            "client": None,
            "data": {
                "id": incident,
                "type": "incident",
                "title": title,
                "service": {"id": "PSVC1", "summary": service, "type": "service_reference"},
                "urgency": "high",
                "priority": None,
                "incident_key": "k1",
                "html_url": f"https://acme.pagerduty.example/incidents/{incident}",
                "number": 42,
                "status": "resolved" if event_type.endswith("resolved") else "triggered",
            },
        }
    }


def sign(body: bytes, secret: str) -> str:
    return "v1=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def dumps(data: Any) -> bytes:
    return json.dumps(data).encode()


def resolved(body: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(body)
    out["status"] = "resolved"
    for alert in out["alerts"]:
        alert["status"] = "resolved"
        alert["endsAt"] = "2026-11-28T04:00:00Z"
    return out


def make_vote(
    alert: Alert,
    path: str,
    verdict: Verdict = "right",
    *,
    user: str = "U0ONCALL1",
    ts: str = "1.1",
    at: float = 1.0,
    source: str = "runbooks",
) -> Vote:
    """`user`'s vote on runbook `<source>:<path>` on page `ts` of channel C1 about `alert`."""
    return Vote(
        user=user,
        at=at,
        verdict=verdict,
        alert_name=alert.alert_name,
        service=alert.service,
        doc_id=f"{source}:{path}",
        path=path,
        revision="r",
        channel="C1",
        ts=ts,
        alert=alert,
    )


@contextmanager
def served_in_thread(app: Any, **options: Any) -> Iterator[int]:
    """`app` under a real uvicorn on a free 127.0.0.1 port, in a thread; yields the port.
    `options` go to uvicorn.Config (http="h11", lifespan="on" ...)."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for(lambda: server.started, what="uvicorn to start")
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def attach_replica(tmp_path: Path, primary: RedisServer) -> RedisServer:
    (tmp_path / "replica").mkdir()
    replica = RedisServer(tmp_path / "replica", replica_of=primary.port)
    replica.start()

    def acknowledging() -> bool:
        """The replica's link is up and it acknowledges the primary's writes (its link can
        be "up" while it still loads the first copy, before it answers a WAIT)."""
        with redis.Redis(port=replica.port, decode_responses=True) as client:
            if str(client.info("replication").get("master_link_status")) != "up":
                return False
        with redis.Redis(port=primary.port) as client:
            return int(client.wait(1, 500)) >= 1

    wait_for(acknowledging, what="the replica to acknowledge the primary's writes")
    return replica


def tcp_sockets(port: int) -> list[tuple[str, str]]:
    """(state, inode) of every IPv4 TCP socket bound locally to `port`, from /proc/net/tcp:
    state in the kernel's hex (`01` established, `0A` listening), inode `0` for a socket no
    process holds any more (closed, waiting for TCP to finish)."""
    out = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1].endswith(f":{port:04X}"):
            out.append((fields[3], fields[9]))
    return out
