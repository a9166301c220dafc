"""Recognise a webhook body by its shape and normalize it: for the CLIs and the eval harness.

The HTTP routes know their source from the URL; tools that get a bare body (golden cases,
`python -m enricher.search --payload FILE`) use `alert_from_body`.
"""

from __future__ import annotations

import json

from enricher.alert import Alert
from enricher.alertmanager import normalize_group, parse_alertmanager
from enricher.errors import MalformedPayload
from enricher.pagerduty import normalize_incident, parse_pagerduty


def detect_source(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise MalformedPayload(f"invalid JSON: {exc}"[:200]) from None
    if isinstance(data, dict) and "alerts" in data:
        return "alertmanager"
    if isinstance(data, dict) and "event" in data:
        return "pagerduty"
    raise MalformedPayload("neither an Alertmanager (alerts[]) nor a PagerDuty (event) body")


def alert_from_body(body: bytes) -> Alert | None:
    """The normalized alert, or None for PagerDuty events that are not incidents."""
    if detect_source(body) == "alertmanager":
        return normalize_group(parse_alertmanager(body))
    return normalize_incident(parse_pagerduty(body))
