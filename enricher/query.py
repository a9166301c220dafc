"""From a normalized alert to the search query: the text to embed and the filter keys. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from enricher.alert import Alert
from enricher.names import name_key, service_keys, split_identifier

#: Labels whose values describe *what* failed (worth embedding). Instance-like labels
#: (pod, instance, fingerprint, ...) only add noise to the query.
DESCRIPTIVE_LABELS = ("component", "container", "queue", "topic", "database", "job", "app")


@dataclass(frozen=True)
class Query:
    text: str
    alert_name: str
    alert_key: str
    #: Candidate service keys, most specific first (see names.service_keys).
    service_keys: tuple[str, ...]


def build_query(alert: Alert) -> Query:
    """Query text: the alert name twice (exact token and its words), then service and prose."""
    parts: list[str] = []
    words = split_identifier(alert.alert_name)
    parts.append(alert.alert_name)
    if words and words != alert.alert_name:
        parts.append(words)
    if alert.service:
        parts.append(alert.service)
    for text in (alert.summary, alert.description):
        if text and text not in parts:
            parts.append(text)
    for key in DESCRIPTIVE_LABELS:
        value = alert.labels.get(key)
        if value and value != alert.service and value not in parts:
            parts.append(value)
    return Query(
        text=". ".join(parts),
        alert_name=alert.alert_name,
        alert_key=name_key(alert.alert_name),
        service_keys=service_keys(alert.service) if alert.service else (),
    )
