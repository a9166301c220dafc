"""PagerDuty intake: signature checks, parsing and normalization of recorded v3 webhooks."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from enricher.alert import Acknowledgement, Alert
from enricher.errors import Forbidden, MalformedPayload, Unauthorized
from enricher.sources import Ignored, refuse_replay
from enricher.sources import parse as parse_source
from enricher.sources.pagerduty import (
    Incident,
    IncidentNote,
    PagerDutyWebhook,
    normalize_incident,
    parse_pagerduty,
    parse_title,
    verify_signature,
)
from tests.payloads import DELETE, edited, spliced

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "pagerduty"
SECRET = "whsec-current-0b4e"
OLD_SECRET = "whsec-previous-9c1d"


def raw(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def load(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(raw(name))
    return body


def parse(body: dict[str, Any]) -> PagerDutyWebhook:
    return parse_pagerduty(json.dumps(body).encode())


def sign(body: bytes, secret: str) -> str:
    return "v1=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


BODY = raw("incident_triggered_am_title.json")


class TestSignature:
    @pytest.mark.parametrize(
        ("header", "secrets"),
        [
            pytest.param(sign(BODY, SECRET), [SECRET], id="single"),
            pytest.param(sign(BODY, SECRET), [OLD_SECRET, SECRET], id="second-secret-matches"),
            pytest.param(
                f"{sign(BODY, OLD_SECRET)},{sign(BODY, SECRET)}", [SECRET], id="second-sig-matches"
            ),
            pytest.param(
                f"{sign(BODY, 'gone')}, {sign(BODY, SECRET)}", [SECRET], id="space-after-comma"
            ),
            pytest.param(f"v0=abcd,{sign(BODY, SECRET)}", [SECRET], id="unknown-version-skipped"),
            pytest.param(
                sign(BODY, SECRET).upper().replace("V1=", "v1="), [SECRET], id="upper-case-hex"
            ),
        ],
    )
    def test_accepted(self, header: str, secrets: list[str]) -> None:
        """Any v1 signature matching any configured secret is accepted."""
        verify_signature(BODY, header, secrets)

    @pytest.mark.parametrize(
        ("header", "error", "status"),
        [
            pytest.param(None, Unauthorized, 401, id="missing"),
            pytest.param("", Unauthorized, 401, id="empty"),
            pytest.param("  ", Unauthorized, 401, id="blank"),
            pytest.param(sign(BODY, "wrong"), Forbidden, 403, id="bad-signature"),
            pytest.param(sign(BODY + b" ", SECRET), Forbidden, 403, id="other-body"),
            pytest.param(
                sign(BODY, SECRET).replace("v1=", "v0="), Forbidden, 403, id="unknown-version-only"
            ),
            pytest.param("v1=not-hex", Forbidden, 403, id="not-hex"),
            pytest.param(sign(BODY, SECRET)[:-2], Forbidden, 403, id="truncated-signature"),
            pytest.param("garbage", Forbidden, 403, id="no-version"),
        ],
    )
    def test_rejected(self, header: str | None, error: type[Exception], status: int) -> None:
        """A missing header is 401; a header without a matching v1 signature is 403."""
        with pytest.raises(error) as caught:
            verify_signature(BODY, header, [OLD_SECRET, SECRET])
        assert isinstance(caught.value, Unauthorized | Forbidden)
        assert caught.value.status == status

    def test_mismatch_reason(self) -> None:
        """A wrong signature says "signature mismatch" and nothing about the secrets."""
        with pytest.raises(Forbidden) as caught:
            verify_signature(BODY, sign(BODY, "wrong"), [SECRET])
        assert caught.value.reason == "signature mismatch"

    def test_empty_secret_never_matches(self) -> None:
        """A body signed with an empty key is refused even if an empty secret is configured."""
        with pytest.raises(Forbidden):
            verify_signature(BODY, sign(BODY, ""), [""])

    def test_single_string_of_secrets_is_a_type_error(self) -> None:
        """A bare string for secrets is refused instead of being read as characters."""
        with pytest.raises(TypeError):
            verify_signature(BODY, sign(BODY, "s"), "s")


ALL_FIXTURES = sorted(p.name for p in FIXTURES.glob("*.json"))


class TestParse:
    @pytest.mark.parametrize("fixture", ALL_FIXTURES)
    def test_recorded_bodies_parse(self, fixture: str) -> None:
        """Every recorded webhook body parses, extra PagerDuty fields and all."""
        webhook = parse_pagerduty(raw(fixture))
        assert webhook.event.id == load(fixture)["event"]["id"]

    @pytest.mark.parametrize(
        ("fixture", "data_type"),
        [
            ("incident_triggered_am_title.json", Incident),
            ("incident_resolved.json", Incident),
            ("incident_annotated.json", IncidentNote),
            ("service_created.json", dict),
            ("pagey_ping.json", dict),
        ],
    )
    def test_data_parsed_by_its_type(self, fixture: str, data_type: type) -> None:
        """event.data is parsed by data.type; other shapes are kept as plain JSON."""
        assert isinstance(parse_pagerduty(raw(fixture)).event.data, data_type)

    def test_incident_fields(self) -> None:
        """Incident data exposes the fields normalization needs."""
        data = parse_pagerduty(raw("incident_triggered_am_title.json")).event.data
        assert isinstance(data, Incident)
        assert (data.id, data.number, data.urgency, data.status) == (
            "Q2K1KXNNJKT4PV",
            4812,
            "high",
            "triggered",
        )
        assert data.service is not None and data.service.summary == "Checkout API"
        assert data.priority is not None and data.priority.summary == "P1"
        assert data.created_at == datetime(2024, 5, 14, 9, 12, 5, tzinfo=UTC)

    def test_untyped_incident_data_is_an_incident(self) -> None:
        """Hand-written incident events without data.type are read as incidents."""
        body = load("incident_triggered_free_text.json")
        del body["event"]["data"]["type"]
        assert isinstance(parse(body).event.data, Incident)

    def test_irrelevant_incident_event_shapes_are_left_alone(self) -> None:
        """Incident events we ignore may carry any data shape without a 400."""
        body = load("incident_triggered_am_title.json")
        body["event"]["event_type"] = "incident.responder.added"
        body["event"]["data"] = {"type": "incident_responder", "state": "pending"}
        assert isinstance(parse(body).event.data, dict)

    def test_unknown_fields_ignored(self) -> None:
        """Fields PagerDuty adds later are ignored at every level."""
        body = load("incident_triggered_am_title.json")
        body["new_top_level"] = 1
        body["event"]["new_event_field"] = {"a": [1]}
        body["event"]["data"]["service"]["new_ref_field"] = True
        assert parse(body).event.event_type == "incident.triggered"


def _with(path: tuple[str | int, ...], value: Any) -> bytes:
    return edited(load("incident_triggered_am_title.json"), path, value)


def _spliced(path: tuple[str | int, ...], literal: str) -> bytes:
    return spliced(load("incident_triggered_am_title.json"), path, literal)


MALFORMED: list[tuple[str, bytes, str]] = [
    ("not-json", b"<html>nope</html>", "invalid JSON"),
    ("empty-body", b"", "invalid JSON"),
    ("json-array", b"[]", "must be a JSON object"),
    ("missing-event", b'{"events": []}', "event: field required"),
    ("event-not-object", b'{"event": "incident.triggered"}', "event: input should be"),
    ("missing-event-id", _with(("event", "id"), DELETE), "event.id: field required"),
    ("empty-event-id", _with(("event", "id"), ""), "event.id: string should have at least"),
    ("blank-event-id", _with(("event", "id"), "   "), "event.id: string should match"),
    ("huge-event-id", _with(("event", "id"), "x" * 257), "event.id: string should have at most"),
    (
        "incident-data-null",
        _with(("event", "data"), None),
        "incident.triggered needs data of type 'incident'",
    ),
    ("incident-data-list", _with(("event", "data"), [1]), "needs data of type"),
    (
        "incident-without-id",
        _with(("event", "data", "id"), DELETE),
        "event.data.incident.id: field required",
    ),
    (
        "deeply-nested",
        b'{"event": {"data": ' + b"[" * 5000 + b"]" * 5000 + b"}}",
        "nested too deeply",
    ),
    ("huge-int-event-id", _spliced(("event", "id"), "7" * 5000), "event.id: string should have"),
]


class TestMalformed:
    @pytest.mark.parametrize(
        ("body", "fragment"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED]
    )
    def test_rejected_with_short_reason(self, body: bytes, fragment: str) -> None:
        """Bad bodies raise MalformedPayload (400) with a short reason naming the problem."""
        with pytest.raises(MalformedPayload) as caught:
            parse_pagerduty(body)
        assert caught.value.status == 400
        assert len(caught.value.reason) <= 200
        assert fragment in caught.value.reason

    def test_reason_never_echoes_large_input(self) -> None:
        """A huge bad value is not echoed back: the reason stays short."""
        with pytest.raises(MalformedPayload) as caught:
            parse_pagerduty(_with(("event", "id"), "x" * 100_000))
        assert len(caught.value.reason) <= 200
        assert "x" * 41 not in caught.value.reason


LENIENT: list[tuple[str, bytes, dict[str, Any]]] = [
    (
        "title-null",
        _with(("event", "data", "title"), None),
        {"summary": "", "group_key": "Q2K1KXNNJKT4PV"},
    ),
    ("title-not-string", _with(("event", "data", "title"), ["x"]), {"summary": ""}),
    (
        "service-as-string",
        _with(("event", "data", "service"), "Checkout API"),
        {"service": "Checkout API"},
    ),
    ("service-not-object", _with(("event", "data", "service"), 7), {"service": None}),
    ("number-not-int", _with(("event", "data", "number"), "four"), {"service": "Checkout API"}),
    ("urgency-null", _with(("event", "data", "urgency"), None), {"severity": "critical"}),
    ("bad-occurred-at", _with(("event", "occurred_at"), "soon"), {"status": "firing"}),
    (
        "naive-created-at",
        _with(("event", "data", "created_at"), "2024-05-14T09:12:05"),
        {"starts_at": datetime(2024, 5, 14, 9, 12, 5, tzinfo=UTC)},
    ),
    # The same parse boundary as Alertmanager's (enricher.sources.jsonstream).
    ("huge-int-client", _spliced(("event", "client"), "7" * 5000), {"service": "Checkout API"}),
    # Unused and not validated: nesting pydantic's recursion limit refused costs no page.
    (
        "deep-client",
        _spliced(("event", "client"), '{"x": ' + "[" * 300 + "]" * 300 + "}"),
        {"service": "Checkout API"},
    ),
    ("huge-int-number", _spliced(("event", "data", "number"), "7" * 5000), {"status": "firing"}),
    ("nan-number", _spliced(("event", "data", "number"), "NaN"), {"status": "firing"}),
    (
        "surrogate-title",
        _spliced(("event", "data", "title"), '"[FIRING:1] DiskFull \\ud800"'),
        {"summary": "DiskFull \ufffd", "alert_name": "DiskFull"},
    ),
    (
        "surrogate-service",
        _spliced(("event", "data", "service", "summary"), '"\\udc00"'),
        {"service": "\ufffd"},
    ),
    (
        "not-utf8-title",
        _with(("event", "data", "title"), "caf\xe9").replace(b"\\u00e9", b"\xe9"),
        {"summary": "caf\ufffd"},
    ),
    (
        "repeated-title",
        _spliced(("event", "data", "title"), '"first", "title": "DiskFull"'),
        {"alert_name": "DiskFull"},
    ),
]


class TestLenient:
    @pytest.mark.parametrize(
        ("body", "expected"), [c[1:] for c in LENIENT], ids=[c[0] for c in LENIENT]
    )
    def test_accepted(self, body: bytes, expected: dict[str, Any]) -> None:
        """Odd but harmless fields make a page, read the way PagerDuty meant them."""
        alert = normalize_incident(parse_pagerduty(body))
        assert alert is not None
        TypeAdapter(Alert).dump_json(alert)
        for key, value in expected.items():
            assert getattr(alert, key) == value, key

    def test_surrogate_in_the_event_id_keys_an_encodable_delivery(self) -> None:
        """The event id is the dedup key: a lone surrogate in it is U+FFFD, so it hashes."""
        parsed = parse_source("pagerduty", _spliced(("event", "id"), '"01E\\ud800"'))
        assert not isinstance(parsed, Ignored)
        assert parsed.dedup_key == "pd:01E\ufffd"

    def test_numeric_event_type_is_ignored_not_refused(self) -> None:
        """An event type we cannot read is no incident event: acknowledged and ignored."""
        assert normalize_incident(parse_pagerduty(_with(("event", "event_type"), 7))) is None


class TestReplay:
    NOW = datetime(2024, 5, 16, 12, tzinfo=UTC)

    @pytest.mark.parametrize(
        ("occurred_at", "stale"),
        [
            ("2024-05-14T12:00:01Z", False),
            ("2024-05-14T11:59:59Z", True),
            ("2024-05-10T00:00:00Z", True),
            (None, False),
        ],
    )
    def test_older_than_the_retry_horizon_is_a_replay(
        self, occurred_at: str | None, stale: bool
    ) -> None:
        """PagerDuty retries for 48 h: an event that occurred longer ago is a replay."""
        body = _with(("event", "occurred_at"), occurred_at)
        parsed = refuse_replay(parse_source("pagerduty", body), now=self.NOW)
        assert isinstance(parsed, Ignored) is stale
        if stale:
            assert isinstance(parsed, Ignored) and "retry horizon" in parsed.reason


TITLES: list[tuple[str, str, str, str | None]] = [
    # title, summary, alert_name, severity
    (
        "[FIRING:1] HighErrorRate checkout (shop-prod critical)",
        "HighErrorRate checkout (shop-prod critical)",
        "HighErrorRate",
        "critical",
    ),
    (
        "[RESOLVED] HighErrorRate checkout (shop-prod critical)",
        "HighErrorRate checkout (shop-prod critical)",
        "HighErrorRate",
        "critical",
    ),
    (
        "[FIRING:12] KubePodCrashLooping (payments payments warning)",
        "KubePodCrashLooping (payments payments warning)",
        "KubePodCrashLooping",
        "warning",
    ),
    (
        "[FIRING:3] checkout (HighErrorRate shop-prod critical)",
        "checkout (HighErrorRate shop-prod critical)",
        "HighErrorRate",
        "critical",
    ),
    ("[FIRING:1] Watchdog", "Watchdog", "Watchdog", None),
    ("[FIRING:2] disk_full db-1 (info)", "disk_full db-1 (info)", "disk_full", "info"),
    ("[FIRING:1] critical checkout", "critical checkout", "checkout", "critical"),
    ("[firing:1] KubeAPIDown", "KubeAPIDown", "KubeAPIDown", None),
    ("[FIRING:1]", "", "unknown", None),
    (
        "Postgres replica lag > 30s on orders-db",
        "Postgres replica lag > 30s on orders-db",
        "Postgres replica lag > 30s on orders-db",
        None,
    ),
    (
        "HighErrorRate: checkout 5xx above 2%",
        "HighErrorRate: checkout 5xx above 2%",
        "HighErrorRate",
        None,
    ),
    (
        "MongoDB replica set has no primary",
        "MongoDB replica set has no primary",
        "MongoDB replica set has no primary",
        None,
    ),
    (
        "etcd: etcdNoLeader on cluster eu-1",
        "etcd: etcdNoLeader on cluster eu-1",
        "etcdNoLeader",
        None,
    ),
    (
        "critical error rate on checkout",
        "critical error rate on checkout",
        "critical error rate on checkout",
        None,
    ),
    ("  lots \t of   space  ", "lots of space", "lots of space", None),
    ("", "", "unknown", None),
]


class TestParseTitle:
    @pytest.mark.parametrize(
        ("title", "summary", "alert_name", "severity"),
        TITLES,
        ids=[t[0] or "empty" for t in TITLES],
    )
    def test_title(self, title: str, summary: str, alert_name: str, severity: str | None) -> None:
        """Alertmanager-style titles yield name and severity; free text yields an identifier."""
        parsed = parse_title(title)
        assert (parsed.summary, parsed.alert_name, parsed.severity) == (
            summary,
            alert_name,
            severity,
        )


NORMALIZED: list[tuple[str, dict[str, Any]]] = [
    (
        "incident_triggered_am_title.json",
        {
            "source": "pagerduty",
            "status": "firing",
            "alert_name": "HighErrorRate",
            "service": "Checkout API",
            "severity": "critical",
            "summary": "HighErrorRate checkout (shop-prod critical)",
            "description": "",
            "labels": {
                "service": "Checkout API",
                "urgency": "high",
                "priority": "P1",
                "incident_key": "b7a0e3c1f2d94e6a8c5b1d0e9f8a7b6c",
            },
            "runbook_url": None,
            "group_key": "Q2K1KXNNJKT4PV",
            "alert_count": 1,
            "truncated": 0,
            "starts_at": datetime(2024, 5, 14, 9, 12, 5, tzinfo=UTC),
            "link": "https://acme.pagerduty.com/incidents/Q2K1KXNNJKT4PV",
            "event_type": "incident.triggered",
        },
    ),
    (
        "incident_triggered_free_text.json",
        {
            "status": "firing",
            "alert_name": "Postgres replica lag > 30s on orders-db",
            "service": "orders-db",
            "severity": "warning",
            "summary": "Postgres replica lag > 30s on orders-db",
            "labels": {
                "service": "orders-db",
                "urgency": "low",
                "incident_key": "orders-db-replica-lag",
            },
            "group_key": "Q0RT9LPXN5M3YB",
        },
    ),
    (
        "incident_resolved.json",
        {
            "status": "resolved",
            "alert_name": "HighErrorRate",
            "group_key": "Q2K1KXNNJKT4PV",
            "event_type": "incident.resolved",
        },
    ),
    (
        "incident_acknowledged.json",
        {
            "status": "firing",
            "service": "orders-db",
            "severity": "warning",
            "event_type": "incident.acknowledged",
            "labels": {
                "service": "orders-db",
                "urgency": "low",
                "priority": "P3",
                "incident_key": "orders-db-replica-lag",
            },
        },
    ),
    (
        "incident_annotated.json",
        {
            "status": "firing",
            "alert_name": "Postgres replica lag > 30s on orders-db",
            "service": None,
            "summary": "Postgres replica lag > 30s on orders-db",
            "description": (
                "Vacuum on orders.line_items is holding the replica back; cancelling it."
            ),
            "group_key": "Q0RT9LPXN5M3YB",
            "link": "https://acme.pagerduty.com/incidents/Q0RT9LPXN5M3YB",
            "event_type": "incident.annotated",
        },
    ),
]


class TestNormalizeIncident:
    @pytest.mark.parametrize(("fixture", "expected"), NORMALIZED, ids=[c[0] for c in NORMALIZED])
    def test_recorded_event(self, fixture: str, expected: dict[str, Any]) -> None:
        """Each recorded incident event normalizes to the expected Alert fields."""
        alert = normalize_incident(parse_pagerduty(raw(fixture)))
        assert alert is not None
        assert {name: getattr(alert, name) for name in expected} == expected

    @pytest.mark.parametrize("fixture", ["service_created.json", "pagey_ping.json"])
    def test_non_incident_events_are_ignored(self, fixture: str) -> None:
        """Events about other resources normalize to None (ack and ignore)."""
        assert normalize_incident(parse_pagerduty(raw(fixture))) is None

    @pytest.mark.parametrize(
        ("event_type", "status"),
        [
            ("incident.triggered", "firing"),
            ("incident.acknowledged", "firing"),
            ("incident.reopened", "firing"),
            ("incident.annotated", "firing"),
            ("incident.resolved", "resolved"),
            ("incident.priority_updated", None),
            ("incident.escalated", None),
            ("incident.unacknowledged", None),
        ],
    )
    def test_status_by_event_type(self, event_type: str, status: str | None) -> None:
        """Only incident.resolved resolves; events outside the relevant set give None."""
        body = load("incident_triggered_am_title.json")
        body["event"]["event_type"] = event_type
        alert = normalize_incident(parse(body))
        assert (alert.status if alert else None) == status

    @pytest.mark.parametrize(
        ("title", "urgency", "severity"),
        [
            ("Disk full on db-1", "high", "critical"),
            ("Disk full on db-1", "low", "warning"),
            ("Disk full on db-1", "HIGH", "critical"),
            ("Disk full on db-1", "unknown", None),
            ("Disk full on db-1", None, None),
            ("[FIRING:1] DiskFull db-1 (info)", "high", "info"),
        ],
    )
    def test_severity(self, title: str, urgency: str | None, severity: str | None) -> None:
        """Severity from the title wins; else high urgency is critical and low is warning."""
        body = load("incident_triggered_am_title.json")
        body["event"]["data"].update(title=title, urgency=urgency)
        alert = normalize_incident(parse(body))
        assert alert is not None and alert.severity == severity

    def test_an_acknowledgement_says_who_and_when(self) -> None:
        """incident.acknowledged names its agent and its time; other events carry none."""
        alert = normalize_incident(parse_pagerduty(raw("incident_acknowledged.json")))
        assert alert is not None and alert.status == "firing"
        assert alert.acknowledged == Acknowledgement(
            by="Sam Dba", at=datetime(2024, 5, 14, 11, 33, 40, 112000, tzinfo=UTC)
        )
        triggered = normalize_incident(parse_pagerduty(raw("incident_triggered_am_title.json")))
        assert triggered is not None and triggered.acknowledged is None

    def test_an_acknowledgement_without_an_agent_or_time_names_no_one(self) -> None:
        """An agent that is missing, not an object, or without a summary names no one."""
        for agent in (None, 7, {"id": "PX"}):
            body = load("incident_acknowledged.json")
            body["event"].update(agent=agent, occurred_at=None)
            alert = normalize_incident(parse(body))
            assert alert is not None and alert.acknowledged == Acknowledgement(by=None, at=None)

    def test_missing_service_and_priority(self) -> None:
        """Absent service and priority leave service None and keep them out of labels."""
        body = load("incident_triggered_am_title.json")
        body["event"]["data"].update(service=None, priority=None, incident_key=None)
        alert = normalize_incident(parse(body))
        assert alert is not None
        assert (alert.service, alert.labels) == (None, {"urgency": "high"})
