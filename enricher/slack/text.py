"""Untrusted text (alerts, runbooks) to Slack mrkdwn that can neither ping nor leak.

Anyone who can open a PR on the runbooks, or set an alert annotation, controls
text we post. Every such string goes through one of these doors:

- `safe_line(text, limit)` for short mrkdwn fields: redact secrets, then escape `& < >`,
  then defang mentions. Redaction runs first because escaping changes what the secret
  patterns see (`&` in a URL); defanging runs last so that it sees the final text.
- `trim_markdown` and `fold_markdown` (enricher.slack.markdown) for runbook sections: the
  same three steps, applied piece by piece, plus a little markdown to mrkdwn.
- `truncate_plain(text, limit)` for `plain_text` fields (the header).
- `literal(text, limit)` for label values: `safe_line`, then set in code so that `*`, `_`
  and `~` in a value (`pod=*prod*`) are shown, not applied as formatting.

Bounded work (STYLE §13): a field may be 1 MiB. Every door first cuts its input to the raw
prefix its output can show plus `SCAN_MARGIN` (`scan_window`), and only that prefix is scanned.
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
import string
from collections.abc import Callable, Iterable
from typing import NamedTuple
from urllib.parse import urlsplit

__all__ = [
    "ELLIPSIS",
    "LINK_MAX",
    "SCAN_MARGIN",
    "WORD_JOINER",
    "cut",
    "escape",
    "is_http_url",
    "link",
    "literal",
    "neutralize_mentions",
    "redact_secrets",
    "safe_line",
    "scan_window",
    "scrub",
    "strip_bidi",
    "truncate_plain",
]

WORD_JOINER = "\u2060"
REDACTED = "[REDACTED]"
ELLIPSIS = "…"
#: Raw characters scanned past what a field can show. A secret that starts in the shown
#: part and, with its key, is at most this long is seen whole, so the cut never reveals
#: part of one; the pattern bounds below (48-character keys) stay well inside it.
SCAN_MARGIN = 512
#: Longest URL made a link; a longer one (no real page has one) is shown as its label.
LINK_MAX = 2000


def scan_window(text: str, room: int) -> tuple[str, bool]:
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
    return text if text.isascii() else _BIDI.sub("", text)


def escape(text: str) -> str:
    """Escape Slack's three control characters; `&` first so entities stay single."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_RAW_MENTION_OPEN = re.compile(r"<(?=[!@#])")
#: Whatever precedes it (`_@here_`, `x@channel`); not a longer word, not an address's domain.
_BROADCAST = re.compile(r"@(channel|here|everyone)(?![a-z0-9]|\.[a-z0-9])", re.IGNORECASE)


def _defang_broadcasts(text: str) -> str:
    if "@" not in text:
        return text
    return _BROADCAST.sub(lambda m: "@" + WORD_JOINER + m.group(1), text)


def neutralize_mentions(text: str) -> str:
    """Defang broadcast mentions; also safe on unescaped text (raw `<!…>`, `<@…>`, `<#…>`)."""
    if "<" in text:
        text = _RAW_MENTION_OPEN.sub("&lt;", text)
    return _defang_broadcasts(text)


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


class _Rule(NamedTuple):
    """A pattern and its replacement, run only on text where it may match.

    `hints` are words one of which every match contains (lower case): a text holding none
    of them is not scanned with the pattern. Runbook prose holds few of them, so most
    patterns are skipped by a substring search instead of a regex scan. Prose and links do
    hold some (`token`, `secret`, `access`, `://`, `gh`), and the patterns that start
    before their hint, or with IGNORECASE alternatives, try every position of the text:
    for those, `near` is the part of every match from its hint on, matched
    case-sensitively at each place a hint starts in the text folded to ASCII lower case
    (`_fold`). Most text has no such place, and is not scanned with the pattern.
    """

    pattern: re.Pattern[str]
    replacement: str | Callable[[re.Match[str]], str]
    hints: tuple[str, ...]
    near: re.Pattern[str] | None = None


#: What IGNORECASE matches to an ASCII letter, as that letter in lower case (besides A-Z:
#: dotted and dotless i, long s, Kelvin sign). One character for one, and only letters
#: change: a fold of the text matches a `near` pattern wherever the text matches its rule.
_FOLD = str.maketrans(
    {
        **{c: c.lower() for c in string.ascii_uppercase},
        "\u0130": "i",
        "\u0131": "i",
        "\u017f": "s",
        "\u212a": "k",
    }
)


def _fold(text: str, lowered: str) -> str:
    return lowered if text.isascii() else text.translate(_FOLD)


def _near(near: re.Pattern[str], hints: Iterable[str], folded: str) -> bool:
    """Whether `near` matches where one of `hints` starts (as every `near` part does)."""
    for hint in hints:
        at = folded.find(hint)
        while at >= 0:
            if near.match(folded, at):
                return True
            at = folded.find(hint, at + 1)
    return False


_KEY_HINTS = (
    "passw",
    "pwd",
    "passphrase",
    "token",
    "secret",
    "credential",
    "api",
    "access",
    "private",
)
#: The rest of a key after its key word, then the separator: `_password" =`.
_KEY_TO_SEP = r"[\w.-]{0,48}[\"']?"
#: A key word and what may follow it before a bare secret: `token is `, `secret: "`.
_LEAD = (
    rf"\b{_KEY_WORDS}\b[\w-]{{0,32}}(?:\s{{1,8}}(?:is|was|of|for|to))?"
    r"[\s:=\"'`]{1,8}"
)

# Why these stay linear (the module docstring has the rule): a match may only start where
# its run starts (`(?<![…])` instead of `\b`, which holds inside `a.a.a` and `-a-a`),
# prefixes that a failed match re-reads are bounded (schemes 32, keys 48, lead words 32),
# and each value is one greedy run with nothing after it to backtrack into.
_RULES: tuple[_Rule, ...] = (
    # A PEM private key, also an unterminated one (text cut upstream).
    _Rule(
        re.compile(
            r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----"
            r"(?:.*?-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|.*)",
            re.DOTALL,
        ),
        "[REDACTED PRIVATE KEY]",
        ("-----begin ",),
    ),
    # scheme://user:password@host
    _Rule(
        re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,31}://[^\s/:@]*):[^\s/]+@"),
        r"\1:***@",
        ("://",),
        re.compile(r"://[^\s/:@]*:[^\s/]+@"),
    ),
    _Rule(
        re.compile(
            r"(?i)\b(?P<lead>authorization[ \t]*[:=][ \t]*[\"']?"
            r"(?:(?:bearer|basic|token|bot)[ \t]+)?)(?P<value>[^\s\"']+)"
        ),
        _redact_after_lead,
        ("authorization",),
    ),
    # "Bearer abc123…" but not "Bearer authentication": a token has a digit.
    _Rule(
        re.compile(r"(?i)\b(bearer[ \t]+)(?=[A-Za-z._~+/=-]{0,64}\d)[\w.~+/=-]{8,}"),
        rf"\1{REDACTED}",
        ("bearer",),
    ),
    _Rule(re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "[REDACTED AWS KEY]", ("akia", "asia")),
    _Rule(re.compile(r"\bxox[abposr]-[0-9A-Za-z-]{8,}"), "[REDACTED SLACK TOKEN]", ("xox",)),
    _Rule(re.compile(r"\bxapp-[0-9A-Za-z-]{8,}"), "[REDACTED SLACK TOKEN]", ("xapp-",)),
    _Rule(
        re.compile(r"(?i)https://hooks\.slack\.com/services/[\w/]+"),
        "[REDACTED SLACK WEBHOOK]",
        ("hooks.slack.com",),
    ),
    _Rule(
        re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
        "[REDACTED GITHUB TOKEN]",
        ("gh",),
        re.compile(r"gh[pousr]_[a-z0-9]{30}"),
    ),
    _Rule(
        re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}"), "[REDACTED GITHUB TOKEN]", ("github_pat_",)
    ),
    _Rule(
        re.compile(r"(?<![\w.-])eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"), "[REDACTED JWT]", ("eyj",)
    ),
    # password=..., "api_key": "...", token: ...
    _Rule(
        re.compile(
            rf"(?i)(?<![\w.-])(?P<key>[\w.-]{{0,48}}?{_KEY_WORDS}{_KEY_TO_SEP})"
            r"(?P<sep>\s*[=:]\s*)(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;&\"']+)"
        ),
        _redact_assignment,
        _KEY_HINTS,
        re.compile(rf"{_KEY_WORDS}{_KEY_TO_SEP}\s*[=:]"),
    ),
    # "the token is 9f8e…", "secret 3q2+7w…": long hex/base64 soon after a key-like word.
    _Rule(
        re.compile(rf"(?i)(?P<lead>{_LEAD})(?P<value>[A-Za-z0-9+/_-]{{20,}}={{0,2}})"),
        _redact_generic,
        _KEY_HINTS,
        re.compile(rf"{_LEAD}[A-Za-z0-9+/_-]{{20}}"),
    ),
)


#: Every rule's hints, once each: which of them a text holds is looked up once.
_HINTS = tuple(dict.fromkeys(hint for rule in _RULES for hint in rule.hints))


def redact_secrets(text: str) -> str:
    """Replace obvious secrets with `[REDACTED …]` markers; run it on raw text, before escaping.

    Linear in `len(text)`, but it scans all of it: the doors below cut a field first."""
    lowered = text.lower()
    present = {hint for hint in _HINTS if hint in lowered}
    if not present:
        return text
    folded = None
    for rule in _RULES:
        if present.isdisjoint(rule.hints):
            continue
        if rule.near is not None:
            folded = folded if folded is not None else _fold(text, lowered)
            # An ASCII text's fold is `lowered`: the hints it holds are in `present`.
            starts = present.intersection(rule.hints) if folded is lowered else rule.hints
            if not _near(rule.near, starts, folded):
                continue
        text, count = rule.pattern.subn(rule.replacement, text)
        if count:
            lowered, folded = text.lower(), None
            present = {hint for hint in _HINTS if hint in lowered}
    return text


def scrub(text: str) -> str:
    """What every door does to raw text first: bidi controls removed, secrets redacted."""
    return redact_secrets(strip_bidi(text))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _door(text: str, limit: int, tidy: Callable[[str], str] = _one_line) -> str:
    """Window, `tidy`, redact, escape, defang; then cut to `limit`, with an ellipsis when
    anything was lost (also when the window alone cut it)."""
    window, lost = scan_window(text, limit)
    out = neutralize_mentions(escape(scrub(tidy(window))))
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
    scrubbed = scrub(url) if len(url) <= LINK_MAX else ""
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


# --- plain_text ------------------------------------------------------------------


def truncate_plain(text: str, limit: int) -> str:
    """One line for a `plain_text` field (the header), at most `limit` characters.

    plain_text is shown literally, so it is not escaped (`&amp;` would show as
    such). Secrets are still redacted and mentions still defanged, the raw
    `<!`/`<@`/`<#` openers with a WORD JOINER: invisible, and inert even if
    Slack ever parsed plain_text.
    """
    window, lost = scan_window(text, limit)
    line = _one_line(scrub(window))
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
