"""From a normalized alert to the search query: texts to embed and the filter keys. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from enricher.alert import SERVICE_LABELS, Alert
from enricher.search.names import (
    alert_key_forms,
    name_key,
    service_keys,
    severity_bare,
    split_identifier,
)
from enricher.sources.promql import expression, state_literals

#: Labels whose values describe *what* failed (worth a BM25 match). Instance-like labels
#: (pod, instance, fingerprint, ...) only add noise to the query.
DESCRIPTIVE_LABELS = ("component", "container", "queue", "topic", "database", "job", "app")
#: Labels that name *what* the alert is about, whose values stay in the prose.
_WHAT_LABELS = frozenset({"alertname", "severity", *SERVICE_LABELS, *DESCRIPTIVE_LABELS})
#: Labels that route the page rather than say what failed: `severity: warning` spells part
#: of a runbook named `…CapacityWarning` for any alert at all.
_ROUTING_LABELS = frozenset({"severity"})
#: Label values shorter than this are not taken out of the prose (too likely to be words).
_MIN_STRIPPED_VALUE = 3

#: A CamelCase or mixedCase identifier inside prose ("OrderEventsConsumerBehind").
_CAMEL = re.compile(r"\b(?=[A-Za-z0-9_]*[a-z][A-Z])[A-Za-z][A-Za-z0-9_]*\b")
#: A state or reason spelled the Kubernetes way, two or more capitalised parts with no
#: separator: CrashLoopBackOff, ImagePullBackOff, OOMKilled, NodeNotReady.
_STATE = re.compile(r"\b(?:[A-Z]+[a-z0-9]+){2,}\b")


def states(alert: Alert) -> tuple[str, ...]:
    """The states an alert names other than its own name: its rule's capitalised matcher
    literals (`reason="CrashLoopBackOff"`), and CamelCase words in its label values and
    prose (a reason label, "waiting state (reason: CrashLoopBackOff)", a PagerDuty title
    carrying Alertmanager's label values). A state is what the alert is about."""
    found = dict.fromkeys(state_literals(expression(alert.link or "")))
    texts = [alert.summary, alert.description, *alert.labels.values()]
    for text in texts:
        for word in _STATE.findall(text):
            found.setdefault(word, None)
    found.pop(alert.alert_name, None)
    found.pop(alert.labels.get("alertname", ""), None)
    return tuple(found)


def _words_for_dense(text: str) -> str:
    """The dense model's word pieces make little of `OrderEventsConsumerBehind`; its words
    embed well. (BM25 keeps the exact token.)"""
    return _CAMEL.sub(lambda m: split_identifier(m.group(0)), text)


@dataclass(frozen=True)
class Query:
    #: For the dense model: what the alert says, then its name in words.
    dense_text: str
    #: For BM25: the exact alert-name token too, so a runbook listing it scores, and the
    #: metric names of the rule expression, exact and as words.
    sparse_text: str
    #: What the alert is about, for coverage (enricher.search.evidence): its prose, name
    #: and rule metrics as words, without the label values that say where it fired.
    content_text: str
    #: The rule's metric names and state literals as words: what spells a runbook's name.
    evidence_text: str
    #: The alert's name as words.
    name_text: str
    #: Everything the alert says, its where-labels included: what a runbook's name may be
    #: spelled from (enricher.search.evidence.name_recall).
    alert_text: str
    #: For the reader (enricher.search.reader): the name in words, then its service, prose,
    #: descriptive labels and the rule's metrics and states in words, where-labels out.
    reader_text: str
    alert_name: str
    alert_key: str
    #: The keys the exact-name tier looks for: the alert's key with and without a trailing
    #: "Alert", and the same for its name without its severity word (`severity_bare`).
    name_keys: tuple[str, ...]
    #: Candidate service keys, most specific first (see names.service_keys).
    service_keys: tuple[str, ...]


def _join(parts: Iterable[str | None]) -> str:
    seen: list[str] = []
    for part in parts:
        text = (part or "").strip()
        if text and text not in seen:
            seen.append(text)
    return ". ".join(seen)


def without_label_values(text: str, alert: Alert) -> str:
    """`text` with the values of the alert's *where* labels (pod, instance, namespace,
    cluster, node...) taken out.

    Annotations interpolate labels ("Pod payments/payout-worker-45bd7 is crash looping on
    cluster prod-eu-1"): those say where the alert fired, which no runbook is about, and
    their fragments (`prod`, `worker`, `pool`) match runbooks at random. The labels that
    say what failed (service, job, container...) stay, and so do state values
    (`reason="CrashLoopBackOff"`).
    """
    values = sorted(
        {
            v
            for k, v in alert.labels.items()
            if k not in _WHAT_LABELS and len(v) >= _MIN_STRIPPED_VALUE and not _STATE.fullmatch(v)
        },
        key=len,
        reverse=True,
    )
    for value in values:
        text = text.replace(value, " ")
    return " ".join(text.split())


def build_query(alert: Alert) -> Query:
    """The texts of one alert.

    PagerDuty titles without an identifier become the alert name as free text; they are
    used once, not repeated as "words". The dense text leads with the summary and
    description (on the golden dev split that ordering raised recall@1 by 3 points over
    leading with the name) and spells identifiers in it as words (docs/RETRIEVAL.md).
    The rule's metric names go to BM25 and to the names reading, not to the dense model:
    runbooks quote and are named after them, while to MiniLM
    `kafka_producer_record_error_total` is one more vague phrase.
    """
    name = alert.alert_name
    words = name if " " in name.strip() else split_identifier(name)
    summary = without_label_values(alert.summary, alert)
    description = without_label_values(alert.description, alert)
    labels = [
        value
        for key in DESCRIPTIVE_LABELS
        if (value := alert.labels.get(key)) and value != alert.service
    ]
    metric_words = [split_identifier(metric) for metric in alert.metrics]
    literal_words = [split_identifier(value) for value in states(alert)]
    return Query(
        dense_text=_words_for_dense(_join([summary, description, words, alert.service])),
        sparse_text=_join(
            [name, words, alert.service, summary, description, *labels, *alert.metrics,
             *metric_words, *literal_words]
        ),
        content_text=_join([summary, description, words, *metric_words, *literal_words]),
        evidence_text=" ".join([*metric_words, *literal_words]),
        name_text=words,
        alert_text=_join(
            [words, alert.service,
             *(v for k, v in alert.labels.items() if k not in _ROUTING_LABELS),
             alert.summary, alert.description, *metric_words, *literal_words]
        ),
        reader_text=_join(
            [words, alert.service, summary, description, *labels, *metric_words, *literal_words]
        ),
        alert_name=name,
        alert_key=name_key(name),
        name_keys=tuple(
            dict.fromkeys(
                form
                for key in (name_key(name), name_key(severity_bare(name, alert.severity)))
                for form in alert_key_forms(key)
            )
        ),
        service_keys=service_keys(alert.service) if alert.service else (),
    )
