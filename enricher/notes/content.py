"""A search result as a PagerDuty note: plain text, short enough to read on a phone.

    Runbook: Kafka consumer lag › Mitigation
    https://git.example.com/ops/runbooks/blob/main/kafka/KafkaConsumerLagHigh.md#mitigation
    Match 83%
    First steps:
    1. Check the consumer group's lag per partition …
    — runbook-enricher · ref 3f2a9c1b7d4e

PagerDuty documents no maximum for a note's content that we could find; NOTE_MAX (2,000
characters) is our own bound, well under what PagerDuty's UI and mobile app show without
scrolling a long way. Every field is cut to its share before it is scanned (STYLE §13),
secrets are redacted (enricher.slack.text.scrub), and the `ref` line is how a retry after a
crash finds the note it may already have added (enricher.pipeline.notes).
"""

from __future__ import annotations

import math
from typing import Literal
from urllib.parse import quote

from enricher.result import Match, SearchResult
from enricher.slack.text import is_http_url, scan_window, scrub

NotesMode = Literal["matched", "all", "off"]

NOTE_MAX = 2000
TITLE_MAX = 200
URL_MAX = 500
STEPS_MAX = 1200
STEP_LINES = 12
LEADS_SHOWN = 3
SIGNATURE = "— runbook-enricher · ref "


def _clean(text: str, limit: int) -> str:
    """At most `limit` characters of one line of untrusted text, redacted."""
    window, lost = scan_window(text, limit)
    out = " ".join(scrub(window).split())
    if len(out) > limit or lost:
        out = out[: max(limit - 1, 0)].rstrip() + "…"
    return out


def score_percent(score: float) -> int:
    return round(min(max(score, 0.0), 1.0) * 100) if math.isfinite(score) else 0


def runbook_link(match: Match, base_url: str | None, anchor: str) -> str | None:
    """Where the runbook is read: its own link, else RUNBOOK_BASE_URL/<path>, at `anchor`;
    None when neither is an http(s) address or the result is longer than URL_MAX."""
    if match.url and is_http_url(match.url[: URL_MAX + 1]):
        url = match.url
    elif base_url and is_http_url(base_url) and match.path:
        url = base_url.rstrip("/") + "/" + quote(match.path[:URL_MAX], safe="/")
    else:
        return None
    if anchor:
        url += "#" + quote(anchor[:URL_MAX], safe="")
    return url if len(url) <= URL_MAX else None


def _heading(match: Match, section: str) -> str:
    title = _clean(match.title or match.path or "runbook", TITLE_MAX)
    section = _clean(section, TITLE_MAX)
    return f"{title} › {section}" if section else title


def _steps(text: str) -> list[str]:
    """The first lines of a section as plain text: blank lines and code fences dropped."""
    window, lost = scan_window(text, STEPS_MAX)
    lines = [" ".join(line.split()) for line in scrub(window).splitlines()]
    kept = [line for line in lines if line and not line.startswith("```")][:STEP_LINES]
    out: list[str] = []
    room = STEPS_MAX
    for line in kept:
        if len(line) + 1 > room:
            if room > 20:
                out.append(line[: room - 2].rstrip() + "…")
            break
        out.append(line)
        room -= len(line) + 1
    if lost and out and not out[-1].endswith("…"):
        out.append("…")
    return out


def _matched(match: Match, base_url: str | None) -> list[str]:
    lines = [f"Runbook: {_heading(match, match.section)}"]
    link = runbook_link(match, base_url, match.anchor)
    if link:
        lines.append(link)
    lines.append(f"Match {score_percent(match.score)}%")
    if match.actionable:
        steps = _steps(match.text)
    elif match.steps is not None:
        steps = _steps(match.steps.text)
        lines.append(f"First steps ({_clean(match.steps.section, TITLE_MAX)}):")
    else:
        steps = []
    if steps and match.actionable:
        lines.append("First steps:")
    if steps:
        lines.extend(steps)
    elif match.no_steps:
        lines.append("This runbook says nothing about what to do: read it whole.")
    return lines


def _leads(result: SearchResult, base_url: str | None) -> list[str]:
    lines = ["No confident runbook match. Closest leads, unconfirmed:"]
    for lead in result.leads[:LEADS_SHOWN]:
        link = runbook_link(lead, base_url, lead.anchor)
        entry = f"• {_heading(lead, lead.section)} (match {score_percent(lead.score)}%)"
        lines.append(entry + (f" {link}" if link else ""))
    return lines


def render_note(
    result: SearchResult, *, mode: NotesMode, base_url: str | None, ref: str
) -> str | None:
    """The note for this result under PAGERDUTY_NOTES, None when none is owed: `off`; no
    match under `matched`; search unavailable; no match and no leads to name."""
    if mode == "off" or result.status == "unavailable":
        return None
    if result.status == "matched" and result.matches:
        lines = _matched(result.matches[0], base_url)
    elif mode == "all" and result.leads:
        lines = _leads(result, base_url)
    else:
        return None
    signature = SIGNATURE + ref
    body = "\n".join(lines)
    room = NOTE_MAX - len(signature) - 1
    if len(body) > room:
        body = body[: room - 1].rstrip() + "…"
    return f"{body}\n{signature}"
