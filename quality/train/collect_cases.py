"""Cases for one training corpus, in the format of the released slices' cases.jsonl.

Per (rule, runbook) pair: the alert under its own name (Alertmanager, and for one pair in
five a PagerDuty incident too), the same rule under a team's own name (`paraphrase`), and
renamed with its annotations reworded (`paraphrase_rewritten`, one in five by PagerDuty).
Near misses are the project's rules whose runbook is left out of the corpus or never
existed; noise is out-of-domain alerts (scripts.corpus_gen.noise). Every id, label value
and timestamp comes from a digest of the corpus and alert: the same input gives the same
bytes. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from enricher.audit.rules import Rule
from enricher.sources.promql import metric_names
from quality.train.rename import renamed, reworded_description, reworded_summary, team_of
from scripts.corpus_gen.noise import NOISE, NOISE_SLOTS
from scripts.corpus_gen.payloads import alertmanager_body, digest

__all__ = ["Positive", "corpus_cases"]

EPOCH = datetime(2026, 11, 2, 0, 0, 0)
PAGERDUTY = "https://acme.pagerduty.com"
NOISE_CASES = 8
_TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_LABEL_REF = re.compile(r"\$labels\.(\w+)|index \$labels \"(\w+)\"")
#: `key="value"` matchers of a rule's selectors, and the labels an aggregation keeps.
_MATCHER = re.compile(r'\b([a-zA-Z_]\w*)\s*=\s*"([^"{}]*)"')
_KEPT_BY = re.compile(r"\b(?:by|on)\s*\(([^)]*)\)", re.IGNORECASE)
_AGGREGATED = re.compile(r"\b(?:by|without|on|ignoring)\s*\(|\b(?:sum|count|avg|max|min)\s*\(")
_NOT_CARRIED = frozenset({"__name__", "le", "quantile", "job", "instance"})
_CLUSTERS = ("prod-eu-west-1", "prod-us-east-2", "staging-eu-central-1", "prod-ap-south-1")
_RECEIVERS = ("Default", "Critical", "oncall-primary", "slack-platform-oncall")


@dataclass(frozen=True)
class Positive:
    rule: Rule
    doc: str
    section: str | None
    service: str


def _pick(options: Sequence[str], *parts: object) -> str:
    return options[int(digest(*parts), 16) % len(options)]


def _labels(rule: Rule, service: str, salt: str) -> dict[str, str]:
    """The firing alert's labels: the rule's own, what the scrape adds (the job named like
    the prefix of the first metric the rule reads, `redis_up` -> `redis`), what its
    selectors' exact matchers carry through, and a value for each label its annotations
    name (`{{ $labels.volume }}` -> `volume: volume-3`)."""
    host = int(digest("host", salt, rule.name), 16)
    metrics = metric_names(rule.expr)
    labels = {
        "instance": f"10.{host % 200 + 20}.{host // 200 % 250}.{host // 50000 % 250}:9100",
        "job": metrics[0].split("_", 1)[0] if metrics else service,
        "cluster": _pick(_CLUSTERS, "cluster", salt, rule.name),
        "severity": "warning",
    }
    labels.update(_matched_labels(rule.expr))
    for note in rule.annotations.values():
        for found in _LABEL_REF.finditer(note):
            name = found.group(1) or found.group(2)
            number = int(digest("label", salt, rule.name, name), 16) % 9 + 1
            labels.setdefault(name, f"{name.replace('_', '-')}-{number}")
    labels.update({k: v for k, v in rule.labels.items() if "{{" not in v and v})
    return dict(sorted(labels.items()))


def _matched_labels(expr: str) -> dict[str, str]:
    """The labels the rule's exact matchers give its alerts: all of them when the expression
    does not aggregate, else those an aggregation keeps (`by (...)`, `on (...)`)."""
    kept = {k.strip() for found in _KEPT_BY.findall(expr) for k in found.split(",")}
    aggregated = bool(_AGGREGATED.search(expr))
    out: dict[str, str] = {}
    for key, value in _MATCHER.findall(expr):
        if key not in _NOT_CARRIED and value and (not aggregated or key in kept):
            out.setdefault(key, value)
    return out


def _render(text: str, labels: Mapping[str, str], salt: str) -> str:
    """An annotation as Prometheus fills it when the alert fires."""

    def fill(found: re.Match[str]) -> str:
        inner = found.group(1)
        if ref := _LABEL_REF.search(inner):
            return labels.get(ref.group(1) or ref.group(2), "unknown")
        if "$value" in inner:
            number = int(digest("value", salt, text), 16) % 9000 / 100 + 1
            return f"{number:.2f}"
        return ""

    return " ".join(_TEMPLATE.sub(fill, text).split())


def _annotations(rule: Rule, labels: Mapping[str, str], salt: str) -> dict[str, str]:
    notes = rule.annotations
    summary = notes.get("summary") or notes.get("title") or notes.get("message") or ""
    description = notes.get("description") or notes.get("message") or summary
    return {
        "description": _render(description, labels, salt),
        "summary": _render(summary, labels, salt),
    }


def _am(case_id: str, labels: dict[str, str], notes: dict[str, str], expr: str) -> dict[str, Any]:
    starts = EPOCH + timedelta(seconds=int(digest("at", case_id), 16) % (20 * 86400))
    receiver = _pick(_RECEIVERS, "receiver", case_id)
    return alertmanager_body([labels], notes, expr, starts, ("alertname",), receiver)


def _pd(
    case_id: str, labels: Mapping[str, str], notes: Mapping[str, str], service: str
) -> dict[str, Any]:
    """A PagerDuty v3 `incident.triggered` event titled `<alertname>: <summary>`, the
    shape of the released slices' PagerDuty cases."""
    incident = "Q" + digest("incident", case_id)[:6].upper()
    occurred = EPOCH + timedelta(seconds=int(digest("at", case_id), 16) % (20 * 86400))
    when = occurred.strftime("%Y-%m-%dT%H:%M:%SZ")
    service_id = "P" + digest("service", service)[:6].upper()
    title = f"{labels['alertname']}: {notes['summary']}".rstrip(": ")
    return {
        "event": {
            "id": "01" + digest("event", case_id)[:24].upper(),
            "event_type": "incident.triggered",
            "resource_type": "incident",
            "occurred_at": when,
            "agent": None,
            "client": None,
            "data": {
                "id": incident,
                "type": "incident",
                "self": f"https://api.pagerduty.com/incidents/{incident}",
                "html_url": f"{PAGERDUTY}/incidents/{incident}",
                "number": 1000 + int(digest("number", case_id), 16) % 9000,
                "status": "triggered",
                "incident_key": digest("key", case_id)[:32],
                "created_at": when,
                "title": title,
                "service": {
                    "id": service_id,
                    "type": "service_reference",
                    "summary": service,
                    "self": f"https://api.pagerduty.com/services/{service_id}",
                    "html_url": f"{PAGERDUTY}/service-directory/{service_id}",
                },
                "assignees": [],
                "escalation_policy": None,
                "teams": [],
                "priority": None,
                "urgency": "high" if labels.get("severity") == "critical" else "low",
                "conference_bridge": None,
                "resolve_reason": None,
            },
        }
    }


def _case(
    corpus: str,
    kind: str,
    channel: str,
    rule: Rule,
    service: str,
    name: str,
    rewrite: bool,
    expected: tuple[str, str | None] | None,
) -> dict[str, Any]:
    case_id = "c" + digest(corpus, kind, channel, rule.name, name, rule.expr)[:11]
    labels = {**_labels(rule, service, corpus), "alertname": name}
    notes = _annotations(rule, labels, corpus)
    if rewrite:
        team = team_of(rule.name, corpus)
        notes = {
            "description": f"{reworded_description(notes['description'])} Paged to {team} on-call.",
            "summary": reworded_summary(notes["summary"]),
        }
    payload = (
        _pd(case_id, labels, notes, f"{team_of(rule.name, corpus)} - {service}")
        if channel == "pagerduty"
        else _am(case_id, labels, notes, rule.expr)
    )
    case: dict[str, Any] = {
        "id": case_id,
        "kind": kind,
        "split": "dev",
        "channel": channel,
        "payload": payload,
        "expected_doc": expected[0] if expected else None,
    }
    if expected and expected[1]:
        case["expected_section"] = expected[1]
    return case


def corpus_cases(
    corpus: str,
    positives: Sequence[Positive],
    misses: Sequence[tuple[Rule, str]],
    prefixes: frozenset[str],
) -> list[dict[str, Any]]:
    """Every case of one corpus, in a stable order (kind, then the pairs' order)."""
    out: list[dict[str, Any]] = []
    for p in positives:
        target = (p.doc, p.section)
        pd = int(digest("pd", corpus, p.rule.name), 16) % 5 == 0
        team_name = renamed(p.rule.name, prefixes, corpus)
        out.append(
            _case(
                corpus, "exact_name", "alertmanager", p.rule, p.service, p.rule.name, False, target
            )
        )
        if pd:
            out.append(
                _case(
                    corpus, "exact_name", "pagerduty", p.rule, p.service, p.rule.name, False, target
                )
            )
        out.append(
            _case(corpus, "paraphrase", "alertmanager", p.rule, p.service, team_name, False, target)
        )
        out.append(
            _case(
                corpus,
                "paraphrase_rewritten",
                "pagerduty" if pd else "alertmanager",
                p.rule,
                p.service,
                team_name,
                True,
                target,
            )
        )
    for rule, service in misses:
        out.append(
            _case(corpus, "near_miss", "alertmanager", rule, service, rule.name, False, None)
        )
    for number in range(NOISE_CASES):
        alert = NOISE[int(digest("noise", corpus, number), 16) % len(NOISE)]
        slots = {k: _pick(v, "slot", corpus, number, k) for k, v in NOISE_SLOTS.items()}
        rule = Rule(
            alert.name,
            alert.expr.format(**slots),
            {"severity": "warning"},
            {
                "summary": alert.summary.format(**slots),
                "description": alert.description.format(**slots),
            },
            "",
            "",
        )
        channel = "pagerduty" if number % 4 == 3 else "alertmanager"
        out.append(_case(corpus, "noise", channel, rule, alert.service, alert.name, False, None))
    return out
