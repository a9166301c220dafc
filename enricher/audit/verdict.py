"""One verdict per alerting rule: does it have a runbook, and which. Pure.

A rule is searched as the page it would make: it becomes the Alertmanager notification its
alert would send (labels, annotations, and the expression in `generatorURL`), parsed by the
webhook's own parser, so the query, the metric names and the decision are the page's own.
The verdict reads the search result:

- `linked`: its `runbook_url` names an indexed runbook;
- `broken`: its `runbook_url` names nothing indexed; the best match is given, marked
  confident or not;
- `matched`: no `runbook_url`, and the search is confident: the runbook and its probability;
- `missing`: no runbook: the closest leads, none confident;
- `unavailable`: the index could not be searched.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlencode

from enricher.alert import Alert
from enricher.audit.rules import Rule
from enricher.result import Match, SearchResult
from enricher.sources.alertmanager import normalize_group, one_alert_body, parse_alertmanager

__all__ = ["KINDS", "Kind", "Runbook", "Verdict", "as_alert", "judge", "notification"]

Kind = Literal["linked", "broken", "matched", "missing", "unavailable"]
KINDS: tuple[Kind, ...] = ("linked", "broken", "matched", "missing", "unavailable")
#: What a page can show of an annotation; templates are read after the cut, so bounded.
MAX_ANNOTATION_CHARS = 3000
_TEMPLATE = re.compile(r"\{\{[^{}]{0,500}\}\}")


@dataclass(frozen=True)
class Runbook:
    doc_id: str
    path: str
    title: str
    probability: float
    #: Clears the bar the page uses (a lead does not).
    confident: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "path": self.path,
            "title": self.title,
            "probability": self.probability,
            "confident": self.confident,
        }


@dataclass(frozen=True)
class Verdict:
    rule: Rule
    kind: Kind
    #: linked / matched: the runbook; broken: the best match, if any.
    runbook: Runbook | None = None
    #: missing (and broken without a confident match): the closest runbooks, not confident.
    leads: tuple[Runbook, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.rule.file,
            "group": self.rule.group,
            "alert": self.rule.name,
            "verdict": self.kind,
            "runbook_url": self.rule.runbook_url,
            "runbook": self.runbook.to_json() if self.runbook else None,
            "leads": [lead.to_json() for lead in self.leads],
        }


def _filled(text: str) -> str:
    """An annotation as a page would read it: template actions (`{{ $labels.pod }}`) have no
    value before the alert fires, so they are dropped."""
    return " ".join(_TEMPLATE.sub(" ", text[:MAX_ANNOTATION_CHARS]).split())


def notification(rule: Rule) -> dict[str, Any]:
    """The Alertmanager v4 body the rule's alert would arrive in."""
    annotations = {key: _filled(value) for key, value in rule.annotations.items()}
    if rule.runbook_url:  # a link is kept whole: it is matched, not read as words
        annotations["runbook_url"] = rule.runbook_url
    return one_alert_body(
        {**rule.labels, "alertname": rule.name},
        annotations,
        group_key=f"audit:{rule.file}:{rule.group}:{rule.name}",
        receiver="audit",
        starts_at="2000-01-01T00:00:00Z",
        generator_url="http://prometheus/graph?"
        + urlencode({"g0.expr": rule.expr, "g0.tab": "1"}),
        fingerprint="",
    )


def as_alert(rule: Rule) -> Alert:
    """The `Alert` a page of this rule would be searched with (the webhook's parser)."""
    return normalize_group(parse_alertmanager(json.dumps(notification(rule)).encode()))


def _runbook(match: Match, confident: bool) -> Runbook:
    return Runbook(match.doc_id, match.path, match.title, match.score, confident)


def judge(rule: Rule, result: SearchResult) -> Verdict:
    if result.status == "unavailable":
        return Verdict(rule, "unavailable")
    leads = tuple(_runbook(lead, confident=False) for lead in result.leads)
    best = _runbook(result.matches[0], confident=True) if result.matches else None
    if rule.runbook_url and result.tier == "runbook_url" and best is not None:
        return Verdict(rule, "linked", best)
    if rule.runbook_url:
        return Verdict(rule, "broken", best or (leads[0] if leads else None), leads)
    if best is not None:
        return Verdict(rule, "matched", best)
    return Verdict(rule, "missing", None, leads)
