"""The normalized alert: what every intake format is reduced to before search.

One `Alert` is one page. For Alertmanager that is one notification group (ten
crash-looping pods are one page, not ten); for PagerDuty it is one incident event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

Source = Literal["alertmanager", "pagerduty"]
Status = Literal["firing", "resolved"]

#: Label names that name the service, most specific first. `service_name` is how
#: OpenTelemetry's `service.name` reaches Prometheus, and what Sourcegraph's generated alerts
#: carry. A sender's `job` may stand in (enricher.sources.alertmanager.normalize).
SERVICE_LABELS = ("service", "service_name", "app", "app_kubernetes_io_name")


@dataclass(frozen=True)
class Acknowledgement:
    """Someone took the page (PagerDuty's `incident.acknowledged`)."""

    #: Who, as the sender names them (PagerDuty's agent summary); None when it names no one.
    by: str | None
    #: When (the event's `occurred_at`); None when the sender gave no time.
    at: datetime | None


@dataclass(frozen=True)
class Alert:
    source: Source
    status: Status
    alert_name: str
    service: str | None
    severity: str | None
    summary: str
    description: str
    labels: dict[str, str] = field(default_factory=dict)
    runbook_url: str | None = None
    #: Stable identity of the page across firing/resolve: Alertmanager groupKey,
    #: PagerDuty incident id. Used to find the Slack message to update on resolve.
    group_key: str = ""
    #: Alerts in the group (firing + resolved) as far as the payload shows them.
    alert_count: int = 1
    #: Alerts Alertmanager left out of `alerts[]` because of `max_alerts`.
    truncated: int = 0
    #: Firing alerts in the group, as far as the payload shows them.
    firing_count: int = 1
    #: What is firing now, most severe first: the first few alerts, each by the labels
    #: that tell it apart from the rest of the group ("namespace=payments pod=api-1").
    targets: tuple[str, ...] = ()
    starts_at: datetime | None = None
    #: When a resolved page's alerts ended (the last `endsAt`, PagerDuty's resolve time);
    #: None while firing or when the sender gave none (the page then shows when it was sent).
    ends_at: datetime | None = None
    #: Where a human can look at the alert itself (generatorURL, PagerDuty html_url).
    link: str | None = None
    #: Metric names from the rule expressions behind the alerts (Alertmanager's
    #: generatorURL): lexical evidence for the search, see enricher.promql.
    metrics: tuple[str, ...] = ()
    #: Raw event type for PagerDuty (`incident.triggered` ...), `None` for Alertmanager.
    event_type: str | None = None
    #: Set on an acknowledgement: the page is updated to say who took it and when.
    acknowledged: Acknowledgement | None = None


def in_utc(value: datetime) -> datetime:
    """Validator: a timestamp in UTC. Times near year 1 or 9999 with an offset cannot be
    represented in UTC; they are refused here instead of crashing a worker later."""
    try:
        return value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise ValueError("timestamp out of range") from None
