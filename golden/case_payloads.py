"""Sender bodies for the golden specs: an Alertmanager v4 webhook body or a PagerDuty v3
event per spec, derived deterministically (fingerprints, ids and timestamps come from hashes
and the spec's position, never from the clock or a random generator)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from case_specs import Spec

BASE_TIME = datetime(2026, 11, 28, 0, 0, 0, tzinfo=UTC)
ZERO_TIME = "0001-01-01T00:00:00Z"
EXTERNAL_URL = "http://alertmanager.example:9093"
PROMETHEUS_URL = "http://prometheus.example"
PD_BASE = "https://acme.pagerduty.example"
#: Where PagerDuty's web UI shows each kind of object.
PD_PATHS = dict(service="service-directory", user="users", escalation_policy="escalation_policies")
RECEIVER = "runbook-enricher"
#: Label keys that carry the service name in the wild (checked in this order).
SERVICE_KEYS = ("service", "app", "job")

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ALNUM_UPPER = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def digest(*parts: str) -> bytes:
    return hashlib.sha256("\x1f".join(parts).encode()).digest()


def encode(data: bytes, alphabet: str, length: int) -> str:
    number = int.from_bytes(data, "big")
    chars = []
    for _ in range(length):
        number, rest = divmod(number, len(alphabet))
        chars.append(alphabet[rest])
    return "".join(chars)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def fingerprint(labels: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(labels, sort_keys=True).encode()).hexdigest()[:16]


def fill(template: str, labels: dict[str, str]) -> str:
    for key, value in labels.items():
        template = template.replace("{" + key + "}", value)
    return template


def sorted_dict(values: dict[str, str]) -> dict[str, str]:
    return {key: values[key] for key in sorted(values)}


def service_label(labels: dict[str, str]) -> str | None:
    return next((labels[key] for key in SERVICE_KEYS if key in labels), None)


def common(items: list[dict[str, str]]) -> dict[str, str]:
    """Key/value pairs present with the same value in every item (Alertmanager rule)."""
    if not items:
        return {}
    first, *rest = items
    return sorted_dict({k: v for k, v in first.items() if all(i.get(k) == v for i in rest)})


def label_set_string(labels: dict[str, str]) -> str:
    pairs = ", ".join(f'{key}="{labels[key]}"' for key in sorted(labels))
    return "{" + pairs + "}"


def am_subject(
    status: str, firing: int, group: dict[str, str], common_labels: dict[str, str]
) -> str:
    """Alertmanager's default `__subject` template, as used for PagerDuty titles."""
    head = f"[{status.upper()}:{firing}]" if status == "firing" else f"[{status.upper()}]"
    text = f"{head} {' '.join(group[k] for k in sorted(group))}"
    rest = {k: v for k, v in common_labels.items() if k not in group}
    if rest:
        text += " (" + " ".join(rest[k] for k in sorted(rest)) + ")"
    return text


def build_alerts(spec: Spec, start: datetime) -> list[dict[str, Any]]:
    values = spec.vary_values if spec.vary_key else [""]
    expr = spec.expr or f'ALERTS{{alertname="{spec.alertname}"}}'
    generator = f"{PROMETHEUS_URL}/graph?g0.expr={quote(expr, safe='')}&g0.tab=1"
    alerts: list[dict[str, Any]] = []
    for position, value in enumerate(values):
        labels = {"alertname": spec.alertname, **spec.labels}
        if spec.vary_key:
            labels[spec.vary_key] = value
        labels = sorted_dict(labels)
        annotations = {
            "summary": fill(spec.summary, labels),
            "description": fill(spec.description, labels),
            **{k: fill(v, labels) for k, v in spec.extra_annotations.items()},
        }
        starts = start + timedelta(seconds=30 * position)
        resolved = spec.fmt == "resolved" or (spec.resolved_last and position == len(values) - 1)
        alerts.append(
            {
                "status": "resolved" if resolved else "firing",
                "labels": labels,
                "annotations": sorted_dict(annotations),
                "startsAt": iso(starts),
                "endsAt": iso(starts + timedelta(minutes=23)) if resolved else ZERO_TIME,
                "generatorURL": generator,
                "fingerprint": fingerprint(labels),
            }
        )
    return alerts


def group_labels_for(spec: Spec, common_labels: dict[str, str]) -> dict[str, str]:
    keys = spec.group_by or ["alertname"]
    if not spec.group_by and spec.fmt == "pd":
        service_key = next((k for k in SERVICE_KEYS if k in spec.labels), None)
        keys = ["alertname", service_key] if service_key else ["alertname"]
    return sorted_dict({k: common_labels[k] for k in keys if k in common_labels})


def alertmanager_body(spec: Spec, start: datetime) -> dict[str, Any]:
    alerts = build_alerts(spec, start)
    common_labels = common([a["labels"] for a in alerts])
    group = group_labels_for(spec, common_labels)
    status = "firing" if any(a["status"] == "firing" for a in alerts) else "resolved"
    return {
        "version": "4",
        "groupKey": "{}:" + label_set_string(group),
        "truncatedAlerts": spec.truncated,
        "status": status,
        "receiver": RECEIVER,
        "groupLabels": group,
        "commonLabels": common_labels,
        "commonAnnotations": common([a["annotations"] for a in alerts]),
        "externalURL": EXTERNAL_URL,
        "alerts": alerts,
    }


def pd_id(prefix: str, length: int, *parts: str) -> str:
    return prefix + encode(digest(*parts), ALNUM_UPPER, length)


def pd_reference(kind: str, ref_id: str, summary: str) -> dict[str, str]:
    """A PagerDuty reference to a service, user or escalation policy, in PagerDuty's order."""
    return {
        "id": ref_id,
        "summary": summary,
        "type": f"{kind}_reference",
        "html_url": f"{PD_BASE}/{PD_PATHS[kind]}/{ref_id}",
    }


def pagerduty_body(spec: Spec, start: datetime, number: int) -> dict[str, Any]:
    am = alertmanager_body(spec, start)
    firing = sum(1 for a in am["alerts"] if a["status"] == "firing")
    title = spec.pd_title or am_subject(am["status"], firing, am["groupLabels"], am["commonLabels"])
    name = spec.pd_service or service_label(spec.labels) or spec.alertname
    service = pd_reference("service", pd_id("PSVC", 3, "service", name), name)
    severity = spec.labels.get("severity", "warning")
    priority_name = {"page": "P1", "critical": "P2", "warning": "P3"}.get(severity)
    priority: dict[str, str] | None = None
    if priority_name:
        priority_id = pd_id("P", 6, "priority", priority_name)
        priority = {"id": priority_id, "type": "priority_reference", "summary": priority_name}
    incident_id = pd_id("Q", 13, "incident", spec.id)
    incident_key = spec.pd_incident_key or hashlib.sha256(am["groupKey"].encode()).hexdigest()
    occurred = start + timedelta(minutes=2)
    return {
        "event": {
            "id": "01" + encode(digest("event", spec.id), CROCKFORD, 24),
            "event_type": "incident.triggered",
            "resource_type": "incident",
            "occurred_at": occurred.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "agent": {key: service[key] for key in ("id", "type", "summary", "html_url")},
            "client": None,
            "data": {
                "id": incident_id,
                "type": "incident",
                "self": f"https://api.pagerduty.example/incidents/{incident_id}",
                "html_url": f"{PD_BASE}/incidents/{incident_id}",
                "number": number,
                "status": "triggered",
                "incident_key": incident_key,
                "created_at": iso(occurred),
                "title": title,
                "service": service,
                "assignees": [
                    pd_reference("user", pd_id("P", 6, "user", name), "On-call engineer")
                ],
                "escalation_policy": pd_reference(
                    "escalation_policy", pd_id("P", 6, "policy", name), f"{name} escalation"
                ),
                "teams": [],
                "priority": priority,
                "urgency": "high" if severity in ("critical", "page") else "low",
                "conference_bridge": None,
                "resolve_reason": None,
            },
        }
    }


def build_all(specs: list[Spec]) -> list[dict[str, Any]]:
    """One case per spec; a spec's position fixes its timestamps and PagerDuty number."""
    seen: Counter[str] = Counter()
    cases = []
    for index, spec in enumerate(specs):
        split = spec.split
        if not split:
            split = "dev" if seen[spec.kind] % 2 == 0 else "test"
            seen[spec.kind] += 1
        start = BASE_TIME + timedelta(minutes=7 * index)
        if spec.fmt == "pd":
            payload = pagerduty_body(spec, start, 4100 + index)
        else:
            payload = alertmanager_body(spec, start)
        case = {
            "id": spec.id,
            "kind": spec.kind,
            "split": split,
            "payload": payload,
            "expected_doc": spec.expected,
        }
        if spec.section:
            case["expected_section"] = spec.section
        cases.append(case)
    return cases
