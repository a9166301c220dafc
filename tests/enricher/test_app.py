"""The HTTP edge: auth, signatures, size cap and malformed input, each with the right status."""

from __future__ import annotations

import base64
import gzip
import hashlib
import hmac
import logging
import socket
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient
from structlog.testing import capture_logs

from enricher.app import create_app
from enricher.errors import ConfigError
from enricher.index.embedding import Embedder
from enricher.service import Services
from tests.conftest import wait_for
from tests.fakeslack import FakeSlack
from tests.helpers import (
    AM_TOKEN,
    PD_SECRETS,
    am_alert,
    am_body,
    dumps,
    pd_body,
    served_in_thread,
    service_settings,
    sign,
)

AM_OK = dumps(am_body(am_alert("PostgresReplicationLag", "postgres")))
BEARER = {"Authorization": f"Bearer {AM_TOKEN}"}


@pytest.fixture()
def client(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    golden_index: Path,
    redis_url: str,
    fake_slack: FakeSlack,
    embedder: Embedder,
) -> Iterator[TestClient]:
    """The app with MAX_BODY_BYTES at 4 KiB, or at what `request.param` says."""
    limit = getattr(request, "param", 4096)
    settings = service_settings(tmp_path, golden_index, redis_url, fake_slack, max_body_bytes=limit)
    services = Services.build(settings, embedder=embedder)
    with TestClient(create_app(services)) as test_client:
        yield test_client


class TestAlertmanagerAuth:
    @pytest.mark.parametrize(
        ("headers", "status"),
        [
            ({}, 401),
            ({"Authorization": "Bearer wrong"}, 403),
            ({"Authorization": "Token abc"}, 401),
            ({"Authorization": "Basic " + base64.b64encode(b"u:p").decode()}, 403),
            (BEARER, 202),
        ],
    )
    def test_credentials(self, client: TestClient, headers: dict[str, str], status: int) -> None:
        """Missing credentials are 401, wrong ones 403, the configured token is accepted."""
        response = client.post("/webhook/alertmanager", content=AM_OK, headers=headers)
        assert response.status_code == status
        if status != 202:
            assert AM_TOKEN not in response.text
            assert response.json()["error"]


class TestPagerDutySignature:
    BODY = dumps(pd_body("[FIRING:1] PostgresReplicationLag postgres (critical)", "postgres"))

    @pytest.mark.parametrize(
        ("header", "status"),
        [
            (None, 401),
            ("v1=" + "00" * 32, 403),
            (sign(BODY, "not-a-secret"), 403),
            (sign(BODY, PD_SECRETS[0]), 202),
            (sign(BODY, PD_SECRETS[1]), 202),
            ("v1=deadbeef, " + sign(BODY, PD_SECRETS[1]), 202),
        ],
    )
    def test_signatures(self, client: TestClient, header: str | None, status: int) -> None:
        """Any v1 signature made with any configured secret passes; anything else is refused."""
        headers = {"X-PagerDuty-Signature": header} if header else {}
        response = client.post("/webhook/pagerduty", content=self.BODY, headers=headers)
        assert response.status_code == status

    def test_non_incident_events_are_acknowledged(self, client: TestClient) -> None:
        """A signed service event gets 202 "ignored" so PagerDuty never counts a drop."""
        body = dumps(
            {
                "event": {
                    "id": "E1",
                    "event_type": "service.updated",
                    "resource_type": "service",
                    "occurred_at": "2026-11-28T03:14:00Z",
                    "agent": None,
                    "client": None,
                    "data": {"id": "PSVC1"},
                }
            }
        )
        response = client.post(
            "/webhook/pagerduty",
            content=body,
            headers={"X-PagerDuty-Signature": sign(body, PD_SECRETS[0])},
        )
        assert (response.status_code, response.json()) == (202, {"status": "ignored"})

    def test_retry_of_the_same_event_is_deduplicated(self, client: TestClient) -> None:
        """PagerDuty's retry resends the signed body: acknowledged without a second job, even
        under another X-Webhook-Id (that header is not signed, so it cannot be the key)."""
        signature = sign(self.BODY, PD_SECRETS[0])
        first = client.post(
            "/webhook/pagerduty",
            content=self.BODY,
            headers={"X-PagerDuty-Signature": signature, "X-Webhook-Id": "W1"},
        )
        replayed = client.post(
            "/webhook/pagerduty",
            content=self.BODY,
            headers={"X-PagerDuty-Signature": signature, "X-Webhook-Id": "W2"},
        )
        assert first.json() == {"status": "queued"}
        assert replayed.json() == {"status": "duplicate"}

    def test_another_event_of_the_incident_is_queued(self, client: TestClient) -> None:
        """The key is the event, not the incident: a new event id is a new delivery."""
        for event_id in ("01EVT-A", "01EVT-B"):
            body = dumps(pd_body("Disk full on db-1", "postgres", event_id=event_id))
            response = client.post(
                "/webhook/pagerduty",
                content=body,
                headers={"X-PagerDuty-Signature": sign(body, PD_SECRETS[0])},
            )
            assert response.json() == {"status": "queued"}


class TestAllowUnauthenticated:
    """ALLOW_UNAUTHENTICATED opens only an endpoint that has no credentials configured."""

    def app(self, tmp_path: Path, golden_index: Path, redis_url: str, embedder: Embedder,
            **extra: object) -> TestClient:
        settings = service_settings(
            tmp_path, golden_index, redis_url, None, allow_unauthenticated=True, **extra
        )
        return TestClient(create_app(Services.build(settings, embedder=embedder)))

    def test_configured_credentials_are_enforced(
        self, tmp_path: Path, golden_index: Path, redis_url: str, embedder: Embedder
    ) -> None:
        """A wrong bearer token and a wrong signature are refused as without the opt-out."""
        body = TestPagerDutySignature.BODY
        with self.app(tmp_path, golden_index, redis_url, embedder) as client:
            wrong_token = client.post(
                "/webhook/alertmanager", content=AM_OK, headers={"Authorization": "Bearer wrong"}
            )
            no_token = client.post("/webhook/alertmanager", content=AM_OK)
            wrong_signature = client.post(
                "/webhook/pagerduty",
                content=body,
                headers={"X-PagerDuty-Signature": sign(body, "not-a-secret")},
            )
            no_signature = client.post("/webhook/pagerduty", content=body)
        assert (wrong_token.status_code, no_token.status_code) == (403, 401)
        assert (wrong_signature.status_code, no_signature.status_code) == (403, 401)

    def test_only_the_endpoint_without_credentials_opens_and_is_named(
        self, tmp_path: Path, golden_index: Path, redis_url: str, embedder: Embedder
    ) -> None:
        """With only a bearer token, PagerDuty and Grafana are open, and the start-up warning
        names them, not Alertmanager."""
        with capture_logs() as logs, self.app(
            tmp_path, golden_index, redis_url, embedder, pagerduty_signing_secrets=()
        ) as client:
            pagerduty = client.post("/webhook/pagerduty", content=TestPagerDutySignature.BODY)
            alertmanager = client.post("/webhook/alertmanager", content=AM_OK)
        assert (pagerduty.status_code, alertmanager.status_code) == (202, 401)
        opened = [e for e in logs if e["event"] == "startup.unauthenticated"]
        assert [(e["log_level"], e["endpoints"]) for e in opened] == [
            ("warning", ["/webhook/pagerduty", "/webhook/grafana"])
        ]


GRAFANA_SECRETS = ("grafana-old", "grafana-new")


def grafana_signed(body: bytes, secret: str, timestamp: str | None) -> dict[str, str]:
    signed = body if timestamp is None else timestamp.encode() + b":" + body
    headers = {"X-Grafana-Alerting-Signature": hmac.new(
        secret.encode(), signed, hashlib.sha256).hexdigest()}
    if timestamp is not None:
        headers["X-Grafana-Alerting-Timestamp"] = timestamp
    return headers


class TestGrafanaSignature:
    """/webhook/grafana: Grafana's HMAC of the body (or of `timestamp:body`), enforced
    whenever GRAFANA_SIGNING_SECRETS is set, ALLOW_UNAUTHENTICATED or not."""

    def test_signatures(
        self, tmp_path: Path, golden_index: Path, redis_url: str, embedder: Embedder
    ) -> None:
        """Either secret passes, with or without a fresh timestamp; missing and stale are
        401, a wrong secret or a signature of another body 403."""
        settings = service_settings(
            tmp_path, golden_index, redis_url, None, allow_unauthenticated=True,
            grafana_signing_secrets=GRAFANA_SECRETS,
        )
        now = str(int(time.time()))
        stale = str(int(time.time()) - 3600)
        bodies = [
            dumps({**am_body(am_alert("A", "s")), "groupKey": f"grafana-{n}"}) for n in range(9)
        ]
        cases = [
            (grafana_signed(bodies[0], GRAFANA_SECRETS[0], None), 202),
            (grafana_signed(bodies[1], GRAFANA_SECRETS[1], now), 202),
            ({}, 401),
            (grafana_signed(bodies[3], GRAFANA_SECRETS[0], stale), 401),
            (grafana_signed(bodies[4], "not-a-secret", now), 403),
            (grafana_signed(bodies[0], GRAFANA_SECRETS[0], now), 403),
            ({**grafana_signed(bodies[6], GRAFANA_SECRETS[0], now),
              "X-Grafana-Alerting-Timestamp": str(int(now) + 1)}, 403),
            ({"X-Grafana-Alerting-Signature": "zz"}, 403),
            ({**grafana_signed(bodies[8], GRAFANA_SECRETS[0], now), "Content-Encoding": "gzip"},
             202),
        ]
        with TestClient(create_app(Services.build(settings, embedder=embedder))) as client:
            statuses = [
                client.post(
                    "/webhook/grafana",
                    content=gzip.compress(body) if "Content-Encoding" in headers else body,
                    headers=headers,
                ).status_code
                for body, (headers, _) in zip(bodies, cases, strict=True)
            ]
        assert statuses == [status for _, status in cases]


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-15)
    return packer.compress(data) + packer.flush()


class TestContentEncoding:
    """gzip and deflate bodies are decoded as they stream, the caps on the decoded size."""

    @pytest.mark.parametrize(
        ("encoding", "pack"),
        [("gzip", gzip.compress), ("deflate", zlib.compress), ("deflate", raw_deflate),
         ("GZip", gzip.compress), ("identity", bytes)],
        ids=["gzip", "deflate-zlib", "deflate-raw", "case", "identity"],
    )
    def test_encoded_bodies_are_paged(
        self, client: TestClient, encoding: str, pack: Callable[[bytes], bytes]
    ) -> None:
        """Both webhooks take a compressed body; PagerDuty's signature is of the JSON."""
        headers = {**BEARER, "Content-Encoding": encoding}
        alertmanager = client.post("/webhook/alertmanager", content=pack(AM_OK), headers=headers)
        body = TestPagerDutySignature.BODY
        signed = {"X-PagerDuty-Signature": sign(body, PD_SECRETS[0]), "Content-Encoding": encoding}
        pagerduty = client.post("/webhook/pagerduty", content=pack(body), headers=signed)
        assert (alertmanager.status_code, alertmanager.json()) == (202, {"status": "queued"})
        assert (pagerduty.status_code, pagerduty.json()) == (202, {"status": "queued"})

    def test_a_zip_bomb_is_413(self, client: TestClient) -> None:
        """64 MiB of JSON in 64 KiB of gzip: refused once the decoded size passes the cap."""
        bomb = gzip.compress(b'{"version": "4", "alerts": [' + b" " * (64 << 20), 1)
        headers = {**BEARER, "Content-Encoding": "gzip"}
        alertmanager = client.post("/webhook/alertmanager", content=bomb, headers=headers)
        pagerduty = client.post(
            "/webhook/pagerduty", content=bomb, headers={"Content-Encoding": "gzip"}
        )
        assert (alertmanager.status_code, pagerduty.status_code) == (413, 413)
        assert "ALERTMANAGER_MAX_BODY_BYTES" in alertmanager.json()["error"]

    @pytest.mark.parametrize(
        ("encoding", "content", "status", "reason"),
        [
            ("br", AM_OK, 415, "Content-Encoding br is not supported; send gzip, deflate or none"),
            ("gzip, gzip", AM_OK, 415, "Content-Encoding gzip, gzip is not supported"),
            ("gzip", AM_OK, 400, "body is not valid gzip"),
            ("gzip", gzip.compress(AM_OK)[:-20], 400, "gzip body ends early"),
        ],
        ids=["brotli", "stacked", "not-gzip", "truncated"],
    )
    def test_what_cannot_be_decoded_is_refused(
        self, client: TestClient, encoding: str, content: bytes, status: int, reason: str
    ) -> None:
        """An encoding we do not read is 415; a body that is not what it says is 400."""
        headers = {**BEARER, "Content-Encoding": encoding}
        response = client.post("/webhook/alertmanager", content=content, headers=headers)
        assert response.status_code == status
        assert response.json()["error"].startswith(reason)


HOSTILE = [
    (b"", 400),
    (b"not json", 400),
    (b"[]", 400),
    (b"null", 400),
    (b'{"version": "4"}', 400),
    (b'{"version": "3", "groupKey": "g", "status": "firing", "alerts": []}', 400),
    (dumps({**am_body(am_alert("A", "s")), "alerts": []}), 400),
    (b"\xff\xfe\x00garbage", 400),
    (b"[" * 1500 + b"]" * 1500, 400),
    (dumps({"alerts": [{"labels": {"alertname": ["x"]}}]}), 400),
    (b'{"alerts": [], "x": "' + b"x" * 5000 + b'"}', 413),
]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alertmanager"


class TestLiberalIntake:
    @pytest.mark.parametrize(
        "body",
        [
            (FIXTURES / "grafana_v1.json").read_bytes(),
            (FIXTURES / "no_starts_at_nulls.json").read_bytes(),
            dumps({**am_body(am_alert("A", "s")), "status": "exploded"}),
        ],
        ids=["grafana-v1", "no-starts-at-and-nulls", "unknown-group-status"],
    )
    def test_real_sender_shapes_are_queued(self, client: TestClient, body: bytes) -> None:
        """Bodies a strict schema refused (a final 4xx for the sender) are paged."""
        response = client.post("/webhook/alertmanager", content=body, headers=BEARER)
        assert (response.status_code, response.json()) == (202, {"status": "queued"})

    def test_group_over_the_body_cap_is_streamed_and_queued(self, client: TestClient) -> None:
        """A body far over MAX_BODY_BYTES (4 KiB here) is read in bounded memory and paged."""
        alerts = [am_alert("KubePodNotReady", "k8s", fingerprint=f"p{i}") for i in range(300)]
        body = dumps(am_body(*alerts))
        assert len(body) > 20 * 4096
        response = client.post("/webhook/alertmanager", content=body, headers=BEARER)
        assert response.json() == {"status": "queued"}

    def test_huge_header_gets_431(self, client: TestClient) -> None:
        """Headers over MAX_HEADER_BYTES are answered 431 and counted."""
        headers = {**BEARER, "X-Padding": "p" * 40_000}
        response = client.post("/webhook/alertmanager", content=AM_OK, headers=headers)
        assert response.status_code == 431
        metrics = client.get("/metrics").text
        assert 'reason="HeadersTooLarge",source="alertmanager"} 1.0' in metrics

    def test_stale_pagerduty_trigger_is_ignored(self, client: TestClient) -> None:
        """A validly signed trigger older than PagerDuty's 48 h of retries is a replay: 202
        "ignored", logged at warning and counted, never queued."""
        body = pd_body("[FIRING:1] PostgresReplicationLag postgres (critical)", "postgres")
        body["event"]["occurred_at"] = "2020-01-01T00:00:00Z"
        raw = dumps(body)
        with capture_logs() as logs:
            response = client.post(
                "/webhook/pagerduty",
                content=raw,
                headers={"X-PagerDuty-Signature": sign(raw, PD_SECRETS[0])},
            )
        assert (response.status_code, response.json()) == (202, {"status": "ignored"})
        assert any(e["event"] == "webhook.ignored" and e["log_level"] == "warning" for e in logs)
        assert "rbe_webhooks_ignored_total" in client.get("/metrics").text


class TestMalformedInput:
    @pytest.mark.parametrize(("body", "status"), HOSTILE)
    def test_hostile_bodies_get_a_4xx(self, client: TestClient, body: bytes, status: int) -> None:
        """Each hostile body gets its 4xx with a short reason, and the server keeps serving."""
        with capture_logs() as logs:
            response = client.post("/webhook/alertmanager", content=body, headers=BEARER)
        assert response.status_code == status
        assert 0 < len(response.json()["error"]) <= 200
        rejected = [e for e in logs if e["event"] == "webhook.rejected"]
        assert rejected and rejected[0]["log_level"] == "warning"
        assert {"client", "user_agent", "source"} <= set(rejected[0])
        assert client.get("/healthz").status_code == 200

    def test_oversize_body_without_content_length(self, client: TestClient) -> None:
        """A streamed body is cut off at the cap with 413."""

        def chunks() -> Iterator[bytes]:
            for _ in range(10):
                yield b"x" * 1024

        response = client.post("/webhook/pagerduty", content=chunks())
        assert response.status_code == 413

    def test_rejections_are_counted(self, client: TestClient) -> None:
        """/metrics shows rejected requests by reason."""
        client.post("/webhook/alertmanager", content=b"{", headers=BEARER)
        metrics = client.get("/metrics").text
        assert (
            'rbe_webhooks_rejected_total{reason="MalformedPayload",source="alertmanager"} 1.0'
            in metrics
        )


@pytest.mark.parametrize("client", [1 << 20], indirect=True)
class TestHostileValues:
    """A huge integer, a lone surrogate or a Latin-1 byte where the page does not need it
    used to answer 500 (lost after the sender's retries): now it is paged."""

    def test_alertmanager(self, client: TestClient, fake_slack: FakeSlack) -> None:
        """Paged, the surrogate shown as U+FFFD."""
        body = am_body(
            am_alert(
                "PostgresReplicationLag", "postgres", summary="SUMMARY", fingerprint="FINGERPRINT"
            )
        )
        body["groupKey"] = "GROUP"
        raw = (
            (dumps(body)[:-1] + b', "extra": ' + b"7" * 5000 + b"}")
            .replace(b"SUMMARY", b"lag \\ud800 high")
            .replace(b"FINGERPRINT", b"\\udc00")
        )
        raw = raw.replace(b"GROUP", b"g\\ud800")
        response = client.post("/webhook/alertmanager", content=raw, headers=BEARER)
        assert (response.status_code, response.json()) == (202, {"status": "queued"})
        wait_for(
            lambda: any(
                "lag \ufffd high" in str(c.body) for c in fake_slack.calls_to("chat.postMessage")
            ),
            what="the page in Slack",
        )

    def test_pagerduty(self, client: TestClient, fake_slack: FakeSlack) -> None:
        """Paged the same way (it used to be a 400, which PagerDuty counts as a drop)."""
        body = pd_body("[FIRING:1] TITLE", "postgres", event_id="01HOSTILE")
        raw = dumps(body).replace(b'"client": null', b'"client": ' + b"7" * 5000)
        raw = raw.replace(b"TITLE", b"DiskFull caf\xe9 \\ud800")
        response = client.post(
            "/webhook/pagerduty",
            content=raw,
            headers={"X-PagerDuty-Signature": sign(raw, PD_SECRETS[0])},
        )
        assert (response.status_code, response.json()) == (202, {"status": "queued"})
        wait_for(
            lambda: any(
                "DiskFull caf\ufffd \ufffd" in str(c.body)
                for c in fake_slack.calls_to("chat.postMessage")
            ),
            what="the page in Slack",
        )


class TestStartup:
    def test_refuses_to_start_without_webhook_auth(
        self, tmp_path: Path, golden_index: Path, redis_url: str
    ) -> None:
        """No tokens, no secrets, no explicit opt-out: the service does not start."""
        settings = service_settings(
            tmp_path,
            golden_index,
            redis_url,
            None,
            alertmanager_bearer_tokens=(),
            pagerduty_signing_secrets=(),
        )
        with pytest.raises(ConfigError, match="ALLOW_UNAUTHENTICATED"):
            Services.build(settings)

    def test_refuses_bot_token_without_channel(
        self, tmp_path: Path, golden_index: Path, redis_url: str
    ) -> None:
        """A Slack bot token with nowhere to post is a startup error."""
        settings = service_settings(
            tmp_path, golden_index, redis_url, None, slack_bot_token="xoxb-x"
        )
        with pytest.raises(ConfigError, match="SLACK_CHANNEL"):
            Services.build(settings)

    def test_refuses_empty_index(self, tmp_path: Path, redis_url: str, golden_index: Path) -> None:
        """A collection that does not exist means nothing was ingested: refuse, say how to fix."""
        settings = service_settings(
            tmp_path, golden_index, redis_url, None, qdrant_collection="never_ingested"
        )
        with pytest.raises(ConfigError, match="make ingest"):
            Services.build(settings)

    def test_readyz_reports_each_check(self, client: TestClient) -> None:
        """/readyz says which dependency is fine."""
        body = client.get("/readyz").json()
        assert body["ready"] is True
        assert set(body["checks"]) == {"models", "qdrant", "redis", "workers", "delivery"}


@pytest.fixture()
def served(
    tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack, embedder: Embedder
) -> Iterator[int]:
    """The app under uvicorn on a free port (a disconnect needs a real socket)."""
    settings = service_settings(tmp_path, golden_index, redis_url, fake_slack)
    app = create_app(Services.build(settings, embedder=embedder))
    with served_in_thread(app, http="h11") as port:
        yield port


def _send_half_and_hang_up(port: int, path: str, headers: dict[str, str]) -> None:
    lines = [
        f"POST {path} HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Length: 10000",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + AM_OK[:50])


class TestClientDisconnect:
    @pytest.mark.parametrize(
        ("path", "headers", "source"),
        [
            ("/webhook/alertmanager", BEARER, "alertmanager"),
            ("/webhook/pagerduty", {}, "pagerduty"),
            ("/slack/interactions", {}, "slack"),
        ],
    )
    def test_one_warning_and_no_traceback(
        self,
        served: int,
        caplog: pytest.LogCaptureFixture,
        path: str,
        headers: dict[str, str],
        source: str,
    ) -> None:
        """A sender hanging up mid-body is no error of ours: one structured warning, no
        "Exception in ASGI application", and the server keeps serving."""
        with capture_logs() as logs, caplog.at_level(logging.WARNING):
            _send_half_and_hang_up(served, path, headers)
            wait_for(
                lambda: any(e["event"] == "webhook.disconnected" for e in logs),
                what="the disconnect to be logged",
            )
            ok = httpx.post(
                f"http://127.0.0.1:{served}/webhook/alertmanager",
                content=AM_OK,
                headers=BEARER,
                timeout=30,
            )
        assert ok.status_code == 202
        lines = [e for e in logs if e["event"] == "webhook.disconnected"]
        assert len(lines) == 1
        assert (lines[0]["log_level"], lines[0]["source"]) == ("warning", source)
        assert lines[0]["received_bytes"] == 50
        assert not [e for e in logs if e.get("exc_info") or e["log_level"] == "error"]
        assert not [r for r in caplog.records if r.exc_info or "Exception" in r.getMessage()]
