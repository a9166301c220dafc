"""Untrusted text (alerts, runbooks) to Slack mrkdwn that can neither ping nor leak.

Anyone who can open a PR on the runbooks, or set an alert annotation, controls
text we post. Every such string goes through one of these doors:

- `safe_line(text, limit)` for short mrkdwn fields: redact secrets, then escape `& < >`,
  then defang mentions. Redaction runs first because escaping changes what the secret
  patterns see (`&` in a URL); defanging runs last so that it sees the final text.
- `trim_markdown(text, limit)` for runbook sections: the same three steps,
  applied piece by piece (see its docstring), plus a little markdown to mrkdwn.
- `truncate_plain(text, limit)` for `plain_text` fields (the header).
- `literal(text, limit)` for label values: `safe_line`, then set in code so that `*`, `_`
  and `~` in a value (`pod=*prod*`) are shown, not applied as formatting.

Bounded work (STYLE §13): a field may be 1 MiB. Every door first cuts its input to the raw
prefix its output can show plus `SCAN_MARGIN` (`_window`), and only that prefix is scanned.
Every pattern below is linear in what it scans: no two adjacent or nested quantifiers
over overlapping classes, and where a failed match would re-scan a run (secret keys, lead
words, URL schemes), the run is bounded or may only start where a run starts.

Bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C) are removed
from everything: `pod\u202egpj.exe` would otherwise display as "podexe.jpg".

Why mentions need more than escaping: `<!channel>`, `<@U123>` and
`<!subteam^S1>` are inert once `<` is `&lt;`, but with `verbatim: false` (the
default) Slack also parses bare `@channel`, `@here` and `@everyone`, also inside
formatting (`_@here_`) and after a letter (`x@channel`). We put a WORD JOINER (U+2060,
invisible, does not break lines or emoji sequences) after the `@` of each one, unless a
letter or digit follows (`@channels`) or a domain does (`ops@here.example`, an address).
Other `@name`s are left alone: Slack resolves them only with `link_names=1`, which the
poster must not set.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

__all__ = [
    "CODE_OMITTED_NOTE",
    "LINK_MAX",
    "SCAN_MARGIN",
    "TRUNCATED_NOTE",
    "WORD_JOINER",
    "cut",
    "escape",
    "fold_markdown",
    "is_http_url",
    "link",
    "literal",
    "neutralize_mentions",
    "redact_secrets",
    "safe_line",
    "strip_bidi",
    "trim_markdown",
    "truncate_plain",
]

WORD_JOINER = "\u2060"
REDACTED = "[REDACTED]"
TRUNCATED_NOTE = "_… (truncated, see the runbook)_"
CODE_OMITTED_NOTE = "_(code block omitted, see the runbook)_"
ELLIPSIS = "…"
#: Raw characters scanned past what a field can show. A secret that starts in the shown
#: part and, with its key, is at most this long is seen whole, so the cut never reveals
#: part of one; the pattern bounds below (48-character keys) stay well inside it.
SCAN_MARGIN = 512
#: Longest URL made a link; a longer one (no real page has one) is shown as its label.
LINK_MAX = 2000


def _window(text: str, room: int) -> tuple[str, bool]:
    """The raw prefix that can reach an output of `room` characters, plus SCAN_MARGIN, and
    whether anything was cut off. Escaping only lengthens text, so `room` raw characters
    cover what the output shows; where redaction or collapsed whitespace shortens it, the
    output is shorter, never made of text past the window."""
    end = max(room, 0) + SCAN_MARGIN
    return text[:end], len(text) > end


# --- escaping and mentions -------------------------------------------------


_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def strip_bidi(text: str) -> str:
    """Remove the controls that reorder how text displays (see the module docstring)."""
    return _BIDI.sub("", text)


def escape(text: str) -> str:
    """Escape Slack's three control characters; `&` first so entities stay single."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_RAW_MENTION_OPEN = re.compile(r"<(?=[!@#])")
#: Whatever precedes it (`_@here_`, `x@channel`); not a longer word, not an address's domain.
_BROADCAST = re.compile(r"@(channel|here|everyone)(?![a-z0-9]|\.[a-z0-9])", re.IGNORECASE)


def _defang_broadcasts(text: str) -> str:
    return _BROADCAST.sub(lambda m: "@" + WORD_JOINER + m.group(1), text)


def neutralize_mentions(text: str) -> str:
    """Defang broadcast mentions; also safe on unescaped text (raw `<!…>`, `<@…>`, `<#…>`)."""
    return _defang_broadcasts(_RAW_MENTION_OPEN.sub("&lt;", text))


# --- secrets ---------------------------------------------------------------

_KEY_WORDS = (
    r"(?:password|passwd|pwd|passphrase|token|secret|credentials?"
    r"|api[_\s-]?key|apikey|access[_-]?key|private[_-]?key)"
)


def _keep_value(value: str) -> bool:
    """Values that point at a secret instead of holding one stay readable."""
    bare = value.strip("'\"")
    return not bare or bare.startswith(("$", "{{", "<", "%", "***", "[REDACTED"))


# `secretName: db-creds`, `password_file: /run/…`: names of secrets, not secrets.
_NAME_KEY_SUFFIXES = ("name", "ref", "file", "path", "url", "id", "type", "length", "ttl", "policy")


def _redact_assignment(m: re.Match[str]) -> str:
    value = m.group("value")
    if _keep_value(value) or m.group("key").strip("'\"").lower().endswith(_NAME_KEY_SUFFIXES):
        return m.group(0)
    # `key: value` is also prose ("reset the password: run ..."): there, only redact
    # values that look machine-made (a digit or a symbol, not a plain word).
    prose = m.group("sep").strip() == ":" and not value.startswith(("'", '"'))
    if prose and (len(value) < 6 or re.fullmatch(r"[A-Za-z]+[.,;]?", value)):
        return m.group(0)
    quote = value[0] if value[0] in "'\"" and value[-1] == value[0] and len(value) > 1 else ""
    return f"{m.group('key')}{m.group('sep')}{quote}{REDACTED}{quote}"


def _redact_after_lead(m: re.Match[str]) -> str:
    return m.group(0) if _keep_value(m.group("value")) else m.group("lead") + REDACTED


def _redact_generic(m: re.Match[str]) -> str:
    value = m.group("value")
    if not (re.search(r"\d", value) and re.search(r"[A-Za-z]", value)):
        return m.group(0)
    return m.group("lead") + REDACTED


#: A pattern, its replacement, and words one of which every match contains (lower case):
#: a text holding none of them is not scanned with the pattern. Runbook prose holds few of
#: them, so most patterns are skipped by a substring search instead of a regex scan.
_Rule = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str], tuple[str, ...]]
_KEY_HINTS = ("passw", "pwd", "passphrase", "token", "secret", "credential", "api", "access",
              "private")

# Why these stay linear (the module docstring has the rule): a match may only start where
# its run starts (`(?<![…])` instead of `\b`, which holds inside `a.a.a` and `-a-a`),
# prefixes that a failed match re-reads are bounded (schemes 32, keys 48, lead words 32),
# and each value is one greedy run with nothing after it to backtrack into.
_RULES: tuple[_Rule, ...] = (
    # A PEM private key, also an unterminated one (text cut upstream).
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----"
            r"(?:.*?-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|.*)",
            re.DOTALL,
        ),
        "[REDACTED PRIVATE KEY]",
        ("-----begin ",),
    ),
    # scheme://user:password@host
    (
        re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,31}://[^\s/:@]*):[^\s/]+@"),
        r"\1:***@",
        ("://",),
    ),
    (
        re.compile(
            r"(?i)\b(?P<lead>authorization[ \t]*[:=][ \t]*[\"']?"
            r"(?:(?:bearer|basic|token|bot)[ \t]+)?)(?P<value>[^\s\"']+)"
        ),
        _redact_after_lead,
        ("authorization",),
    ),
    # "Bearer abc123…" but not "Bearer authentication": a token has a digit.
    (
        re.compile(r"(?i)\b(bearer[ \t]+)(?=[A-Za-z._~+/=-]{0,64}\d)[\w.~+/=-]{8,}"),
        rf"\1{REDACTED}",
        ("bearer",),
    ),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "[REDACTED AWS KEY]", ("akia", "asia")),
    (re.compile(r"\bxox[abposr]-[0-9A-Za-z-]{8,}"), "[REDACTED SLACK TOKEN]", ("xox",)),
    (re.compile(r"\bxapp-[0-9A-Za-z-]{8,}"), "[REDACTED SLACK TOKEN]", ("xapp-",)),
    (
        re.compile(r"(?i)https://hooks\.slack\.com/services/[\w/]+"),
        "[REDACTED SLACK WEBHOOK]",
        ("hooks.slack.com",),
    ),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), "[REDACTED GITHUB TOKEN]", ("gh",)),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}"), "[REDACTED GITHUB TOKEN]", ("github_pat_",)),
    (re.compile(r"(?<![\w.-])eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"), "[REDACTED JWT]", ("eyj",)),
    # password=..., "api_key": "...", token: ...
    (
        re.compile(
            rf"(?i)(?<![\w.-])(?P<key>[\w.-]{{0,48}}?{_KEY_WORDS}[\w.-]{{0,48}}[\"']?)"
            r"(?P<sep>\s*[=:]\s*)(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;&\"']+)"
        ),
        _redact_assignment,
        _KEY_HINTS,
    ),
    # "the token is 9f8e…", "secret 3q2+7w…": long hex/base64 soon after a key-like word.
    (
        re.compile(
            rf"(?i)(?P<lead>\b{_KEY_WORDS}\b[\w-]{{0,32}}(?:\s{{1,8}}(?:is|was|of|for|to))?"
            r"[\s:=\"'`]{1,8})(?P<value>[A-Za-z0-9+/_-]{20,}={0,2})"
        ),
        _redact_generic,
        _KEY_HINTS,
    ),
)


def redact_secrets(text: str) -> str:
    """Replace obvious secrets with `[REDACTED …]` markers; run it on raw text, before escaping.

    Linear in `len(text)`, but it scans all of it: the doors below cut a field first."""
    lowered = text.lower()
    for pattern, replacement, hints in _RULES:
        if any(hint in lowered for hint in hints):
            text, count = pattern.subn(replacement, text)
            if count:
                lowered = text.lower()
    return text


def _scrub(text: str) -> str:
    return redact_secrets(strip_bidi(text))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _door(text: str, limit: int, tidy: Callable[[str], str] = _one_line) -> str:
    """Window, `tidy`, redact, escape, defang; then cut to `limit`, with an ellipsis when
    anything was lost (also when the window alone cut it)."""
    window, lost = _window(text, limit)
    out = neutralize_mentions(escape(_scrub(tidy(window))))
    if len(out) <= limit and not lost:
        return out
    if limit <= len(ELLIPSIS):
        return ELLIPSIS[: max(limit, 0)]
    return cut(out, limit - len(ELLIPSIS)) + ELLIPSIS


def safe_line(text: str, limit: int) -> str:
    """The door for short untrusted mrkdwn text: at most `limit` characters of it on one
    line (whitespace collapsed), redacted, escaped and defanged (cut entity-safe, with an
    ellipsis)."""
    return _door(text, limit)


def literal(text: str, limit: int) -> str:
    """A label value shown as it is: `safe_line` in a code span, so Slack formatting in it
    stays inert (backticks, which would end the span, become `ˋ`)."""
    return f"`{_door(text, max(limit - 2, 1), lambda s: _one_line(s).replace('`', 'ˋ'))}`"


# --- links -------------------------------------------------------------------


_NOT_IN_URL = re.compile(r"[\s\x00-\x1f]")


def is_http_url(url: str) -> bool:
    """Only http(s) URLs with a host, at most LINK_MAX long, become links; `javascript:`,
    `file:` … stay text."""
    if not url or len(url) > LINK_MAX or _NOT_IN_URL.search(url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def _link_target(url: str) -> str:
    """Make a URL safe inside `<url|label>`: `|`, `<`, `>` and quotes encoded, `&` escaped."""
    for char, code in (("|", "%7C"), ("<", "%3C"), (">", "%3E"), ('"', "%22")):
        url = url.replace(char, code)
    return url.replace("&", "&amp;")


_URLISH_LABEL = re.compile(
    r"(?i)^\s*(?:[a-z][a-z0-9+.-]{0,31}://)?[\w-]+(?:\.[\w-]+)+(?:[/:?#]\S*)?\s*$"
)


def _host(url: str) -> str:
    try:
        return (urlsplit(url if "://" in url else "//" + url.strip()).hostname or "").lower()
    except ValueError:
        return ""


def link(url: str, label: str | None = None) -> str:
    """A Slack link for an http(s) URL, else the label (or URL) as escaped text.

    A label that looks like a different host than the target (`[google.com](https://evil)`)
    is a phishing pattern: such links show the real target instead of the label.
    """
    scrubbed = _scrub(url) if len(url) <= LINK_MAX else ""
    if not is_http_url(scrubbed):
        return safe_line(label if label else url, LINK_MAX)
    url = scrubbed
    target = _link_target(url)
    label = label[: LINK_MAX + SCAN_MARGIN] if label else label
    if not label or (_URLISH_LABEL.match(label) and _host(label) != _host(url)):
        return f"<{target}>"
    return f"<{target}|{safe_line(label, LINK_MAX)}>"


# --- cutting escaped text ----------------------------------------------------

_ATOM = re.compile(r"&(?:amp|lt|gt);|<[^<>\n]*>|```")


def cut(text: str, limit: int) -> str:
    """Cut escaped mrkdwn to at most `limit` chars, never inside an entity or a `<link>`.

    Prefers a whitespace boundary within the last 80 characters; trailing space is dropped.
    """
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    inside = bytearray(len(text) + 1)
    for m in _ATOM.finditer(text):
        for i in range(m.start() + 1, m.end()):
            inside[i] = 1
    best = limit
    while best > 0 and inside[best]:
        best -= 1
    for q in range(best, max(best - 80, 0), -1):
        if not inside[q] and text[q].isspace():
            return text[:q].rstrip()
    return text[:best].rstrip()


# --- markdown to mrkdwn --------------------------------------------------------


@dataclass(frozen=True)
class _Unit:
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
    return _BOLD.sub(lambda m: "*" + (m.group(1) or m.group(2)) + "*", text)


def _inline(line: str) -> str:
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


def _code_unit(lines: list[str]) -> _Unit | None:
    body = "\n".join(lines).strip("\n")
    if not body.strip():
        return None
    # A ``` inside the code would end Slack's block early.
    body = neutralize_mentions(escape(body)).replace("```", "`" + WORD_JOINER + "``")
    return _Unit("code", f"```\n{body}\n```")


def _units(markdown: str, cut_off: bool = False) -> list[_Unit]:
    """Rendered units of markdown; with `cut_off` (the text was cut after it), a fence left
    open at the end is a block seen only in part, shown as CODE_OMITTED_NOTE."""
    units: list[_Unit] = []
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence:
            marker = fence.group(1)
            close = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}\s*$")
            j = i + 1
            while j < len(lines) and not close.match(lines[j]):
                j += 1
            partial = cut_off and j == len(lines)
            code = _Unit("code", CODE_OMITTED_NOTE) if partial else _code_unit(lines[i + 1 : j])
            if code:
                units.append(code)
            i = j + 1
            continue
        rendered = _render_line(lines[i])
        if rendered.strip():
            units.append(_Unit("text", rendered))
        elif units and units[-1].kind != "blank":
            units.append(_Unit("blank", ""))
        i += 1
    while units and units[-1].kind == "blank":
        units.pop()
    return units


def trim_markdown(text: str, limit: int) -> str:
    """Runbook markdown to escaped Slack mrkdwn of at most `limit` characters.

    How the output stays safe and short:
    0. Only the raw prefix the output can show is read (`_window` of twice `limit`:
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
    window, lost = _window(text, 2 * limit)
    return _fit(_units(_scrub(window), lost), limit, lost)


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
    window, lost = _window(text, 2 * (fold_chars + limit))
    units = _units(_scrub(window), lost)
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


# --- plain_text ------------------------------------------------------------------


def truncate_plain(text: str, limit: int) -> str:
    """One line for a `plain_text` field (the header), at most `limit` characters.

    plain_text is shown literally, so it is not escaped (`&amp;` would show as
    such). Secrets are still redacted and mentions still defanged, the raw
    `<!`/`<@`/`<#` openers with a WORD JOINER: invisible, and inert even if
    Slack ever parsed plain_text.
    """
    window, lost = _window(text, limit)
    line = _one_line(_scrub(window))
    line = _defang_broadcasts(_RAW_MENTION_OPEN.sub("<" + WORD_JOINER, line))
    if len(line) <= limit and not lost:
        return line
    if limit <= len(ELLIPSIS):
        return ELLIPSIS[: max(limit, 0)]
    head = line[: limit - len(ELLIPSIS)]
    space = head.rfind(" ")
    if space > len(head) - 30:
        head = head[:space]
    return head.rstrip() + ELLIPSIS
