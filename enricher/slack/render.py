"""Alert + search result to a Slack message: top-level blocks and attachment cards (pure).

The alert is the message's top-level blocks: header, summary (with what is firing now) and
a context line; they are always shown and `text` (the notification) repeats them. The
runbook context goes in attachments, one card per match or lead (enricher.slack.cards),
colored by status and severity.

Every untrusted string (alert fields, labels, runbook titles, paths, text) goes through
`enricher.slack.text` (`safe_line`, `literal`, `link`, `truncate_plain`) or
`enricher.slack.markdown` (`trim_markdown`), which read only the part of a field the page
can show.

Slack limits are enforced here, not hoped for (DESIGN §2), counting the attachments' blocks
with the top-level ones: 50 blocks, 3000 chars a section, 150 a header, 10 context
elements, and blocks plus attachments at most `BLOCKS_JSON_MAX` characters of `json.dumps`
(default `ensure_ascii`, so non-ASCII text is counted as its `\\uXXXX` escapes: stricter
than Slack's ~13k characters, never looser). How a message is fitted:

1. Each match's text gets an even share of what the fixed parts leave, at most
   `MATCH_TEXT_MAX` characters (the fold section of each card is fixed, see cards.py).
2. While it is too long: shrink the match texts gently (to `MATCH_TEXT_FLOOR`), then drop
   the lowest-ranked card, then shrink the texts to nothing, then the alert description,
   then compact labels and titles, and finally fall back to header + summary.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from enricher.alert import Alert
from enricher.result import Match, SearchResult
from enricher.slack import cards
from enricher.slack.blocks import (
    CONTEXT_MAX_ELEMENTS,
    HEADER_MAX,
    SECTION_MAX,
    Block,
    context,
    header,
    section,
)
from enricher.slack.cards import Budget, color_for
from enricher.slack.markdown import trim_markdown
from enricher.slack.text import (
    cut,
    is_http_url,
    link,
    literal,
    safe_line,
    truncate_plain,
)

__all__ = [
    "BLOCKS_JSON_MAX",
    "NO_MATCH_TEXT",
    "UNAVAILABLE_TEXT",
    "SlackMessage",
    "clock",
    "firing_total",
    "message_size",
    "render_escalation",
    "render_message",
    "render_resolved_update",
    "render_thread_reply",
]

NO_MATCH_TEXT = cards.NO_MATCH_TEXT
UNAVAILABLE_TEXT = cards.UNAVAILABLE_TEXT
MAX_BLOCKS = 50
BLOCKS_JSON_MAX = 12_000
FALLBACK_MAX = 3000
MAX_MATCHES = 3
MATCH_TEXT_MAX = 2200
MATCH_TEXT_FLOOR = 600
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

Blocks = list[dict[str, Any]]
Phase = Literal["firing", "resolved"]


@dataclass(frozen=True)
class SlackMessage:
    """What chat.postMessage / chat.update get: `text` is the notification fallback."""

    text: str
    blocks: Blocks
    attachments: Blocks = field(default_factory=list)

    def to_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"text": self.text, "blocks": self.blocks}
        if self.attachments:
            kwargs["attachments"] = self.attachments
        return kwargs


#: `json.dumps`'s encoder without its check for cycles (blocks are trees): same output.
_ENCODER = json.JSONEncoder(check_circular=False)


def _json_length(value: Blocks) -> int:
    return len(_ENCODER.encode(value))


def message_size(blocks: Blocks, attachments: Blocks) -> int:
    """The size the total-length limit is checked against: blocks and attachments."""
    return _json_length(blocks) + (_json_length(attachments) if attachments else 0)


def _fits(blocks: Blocks, attachments: Blocks, size: int) -> bool:
    """Within Slack's limits, `size` being the `message_size` of the two."""
    count = len(blocks) + sum(len(a.get("blocks", [])) for a in attachments)
    return count <= MAX_BLOCKS and size <= BLOCKS_JSON_MAX


# --- the alert: top-level blocks -----------------------------------------------------


def _utc(at: datetime) -> datetime:
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def _now(now: datetime | None) -> datetime:
    return _utc(now or datetime.now(UTC))


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def clock(at: datetime, now: datetime) -> str:
    """`04:12 UTC` on the page's own day, else `Nov 29 04:12 UTC` (and the year when it is
    not the page's): a time without its day reads as today's. Month names are spelled
    here, not by strftime, so no locale changes them."""
    at, now = _utc(at), _utc(now)
    if at.date() == now.date():
        return f"{at:%H:%M} UTC"
    year = f" {at.year}" if at.year != now.year else ""
    return f"{_MONTHS[at.month - 1]} {at.day}{year} {at:%H:%M} UTC"


def firing_total(alert: Alert) -> tuple[int, bool]:
    """Firing alerts in the whole group, and whether that count is exact.

    `firing_count` counts the alerts of the body; `truncated` more were left out by
    Alertmanager's `max_alerts`. Alertmanager drops resolved alerts before it cuts the list
    unless the receiver has `send_resolved`, so when the body shows no resolved alert the
    left-out ones are counted as firing. When it shows some, their status is unknown: the
    body's firing alerts are a floor, written `60+`.
    """
    if alert.truncated <= 0:
        return alert.firing_count, True
    resolved_shown = alert.alert_count - alert.truncated - alert.firing_count
    if resolved_shown > 0:
        return alert.firing_count, False
    return alert.firing_count + alert.truncated, True


def _header(alert: Alert, phase: Phase) -> Block:
    status = "🔥 FIRING" if phase == "firing" else "✅ RESOLVED"
    parts = [status, alert.alert_name or "alert"]
    if alert.severity:
        parts.append(alert.severity)
    return header(truncate_plain(" · ".join(parts), HEADER_MAX))


def firing_now(alert: Alert, width: int = 80) -> str:
    """`*Firing now (3):* `a`, `b` and 1 more`: the first targets and a count."""
    total, exact = firing_total(alert)
    plus = "" if exact else "+"
    shown = [literal(t, width) for t in alert.targets]
    more = total - len(shown)
    text = ", ".join(shown) + (f" and {more}{plus} more" if more > 0 and shown else "")
    return f"*Firing now ({total}{plus}):* {text}".rstrip()


def _group_line(alert: Alert) -> str:
    """The group's size. How many alerts the page does not name is said once, by the
    firing-now line ("and 9995 more"), whether or not they were read in full."""
    parts: list[str] = []
    if alert.alert_count > 1:
        parts.append(f"{alert.alert_count} alerts in this group")
    if alert.truncated > 0:
        parts.append(f"({alert.truncated} not shown by Alertmanager)")
    return "_" + " ".join(parts) + "_" if parts else ""


def _summary(alert: Alert, budget: Budget, *, phase: Phase, with_description: bool) -> Block:
    limit = 150 if budget.compact else SUMMARY_MAX
    lines = [f"*{safe_line(alert.summary or alert.alert_name or 'alert', limit)}*"]
    if phase == "firing" and firing_total(alert)[0] > 1 and alert.targets:
        lines.append(firing_now(alert, 40 if budget.compact else 80))
    lines.append(_group_line(alert))
    if with_description and budget.description > 0 and alert.description.strip():
        lines.append(trim_markdown(alert.description, budget.description))
    return section("\n".join(line for line in lines if line))


def _alert_context(alert: Alert, budget: Budget, extra: list[str]) -> Block:
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
        elements.append(f"*{key}:* {literal(value, width)}")
    return context(elements)


def _runbook_url_section(url: str, *, indexed: bool) -> Block:
    target = link(url, url) if is_http_url(url) and len(url) <= 1000 else safe_line(url, 500)
    note = "" if indexed else "\n_It names no runbook indexed here, so the runbooks were searched._"
    return section(f"📘 Runbook linked by the alert: {target}{note}")


def _fallback(alert: Alert, phase: Phase, tail: str) -> str:
    """The notification text; `tail` (already safe, short) always survives the cut."""
    status = "🔥 FIRING" if phase == "firing" else "✅ RESOLVED"
    severity = f" ({alert.severity})" if alert.severity else ""
    text = f"{status}: {alert.alert_name}{severity} — {alert.summary}".rstrip(" —")
    return safe_line(text, FALLBACK_MAX - len(tail)) + tail


# --- the runbook context: attachments ------------------------------------------------


def _cards(
    alert: Alert, result: SearchResult, matches: list[Match], deck: cards.Cards, budget: Budget
) -> Blocks:
    if matches:
        color = color_for(alert, "firing", confident=True)
        return [deck.match_card(m, color, budget) for m in matches]
    grey = color_for(alert, "firing", confident=False)
    if result.status == "unavailable":
        note = UNAVAILABLE_TEXT
        if result.reason:
            note += f"\n_Reason: {safe_line(result.reason, 200)}_"
        return [cards.note_card(note, grey, "Runbook search unavailable")]
    service = safe_line(alert.service or "<service>", 80)
    name = safe_line(alert.alert_name or "<alert_name>", 120)
    hint = (
        f"_Add one at `{service}/{name}.md` in the runbook repository"
        " (or list this alert in a runbook's `alert_names`)"
        " so the next page comes with context._"
    )
    found = [cards.note_card(f"{NO_MATCH_TEXT}\n{hint}", grey, "No confident runbook match")]
    leads = result.leads[:MAX_MATCHES] if result.status == "no_match" else ()
    if result.likely and leads:
        first, *rest = leads
        likely = deck.likely_card(first, grey, budget)
        return [*found, likely, *(deck.lead_card(m, grey, budget) for m in rest)]
    return found + [deck.lead_card(m, grey, budget) for m in leads]


# --- firing ------------------------------------------------------------------------


def _top(alert: Alert, result: SearchResult, budget: Budget, now: datetime) -> Blocks:
    since = [f"🕒 since {clock(alert.starts_at, now)}"] if alert.starts_at else []
    blocks: list[Block] = [
        _header(alert, "firing"),
        _summary(alert, budget, phase="firing", with_description=True),
        _alert_context(alert, budget, since),
    ]
    if alert.runbook_url:
        unresolved = result.unresolved_url == alert.runbook_url
        blocks.append(_runbook_url_section(alert.runbook_url, indexed=not unresolved))
    return blocks


class _Fitting:
    """A firing page while it is fitted: its top blocks and cards at each budget tried.

    The top blocks depend on the budget's description and compactness only, and are made
    once for each (and measured once); the cards keep what no budget changes
    (`cards.Cards`).
    """

    def __init__(self, alert: Alert, result: SearchResult, base: str | None, now: datetime) -> None:
        self._alert = alert
        self._result = result
        self._now = now
        self._deck = cards.Cards(base)
        self._tops: dict[tuple[int, bool], tuple[Blocks, int]] = {}

    def top(self, budget: Budget) -> Blocks:
        return self._measured_top(budget)[0]

    def _measured_top(self, budget: Budget) -> tuple[Blocks, int]:
        key = (budget.description, budget.compact)
        if key not in self._tops:
            blocks = _top(self._alert, self._result, budget, self._now)
            self._tops[key] = blocks, _json_length(blocks)
        return self._tops[key]

    def cards(self, matches: list[Match], budget: Budget) -> Blocks:
        return _cards(self._alert, self._result, matches, self._deck, budget)

    def size(self, budget: Budget, attachments: Blocks) -> int:
        """`message_size` of the top blocks at `budget` and `attachments`."""
        return self._measured_top(budget)[1] + (_json_length(attachments) if attachments else 0)

    def even_share(self, matches: list[Match]) -> int:
        if not matches:
            return 0
        skeleton = self.size(Budget(0), self.cards(matches, Budget(match_text=0)))
        return max(0, min(MATCH_TEXT_MAX, (BLOCKS_JSON_MAX - skeleton) // len(matches) - 60))


def _halve(n: int) -> int:
    return n // 2 if n > 100 else 0


def _fit_firing(
    alert: Alert, result: SearchResult, base: str | None, now: datetime
) -> tuple[Blocks, Blocks]:
    matches = list(result.matches[:MAX_MATCHES]) if result.status == "matched" else []
    page = _Fitting(alert, result, base, now)
    budget = Budget(match_text=page.even_share(matches))
    while True:
        blocks = page.top(budget)
        attachments = page.cards(matches, budget)
        if _fits(blocks, attachments, page.size(budget, attachments)):
            return blocks, attachments
        if budget.match_text > MATCH_TEXT_FLOOR:
            budget = replace(budget, match_text=max(MATCH_TEXT_FLOOR, budget.match_text * 4 // 5))
        elif len(matches) > 1:
            matches.pop()
            budget = replace(budget, match_text=page.even_share(matches))
        elif budget.match_text > 0:
            budget = replace(budget, match_text=_halve(budget.match_text))
        elif budget.fold > 0:
            budget = replace(budget, fold=_halve(budget.fold))
        elif budget.description > 0:
            budget = replace(budget, description=_halve(budget.description))
        elif not budget.compact:
            budget = replace(budget, compact=True)
        else:
            # Header (150 chars) + summary (150 chars): under 4k even as \\uXXXX pairs.
            summary = _summary(alert, budget, phase="firing", with_description=False)
            return [_header(alert, "firing"), summary], []


def render_message(
    alert: Alert,
    result: SearchResult,
    *,
    runbook_base_url: str | None = None,
    now: datetime | None = None,
) -> SlackMessage:
    """The page as posted: a compact message for resolved alerts, else alert + runbook cards.

    `runbook_base_url` (http/https) turns match titles into links to
    `<base>/<path>#<anchor>`; `now` is when the page is rendered (default: the clock), the
    day that times on the page are read against, and the resolve time when the alert
    carries none. The notification names the section the first card leads with.
    """
    at = _now(now)
    if alert.status == "resolved":
        return _render_resolved(alert, at)
    blocks, attachments = _fit_firing(alert, result, runbook_base_url, at)
    if result.status == "matched" and result.matches:
        top = result.matches[0]
        lead = cards.lead_section(top)
        tail = "\nRunbook: " + safe_line(f"{top.title} › {lead}" if lead else top.title, 300)
    elif result.status == "unavailable":
        tail = "\nRunbook search unavailable."
    else:
        tail = "\nNo confident runbook match."
    return SlackMessage(_fallback(alert, "firing", tail), blocks, attachments)


# --- escalation ------------------------------------------------------------------------


def render_escalation(alert: Alert, *, severity_rose: bool, joined: int) -> str:
    """The thread reply (broadcast to the channel) when a firing group gets worse: what
    changed, and what is firing now (the first targets and a count)."""
    name = safe_line(alert.alert_name or "alert", 120)
    if severity_rose:
        head = f"⬆️ *{name}* is now *{safe_line(alert.severity or 'more severe', 40)}*"
    else:
        head = f"➕ *{name}*: {joined} more alert{'s' if joined != 1 else ''} firing"
    total, exact = firing_total(alert)
    plus = "" if exact else "+"
    lines = [head, f"*Firing now ({total}{plus}):*"]
    lines += [f"• {literal(target, 120)}" for target in alert.targets]
    if (more := total - len(alert.targets)) > 0:
        lines.append(f"• and {more}{plus} more")
    return cut("\n".join(lines), SECTION_MAX)


# --- resolved ----------------------------------------------------------------------


def _ended(alert: Alert, now: datetime) -> datetime:
    """When the alert ended: its own end time, else the time of rendering."""
    return _utc(alert.ends_at) if alert.ends_at else now


def _resolved_at(alert: Alert, now: datetime) -> str:
    return f"✅ Resolved at {clock(_ended(alert, now), now)}"


def _render_resolved(alert: Alert, now: datetime) -> SlackMessage:
    budget = Budget(match_text=0, description=0)
    blocks = [
        _header(alert, "resolved"),
        _summary(alert, budget, phase="resolved", with_description=False),
        _alert_context(alert, budget, [_resolved_at(alert, now)]),
    ]
    return SlackMessage(_fallback(alert, "resolved", ""), blocks)


def render_resolved_update(
    alert: Alert,
    original: SlackMessage | None,
    *,
    now: datetime | None = None,
) -> SlackMessage:
    """The message for chat.update when the page resolves.

    With the original message, its header becomes RESOLVED, a "Resolved at" context
    follows it, and the runbook cards stay (useful for the follow-up), turned green; the
    last cards are dropped if that tips it over the limits. Without it (lost, or posted by
    a webhook), the compact resolved message.
    """
    at = _now(now)
    if original is None:
        return _render_resolved(alert, at)
    rest = [b for b in original.blocks if b.get("type") != "header"]
    blocks = [_header(alert, "resolved"), context([_resolved_at(alert, at)]), *rest]
    attachments = cards.recolor(original.attachments, cards.COLORS["resolved"])
    while not _fits(blocks, attachments, message_size(blocks, attachments)):
        if attachments:
            attachments.pop()
        else:
            blocks.pop()
    return SlackMessage(_fallback(alert, "resolved", ""), blocks, attachments)


def render_thread_reply(alert: Alert, *, now: datetime | None = None) -> str:
    """Short thread reply on resolve: "✅ Resolved at HH:MM UTC (after 1h 12m)", from the
    alert's start to its end (`ends_at`, else `now`)."""
    at = _now(now)
    text = _resolved_at(alert, at)
    if alert.starts_at:
        minutes = int((_ended(alert, at) - _utc(alert.starts_at)).total_seconds() // 60)
        if minutes >= 0:
            hours, mins = divmod(minutes, 60)
            text += f" (after {hours}h {mins}m)" if hours else f" (after {mins}m)"
    return text
