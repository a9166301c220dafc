"""Runbook markdown to Slack mrkdwn, fitted to a size: the door for runbook sections.

Each piece goes through the steps of `enricher.slack.text` (redact, escape, defang; see
`trim_markdown` for the order), and the same rule of bounded work holds: only a text's
`scan_window` is read, and every pattern here is linear in what it scans.
"""

from __future__ import annotations

import functools
import re
from typing import Literal, NamedTuple

from enricher.slack.text import (
    ELLIPSIS,
    WORD_JOINER,
    cut,
    escape,
    is_http_url,
    link,
    neutralize_mentions,
    scan_window,
    scrub,
)

__all__ = [
    "CODE_OMITTED_NOTE",
    "TRUNCATED_NOTE",
    "Markdown",
    "fold_markdown",
    "trim_markdown",
]

TRUNCATED_NOTE = "_… (truncated, see the runbook)_"
CODE_OMITTED_NOTE = "_(code block omitted, see the runbook)_"


class _Unit(NamedTuple):
    kind: Literal["text", "code", "blank"]
    text: str


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+")
_BULLET = re.compile(r"^(\s*)[-*+]\s+")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
# [label](url "title"), url may hold one level of balanced parentheses. The label holds no
# `[`, so each `[` of a run `[[[…` reads only up to the next one.
_MD_LINK = re.compile(
    r"!?\[([^\[\]\n]*)\]\(\s*<?([^\s()<>]*(?:\([^\s()<>]*\)[^\s()<>]*)*)>?"
    r"(?:\s+\"[^\"\n]*\")?\s*\)"
)
# Bold holds no `*` (`_`): an opener that is never closed reads only up to the next one.
_BOLD = re.compile(r"\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*|__(?=\S)([^_\n]+?)(?<=\S)__")


def _plain(segment: str) -> str:
    """Escaped, defanged text with **bold** / __bold__ turned into Slack's *bold*."""
    text = neutralize_mentions(escape(segment))
    if "**" not in text and "__" not in text:
        return text
    return _BOLD.sub(lambda m: "*" + (m.group(1) or m.group(2)) + "*", text)


def _inline(line: str) -> str:
    """One line's markdown as mrkdwn. Code spans and the text around them are escaped
    alike, so a line with no link, mention or bold (most lines) is just escaped."""
    if "](" not in line and "@" not in line and "**" not in line and "__" not in line:
        return escape(line)
    out: list[str] = []
    for i, piece in enumerate(_CODE_SPAN.split(line)):
        if i % 2:  # inside `code`: escaped, not formatted
            out.append("`" + neutralize_mentions(escape(piece)) + "`")
            continue
        pos = 0
        for m in _MD_LINK.finditer(piece):
            out.append(_plain(piece[pos : m.start()]))
            label, url = m.group(1).strip(), m.group(2)
            out.append(link(url, label) if is_http_url(url) else _plain(label))
            pos = m.end()
        out.append(_plain(piece[pos:]))
    return "".join(out)


def _heading_text(rest: str) -> str:
    """A heading's text without its closing `#`s (a run of them after a space, CommonMark);
    done with str methods: as a regex, `\\s+#+\\s*$` re-reads every run of spaces."""
    text = rest.rstrip()
    bare = text.rstrip("#")
    if bare != text and (not bare or bare[-1].isspace()):
        text = bare
    return text.strip()


def _render_line(line: str) -> str:
    heading = _HEADING.match(line)
    if heading:
        title = _inline(_heading_text(line[heading.end() :]).replace("**", "")).strip("*")
        return f"*{title}*" if title else ""
    bullet = _BULLET.match(line)
    if bullet:
        return bullet.group(1) + "• " + _inline(line[bullet.end() :])
    return _inline(line.rstrip())


def _code_unit(code: str) -> _Unit | None:
    """A fenced block's lines (joined) as a code unit; None when they hold nothing."""
    body = code.strip("\n")
    if not body.strip():
        return None
    # A ``` inside the code would end Slack's block early.
    body = neutralize_mentions(escape(body)).replace("```", "`" + WORD_JOINER + "``")
    return _Unit("code", f"```\n{body}\n```")


_BLANK = _Unit("blank", "")


def _line(line: str) -> _Unit | str | None:
    """What a line outside code is: a text unit, None when it shows nothing, or the marker
    of the code fence it opens."""
    fence = _FENCE.match(line)
    if fence:
        return fence.group(1)
    rendered = _render_line(line)
    return _Unit("text", rendered) if rendered.strip() else None


@functools.lru_cache(maxsize=16)
def _closing_fence(marker: str) -> re.Pattern[str]:
    return re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}\s*$")


def trim_markdown(text: str, limit: int) -> str:
    """Runbook markdown to escaped Slack mrkdwn of at most `limit` characters.

    How the output stays safe and short:
    0. Only the raw prefix the output can show is read (`scan_window` of twice `limit`:
       markup, link targets and blank-line runs are not shown); when that cuts the text,
       the output says so with `TRUNCATED_NOTE`, and a code block the cut runs through
       is omitted, never shown in part.
    1. Secrets are redacted on the whole window (a PEM key spans lines).
    2. The text is split into units: one per line, one per fenced code block.
       Each unit is escaped and defanged on its own; the only raw `<…>` we emit
       are links built by `link()` around validated http(s) URLs.
    3. Units are measured after escaping, so `limit` counts what Slack counts.
       They are kept in order while they fit. A code block that does not fit is
       replaced by `CODE_OMITTED_NOTE` (never cut) and we keep going; the first
       text line that does not fit ends the output, cut inside the line (with
       `cut`, entity- and link-safe) only when less than half the room is used.
       `TRUNCATED_NOTE` is appended, and its room reserved, whenever text is lost.
    """
    return Markdown().trim(text, limit)


def _fit(units: list[_Unit], limit: int, lost: bool = False) -> str:
    """Rendered units in order while they fit `limit` (the rules of `trim_markdown`);
    `lost`: text after these units was cut off already."""
    full = "\n".join(u.text for u in units)
    if len(full) <= limit and not lost:
        return full
    budget = limit - len(TRUNCATED_NOTE) - 1
    if budget <= 0:
        return ELLIPSIS[: max(limit, 0)]
    out: list[str] = []
    used = 0
    truncated = lost
    for unit in units:
        sep = 1 if out else 0
        if used + sep + len(unit.text) <= budget:
            out.append(unit.text)
            used += sep + len(unit.text)
            continue
        if unit.kind == "code" and used + sep + len(CODE_OMITTED_NOTE) <= budget:
            out.append(CODE_OMITTED_NOTE)
            used += sep + len(CODE_OMITTED_NOTE)
            continue
        truncated = True
        if unit.kind == "text" and used < budget // 2:
            piece = cut(unit.text, budget - used - sep)
            if piece:
                out.append(piece)
        break
    while out and not out[-1]:
        out.pop()
    if truncated:
        out.append(TRUNCATED_NOTE)
    return "\n".join(out)


def fold_markdown(text: str, *, fold_chars: int, fold_lines: int, limit: int) -> tuple[str, str]:
    """Runbook markdown as (head, rest): `head` is the leading whole lines that fit in
    `fold_chars` characters and `fold_lines` lines (what Slack shows above an attachment's
    "Show more"), `rest` the remaining lines fitted to `limit` like `trim_markdown`.

    A first line longer than the fold is cut (entity- and link-safe) rather than pushed
    below it; a code block that does not fit whole starts the rest.
    """
    return Markdown().fold(text, fold_chars=fold_chars, fold_lines=fold_lines, limit=limit)


class Markdown:
    """`trim_markdown` and `fold_markdown` for one page, which is fitted to Slack's limits at
    several sizes: each size reads a prefix of the same texts. Here each prefix is redacted
    and split once, and each line rendered once, whichever sizes ask for them."""

    def __init__(self) -> None:
        self._read: dict[tuple[str, bool], list[_Unit]] = {}
        self._line = functools.cache(_line)
        self._code_unit = functools.cache(_code_unit)

    def trim(self, text: str, limit: int) -> str:
        window, lost = scan_window(text, 2 * limit)
        return _fit(self._units(window, lost), limit, lost)

    def fold(self, text: str, *, fold_chars: int, fold_lines: int, limit: int) -> tuple[str, str]:
        window, lost = scan_window(text, 2 * (fold_chars + limit))
        units = self._units(window, lost)
        head: list[str] = []
        used = lines = 0
        for unit in units:
            sep = 1 if head else 0
            height = unit.text.count("\n") + 1
            if used + sep + len(unit.text) > fold_chars or lines + height > fold_lines:
                break
            head.append(unit.text)
            used += sep + len(unit.text)
            lines += height
        if not head and units and units[0].kind == "text":
            head.append(cut(units[0].text, fold_chars - len(ELLIPSIS)) + ELLIPSIS)
        rest = units[len(head) :]
        while head and not head[-1]:
            head.pop()
        while rest and rest[0].kind == "blank":
            rest.pop(0)
        return "\n".join(head), _fit(rest, limit, lost)

    def _units(self, window: str, lost: bool) -> list[_Unit]:
        key = (window, lost)
        if key not in self._read:
            self._read[key] = self._split(scrub(window), lost)
        return self._read[key]

    def _split(self, markdown: str, cut_off: bool) -> list[_Unit]:
        """Rendered units of markdown; with `cut_off` (the text was cut after it), a fence
        left open at the end is a block seen only in part, shown as CODE_OMITTED_NOTE."""
        units: list[_Unit] = []
        lines = iter(markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
        for line in lines:
            unit = self._line(line)
            if isinstance(unit, str):  # a fence: the block runs to the line that closes it
                close = _closing_fence(unit)
                code: list[str] = []
                for inner in lines:
                    if close.match(inner):
                        break
                    code.append(inner)
                else:
                    if cut_off:
                        units.append(_Unit("code", CODE_OMITTED_NOTE))
                        continue
                block = self._code_unit("\n".join(code))
                if block is not None:
                    units.append(block)
                continue
            if unit is not None:
                units.append(unit)
            elif units and units[-1].kind != "blank":
                units.append(_BLANK)
        while units and units[-1].kind == "blank":
            units.pop()
        return units
