"""Hostile bodies against both webhooks: never a 5xx, the app keeps serving, and every body it
accepts is delivered by the workers without a crash.

Requests carry valid credentials (Bearer token, PagerDuty signature over the fuzzed body), so
every body reaches the parser. Memory flatness under the same kind of input is measured by
`make chaos` (docs/RELIABILITY.md), not asserted here.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from structlog.testing import capture_logs

from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.service import Services
from scripts.chaos.observed import unfinished_jobs
from scripts.local_redis import RedisServer
from tests.conftest import wait_for
from tests.fakeslack import FakeSlack, running_fake_slack
from tests.helpers import AM_TOKEN, PD_SECRETS, am_alert, am_body, pd_body, sign
from tests.helpers import service_settings as build_settings

BODY_CAP = 1024 * 1024  # the default max_body_bytes
BEARER = {"Authorization": f"Bearer {AM_TOKEN}"}
#: Derandomized: every run (CI included) sends the same examples, so a red run means a
#: change broke one. One random run in CI (2026-12-01) made the app raise on a body that
#: 1,500 further random examples did not find again. To hunt for new cases, run it with
#: `derandomize=False` and more examples.
FUZZ = settings(
    max_examples=300,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- strategies ------------------------------------------------------------------------------

# Lone surrogates and other code points JSON encoders and decoders disagree on.
any_text = st.text(st.characters(exclude_categories=()), max_size=60)
huge_text = st.builds(lambda c, n: c * n, st.sampled_from("xé🔥\u202e<&"), st.integers(1, 20_000))
scalars = (
    st.none() | st.booleans() | st.integers() | st.floats() | any_text | huge_text
    | st.integers(-(10**400), 10**400)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(any_text, inner, max_size=5),
    max_leaves=25,
)
# The calendar's edges with offsets (year 1 and 9999 leave the datetime range in UTC).
edge_times = st.sampled_from([
    "0001-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "0001-01-01T00:30:00+23:59",
    "9999-12-31T23:59:59-01:00", "9999-12-31T23:59:59.999999Z", "2026-02-30T00:00:00Z",
    "2026-11-28T03:00:00", "1970-01-01T00:00:00+00:00", "2026-11-28T03:00:00.1234567891Z",
])
offsets = st.builds(lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-1439, 1439))
aware_times = st.datetimes(timezones=st.none() | offsets).map(datetime.isoformat)
times = st.one_of(edge_times, edge_times, aware_times, any_text)


def any_of(*hostile: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(*hostile, json_values)


AM_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "version": any_of(st.sampled_from(["3", "5", 4, "", "4 "])),
    "groupKey": any_of(any_text, huge_text),
    "truncatedAlerts": any_of(st.integers(-(10**30), 10**30)),
    "status": any_of(st.sampled_from(["resolved", "pending", "FIRING"])),
    "receiver": any_of(any_text, huge_text),
    "groupLabels": any_of(st.dictionaries(any_text, any_text)),
    "commonLabels": any_of(st.dictionaries(
        st.sampled_from(["alertname", "service", "severity", "job"]) | any_text,
        any_text | huge_text)),
    "commonAnnotations": any_of(st.dictionaries(
        st.sampled_from(["summary", "description", "runbook_url"]) | any_text,
        any_text | huge_text)),
    "externalURL": any_of(any_text, huge_text),
    "alerts": any_of(st.just([])),
}
ALERT_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "status": any_of(st.sampled_from(["resolved", "FIRING", ""])),
    "labels": any_of(st.dictionaries(
        st.sampled_from(["alertname", "service", "severity", "instance"]) | any_text,
        any_text | huge_text)),
    "annotations": any_of(st.dictionaries(
        st.sampled_from(["summary", "description", "runbook_url"]) | any_text,
        any_text | huge_text)),
    "startsAt": times | any_of(),
    "endsAt": times | any_of(),
    "generatorURL": any_of(any_text, huge_text),
    "fingerprint": any_of(any_text, huge_text),
}
INCIDENT_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "id": any_of(any_text, huge_text),
    "type": any_of(st.sampled_from(["incident_note", "service", ""])),
    "title": any_of(any_text, huge_text, st.builds("[FIRING:1] {} {} ({})".format,
                                                   any_text, any_text, any_text)),
    "service": any_of(st.fixed_dictionaries({"summary": any_text | huge_text})),
    "urgency": any_of(any_text),
    "priority": any_of(st.fixed_dictionaries({"summary": any_text})),
    "incident_key": any_of(any_text),
    "html_url": any_of(any_text, huge_text),
    "number": any_of(st.integers(-(10**30), 10**30)),
    "status": any_of(any_text),
    "created_at": times | any_of(),
    "content": any_of(any_text, huge_text),
    "incident": any_of(st.fixed_dictionaries({"id": any_text, "summary": any_text | huge_text})),
}
EVENT_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "id": any_of(any_text, huge_text),
    "event_type": any_of(any_text, st.sampled_from([
        "incident.triggered", "incident.resolved", "incident.annotated", "incident.reopened",
        "incident.acknowledged", "service.updated"])),
    "resource_type": any_of(st.sampled_from(["incident", "service", ""])),
    "occurred_at": times | any_of(),
    "agent": any_of(st.fixed_dictionaries({"id": any_text, "summary": any_text})),
    "client": any_of(st.dictionaries(any_text, any_text)),
    "data": json_values,
}


def mutate(
    draw: st.DrawFn, target: dict[str, Any], fields: dict[str, st.SearchStrategy[Any]]
) -> None:
    """Replace one field with a hostile value, or drop it."""
    key = draw(st.sampled_from(sorted(fields)))
    if draw(st.integers(0, 5)) == 0:
        target.pop(key, None)
    else:
        target[key] = draw(fields[key])


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@st.composite
def alertmanager_bodies(draw: st.DrawFn) -> Any:
    """A valid body with up to three fields, of the group or of one alert, made hostile."""
    fingerprints = draw(st.lists(any_text, min_size=1, max_size=3, unique=True))
    body = am_body(*(am_alert("PostgresReplicationLag", "postgres", fingerprint=fp)
                     for fp in fingerprints))
    body["groupKey"] = draw(any_text)
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.integers(0, 2)) == 0:
            mutate(draw, body, AM_FIELDS)
        elif alerts := [a for a in _list(body.get("alerts")) if isinstance(a, dict)]:
            mutate(draw, draw(st.sampled_from(alerts)), ALERT_FIELDS)
    return body


@st.composite
def pagerduty_bodies(draw: st.DrawFn) -> Any:
    """A valid incident event with up to three fields, of the event or its data, made hostile."""
    event_type = draw(st.sampled_from(["incident.triggered", "incident.resolved",
                                       "incident.annotated", "incident.reopened"]))
    body = pd_body("[FIRING:1] KafkaConsumerLagHigh kafka (critical)", "kafka",
                   event_type=event_type, incident=draw(any_text), event_id=draw(any_text))
    event = body["event"]
    if event_type == "incident.annotated":
        event["data"] = {"type": "incident_note", "content": "a note",
                         "incident": {"id": event["data"]["id"], "summary": "title"}}
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            mutate(draw, event, EVENT_FIELDS)
        elif isinstance(event.get("data"), dict):
            mutate(draw, event["data"], INCIDENT_FIELDS)
    return body


def encode(value: Any, ensure_ascii: bool) -> bytes:
    text = json.dumps(value, ensure_ascii=ensure_ascii)
    return text.encode("utf-8", "surrogatepass")


def nested(depth: int, opener: bytes, closer: bytes) -> bytes:
    return opener * depth + closer * depth


def bodies(shapes: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """Half near-valid bodies (they get past the parser), half junk of every kind."""
    near_valid = st.builds(encode, shapes, st.booleans())
    return st.one_of(
        near_valid, near_valid, near_valid, near_valid,
        st.builds(encode, json_values, st.booleans()),
        st.binary(max_size=2048),
        st.builds(nested, st.integers(1, BODY_CAP // 12), st.sampled_from([b"[", b'{"a":']),
                  st.sampled_from([b"]", b"}"])),
        st.builds(lambda b, cut: b[:cut], st.builds(encode, shapes, st.booleans()),
                  st.integers(0, 400)),
    )


def _am_starting(starts: str) -> bytes:
    alert = am_alert("PostgresReplicationLag", "postgres", starts=starts)
    return json.dumps(am_body(alert)).encode()


def _pd_created(created: str) -> bytes:
    body = pd_body(
        "[FIRING:1] KafkaConsumerLagHigh kafka (critical)", "kafka", event_id=f"01EDGE-{created}"
    )
    body["event"]["data"]["created_at"] = created
    return json.dumps(body).encode()


# Inputs random search reaches only about once in a few hundred runs: the calendar's edges
# with an offset, which leave the datetime range when converted to UTC.
EDGE_TIMES = ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"]

webhook_ids = st.none() | st.from_regex(re.compile(r"[ -~]{0,120}"), fullmatch=True)

# --- the app ---------------------------------------------------------------------------------


@dataclass
class App:
    client: TestClient
    services: Services
    fake: FakeSlack
    redis_url: str
    logs: list[MutableMapping[str, Any]] = field(default_factory=list)

    def __repr__(self) -> str:  # hypothesis prints fixtures with each failing example
        return "App()"

    def check_serving(self) -> None:
        assert self.client.get("/healthz").status_code == 200
        ok = json.dumps(am_body(am_alert("KafkaConsumerLagHigh", "kafka", fingerprint="ok")))
        response = self.client.post("/webhook/alertmanager", content=ok, headers=BEARER)
        assert response.status_code == 202


@pytest.fixture(scope="module")
def app(
    tmp_path_factory: pytest.TempPathFactory,
    golden_index: Path,
    redis_server: RedisServer,
    embedder: Embedder,
) -> Iterator[App]:
    if redis_server.proc is None:
        redis_server.start()
    redis.Redis.from_url(redis_server.url).flushall()
    tmp = tmp_path_factory.mktemp("fuzz")
    with running_fake_slack(token="xoxb-test") as fake:
        services = Services.build(build_settings(tmp, golden_index, redis_server.url, fake),
                                  embedder=embedder)
        with capture_logs() as logs, TestClient(create_app(services)) as client:
            yield App(client, services, fake, redis_server.url, logs)
    shutil.rmtree(tmp, ignore_errors=True)


class TestFuzz:
    @FUZZ
    @given(body=bodies(alertmanager_bodies()))
    def test_alertmanager_never_5xx(self, app: App, body: bytes) -> None:
        """Any body, with valid auth, gets a 2xx or a 4xx from the Alertmanager webhook."""
        response = app.client.post("/webhook/alertmanager", content=body, headers=BEARER)
        assert response.status_code < 500, (response.status_code, body[:300])

    @FUZZ
    @given(body=bodies(pagerduty_bodies()), webhook_id=webhook_ids)
    def test_pagerduty_never_5xx(self, app: App, body: bytes, webhook_id: str | None) -> None:
        """Any body, validly signed, gets a 2xx or a 4xx from the PagerDuty webhook."""
        headers = {"X-PagerDuty-Signature": sign(body, PD_SECRETS[0])}
        if webhook_id is not None:
            headers["X-Webhook-Id"] = webhook_id
        response = app.client.post("/webhook/pagerduty", content=body, headers=headers)
        assert response.status_code < 500, (response.status_code, body[:300])

    @pytest.mark.parametrize("when", EDGE_TIMES)
    def test_alertmanager_calendar_edge_is_not_5xx(self, app: App, when: str) -> None:
        """An alert starting at the calendar's edge with an offset gets a 2xx or a 4xx."""
        response = app.client.post("/webhook/alertmanager", content=_am_starting(when),
                                   headers=BEARER)
        assert response.status_code < 500

    @pytest.mark.parametrize("when", EDGE_TIMES)
    def test_pagerduty_calendar_edge_is_not_5xx(self, app: App, when: str) -> None:
        """An incident created at the calendar's edge with an offset gets a 2xx or a 4xx
        (whatever is accepted must then be delivered: see the last test)."""
        body = _pd_created(when)
        headers = {"X-PagerDuty-Signature": sign(body, PD_SECRETS[1]), "X-Webhook-Id": when}
        response = app.client.post("/webhook/pagerduty", content=body, headers=headers)
        assert response.status_code < 500

    def test_oversize_bodies_are_413(self, app: App) -> None:
        """A PagerDuty body over the cap is refused with 413, with or without a
        Content-Length (Alertmanager bodies are streamed: tests/enricher/test_app.py)."""
        big = b"[" + b"1," * BODY_CAP + b"1]"
        response = app.client.post("/webhook/pagerduty", content=big)
        assert response.status_code == 413
        chunks = iter([big[:1000], big[1000:]])
        response = app.client.post("/webhook/pagerduty", content=chunks)
        assert response.status_code == 413

    def test_still_serving_and_accepted_bodies_delivered(self, app: App) -> None:
        """After the fuzz runs the app still answers, and every queued job is finished
        (delivered or deliberately dropped), none left crashing in a retry loop."""
        app.check_serving()

        def crashes() -> list[MutableMapping[str, Any]]:
            return [e for e in app.logs if e["event"] == "job.crashed"]

        wait_for(lambda: unfinished_jobs(app.redis_url) == 0 or bool(crashes()), timeout_s=120,
                 what="the workers to finish every accepted fuzz body")
        assert not crashes(), f"workers crashed on accepted bodies: {crashes()[:3]}"
        assert "rbe_dead_letter_depth 0.0" in app.client.get("/metrics").text
