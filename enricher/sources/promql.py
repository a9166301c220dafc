"""Metric names from an alert's rule expression and from runbook text: evidence for the
search. Pure.

Alertmanager's `generatorURL` links to the rule in Prometheus, with the rule's PromQL in
the `g0.expr` query parameter. Runbooks quote the metrics their alert is built on
(`kafka_producer_record_error_total`), so those names point at the right runbook even when
the alert was renamed or its annotations say little. Only the names are kept: functions,
label matchers, ranges, `by (...)` lists and numbers say nothing about which runbook
applies. This is a reader of names, not a PromQL parser: an expression it cannot make
sense of yields fewer names, never an error.

On the runbook side, `quoted_names` lists the identifiers in a chunk that are shaped like
metric names, so the search can tell which runbooks quote the metrics of an alert's rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qs, urlsplit

#: Longer expressions are cut before reading: a rule of this size is rare, and reading
#: stays cheap whatever a sender puts in the URL.
MAX_EXPRESSION_CHARS = 4096
#: Names kept per alert group: enough for `a / b` rules over a group of several rules.
MAX_NAMES = 8

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGES = re.compile(r"\[[^\[\]]*\]")
_LABEL_LISTS = re.compile(
    r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", re.IGNORECASE
)
#: 0.9, 86400, 1e3, 0x1F and durations such as 5m or 1w (`offset 1w` is not a metric `w`).
_NUMBERS = re.compile(r"\b\d[\w.]*")
_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_KEYWORDS = frozenset(
    {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring"}
    | {"group_left", "group_right", "inf", "nan", "atan2"}
)
#: Identifiers kept per runbook chunk; a chunk quoting more is a reference table, not a runbook.
MAX_QUOTED_NAMES = 128
#: Prometheus's own series about alerts: `ALERTS{alertname="X"}` names no metric of ours.
_META = frozenset({"ALERTS", "ALERTS_FOR_STATE"})


def expression(generator_url: str) -> str:
    """The PromQL of the rule behind an alert, or "" when the URL carries none."""
    try:
        query = urlsplit(generator_url).query
    except ValueError:  # e.g. a malformed IPv6 host: no expression to read
        return ""
    values = parse_qs(query).get("g0.expr", [])
    return values[0] if values else ""


def metric_names(expr: str) -> tuple[str, ...]:
    """Metric (and recording-rule) names in `expr`, in order of first appearance."""
    text = expr[:MAX_EXPRESSION_CHARS]
    for pattern in (_STRINGS, _MATCHERS, _RANGES, _LABEL_LISTS, _NUMBERS):
        text = pattern.sub(" ", text)
    names: list[str] = []
    for match in _NAME.finditer(text):
        name = match.group(0)
        is_call = text[match.end() :].lstrip().startswith("(")
        if is_call or name.lower() in _KEYWORDS or name in _META or name in names:
            continue
        names.append(name)
    return tuple(names)


#: A label matcher's literal value: `reason="CrashLoopBackOff"` (regex matchers are skipped).
_LITERAL = re.compile(r'[A-Za-z_][A-Za-z0-9_]*\s*(?:=|!=)\s*"([A-Za-z][A-Za-z0-9]*)"')


def state_literals(expr: str) -> tuple[str, ...]:
    """Capitalised literal values of the rule's label matchers, first seen first.

    Kubernetes and most exporters spell states and reasons as capitalised enums
    (`CrashLoopBackOff`, `OOMKilled`, `Failed`), while lower-case values name *where*
    (a job, a namespace). A state is what the alert is about, so it is evidence.
    """
    found: dict[str, None] = {}
    for value in _LITERAL.findall(expr[:MAX_EXPRESSION_CHARS]):
        if any(ch.isupper() for ch in value):
            found.setdefault(value, None)
    return tuple(found)


def group_metric_names(generator_urls: Iterable[str]) -> tuple[str, ...]:
    """The metric names of every alert's rule in a group, first seen first, at most MAX_NAMES."""
    names: list[str] = []
    for url in dict.fromkeys(generator_urls):  # alerts of one rule share the URL
        new = [n for n in metric_names(expression(url)) if n not in names]
        names.extend(new)
        if len(names) >= MAX_NAMES:
            break
    return tuple(names[:MAX_NAMES])


def quoted_names(text: str) -> tuple[str, ...]:
    """Identifiers in runbook text that may be metric or recording-rule names, first seen first.

    Only identifiers with an underscore count: Prometheus's naming conventions give every
    real metric one (`redis_up`, `job:http_errors:rate5m`), and plain words never match an
    alert's metric anyway. Label values and function names slip in; they cost a few bytes of
    payload and can only match a metric name that is spelled the same.
    """
    names: dict[str, None] = {}
    for match in _NAME.finditer(text):
        name = match.group(0).strip(":")
        if "_" in name.strip("_"):
            names.setdefault(name, None)
            if len(names) >= MAX_QUOTED_NAMES:
                break
    return tuple(names)
