"""PagerDuty incidents in a chaos run (issue 35): signed `incident.triggered` webhooks about
the golden runbooks, each delivered twice the way PagerDuty redelivers (same event id), sent
beside the Alertmanager burst and through its kill -9; then, per incident, the notes the fake
PagerDuty API stored and the pages Slack got.

The enricher runs with `PAGERDUTY_NOTES=all`, so every accepted incident owes exactly one
note whatever its match: a count of 0 is a lost note and above 1 a doubled one."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

from scripts.chaos.harness import PD_SECRET, Enricher
from scripts.chaos.workload import Burst, post_until_answered, runbook_alerts
from tests.fakepagerduty import FakePagerDuty
from tests.helpers import sign

#: The fake PagerDuty user the notes are written as (`PAGERDUTY_FROM`).
NOTES_FROM = "oncall-bot@example.com"


@dataclass(frozen=True)
class Incident:
    id: str
    body: bytes


def build_incidents(count: int, now: datetime) -> list[Incident]:
    """`count` incidents titled the way Alertmanager's PagerDuty integration titles them,
    for the golden runbooks in turn; `now` stamps them (PagerDuty refuses nothing recent)."""
    alerts = runbook_alerts()
    made: list[Incident] = []
    for number in range(count):
        service, name = alerts[number % len(alerts)]
        incident = f"QCHAOS{number:05d}"
        event = {
            "id": f"01CHAOSEVT{number:05d}",
            "event_type": "incident.triggered",
            "resource_type": "incident",
            "occurred_at": now.isoformat(),
            "agent": None,
            "client": None,
            "data": {
                "id": incident,
                "type": "incident",
                "title": f"[FIRING:1] {name} {service} (incident {number})",
                "service": {"id": "PSVCCHAOS", "summary": service, "type": "service_reference"},
                "urgency": "high",
                "priority": None,
                "incident_key": f"chaos-{number}",
                "html_url": f"https://acme.pagerduty.example/incidents/{incident}",
                "number": number,
                "status": "triggered",
            },
        }
        made.append(Incident(incident, json.dumps({"event": event}).encode()))
    return made


@dataclass
class IncidentSends:
    """The incidents' deliveries (two each, shuffled) and which incidents were accepted."""

    incidents: list[Incident]
    rng: random.Random
    accepted: set[str] = field(default_factory=set)
    answers: dict[int, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._pending = [i for i in self.incidents for _ in range(2)]
        self.rng.shuffle(self._pending)

    def take(self, burst: Burst) -> Incident | None:
        """The next delivery, once the Alertmanager burst is as far along as the incidents
        (so the kill -9 lands among them too); None when all are sent."""
        with self._lock:
            if not self._pending:
                return None
            incident = self._pending.pop()
            share = 1 - len(self._pending) / (2 * len(self.incidents))
        while burst.answered < share * burst.total and not burst.finished:
            time.sleep(0.005)
        return incident

    def done(self, incident: Incident, status: int) -> None:
        with self._lock:
            self.answers[status] = self.answers.get(status, 0) + 1
            if status == 202:
                self.accepted.add(incident.id)


def incident_thread(enricher: Enricher, sends: IncidentSends, burst: Burst) -> None:
    """Deliver incidents like PagerDuty: signed, retried on connection failures and 5xx."""
    with httpx.Client(timeout=10) as client:
        while (incident := sends.take(burst)) is not None:
            headers = {"X-PagerDuty-Signature": sign(incident.body, PD_SECRET),
                       "Content-Type": "application/json"}
            status, _ = post_until_answered(client, f"{enricher.url}/webhook/pagerduty",
                                            incident.body, headers, burst)
            sends.done(incident, status)


@contextmanager
def running_pagerduty(rate_429: float, rate_500: float, seed: int) -> Iterator[FakePagerDuty]:
    """The fake PagerDuty API in this process, failing like the fake Slack: 429s with a
    Retry-After, and 500s of which half come after the note was stored."""
    fake = FakePagerDuty(users=(NOTES_FROM,)).start()
    fake.set_fault_rates(rate_429, rate_500, seed=seed)
    try:
        yield fake
    finally:
        fake.stop()


def notes_env(fake: FakePagerDuty) -> dict[str, str]:
    return {"PAGERDUTY_API_TOKEN": fake.token, "PAGERDUTY_FROM": NOTES_FROM,
            "PAGERDUTY_API_URL": fake.url, "PAGERDUTY_NOTES": "all"}


def tally_incidents(
    sends: IncidentSends, fake: FakePagerDuty, pages: Mapping[str, int] | None
) -> dict[str, Any]:
    """Notes (and, where Slack's markers tell incidents apart, pages) per accepted incident."""
    notes = fake.all_notes()
    counts = {i: len(notes.get(i, [])) for i in sends.accepted}
    statuses: dict[int, int] = {}
    for call in fake.posts():
        statuses[call.status] = statuses.get(call.status, 0) + 1
    report: dict[str, Any] = {
        "incidents": len(sends.incidents),
        "incident_answers": {str(k): v for k, v in sorted(sends.answers.items())},
        "incidents_accepted": len(sends.accepted),
        "notes_added": sum(min(n, 1) for n in counts.values()),
        "notes_lost": sum(1 for n in counts.values() if n == 0),
        "notes_doubled": sum(1 for n in counts.values() if n > 1),
        "notes_for_unaccepted_incidents": sum(
            len(v) for k, v in notes.items() if k not in sends.accepted),
        "pagerduty_posts": sum(statuses.values()),
        "pagerduty_429": statuses.get(429, 0),
        "pagerduty_500": statuses.get(500, 0),
    }
    if pages is not None:
        report["incident_pages_lost"] = sum(1 for i in sends.accepted if not pages.get(i))
        report["incident_pages_doubled"] = sum(1 for i in sends.accepted if pages.get(i, 0) > 1)
    return report


def incidents_failed(report: Mapping[str, Any]) -> bool:
    return bool(
        report["notes_lost"] or report["notes_doubled"]
        or report["notes_for_unaccepted_incidents"]
        or report["incidents_accepted"] < report["incidents"]
        or report.get("incident_pages_lost") or report.get("incident_pages_doubled")
    )
