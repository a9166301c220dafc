"""Alertmanager intake: auth, parsing and normalization of recorded v4 webhook bodies."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from enricher.alert import Alert
from enricher.errors import BadRequest, Forbidden, MalformedPayload, PayloadTooLarge, Unauthorized
from enricher.sources.alertmanager import (
    KEPT_ALERTS,
    AlertGroup,
    AlertmanagerPayload,
    GroupReader,
    alert_identity,
    check_alertmanager_auth,
    firing_fingerprints,
    normalize_group,
    parse_alertmanager,
)
from enricher.sources.jsonstream import MAX_INT_CHARS
from tests.payloads import DELETE, edited, spliced

PROM = "http://prometheus-0:9090/graph?g0.tab=1&g0.expr="
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "alertmanager"


def load(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return body


def parse(body: dict[str, Any]) -> AlertmanagerPayload:
    return parse_alertmanager(json.dumps(body).encode()).payload


def read(body: dict[str, Any]) -> AlertGroup:
    return parse_alertmanager(json.dumps(body).encode())


def normalize(body: dict[str, Any]) -> Alert:
    return normalize_group(read(body))


def am_alert(
    labels: dict[str, str],
    annotations: dict[str, str] | None = None,
    *,
    status: str = "firing",
    starts_at: str = "2024-05-14T10:00:00Z",
    fingerprint: str = "",
    generator_url: str = "",
) -> dict[str, Any]:
    return {
        "status": status,
        "labels": labels,
        "annotations": annotations or {},
        "startsAt": starts_at,
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": generator_url,
        "fingerprint": fingerprint or hashlib.sha256(json.dumps(labels).encode()).hexdigest()[:16],
    }


def group(alerts: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "receiver": "runbook-enricher",
        "status": "firing",
        "alerts": alerts,
        "groupLabels": {},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager-0:9093",
        "version": "4",
        "groupKey": "{}:{}",
        "truncatedAlerts": 0,
    }
    body.update(fields)
    return body


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


NORMALIZED: list[tuple[str, dict[str, Any]]] = [
    (
        "single_firing.json",
        {
            "source": "alertmanager",
            "status": "firing",
            "alert_name": "HighErrorRate",
            "service": "checkout",
            "severity": "critical",
            "summary": "checkout is returning 5xx for 5.2% of requests",
            "description": (
                "5.2% of checkout requests failed over the last 5 minutes (threshold 2%)."
            ),
            "runbook_url": "https://runbooks.example.com/checkout/HighErrorRate",
            "labels": {
                "alertname": "HighErrorRate",
                "job": "checkout-api",
                "namespace": "shop-prod",
                "service": "checkout",
                "severity": "critical",
                "team": "shop",
            },
            "group_key": '{}/{team="shop"}:{alertname="HighErrorRate", service="checkout"}',
            "alert_count": 1,
            "truncated": 0,
            "starts_at": datetime(2024, 5, 14, 9, 12, 3, 412345, tzinfo=UTC),
            "event_type": None,
        },
    ),
    (
        "grouped_mixed.json",
        {
            "status": "firing",
            "alert_name": "KubePodCrashLooping",
            "service": "payments",
            "severity": "warning",
            "summary": "Pod payments-7d9f8b6c5-8hw4r is crash looping.",
            "description": (
                "Pod payments/payments-7d9f8b6c5-8hw4r (payments) is in waiting state"
                ' (reason: "CrashLoopBackOff").'
            ),
            "runbook_url": "https://runbooks.example.com/kubernetes/KubePodCrashLooping",
            "alert_count": 3,
            "starts_at": datetime(2024, 5, 14, 8, 55, 26, 500000, tzinfo=UTC),
            "link": (
                "http://prometheus-0:9090/graph?g0.expr=max_over_time%28kube_pod_container"
                "_status_waiting_reason%5B5m%5D%29&g0.tab=1#pod-8hw4r"
            ),
        },
    ),
    (
        "resolved_group.json",
        {
            "status": "resolved",
            "alert_name": "NodeFilesystemSpaceFillingUp",
            "service": None,
            "severity": "warning",
            "summary": (
                "Filesystem on /dev/nvme0n1p1 at db-1:9100 is predicted to run out of space"
                " within the next 24 hours."
            ),
            "description": "",
            "runbook_url": "https://runbooks.example.com/node/NodeFilesystemSpaceFillingUp",
            "alert_count": 2,
            "starts_at": datetime(2024, 5, 13, 22, 35, tzinfo=UTC),
        },
    ),
    (
        "truncated.json",
        {
            "alert_name": "TargetDown",
            "service": "search-indexer",
            "summary": "One or more targets are unreachable.",
            "alert_count": 6,
            "truncated": 4,
            "runbook_url": None,
        },
    ),
    (
        "common_annotations_differ.json",
        {
            "alert_name": "PostgresReplicationLagHigh",
            "service": "orders-db",
            "severity": "critical",
            "summary": "orders-db-1 is 42s behind the primary",
            "description": "Replication lag on a replica of orders-db is above 30 seconds.",
            "runbook_url": None,
        },
    ),
    (
        "mixed_alertnames.json",
        {
            "alert_name": "TargetDown",
            "service": "edge-cache",
            "severity": "critical",
            "summary": "edge-cache targets are down",
            "labels": {"namespace": "edge"},
            "link": "http://prometheus-0:9090/graph?g0.expr=up+%3D%3D+0&g0.tab=1",
            "alert_count": 3,
        },
    ),
]


class TestNormalizeFixtures:
    @pytest.mark.parametrize(("fixture", "expected"), NORMALIZED, ids=[c[0] for c in NORMALIZED])
    def test_recorded_group(self, fixture: str, expected: dict[str, Any]) -> None:
        """Each recorded notification group normalizes to the expected Alert fields."""
        alert = normalize(load(fixture))
        assert {name: getattr(alert, name) for name in expected} == expected


class TestAlertName:
    @pytest.mark.parametrize(
        ("body", "expected"),
        [
            pytest.param(
                group(
                    [am_alert({"alertname": "B"})],
                    commonLabels={"alertname": "A"},
                    groupLabels={"alertname": "B"},
                ),
                "B",
                id="group-labels-over-common-labels",
            ),
            pytest.param(
                group(
                    [am_alert({"alertname": "C"})],
                    commonLabels={"alertname": "A"},
                    groupLabels={"alertname": "B"},
                ),
                "B",
                id="group-labels-first",
            ),
            pytest.param(
                group([am_alert({"alertname": "C"})], commonLabels={"alertname": "A"}),
                "C",
                id="alerts-before-common-labels",
            ),
            pytest.param(
                group([am_alert({"job": "api"})], commonLabels={"alertname": "A"}),
                "A",
                id="common-labels-last",
            ),
            pytest.param(
                group([am_alert({"alertname": n}) for n in ("X", "Y", "Y")]),
                "Y",
                id="most-common-among-alerts",
            ),
            pytest.param(
                group([am_alert({"alertname": n}) for n in ("X", "Y")]),
                "X",
                id="tie-goes-to-first",
            ),
            pytest.param(group([am_alert({"job": "api"})]), "unknown", id="none-is-unknown"),
        ],
    )
    def test_precedence(self, body: dict[str, Any], expected: str) -> None:
        """alert_name: groupLabels, else the most common among the alerts, else
        commonLabels; the alert's labels agree with it."""
        alert = normalize(body)
        assert alert.alert_name == expected
        assert alert.labels.get("alertname", expected) == expected


class TestService:
    @pytest.mark.parametrize(
        ("common", "first", "expected"),
        [
            pytest.param({"service": "a"}, {"service": "b"}, "a", id="common-service"),
            pytest.param({}, {"service": "b", "app": "c"}, "b", id="service-before-app"),
            pytest.param(
                {}, {"service_name": "frontend", "app": "c"}, "frontend", id="otel-service-name"
            ),
            pytest.param({}, {"app": "c", "job": "j"}, "c", id="app-before-job"),
            pytest.param({}, {"app_kubernetes_io_name": "k", "job": "j"}, "k", id="k8s-name"),
            pytest.param({}, {"job": "j"}, "j", id="job-last"),
            pytest.param({"job": "j"}, {"service": "b"}, "b", id="service-beats-common-job"),
            pytest.param({}, {"job": "kube-state-metrics"}, None, id="exporter-job-is-not"),
            pytest.param({}, {"job": "node-exporter"}, None, id="node-exporter-is-not"),
            pytest.param({}, {"job": "postgres_exporter"}, None, id="any-exporter-is-not"),
            pytest.param({}, {"job": "kube-scheduler"}, "kube-scheduler", id="own-metrics-job"),
            pytest.param({"service": " "}, {"app": "c"}, "c", id="blank-is-absent"),
            pytest.param({}, {"team": "t"}, None, id="none"),
        ],
    )
    def test_precedence(
        self, common: dict[str, str], first: dict[str, str], expected: str | None
    ) -> None:
        """service: first of service/service_name/app/app_kubernetes_io_name, common labels
        first, else a job that is not an exporter's."""
        body = group([am_alert({"alertname": "A", **first})], commonLabels=common)
        assert normalize(body).service == expected


class TestSeverity:
    @pytest.mark.parametrize(
        ("common", "alerts", "expected"),
        [
            pytest.param({"severity": "info"}, [("firing", "critical")], "info", id="common-wins"),
            pytest.param(
                {},
                [("firing", "warning"), ("firing", "page"), ("firing", "error")],
                "page",
                id="highest-among-alerts",
            ),
            pytest.param(
                {},
                [("resolved", "critical"), ("firing", "warning")],
                "warning",
                id="resolved-alerts-ignored-while-firing",
            ),
            pytest.param(
                {},
                [("resolved", "info"), ("resolved", "critical")],
                "critical",
                id="all-resolved-uses-all",
            ),
            pytest.param(
                {}, [("firing", "sev5"), ("firing", "info")], "info", id="unknown-ranks-lowest"
            ),
            pytest.param({}, [("firing", "sev5")], "sev5", id="unknown-kept-if-alone"),
            pytest.param(
                {},
                [("firing", "warning"), ("firing", "Critical")],
                "Critical",
                id="case-insensitive",
            ),
            pytest.param({}, [("firing", "")], None, id="none"),
        ],
    )
    def test_choice(
        self, common: dict[str, str], alerts: list[tuple[str, str]], expected: str | None
    ) -> None:
        """severity: commonLabels, else the highest (critical>page>error>warning>info)."""
        body = group(
            [
                am_alert({"alertname": "A", "severity": sev, "i": str(i)}, status=status)
                for i, (status, sev) in enumerate(alerts)
            ],
            commonLabels=common,
        )
        assert normalize(body).severity == expected


class TestAnnotations:
    @pytest.mark.parametrize(
        ("common", "alerts", "expected"),
        [
            pytest.param(
                {"summary": "common"}, [{"summary": "own"}], "common", id="common-summary"
            ),
            pytest.param({"message": "msg"}, [{"summary": "own"}], "msg", id="common-message"),
            pytest.param({"summary": "s", "message": "m"}, [{}], "s", id="summary-before-message"),
            pytest.param(
                {}, [{"summary": "first"}, {"summary": "second"}], "first", id="first-alert"
            ),
            pytest.param({}, [{"message": "m1"}], "m1", id="alert-message"),
            pytest.param({}, [{}], "", id="none-is-empty"),
        ],
    )
    def test_summary(
        self, common: dict[str, str], alerts: list[dict[str, str]], expected: str
    ) -> None:
        """summary: commonAnnotations summary/message, else the representative alert's."""
        body = group(
            [am_alert({"alertname": "A", "i": str(i)}, a) for i, a in enumerate(alerts)],
            commonAnnotations=common,
        )
        assert normalize(body).summary == expected

    def test_summary_from_first_firing_alert(self) -> None:
        """A resolved alert listed first does not speak for a firing group."""
        body = group(
            [
                am_alert({"alertname": "A", "i": "0"}, {"summary": "old"}, status="resolved"),
                am_alert({"alertname": "A", "i": "1"}, {"summary": "now", "description": "d"}),
            ]
        )
        alert = normalize(body)
        assert (alert.summary, alert.description) == ("now", "d")

    def test_representative_carries_the_alert_name(self) -> None:
        """With mixed alert names, per-alert fallbacks come from an alert with the chosen name."""
        body = group(
            [
                am_alert(
                    {"alertname": "X", "service": "x"}, {"summary": "x"}, generator_url="http://x"
                ),
                am_alert(
                    {"alertname": "Y", "service": "y", "i": "1"},
                    {"summary": "y"},
                    generator_url="http://y",
                ),
                am_alert({"alertname": "Y", "service": "z", "i": "2"}, {"summary": "z"}),
            ]
        )
        alert = normalize(body)
        assert (alert.alert_name, alert.service, alert.summary, alert.link) == (
            "Y",
            "y",
            "y",
            "http://y",
        )

    @pytest.mark.parametrize(
        ("common", "own", "expected"),
        [
            pytest.param({"runbook_url": "u1"}, {"runbook_url": "u2"}, "u1", id="common"),
            pytest.param({"runbook": "r"}, {}, "r", id="runbook-alias"),
            pytest.param({"runbook": "r", "runbook_url": "u"}, {}, "u", id="runbook-url-first"),
            pytest.param({}, {"runbook_url": "u2"}, "u2", id="alert-annotation"),
            pytest.param({}, {}, None, id="none"),
        ],
    )
    def test_runbook_url(
        self, common: dict[str, str], own: dict[str, str], expected: str | None
    ) -> None:
        """runbook_url: annotation runbook_url, or runbook; common annotations first."""
        body = group([am_alert({"alertname": "A"}, own)], commonAnnotations=common)
        assert normalize(body).runbook_url == expected


class TestGroupFields:
    def test_labels_are_common_labels(self) -> None:
        """labels are the commonLabels when there are any."""
        body = group([am_alert({"alertname": "A", "pod": "p"})], commonLabels={"alertname": "A"})
        assert normalize(body).labels == {"alertname": "A"}

    def test_labels_fall_back_to_alert_labels(self) -> None:
        """With empty commonLabels, labels are the representative alert's labels."""
        body = group([am_alert({"alertname": "A", "pod": "p"})])
        assert normalize(body).labels == {"alertname": "A", "pod": "p"}

    def test_any_firing_alert_makes_the_group_firing(self) -> None:
        """status is firing when any alert fires, whatever the group status says."""
        body = group([am_alert({"alertname": "A"}, status="firing")], status="resolved")
        assert normalize(body).status == "firing"

    def test_starts_at_is_earliest(self) -> None:
        """starts_at is the earliest startsAt, comparing instants across time zones."""
        body = group(
            [
                am_alert({"alertname": "A", "i": "0"}, starts_at="2024-05-14T10:00:00Z"),
                am_alert({"alertname": "A", "i": "1"}, starts_at="2024-05-14T11:30:00+02:00"),
            ]
        )
        assert normalize(body).starts_at == datetime(2024, 5, 14, 9, 30, tzinfo=UTC)

    def test_link_falls_back_to_external_url(self) -> None:
        """Without a generatorURL the link is Alertmanager's externalURL."""
        body = group([am_alert({"alertname": "A"})], externalURL="http://am:9093")
        assert normalize(body).link == "http://am:9093"

    def test_metrics_come_from_every_alerts_rule(self) -> None:
        """Metric names are read from each alert's generatorURL, the representative's first."""
        body = group(
            [
                am_alert({"alertname": "B", "i": "0"}, generator_url=PROM + "b_errors_total"),
                am_alert({"alertname": "A", "i": "1"}, generator_url=PROM + "rate(a_total[5m])"),
                am_alert({"alertname": "A", "i": "2"}, generator_url=PROM + "rate(a_total[5m])"),
            ],
            commonLabels={},
        )
        assert normalize(body).metrics == ("a_total", "b_errors_total")

    def test_no_generator_url_means_no_metrics(self) -> None:
        assert normalize(group([am_alert({"alertname": "A"})])).metrics == ()

    def test_alert_count_includes_truncated(self) -> None:
        """alert_count adds the alerts max_alerts cut from alerts[]."""
        alert = normalize(load("truncated.json"))
        assert (alert.alert_count, alert.truncated) == (6, 4)


class TestParse:
    def test_aliases_become_snake_case(self) -> None:
        """camelCase wire names are read into snake_case attributes."""
        payload = parse(load("truncated.json"))
        assert (payload.group_key, payload.truncated_alerts, payload.external_url) == (
            '{}:{alertname="TargetDown", namespace="search"}',
            4,
            "http://alertmanager-0:9093",
        )
        assert payload.alerts[0].generator_url.startswith("http://prometheus-0:9090/")

    def test_go_zero_time_ends_at_is_none(self) -> None:
        """endsAt 0001-01-01T00:00:00Z (still firing) parses to None."""
        payload = parse(load("grouped_mixed.json"))
        assert [a.ends_at for a in payload.alerts] == [
            datetime(2024, 5, 14, 9, 20, 11, 500000, tzinfo=UTC),
            None,
            None,
        ]

    def test_missing_optional_fields_default(self) -> None:
        """Only alerts, one of them with a label, are required of the group."""
        body = {"alerts": [{"labels": {"alertname": "A"}}]}
        payload = parse(body)
        assert (payload.truncated_alerts, payload.common_labels, payload.alerts[0].ends_at) == (
            0,
            {},
            None,
        )

    def test_unknown_fields_ignored(self) -> None:
        """Fields a newer Alertmanager might add are ignored, not rejected."""
        body = load("single_firing.json")
        body["somethingNew"] = {"x": 1}
        body["alerts"][0]["silencedBy"] = []
        assert parse(body).group_key == body["groupKey"]

    def test_payload_is_frozen(self) -> None:
        """Parsed payloads are immutable."""
        payload = parse(load("single_firing.json"))
        with pytest.raises(ValueError, match="frozen"):
            payload.status = "resolved"


def _with(path: tuple[str | int, ...], value: Any) -> bytes:
    return edited(load("single_firing.json"), path, value)


def _spliced(path: tuple[str | int, ...], literal: str) -> bytes:
    return spliced(load("single_firing.json"), path, literal)


MALFORMED: list[tuple[str, bytes, str]] = [
    ("not-json", b"this is not json", "invalid JSON"),
    ("empty-body", b"", "invalid JSON"),
    ("truncated-json", b'{"version": "4", "alerts": [', "invalid JSON"),
    ("json-array", b"[]", "must be a JSON object"),
    ("json-string", b'"firing"', "must be a JSON object"),
    ("missing-alerts", _with(("alerts",), DELETE), "alerts: field required"),
    ("alerts-not-list", _with(("alerts",), {"a": 1}), "alerts: input should be a valid list"),
    ("empty-alerts", _with(("alerts",), []), "alerts: no alert with labels"),
    ("only-non-objects", _with(("alerts",), [1, "x", None]), "alerts: no alert with labels"),
    ("missing-labels", _with(("alerts", 0, "labels"), DELETE), "alerts: no alert with labels"),
    ("trailing-garbage", json.dumps(load("single_firing.json")).encode() + b"x", "extra data"),
    (
        "deeply-nested",
        b'{"version": "4", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        "nested too deeply",
    ),
    ("utf16-bom", b"\xff\xfe{}", "must be a JSON object"),
    ("last-alerts-not-list", _spliced(("alerts",), '[], "alerts": 7'), "valid list"),
]

#: What real senders send that a strict schema refused: accepted, and read as the sender meant.
LENIENT: list[tuple[str, bytes, dict[str, Any]]] = [
    ("grafana-version-1", _with(("version",), "1"), {"alert_name": "HighErrorRate"}),
    ("numeric-version", _with(("version",), 4), {"alert_name": "HighErrorRate"}),
    ("missing-group-key", _with(("groupKey",), DELETE), {"group_key": "derived:"}),
    ("unknown-status", _with(("status",), "pending"), {"status": "firing"}),
    ("null-status", _with(("alerts", 0, "status"), None), {"status": "firing"}),
    ("integer-label", _with(("alerts", 0, "labels", "replicas"), 3), {"alert_count": 1}),
    ("null-annotations", _with(("alerts", 0, "annotations"), None), {"alert_count": 1}),
    ("null-generator-url", _with(("alerts", 0, "generatorURL"), None), {"metrics": ()}),
    ("null-fingerprint", _with(("alerts", 0, "fingerprint"), None), {"alert_count": 1}),
    ("unreadable-starts-at", _with(("alerts", 0, "startsAt"), "yesterday"), {"alert_count": 1}),
    (
        "naive-starts-at",
        _with(("alerts", 0, "startsAt"), "2024-05-14T10:00:00"),
        {"starts_at": datetime(2024, 5, 14, 10, tzinfo=UTC)},
    ),
    ("negative-truncated", _with(("truncatedAlerts",), -1), {"truncated": 0}),
    ("null-common-labels", _with(("commonLabels",), None), {"alert_name": "HighErrorRate"}),
]


class TestLenient:
    @pytest.mark.parametrize(
        ("body", "expected"), [c[1:] for c in LENIENT], ids=[c[0] for c in LENIENT]
    )
    def test_accepted(self, body: bytes, expected: dict[str, Any]) -> None:
        """A page is made, and the odd field is read the way the sender meant it."""
        alert = normalize_group(parse_alertmanager(body))
        for key, value in expected.items():
            got = getattr(alert, key)
            assert got.startswith(value) if key == "group_key" else got == value, key

    def test_missing_starts_at_is_the_time_received(self) -> None:
        """No startsAt: the page shows when the body arrived, and a re-send is the same
        notification (the defaulted time is not part of the identity)."""
        body = _with(("alerts", 0, "startsAt"), DELETE)
        before = datetime.now(UTC)
        first, again = parse_alertmanager(body), parse_alertmanager(body)
        assert normalize_group(first).starts_at is not None
        assert before <= normalize_group(first).starts_at <= datetime.now(UTC)  # type: ignore[operator]
        assert alert_identity(first) == alert_identity(again)

    def test_scalar_values_become_text_and_nested_ones_are_dropped(self) -> None:
        """3 -> "3", true -> "true", null and objects are no label value."""
        labels = {"alertname": "A", "n": 3, "b": True, "x": None, "o": {"k": 1}, "f": 0.5}
        alert = read(group([{**am_alert({"alertname": "A"}), "labels": labels}])).alerts[0]
        assert alert.labels == {"alertname": "A", "n": "3", "b": "true", "f": "0.5"}

    def test_status_from_ends_at(self) -> None:
        """Without a status, an alert whose endsAt has passed is resolved."""
        alert = am_alert({"alertname": "A"})
        del alert["status"]
        alert["endsAt"] = "2024-05-14T11:00:00Z"
        assert normalize(group([alert], status=None)).status == "resolved"

    def test_grafana_webhook_body(self) -> None:
        """Grafana's Alertmanager-compatible contact point (version "1", extra fields)."""
        alert = normalize(load("grafana_v1.json"))
        assert (alert.alert_name, alert.service, alert.severity) == (
            "CheckoutLatencyHigh",
            "checkout",
            "warning",
        )
        assert alert.summary == "p99 checkout latency is 2.3s"
        assert alert.firing_count == 1


HUGE = "9" * (MAX_INT_CHARS + 700)
LABEL = ("commonLabels", "namespace")
ANNOTATION = ("commonAnnotations", "summary")
#: Values the decoder cannot turn into plain Python, or that no later stage could encode: the
#: page is made, and the field reads as written (or U+FFFD where it cannot be text).
HOSTILE_VALUES: list[tuple[str, bytes, dict[str, Any]]] = [
    ("huge-int-in-unknown-field", _spliced(("extra",), HUGE), {"alert_name": "HighErrorRate"}),
    ("huge-int-label", _spliced(LABEL, HUGE), {"labels": HUGE}),
    ("huge-int-truncated", _spliced(("truncatedAlerts",), HUGE), {"truncated": 0}),
    ("huge-float-label", _spliced(LABEL, "1e999"), {"labels": "1e999"}),
    ("nan-annotation", _spliced(ANNOTATION, "NaN"), {"summary": "NaN"}),
    ("infinity-truncated", _spliced(("truncatedAlerts",), "Infinity"), {"truncated": 0}),
    ("surrogate-group-key", _spliced(("groupKey",), '"g\\ud800"'), {"group_key": "g\ufffd"}),
    ("surrogate-label", _spliced(LABEL, '"\\ud800"'), {"labels": "\ufffd"}),
    ("surrogate-annotation", _spliced(ANNOTATION, '"x\\udfff"'), {"summary": "x\ufffd"}),
    (
        "not-utf8-annotation",
        _with(ANNOTATION, "caf\xe9").replace(b"\\u00e9", b"\xe9"),
        {"summary": "caf\ufffd"},
    ),
    ("repeated-group-key", _spliced(("groupKey",), '"a", "groupKey": "b"'), {"group_key": "b"}),
    ("repeated-label", _spliced(LABEL, '"a", "namespace": "b"'), {"labels": "b"}),
]


class TestHostileValues:
    @pytest.mark.parametrize(
        ("body", "expected"), [c[1:] for c in HOSTILE_VALUES], ids=[c[0] for c in HOSTILE_VALUES]
    )
    def test_paged_and_encodable(self, body: bytes, expected: dict[str, Any]) -> None:
        """The page is made, every text of it encodes (the queue, the ledger and the dedup
        key hash it), and the odd field reads as expected (`labels`: the namespace)."""
        parsed = parse_alertmanager(body)
        alert = normalize_group(parsed)
        TypeAdapter(Alert).dump_json(alert)
        alert_identity(parsed).encode()
        for key, value in expected.items():
            got = alert.labels["namespace"] if key == "labels" else getattr(alert, key)
            assert got == value, key

    def test_surrogates_in_an_alert_become_replacement_characters(self) -> None:
        """Lone surrogates in an alert's fingerprint, label names and values and annotations
        are U+FFFD, so its identity hashes and the page encodes."""
        alert = {
            **am_alert({"alertname": "A"}),
            "labels": "LABELS",
            "annotations": {"summary": "ANNOTATION"},
            "fingerprint": "FINGERPRINT",
        }
        body = (
            json.dumps(group([alert]))
            .replace('"LABELS"', '{"alertname": "A", "\\ud800": "v", "pod": "p\\udc00"}')
            .replace("ANNOTATION", "x\\udfff")
            .replace("FINGERPRINT", "\\ud800")
            .encode()
        )
        parsed = parse_alertmanager(body)
        read_alert = parsed.alerts[0]
        assert read_alert.labels == {"alertname": "A", "\ufffd": "v", "pod": "p\ufffd"}
        assert (read_alert.annotations, read_alert.fingerprint) == (
            {"summary": "x\ufffd"},
            "\ufffd",
        )
        assert normalize_group(parsed).summary == "x\ufffd"
        TypeAdapter(Alert).dump_json(normalize_group(parsed))
        assert parsed.firing_ids[0].startswith("\ufffd@")

    def test_last_alerts_array_wins(self) -> None:
        """Two `alerts` keys: only the last array is read and counted, as JSON parsers keep
        the last value of a repeated key."""
        first = json.dumps([am_alert({"alertname": "Old"}, fingerprint="o1")] * 3)
        last = json.dumps([am_alert({"alertname": "New", "severity": "warning"})])
        body = spliced(group([]), ("alerts",), f'{first}, "alerts": {last}')
        parsed = parse_alertmanager(body)
        alert = normalize_group(parsed)
        assert (alert.alert_name, alert.alert_count, alert.severity) == ("New", 1, "warning")
        assert parsed.firing_ids == firing_fingerprints(read(group(json.loads(last))))


def _big_group(n: int) -> bytes:
    alerts = [
        am_alert(
            {
                "alertname": "KubePodNotReady",
                "namespace": f"ns{i % 7}",
                "pod": f"pod-{i}",
                "severity": "critical" if i == n - 1 else "warning",
            },
            {
                "summary": "Pod has been in a non-ready state for more than 15 minutes.",
                "description": f"Pod ns{i % 7}/pod-{i} has been in a non-ready state for "
                "longer than 15 minutes; check its events and the node it runs on.",
            },
            fingerprint=f"{i:016x}",
        )
        for i in range(n)
    ]
    return json.dumps(group(alerts, groupKey='{}:{alertname="KubePodNotReady"}')).encode()


class TestLargeGroups:
    def test_2500_alerts_page_with_counts(self) -> None:
        """A 1.4 MiB group is read with the first alerts whole and every alert counted; the
        most severe alert, last in the body, still sets the severity."""
        body = _big_group(2500)
        assert len(body) > 1024 * 1024
        alert = normalize(json.loads(body))
        assert (alert.alert_count, alert.firing_count) == (2500, 2500)
        assert len(read(json.loads(body)).alerts) == KEPT_ALERTS
        assert alert.severity == "critical"
        assert len(alert.targets) == 5

    def test_read_in_small_chunks_gives_the_same_page(self) -> None:
        """Streaming (any chunk size, cut anywhere) and reading whole agree."""
        body = _big_group(300)
        reader = GroupReader(max_value_chars=4096)
        for start in range(0, len(body), 997):
            reader.feed(body[start : start + 997])
        streamed = reader.close()
        whole = parse_alertmanager(body)
        assert normalize_group(streamed) == replace(
            normalize_group(whole), starts_at=normalize_group(streamed).starts_at
        )
        assert alert_identity(streamed) == alert_identity(whole)

    def test_one_value_over_the_cap_is_refused(self) -> None:
        """Memory stays bounded: no single alert or field may exceed the value cap."""
        body = _with(("commonAnnotations",), {"description": "x" * 10_000})
        with pytest.raises(PayloadTooLarge):
            parse_alertmanager(body, max_value_chars=4096)

    def test_tracked_firing_ids_are_bounded(self) -> None:
        """Past TRACKED_FIRING alerts the identity list ends in a count-and-digest element."""
        ids = firing_fingerprints(read(json.loads(_big_group(1200))))
        assert len(ids) == 1001 and ids[-1].startswith("#1200:")


class TestMalformed:
    @pytest.mark.parametrize(
        ("body", "fragment"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED]
    )
    def test_rejected_with_short_reason(self, body: bytes, fragment: str) -> None:
        """Bad bodies raise MalformedPayload (400) with a short reason naming the problem."""
        with pytest.raises(MalformedPayload) as caught:
            parse_alertmanager(body)
        assert caught.value.status == 400
        assert len(caught.value.reason) <= 200
        assert fragment in caught.value.reason

    def test_reason_never_echoes_large_input(self) -> None:
        """A huge bad value is not echoed back: the reason stays short."""
        body = _with(("alerts",), "9" * 100_000)
        with pytest.raises(MalformedPayload) as caught:
            parse_alertmanager(body)
        assert len(caught.value.reason) <= 200
        assert "9" * 20 not in caught.value.reason


TOKENS = ("old-token-7f3a", "new-token-91bc")
USERS = {"alertmanager": "s3cret:with-colon", "other": "pw"}


class TestAuth:
    @pytest.mark.parametrize(
        "header",
        [
            pytest.param("Bearer old-token-7f3a", id="bearer-first-token"),
            pytest.param("Bearer new-token-91bc", id="bearer-second-token"),
            pytest.param("bearer new-token-91bc", id="scheme-case-insensitive"),
            pytest.param("  Bearer   new-token-91bc  ", id="extra-spaces"),
            pytest.param(basic("alertmanager", "s3cret:with-colon"), id="basic-colon-in-password"),
            pytest.param(basic("other", "pw"), id="basic-second-user"),
        ],
    )
    def test_accepted(self, header: str) -> None:
        """A configured bearer token or basic user:password is accepted."""
        check_alertmanager_auth(header, bearer_tokens=TOKENS, basic_users=USERS)

    @pytest.mark.parametrize(
        ("header", "error", "status"),
        [
            pytest.param(None, Unauthorized, 401, id="missing"),
            pytest.param("", Unauthorized, 401, id="empty"),
            pytest.param("   ", Unauthorized, 401, id="blank"),
            pytest.param("Bearer", Unauthorized, 401, id="bearer-without-token"),
            pytest.param("Bearer   ", Unauthorized, 401, id="bearer-blank-token"),
            pytest.param("Token old-token-7f3a", Unauthorized, 401, id="unknown-scheme"),
            pytest.param("old-token-7f3a", Unauthorized, 401, id="bare-token"),
            pytest.param("Bearer wrong", Forbidden, 403, id="wrong-token"),
            pytest.param("Bearer old-token-7f3", Forbidden, 403, id="token-prefix"),
            pytest.param("Bearer old-token-7f3ab", Forbidden, 403, id="token-extension"),
            pytest.param(basic("alertmanager", "nope"), Forbidden, 403, id="wrong-password"),
            pytest.param(basic("nobody", "pw"), Forbidden, 403, id="unknown-user"),
            pytest.param(basic("other", "s3cret:with-colon"), Forbidden, 403, id="crossed-pair"),
            pytest.param("Basic !!!notbase64", Forbidden, 403, id="basic-not-base64"),
            pytest.param("Basic bm9jb2xvbg==", Forbidden, 403, id="basic-without-colon"),
            pytest.param("Basic čšž", Forbidden, 403, id="basic-non-ascii"),
        ],
    )
    def test_rejected(self, header: str | None, error: type[BadRequest], status: int) -> None:
        """No usable credentials is 401; credentials that don't check out are 403."""
        with pytest.raises(error) as caught:
            check_alertmanager_auth(header, bearer_tokens=TOKENS, basic_users=USERS)
        assert caught.value.status == status

    def test_reason_holds_no_secret(self) -> None:
        """Rejection reasons never contain configured or presented credentials."""
        with pytest.raises(Forbidden) as caught:
            check_alertmanager_auth("Bearer old-token-7f3", bearer_tokens=TOKENS, basic_users=USERS)
        assert not any(t in caught.value.reason for t in (*TOKENS, "old-token-7f3", "s3cret"))

    def test_empty_configured_password_never_matches(self) -> None:
        """A user configured with an empty password cannot log in with one."""
        with pytest.raises(Forbidden):
            check_alertmanager_auth(basic("am", ""), bearer_tokens=(), basic_users={"am": ""})

    def test_nothing_configured_rejects(self) -> None:
        """With no credentials configured every presented credential is refused."""
        with pytest.raises(Forbidden):
            check_alertmanager_auth("Bearer x", bearer_tokens=(), basic_users={})

    def test_single_string_of_tokens_is_a_type_error(self) -> None:
        """A bare string for bearer_tokens is refused instead of matching its characters."""
        with pytest.raises(TypeError):
            check_alertmanager_auth("Bearer o", bearer_tokens="old", basic_users={})


class TestAlertIdentity:
    def test_is_sha256_hex(self) -> None:
        """The key is a 64-character lowercase sha256 hex digest."""
        key = alert_identity(read(load("grouped_mixed.json")))
        assert len(key) == 64 and set(key) <= set("0123456789abcdef")

    def test_ha_duplicate_matches(self) -> None:
        """The same group from another HA peer (alerts reordered, keys reordered) matches."""
        body = load("grouped_mixed.json")
        twin = dict(reversed(list(body.items())))
        twin["alerts"] = list(reversed(body["alerts"]))
        assert alert_identity(read(body)) == alert_identity(read(twin))

    def test_same_instant_in_another_offset_matches(self) -> None:
        """startsAt is compared as an instant, not as text."""
        body = load("single_firing.json")
        twin = load("single_firing.json")
        twin["alerts"][0]["startsAt"] = "2024-05-14T11:12:03.412345+02:00"
        assert alert_identity(read(body)) == alert_identity(read(twin))

    @pytest.mark.parametrize(
        ("path", "value"),
        [
            pytest.param(("groupKey",), "{}:{other}", id="group-key"),
            pytest.param(("status",), "resolved", id="group-status"),
            pytest.param(("alerts", 1, "status"), "resolved", id="one-alert-resolves"),
            pytest.param(("alerts", 1, "startsAt"), "2024-05-14T12:00:00Z", id="refires"),
            pytest.param(("alerts", 1, "fingerprint"), "ffffffffffffffff", id="other-alert"),
            pytest.param(("truncatedAlerts",), 2, id="more-truncated"),
        ],
    )
    def test_changes_with_news(self, path: tuple[str | int, ...], value: Any) -> None:
        """Any change the page should reflect gives a new key."""
        body = load("grouped_mixed.json")
        changed = load("grouped_mixed.json")
        target: Any = changed
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        assert alert_identity(read(body)) != alert_identity(read(changed))

    def test_alerts_without_fingerprint_use_labels(self) -> None:
        """Alerts lacking a fingerprint are told apart by their labels."""

        def body(pod: str) -> dict[str, Any]:
            alert = am_alert({"alertname": "A", "pod": pod})
            del alert["fingerprint"]
            return group([alert])

        assert alert_identity(read(body("p1"))) != alert_identity(read(body("p2")))
