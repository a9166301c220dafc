"""Votes as golden cases (pure): a team's own pages grow its own evaluation set.

One case per page that got votes, in the golden format (golden/README.md): `id`, `kind`
("feedback"), `payload` (a webhook body that parses to the page's alert), `expected_doc`
(the runbook path most voters confirmed; null when every vote said wrong and none right).
Each case also carries `feedback`: the page's votes per runbook path, which
quality.replay turns back into tallies to show what the votes do to the ranking.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

from enricher.alert import Alert
from enricher.feedback.store import Vote, votes_by_page
from enricher.sources.alertmanager import one_alert_body

KIND = "feedback"


def webhook_body(alert: Alert) -> dict[str, Any]:
    """A body of the alert's own sender that parses back to the alert as searched."""
    if alert.source == "pagerduty":
        return _pagerduty_body(alert)
    return _alertmanager_body(alert)


def _alertmanager_body(alert: Alert) -> dict[str, Any]:
    name = alert.alert_name
    labels = {**alert.labels, "alertname": name}
    if alert.service:
        labels.setdefault("service", alert.service)
    if alert.severity:
        labels.setdefault("severity", alert.severity)
    notes = {"summary": alert.summary, "description": alert.description}
    annotations = {k: v for k, v in {**notes, "runbook_url": alert.runbook_url}.items() if v}
    starts = alert.starts_at.isoformat() if alert.starts_at else "2026-01-01T00:00:00+00:00"
    fingerprint = hashlib.sha256(f"{alert.group_key}|{name}".encode()).hexdigest()[:16]
    return one_alert_body(
        labels,
        annotations,
        group_key=alert.group_key or f'{{}}:{{alertname="{name}"}}',
        receiver="feedback-export",
        starts_at=starts,
        generator_url=alert.link or "",
        fingerprint=fingerprint,
    )


def _pagerduty_body(alert: Alert) -> dict[str, Any]:
    occurred = alert.starts_at.isoformat() if alert.starts_at else "2026-01-01T00:00:00+00:00"
    data: dict[str, Any] = {
        "id": alert.group_key or "feedback",
        "type": "incident",
        # The page's summary is the incident title without its [FIRING:n] prefix.
        "title": alert.summary or alert.alert_name,
        "urgency": alert.labels.get("urgency"),
        "html_url": alert.link,
        "status": "triggered",
    }
    if alert.service:
        data["service"] = {"summary": alert.service, "type": "service_reference"}
    return {
        "event": {
            "id": "feedback-" + (alert.group_key or "event"),
            "event_type": "incident.triggered",
            "resource_type": "incident",
            "occurred_at": occurred,
            "data": data,
        }
    }


def _expected(right: Counter[str]) -> str | None:
    """The path most voters confirmed (ties: the first path), None when none was."""
    if not right:
        return None
    return sorted(right.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def cases(votes: Sequence[Vote]) -> list[dict[str, Any]]:
    """One golden case per page with votes, pages in the order of `votes`."""
    out: list[dict[str, Any]] = []
    for page, page_votes in votes_by_page(votes).items():
        right = Counter(v.path for v in page_votes if v.verdict == "right")
        wrong = Counter(v.path for v in page_votes if v.verdict == "wrong")
        latest = max(page_votes, key=lambda v: v.at)
        out.append(
            {
                "id": f"feedback-{page[:12]}",
                "kind": KIND,
                "payload": webhook_body(latest.alert),
                "expected_doc": _expected(right),
                "feedback": {
                    "right": dict(sorted(right.items())),
                    "wrong": dict(sorted(wrong.items())),
                },
                "alert_name": latest.alert_name,
                "service": latest.service,
            }
        )
    return out


__all__ = ["KIND", "cases", "webhook_body"]
