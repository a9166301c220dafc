"""The PagerDuty side of `make chaos` (scripts/chaos/incidents.py): the incidents it sends
are pages to the service, and its count calls a missing or second note a failure."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from enricher.sources import Parsed, parse_body, refuse_replay
from scripts.chaos.incidents import (
    NOTES_FROM,
    IncidentSends,
    build_incidents,
    incidents_failed,
    running_pagerduty,
    tally_incidents,
)
from scripts.chaos.workload import Burst, runbook_alerts
from tests.fakepagerduty import ACCEPT, FakePagerDuty

NOW = datetime(2026, 11, 28, 3, 0, tzinfo=UTC)


@pytest.fixture
def pagerduty() -> Iterator[FakePagerDuty]:
    with running_pagerduty(0.0, 0.0, seed=1) as fake:
        yield fake


def add_note(fake: FakePagerDuty, incident: str) -> None:
    reply = httpx.post(
        f"{fake.url}/incidents/{incident}/notes", json={"note": {"content": "runbook"}},
        headers={"Authorization": f"Token token={fake.token}", "Accept": ACCEPT,
                 "From": NOTES_FROM},
    )
    assert reply.status_code == 201


def test_each_incident_is_a_page_about_a_golden_runbook() -> None:
    incidents = build_incidents(3, NOW)
    names = [name for _, name in runbook_alerts()[:3]]
    for incident, name in zip(incidents, names, strict=True):
        parsed = refuse_replay(parse_body(incident.body), now=NOW)
        assert isinstance(parsed, Parsed)
        assert (parsed.alert.group_key, parsed.alert.alert_name) == (incident.id, name)
    assert len({i.id for i in incidents}) == 3


def test_every_incident_is_delivered_twice() -> None:
    sends = IncidentSends(build_incidents(4, NOW), random.Random(3))
    taken = []
    done_burst = Burst([], [], {}, random.Random(1))  # nothing to wait for
    while (incident := sends.take(done_burst)) is not None:
        taken.append(incident.id)
    assert sorted(taken) == sorted(i.id for i in sends.incidents for _ in range(2))


def test_one_note_each_passes_and_a_missing_or_second_note_fails(
    pagerduty: FakePagerDuty,
) -> None:
    sends = IncidentSends(build_incidents(3, NOW), random.Random(1))
    for incident in sends.incidents:
        sends.done(incident, 202)
    ids = [i.id for i in sends.incidents]
    pages = dict.fromkeys(ids, 1)
    for incident_id in ids:
        add_note(pagerduty, incident_id)
    report = tally_incidents(sends, pagerduty, pages)
    assert (report["notes_added"], report["notes_lost"], report["notes_doubled"]) == (3, 0, 0)
    assert not incidents_failed(report)

    add_note(pagerduty, ids[0])
    report = tally_incidents(sends, pagerduty, {**pages, ids[2]: 0})
    assert (report["notes_doubled"], report["incident_pages_lost"]) == (1, 1)
    assert incidents_failed(report)


def test_an_incident_never_accepted_fails_the_run(pagerduty: FakePagerDuty) -> None:
    sends = IncidentSends(build_incidents(2, NOW), random.Random(1))
    sends.done(sends.incidents[0], 202)
    sends.done(sends.incidents[1], 0)
    add_note(pagerduty, sends.incidents[0].id)
    report = tally_incidents(sends, pagerduty, None)
    assert report["notes_lost"] == 0
    assert "incident_pages_lost" not in report
    assert incidents_failed(report)
