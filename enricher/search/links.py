"""An alert's `runbook_url` resolved to an indexed runbook: when it names one, that is the match.

A link names a runbook by its path under RUNBOOK_BASE_URL, by its last two path segments
(`.../runbooks/kubernetes/kubepodcrashlooping` names kubernetes/KubePodCrashLooping.md,
case-insensitively), or by an alert name: its `#fragment` (the anchor of an alert's heading
on a page with a section per alert) or its last segment. A Confluence link names its page
by id, in each of the forms Confluence hands out: `/pages/<id>/<title>`,
`viewpage.action?pageId=<id>` and the tiny `/x/<code>`.
"""

from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from enricher.index import schema
from enricher.index.engine import Condition, Equals, Filter, Index
from enricher.search import reads
from enricher.search.names import name_key


def linked(
    index: Index, url: str, base_url: str | None, keep: tuple[Condition, ...]
) -> tuple[dict[str, Any] | None, bool]:
    """The first chunk of the runbook `url` names (`url_keys`), and whether it names
    anything indexed. A `#fragment` names a section of that page: the alert section it is
    the heading of, or the one holding that heading. A page with a section per alert,
    linked without one, names several runbooks: the link decides nothing, but it is not a
    link to nothing. `keep`: conditions excluding runbooks searched as if not indexed."""
    anchor = fragment(url)
    first = Equals(schema.F_CHUNK_INDEX, 0)
    known = False
    for key, value in url_keys(url, base_url):
        named = Equals(key, value)
        if anchor and key == schema.F_PATH_KEY:
            section = _section(index, named, anchor, keep)
            if section is not None:
                return section, True
        points = reads.scroll(index, Filter(must=(named, first), must_not=keep), 2)
        if len(points) == 1:  # several runbooks under one name: the link decides nothing
            return points[0].payload, True
        known = known or bool(points)
    return None, known


def _section(
    index: Index, page: Condition, anchor: str, keep: tuple[Condition, ...]
) -> dict[str, Any] | None:
    """The first chunk of the unit of `page` that the anchor lies in."""
    first = Equals(schema.F_CHUNK_INDEX, 0)
    for form in dict.fromkeys((anchor, anchor.lower())):
        unit = Equals(schema.F_UNIT_ANCHOR, form)
        points = reads.scroll(index, Filter(must=(page, unit, first), must_not=keep), 2)
        if len(points) == 1:
            return points[0].payload
        holding = reads.scroll(
            index, Filter(must=(page, Equals(schema.F_ANCHOR, form)), must_not=keep), 2
        )
        units = {str(p.payload[schema.F_DOC_ID]) for p in holding}
        if len(units) == 1:
            return reads.first_chunks(index, list(units)).get(units.pop())
    return None


def fragment(url: str) -> str:
    """The section a link names (`...#etcdnoleader`), "" without one."""
    try:
        return unquote(urlsplit(url).fragment).strip()
    except ValueError:
        return ""


def url_keys(url: str, base_url: str | None = None) -> list[tuple[str, str]]:
    """What a runbook link may name, most specific first: under `base_url`, the rest of the
    link as a runbook path; then its last two path segments as a runbook path; then its
    `#fragment` as an alert name (the anchor of an alert's heading on a page with a section
    per alert), and its last segment as one."""
    try:
        path = unquote(urlsplit(url).path)
        base = unquote(urlsplit(base_url).path) if base_url else None
    except ValueError:
        return []
    keys: list[tuple[str, str]] = []
    if (page := confluence_page(url)) is not None:
        keys.append((schema.F_DOC_ID, page))
    if base_url and base is not None and url.startswith(base_url.rstrip("/")):
        rest = path.removeprefix(base.rstrip("/")).strip("/")
        if rest:
            keys.append((schema.F_PATH_KEY, rest.lower().removesuffix(".md")))
    segments = [s for s in path.lower().removesuffix(".md").split("/") if s]
    if len(segments) >= 2:
        keys.append((schema.F_PATH_KEY, "/".join(segments[-2:])))
    if key := name_key(fragment(url)):
        keys.append((schema.F_ALERT_KEYS, key))
    if segments and (key := name_key(segments[-1])) and (schema.F_ALERT_KEYS, key) not in keys:
        keys.append((schema.F_ALERT_KEYS, key))
    return keys


_TINY = re.compile(r"/x/([A-Za-z0-9_-]{1,16})/?$")
_PAGES = re.compile(r"/pages/(\d{1,19})(?:/|$)")


def confluence_page(url: str) -> str | None:
    """The doc id a Confluence page link names (`confluence@<host>:<page id>`, as ingest's
    Confluence source writes it), or None for a link of another shape."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    if not host:
        return None
    page = parse_qs(parts.query).get("pageId", [""])[0]
    if not page.isdigit():
        pages = _PAGES.search(parts.path)
        tiny = _TINY.search(parts.path)
        page = pages[1] if pages else str(_tiny_page_id(tiny[1])) if tiny else ""
    return f"confluence@{host}:{int(page)}" if page.isdigit() else None


def _tiny_page_id(code: str) -> int:
    """A tiny link's page id: its little-endian bytes in base64, `+` written `_` and `/`
    written `-`, trailing `A`s (zero bits) dropped."""
    padded = code.replace("_", "+").replace("-", "/")
    padded += "A" * (-len(padded) % 4)
    return int.from_bytes(base64.b64decode(padded), "little")
