"""The runbook part of a page as Slack attachments: one colored card per match or lead (pure).

The design card puts the alert in the message's top-level blocks (header and summary,
always visible and in the notification) and the runbook context in attachments, whose
colored bar on-call reads at a glance as Alertmanager's own Slack notifier taught them: red
while a critical fires, orange for a warning, blue for info, green once resolved, grey when
there is no confident match or search is down.

Slack collapses long attachment content behind "Show more" (at 700 characters or 5 lines
for attachment text). So each card opens with one section that stays within that fold: the
runbook title and section, then the first actionable lines (the runbook's steps when the
search found them, `Match.steps`, else the matched section's first lines). A runbook with
nothing that says what to do (`Match.no_steps`: on a page with a section per alert, the
alert's own section) says so there instead of borrowing another section's steps. The source line
(path, source root, revision, score, stale warning) follows, then the rest of the text.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple
from urllib.parse import quote

from enricher.alert import Alert
from enricher.result import Match
from enricher.slack.blocks import Block, context, section
from enricher.slack.buttons import feedback_actions
from enricher.slack.markdown import Markdown
from enricher.slack.text import (
    SCAN_MARGIN,
    is_http_url,
    link,
    literal,
    safe_line,
    truncate_plain,
)

__all__ = [
    "COLORS",
    "FOLD_CHARS",
    "FOLD_LINES",
    "LEADS_TEXT",
    "LIKELY_TEXT",
    "NO_MATCH_TEXT",
    "NO_STEPS_TEXT",
    "UNAVAILABLE_TEXT",
    "Budget",
    "Cards",
    "color_for",
    "lead_section",
    "note_card",
    "recolor",
]

#: What Slack shows of an attachment before "Show more" (attachment text: 700+ characters
#: or 5+ line breaks collapse); the first section of each card stays within both.
FOLD_CHARS = 700
FOLD_LINES = 5
#: Longest link to a runbook section; a longer one (a hostile path) leaves the title unlinked.
URL_MAX = 1000

COLORS = {
    "critical": "#E01E5A",
    "warning": "#F2952F",
    "info": "#1D9BD1",
    "resolved": "#2EB67D",
    "none": "#9E9E9E",
}
#: Severity words to bar colors; a firing alert of any other severity is treated as critical
#: (Alertmanager's Slack notifier colors every firing alert red).
_SEVERITY_COLOR = {
    "critical": "critical",
    "page": "critical",
    "error": "critical",
    "warning": "warning",
    "info": "info",
}

NO_MATCH_TEXT = "🔍 No confident runbook match for this alert."
LEADS_TEXT = "Closest runbook, *below the confidence bar*: check it fits before following it."
LIKELY_TEXT = "*Likely* the alert's runbook, though *below the confidence bar*"
NO_STEPS_TEXT = "_No steps here: this runbook section has no fix, investigation or commands._"
UNAVAILABLE_TEXT = (
    "⚠️ Runbook search is unavailable right now — this page was sent without runbook context."
)

Card = dict[str, Any]
Phase = Literal["firing", "resolved"]


@dataclass(frozen=True)
class Budget:
    """How much room a card's text gets; shrunk step by step until the message fits."""

    match_text: int
    description: int = 1200
    compact: bool = False
    #: Characters of a card's fold section after its heading (at most FOLD_CHARS).
    fold: int = FOLD_CHARS


def color_for(alert: Alert, phase: Phase, *, confident: bool) -> str:
    """The bar color: resolved green, else grey without a confident match, else severity."""
    if phase == "resolved":
        return COLORS["resolved"]
    if not confident:
        return COLORS["none"]
    return COLORS[_SEVERITY_COLOR.get((alert.severity or "").strip().lower(), "critical")]


def recolor(cards: Sequence[Card], color: str) -> list[Card]:
    """The same cards with another bar color (a resolve turns them green)."""
    return [{**card, "color": color} for card in cards]


def _card(color: str, fallback: str, blocks: list[Block], actions: Block | None = None) -> Card:
    """A card; one about a runbook ends with its feedback buttons (`actions`)."""
    if actions is not None:
        blocks.append(actions)
    return {"color": color, "fallback": fallback, "blocks": blocks}


def _match_url(base: str | None, match: Match, anchor: str | None = None) -> str | None:
    """Where the section is read: the runbook's own link, made at ingest (its source's
    RUNBOOK_LINK_TEMPLATE, RUNBOOK_BASE_URL or its git host's blob URL; a Confluence page's
    own URL), else RUNBOOK_BASE_URL/<path> (an index built before links were made at
    ingest), at the heading's anchor.

    None past URL_MAX characters, checked before quoting (which only lengthens, and costs a
    Python step per byte: a 1 MiB path must not be quoted to be refused)."""
    anchor = match.anchor if anchor is None else anchor
    if match.url and is_http_url(match.url):
        url = match.url
    elif base and is_http_url(base) and match.path:
        if len(base) + len(match.path) + len(anchor) > URL_MAX:
            return None
        url = base.rstrip("/") + "/" + quote(match.path, safe="/")
    else:
        return None
    if anchor:
        if len(url) + len(anchor) > URL_MAX:
            return None
        url += "#" + quote(anchor, safe="")
    return url if len(url) <= URL_MAX else None


def score_text(match: Match) -> str:
    score = match.score
    readable = round(min(max(score, 0.0), 1.0) * 100) if math.isfinite(score) else 0
    return f"match {readable}%"


def _heading(base: str | None, match: Match, anchor: str | None, section: str, width: int) -> str:
    """`*Title › Section*`, the title linked to the runbook (at `anchor`) when it has a URL."""
    url = _match_url(base, match, anchor)
    title = " ".join((match.title or match.path or "runbook")[: width + SCAN_MARGIN].split())
    if url:
        shown = title if len(title) <= width else title[: width - 1] + "…"
        heading = link(url, shown)
    else:
        heading = safe_line(title, width)
    if section:
        heading += " › " + safe_line(section, width)
    return f"*{heading}*"


_LINK = re.compile(r"<[^<>|]*\|([^<>]*)>")


def _shown_length(mrkdwn: str) -> int:
    """Characters Slack shows: a `<url|label>` link shows its label only."""
    return len(_LINK.sub(r"\1", mrkdwn))


def _source_line(match: Match, width: int) -> list[str]:
    meta: list[str] = []
    if match.path.strip():
        meta.append(f"📄 {literal(match.path, width)}")
    if match.source:
        meta.append(f"source: {safe_line(match.source, 40)}")
    if match.revision:
        meta.append(f"rev {safe_line(match.revision[:8], 8)}")
    meta.append(score_text(match))
    if match.quoted_metrics:
        # Names from the rule's PromQL: letters, digits, "_" and ":" only.
        quoted = ", ".join(f"`{safe_line(m, 80)}`" for m in match.quoted_metrics[:2])
        meta.append(f"📈 the only runbook quoting {quoted} from the alert rule")
    if match.feedback:
        meta.append(f"🗳 {safe_line(match.feedback, 80)}")
    if match.stale:
        days = "day" if match.age_days == 1 else "days"
        meta.append(f"⚠️ stale: last reviewed {match.age_days} {days} ago")
    return meta


def lead_section(match: Match) -> str:
    """The section a match's card leads with: its steps' when the search found them."""
    return match.steps.section if match.steps else match.section


class _Parts(NamedTuple):
    """What a match's card shows whatever room its text gets."""

    #: Title › the section the card leads with (and NO_STEPS_TEXT): opens the fold.
    heading: str
    #: Characters and lines the fold has left under the heading.
    fold_chars: int
    fold_lines: int
    #: With steps: the heading of the best-matching section, which follows them.
    matched: str
    source: Block
    actions: Block | None
    fallback: str


def _parts(base: str | None, match: Match, width: int) -> _Parts:
    steps = match.steps
    heading = _heading(base, match, steps.anchor if steps else None, lead_section(match), width)
    if match.no_steps:
        heading += "\n" + NO_STEPS_TEXT
    fallback = f"Runbook: {match.title or match.path} › {lead_section(match)}"
    return _Parts(
        heading=heading,
        fold_chars=FOLD_CHARS - _shown_length(heading) - 1,
        fold_lines=FOLD_LINES - 1 - heading.count("\n"),
        matched=_heading(base, match, None, match.section, width) if steps else "",
        source=context(_source_line(match, width)),
        actions=feedback_actions(match),
        fallback=truncate_plain(fallback, 280) + f" ({score_text(match)})",
    )


class Cards:
    """The runbook cards of one page, built at each budget its fit tries (render.py).

    A match card's parts that no budget changes (`_Parts`) are made once per page, and each
    runbook text is read once (`Markdown`): a page is built two or three times before it
    fits.
    """

    def __init__(self, base: str | None) -> None:
        self._base = base
        self._markdown = Markdown()
        self._parts = functools.cache(functools.partial(_parts, base))

    def match_card(self, match: Match, color: str, budget: Budget) -> Card:
        """One runbook match: the fold section, the source line, then the rest of the text.

        With `match.steps` the fold shows the steps (what to do), and the matched section
        follows under its own heading; without it the matched section itself leads.
        """
        parts = self._parts(match, 60 if budget.compact else 150)
        steps = match.steps
        room = budget.match_text
        head, rest = self._markdown.fold(
            steps.text if steps else match.text,
            fold_chars=max(0, min(parts.fold_chars, budget.fold)),
            fold_lines=parts.fold_lines,
            limit=room if steps is None else room // 3,
        )
        blocks = [section(parts.heading + ("\n" + head if head else "")), parts.source]
        if rest and room > 0:
            blocks.append(section(rest))
        if steps is not None and room > 0:
            text = self._markdown.trim(match.text, max(0, room - len(rest)))
            blocks.append(section(parts.matched + ("\n" + text if text else "")))
        return _card(color, parts.fallback, blocks, parts.actions)

    def lead_card(self, match: Match, color: str, budget: Budget) -> Card:
        """A no-match lead: named, scored and plainly not vouched for; no runbook text."""
        width = 60 if budget.compact else 120
        heading = _heading(self._base, match, None, match.section, width)
        blocks = [section(f"{heading}\n{LEADS_TEXT}"), context(_source_line(match, width))]
        fallback = f"Closest runbook (not confident): {match.title or match.path}"
        return _card(color, truncate_plain(fallback, 300), blocks, feedback_actions(match))

    def likely_card(self, match: Match, color: str, budget: Budget) -> Card:
        """The first lead when it is likely (enricher.search.decide.likely): shown like a
        match, with what to do, under a line that says how likely and that it is unconfirmed."""
        card = self.match_card(match, color, budget)
        percent = score_text(match).removeprefix("match ")
        card["blocks"] = [section(f"{LIKELY_TEXT} ({percent})."), *card["blocks"]]
        title = " ".join((match.title or match.path).split())
        card["fallback"] = truncate_plain(
            f"Likely runbook ({percent}, not confident): {title}", 300
        )
        return card


def note_card(text: str, color: str, fallback: str) -> Card:
    """A card that only says something (no match, search unavailable)."""
    return _card(color, fallback, [section(text)])
