"""PagerDuty v3 webhook: verify the signature, parse, and reduce an incident event to an `Alert`.

PagerDuty disables a subscription after three dropped (4xx) deliveries in a row, so the
models are lenient: unknown fields are ignored everywhere, only the event envelope and an
incident's id are required, `null` or a scalar where text belongs is read as text, a
reference sent as a bare string (`"service": "Checkout API"`) is its summary, and
`event.data` is parsed by its documented `type` (`incident`, `incident_note`); any other
shape is kept as plain JSON and left alone.

Replays. PagerDuty retries a delivery for up to `RETRY_HORIZON_S` (48 h), and the event id
is remembered at least that long (`enricher.pipeline.ledger`). A validly signed event that
`occurred_at` longer ago than that is no delivery PagerDuty would make: intake acknowledges
and ignores it (`enricher.sources.refuse_replay`), so a captured trigger cannot re-open an
incident.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    Tag,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from enricher.alert import Acknowledgement, Alert, Status
from enricher.errors import Forbidden, MalformedPayload, Unauthorized
from enricher.signatures import any_match, hmac_sha256, presented
from enricher.sources.alertmanager import SEVERITY_ORDER
from enricher.sources.jsonstream import loads
from enricher.sources.lenient import OptionalText, Text, Timestamp

RELEVANT_EVENTS = frozenset(
    {
        "incident.triggered",
        "incident.resolved",
        "incident.acknowledged",
        "incident.reopened",
        "incident.annotated",
    }
)
URGENCY_SEVERITY = {"high": "critical", "low": "warning"}
#: How long PagerDuty keeps retrying a delivery: older events are replays.
RETRY_HORIZON_S = 48 * 3600


def _whole_number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class Reference(_Model):
    """PagerDuty's `*_reference` objects (service, priority, agent, incident)."""

    id: OptionalText = None
    summary: OptionalText = None
    html_url: OptionalText = None

    @model_validator(mode="before")
    @classmethod
    def _bare_string_is_the_summary(cls, value: Any) -> Any:
        return {"summary": value} if isinstance(value, str) else value


def _reference(value: Any) -> Any:
    """A reference that is neither an object nor a string is no reference."""
    return value if isinstance(value, dict | str) else None


OptionalReference = Annotated[Reference | None, BeforeValidator(_reference)]


class Incident(_Model):
    id: str
    title: Text = ""
    service: OptionalReference = None
    urgency: OptionalText = None
    priority: OptionalReference = None
    incident_key: OptionalText = None
    html_url: OptionalText = None
    number: Annotated[int | None, BeforeValidator(_whole_number)] = None
    status: OptionalText = None
    created_at: Timestamp = None


class IncidentNote(_Model):
    """`data` of `incident.annotated`: the note, and a reference to its incident."""

    id: OptionalText = None
    content: Text = ""
    incident: Reference


def _data_kind(value: Any) -> str:
    if isinstance(value, dict) and value.get("type") in ("incident", "incident_note"):
        return str(value["type"])
    return "other"


EventData = Annotated[
    Annotated[Incident, Tag("incident")]
    | Annotated[IncidentNote, Tag("incident_note")]
    | Annotated[JsonValue, Tag("other")],
    Discriminator(_data_kind),
]


class Event(_Model):
    #: The idempotency key of the delivery (enricher.app): it must be there, and bounded.
    id: Annotated[str, Field(min_length=1, max_length=256, pattern=r"\S")]
    event_type: Text
    resource_type: Text
    occurred_at: Timestamp = None
    agent: OptionalReference = None
    data: EventData = None

    @model_validator(mode="before")
    @classmethod
    def _incident_data_by_default(cls, value: Any) -> Any:
        # PagerDuty always sends data.type; hand-written bodies (tests, golden cases) often
        # don't. Data of an incident event without a type is taken to be the incident.
        if isinstance(value, dict) and value.get("resource_type") == "incident":
            data = value.get("data")
            if isinstance(data, dict) and "type" not in data:
                return {**value, "data": {**data, "type": "incident"}}
        return value

    @model_validator(mode="after")
    def _relevant_events_carry_incidents(self) -> Event:
        if self.is_relevant() and not isinstance(self.data, Incident | IncidentNote):
            raise PydanticCustomError(
                "incident_data",
                "{event_type} needs data of type 'incident' or 'incident_note'",
                {"event_type": self.event_type[:40]},
            )
        return self

    def is_relevant(self) -> bool:
        return self.resource_type == "incident" and self.event_type in RELEVANT_EVENTS


class PagerDutyWebhook(_Model):
    event: Event


def verify_signature(body: bytes, header: str | None, secrets: Sequence[str]) -> None:
    """Check `X-PagerDuty-Signature: v1=<hex>[,v1=<hex>...]` against every configured secret.

    Accepts when any v1 signature equals HMAC-SHA256(secret, raw body) for any secret, so
    both sides can rotate secrets without downtime. Versions other than v1 are ignored.
    Missing header: 401. No match: 403. Empty secrets are skipped: anyone can sign with them.
    """
    if isinstance(secrets, str):
        raise TypeError("secrets must be a sequence of secrets, not one string")
    if not header or not header.strip():
        raise Unauthorized("missing X-PagerDuty-Signature header")
    signatures = presented(header, "v1")
    if not signatures:
        raise Forbidden("no v1 signature in X-PagerDuty-Signature")
    if not any_match([hmac_sha256(secret, body) for secret in secrets if secret], signatures):
        raise Forbidden("signature mismatch")


def parse_pagerduty(body: bytes) -> PagerDutyWebhook:
    """Validate a raw request body; any problem becomes a `MalformedPayload` with a short reason.

    The body is read by the same rules as an Alertmanager body (`jsonstream.loads`): a
    huge number or a lone surrogate in a field the page does not need costs no page.
    """
    data = loads(body)
    if not isinstance(data, dict):
        raise MalformedPayload("invalid JSON: the body must be a JSON object")
    try:
        return PagerDutyWebhook.model_validate(data)
    except ValidationError as exc:
        raise MalformedPayload.from_validation_error(exc) from None


@dataclass(frozen=True)
class ParsedTitle:
    summary: str
    alert_name: str
    severity: str | None


_AM_PREFIX = re.compile(r"\[(?:FIRING|RESOLVED)(?::\d+)?\]\s*", re.IGNORECASE)
# CamelCase with at least two capitalised parts, ending in lower case or digits:
# HighErrorRate, KubeAPIDown, etcdNoLeader; not Postgres, MongoDB, MySQL, iOS.
_CAMEL = re.compile(r"[a-z0-9]*(?:[A-Z]+[a-z0-9]+){2,}")
_SNAKE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")
_PUNCTUATION = "\"'`.,;:!?()[]{}<>"


def _identifier(tokens: Sequence[str]) -> str | None:
    for token in tokens:
        word = token.strip(_PUNCTUATION)
        if _CAMEL.fullmatch(word) or _SNAKE.fullmatch(word):
            return word
    return None


def parse_title(title: str) -> ParsedTitle:
    """Recover alert name (and maybe severity) from an incident title.

    Alertmanager's default title is `[FIRING:n] <group label values> (<other common label
    values>)`, e.g. `[FIRING:1] HighErrorRate checkout (shop-prod critical)`: the prefix is
    stripped, the alert name is the first identifier-looking value (else the first value
    that is not a severity word), and a known severity word among the values is the
    severity. A free-text title has no structure to trust: its alert name is the first
    CamelCase or snake_case token, else the whole title (search builds its text from it
    anyway), and no severity is read from it ("error rate high" is not severity "error").
    """
    text = " ".join(title.split())
    prefix = _AM_PREFIX.match(text)
    if prefix is None:
        return ParsedTitle(text, _identifier(text.split()) or text or "unknown", None)
    rest = text[prefix.end() :]
    values, extra = rest, ""
    if rest.endswith(")") and "(" in rest:
        cut = rest.rindex("(")
        values, extra = rest[:cut], rest[cut + 1 : -1]
    tokens = values.split() + extra.split()
    severities = [t for t in tokens if t.lower() in SEVERITY_ORDER]
    plain = [t for t in tokens if t.lower() not in SEVERITY_ORDER]
    name = _identifier(tokens) or (plain[0] if plain else "unknown")
    severity = min(severities, key=lambda s: SEVERITY_ORDER.index(s.lower()), default=None)
    return ParsedTitle(rest, name, severity)


def normalize_incident(webhook: PagerDutyWebhook) -> Alert | None:
    """The `Alert` for a relevant incident event; `None` for anything else (ack and ignore).

    `incident.resolved` is resolved and every other relevant event is firing. An
    `incident.annotated` event carries only a reference to its incident, so its `Alert`
    has the title, id and link but no service or urgency; the note is the description.
    An `incident.acknowledged` event says who took the page (its agent) and when (its
    `occurred_at`).
    """
    event = webhook.event
    if not event.is_relevant():
        return None
    status: Status = "resolved" if event.event_type == "incident.resolved" else "firing"
    data = event.data
    if isinstance(data, IncidentNote):
        ref = data.incident
        title = parse_title(ref.summary or "")
        return Alert(
            source="pagerduty",
            status=status,
            alert_name=title.alert_name,
            service=None,
            severity=title.severity,
            summary=title.summary,
            description=data.content,
            group_key=ref.id or "",
            link=ref.html_url or None,
            event_type=event.event_type,
        )
    if not isinstance(data, Incident):
        return None
    title = parse_title(data.title)
    service = data.service.summary if data.service and data.service.summary else None
    priority = data.priority.summary if data.priority else None
    urgency = (data.urgency or "").lower()
    labels = {
        "service": service,
        "urgency": data.urgency,
        "priority": priority,
        "incident_key": data.incident_key,
    }
    return Alert(
        source="pagerduty",
        status=status,
        alert_name=title.alert_name,
        service=service,
        severity=title.severity or URGENCY_SEVERITY.get(urgency),
        summary=title.summary,
        description="",
        labels={key: value for key, value in labels.items() if value},
        group_key=data.id,
        starts_at=data.created_at,
        ends_at=event.occurred_at if status == "resolved" else None,
        link=data.html_url or None,
        event_type=event.event_type,
        acknowledged=_acknowledgement(event),
    )


def _acknowledgement(event: Event) -> Acknowledgement | None:
    if event.event_type != "incident.acknowledged":
        return None
    by = event.agent.summary if event.agent is not None else None
    return Acknowledgement(by=by or None, at=event.occurred_at)


__all__ = [
    "RELEVANT_EVENTS",
    "RETRY_HORIZON_S",
    "URGENCY_SEVERITY",
    "Event",
    "Incident",
    "IncidentNote",
    "PagerDutyWebhook",
    "ParsedTitle",
    "Reference",
    "normalize_incident",
    "parse_pagerduty",
    "parse_title",
    "verify_signature",
]
