"""Where a webhook body becomes an `Alert`: the one place that picks a parser by source.

The HTTP routes know their source from the URL and call `parse`; tools that get a bare body
(golden cases, `python -m enricher.search --payload FILE`) call `parse_body`, which tells
the two shapes apart first. What comes out is what the queue carries to the workers: the
body is parsed once, at the edge.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from enricher.alert import Alert, Source
from enricher.errors import MalformedPayload
from enricher.sources.alertmanager import (
    AlertGroup,
    alert_identity,
    firing_fingerprints,
    normalize_group,
    parse_alertmanager,
)
from enricher.sources.jsonstream import loads
from enricher.sources.pagerduty import RETRY_HORIZON_S, normalize_incident, parse_pagerduty


@dataclass(frozen=True)
class Parsed:
    """A body that makes a page."""

    alert: Alert
    #: Same key, same news: sender retries and HA copies of one notification share it.
    dedup_key: str
    #: Identity of the firing alerts the page shows; when it changes, the message is updated.
    fingerprints: tuple[str, ...]
    #: When the sender says the event happened (PagerDuty's `occurred_at`), if it says.
    occurred_at: datetime | None = None


@dataclass(frozen=True)
class Ignored:
    """A valid body that makes no page: a PagerDuty event that is not about an incident
    (`reason` "not an incident event"), or one older than PagerDuty's retry horizon."""

    event_type: str
    reason: str = "not an incident event"


def from_group(group: AlertGroup) -> Parsed:
    """The page of an Alertmanager body read by `GroupReader` (the HTTP edge streams it)."""
    return Parsed(normalize_group(group), alert_identity(group), firing_fingerprints(group))


def parse(source: Source, body: bytes) -> Parsed | Ignored:
    """Validate and normalize a body from `source`; `MalformedPayload` when no page can be made."""
    if source == "alertmanager":
        return from_group(parse_alertmanager(body))
    webhook = parse_pagerduty(body)
    alert = normalize_incident(webhook)
    if alert is None:
        return Ignored(webhook.event.event_type)
    # The event id is inside the signed body, so a replayed body cannot pass as a new
    # delivery (the X-Webhook-Id header is not signed); PagerDuty's retries resend it.
    return Parsed(
        alert, "pd:" + webhook.event.id, (alert.group_key,), webhook.event.occurred_at
    )


def refuse_replay(parsed: Parsed | Ignored, now: datetime | None = None) -> Parsed | Ignored:
    """At the HTTP edge: a PagerDuty event older than PagerDuty's own retry horizon is a
    replay of a captured body, not a delivery (enricher.sources.pagerduty), so it is
    acknowledged and ignored. Offline tools (golden cases, the search CLI) skip this."""
    if not isinstance(parsed, Parsed) or parsed.occurred_at is None:
        return parsed
    age = ((now or datetime.now(UTC)) - parsed.occurred_at).total_seconds()
    if age <= RETRY_HORIZON_S:
        return parsed
    event = parsed.alert.event_type or "incident event"
    return Ignored(event, "older than PagerDuty's retry horizon (48 h)")


def detect_source(body: bytes) -> Source:
    data = loads(body)
    if isinstance(data, dict) and "alerts" in data:
        return "alertmanager"
    if isinstance(data, dict) and "event" in data:
        return "pagerduty"
    raise MalformedPayload("neither an Alertmanager (alerts[]) nor a PagerDuty (event) body")


def parse_body(body: bytes) -> Parsed | Ignored:
    """`parse` for a body of either sender, told apart by its shape."""
    return parse(detect_source(body), body)


__all__ = [
    "Ignored",
    "Parsed",
    "detect_source",
    "from_group",
    "parse",
    "parse_body",
    "refuse_replay",
]
