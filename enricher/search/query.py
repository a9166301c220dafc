"""From a normalized alert to the search query: texts to embed and the filter keys. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from enricher.alert import Alert
from enricher.search.names import name_key, service_keys, split_identifier

#: Labels whose values describe *what* failed (worth embedding). Instance-like labels
#: (pod, instance, fingerprint, ...) only add noise to the query.
DESCRIPTIVE_LABELS = ("component", "container", "queue", "topic", "database", "job", "app")

#: A CamelCase or mixedCase identifier inside prose ("OrderEventsConsumerBehind").
_CAMEL = re.compile(r"\b(?=[A-Za-z0-9_]*[a-z][A-Z])[A-Za-z][A-Za-z0-9_]*\b")


def _words_for_dense(text: str) -> str:
    """The dense model's word pieces make little of `OrderEventsConsumerBehind`; its words
    embed well. (BM25 keeps the exact token.)"""
    return _CAMEL.sub(lambda m: split_identifier(m.group(0)), text)


@dataclass(frozen=True)
class Query:
    #: For the dense model: what the alert says first, then its name in words.
    dense_text: str
    #: For BM25: the exact alert-name token too, so a runbook listing it scores, and the
    #: metric names of the rule expression, exact and as words.
    sparse_text: str
    alert_name: str
    alert_key: str
    #: Candidate service keys, most specific first (see names.service_keys).
    service_keys: tuple[str, ...]


def _join(parts: Iterable[str | None]) -> str:
    seen: list[str] = []
    for part in parts:
        text = (part or "").strip()
        if text and text not in seen:
            seen.append(text)
    return ". ".join(seen)


def build_query(alert: Alert) -> Query:
    """Two texts from one alert.

    PagerDuty titles without an identifier become the alert name as free text; they are
    used once, not repeated as "words". The dense text leads with the summary and
    description (on the golden dev split that ordering raised recall@1 by 3 points over
    leading with the name) and spells identifiers in it as words (docs/RETRIEVAL.md).
    The rule's metric names go to BM25 only: runbooks quote them verbatim, while to the
    dense model `kafka_producer_record_error_total` is one more vague phrase.
    """
    name = alert.alert_name
    words = name if " " in name.strip() else split_identifier(name)
    prose = [alert.summary, alert.description]
    labels = [
        value
        for key in DESCRIPTIVE_LABELS
        if (value := alert.labels.get(key)) and value != alert.service
    ]
    metric_words = [split_identifier(metric) for metric in alert.metrics]
    return Query(
        dense_text=_words_for_dense(_join([*prose, words, alert.service, *labels])),
        sparse_text=_join(
            [name, words, alert.service, *prose, *labels, *alert.metrics, *metric_words]
        ),
        alert_name=name,
        alert_key=name_key(name),
        service_keys=service_keys(alert.service) if alert.service else (),
    )
