"""Alert + search result to a Slack Block Kit message (pure; no I/O).

Every untrusted string (alert fields, labels, runbook titles, paths, text) goes
through `slack_text` (`safe`, `safe_line`, `trim_markdown`, `truncate_plain`).

Slack limits are enforced here, not hoped for (DESIGN §2): 50 blocks, 3000
chars a section, 150 a header, 10 context elements, and the whole `blocks`
array at most `BLOCKS_JSON_MAX` characters of `json.dumps(blocks)` (default
`ensure_ascii`, so non-ASCII text is counted as its `\\uXXXX` escapes: stricter
than Slack's ~13k characters, never looser). How a message is fitted:

1. Each match's runbook text gets an even share of what the fixed parts leave,
   at most `MATCH_TEXT_MAX` characters.
2. While the serialized blocks are too long: shrink the match texts gently
   (to `MATCH_TEXT_FLOOR`, which absorbs JSON escaping overhead), then drop the
   lowest-ranked match, then shrink the remaining texts to nothing, then the
   alert description, then compact labels and titles, and finally fall back to
   header + summary, which fits by construction.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import quote

from slack_sdk.models.blocks import (
    Block,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from enricher.alert import Alert
from enricher.result import Match, SearchResult
from enricher.slack.text import (
    cut,
    is_http_url,
    link,
    safe,
    safe_line,
    trim_markdown,
    truncate_plain,
)

__all__ = [
    "BLOCKS_JSON_MAX",
    "NO_MATCH_TEXT",
    "UNAVAILABLE_TEXT",
    "SlackMessage",
    "blocks_json_size",
    "render_message",
    "render_resolved_update",
    "render_thread_reply",
]

MAX_BLOCKS = 50
SECTION_MAX = 3000
HEADER_MAX = 150
CONTEXT_MAX_ELEMENTS = 10
BLOCKS_JSON_MAX = 12_000
FALLBACK_MAX = 3000
MAX_MATCHES = 3
MATCH_TEXT_MAX = 2500
MATCH_TEXT_FLOOR = 800
DESCRIPTION_MAX = 1200
SUMMARY_MAX = 300

#: Labels worth a glance, in display order; service and severity come from the Alert.
KEY_LABELS = (
    "namespace",
    "cluster",
    "env",
    "environment",
    "region",
    "instance",
    "pod",
    "job",
    "container",
    "deployment",
)
SOURCE_NAMES = {"alertmanager": "Alertmanager", "pagerduty": "PagerDuty"}

NO_MATCH_TEXT = "🔍 No confident runbook match for this alert."
LEADS_TEXT = "Closest runbooks, *below the confidence bar*: check they fit before following them."
UNAVAILABLE_TEXT = (
    "⚠️ Runbook search is unavailable right now — this page was sent without runbook context."
)

Blocks = list[dict[str, Any]]
Phase = Literal["firing", "resolved"]


@dataclass(frozen=True)
class SlackMessage:
    """What chat.postMessage / chat.update get: `text` is the notification fallback."""

    text: str
    blocks: Blocks

    def to_kwargs(self) -> dict[str, Any]:
        return {"text": self.text, "blocks": self.blocks}


@dataclass(frozen=True)
class _Budget:
    match_text: int
    description: int = DESCRIPTION_MAX
    compact: bool = False


def blocks_json_size(blocks: Blocks) -> int:
    """The size the total-length limit is checked against."""
    return len(json.dumps(blocks))


def _fits(blocks: Blocks) -> bool:
    return len(blocks) <= MAX_BLOCKS and blocks_json_size(blocks) <= BLOCKS_JSON_MAX


# --- small pieces ------------------------------------------------------------------


def _utc(now: datetime | None) -> datetime:
    now = now or datetime.now(UTC)
    return now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)


def _header(alert: Alert, phase: Phase) -> Block:
    status = "🔥 FIRING" if phase == "firing" else "✅ RESOLVED"
    parts = [status, alert.alert_name or "alert"]
    if alert.severity:
        parts.append(alert.severity)
    text = truncate_plain(" · ".join(parts), HEADER_MAX)
    return HeaderBlock(text=PlainTextObject(text=text, emoji=True))


def _mrkdwn(text: str) -> MarkdownTextObject:
    return MarkdownTextObject(text=text)


def _section(text: str) -> Block:
    return SectionBlock(text=_mrkdwn(cut(text, SECTION_MAX)))


def _context(elements: list[str]) -> Block:
    return ContextBlock(elements=[_mrkdwn(e) for e in elements[:CONTEXT_MAX_ELEMENTS]])


def _summary(alert: Alert, budget: _Budget, *, with_description: bool) -> Block:
    limit = 150 if budget.compact else SUMMARY_MAX
    lines = [f"*{safe_line(alert.summary or alert.alert_name or 'alert', limit)}*"]
    group: list[str] = []
    if alert.alert_count > 1:
        group.append(f"{alert.alert_count} alerts in this group")
    if alert.truncated > 0:
        group.append(f"({alert.truncated} not shown by Alertmanager)")
    if group:
        lines.append("_" + " ".join(group) + "_")
    if with_description and budget.description > 0 and alert.description.strip():
        lines.append(trim_markdown(alert.description, budget.description))
    return _section("\n".join(line for line in lines if line))


def _alert_context(alert: Alert, budget: _Budget, extra: list[str]) -> Block:
    source = SOURCE_NAMES.get(alert.source, alert.source)
    first = f"*{safe_line(source, 40)}*"
    if alert.link and is_http_url(alert.link):
        first += " · " + link(alert.link, "open alert")
    elements = [first, *extra]
    labels: list[tuple[str, str]] = []
    service = alert.service or alert.labels.get("service")
    if service:
        labels.append(("service", service))
    if alert.severity:
        labels.append(("severity", alert.severity))
    labels += [(k, alert.labels[k]) for k in KEY_LABELS if alert.labels.get(k)]
    max_labels = 4 if budget.compact else CONTEXT_MAX_ELEMENTS
    width = 40 if budget.compact else 100
    for key, value in labels[:max_labels]:
        elements.append(f"*{key}:* {safe_line(value, width)}")
    return _context(elements)


def _runbook_url_section(url: str) -> Block:
    target = link(url, url) if is_http_url(url) and len(url) <= 1000 else safe_line(url, 500)
    return _section(f"📘 Runbook linked by the alert: {target}")


def _match_url(base: str | None, match: Match) -> str | None:
    if not base or not is_http_url(base) or not match.path:
        return None
    url = base.rstrip("/") + "/" + quote(match.path, safe="/")
    if match.anchor:
        url += "#" + quote(match.anchor, safe="")
    return url if len(url) <= 1000 else None


def _score_text(match: Match) -> str:
    score = match.score
    readable = round(min(max(score, 0.0), 1.0) * 100) if math.isfinite(score) else 0
    return f"match {readable}%"


def _heading(match: Match, base: str | None, width: int) -> str:
    """`*Title › Section*`, the title linked to the runbook when a base URL is set."""
    title = " ".join((match.title or match.path or "runbook").split())
    url = _match_url(base, match)
    heading = link(url, title) if url else safe_line(title, width)
    if url and len(title) > width:
        heading = link(url, title[: width - 1] + "…")
    if match.section:
        heading += " › " + safe_line(match.section, width)
    return f"*{heading}*"


def _path_line(match: Match, width: int) -> str | None:
    path = match.path.replace("`", "")
    return f"📄 `{safe_line(path, width)}`" if path.strip() else None


def _match_blocks(match: Match, base: str | None, budget: _Budget) -> list[Block]:
    width = 60 if budget.compact else 150
    heading = _heading(match, base, width)
    room = min(budget.match_text, SECTION_MAX - len(heading) - 1)
    body = trim_markdown(match.text, room) if room > 0 else ""
    meta: list[str] = []
    if path := _path_line(match, width):
        meta.append(path)
    if match.source:
        meta.append(f"source: {safe_line(match.source, 40)}")
    if match.revision:
        meta.append(f"rev {safe_line(match.revision[:8], 8)}")
    meta.append(_score_text(match))
    if match.quoted_metrics:
        # Names from the rule's PromQL: letters, digits, "_" and ":" only.
        quoted = ", ".join(f"`{safe_line(m, 80)}`" for m in match.quoted_metrics[:2])
        meta.append(f"📈 the only runbook quoting {quoted} from the alert rule")
    if match.stale:
        days = "day" if match.age_days == 1 else "days"
        meta.append(f"⚠️ stale: last reviewed {match.age_days} {days} ago")
    return [_section(heading + ("\n" + body if body else "")), _context(meta)]


def _status_blocks(
    alert: Alert, result: SearchResult, matches: list[Match], base: str | None, budget: _Budget
) -> list[Block]:
    blocks: list[Block] = []
    if matches:
        for match in matches:
            blocks.append(DividerBlock())
            blocks += _match_blocks(match, base, budget)
        return blocks
    blocks.append(DividerBlock())
    if result.status == "unavailable":
        note = UNAVAILABLE_TEXT
        if result.reason:
            note += f"\n_Reason: {safe_line(result.reason, 200)}_"
        blocks.append(_section(note))
        return blocks
    service = safe_line(alert.service or "<service>", 80)
    name = safe_line(alert.alert_name or "<alert_name>", 120)
    hint = (
        f"_Add one at `{service}/{name}.md` in the runbook repository"
        " (or list this alert in a runbook's `alert_names`)"
        " so the next page comes with context._"
    )
    blocks.append(_section(NO_MATCH_TEXT))
    if result.leads:
        blocks.append(_section(_leads_text(result.leads, base, budget)))
    blocks.append(_section(hint))
    return blocks


def _leads_text(leads: Sequence[Match], base: str | None, budget: _Budget) -> str:
    """Closest runbooks on a no-match page: named, scored and plainly not vouched for.

    Whole lines only, as many as fit one section: a cut would break a link's markup.
    """
    width = 60 if budget.compact else 120
    text = LEADS_TEXT
    for match in leads[:MAX_MATCHES]:
        parts = [_heading(match, base, width), _path_line(match, width), _score_text(match)]
        line = "• " + " · ".join(p for p in parts if p)
        if len(text) + 1 + len(line) > SECTION_MAX:
            break
        text += "\n" + line
    return text


def _fallback(alert: Alert, phase: Phase, tail: str) -> str:
    status = "🔥 FIRING" if phase == "firing" else "✅ RESOLVED"
    severity = f" ({alert.severity})" if alert.severity else ""
    text = f"{status}: {alert.alert_name}{severity} — {alert.summary}".rstrip(" —")
    return cut(safe(" ".join(text.split())) + tail, FALLBACK_MAX)


def _dicts(blocks: list[Block]) -> Blocks:
    return [b.to_dict() for b in blocks]


# --- firing ------------------------------------------------------------------------


def _compose(
    alert: Alert, result: SearchResult, matches: list[Match], base: str | None, budget: _Budget
) -> Blocks:
    since = [f"🕒 since {_utc(alert.starts_at):%H:%M} UTC"] if alert.starts_at else []
    blocks: list[Block] = [
        _header(alert, "firing"),
        _summary(alert, budget, with_description=True),
        _alert_context(alert, budget, since),
    ]
    if alert.runbook_url:
        blocks.append(_runbook_url_section(alert.runbook_url))
    blocks += _status_blocks(alert, result, matches, base, budget)
    return _dicts(blocks)


def _even_share(alert: Alert, result: SearchResult, matches: list[Match], base: str | None) -> int:
    if not matches:
        return 0
    skeleton = blocks_json_size(_compose(alert, result, matches, base, _Budget(match_text=0)))
    return max(0, min(MATCH_TEXT_MAX, (BLOCKS_JSON_MAX - skeleton) // len(matches) - 40))


def _halve(n: int) -> int:
    return n // 2 if n > 100 else 0


def _fit_firing(alert: Alert, result: SearchResult, base: str | None) -> Blocks:
    matches = list(result.matches[:MAX_MATCHES]) if result.status == "matched" else []
    budget = _Budget(match_text=_even_share(alert, result, matches, base))
    while True:
        blocks = _compose(alert, result, matches, base, budget)
        if _fits(blocks):
            return blocks
        if budget.match_text > MATCH_TEXT_FLOOR:
            budget = _Budget(max(MATCH_TEXT_FLOOR, budget.match_text * 4 // 5), budget.description)
        elif len(matches) > 1:
            matches.pop()
            budget = _Budget(_even_share(alert, result, matches, base), budget.description)
        elif budget.match_text > 0:
            budget = _Budget(_halve(budget.match_text), budget.description)
        elif budget.description > 0:
            budget = _Budget(0, _halve(budget.description))
        elif not budget.compact:
            budget = _Budget(0, 0, compact=True)
        else:
            # Header (150 chars) + summary (150 chars): under 4k even as \\uXXXX pairs.
            minimal = [_header(alert, "firing"), _summary(alert, budget, with_description=False)]
            return _dicts(minimal)


def render_message(
    alert: Alert,
    result: SearchResult,
    *,
    runbook_base_url: str | None = None,
    now: datetime | None = None,
) -> SlackMessage:
    """The page as posted: a compact message for resolved alerts, else alert + runbook context.

    `runbook_base_url` (http/https) turns match titles into links to
    `<base>/<path>#<anchor>`; `now` is the resolve time shown on resolved alerts.
    """
    if alert.status == "resolved":
        return _render_resolved(alert, _utc(now))
    blocks = _fit_firing(alert, result, runbook_base_url)
    if result.status == "matched" and result.matches:
        top = result.matches[0]
        title = f"{top.title} › {top.section}" if top.section else top.title
        tail = "\nRunbook: " + safe_line(title, 300)
    elif result.status == "unavailable":
        tail = "\nRunbook search unavailable."
    else:
        tail = "\nNo confident runbook match."
    return SlackMessage(text=_fallback(alert, "firing", tail), blocks=blocks)


# --- resolved ----------------------------------------------------------------------


def _resolved_at(now: datetime) -> str:
    return f"✅ Resolved at {now:%H:%M} UTC"


def _render_resolved(alert: Alert, now: datetime) -> SlackMessage:
    budget = _Budget(match_text=0, description=0)
    blocks = [
        _header(alert, "resolved"),
        _summary(alert, budget, with_description=False),
        _alert_context(alert, budget, [_resolved_at(now)]),
    ]
    return SlackMessage(text=_fallback(alert, "resolved", ""), blocks=_dicts(blocks))


def render_resolved_update(
    alert: Alert,
    original: SlackMessage | None,
    *,
    now: datetime | None = None,
) -> SlackMessage:
    """The message for chat.update when the page resolves.

    With the original message, its header becomes RESOLVED, a "Resolved at"
    context follows it, and the runbook context stays (useful for the
    follow-up); trailing blocks are dropped if that tips it over the limits.
    Without it (lost, or posted by a webhook), the compact resolved message.
    """
    at = _utc(now)
    if original is None:
        return _render_resolved(alert, at)
    rest = copy.deepcopy([b for b in original.blocks if b.get("type") != "header"])
    blocks = _dicts([_header(alert, "resolved"), _context([_resolved_at(at)])]) + rest
    while not _fits(blocks):
        # Drop the last match group whole (divider, section, context), lowest rank first.
        dividers = [i for i, b in enumerate(blocks) if b.get("type") == "divider" and i >= 2]
        del blocks[dividers[-1] if dividers else -1 :]
    return SlackMessage(text=_fallback(alert, "resolved", ""), blocks=blocks)


def render_thread_reply(alert: Alert, *, now: datetime | None = None) -> str:
    """Short thread reply on resolve: "✅ Resolved at HH:MM UTC (after 1h 12m)"."""
    at = _utc(now)
    text = _resolved_at(at)
    if alert.starts_at:
        minutes = int((at - _utc(alert.starts_at)).total_seconds() // 60)
        if minutes >= 0:
            hours, mins = divmod(minutes, 60)
            text += f" (after {hours}h {mins}m)" if hours else f" (after {mins}m)"
    return text
