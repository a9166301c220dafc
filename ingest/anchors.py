"""Heading anchors as the page's host makes them, so a link lands on the section. Pure.

Three hosts, three rules (each takes the heading's markdown source, as the parser gives it):

- "github": GitHub's slug. Link targets and HTML tags are dropped (GitHub slugs the
  rendered text), the rest is lower-cased, every character that is not a letter, digit,
  "_", "-" or space is removed, and each space becomes "-" (so "a - b" gives "a---b").
- "gitlab": GitLab's slug: the same, except that a run of hyphens becomes one ("a-b").
- "site": a static site generator (Hugo, Docusaurus): an explicit ``{#id}`` at the end of
  the heading is its anchor, and is not part of the heading's text; otherwise GitHub's
  slug, which both generators use by default.

On every host a slug seen before on the page gets "-1", "-2"... in heading order. The host
comes from the document's web link (ingest.weblink); without one, a page is read where
RUNBOOK_BASE_URL publishes it, so "site" is the default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal
from urllib.parse import urlsplit

__all__ = ["DEFAULT_STYLE", "Style", "anchors", "heading_text", "slug", "style_for"]

Style = Literal["github", "gitlab", "site"]
DEFAULT_STYLE: Style = "site"

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HTML_TAG = re.compile(r"<[^>]+>")
_NOT_SLUG = re.compile(r"[^\w\- ]")
_HYPHENS = re.compile(r"-{2,}")
#: Hugo's and Docusaurus's explicit heading id: "Scale up {#scale}" (at the very end).
_EXPLICIT_ID = re.compile(r"\s*\{#([\w:.-]+)\}$")


def style_for(url: str | None, kinds: Mapping[str, str] | None = None) -> Style:
    """The anchor rule of the host a document is read on (its web link's host): the kind
    RUNBOOK_GIT_WEB gives that host (ingest.weblink), else what its name says."""
    if not url:
        return DEFAULT_STYLE
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return DEFAULT_STYLE
    kind = (kinds or {}).get(host) or (kinds or {}).get("")
    if kind is not None:
        return "github" if kind == "github" else "gitlab" if kind == "gitlab" else DEFAULT_STYLE
    if "github" in host:
        return "github"
    if "gitlab" in host:
        return "gitlab"
    return DEFAULT_STYLE


def heading_text(heading: str, style: Style) -> str:
    """The heading as its host shows it: a site generator hides an explicit ``{#id}``."""
    return _EXPLICIT_ID.sub("", heading) if style == "site" else heading


def slug(heading: str, style: Style) -> str:
    """The anchor of one heading, before repeats are numbered."""
    if style == "site" and (explicit := _EXPLICIT_ID.search(heading)):
        return explicit.group(1)
    text = _HTML_TAG.sub("", _LINK.sub(r"\1", heading))
    made = _NOT_SLUG.sub("", text.strip().lower()).replace(" ", "-")
    return _HYPHENS.sub("-", made) if style == "gitlab" else made


def anchors(headings: Sequence[str], style: Style) -> list[str]:
    """Every heading's anchor, in page order; repeats get "-1", "-2"..."""
    seen: dict[str, int] = {}
    out: list[str] = []
    for heading in headings:
        made = slug(heading, style)
        count = seen.get(made, 0)
        seen[made] = count + 1
        out.append(f"{made}-{count}" if count else made)
    return out
