"""One verdict per alerting rule: does it have a runbook, and which. Pure.

A rule is searched as the page it would make: it becomes the Alertmanager notification its
alert would send (labels, annotations, and the expression in `generatorURL`), parsed by the
webhook's own parser, so the query, the metric names and the decision are the page's own.
The verdict reads the search result:

- `linked`: its `runbook_url` opens an indexed runbook: the link the page makes for that
  runbook (`page_link`), or a Confluence link to that page in another of its forms;
- `broken`: its `runbook_url` opens nothing indexed: it names no runbook, or only one of that
  name in another folder (the page would find it, but the rule's link 404s); the best match
  is given, marked confident or not;
- `matched`: no `runbook_url`, and the search is confident: the runbook and its probability;
- `missing`: no runbook: the closest leads, none confident;
- `unavailable`: the index could not be searched.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote, unquote, urlencode, urlsplit

from enricher.alert import Alert
from enricher.audit.rules import Rule
from enricher.result import Match, SearchResult
from enricher.search.links import confluence_page
from enricher.sources.alertmanager import normalize_group, one_alert_body, parse_alertmanager

__all__ = [
    "KINDS", "Kind", "Runbook", "Verdict", "as_alert", "judge", "notification", "opens",
    "page_link",
]

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


def page_link(match: Match, base_url: str | None) -> str | None:
    """Where a page links the runbook (enricher.slack.cards): its own URL, made at ingest
    (ingest.weblink), else RUNBOOK_BASE_URL/<path>."""
    if match.url:
        return match.url
    if base_url and match.path:
        return base_url.rstrip("/") + "/" + quote(match.path, safe="/")
    return None


def opens(url: str, match: Match, base_url: str | None) -> bool:
    """`url` opens `match`: it is the page's link to it (the section's `#anchor`, a query
    and a trailing slash aside; the host's case too), or a Confluence link to its page in
    any of its forms. A runbook no link is known for (a local folder, no RUNBOOK_BASE_URL)
    is opened by a URL whose path ends with the runbook's whole path (case and `.md` aside,
    as the page's search reads it), never by its name alone in another folder."""
    if (page := confluence_page(url)) is not None:
        return page == match.doc_id
    link = page_link(match, base_url)
    if link is None:  # the searcher's path rule, on the whole path
        tail = "/" + match.path.lower().removesuffix(".md")
        return unquote(_plain(url)[1]).lower().removesuffix(".md").endswith(tail)
    return _plain(url) == _plain(link)


def _plain(url: str) -> tuple[str, str]:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "", ""
    return parts.netloc.lower(), quote(unquote(parts.path), safe="/").rstrip("/")


def judge(rule: Rule, result: SearchResult, base_url: str | None = None) -> Verdict:
    """The rule's verdict from its page's search result; `base_url` is RUNBOOK_BASE_URL."""
    if result.status == "unavailable":
        return Verdict(rule, "unavailable")
    leads = tuple(_runbook(lead, confident=False) for lead in result.leads)
    best = _runbook(result.matches[0], confident=True) if result.matches else None
    if (
        rule.runbook_url
        and result.tier == "runbook_url"
        and best is not None
        and opens(rule.runbook_url, result.matches[0], base_url)
    ):
        return Verdict(rule, "linked", best)
    if rule.runbook_url:
        return Verdict(rule, "broken", best or (leads[0] if leads else None), leads)
    if best is not None:
        return Verdict(rule, "matched", best)
    return Verdict(rule, "missing", None, leads)
