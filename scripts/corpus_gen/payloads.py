"""Webhook bodies as the senders post them: Alertmanager v4 and PagerDuty v3 (incident
triggered, titled with Alertmanager's default subject). Pure: every id, fingerprint and
timestamp comes from a hash of the case id or from the caller, never from the clock.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

PROMETHEUS = "http://prometheus.example:9090"
ALERTMANAGER = "http://alertmanager.example:9093"
PAGERDUTY = "https://acme.pagerduty.example"
#: Alertmanager's `endsAt` of an alert that still fires.
NEVER = "0001-01-01T00:00:00Z"
#: The alphabets of PagerDuty's ids: event ids are ULID-like, the others upper alphanumeric.
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_UPPER = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def digest(*parts: object) -> str:
    """A stable hex digest of `parts` (the source of every id a body carries)."""
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()


def _code(alphabet: str, length: int, *parts: object) -> str:
    """`length` (at most 32) characters of `alphabet` drawn from the digest of `parts`."""
    raw = bytes.fromhex(digest(*parts))[:length]
    return "".join(alphabet[byte % len(alphabet)] for byte in raw)


def _timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC with milliseconds, as Alertmanager writes `startsAt`."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _label_set(labels: dict[str, str]) -> str:
    return "{" + ", ".join(f'{k}="{labels[k]}"' for k in sorted(labels)) + "}"


def _common(items: Sequence[dict[str, str]]) -> dict[str, str]:
    """What every item has with the same value: Alertmanager's commonLabels/Annotations."""
    first, *rest = items
    return {k: v for k, v in sorted(first.items()) if all(i.get(k) == v for i in rest)}


def generator_url(expr: str) -> str:
    return f"{PROMETHEUS}/graph?g0.expr={quote(expr, safe='')}&g0.tab=1"


def alertmanager_body(
    members: Sequence[dict[str, str]],
    annotations: dict[str, str],
    expr: str,
    starts: datetime,
    group_by: Sequence[str],
    receiver: str,
) -> dict[str, Any]:
    """One notification for a group of firing alerts of one rule, one alert per label set
    in `members` (they differ in the pod or instance), each starting 30 s after the last."""
    alerts = []
    for position, labels in enumerate(members):
        ordered = dict(sorted(labels.items()))
        alerts.append({
            "status": "firing",
            "labels": ordered,
            "annotations": annotations,
            "startsAt": _timestamp(starts + timedelta(seconds=30 * position)),
            "endsAt": NEVER,
            "generatorURL": generator_url(expr),
            "fingerprint": digest(json.dumps(ordered))[:16],
        })
    common = _common(members)
    group = {k: common[k] for k in sorted(group_by) if k in common}
    return {
        "version": "4",
        "groupKey": "{}:" + _label_set(group),
        "truncatedAlerts": 0,
        "status": "firing",
        "receiver": receiver,
        "groupLabels": group,
        "commonLabels": common,
        "commonAnnotations": annotations,
        "externalURL": ALERTMANAGER,
        "alerts": alerts,
    }


def am_subject(labels: dict[str, str]) -> str:
    """Alertmanager's default subject for one firing alert grouped by `alertname`: the
    group's label values, then the other common label values in key order."""
    rest = " ".join(labels[k] for k in sorted(labels) if k != "alertname")
    return f"[FIRING:1] {labels['alertname']} ({rest})"


def pagerduty_body(
    case_id: str, labels: dict[str, str], service: str, occurred: datetime
) -> dict[str, Any]:
    """An `incident.triggered` event for the incident Alertmanager's PagerDuty integration
    opens for one alert: the title is its default subject, the service is `service`."""
    incident = "Q" + _code(_UPPER, 13, "incident", case_id)
    urgent = labels.get("severity") == "critical"
    service_ref = {"id": "P" + _code(_UPPER, 6, "service", service), "summary": service}
    return {
        "event": {
            "id": "01" + _code(_CROCKFORD, 24, "event", case_id),
            "event_type": "incident.triggered",
            "resource_type": "incident",
            "occurred_at": _timestamp(occurred),
            "agent": {**service_ref, "type": "service_reference"},
            "client": None,
            "data": {
                "id": incident,
                "type": "incident",
                "title": am_subject(labels),
                "service": service_ref,
                "urgency": "high" if urgent else "low",
                "html_url": f"{PAGERDUTY}/incidents/{incident}",
                "number": 1000 + int(digest("number", case_id), 16) % 9000,
                "status": "triggered",
            },
        }
    }
